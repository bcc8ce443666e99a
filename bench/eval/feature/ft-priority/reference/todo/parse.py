"""Parses todo.txt lines: a leading `x ` marks a task done, then `(A) ` a priority;
`+project` and `@context` words."""
import re
from dataclasses import dataclass, field
from typing import Optional

PRIORITY = re.compile(r"\(([A-Z])\) ")


@dataclass
class Task:
    text: str
    done: bool = False
    projects: list = field(default_factory=list)
    contexts: list = field(default_factory=list)
    priority: Optional[str] = None


def parse_line(line):
    line = line.strip()
    done = line.startswith("x ")
    if done:
        line = line[2:].lstrip()
    priority = None
    match = PRIORITY.match(line)
    if match:
        priority = match.group(1)
        line = line[match.end():].lstrip()
    words = line.split()
    return Task(
        text=line,
        done=done,
        projects=[w[1:] for w in words if w.startswith("+") and len(w) > 1],
        contexts=[w[1:] for w in words if w.startswith("@") and len(w) > 1],
        priority=priority,
    )


def parse(text):
    return [parse_line(line) for line in text.splitlines() if line.strip()]
