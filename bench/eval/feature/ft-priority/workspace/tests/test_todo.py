import unittest

from todo.format import format_list, summary
from todo.parse import parse, parse_line


class TodoTest(unittest.TestCase):
    def test_parse(self):
        task = parse_line("x call mum +family @phone")
        self.assertTrue(task.done)
        self.assertEqual(task.text, "call mum +family @phone")
        self.assertEqual(task.projects, ["family"])
        self.assertEqual(task.contexts, ["phone"])

    def test_round_trip(self):
        text = "x pay rent +home\nwrite report @work\n"
        self.assertEqual(format_list(parse(text)), text)

    def test_summary(self):
        self.assertEqual(summary(parse("x a\nb\nc\n")), "1/3 done")
