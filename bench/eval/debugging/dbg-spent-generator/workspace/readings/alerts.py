"""Alerts on a sensor log."""
from .load import parse_readings


def above(text, limit):
    """The readings above `limit`, in order, and the share of all readings they are
    (0.0 for an empty log)."""
    values = parse_readings(text)
    hits = [value for value in values if value > limit]
    share = len(hits) / len(values) if values else 0.0
    return hits, share
