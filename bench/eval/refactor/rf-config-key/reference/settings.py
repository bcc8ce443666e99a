import json


def load(path):
    with open(path) as f:
        data = json.load(f)
    return {"database_url": data["database_url"], "debug": data.get("debug", False)}
