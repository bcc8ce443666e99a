import unittest

from todo.format import format_list, format_task, sort_by_priority
from todo.parse import Task, parse, parse_line


class HiddenPriorityTest(unittest.TestCase):
    def test_parse_priority(self):
        task = parse_line("(A) file taxes +home @desk")
        self.assertEqual(task.priority, "A")
        self.assertEqual(task.text, "file taxes +home @desk")
        self.assertEqual(task.projects, ["home"])
        done = parse_line("x (C) water plants")
        self.assertTrue(done.done)
        self.assertEqual(done.priority, "C")
        self.assertEqual(done.text, "water plants")

    def test_not_priorities(self):
        for line in ["(a) lower case", "(AB) two letters", "(A)no space", "call (B) later", "plain"]:
            task = parse_line(line)
            self.assertIsNone(task.priority, line)
            self.assertEqual(task.text, line)
        self.assertIsNone(Task("x").priority)

    def test_format_round_trip(self):
        self.assertEqual(format_task(Task("walk", priority="B")), "(B) walk")
        self.assertEqual(format_task(Task("walk", done=True, priority="B")), "x (B) walk")
        text = "(A) one +p\nx (B) two\nthree @c\nx four\n"
        self.assertEqual(format_list(parse(text)), text)

    def test_sort_by_priority(self):
        tasks = parse("x (A) done a\nplain one\n(B) b one\n(A) a one\nplain two\n(B) b two\nx done plain\n(C) c\n")
        ordered = sort_by_priority(tasks)
        self.assertEqual([t.text for t in ordered], [
            "a one", "b one", "b two", "c", "plain one", "plain two", "done a", "done plain"])
        self.assertEqual(tasks[0].text, "done a")
        self.assertIsNot(ordered, tasks)
