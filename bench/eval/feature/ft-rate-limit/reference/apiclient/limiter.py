"""A sliding-window rate limiter."""
import time
from collections import deque


class RateLimiter:
    def __init__(self, limit, window, clock=time.monotonic):
        self.limit = limit
        self.window = window
        self.clock = clock
        self.times = deque()

    def acquire(self):
        now = self.clock()
        while self.times and self.times[0] <= now - self.window:
            self.times.popleft()
        if len(self.times) < self.limit:
            self.times.append(now)
            return 0.0
        return float(self.times[0] + self.window - now)
