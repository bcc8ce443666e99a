import unittest

from cache.ttl import TTLCache


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class CacheTest(unittest.TestCase):
    def test_fresh_value_is_served(self):
        clock = Clock()
        c = TTLCache(10, clock)
        c.put("k", "v")
        clock.now += 5
        self.assertEqual(c.get("k"), "v")
