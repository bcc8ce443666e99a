import time
import uuid

from sessions import store

TTL = 1800  # seconds


def start(user):
    """Open a session for the user and return its id."""
    sid = uuid.uuid4().hex
    store.save(sid, user, time.time() + TTL)
    return sid
