"""Where sessions live."""


class MemoryStore:
    """Sessions kept in a dict of this store's own."""

    def __init__(self):
        self._sessions = {}

    def save(self, sid, user, expires):
        self._sessions[sid] = (user, expires)

    def load(self, sid):
        """(user, expires) for the session, or None."""
        return self._sessions.get(sid)

    def drop(self, sid):
        self._sessions.pop(sid, None)
