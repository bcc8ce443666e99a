import unittest

from scoreboard.board import ranking, render
from scoreboard.parse import Entry, parse, parse_line


class HiddenScoreTest(unittest.TestCase):
    def test_parsed_scores_are_numbers(self):
        self.assertEqual(parse_line("  dee :  7 "), Entry("dee", 7))
        self.assertEqual(parse("a: 10\n\nb: -3\n"), [Entry("a", 10), Entry("b", -3)])
        self.assertEqual(sum(e.score for e in parse("a: 10\nb: 5\nc: 85")), 100)
        self.assertIsNone(parse_line("# comment"))

    def test_ranking(self):
        sheet = "eve: 5\ndan: 1000\nann: 99\ncy: 99\nbob: 200\nfay: -2\ngus: 0\n"
        self.assertEqual([e.name for e in ranking(sheet)],
                         ["dan", "bob", "ann", "cy", "eve", "gus", "fay"])
        self.assertEqual(render(sheet, top=4),
                         ["1. dan (1000)", "2. bob (200)", "3. ann (99)", "4. cy (99)"])

    def test_bad_line(self):
        with self.assertRaises(ValueError):
            parse("ann 12")
