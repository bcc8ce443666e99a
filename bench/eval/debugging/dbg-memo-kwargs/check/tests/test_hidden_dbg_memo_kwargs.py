import unittest

from rates.convert import convert, rate
from rates.memo import memoize


class HiddenMemoTest(unittest.TestCase):
    def test_keyword_arguments_count(self):
        calls = []

        @memoize
        def power(base, exponent=2, *, offset=0):
            calls.append((base, exponent, offset))
            return base ** exponent + offset

        self.assertEqual(power(3), 9)
        self.assertEqual(power(3, exponent=3), 27)
        self.assertEqual(power(3, offset=1), 10)
        self.assertEqual(power(3, exponent=3, offset=1), 28)
        self.assertEqual(power(3, offset=1, exponent=3), 28)
        self.assertEqual(power(3, exponent=3), 27)
        self.assertEqual(power(3), 9)
        self.assertEqual(power(2, 5), 32)
        self.assertEqual(power(2, 5), 32)
        self.assertEqual(calls.count((3, 2, 0)), 1)
        self.assertEqual(calls.count((3, 3, 0)), 1)
        self.assertEqual(calls.count((2, 5, 0)), 1)
        self.assertEqual(calls.count((3, 2, 1)), 1)

    def test_rates(self):
        self.assertEqual(round(rate("EUR", quote="GBP"), 4), round(0.79 / 0.92, 4))
        self.assertEqual(round(rate("EUR", quote="CHF"), 4), round(0.9 / 0.92, 4))
        self.assertEqual(rate("GBP", quote="GBP"), 1.0)
        self.assertEqual(convert(151, "JPY"), 1.0)
        self.assertEqual(convert(10, "GBP", "JPY"), round(10 * 151.0 / 0.79, 2))
        self.assertEqual(convert(10, "GBP", "CHF"), round(10 * 0.9 / 0.79, 2))
        self.assertEqual(convert(10, "GBP", "USD"), round(10 / 0.79, 2))
        with self.assertRaises(KeyError):
            convert(1, "USD", "XYZ")

    def test_metadata_kept(self):
        self.assertEqual(rate.__name__, "rate")
        self.assertIn("quote", rate.__doc__)
