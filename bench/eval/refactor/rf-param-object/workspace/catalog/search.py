"""Search the catalogue: items are dicts with "name", "price" and "stock"."""


def search(items, text="", min_price=None, max_price=None, in_stock_only=False, limit=None):
    if min_price is not None and max_price is not None and min_price > max_price:
        raise ValueError("min_price is above max_price")
    if limit is not None and limit < 0:
        raise ValueError("limit is negative")
    needle = text.strip().lower()
    found = []
    for item in items:
        if needle and needle not in item["name"].lower():
            continue
        if min_price is not None and item["price"] < min_price:
            continue
        if max_price is not None and item["price"] > max_price:
            continue
        if in_stock_only and item["stock"] <= 0:
            continue
        found.append(item)
    found.sort(key=lambda item: (item["price"], item["name"]))
    return found if limit is None else found[:limit]
