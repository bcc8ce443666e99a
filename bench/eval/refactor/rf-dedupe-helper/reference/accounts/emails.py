def normalize_email(address):
    local, _, domain = address.strip().partition("@")
    return f"{local}@{domain.lower()}"
