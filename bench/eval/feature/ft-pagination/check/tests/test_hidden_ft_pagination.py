import json
import unittest

from shelf.api import Api
from shelf.store import BookStore


def seeded():
    return Api(BookStore([
        {"title": "Dune", "author": "Frank Herbert", "year": 1965},
        {"title": "Kindred", "author": "Octavia E. Butler", "year": 1979, "read": True},
        {"title": "Dune Messiah", "author": "Frank Herbert", "year": 1969},
        {"title": "The Dispossessed", "author": "Ursula K. Le Guin", "year": 1974},
    ]))


def call(api, method, path, query=None, body=None):
    status, headers, text = api.handle(method, path, query, None if body is None else json.dumps(body))
    return status, headers, text

class HiddenPaginationTest(unittest.TestCase):
    def test_window(self):
        api = seeded()
        status, headers, body = call(api, "GET", "/books", {"limit": "2", "offset": "1"})
        self.assertEqual(status, 200)
        self.assertEqual([b["id"] for b in json.loads(body)], [2, 3])
        self.assertEqual(str(headers["X-Total-Count"]), "4")
        _, headers, body = call(api, "GET", "/books")
        self.assertEqual(len(json.loads(body)), 4)
        self.assertEqual(str(headers["X-Total-Count"]), "4")
        _, _, body = call(api, "GET", "/books", {"offset": "10"})
        self.assertEqual(json.loads(body), [])

    def test_bad(self):
        for q in ({"limit": "0"}, {"limit": "101"}, {"limit": "x"}, {"offset": "-1"}):
            status, _, body = call(seeded(), "GET", "/books", q)
            self.assertEqual(status, 400, q)
            self.assertIn("error", json.loads(body))
