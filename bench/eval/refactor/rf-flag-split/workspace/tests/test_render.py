import unittest

from report.render import render


class RenderTest(unittest.TestCase):
    def test_text(self):
        self.assertEqual(render([("a", 1)], title="T"), "T\n=\na  1")

    def test_html(self):
        self.assertIn("<td>a</td>", render([("a", 1)], html=True))
