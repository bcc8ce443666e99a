import unittest
from datetime import date

from billing.periods import days_in_month, month_bounds
from billing.statement import statement


class HiddenPeriodTest(unittest.TestCase):
    def test_bounds(self):
        self.assertEqual(month_bounds(2024, 12), (date(2024, 12, 1), date(2024, 12, 31)))
        self.assertEqual(month_bounds(1999, 12), (date(1999, 12, 1), date(1999, 12, 31)))
        self.assertEqual(month_bounds(2024, 1), (date(2024, 1, 1), date(2024, 1, 31)))
        self.assertEqual(month_bounds(2024, 2), (date(2024, 2, 1), date(2024, 2, 29)))
        self.assertEqual(month_bounds(2023, 2), (date(2023, 2, 1), date(2023, 2, 28)))
        self.assertEqual(month_bounds(2024, 11), (date(2024, 11, 1), date(2024, 11, 30)))
        self.assertEqual([days_in_month(2025, m) for m in range(1, 13)],
                         [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])

    def test_year_end_statements(self):
        charges = [(date(2024, 12, 31), "late", 1), (date(2025, 1, 1), "new year", 10),
                   (date(2024, 12, 15), "mid", 100), (date(2025, 12, 31), "next", 1000),
                   (date(2024, 11, 30), "before", 10000)]
        dec = statement(charges, 2024, 12)
        self.assertEqual(dec["period"], "2024-12-01 to 2024-12-31")
        self.assertEqual([c[1] for c in dec["charges"]], ["mid", "late"])
        self.assertEqual(dec["total"], 101)
        self.assertEqual(statement(charges, 2025, 12)["total"], 1000)
        self.assertEqual(statement(charges, 2025, 1)["total"], 10)

    def test_bad_month(self):
        with self.assertRaises(ValueError):
            month_bounds(2024, 13)
