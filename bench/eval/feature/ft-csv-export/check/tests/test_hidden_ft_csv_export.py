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

import csv
import io


class HiddenCsvTest(unittest.TestCase):
    def test_export(self):
        api = seeded()
        api.store.add("Quoted, \"title\"", "Someone")
        status, headers, body = call(api, "GET", "/books.csv")
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/csv"))
        rows = list(csv.reader(io.StringIO(body)))
        self.assertEqual(rows[0], ["id", "title", "author", "year", "read"])
        self.assertEqual(rows[1], ["1", "Dune", "Frank Herbert", "1965", "false"])
        self.assertEqual(rows[2][4], "true")
        self.assertEqual(rows[5], ["5", "Quoted, \"title\"", "Someone", "", "false"])
        self.assertEqual(len(rows), 6)
