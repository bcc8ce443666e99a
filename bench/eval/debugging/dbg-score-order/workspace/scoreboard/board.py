"""The ranking shown on the board."""
from .parse import parse


def ranking(text):
    """The entries of a score sheet, best first; equal scores in name order."""
    entries = parse(text)
    entries.sort(key=lambda entry: entry.name)
    entries.sort(key=lambda entry: entry.score, reverse=True)
    return entries


def render(text, top=3):
    """The board's lines for the best `top` players."""
    return [
        f"{place}. {entry.name} ({entry.score})"
        for place, entry in enumerate(ranking(text)[:top], start=1)
    ]
