def tax_line(net):
    return f"VAT 19%: {net * 0.19:.2f}"
