import unittest

from retry.backoff import delays


class BackoffTest(unittest.TestCase):
    def test_doubling(self):
        self.assertEqual(delays(1, 100, 4), [1, 2, 4, 8])
