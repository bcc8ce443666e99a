import unittest

from cache.ttl import TTLCache


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class HiddenCacheTest(unittest.TestCase):
    def test_expiry(self):
        clock = Clock()
        c = TTLCache(10, clock)
        c.put("k", 1)
        clock.now = 9.9
        self.assertEqual(c.get("k"), 1)
        clock.now = 10.0
        self.assertIsNone(c.get("k"))
        self.assertEqual(c.get("k", "gone"), "gone")
