def merge(base, override):
    """`override` on top of `base`; nested tables are merged key by key."""
    result = dict(base)
    for key, value in override.items():
        result[key] = value
    return result
