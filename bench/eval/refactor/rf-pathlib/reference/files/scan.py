from pathlib import Path


def python_files(root):
    base = Path(root)
    return sorted(str(p.relative_to(base)) for p in base.rglob("*.py") if p.is_file())
