import unittest

from jobs.cleanup import cleanup
from jobs.sync import sync


class JobsTest(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(sync([1, 0, 2]), 2)
        self.assertEqual(cleanup(["a", "b"]), 2)
