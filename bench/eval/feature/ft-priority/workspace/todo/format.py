"""Writes tasks back as todo.txt lines, and summarises a list."""


def format_task(task):
    return ("x " if task.done else "") + task.text


def format_list(tasks):
    return "".join(format_task(t) + "\n" for t in tasks)


def summary(tasks):
    done = sum(1 for t in tasks if t.done)
    return f"{done}/{len(tasks)} done"
