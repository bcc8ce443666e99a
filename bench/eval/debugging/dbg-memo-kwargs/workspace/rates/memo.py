"""A small memoizing decorator."""
import functools


def memoize(fn):
    """Cache `fn`'s results: a call with the same arguments as an earlier one returns the
    earlier result without calling `fn` again. The arguments must be hashable."""
    cache = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = args
        if key not in cache:
            cache[key] = fn(*args, **kwargs)
        return cache[key]

    wrapper.cache = cache
    return wrapper
