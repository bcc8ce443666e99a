import unittest

from blog.slug import slugify


class SlugTest(unittest.TestCase):
    def test_punctuation(self):
        self.assertEqual(slugify("Hello,  World!"), "hello-world")
