"""Parsing URL query strings."""
from urllib.parse import unquote_plus


def parse_query(query):
    """'a=1&b=x+y&flag' as [('a', '1'), ('b', 'x y'), ('flag', '')]: the pairs in order,
    names and values percent-decoded ('+' is a space), a name without '=' with an empty
    value, empty pieces ('a=1&&b=2') skipped."""
    pairs = []
    for piece in query.split("&"):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        pairs.append((unquote_plus(name), unquote_plus(value)))
    return pairs
