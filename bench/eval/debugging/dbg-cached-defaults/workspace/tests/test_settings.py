import unittest

from appconf.settings import load


class SettingsTest(unittest.TestCase):
    def test_nested_override(self):
        self.assertEqual(load({"server.port": 9000})["server"]["port"], 9000)
        self.assertEqual(load({"server.port": 9000})["server"]["host"], "127.0.0.1")

    def test_loads_are_independent(self):
        self.assertTrue(load({"debug": True})["debug"])
        self.assertFalse(load()["debug"])
