import json
import unittest

from apiclient.client import Client
from apiclient.errors import ApiError, RateLimited
from apiclient.limiter import RateLimiter


class Clock:
    def __init__(self, now=0.0):
        self.now = now

    def __call__(self):
        return self.now


class Transport:
    def __init__(self, answer=(200, "{}")):
        self.answer = answer
        self.calls = 0

    def __call__(self, method, path, params):
        self.calls += 1
        return self.answer


class HiddenRateLimitTest(unittest.TestCase):
    def test_sliding_window(self):
        clock = Clock()
        limiter = RateLimiter(2, 10, clock=clock)
        self.assertEqual(limiter.acquire(), 0.0)
        clock.now = 1.0
        self.assertEqual(limiter.acquire(), 0.0)
        clock.now = 2.0
        self.assertAlmostEqual(limiter.acquire(), 8.0)
        # A refused request is not recorded.
        self.assertAlmostEqual(limiter.acquire(), 8.0)
        clock.now = 10.0
        self.assertEqual(limiter.acquire(), 0.0)
        self.assertAlmostEqual(limiter.acquire(), 1.0)
        clock.now = 11.0
        self.assertEqual(limiter.acquire(), 0.0)

    def test_client_refuses_before_sending(self):
        clock = Clock(100.0)
        transport = Transport((200, json.dumps({"high": 3})))
        client = Client(transport, limiter=RateLimiter(1, 60, clock=clock))
        self.assertEqual(client.forecast("Oslo"), {"high": 3})
        clock.now = 130.0
        with self.assertRaises(RateLimited) as caught:
            client.forecast("Oslo")
        self.assertEqual(transport.calls, 1)
        self.assertIsInstance(caught.exception, ApiError)
        self.assertEqual(caught.exception.status, 429)
        self.assertAlmostEqual(caught.exception.retry_after, 30.0)
        clock.now = 160.0
        self.assertEqual(client.forecast("Oslo"), {"high": 3})
        self.assertEqual(transport.calls, 2)

    def test_server_429(self):
        client = Client(Transport((429, json.dumps({"retry_after": 2.5}))))
        with self.assertRaises(RateLimited) as caught:
            client.get("/forecast")
        self.assertAlmostEqual(caught.exception.retry_after, 2.5)
        self.assertEqual(caught.exception.status, 429)
        client = Client(Transport((429, "slow down")))
        with self.assertRaises(RateLimited) as caught:
            client.get("/forecast")
        self.assertAlmostEqual(caught.exception.retry_after, 1.0)
        self.assertEqual(caught.exception.body, "slow down")

    def test_other_errors_and_no_limiter(self):
        transport = Transport((200, "[]"))
        client = Client(transport)
        for _ in range(50):
            client.get("/cities")
        self.assertEqual(transport.calls, 50)
        with self.assertRaises(ApiError) as caught:
            Client(Transport((503, "down"))).get("/cities")
        self.assertNotIsInstance(caught.exception, RateLimited)
        self.assertEqual(RateLimited(4.0).retry_after, 4.0)
        self.assertEqual(RateLimited(4.0).status, 429)
