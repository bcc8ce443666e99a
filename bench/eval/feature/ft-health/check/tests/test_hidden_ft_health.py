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

class HiddenHealthTest(unittest.TestCase):
    def test_health(self):
        status, headers, body = call(seeded(), "GET", "/healthz")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body), {"status": "ok", "version": "1.8.2", "books": 4})
        _, _, body = call(Api(), "GET", "/healthz")
        self.assertEqual(json.loads(body)["books"], 0)
