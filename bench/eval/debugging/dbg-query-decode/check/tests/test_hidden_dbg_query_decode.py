import unittest

from urlkit.links import canonical
from urlkit.query import parse_query


class HiddenQueryTest(unittest.TestCase):
    def test_encoded_separators_stay_in_values(self):
        self.assertEqual(parse_query("q=fish%26chips&x=1"), [("q", "fish&chips"), ("x", "1")])
        self.assertEqual(parse_query("token=abc%3D%3D&n=2"), [("token", "abc=="), ("n", "2")])
        self.assertEqual(parse_query("k%3Dv=1"), [("k=v", "1")])
        self.assertEqual(parse_query("a=%2541"), [("a", "%41")])

    def test_plain_pieces(self):
        self.assertEqual(parse_query("a=1&b=x+y&flag"), [("a", "1"), ("b", "x y"), ("flag", "")])
        self.assertEqual(parse_query("next=/a?b=c&&t=x==y"), [("next", "/a?b=c"), ("t", "x==y")])
        self.assertEqual(parse_query(""), [])
        self.assertEqual(parse_query("t=a&t=b"), [("t", "a"), ("t", "b")])

    def test_canonical(self):
        self.assertEqual(canonical("http://h.test/p?z=a%26b%3Dc&t=2&t=1&a=x+y"),
                         "http://h.test/p?a=x+y&t=2&t=1&z=a%26b%3Dc")
