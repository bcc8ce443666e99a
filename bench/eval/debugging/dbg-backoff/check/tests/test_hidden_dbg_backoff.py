import unittest

from retry.backoff import delays


class HiddenBackoffTest(unittest.TestCase):
    def test_cap(self):
        self.assertEqual(delays(0.5, 3, 5), [0.5, 1, 2, 3, 3])
        self.assertEqual(delays(2, 10, 0), [])
