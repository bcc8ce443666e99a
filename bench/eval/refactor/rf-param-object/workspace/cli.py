"""`cli.py [--in-stock] [--under PRICE] [--top N] WORDS...`"""

from catalog import search as catalog_search


def run(items, argv):
    words, in_stock, under, top = [], False, None, None
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--in-stock":
            in_stock = True
        elif arg == "--under":
            under = float(args.pop(0))
        elif arg == "--top":
            top = int(args.pop(0))
        else:
            words.append(arg)
    found = catalog_search.search(items, " ".join(words), None, under, in_stock, top)
    return [f"{item['name']}: {item['price']:.2f}" for item in found]
