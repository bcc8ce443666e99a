import logging

logger = logging.getLogger(__name__)


def cleanup(paths):
    removed = 0
    for p in paths:
        logger.info("removing %s", p)
        removed += 1
    return removed
