"""Canonical forms of links, so that the same page is stored once."""
from urllib.parse import quote_plus, urlsplit, urlunsplit

from .query import parse_query


def canonical(url):
    """`url` with the scheme and host lowercased, the fragment dropped and the query
    parameters sorted by name (repeated names keep their order), re-encoded."""
    parts = urlsplit(url)
    params = sorted(parse_query(parts.query), key=lambda pair: pair[0])
    query = "&".join(f"{quote_plus(name)}={quote_plus(value)}" for name, value in params)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, query, ""))
