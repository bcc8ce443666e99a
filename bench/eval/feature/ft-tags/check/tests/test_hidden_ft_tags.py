import io
import json
import os
import tempfile
import unittest

from notes.cli import format_note, main
from notes.store import NoteStore


def run(path, *args):
    out = io.StringIO()
    code = main([path, *args], out=out)
    return code, out.getvalue()


class HiddenTagsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "notes.json")

    def tearDown(self):
        self.dir.cleanup()

    def test_store_tags(self):
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump([{"id": 1, "text": "old note"}], f)
        store = NoteStore(self.path)
        note = store.add("plan trip", tags=["Travel", "todo", "travel"])
        self.assertEqual(note, {"id": 2, "text": "plan trip", "tags": ["todo", "travel"]})
        self.assertEqual(store.add("plain")["tags"], [])
        self.assertEqual([n["id"] for n in store.with_tag("TRAVEL")], [2])
        self.assertEqual(store.with_tag("nothing"), [])
        self.assertEqual(store.tag_counts(), {"todo": 1, "travel": 1})

    def test_cli_add_and_filter(self):
        self.assertEqual(run(self.path, "add", "buy milk", "--tag", "shop"), (0, "added 1\n"))
        self.assertEqual(run(self.path, "add", "call Ana"), (0, "added 2\n"))
        run(self.path, "add", "buy stamps", "--tag", "Shop", "--tag", "post")
        self.assertEqual(run(self.path, "list"),
                         (0, "1. buy milk [shop]\n2. call Ana\n3. buy stamps [post, shop]\n"))
        self.assertEqual(run(self.path, "list", "--tag", "shop"),
                         (0, "1. buy milk [shop]\n3. buy stamps [post, shop]\n"))
        self.assertEqual(run(self.path, "list", "--tag", "none"), (0, ""))

    def test_cli_tags_command(self):
        run(self.path, "add", "a", "--tag", "work")
        run(self.path, "add", "b", "--tag", "home", "--tag", "work")
        run(self.path, "add", "c")
        self.assertEqual(run(self.path, "tags"), (0, "home: 1\nwork: 2\n"))

    def test_format_note(self):
        self.assertEqual(format_note({"id": 4, "text": "x"}), "4. x")
        self.assertEqual(format_note({"id": 4, "text": "x", "tags": []}), "4. x")
        self.assertEqual(format_note({"id": 5, "text": "y", "tags": ["a", "b"]}), "5. y [a, b]")
