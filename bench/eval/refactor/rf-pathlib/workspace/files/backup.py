import os


def backup_name(path):
    base = os.path.basename(path)
    stem, ext = os.path.splitext(base)
    return os.path.join(os.path.dirname(path), stem + ".bak" + ext)
