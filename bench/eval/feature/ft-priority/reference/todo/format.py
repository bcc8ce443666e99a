"""Writes tasks back as todo.txt lines, sorts and summarises a list."""


def format_task(task):
    prefix = "x " if task.done else ""
    if task.priority:
        prefix += f"({task.priority}) "
    return prefix + task.text


def format_list(tasks):
    return "".join(format_task(t) + "\n" for t in tasks)


def sort_by_priority(tasks):
    return sorted(tasks, key=lambda t: (t.done, t.priority is None, t.priority or ""))


def summary(tasks):
    done = sum(1 for t in tasks if t.done)
    return f"{done}/{len(tasks)} done"
