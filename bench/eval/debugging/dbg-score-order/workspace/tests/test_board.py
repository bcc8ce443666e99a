import unittest

from scoreboard.board import render


class BoardTest(unittest.TestCase):
    def test_single_digits(self):
        self.assertEqual(render("ann: 3\nbob: 7\n"), ["1. bob (7)", "2. ann (3)"])

    def test_bigger_scores(self):
        sheet = "ann: 9\nbob: 12\n# late entry\ncy: 100\n"
        self.assertEqual(render(sheet), ["1. cy (100)", "2. bob (12)", "3. ann (9)"])
