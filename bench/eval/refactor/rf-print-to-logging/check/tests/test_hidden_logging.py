import unittest

from jobs.cleanup import cleanup
from jobs.sync import sync


class HiddenLoggingTest(unittest.TestCase):
    def test_logs(self):
        with self.assertLogs("jobs.sync", "INFO") as cm:
            sync([1, 2])
        self.assertTrue(any("syncing 2 items" in line for line in cm.output))
        with self.assertLogs("jobs.cleanup", "INFO") as cm:
            cleanup(["/tmp/x"])
        self.assertTrue(any("/tmp/x" in line for line in cm.output))
