"""The printed receipt of a cart."""
from .pricing import discount, line_total, normalize_code, subtotal, total


def money(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def render(items, code=None):
    lines = [f"{item['name']} x{item['qty']}  {money(line_total(item))}" for item in items]
    lines.append(f"Subtotal  {money(subtotal(items))}")
    if code is not None:
        lines.append(f"Discount ({normalize_code(code)})  {money(-discount(items, code))}")
    lines.append(f"Total  {money(total(items, code))}")
    return "\n".join(lines) + "\n"
