def sync(src, dst, dry_run=False):
    pass
