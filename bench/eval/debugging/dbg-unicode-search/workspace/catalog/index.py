"""The product catalogue and its search."""
from .text import display_title, search_key


class Catalog:
    def __init__(self):
        self._items = []

    def add(self, sku, title):
        self._items.append((sku, display_title(title), search_key(title)))
        return self

    def title(self, sku):
        for item_sku, title, _ in self._items:
            if item_sku == sku:
                return title
        raise KeyError(sku)

    def search(self, query):
        """The SKUs whose title contains `query`, in the order they were added."""
        wanted = search_key(query)
        return [sku for sku, _, key in self._items if wanted in key]
