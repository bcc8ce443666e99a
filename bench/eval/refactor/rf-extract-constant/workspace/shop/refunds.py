def refund_tax(net_refund):
    return round(net_refund * 0.19, 2)
