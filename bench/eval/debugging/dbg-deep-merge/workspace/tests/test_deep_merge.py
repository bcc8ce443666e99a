import unittest

from conf.merge import merge


class MergeTest(unittest.TestCase):
    def test_nested(self):
        base = {"server": {"host": "localhost", "port": 80}}
        self.assertEqual(merge(base, {"server": {"port": 8080}}),
                         {"server": {"host": "localhost", "port": 8080}})
