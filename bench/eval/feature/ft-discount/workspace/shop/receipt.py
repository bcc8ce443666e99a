"""The printed receipt of a cart."""
from .pricing import line_total, subtotal, total


def money(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def render(items):
    lines = [f"{item['name']} x{item['qty']}  {money(line_total(item))}" for item in items]
    lines.append(f"Subtotal  {money(subtotal(items))}")
    lines.append(f"Total  {money(total(items))}")
    return "\n".join(lines) + "\n"
