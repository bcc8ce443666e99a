import unittest

from app import App


class SessionTest(unittest.TestCase):
    def test_round_trip(self):
        app = App()
        sid = app.login("ada")["session"]
        self.assertEqual(app.whoami(sid), {"status": 200, "user": "ada"})
        app.bye(sid)
        self.assertEqual(app.whoami(sid), {"status": 401})
