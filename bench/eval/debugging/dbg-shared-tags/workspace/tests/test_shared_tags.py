import unittest

from notes.note import Note


class NoteTest(unittest.TestCase):
    def test_tags_are_per_note(self):
        a = Note("a").tag("urgent")
        b = Note("b")
        self.assertEqual(a.tags, ["urgent"])
        self.assertEqual(b.tags, [])
