from .smtp import send

HOST = "mail.internal"
PORT = 2525


def alert(text):
    return send(HOST, PORT, "ALERT: " + text, 5)
