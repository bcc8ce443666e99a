"""Server-rendered pages."""
import html
from pathlib import Path
from string import Template

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def render_list(books):
    rows = "\n".join(
        f'<li data-id="{b["id"]}">{html.escape(b["title"])} by {html.escape(b["author"])}</li>' for b in books
    )
    page = Template((TEMPLATES / "books.html").read_text())
    read = sum(1 for b in books if b["read"])
    return page.substitute(rows=rows, count=len(books), read=read)
