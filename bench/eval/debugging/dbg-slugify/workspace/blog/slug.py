import re


def slugify(title):
    """Lowercase words joined by single dashes, no dash at either end."""
    text = title.lower()
    return re.sub(r"[^a-z0-9]", "-", text)
