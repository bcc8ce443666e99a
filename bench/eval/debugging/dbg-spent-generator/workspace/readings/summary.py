"""Summaries of a sensor log."""
from .load import parse_readings


def summarize(text):
    """count, mean (to 3 places), min and max of the log's readings; None for an empty log."""
    values = parse_readings(text)
    count = sum(1 for _ in values)
    if not count:
        return {"count": 0, "mean": None, "min": None, "max": None}
    return {
        "count": count,
        "mean": round(sum(values) / count, 3),
        "min": min(values),
        "max": max(values),
    }
