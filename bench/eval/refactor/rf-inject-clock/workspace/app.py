"""The web app's session endpoints."""

from sessions.check import current_user, logout
from sessions.login import start


def login(user):
    return {"session": start(user)}


def whoami(sid):
    user = current_user(sid)
    return {"status": 200, "user": user} if user else {"status": 401}


def bye(sid):
    logout(sid)
    return {"status": 204}
