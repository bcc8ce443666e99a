VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def parse(text):
    digits = []
    for ch in text.upper():
        if ch not in VALUES:
            raise ValueError(f"not a Roman digit: {ch}")
        digits.append(VALUES[ch])
    total = 0
    for i, v in enumerate(digits):
        if i + 1 < len(digits) and v < digits[i + 1]:
            total -= v
        else:
            total += v
    return total
