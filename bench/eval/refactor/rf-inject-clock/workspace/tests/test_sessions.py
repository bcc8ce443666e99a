import unittest

import app
from sessions import store


class SessionTest(unittest.TestCase):
    def tearDown(self):
        store.clear()

    def test_round_trip(self):
        sid = app.login("ada")["session"]
        self.assertEqual(app.whoami(sid), {"status": 200, "user": "ada"})
        app.bye(sid)
        self.assertEqual(app.whoami(sid), {"status": 401})
