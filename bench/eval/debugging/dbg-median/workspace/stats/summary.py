def median(values):
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def spread(values):
    return max(values) - min(values)
