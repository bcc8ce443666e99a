import unittest

from numerals.roman import parse


class RomanTest(unittest.TestCase):
    def test_subtractive(self):
        self.assertEqual(parse("IV"), 4)
