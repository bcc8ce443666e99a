"""Print a ledger summary of the entries read from stdin."""

import sys

from ledger.records import parse_lines
from ledger.summary import render


def main(stdin=None, stdout=None):
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    entries = parse_lines(stdin)
    stdout.write(render(entries) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
