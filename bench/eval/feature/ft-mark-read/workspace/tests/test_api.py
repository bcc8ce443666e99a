import json
import unittest

from shelf.api import Api
from shelf.store import BookStore
from shelf.views import render_list


def seeded():
    return Api(BookStore([
        {"title": "Dune", "author": "Frank Herbert", "year": 1965},
        {"title": "Kindred", "author": "Octavia E. Butler", "year": 1979},
    ]))


class ApiTest(unittest.TestCase):
    def test_list_and_get(self):
        api = seeded()
        status, _, body = api.handle("GET", "/books")
        self.assertEqual(status, 200)
        self.assertEqual([b["title"] for b in json.loads(body)], ["Dune", "Kindred"])
        status, _, body = api.handle("GET", "/books/2")
        self.assertEqual(json.loads(body)["author"], "Octavia E. Butler")

    def test_create(self):
        api = Api()
        status, _, body = api.handle("POST", "/books", body=json.dumps({"title": "Emma", "author": "Jane Austen"}))
        self.assertEqual(status, 201)
        self.assertEqual(json.loads(body)["id"], 1)

    def test_page(self):
        self.assertIn("2 books", render_list(seeded().store.all()))
