import unittest

from till.receipt import receipt


class ReceiptTest(unittest.TestCase):
    def test_whole_prices(self):
        self.assertEqual(receipt([("mug", 3.0, 2)]), ["mug x2: 6.00", "TOTAL: 6.00"])

    def test_pens(self):
        self.assertEqual(receipt([("pen", 0.29, 3)]), ["pen x3: 0.87", "TOTAL: 0.87"])
