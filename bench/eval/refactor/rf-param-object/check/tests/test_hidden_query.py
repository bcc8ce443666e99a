import dataclasses
import inspect
import unittest
from contextlib import ExitStack
from unittest import mock

import api
import cli
import feeds
import catalog.search as search_module
from catalog.query import Query

ITEMS = [
    {"name": "Blue pen", "price": 2.5, "stock": 4},
    {"name": "Red pen", "price": 2.5, "stock": 0},
    {"name": "Notebook", "price": 7.0, "stock": 2},
    {"name": "Fountain pen", "price": 40.0, "stock": 1},
    {"name": "Eraser", "price": 0.5, "stock": 9},
    {"name": "Stapler", "price": 12.0, "stock": 3},
]


class Recorder:
    """Wraps catalog.search.search wherever a caller holds it, recording each call."""

    def __init__(self, *modules):
        self.calls = []
        self.modules = modules

    def __enter__(self):
        self.stack = ExitStack()
        original = search_module.search

        def wrapper(*args, **kwargs):
            self.calls.append((args, kwargs))
            return original(*args, **kwargs)

        self.stack.enter_context(mock.patch.object(search_module, "search", wrapper))
        for module in self.modules:
            for name, value in list(vars(module).items()):
                if value is original:
                    self.stack.enter_context(mock.patch.object(module, name, wrapper))
        return self

    def __exit__(self, *exc):
        self.stack.close()


class HiddenParamObjectTest(unittest.TestCase):
    def test_query_is_a_frozen_dataclass(self):
        self.assertTrue(dataclasses.is_dataclass(Query))
        names = [f.name for f in dataclasses.fields(Query)]
        self.assertEqual(names, ["text", "min_price", "max_price", "in_stock_only", "limit"])
        q = Query()
        self.assertEqual((q.text, q.min_price, q.max_price, q.in_stock_only, q.limit), ("", None, None, False, None))
        with self.assertRaises(dataclasses.FrozenInstanceError):
            q.text = "x"
        self.assertEqual(Query("pen", limit=2), Query(text="pen", limit=2))

    def test_query_validates_itself(self):
        with self.assertRaises(ValueError):
            Query(min_price=5, max_price=1)
        with self.assertRaises(ValueError):
            Query(limit=-1)
        Query(min_price=1, max_price=1, limit=0)

    def test_search_takes_a_query(self):
        self.assertEqual(list(inspect.signature(search_module.search).parameters), ["items", "query"])
        names = lambda q: [i["name"] for i in search_module.search(ITEMS, q)]
        self.assertEqual(names(Query()), ["Eraser", "Blue pen", "Red pen", "Notebook", "Stapler", "Fountain pen"])
        self.assertEqual(names(Query(text=" PEN ")), ["Blue pen", "Red pen", "Fountain pen"])
        self.assertEqual(names(Query("pen", in_stock_only=True)), ["Blue pen", "Fountain pen"])
        self.assertEqual(names(Query(min_price=2.5, max_price=12)), ["Blue pen", "Red pen", "Notebook", "Stapler"])
        self.assertEqual(names(Query(limit=2)), ["Eraser", "Blue pen"])
        self.assertEqual(names(Query(limit=0)), [])

    def test_callers_pass_a_query(self):
        with Recorder(api, cli, feeds) as rec:
            self.assertEqual(
                api.handle(ITEMS, {"q": "pen", "max": "10", "stock": "1", "limit": "5"}),
                {"status": 200, "names": ["Blue pen"]},
            )
            self.assertEqual(api.handle(ITEMS, {"min": "9", "max": "3"})["status"], 400)
            self.assertEqual(cli.run(ITEMS, ["--in-stock", "--top", "2", "pen"]), ["Blue pen: 2.50", "Fountain pen: 40.00"])
            self.assertEqual(cli.run(ITEMS, ["--under", "3"]), ["Eraser: 0.50", "Blue pen: 2.50", "Red pen: 2.50"])
            self.assertEqual(feeds.bargains(ITEMS), ["Eraser", "Blue pen", "Notebook"])
        self.assertEqual(len(rec.calls), 4)
        for args, kwargs in rec.calls:
            self.assertEqual(len(args) + len(kwargs), 2)
            self.assertTrue(any(isinstance(v, Query) for v in list(args) + list(kwargs.values())))


if __name__ == "__main__":
    unittest.main()
