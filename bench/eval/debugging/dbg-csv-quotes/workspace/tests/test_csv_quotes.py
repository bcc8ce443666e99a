import unittest

from contacts.importer import parse_line


class ParseTest(unittest.TestCase):
    def test_quoted_comma(self):
        self.assertEqual(parse_line('"Doe, Jane",jane@example.com'),
                         ["Doe, Jane", "jane@example.com"])
