"""`ebench tasks validate`: is a task file sound on this ebench? Its world is the one this ebench
builds, its reference solution reproduces the expected diff within the budget, its public solver
(for template tasks) reaches it again, an empty trial fails, and the query states no hidden id."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..engine.domain_registry import get_domain
from .certify import run_public
from .diff import Diff
from .grading import Grade, grade
from .public import NotCertifiable, PublicSolverFailed
from .reference import DEFAULT_LIMITS, ReferenceFailed, leaks, run_steps
from .spec import Task
from .template_catalog import template_named
from .worlds import WorldMismatch, task_world


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str]
    reference: Grade | None = None
    empty: Grade | None = None
    certified: bool = False  # the task's public solver was re-run (template tasks)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_task(task: Task) -> TaskCheck:
    """The task's world is the one this ebench builds; the reference solution passes on a fresh
    copy within the task's budget; the public solver (for template tasks) reaches the expected
    diff again; an empty trial fails; the query leaks no id of a changed row."""
    schema = get_domain(task.domain).schema
    problems: list[str] = []
    reference = empty = None
    try:
        world = task_world(task)
    except WorldMismatch as exc:
        return TaskCheck(task.id, [f"world: {exc}"])
    try:
        run = run_steps(task.domain, task.actor, task.reference_solution, world=world)
    except ReferenceFailed as exc:
        problems.append(f"reference solution: {exc}")
    else:
        reference = grade(task.expected_diff, run.diff, schema)
        if not reference.passed:
            problems.append(f"reference solution does not reproduce the expected diff: {reference.summary()}")
    limit = max(task.budget.get("max_tool_calls", 0), DEFAULT_LIMITS["max_tool_calls"])
    if len(task.reference_solution) > limit:
        problems.append(f"the reference solution needs {len(task.reference_solution)} calls, over the task's limit of {limit}")
    certified, public_problem = _rerun_public(task, world)
    if public_problem:
        problems.append(public_problem)
    empty = grade(task.expected_diff, Diff(), schema)
    if empty.passed:
        problems.append("an empty trial passes")
    problems.extend(leaks(task))
    return TaskCheck(task.id, problems, reference, empty, certified)


def _rerun_public(task: Task, world: Path) -> tuple[bool, str | None]:
    """(whether the task has a public solver, the problem if re-running it fails)."""
    name = task.generator.get("template")
    stated = task.generator.get("stated")
    if not name or not isinstance(stated, dict):
        return False, None
    template = template_named(task.domain, str(name))
    if template is None:
        return False, f"public solution: no template {name!r} in this ebench"
    try:
        run = run_public(template, task.domain, world, task.actor, stated)
    except (PublicSolverFailed, NotCertifiable) as exc:
        return True, f"public solution: {exc}"
    result = grade(task.expected_diff, run.diff, get_domain(task.domain).schema)
    if not result.passed:
        return True, f"public solution does not reach the expected diff: {result.summary()}"
    return True, None
