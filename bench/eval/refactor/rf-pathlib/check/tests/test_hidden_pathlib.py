import unittest

from files.backup import backup_name


class HiddenPathlibTest(unittest.TestCase):
    def test_strings(self):
        self.assertEqual(backup_name("notes.txt"), "notes.bak.txt")
        self.assertIsInstance(backup_name("x/y.md"), str)
        self.assertEqual(backup_name("x/y.md"), "x/y.bak.md")
