import unittest
from datetime import date

from booking.dates import days_between, nights


class HiddenDatesTest(unittest.TestCase):
    def test_days(self):
        self.assertEqual(len(days_between(date(2024, 2, 27), date(2024, 3, 1))), 4)
        self.assertEqual(days_between(date(2024, 1, 5), date(2024, 1, 5)), [date(2024, 1, 5)])

    def test_nights_unchanged(self):
        self.assertEqual(len(nights(date(2024, 1, 1), date(2024, 1, 4))), 3)
