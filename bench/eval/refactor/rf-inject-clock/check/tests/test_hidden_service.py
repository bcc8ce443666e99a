import importlib.util
import time
import unittest
from unittest import mock

import app
from sessions.service import SessionService
from sessions.store import MemoryStore


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


class RecordingStore:
    def __init__(self):
        self.data, self.log = {}, []

    def save(self, sid, user, expires):
        self.log.append(("save", sid, user, expires))
        self.data[sid] = (user, expires)

    def load(self, sid):
        self.log.append(("load", sid))
        return self.data.get(sid)

    def drop(self, sid):
        self.log.append(("drop", sid))
        self.data.pop(sid, None)


def _no_wall_clock(*args):
    raise AssertionError("the service must use the clock it was given")


class HiddenInjectClockTest(unittest.TestCase):
    def test_memory_stores_are_independent(self):
        a, b = MemoryStore(), MemoryStore()
        a.save("s1", "ada", 10.0)
        self.assertEqual(a.load("s1"), ("ada", 10.0))
        self.assertIsNone(b.load("s1"))
        b.drop("s1")
        a.drop("nope")
        self.assertEqual(a.load("s1"), ("ada", 10.0))
        a.drop("s1")
        self.assertIsNone(a.load("s1"))

    def test_service_uses_the_given_store_and_clock(self):
        store, clock = RecordingStore(), Clock(1000.0)
        service = SessionService(store, clock, ttl=60)
        with mock.patch.object(time, "time", _no_wall_clock):
            sid = service.start("ada")
            other = service.start("bob")
            self.assertNotEqual(sid, other)
            self.assertEqual(store.log[0], ("save", sid, "ada", 1060.0))
            clock.t = 1059.5
            self.assertEqual(service.current_user(sid), "ada")
            clock.t = 1060.0
            self.assertIsNone(service.current_user(sid))
            self.assertIn(("drop", sid), store.log)
            self.assertNotIn(sid, store.data)
            self.assertIsNone(service.current_user("unknown"))
            service.logout(other)
            self.assertEqual(store.data, {})

    def test_default_ttl(self):
        clock = Clock(0.0)
        service = SessionService(MemoryStore(), clock)
        sid = service.start("cy")
        clock.t = 1799
        self.assertEqual(service.current_user(sid), "cy")
        clock.t = 1800
        self.assertIsNone(service.current_user(sid))

    def test_app_is_wired_at_the_edge(self):
        self.assertIsNone(importlib.util.find_spec("sessions.login"))
        self.assertIsNone(importlib.util.find_spec("sessions.check"))
        clock = Clock(50.0)
        service = app.make_service(clock)
        self.assertIsInstance(service, SessionService)
        web = app.App(service)
        sid = web.login("ada")["session"]
        self.assertEqual(web.whoami(sid), {"status": 200, "user": "ada"})
        clock.t += 1800
        self.assertEqual(web.whoami(sid), {"status": 401})
        sid = web.login("bob")["session"]
        self.assertEqual(web.bye(sid), {"status": 204})
        self.assertEqual(web.whoami(sid), {"status": 401})
        # Two apps built with their own services share nothing.
        first, second = app.App(app.make_service(Clock())), app.App(app.make_service(Clock()))
        sid = first.login("dee")["session"]
        self.assertEqual(second.whoami(sid), {"status": 401})
        self.assertEqual(app.App().whoami("x"), {"status": 401})


if __name__ == "__main__":
    unittest.main()
