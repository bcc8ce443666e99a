from .emails import normalize_email


def signup(users, address):
    key = normalize_email(address)
    if key in users:
        raise ValueError("already registered")
    users.add(key)
    return key
