def send(message, *, host, port, retries=3):
    """Deliver `message`; returns a receipt."""
    return {"to": f"{host}:{port}", "body": message, "retries": retries}
