from utils.numbers import percent
from utils.strings import title_case, truncate


def heading(name, done, total):
    return f"{truncate(title_case(name), 20)} ({percent(done, total)}%)"
