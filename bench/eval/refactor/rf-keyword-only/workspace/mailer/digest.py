from . import smtp


def daily(items):
    body = "\n".join(items)
    return smtp.send("mail.internal", 25, body)
