import io
import os
import tempfile
import unittest

from notes.cli import main
from notes.store import NoteStore


def run(path, *args):
    out = io.StringIO()
    code = main([path, *args], out=out)
    return code, out.getvalue()


class CliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "notes.json")

    def tearDown(self):
        self.dir.cleanup()

    def test_add_and_list(self):
        self.assertEqual(run(self.path, "add", "buy milk"), (0, "added 1\n"))
        self.assertEqual(run(self.path, "add", "call Ana"), (0, "added 2\n"))
        self.assertEqual(run(self.path, "list"), (0, "1. buy milk\n2. call Ana\n"))

    def test_store_ids(self):
        store = NoteStore(self.path)
        self.assertEqual(store.add("a")["id"], 1)
        self.assertEqual(store.add("b")["id"], 2)
        self.assertEqual([n["text"] for n in store.all()], ["a", "b"])
