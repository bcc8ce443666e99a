import unittest

from conf.merge import merge


class HiddenMergeTest(unittest.TestCase):
    def test_deep_and_pure(self):
        base = {"a": {"b": {"c": 1, "d": 2}}, "x": 1}
        out = merge(base, {"a": {"b": {"d": 3}}, "y": 2})
        self.assertEqual(out, {"a": {"b": {"c": 1, "d": 3}}, "x": 1, "y": 2})
        self.assertEqual(base, {"a": {"b": {"c": 1, "d": 2}}, "x": 1})

    def test_scalar_replaces_table(self):
        self.assertEqual(merge({"a": {"b": 1}}, {"a": 5}), {"a": 5})
