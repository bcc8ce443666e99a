import inspect
import unittest

from mailer import smtp


class HiddenSignatureTest(unittest.TestCase):
    def test_signature(self):
        params = inspect.signature(smtp.send).parameters
        self.assertEqual(list(params), ["message", "host", "port", "retries"])
        self.assertEqual(params["message"].kind, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for name in ("host", "port", "retries"):
            self.assertEqual(params[name].kind, inspect.Parameter.KEYWORD_ONLY)
        self.assertEqual(params["retries"].default, 3)
        self.assertEqual(smtp.send("x", host="h", port=1)["retries"], 3)
