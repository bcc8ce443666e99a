import unittest

from shop.cart import Cart
from shop.pricing import order_total


class ShopTest(unittest.TestCase):
    def test_total(self):
        self.assertEqual(order_total([(2, 1.5), (1, 3.0)]), 6.0)
        c = Cart()
        c.add(3, 2.0)
        self.assertEqual(c.total(), 6.0)
