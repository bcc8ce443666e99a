import time

from sessions import store


def current_user(sid):
    """The session's user, or None once it has expired (expired sessions are dropped)."""
    found = store.load(sid)
    if found is None:
        return None
    user, expires = found
    if time.time() >= expires:
        store.drop(sid)
        return None
    return user


def logout(sid):
    store.drop(sid)
