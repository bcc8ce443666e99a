"""Print the totals report to a stream."""

import sys

from report.render import render_text


def main(rows, out=None):
    out = sys.stdout if out is None else out
    out.write(render_text(rows, title="Totals") + "\n")
    return 0
