import unittest

from blog.slug import slugify


class HiddenSlugTest(unittest.TestCase):
    def test_cases(self):
        self.assertEqual(slugify("  Rust 2024: what's new?  "), "rust-2024-what-s-new")
        self.assertEqual(slugify("plain"), "plain")
        self.assertEqual(slugify("A--B"), "a-b")
        self.assertEqual(slugify("!!!"), "")
