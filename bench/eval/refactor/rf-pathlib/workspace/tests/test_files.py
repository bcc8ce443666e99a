import os
import tempfile
import unittest

from files.backup import backup_name
from files.scan import python_files


class FilesTest(unittest.TestCase):
    def test_backup(self):
        self.assertEqual(backup_name("/srv/app/conf.yaml"), "/srv/app/conf.bak.yaml")

    def test_scan(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "pkg"))
            for rel in ("a.py", "pkg/b.py", "pkg/c.txt"):
                open(os.path.join(d, rel), "w").close()
            self.assertEqual(python_files(d), ["a.py", "pkg/b.py"])
