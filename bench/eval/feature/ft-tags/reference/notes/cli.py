"""The command line: `FILE add TEXT` adds a note, `FILE list` prints them, `FILE tags` counts tags."""
import argparse
import sys

from .store import NoteStore


def format_note(note):
    line = f"{note['id']}. {note['text']}"
    if note.get("tags"):
        line += " [" + ", ".join(note["tags"]) + "]"
    return line


def main(argv=None, out=None):
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="notes")
    parser.add_argument("file")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("text")
    add.add_argument("--tag", action="append", default=[])
    listing = sub.add_parser("list")
    listing.add_argument("--tag")
    sub.add_parser("tags")
    args = parser.parse_args(argv)
    store = NoteStore(args.file)
    if args.command == "add":
        note = store.add(args.text, tags=args.tag)
        print(f"added {note['id']}", file=out)
    elif args.command == "list":
        notes = store.with_tag(args.tag) if args.tag else store.all()
        for note in notes:
            print(format_note(note), file=out)
    elif args.command == "tags":
        for tag, count in sorted(store.tag_counts().items()):
            print(f"{tag}: {count}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
