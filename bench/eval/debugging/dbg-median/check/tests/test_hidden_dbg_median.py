import unittest

from stats.summary import median


class HiddenMedianTest(unittest.TestCase):
    def test_odd_and_even(self):
        self.assertEqual(median([5, 1, 9]), 5)
        self.assertEqual(median([10, 20]), 15)
        self.assertEqual(median([7]), 7)
        self.assertEqual(median([3, 1, 2, 10, 8, 4]), 3.5)

    def test_empty(self):
        with self.assertRaises(ValueError):
            median([])
