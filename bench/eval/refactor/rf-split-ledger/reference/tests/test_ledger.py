import unittest
from decimal import Decimal

from ledger.records import parse_lines
from ledger.summary import balance, summarize_text


class LedgerTest(unittest.TestCase):
    def test_balance(self):
        entries = parse_lines(["2024-01-01;cash;10.50", "# note", "", "2024-01-02;cash;-2"])
        self.assertEqual(balance(entries), Decimal("8.50"))

    def test_summary(self):
        text = summarize_text("2024-01-01;food;3\n2024-01-02;cash;1")
        self.assertEqual(text.splitlines()[0].split(), ["cash", "1"])
