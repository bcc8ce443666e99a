"""Cart totals, in integer cents."""

# code -> ("percent", P) for P% off the subtotal, or ("fixed", CENTS) off it
CODES = {"SAVE10": ("percent", 10), "FIVEOFF": ("fixed", 500)}


class InvalidCode(ValueError):
    pass


def line_total(item):
    return item["price"] * item["qty"]


def subtotal(items):
    return sum(line_total(item) for item in items)


def normalize_code(code):
    return code.strip().upper()


def discount(items, code):
    key = normalize_code(code)
    if key not in CODES:
        raise InvalidCode(f"unknown discount code: {code}")
    kind, amount = CODES[key]
    sub = subtotal(items)
    if kind == "percent":
        return sub * amount // 100
    return min(amount, sub)


def total(items, code=None):
    off = discount(items, code) if code is not None else 0
    return subtotal(items) - off
