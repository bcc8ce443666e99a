import json
import os
import tempfile
import unittest

from app import describe
from settings import load


class HiddenKeyTest(unittest.TestCase):
    def test_new_key(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "c.json")
            with open(p, "w") as f:
                json.dump({"database_url": "sqlite://x"}, f)
            self.assertEqual(load(p)["database_url"], "sqlite://x")
            self.assertEqual(describe(p), "db=sqlite://x")
