"""Monthly statements."""
from .periods import month_bounds


def statement(charges, year, month):
    """charges: (date, description, cents) in any order. The month's statement: its period,
    its charges in date order and their total in cents."""
    first, last = month_bounds(year, month)
    lines = sorted(charge for charge in charges if first <= charge[0] <= last)
    return {
        "period": f"{first.isoformat()} to {last.isoformat()}",
        "charges": lines,
        "total": sum(cents for _, _, cents in lines),
    }
