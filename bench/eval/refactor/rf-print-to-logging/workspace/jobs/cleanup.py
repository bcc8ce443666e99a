def cleanup(paths):
    removed = 0
    for p in paths:
        print("removing", p)
        removed += 1
    return removed
