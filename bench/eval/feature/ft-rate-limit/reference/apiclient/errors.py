"""The errors the client raises."""


class ApiError(Exception):
    """The service answered with an error status."""

    def __init__(self, status, body=""):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body


class RateLimited(ApiError):
    """Too many requests: try again in `retry_after` seconds."""

    def __init__(self, retry_after, body=""):
        super().__init__(429, body)
        self.retry_after = float(retry_after)
