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

import os
import subprocess
import sys
import tempfile


class HiddenCliTest(unittest.TestCase):
    def run_cli(self, *args):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return subprocess.run([sys.executable, "-m", "shelf.cli", *args], cwd=root, capture_output=True, text=True)

    def test_list(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "b.json")
            with open(p, "w") as f:
                json.dump([{"title": "Dune", "author": "Frank Herbert", "year": 1965},
                           {"title": "Lud", "author": "Hope Mirrlees", "read": True}], f)
            out = self.run_cli("list", p)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.splitlines(), ["Dune — Frank Herbert (1965)", "Lud — Hope Mirrlees"])
            out = self.run_cli("list", "--unread", p)
            self.assertEqual(out.stdout.splitlines(), ["Dune — Frank Herbert (1965)"])

    def test_missing(self):
        out = self.run_cli("list", "/nonexistent/books.json")
        self.assertEqual(out.returncode, 2)
        self.assertTrue(out.stderr.strip())
