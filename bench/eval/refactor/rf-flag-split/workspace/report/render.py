"""Render (name, value) rows as a plain-text or an HTML report."""

from html import escape


def render(rows, html=False, title="Report"):
    rows = list(rows)
    if html:
        out = [f"<h1>{escape(title)}</h1>", "<table>"]
        for name, value in rows:
            out.append(f"<tr><td>{escape(str(name))}</td><td>{escape(str(value))}</td></tr>")
        out.append("</table>")
        return "\n".join(out)
    width = max([len(str(name)) for name, _ in rows], default=0)
    out = [title, "=" * len(title)]
    for name, value in rows:
        out.append(f"{str(name).ljust(width)}  {value}")
    return "\n".join(out)
