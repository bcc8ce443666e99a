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
    return page.substitute(rows=rows, count=len(books))
