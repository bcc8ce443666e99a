from . import smtp


def daily(items):
    body = "\n".join(items)
    return smtp.send(body, host="mail.internal", port=25)
