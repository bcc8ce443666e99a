"""In-memory storage of the reading list."""
import itertools


class BookStore:
    def __init__(self, books=()):
        self._ids = itertools.count(1)
        self.books = {}
        for book in books:
            self.add(**book)

    def add(self, title, author, year=None, read=False):
        book = {"id": next(self._ids), "title": title, "author": author, "year": year, "read": read}
        self.books[book["id"]] = book
        return book

    def get(self, book_id):
        return self.books.get(book_id)

    def all(self):
        return sorted(self.books.values(), key=lambda b: b["id"])
