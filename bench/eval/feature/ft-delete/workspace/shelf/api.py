"""The HTTP API of shelf: `handle` maps a request to (status, headers, body)."""
import json

from .store import BookStore

JSON = {"Content-Type": "application/json"}


def json_response(status, data, headers=None):
    return status, dict(JSON, **(headers or {})), json.dumps(data)


class Api:
    def __init__(self, store=None):
        self.store = store or BookStore()

    def handle(self, method, path, query=None, body=None):
        query = query or {}
        parts = [p for p in path.split("/") if p]
        if parts == ["books"] and method == "GET":
            return self.list_books(query)
        if parts == ["books"] and method == "POST":
            return self.create_book(json.loads(body or "{}"))
        if len(parts) == 2 and parts[0] == "books" and parts[1].isdigit():
            book_id = int(parts[1])
            if method == "GET":
                book = self.store.get(book_id)
                if book is None:
                    return json_response(404, {"error": "no such book"})
                return json_response(200, book)
        return json_response(404, {"error": "not found"})

    def list_books(self, query):
        return json_response(200, self.store.all())

    def create_book(self, data):
        book = self.store.add(data.get("title", ""), data.get("author", ""), data.get("year"))
        return json_response(201, book)
