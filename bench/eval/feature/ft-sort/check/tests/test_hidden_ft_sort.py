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

class HiddenSortTest(unittest.TestCase):
    def ids(self, api, sort):
        status, _, body = call(api, "GET", "/books", {"sort": sort})
        self.assertEqual(status, 200)
        return [b["id"] for b in json.loads(body)]

    def test_sort(self):
        api = seeded()
        api.store.add("Annals", "Zed")
        self.assertEqual(self.ids(api, "year"), [1, 3, 4, 2, 5])
        self.assertEqual(self.ids(api, "-year"), [2, 4, 3, 1, 5])
        self.assertEqual(self.ids(api, "title"), [5, 1, 3, 2, 4])
        self.assertEqual(self.ids(api, "-author")[:3], [5, 4, 2])
        _, _, body = call(api, "GET", "/books")
        self.assertEqual([b["id"] for b in json.loads(body)], [1, 2, 3, 4, 5])

    def test_bad(self):
        status, _, body = call(seeded(), "GET", "/books", {"sort": "price"})
        self.assertEqual(status, 400)
        self.assertIn("error", json.loads(body))
