import unittest

from report.render import render_html, render_text


class RenderTest(unittest.TestCase):
    def test_text(self):
        self.assertEqual(render_text([("a", 1)], title="T"), "T\n=\na  1")

    def test_html(self):
        self.assertIn("<td>a</td>", render_html([("a", 1)]))
