"""The built-in settings."""
from functools import lru_cache


@lru_cache(maxsize=None)
def defaults():
    """The built-in settings, built once."""
    return {
        "debug": False,
        "workers": 4,
        "log": {"level": "info", "file": None},
        "server": {"host": "127.0.0.1", "port": 8000, "tls": {"enabled": False}},
    }
