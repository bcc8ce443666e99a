import importlib
import unittest

import cli
from text.format import title_case, truncate


class HiddenMoveTest(unittest.TestCase):
    def test_new_home(self):
        self.assertEqual(title_case("a b"), "A B")
        self.assertEqual(truncate("hello world", 6), "hello…")
        with self.assertRaises(ImportError):
            importlib.import_module("utils.strings")
        self.assertTrue(hasattr(cli, "main"))
