import unittest

from shop.pricing import subtotal, total
from shop.receipt import money, render

CART = [{"name": "Tea", "price": 450, "qty": 2}, {"name": "Mug", "price": 1299, "qty": 1}]


class ReceiptTest(unittest.TestCase):
    def test_totals(self):
        self.assertEqual(subtotal(CART), 2199)
        self.assertEqual(total(CART), 2199)
        self.assertEqual(money(5), "0.05")

    def test_render(self):
        self.assertEqual(render(CART), "Tea x2  9.00\nMug x1  12.99\nSubtotal  21.99\nTotal  21.99\n")
