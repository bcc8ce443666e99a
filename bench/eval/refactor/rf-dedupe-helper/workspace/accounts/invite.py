def _normalize_email(address):
    local, _, domain = address.strip().partition("@")
    return f"{local}@{domain.lower()}"


def invite(invites, address, by):
    invites[_normalize_email(address)] = by
    return invites
