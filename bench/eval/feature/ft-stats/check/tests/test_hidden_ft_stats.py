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

class HiddenStatsTest(unittest.TestCase):
    def test_stats(self):
        status, _, body = call(seeded(), "GET", "/stats")
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body), {"total": 4, "read": 1, "by_author": {
            "Frank Herbert": 2, "Octavia E. Butler": 1, "Ursula K. Le Guin": 1}})

    def test_page(self):
        from shelf.views import render_list
        page = render_list(seeded().store.all())
        self.assertIn("1 of 4 read", page)
        self.assertIn('class="stats"', page)
