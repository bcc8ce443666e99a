import json
import unittest

from apiclient.client import Client
from apiclient.errors import ApiError


class FakeTransport:
    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []

    def __call__(self, method, path, params):
        self.calls.append((method, path, params))
        return self.answers.pop(0)


class ClientTest(unittest.TestCase):
    def test_forecast(self):
        transport = FakeTransport((200, json.dumps({"city": "Oslo", "high": 14})))
        self.assertEqual(Client(transport).forecast("Oslo")["high"], 14)
        self.assertEqual(transport.calls, [("GET", "/v1/forecast", {"city": "Oslo"})])

    def test_error_status(self):
        transport = FakeTransport((404, "no such city"))
        with self.assertRaises(ApiError) as caught:
            Client(transport).forecast("Atlantis")
        self.assertEqual(caught.exception.status, 404)
        self.assertEqual(caught.exception.body, "no such city")
