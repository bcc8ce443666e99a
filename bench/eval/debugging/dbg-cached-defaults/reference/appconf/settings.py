"""The settings the application runs with."""
import copy

from .defaults import defaults
from .layers import apply


def load(overrides=None):
    """The built-in defaults with `overrides` ({'log.level': 'debug', ...}) laid on top."""
    return apply(copy.deepcopy(defaults()), overrides or {})
