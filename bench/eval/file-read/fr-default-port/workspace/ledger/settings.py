import os

DEFAULT_HOST = "0.0.0.0"
ADMIN_PORT = 9090
# Reads the listening port from the environment; TLS by default.
PORT = int(os.environ.get("LEDGER_PORT", "8443"))
WORKERS = int(os.environ.get("LEDGER_WORKERS", "4"))
