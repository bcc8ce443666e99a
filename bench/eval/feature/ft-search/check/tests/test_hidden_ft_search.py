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

class HiddenSearchTest(unittest.TestCase):
    def test_search(self):
        api = seeded()
        _, _, body = call(api, "GET", "/books", {"q": "dune"})
        self.assertEqual([b["title"] for b in json.loads(body)], ["Dune", "Dune Messiah"])
        _, _, body = call(api, "GET", "/books", {"q": "LE GUIN"})
        self.assertEqual([b["id"] for b in json.loads(body)], [4])
        _, _, body = call(api, "GET", "/books", {"q": ""})
        self.assertEqual(len(json.loads(body)), 4)
        _, _, body = call(api, "GET", "/books", {"q": "zzz"})
        self.assertEqual(json.loads(body), [])
