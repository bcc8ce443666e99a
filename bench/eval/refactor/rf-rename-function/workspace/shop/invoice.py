from . import pricing


def invoice_amount(lines, loyal=False):
    return pricing.calc_total(lines, discount=0.05 if loyal else 0.0)
