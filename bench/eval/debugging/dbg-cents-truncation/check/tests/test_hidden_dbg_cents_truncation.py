import unittest

from till.money import format_cents, to_cents
from till.receipt import line_total, receipt


class HiddenCentsTest(unittest.TestCase):
    def test_to_cents(self):
        for amount, cents in [(0.29, 29), (0.57, 57), (1.15, 115), (4.35, 435),
                              (19.99, 1999), (0.1, 10), (10, 1000), (0, 0),
                              (-4.35, -435), (-0.29, -29), (1234.56, 123456)]:
            self.assertEqual(to_cents(amount), cents, amount)

    def test_receipt(self):
        lines = receipt([("tea", 4.35, 1), ("pen", 0.29, 3), ("refund", -1.15, 1),
                         ("paper", 19.99, 2)])
        self.assertEqual(lines, ["tea x1: 4.35", "pen x3: 0.87", "refund x1: -1.15",
                                 "paper x2: 39.98", "TOTAL: 44.05"])
        self.assertEqual(line_total(0.57, 10), 570)

    def test_format_unchanged(self):
        self.assertEqual(format_cents(435), "4.35")
        self.assertEqual(format_cents(-5), "-0.05")
        self.assertEqual(format_cents(0), "0.00")
