import unittest

from report import heading
from text.format import truncate


class ReportTest(unittest.TestCase):
    def test_heading(self):
        self.assertEqual(heading("weekly sync", 1, 4), "Weekly Sync (25.0%)")
        self.assertEqual(truncate("abcdef", 4), "abc…")
