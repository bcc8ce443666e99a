from text.format import title_case, truncate
from utils.numbers import percent


def heading(name, done, total):
    return f"{truncate(title_case(name), 20)} ({percent(done, total)}%)"
