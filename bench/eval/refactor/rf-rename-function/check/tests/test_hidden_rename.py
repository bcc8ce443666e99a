import unittest

import shop.pricing
from shop.invoice import invoice_amount
from shop.pricing import order_total


class HiddenTest(unittest.TestCase):
    def test_new_name(self):
        self.assertEqual(order_total([(2, 10.0)], discount=0.5), 10.0)
        self.assertEqual(invoice_amount([(1, 100.0)], loyal=True), 95.0)
        self.assertFalse(hasattr(shop.pricing, "calc_total"))
