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
        try:
            limit = int(query.get("limit", 20))
            offset = int(query.get("offset", 0))
        except ValueError:
            return json_response(400, {"error": "limit and offset are whole numbers"})
        if not 1 <= limit <= 100 or offset < 0:
            return json_response(400, {"error": "limit is 1 to 100, offset 0 or more"})
        books = self.store.all()
        return json_response(200, books[offset:offset + limit], {"X-Total-Count": str(len(books))})

    def create_book(self, data):
        book = self.store.add(data.get("title", ""), data.get("author", ""), data.get("year"))
        return json_response(201, book)
