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

class HiddenReadTest(unittest.TestCase):
    def test_patch(self):
        api = seeded()
        status, _, body = call(api, "PATCH", "/books/1", body={"read": True})
        self.assertEqual(status, 200)
        self.assertTrue(json.loads(body)["read"])
        _, _, body = call(api, "GET", "/books/1")
        self.assertTrue(json.loads(body)["read"])
        status, _, _ = call(api, "PATCH", "/books/2", body={"read": "yes"})
        self.assertEqual(status, 400)
        status, _, _ = call(api, "PATCH", "/books/2", body={})
        self.assertEqual(status, 400)
        status, _, _ = call(api, "PATCH", "/books/42", body={"read": False})
        self.assertEqual(status, 404)

    def test_page(self):
        from shelf.views import render_list
        page = render_list(seeded().store.all())
        self.assertEqual(page.count('class="read"'), 1)
