"""Converting between currencies."""
from .memo import memoize

# units of each currency worth one US dollar
PER_USD = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.0, "CHF": 0.9}


@memoize
def rate(base, quote="USD"):
    """How many units of `quote` one unit of `base` is worth."""
    if base not in PER_USD or quote not in PER_USD:
        raise KeyError(f"no rate for {base}/{quote}")
    return PER_USD[quote] / PER_USD[base]


def convert(amount, base, quote="USD"):
    """`amount` of `base` in `quote`, rounded to two places."""
    return round(amount * rate(base, quote=quote), 2)
