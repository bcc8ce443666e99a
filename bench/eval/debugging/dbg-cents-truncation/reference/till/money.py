"""Money helpers: amounts are kept as whole cents so that sums stay exact."""


def to_cents(amount):
    """An amount in currency units (a float with at most two decimals, such as 4.35)
    as whole cents (435)."""
    return int(round(amount * 100))


def format_cents(cents):
    """Cents as a string with two decimals: 435 -> '4.35', -5 -> '-0.05'."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"
