import time


class TTLCache:
    def __init__(self, ttl, clock=time.monotonic):
        self.ttl = ttl
        self.clock = clock
        self.items = {}

    def put(self, key, value):
        self.items[key] = (value, self.clock())

    def get(self, key, default=None):
        entry = self.items.get(key)
        if entry is None:
            return default
        value, stored = entry
        if self.clock() - stored < self.ttl:
            del self.items[key]
            return default
        return value
