"""Print the totals report to a stream."""

import sys

from report.render import render


def main(rows, out=None):
    out = sys.stdout if out is None else out
    out.write(render(rows, html=False, title="Totals") + "\n")
    return 0
