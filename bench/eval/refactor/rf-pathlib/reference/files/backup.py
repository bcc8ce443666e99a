from pathlib import Path


def backup_name(path):
    p = Path(path)
    return str(p.with_name(p.stem + ".bak" + p.suffix))
