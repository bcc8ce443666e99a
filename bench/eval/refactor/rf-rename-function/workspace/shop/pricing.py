def calc_total(lines, discount=0.0):
    """Sum of quantity * unit price, less a fractional discount."""
    gross = sum(qty * price for qty, price in lines)
    return round(gross * (1 - discount), 2)
