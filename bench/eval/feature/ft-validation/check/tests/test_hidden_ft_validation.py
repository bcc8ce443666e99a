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

class HiddenValidationTest(unittest.TestCase):
    def test_rejects(self):
        api = seeded()
        cases = [({"author": "x"}, "title"), ({"title": "  ", "author": "x"}, "title"),
                 ({"title": "t"}, "author"), ({"title": "t", "author": "a", "year": 1200}, "year"),
                 ({"title": "t", "author": "a", "year": "soon"}, "year")]
        for data, field in cases:
            status, _, body = call(api, "POST", "/books", body=data)
            self.assertEqual(status, 400, data)
            self.assertIn(field, json.loads(body)["error"])
        _, _, body = call(api, "GET", "/books")
        self.assertEqual(len(json.loads(body)), 4)

    def test_accepts(self):
        status, _, body = call(seeded(), "POST", "/books", body={"title": "Beloved", "author": "Toni Morrison", "year": 1987})
        self.assertEqual(status, 201)
        status, _, _ = call(seeded(), "POST", "/books", body={"title": "Untitled", "author": "Anon"})
        self.assertEqual(status, 201)
