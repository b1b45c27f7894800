"""Running a task's reference solution on a fresh copy of its world.

The same runner serves the generator (record the diff a solution makes), `ebench tasks
validate` (task_check.py: the solution reproduces the expected diff), the shortcuts and the
careful variants, and the oracle solver. `leaks`: the ids a query must not state.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.tools import ToolError
from ..engine.world import ensure_world, scratch_copy
from .diff import ChangeTracker, Diff
from .spec import Step, Task, resolve_args


class ReferenceFailed(RuntimeError):
    """A reference step was refused by its tool: the task (or the world) is inconsistent."""


@dataclass
class ReferenceRun:
    diff: Diff
    results: list[Any] = field(default_factory=list)


def run_steps(
    domain_name: str,
    actor: int,
    steps: list[Step],
    conn: sqlite3.Connection | None = None,
    *,
    world: Path | None = None,
    tolerant: bool = False,
    tracked: bool = False,
) -> ReferenceRun:
    """Apply `steps` in order on a fresh copy of the world (`world`, or the domain's default; or
    on `conn`, which with `tracked` already has the change tracker: a trial's copy). A refused
    step raises ReferenceFailed, unless `tolerant` (a shortcut solver that moves on): then its
    result is None and a later step that needs it is skipped too."""
    domain = get_domain(domain_name)
    own = conn is None
    if conn is None:
        conn = scratch_copy(world or ensure_world(domain))
    try:
        tracker = ChangeTracker(conn, domain.schema, install=own or not tracked)
        try:
            env = domain.env(conn, actor)
        except ToolError as exc:
            raise ReferenceFailed(f"the task's actor cannot act: {exc.message}") from None
        results: list[Any] = []
        for i, step in enumerate(steps):
            try:
                args = resolve_args(step.args, results)
            except (TypeError, KeyError, IndexError, ValueError):
                if not tolerant:
                    raise ReferenceFailed(f"step {i} ({step.tool}) refers to a result it cannot use") from None
                results.append(None)
                continue
            result = domain.tools.call(env, step.tool, args)
            if not result.ok:
                if not tolerant:
                    raise ReferenceFailed(f"step {i} ({step.tool}) was refused: {result.error_code}: {result.error_message}")
                results.append(None)
                continue
            results.append(result.value)
        return ReferenceRun(tracker.diff(), results)
    finally:
        if own:
            conn.close()


# The run defaults a task's budget never goes below (the same as `ebench run`'s).
DEFAULT_LIMITS = {"max_tool_calls": 100, "max_turns": 30}


# Numbers a query may state without leaking anything: small counts of things the user chose, years.
_NUMBER = re.compile(r"(?<![\w.-])\d+(?![\w.-]*\d)")


def leaks(task: Task) -> list[str]:
    """Hidden values a query must not state: ids of changed rows (>= 3 digits, to spare "top 5")."""
    stated = {int(m) for m in _NUMBER.findall(task.query) if len(m) >= 3 and not 1900 <= int(m) <= 2100}
    hidden = {v for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and not isinstance(v, bool)}
    return [f"the query states {n}, an id of a changed row" for n in sorted(stated & hidden)]
