"""Calendar periods for billing."""
from datetime import date, timedelta


def month_bounds(year, month):
    """The first and the last day of a calendar month, as dates."""
    first = date(year, month, 1)
    last = date(year, month + 1, 1) - timedelta(days=1)
    return first, last


def days_in_month(year, month):
    first, last = month_bounds(year, month)
    return (last - first).days + 1
