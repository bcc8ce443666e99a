def delays(base, cap, attempts):
    """The wait before each retry: base * 2**n, at most `cap`."""
    return [base * 2 * n for n in range(attempts)]
