import unittest

from jobs.runner import run_all, summary


def backup():
    raise ValueError("disk full")


class RunnerTest(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(run_all({"report": lambda: 42}), {"report": ("ok", 42)})

    def test_failing_job(self):
        results = run_all({"report": lambda: 42, "backup": backup})
        self.assertEqual(results["backup"], ("failed", "ValueError: disk full"))
        self.assertEqual(summary(results), "1 ok, 1 failed: backup")
