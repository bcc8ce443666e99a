"""Parses todo.txt lines: a leading `x ` marks a task done; `+project` and `@context` words."""
from dataclasses import dataclass, field


@dataclass
class Task:
    text: str
    done: bool = False
    projects: list = field(default_factory=list)
    contexts: list = field(default_factory=list)


def parse_line(line):
    line = line.strip()
    done = line.startswith("x ")
    if done:
        line = line[2:].lstrip()
    words = line.split()
    return Task(
        text=line,
        done=done,
        projects=[w[1:] for w in words if w.startswith("+") and len(w) > 1],
        contexts=[w[1:] for w in words if w.startswith("@") and len(w) > 1],
    )


def parse(text):
    return [parse_line(line) for line in text.splitlines() if line.strip()]
