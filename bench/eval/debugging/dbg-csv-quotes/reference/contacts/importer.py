import csv


def parse_line(line):
    """The fields of one CSV line (RFC 4180 quoting)."""
    return next(csv.reader([line.rstrip("\n")]))


def parse(text):
    return [parse_line(line) for line in text.splitlines() if line.strip()]
