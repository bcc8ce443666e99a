"""Ledger entries and how to read them."""

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
