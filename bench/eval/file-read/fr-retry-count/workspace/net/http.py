import time

from .limits import HTTP_BACKOFF_S, HTTP_MAX_RETRIES


class HttpClient:
    def __init__(self, transport):
        self.transport = transport

    def get(self, url):
        last = None
        for attempt in range(HTTP_MAX_RETRIES + 1):
            try:
                return self.transport(url)
            except ConnectionError as e:
                last = e
                time.sleep(HTTP_BACKOFF_S * attempt)
        raise last
