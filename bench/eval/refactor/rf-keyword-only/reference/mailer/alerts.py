from .smtp import send

HOST = "mail.internal"
PORT = 2525


def alert(text):
    return send("ALERT: " + text, host=HOST, port=PORT, retries=5)
