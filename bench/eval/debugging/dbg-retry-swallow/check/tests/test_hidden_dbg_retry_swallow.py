import unittest

from jobs.retry import call_with_retry
from jobs.runner import run_all


class Flaky:
    """Fails `failures` times (with numbered messages), then returns `value`."""

    def __init__(self, failures, value="done", error=OSError):
        self.failures, self.value, self.error, self.calls = failures, value, error, 0

    def __call__(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error(f"attempt {self.calls}")
        return self.value


class HiddenRetryTest(unittest.TestCase):
    def test_last_error_raised(self):
        job = Flaky(10)
        with self.assertRaises(OSError) as caught:
            call_with_retry(job, attempts=4)
        self.assertEqual(str(caught.exception), "attempt 4")
        self.assertEqual(job.calls, 4)
        once = Flaky(1)
        with self.assertRaises(OSError):
            call_with_retry(once, attempts=1)
        self.assertEqual(once.calls, 1)

    def test_retries_then_succeeds(self):
        job = Flaky(2, value=7)
        self.assertEqual(call_with_retry(job, attempts=3), 7)
        self.assertEqual(job.calls, 3)
        self.assertIsNone(call_with_retry(lambda: None))

    def test_not_retried(self):
        job = Flaky(5, error=KeyError)
        with self.assertRaises(KeyError):
            call_with_retry(job, attempts=3, retry_on=(OSError,))
        self.assertEqual(job.calls, 1)

    def test_runner(self):
        results = run_all({"a": Flaky(1, value=1), "b": Flaky(3), "c": lambda: None}, attempts=3)
        self.assertEqual(results, {"a": ("ok", 1), "b": ("failed", "OSError: attempt 3"),
                                   "c": ("ok", None)})
