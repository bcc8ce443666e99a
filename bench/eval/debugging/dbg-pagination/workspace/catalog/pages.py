def paginate(items, page, size):
    """Items of a 1-based page of `size` items; an empty list past the end."""
    if page < 1 or size < 1:
        raise ValueError("page and size start at 1")
    start = page * size
    return items[start:start + size]


def page_count(total, size):
    return (total + size - 1) // size
