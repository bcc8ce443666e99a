VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def parse(text):
    total = 0
    for ch in text.upper():
        if ch not in VALUES:
            raise ValueError(f"not a Roman digit: {ch}")
        total += VALUES[ch]
    return total
