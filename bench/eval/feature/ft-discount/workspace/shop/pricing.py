"""Cart totals, in integer cents."""


def line_total(item):
    return item["price"] * item["qty"]


def subtotal(items):
    return sum(line_total(item) for item in items)


def total(items):
    return subtotal(items)
