from settings import load


def describe(path):
    conf = load(path)
    return "db=" + conf["database_url"]
