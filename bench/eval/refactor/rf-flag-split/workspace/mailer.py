"""The weekly report mail: always a text part, an HTML part for rich clients."""

from report import render as rendering


def compose(rows, rich=False):
    rows = list(rows)
    body = {"text": rendering.render(rows, title="Weekly")}
    body["html"] = rendering.render(rows, True, "Weekly") if rich else None
    return body
