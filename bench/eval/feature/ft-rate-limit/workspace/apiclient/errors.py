"""The errors the client raises."""


class ApiError(Exception):
    """The service answered with an error status."""

    def __init__(self, status, body=""):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
