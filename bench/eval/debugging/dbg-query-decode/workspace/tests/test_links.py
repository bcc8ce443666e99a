import unittest

from urlkit.links import canonical


class CanonicalTest(unittest.TestCase):
    def test_sorts_parameters(self):
        self.assertEqual(canonical("HTTPS://Shop.Example/list?b=2&a=1#top"),
                         "https://shop.example/list?a=1&b=2")

    def test_encoded_ampersand(self):
        self.assertEqual(canonical("https://shop.example/search?q=fish%26chips&page=2"),
                         "https://shop.example/search?page=2&q=fish%26chips")
