"""Summaries of ledger entries."""

from decimal import Decimal

from ledger.records import parse_lines


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
