MAX_RETRIES = 3


def connect(factory):
    for _ in range(MAX_RETRIES):
        try:
            return factory()
        except OSError:
            pass
    raise OSError("database unreachable")
