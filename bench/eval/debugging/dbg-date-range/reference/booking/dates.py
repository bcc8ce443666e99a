from datetime import date, timedelta


def nights(check_in: date, check_out: date):
    """Each night of a stay: from check-in up to the night before check-out."""
    return [check_in + timedelta(days=i) for i in range((check_out - check_in).days)]


def days_between(first: date, last: date):
    """Every day from `first` to `last`, both included."""
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]
