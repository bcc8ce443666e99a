import unittest

from catalog.query import Query
from catalog.search import search

ITEMS = [{"name": "Pen", "price": 2, "stock": 1}, {"name": "Pad", "price": 1, "stock": 0}]


class SearchTest(unittest.TestCase):
    def test_in_stock(self):
        self.assertEqual(search(ITEMS, Query(in_stock_only=True)), [ITEMS[0]])

    def test_order(self):
        self.assertEqual([i["name"] for i in search(ITEMS, Query("p"))], ["Pad", "Pen"])
