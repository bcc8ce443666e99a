import unittest

from catalog.pages import page_count, paginate


class HiddenPaginateTest(unittest.TestCase):
    def test_pages(self):
        items = list("abcdefg")
        self.assertEqual(paginate(items, 2, 3), ["d", "e", "f"])
        self.assertEqual(paginate(items, 3, 3), ["g"])
        self.assertEqual(paginate(items, 4, 3), [])
        self.assertEqual(page_count(7, 3), 3)

    def test_bad_page(self):
        with self.assertRaises(ValueError):
            paginate([1], 0, 3)
