"""Search the catalogue: items are dicts with "name", "price" and "stock"."""


def search(items, query):
    needle = query.text.strip().lower()
    found = []
    for item in items:
        if needle and needle not in item["name"].lower():
            continue
        if query.min_price is not None and item["price"] < query.min_price:
            continue
        if query.max_price is not None and item["price"] > query.max_price:
            continue
        if query.in_stock_only and item["stock"] <= 0:
            continue
        found.append(item)
    found.sort(key=lambda item: (item["price"], item["name"]))
    return found if query.limit is None else found[: query.limit]
