import os
import unittest

from settings import load

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SettingsTest(unittest.TestCase):
    def test_example(self):
        conf = load(os.path.join(HERE, "config.example.json"))
        self.assertEqual(conf["db_url"], "postgres://localhost/app")
