"""Running a task's reference solution on a fresh copy of its world, and checking a task.

The same runner serves the generator (record the diff a solution makes), `ebench tasks
validate` (the solution reproduces the expected diff; an empty trial fails), and the oracle
solver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..domains import get_domain
from ..domains.engine.tools import ToolError
from ..domains.engine.world import ensure_world, scratch_copy
from .diff import ChangeTracker, Diff
from .grading import Grade, grade
from .spec import Step, Task, resolve_args


class ReferenceFailed(RuntimeError):
    """A reference step was refused by its tool: the task (or the world) is inconsistent."""


@dataclass
class ReferenceRun:
    diff: Diff
    results: list[Any] = field(default_factory=list)


def run_steps(domain_name: str, actor: int, steps: list[Step], conn=None) -> ReferenceRun:
    """Apply `steps` in order on a fresh copy of the domain's world (or on `conn`)."""
    domain = get_domain(domain_name)
    own = conn is None
    if own:
        conn = scratch_copy(ensure_world(domain))
    try:
        tracker = ChangeTracker(conn, domain.schema)
        try:
            env = domain.env(conn, actor)
        except ToolError as exc:
            raise ReferenceFailed(f"the task's actor cannot act: {exc.message}") from None
        results: list[Any] = []
        for i, step in enumerate(steps):
            result = domain.tools.call(env, step.tool, resolve_args(step.args, results))
            if not result.ok:
                raise ReferenceFailed(f"step {i} ({step.tool}) was refused: {result.error_code}: {result.error_message}")
            results.append(result.value)
        return ReferenceRun(tracker.diff(), results)
    finally:
        if own:
            conn.close()


# Numbers a query may state without leaking anything: small counts of things the user chose, years.
_NUMBER = re.compile(r"(?<![\w.-])\d+(?![\w.-]*\d)")


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str]
    reference: Grade | None = None
    empty: Grade | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def check_task(task: Task) -> TaskCheck:
    """The reference solution passes on a fresh copy, an empty trial fails, and the query does not
    leak ids of the rows the task changes."""
    schema = get_domain(task.domain).schema
    problems: list[str] = []
    reference = empty = None
    try:
        run = run_steps(task.domain, task.actor, task.reference_solution)
    except ReferenceFailed as exc:
        problems.append(f"reference solution: {exc}")
    else:
        reference = grade(task.expected_diff, run.diff, schema)
        if not reference.passed:
            problems.append(f"reference solution does not reproduce the expected diff: {reference.summary()}")
    empty = grade(task.expected_diff, Diff(), schema)
    if empty.passed:
        problems.append("an empty trial passes")
    problems.extend(leaks(task))
    return TaskCheck(task.id, problems, reference, empty)


def leaks(task: Task) -> list[str]:
    """Hidden values a query must not state: ids of changed rows (>= 3 digits, to spare "top 5")."""
    stated = {int(m) for m in _NUMBER.findall(task.query) if len(m) >= 3 and not 1900 <= int(m) <= 2100}
    hidden = {v for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and not isinstance(v, bool)}
    return [f"the query states {n}, an id of a changed row" for n in sorted(stated & hidden)]
