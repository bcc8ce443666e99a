"""Text helpers shared by the catalogue."""


def search_key(text):
    """The form texts are compared in when searching: two texts a reader would call the
    same, whatever their case, spacing or the way their characters were encoded, get the
    same key."""
    return " ".join(text.lower().split())


def display_title(text):
    """A title as shown in listings: trimmed, inner runs of spaces collapsed."""
    return " ".join(text.split())
