"""`python3 -m shelf.cli list FILE [--unread]`."""
import argparse
import json
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="shelf")
    sub = parser.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list")
    ls.add_argument("file")
    ls.add_argument("--unread", action="store_true")
    args = parser.parse_args(argv)
    try:
        with open(args.file, encoding="utf-8") as f:
            books = json.load(f)
    except OSError as e:
        print(f"shelf: {e}", file=sys.stderr)
        return 2
    for b in books:
        if args.unread and b.get("read"):
            continue
        year = f" ({b['year']})" if b.get("year") is not None else ""
        print(f"{b['title']} — {b['author']}{year}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
