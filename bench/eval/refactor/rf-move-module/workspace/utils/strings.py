def truncate(text, width):
    return text if len(text) <= width else text[: width - 1] + "…"


def title_case(text):
    return " ".join(w[:1].upper() + w[1:] for w in text.split())
