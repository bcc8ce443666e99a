import unittest
from datetime import date

from billing.statement import statement

CHARGES = [
    (date(2023, 11, 30), "hosting", 1500),
    (date(2023, 12, 31), "domain", 1200),
    (date(2023, 12, 1), "hosting", 1500),
    (date(2024, 1, 1), "hosting", 1500),
]


class StatementTest(unittest.TestCase):
    def test_november(self):
        self.assertEqual(statement(CHARGES, 2023, 11)["total"], 1500)

    def test_december(self):
        got = statement(CHARGES, 2023, 12)
        self.assertEqual(got["period"], "2023-12-01 to 2023-12-31")
        self.assertEqual(got["charges"], [(date(2023, 12, 1), "hosting", 1500),
                                          (date(2023, 12, 31), "domain", 1200)])
        self.assertEqual(got["total"], 2700)
