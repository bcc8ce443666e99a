import unittest

from shop import pricing
from shop.pricing import InvalidCode, discount, total
from shop.receipt import render

CART = [{"name": "Tea", "price": 450, "qty": 2}, {"name": "Mug", "price": 1299, "qty": 1}]
SMALL = [{"name": "Pin", "price": 300, "qty": 1}]


class HiddenDiscountTest(unittest.TestCase):
    def test_percent_rounds_down(self):
        self.assertEqual(discount(CART, "SAVE10"), 219)
        self.assertEqual(discount(CART, " save10 "), 219)
        self.assertEqual(total(CART, "SAVE10"), 1980)
        self.assertEqual(total(CART), 2199)

    def test_fixed_is_capped(self):
        self.assertEqual(discount(CART, "FIVEOFF"), 500)
        self.assertEqual(discount(SMALL, "fiveoff"), 300)
        self.assertEqual(total(SMALL, "FIVEOFF"), 0)

    def test_invalid_code(self):
        with self.assertRaises(InvalidCode):
            discount(CART, "FREE")
        self.assertTrue(issubclass(InvalidCode, ValueError))
        with self.assertRaises(InvalidCode):
            render(CART, "FREE")

    def test_receipt_line(self):
        self.assertEqual(render(CART, "save10"),
                         "Tea x2  9.00\nMug x1  12.99\nSubtotal  21.99\nDiscount (SAVE10)  -2.19\nTotal  19.80\n")
        self.assertEqual(render(CART), "Tea x2  9.00\nMug x1  12.99\nSubtotal  21.99\nTotal  21.99\n")

    def test_codes_table_is_used(self):
        pricing.CODES["HALF"] = ("percent", 50)
        try:
            self.assertEqual(render(SMALL, "half"), "Pin x1  3.00\nSubtotal  3.00\nDiscount (HALF)  -1.50\nTotal  1.50\n")
        finally:
            del pricing.CODES["HALF"]
