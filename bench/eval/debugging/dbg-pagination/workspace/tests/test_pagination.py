import unittest

from catalog.pages import paginate


class PaginateTest(unittest.TestCase):
    def test_first_page_starts_at_first_item(self):
        self.assertEqual(paginate(list(range(10)), 1, 3), [0, 1, 2])
