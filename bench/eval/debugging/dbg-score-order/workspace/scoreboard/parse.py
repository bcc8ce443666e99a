"""Reading a score sheet: one 'name: score' per line."""
from dataclasses import dataclass


@dataclass
class Entry:
    name: str
    score: int


def parse_line(line):
    """'name: score' as an Entry; a blank line or a '#' comment as None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    name, sep, score = line.partition(":")
    if not sep:
        raise ValueError(f"not 'name: score': {line!r}")
    return Entry(name.strip(), score.strip())


def parse(text):
    """The entries of a score sheet, in the order written."""
    return [entry for entry in map(parse_line, text.splitlines()) if entry is not None]
