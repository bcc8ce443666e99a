import unittest
from datetime import date

from booking.dates import days_between


class DaysTest(unittest.TestCase):
    def test_includes_last_day(self):
        days = days_between(date(2024, 3, 1), date(2024, 3, 3))
        self.assertEqual(days[-1], date(2024, 3, 3))
