"""Where sessions live: one dict for the whole process."""

_SESSIONS = {}


def save(sid, user, expires):
    _SESSIONS[sid] = (user, expires)


def load(sid):
    """(user, expires) for the session, or None."""
    return _SESSIONS.get(sid)


def drop(sid):
    _SESSIONS.pop(sid, None)


def clear():
    _SESSIONS.clear()
