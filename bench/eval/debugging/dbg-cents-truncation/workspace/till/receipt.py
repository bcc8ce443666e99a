from .money import format_cents, to_cents


def line_total(price, quantity):
    """The cents of `quantity` items at the unit price `price`."""
    return to_cents(price) * quantity


def receipt(items):
    """items: (name, unit price, quantity). The receipt's lines, the total last."""
    lines = []
    total = 0
    for name, price, quantity in items:
        cents = line_total(price, quantity)
        total += cents
        lines.append(f"{name} x{quantity}: {format_cents(cents)}")
    lines.append(f"TOTAL: {format_cents(total)}")
    return lines
