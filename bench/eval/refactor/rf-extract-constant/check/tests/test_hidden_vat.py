import unittest
from unittest import mock

import shop.constants
from shop import invoice, pricing, refunds


class HiddenVatTest(unittest.TestCase):
    def test_constant(self):
        self.assertEqual(shop.constants.VAT_RATE, 0.19)
        self.assertEqual(pricing.gross(200), 238.0)
        self.assertEqual(refunds.refund_tax(100), 19.0)
        self.assertTrue(invoice.tax_line(100).endswith("19.00"))
