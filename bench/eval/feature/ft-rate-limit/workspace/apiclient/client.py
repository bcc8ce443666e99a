"""The weather service client: `Client.get` sends one request through the transport."""
import json

from .errors import ApiError


class Client:
    def __init__(self, transport, base="/v1"):
        self.transport = transport
        self.base = base

    def get(self, path, params=None):
        status, body = self.transport("GET", self.base + path, dict(params or {}))
        if status >= 400:
            raise ApiError(status, body)
        return json.loads(body)

    def forecast(self, city):
        return self.get("/forecast", {"city": city})
