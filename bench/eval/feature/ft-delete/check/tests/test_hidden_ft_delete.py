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

class HiddenDeleteTest(unittest.TestCase):
    def test_delete(self):
        api = seeded()
        status, _, body = call(api, "DELETE", "/books/2")
        self.assertEqual(status, 204)
        self.assertFalse(body)
        status, _, _ = call(api, "GET", "/books/2")
        self.assertEqual(status, 404)
        _, _, body = call(api, "GET", "/books")
        self.assertEqual([b["id"] for b in json.loads(body)], [1, 3, 4])
        status, _, body = call(api, "DELETE", "/books/99")
        self.assertEqual(status, 404)
        self.assertIn("error", json.loads(body))

    def test_page_has_buttons(self):
        from shelf.views import render_list
        import re
        page = render_list(seeded().store.all())
        for book_id in range(1, 5):
            self.assertRegex(page, r'<button[^>]*data-id="%d"' % book_id)
