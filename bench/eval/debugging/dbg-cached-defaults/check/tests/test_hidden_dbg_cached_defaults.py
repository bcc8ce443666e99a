import unittest

from appconf.settings import load

BUILT_IN = {
    "debug": False,
    "workers": 4,
    "log": {"level": "info", "file": None},
    "server": {"host": "127.0.0.1", "port": 8000, "tls": {"enabled": False}},
}


class HiddenSettingsTest(unittest.TestCase):
    def test_nested_overrides_do_not_leak(self):
        got = load({"log.level": "debug", "server.tls.enabled": True, "workers": 8})
        self.assertEqual(got["log"], {"level": "debug", "file": None})
        self.assertTrue(got["server"]["tls"]["enabled"])
        self.assertEqual(load(), BUILT_IN)

    def test_new_tables_do_not_leak(self):
        self.assertEqual(load({"cache.size": 64})["cache"], {"size": 64})
        self.assertEqual(load(), BUILT_IN)

    def test_changing_a_result_does_not_leak(self):
        first = load()
        first["server"]["port"] = 1
        first["log"]["level"] = "trace"
        first["debug"] = True
        self.assertEqual(load(), BUILT_IN)
        self.assertEqual(load({"server.port": 81})["server"],
                         {"host": "127.0.0.1", "port": 81, "tls": {"enabled": False}})
