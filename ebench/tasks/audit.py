"""`ebench tasks audit`: both error rates of a suite, measured.

Shortcuts (sloppy work must fail). Each is a solver a careless agent could be: the task's public
solver with one stated condition got wrong (ignored, or a boundary one step off), reading only the
first page of every listing (with the tools' own filters applied: a careful agent filters first),
the reference solution without its last write, the reference as another actor, and doing nothing.
A certified suite is passed by none of them.

Careful variants (correct work must pass, careful.py): the filtered plan, the other reading of
every point the wording leaves open, independent writes reordered, reads repeated, harmless reads
added. A certified suite passes every one that applies.

Wording: every stated value (a clause) maps to a condition that bites or to a value the task
writes (`Template.clauses`), and no request uses a term the product's vocabulary leaves open
without deciding it (the domain's `open_terms`). The generator rejects drafts with the same checks
(certify.py, generation.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.domain_registry import get_domain
from .careful import FAMILIES as CAREFUL_FAMILIES
from .careful import reference_variants
from .certify import clause_problems, first_page_plan, lazy_variants, optional_bite, run_public, template_variants
from .diff import Diff
from .grading import grade
from .public import FIRST_PAGE, Lazy
from .shortcuts import reference_shortcuts
from .spec import Task
from .template_api import Template
from .template_catalog import template_named
from .vocabulary import open_terms

# Shortcut families, in the order the report lists them.
FAMILIES = {
    "filter:ignore": "a stated filter ignored",
    "boundary:ignore": "a stated boundary ignored",
    "boundary:off_by_one": "a boundary one step off",
    "ranking:ignore": "a ranking's cut ignored",
    "ranking:off_by_one": "a top k taken as k + 1",
    "ordering:ignore": "a stated order ignored",
    "scope:ignore": "a stated scope ignored",
    FIRST_PAGE: "first page of every listing only (tasks that claim complete data acquisition)",
    "no_last_write": "the reference without its last write",
    "wrong_actor": "the reference as another actor",
    "no_op": "doing nothing",
}


@dataclass
class TaskAudit:
    task_id: str
    certified: bool  # the task names a template with a public solver (older tasks do not)
    passed: dict[str, list[str]] = field(default_factory=dict)  # family -> the variants that passed
    tried: dict[str, int] = field(default_factory=dict)  # family -> variants run
    template: str = ""
    careful_tried: dict[str, int] = field(default_factory=dict)  # careful family -> variants run
    careful_failed: dict[str, list[str]] = field(default_factory=dict)  # careful family -> the variants that failed
    clauses: list[str] | None = None  # clauses without a biting condition (None: the template declares none)
    open_terms: list[str] = field(default_factory=list)  # terms the vocabulary leaves open, undecided


def audit_task(task: Task, world: Path, template: Template | None = None) -> TaskAudit:
    """Run every shortcut that applies to `task` and say which pass it. The task's template is
    looked up by the name it records, unless given."""
    schema = get_domain(task.domain).schema
    result = TaskAudit(task.id, certified=False, template=str(task.generator.get("template", "")))

    def tally(family: str, label: str, diff: Diff) -> None:
        result.tried[family] = result.tried.get(family, 0) + 1
        if grade(task.expected_diff, diff, schema).passed:
            result.passed.setdefault(family, []).append(label)

    def careful(family: str, label: str, diff: Diff | None) -> None:
        if diff is None:  # not applicable: the product refused that order
            return
        result.careful_tried[family] = result.careful_tried.get(family, 0) + 1
        if not grade(task.expected_diff, diff, schema).passed:
            result.careful_failed.setdefault(family, []).append(label)

    template = template or template_named(task.domain, result.template)
    stated = task.generator.get("stated")
    if template is not None and isinstance(stated, dict):
        result.certified = True
        kinds: dict[str | None, str] = {c.name: c.kind for c in template.conditions}
        bites: list[str] = []
        for lazy in lazy_variants(template):
            run = run_public(template, task.domain, world, task.actor, stated, lazy)
            if not grade(task.expected_diff, run.diff, schema).passed:
                bites.append(lazy.label)
            # A boundary's inclusivity is a shortcut only where the task records that it bites (a
            # candidate on the boundary); elsewhere both inclusivities are right.
            if not optional_bite(template, lazy) or lazy.label in task.generator.get("bites", [lazy.label]):
                tally(f"{kinds[lazy.condition]}:{lazy.mode}", lazy.label, run.diff)
        variants = template_variants(template, task.domain, world, task.actor, stated, task.query)
        for variant in variants:
            careful(variant.family, variant.label, variant.diff)
        # Reading only the first page is a shortcut only where the task needs more: where it
        # claims complete data acquisition (elsewhere the first page holds all there is to read).
        # It pages the filtered plan where the solver has one (its filtered variant ran above).
        if "complete_data_acquisition" in task.capabilities:
            narrowed = any(v.family == "server_filters" for v in variants)
            run = run_public(template, task.domain, world, task.actor, stated, Lazy(FIRST_PAGE), plan=first_page_plan(narrowed))
            tally(FIRST_PAGE, FIRST_PAGE, run.diff)
        if template.clauses is not None:
            result.clauses = clause_problems(template, stated, bites, task.expected_diff)
    for variant in reference_variants(task.domain, world, task.actor, task.reference_solution):
        careful(variant.family, variant.label, variant.diff)
    for family, label, diff in reference_shortcuts(task.domain, world, task.actor, task.reference_solution):
        tally(family, label, diff)
    tally("no_op", "no_op", Diff())
    result.open_terms = open_terms(task.domain, task.query, world)
    return result


@dataclass
class AuditReport:
    tasks: list[TaskAudit]

    def summary(self) -> dict[str, Any]:
        """Per shortcut family: tasks it was tried on, tasks it passes (with their ids). Per
        careful family and per template: variants tried and passed (with the failing task ids).
        The clauses without a biting condition, templates that declare no clauses, and requests
        with a term the vocabulary leaves open."""
        families = self._shortcuts()
        careful = self._careful()
        per_template = self._careful_by_template()
        clauses = {a.task_id: a.clauses for a in self.tasks if a.clauses}
        undeclared = sorted({a.template for a in self.tasks if a.certified and a.clauses is None})
        terms = {a.task_id: a.open_terms for a in self.tasks if a.open_terms}
        uncertified = sorted(a.task_id for a in self.tasks if not a.certified)
        careful_runs = sum(f["tried"] for f in careful.values())
        careful_passed = sum(f["passed"] for f in careful.values())
        return {
            "tasks": len(self.tasks),
            "uncertified": uncertified,
            "shortcuts": families,
            "careful": careful,
            "careful_rate": round(careful_passed / careful_runs, 4) if careful_runs else None,
            "careful_by_template": dict(sorted(per_template.items())),
            "clauses_without_bite": clauses,
            "clauses_undeclared": undeclared,
            "open_terms": terms,
            "clean": not uncertified and all(f["passed"] == 0 for f in families.values()),
            # Templates that declare no clauses are listed, not failed: their clauses are unmeasured.
            "careful_clean": careful_passed == careful_runs and not clauses and not terms,
        }

    def _shortcuts(self) -> dict[str, dict[str, Any]]:
        """Per shortcut family: its title, the tasks it was tried on and those it passes."""
        families: dict[str, dict[str, Any]] = {}
        for family, title in FAMILIES.items():
            tried = [a for a in self.tasks if family in a.tried]
            passed = sorted(a.task_id for a in tried if a.passed.get(family))
            families[family] = {"title": title, "tasks": len(tried), "passed": len(passed), "passed_ids": passed}
        return families

    def _careful(self) -> dict[str, dict[str, Any]]:
        """Per careful family: its title, the variants tried and passed, and the tasks where one failed."""
        careful: dict[str, dict[str, Any]] = {}
        for family, title in CAREFUL_FAMILIES.items():
            runs = sum(a.careful_tried.get(family, 0) for a in self.tasks)
            failed = sorted(a.task_id for a in self.tasks if a.careful_failed.get(family))
            failures = sum(len(a.careful_failed.get(family, [])) for a in self.tasks)
            careful[family] = {"title": title, "tried": runs, "passed": runs - failures, "failed_ids": failed}
        return careful

    def _careful_by_template(self) -> dict[str, dict[str, int]]:
        """Per template: its tasks, and the careful variants tried and passed on them."""
        per_template: dict[str, dict[str, int]] = {}
        for a in self.tasks:
            entry = per_template.setdefault(a.template or "(none)", {"tasks": 0, "tried": 0, "passed": 0})
            entry["tasks"] += 1
            entry["tried"] += sum(a.careful_tried.values())
            entry["passed"] += sum(a.careful_tried.values()) - sum(len(v) for v in a.careful_failed.values())
        return per_template


def audit_brief(summary: dict[str, Any]) -> dict[str, Any]:
    """An audit summary in brief (what suite.json records and `tasks stats` shows): per shortcut,
    how many tasks it passes."""
    return {
        "tasks": summary["tasks"],
        "clean": summary["clean"],
        "uncertified": len(summary["uncertified"]),
        "passed": {name: family["passed"] for name, family in summary["shortcuts"].items()},
        "careful_clean": summary["careful_clean"],
        "careful": {name: {"tried": f["tried"], "passed": f["passed"]} for name, f in summary["careful"].items()},
        "clauses_without_bite": len(summary["clauses_without_bite"]),
        "clauses_undeclared": len(summary["clauses_undeclared"]),
        "open_terms": len(summary["open_terms"]),
    }


def audit(tasks: Iterable[Task], world_for: Callable[[Task], Path], on_task: Callable[[TaskAudit], None] | None = None) -> AuditReport:
    out = []
    for task in tasks:
        entry = audit_task(task, world_for(task))
        out.append(entry)
        if on_task:
            on_task(entry)
    return AuditReport(out)
