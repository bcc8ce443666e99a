from .constants import VAT_RATE


def gross(net):
    return round(net * (1 + VAT_RATE), 2)
