import unittest

from stats.summary import median


class MedianTest(unittest.TestCase):
    def test_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)
