from . import settings


def bind_address():
    return (settings.DEFAULT_HOST, settings.PORT)
