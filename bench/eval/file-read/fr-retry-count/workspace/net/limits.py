# Limits shared by the network clients.
CONNECT_TIMEOUT_S = 5
HTTP_MAX_RETRIES = 7
HTTP_BACKOFF_S = 0.5
