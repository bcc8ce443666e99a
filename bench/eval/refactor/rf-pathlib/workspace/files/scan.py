import os


def python_files(root):
    found = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            if os.path.splitext(n)[1] == ".py":
                found.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(found)
