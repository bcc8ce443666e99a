"""Everything about the ledger in one module: reading entries and summarising them."""

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation


@dataclass(frozen=True)
class Entry:
    date: str
    account: str
    amount: Decimal
    memo: str = ""


def parse_entry(line):
    """Parse one `DATE;ACCOUNT;AMOUNT[;MEMO]` line into an Entry."""
    parts = [p.strip() for p in line.split(";")]
    if len(parts) not in (3, 4):
        raise ValueError(f"bad entry: {line!r}")
    date, account, amount = parts[:3]
    memo = parts[3] if len(parts) == 4 else ""
    try:
        value = Decimal(amount)
    except InvalidOperation:
        raise ValueError(f"bad amount: {amount!r}") from None
    return Entry(date, account, value, memo)


def parse_lines(lines):
    """Entries of the non-blank lines that are not `#` comments."""
    entries = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        entries.append(parse_entry(line))
    return entries


def totals_by_account(entries):
    totals = {}
    for entry in entries:
        totals[entry.account] = totals.get(entry.account, Decimal("0")) + entry.amount
    return dict(sorted(totals.items()))


def balance(entries):
    return sum((entry.amount for entry in entries), Decimal("0"))


def render(entries):
    lines = [f"{account:<12}{total:>10}" for account, total in totals_by_account(entries).items()]
    lines.append(f"{'TOTAL':<12}{balance(entries):>10}")
    return "\n".join(lines)


def summarize_text(text):
    return render(parse_lines(text.splitlines()))
