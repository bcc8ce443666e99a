import unittest

from readings.alerts import above
from readings.load import parse_readings
from readings.summary import summarize

LOG = """# sensor 9
10:00 3.5

10:01 -1.25
10:02 NaN
  # recalibrated
10:03 8
10:04 3.5
"""


class HiddenReadingsTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(list(parse_readings(LOG)), [3.5, -1.25, 8.0, 3.5])
        self.assertEqual(list(parse_readings("")), [])

    def test_summary(self):
        self.assertEqual(summarize(LOG), {"count": 4, "mean": 3.438, "min": -1.25, "max": 8.0})
        self.assertEqual(summarize("t 5\n"), {"count": 1, "mean": 5.0, "min": 5.0, "max": 5.0})
        self.assertEqual(summarize("t NaN\n")["count"], 0)

    def test_alerts(self):
        self.assertEqual(above(LOG, 3.0), ([3.5, 8.0, 3.5], 0.75))
        self.assertEqual(above(LOG, 10), ([], 0.0))
        self.assertEqual(above("# empty\n", 1.0), ([], 0.0))
        self.assertEqual(above("t NaN\n", 1.0), ([], 0.0))

    def test_summary_twice(self):
        self.assertEqual(summarize(LOG), summarize(LOG))
