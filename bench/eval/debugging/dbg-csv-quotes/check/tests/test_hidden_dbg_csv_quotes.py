import unittest

from contacts.importer import parse, parse_line


class HiddenParseTest(unittest.TestCase):
    def test_escaped_quotes(self):
        self.assertEqual(parse_line(chr(34) + "say " + chr(34) * 2 + "hi" + chr(34) * 3 + ",x"), ["say " + chr(34) + "hi" + chr(34), "x"])

    def test_plain(self):
        self.assertEqual(parse("a,b\nc,d\n"), [["a", "b"], ["c", "d"]])
        self.assertEqual(parse_line('a,,"b,c",'), ["a", "", "b,c", ""])
