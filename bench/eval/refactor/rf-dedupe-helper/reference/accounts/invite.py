from .emails import normalize_email


def invite(invites, address, by):
    invites[normalize_email(address)] = by
    return invites
