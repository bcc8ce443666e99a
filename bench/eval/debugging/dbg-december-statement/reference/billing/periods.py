"""Calendar periods for billing."""
from datetime import date, timedelta


def month_bounds(year, month):
    """The first and the last day of a calendar month, as dates."""
    first = date(year, month, 1)
    if month == 12:
        following = date(year + 1, 1, 1)
    else:
        following = date(year, month + 1, 1)
    return first, following - timedelta(days=1)


def days_in_month(year, month):
    first, last = month_bounds(year, month)
    return (last - first).days + 1
