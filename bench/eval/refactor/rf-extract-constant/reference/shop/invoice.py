from .constants import VAT_RATE


def tax_line(net):
    return f"VAT 19%: {net * VAT_RATE:.2f}"
