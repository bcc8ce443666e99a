import json


def load(path):
    with open(path) as f:
        data = json.load(f)
    return {"db_url": data["db_url"], "debug": data.get("debug", False)}
