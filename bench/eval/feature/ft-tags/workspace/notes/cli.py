"""The command line: `FILE add TEXT` adds a note, `FILE list` prints them."""
import argparse
import sys

from .store import NoteStore


def format_note(note):
    return f"{note['id']}. {note['text']}"


def main(argv=None, out=None):
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("file")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("text")
    sub.add_parser("list")
    args = parser.parse_args(argv)
    store = NoteStore(args.file)
    if args.command == "add":
        note = store.add(args.text)
        print(f"added {note['id']}", file=out)
    elif args.command == "list":
        for note in store.all():
            print(format_note(note), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
