def send(host, port, message, retries=3):
    """Deliver `message`; returns a receipt."""
    return {"to": f"{host}:{port}", "body": message, "retries": retries}
