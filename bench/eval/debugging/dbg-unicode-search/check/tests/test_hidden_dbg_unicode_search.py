import unittest
import unicodedata

from catalog.index import Catalog
from catalog.text import display_title, search_key


def nfd(text):
    return unicodedata.normalize("NFD", text)


class HiddenSearchTest(unittest.TestCase):
    def setUp(self):
        self.catalog = (Catalog()
                        .add("S1", "Stra\u00dfenkarte Berlin")
                        .add("S2", nfd("Cr\u00e8me br\u00fbl\u00e9e"))
                        .add("S3", "  Plain   mug ")
                        .add("S4", "\u00c9CLAIR box")
                        .add("S5", "Cafe Latte"))

    def test_queries(self):
        self.assertEqual(self.catalog.search("STRASSENKARTE"), ["S1"])
        self.assertEqual(self.catalog.search("stra\u00dfe"), ["S1"])
        self.assertEqual(self.catalog.search("cr\u00e8me   BR\u00dbL\u00c9E"), ["S2"])
        self.assertEqual(self.catalog.search(nfd("br\u00fbl\u00e9e")), ["S2"])
        self.assertEqual(self.catalog.search(nfd("\u00e9clair")), ["S4"])
        self.assertEqual(self.catalog.search("\u00e9clair BOX"), ["S4"])
        self.assertEqual(self.catalog.search("plain mug"), ["S3"])
        self.assertEqual(self.catalog.search("latte"), ["S5"])
        self.assertEqual(self.catalog.search("teapot"), [])

    def test_keys(self):
        self.assertEqual(search_key(nfd("Caf\u00e9")), search_key("CAF\u00c9"))
        self.assertEqual(search_key("Stra\u00dfe"), search_key("STRASSE"))
        self.assertEqual(search_key(" a \t B "), search_key("A b"))
        self.assertNotEqual(search_key("tea"), search_key("tee"))

    def test_titles_unchanged(self):
        self.assertEqual(self.catalog.title("S3"), "Plain mug")
        self.assertEqual(display_title(" Iced  caf\u00e9 "), "Iced caf\u00e9")
