def sync(items):
    print(f"syncing {len(items)} items")
    done = [i for i in items if i]
    print(f"synced {len(done)}")
    return len(done)
