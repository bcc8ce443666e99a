"""The totals report as a web page."""

from report.render import render


def page(rows):
    return "<html><body>\n" + render(rows, html=True, title="Totals") + "\n</body></html>"
