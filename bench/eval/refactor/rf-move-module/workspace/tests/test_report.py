import unittest

from report import heading
from utils.strings import truncate


class ReportTest(unittest.TestCase):
    def test_heading(self):
        self.assertEqual(heading("weekly sync", 1, 4), "Weekly Sync (25.0%)")
        self.assertEqual(truncate("abcdef", 4), "abc…")
