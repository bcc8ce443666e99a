"""The weather service client: `Client.get` sends one request through the transport."""
import json

from .errors import ApiError, RateLimited


class Client:
    def __init__(self, transport, base="/v1", limiter=None):
        self.transport = transport
        self.base = base
        self.limiter = limiter

    def get(self, path, params=None):
        if self.limiter is not None:
            wait = self.limiter.acquire()
            if wait > 0:
                raise RateLimited(wait)
        status, body = self.transport("GET", self.base + path, dict(params or {}))
        if status == 429:
            raise RateLimited(_retry_after(body), body)
        if status >= 400:
            raise ApiError(status, body)
        return json.loads(body)

    def forecast(self, city):
        return self.get("/forecast", {"city": city})


def _retry_after(body):
    try:
        value = json.loads(body).get("retry_after", 1.0)
        return float(value)
    except (ValueError, AttributeError, TypeError):
        return 1.0
