"""The process tree under a pid, read from Linux's ``/proc`` (no psutil in the kit's dependencies).

Used by ``bench_batch.py`` (the memory of a worker and everything it started) and by
``tests/test_commands_grade_resume.py`` (the workers a killed batch leaves behind).
"""

from __future__ import annotations

import os


def process_tree(root: int) -> list[int]:
    """``root`` and every live process below it (children, grandchildren...), ``root`` first.
    Processes that end while ``/proc`` is read are skipped."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack += children.get(pid, [])
    return out
