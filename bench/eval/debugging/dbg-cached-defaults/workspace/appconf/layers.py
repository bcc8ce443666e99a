"""Laying overrides onto settings."""


def apply(settings, overrides):
    """Set each dotted key of `overrides` ('server.port': 9000) in `settings`, in place,
    creating the tables on the way, and return `settings`."""
    for dotted, value in overrides.items():
        *parents, leaf = dotted.split(".")
        node = settings
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return settings
