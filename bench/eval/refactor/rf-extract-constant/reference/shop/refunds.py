from .constants import VAT_RATE


def refund_tax(net_refund):
    return round(net_refund * VAT_RATE, 2)
