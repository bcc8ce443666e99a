"""Opening, checking and closing sessions over a store and a clock given to it."""

import uuid


class SessionService:
    def __init__(self, store, clock, ttl=1800):
        self.store = store
        self.clock = clock
        self.ttl = ttl

    def start(self, user):
        """Open a session for the user and return its id."""
        sid = uuid.uuid4().hex
        self.store.save(sid, user, self.clock() + self.ttl)
        return sid

    def current_user(self, sid):
        """The session's user, or None once it has expired (expired sessions are dropped)."""
        found = self.store.load(sid)
        if found is None:
            return None
        user, expires = found
        if self.clock() >= expires:
            self.store.drop(sid)
            return None
        return user

    def logout(self, sid):
        self.store.drop(sid)
