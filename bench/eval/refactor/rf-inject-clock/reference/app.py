"""The web app's session endpoints."""

import time

from sessions.service import SessionService
from sessions.store import MemoryStore


def make_service(clock=time.time):
    return SessionService(MemoryStore(), clock)


class App:
    def __init__(self, service=None):
        self.service = make_service() if service is None else service

    def login(self, user):
        return {"session": self.service.start(user)}

    def whoami(self, sid):
        user = self.service.current_user(sid)
        return {"status": 200, "user": user} if user else {"status": 401}

    def bye(self, sid):
        self.service.logout(sid)
        return {"status": 204}
