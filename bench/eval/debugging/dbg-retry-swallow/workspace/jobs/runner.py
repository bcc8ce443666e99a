"""Running a batch of jobs and reporting how each went."""
from .retry import call_with_retry


def run_all(jobs, attempts=3):
    """jobs: {name: callable}. Runs each, retrying failures, and returns
    {name: ("ok", value)} or {name: ("failed", "ErrorType: message")}, in the jobs' order."""
    results = {}
    for name, job in jobs.items():
        try:
            value = call_with_retry(job, attempts=attempts)
        except Exception as error:
            results[name] = ("failed", f"{type(error).__name__}: {error}")
        else:
            results[name] = ("ok", value)
    return results


def summary(results):
    """'N ok, M failed: name, name'."""
    failed = [name for name, (status, _) in results.items() if status == "failed"]
    line = f"{len(results) - len(failed)} ok, {len(failed)} failed"
    return line + (": " + ", ".join(failed) if failed else "")
