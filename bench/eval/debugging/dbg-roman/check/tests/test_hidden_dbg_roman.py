import unittest

from numerals.roman import parse


class HiddenRomanTest(unittest.TestCase):
    def test_values(self):
        self.assertEqual(parse("MCMXCIV"), 1994)
        self.assertEqual(parse("xc"), 90)
        self.assertEqual(parse("VIII"), 8)
        self.assertEqual(parse("CDXLIV"), 444)

    def test_bad_digit(self):
        with self.assertRaises(ValueError):
            parse("XQ")
