import unittest

from catalog.index import Catalog


def catalog():
    return (Catalog()
            .add("A1", "Caf\u00e9 au lait")
            .add("B2", "Green  tea")
            .add("C3", "Iced caf\u00e9"))


class SearchTest(unittest.TestCase):
    def test_case_and_spacing(self):
        self.assertEqual(catalog().search("GREEN tea"), ["B2"])

    def test_combining_accent(self):
        self.assertEqual(catalog().search("cafe\u0301"), ["A1", "C3"])
