"""Notes kept in a JSON file: a list of {"id": N, "text": TEXT, "tags": [TAG, ...]}."""
import json
import os


class NoteStore:
    def __init__(self, path):
        self.path = path

    def load(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as f:
            return json.load(f)

    def save(self, notes):
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump(notes, f, indent=2)

    def add(self, text, tags=()):
        notes = self.load()
        note = {
            "id": max((n["id"] for n in notes), default=0) + 1,
            "text": text,
            "tags": sorted({t.lower() for t in tags}),
        }
        notes.append(note)
        self.save(notes)
        return note

    def all(self):
        return self.load()

    def with_tag(self, tag):
        tag = tag.lower()
        return [n for n in self.load() if tag in n.get("tags", [])]

    def tag_counts(self):
        counts = {}
        for note in self.load():
            for tag in note.get("tags", []):
                counts[tag] = counts.get(tag, 0) + 1
        return counts
