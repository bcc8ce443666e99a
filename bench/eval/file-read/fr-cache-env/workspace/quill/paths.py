import os
from pathlib import Path


def config_dir():
    return Path(os.environ.get("QUILL_CONFIG", "~/.config/quill")).expanduser()


def cache_dir():
    base = os.environ.get("QUILL_CACHE_HOME")
    if base:
        return Path(base)
    return Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "quill"
