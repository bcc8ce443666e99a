def _normalize_email(address):
    local, _, domain = address.strip().partition("@")
    return f"{local}@{domain.lower()}"


def signup(users, address):
    key = _normalize_email(address)
    if key in users:
        raise ValueError("already registered")
    users.add(key)
    return key
