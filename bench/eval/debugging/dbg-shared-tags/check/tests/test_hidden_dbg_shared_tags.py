import unittest

from notes.note import Note


class HiddenNoteTest(unittest.TestCase):
    def test_given_tags_are_not_shared(self):
        given = ["x"]
        n = Note("n", given).tag("y")
        self.assertEqual(n.tags, ["x", "y"])
        self.assertEqual(given, ["x"])

    def test_many_notes(self):
        notes = [Note(str(i)).tag(str(i)) for i in range(3)]
        self.assertEqual([n.tags for n in notes], [["0"], ["1"], ["2"]])
