"""This test process's processes as /proc lists them: who started whom, and everything below us
(exec_code's workers are forked by the sandbox's zygote, a child of this process)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists processes through /proc")


def parents() -> dict[int, int]:
    """Every live process's id -> its parent's id."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def children_of(pid: int) -> set[int]:
    return {child for child, parent in parents().items() if parent == pid}


def descendants() -> set[int]:
    """The processes this one started and has not reaped, and theirs."""
    tree, found, new = parents(), set(), {os.getpid()}
    while new:
        new = {p for p, parent in tree.items() if parent in new} - found
        found |= new
    return found
