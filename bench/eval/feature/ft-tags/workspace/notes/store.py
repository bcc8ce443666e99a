"""Notes kept in a JSON file: a list of {"id": N, "text": TEXT}."""
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

    def add(self, text):
        notes = self.load()
        note = {"id": max((n["id"] for n in notes), default=0) + 1, "text": text}
        notes.append(note)
        self.save(notes)
        return note

    def all(self):
        return self.load()
