import ast
import inspect
import io
import pathlib
import unittest

import cli
import mailer
import web
from report import render as rendering

ROOT = pathlib.Path(__file__).resolve().parent.parent
ROWS = [("apples", 3), ("kiwi", "<5>")]
TEXT = "Totals\n======\napples  3\nkiwi    <5>"
HTML = "<h1>Totals</h1>\n<table>\n<tr><td>apples</td><td>3</td></tr>\n<tr><td>kiwi</td><td>&lt;5&gt;</td></tr>\n</table>"


def _called(rel):
    names = []
    for node in ast.walk(ast.parse((ROOT / rel).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            names.append(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
            if any(k.arg == "html" for k in node.keywords):
                names.append("html=")
    return names


class HiddenFlagSplitTest(unittest.TestCase):
    def test_render_text(self):
        self.assertEqual(rendering.render_text(ROWS, title="Totals"), TEXT)
        self.assertEqual(rendering.render_text(iter(ROWS), "Totals"), TEXT)
        self.assertEqual(rendering.render_text([]), "Report\n======")

    def test_render_html(self):
        self.assertEqual(rendering.render_html(ROWS, title="Totals"), HTML)
        self.assertEqual(rendering.render_html(iter(ROWS), "Totals"), HTML)
        self.assertEqual(rendering.render_html([], title="A&B"), "<h1>A&amp;B</h1>\n<table>\n</table>")

    def test_flag_is_gone(self):
        self.assertFalse(hasattr(rendering, "render"))
        for fn in (rendering.render_text, rendering.render_html):
            self.assertEqual(list(inspect.signature(fn).parameters), ["rows", "title"])
        for rel in ("cli.py", "web.py", "mailer.py"):
            called = _called(rel)
            self.assertNotIn("render", called, rel)
            self.assertNotIn("html=", called, rel)
        self.assertIn("render_text", _called("cli.py"))
        self.assertIn("render_html", _called("web.py"))
        self.assertTrue({"render_text", "render_html"} <= set(_called("mailer.py")))

    def test_callers_behave_as_before(self):
        out = io.StringIO()
        self.assertEqual(cli.main(ROWS, out), 0)
        self.assertEqual(out.getvalue(), TEXT + "\n")
        self.assertEqual(web.page(ROWS), "<html><body>\n" + HTML + "\n</body></html>")
        weekly = mailer.compose(iter(ROWS), rich=True)
        self.assertEqual(weekly["text"], TEXT.replace("Totals\n======", "Weekly\n======"))
        self.assertEqual(weekly["html"], HTML.replace("Totals", "Weekly"))
        self.assertEqual(mailer.compose(ROWS), {"text": weekly["text"], "html": None})


if __name__ == "__main__":
    unittest.main()
