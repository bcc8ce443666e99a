def percent(part, whole):
    return 0.0 if whole == 0 else round(100 * part / whole, 1)
