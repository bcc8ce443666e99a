def delays(base, cap, attempts):
    """The wait before each retry: base * 2**n, at most `cap`."""
    return [min(base * 2 ** n, cap) for n in range(attempts)]
