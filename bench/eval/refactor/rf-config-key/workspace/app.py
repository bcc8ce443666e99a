from settings import load


def describe(path):
    conf = load(path)
    return "db=" + conf["db_url"]
