"""The search endpoint: query-string parameters in, a JSON-ready dict out."""

from catalog.query import Query
from catalog.search import search


def handle(items, params):
    def number(key):
        return float(params[key]) if params.get(key) else None

    try:
        query = Query(
            text=params.get("q", ""),
            min_price=number("min"),
            max_price=number("max"),
            in_stock_only=params.get("stock") == "1",
            limit=int(params["limit"]) if params.get("limit") else None,
        )
    except ValueError as err:
        return {"status": 400, "error": str(err)}
    return {"status": 200, "names": [item["name"] for item in search(items, query)]}
