import unittest

from rates.convert import convert


class ConvertTest(unittest.TestCase):
    def test_to_dollars(self):
        self.assertEqual(convert(92, "EUR"), 100.0)

    def test_several_targets(self):
        self.assertEqual(convert(100, "USD", "EUR"), 92.0)
        self.assertEqual(convert(100, "USD", "GBP"), 79.0)
        self.assertEqual(convert(100, "USD", "JPY"), 15100.0)
