def gross(net):
    return round(net * (1 + 0.19), 2)
