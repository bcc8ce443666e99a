"""The totals report as a web page."""

from report.render import render_html


def page(rows):
    return "<html><body>\n" + render_html(rows, title="Totals") + "\n</body></html>"
