import logging

logger = logging.getLogger(__name__)


def sync(items):
    logger.info("syncing %d items", len(items))
    done = [i for i in items if i]
    logger.info("synced %d", len(done))
    return len(done)
