"""The settings the application runs with."""
from .defaults import defaults
from .layers import apply


def load(overrides=None):
    """The built-in defaults with `overrides` ({'log.level': 'debug', ...}) laid on top."""
    return apply(defaults(), overrides or {})
