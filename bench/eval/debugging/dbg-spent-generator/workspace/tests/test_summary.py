import unittest

from readings.summary import summarize

LOG = """# sensor 7
08:00 20.5
08:05 21.0
08:10 NaN
08:15 19.0
"""


class SummaryTest(unittest.TestCase):
    def test_empty_log(self):
        self.assertEqual(summarize("# nothing yet\n"),
                         {"count": 0, "mean": None, "min": None, "max": None})

    def test_summary(self):
        self.assertEqual(summarize(LOG), {"count": 3, "mean": 20.167, "min": 19.0, "max": 21.0})
