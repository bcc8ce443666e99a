import ast
import importlib.util
import io
import pathlib
import unittest
from decimal import Decimal

import app
from ledger import records, summary

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tree(rel):
    return ast.parse((ROOT / rel).read_text(encoding="utf-8"))


def _defined(tree):
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def _imported(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


class HiddenSplitLedgerTest(unittest.TestCase):
    def test_records_reads_entries(self):
        entry = records.parse_entry(" 2024-03-01 ; rent ; -700.00 ; March ")
        self.assertEqual(entry, records.Entry("2024-03-01", "rent", Decimal("-700.00"), "March"))
        self.assertEqual(records.parse_entry("2024-03-02;cash;5").memo, "")
        with self.assertRaises(ValueError):
            records.parse_entry("2024-03-01;rent")
        with self.assertRaises(ValueError):
            records.parse_entry("2024-03-01;rent;lots")
        got = records.parse_lines(["# header", "", "2024-01-01;a;1", "  2024-01-02;b;2.5  "])
        self.assertEqual([e.account for e in got], ["a", "b"])

    def test_summary_summarises(self):
        entries = records.parse_lines(["d;food;3.25", "d;cash;10", "d;food;-1"])
        self.assertEqual(summary.totals_by_account(entries), {"cash": Decimal("10"), "food": Decimal("2.25")})
        self.assertEqual(list(summary.totals_by_account(entries)), ["cash", "food"])
        self.assertEqual(summary.balance(entries), Decimal("12.25"))
        self.assertEqual(summary.balance([]), Decimal("0"))
        want = "cash                10\nfood              2.25\nTOTAL            12.25"
        self.assertEqual(summary.render(entries), want)
        self.assertEqual(summary.summarize_text("d;food;3.25\n#x\nd;cash;10\nd;food;-1"), want)

    def test_dependency_direction(self):
        rec, summ = _tree("ledger/records.py"), _tree("ledger/summary.py")
        self.assertTrue({"Entry", "parse_entry", "parse_lines"} <= _defined(rec))
        self.assertFalse({"totals_by_account", "balance", "render", "summarize_text"} & _defined(rec))
        self.assertTrue({"totals_by_account", "balance", "render", "summarize_text"} <= _defined(summ))
        self.assertFalse({"Entry", "parse_entry", "parse_lines"} & _defined(summ))
        self.assertFalse(any("summary" in name for name in _imported(rec)), "records must not import summary")
        self.assertTrue(any("records" in name for name in _imported(summ)), "summary must use records")
        self.assertIsNone(importlib.util.find_spec("ledger.core"))

    def test_app_uses_new_modules(self):
        out = io.StringIO()
        self.assertEqual(app.main(io.StringIO("2024-01-01;cash;4\n\n2024-01-02;bank;6\n"), out), 0)
        self.assertEqual(out.getvalue(), "bank                 6\ncash                 4\nTOTAL               10\n")
        self.assertFalse(any("core" in name for name in _imported(_tree("app.py"))))


if __name__ == "__main__":
    unittest.main()
