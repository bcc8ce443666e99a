import unittest

from shop.invoice import tax_line
from shop.pricing import gross
from shop.refunds import refund_tax


class VatTest(unittest.TestCase):
    def test_rate(self):
        self.assertEqual(gross(100), 119.0)
        self.assertEqual(tax_line(10), "VAT 19%: 1.90")
        self.assertEqual(refund_tax(50), 9.5)
