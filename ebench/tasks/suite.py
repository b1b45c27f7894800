"""The shipped task suite (JSON files inside the package) and its statistics."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .spec import CAPABILITIES, LoadReport, Task, load_tasks

SUITE_DIR = Path(__file__).resolve().parent / "data"


def task_files(root: Path | None = None, domain: str | None = None) -> list[Path]:
    root = root or SUITE_DIR
    pattern = f"{domain}/*.json" if domain else "*/*.json"
    return sorted(root.glob(pattern))


def load_suite(root: Path | None = None, domain: str | None = None, capability: str | None = None,
               ids: Iterable[str] | None = None) -> LoadReport:
    """Tasks of the suite (or of `root`), filtered; unreadable files are reported, not raised."""
    report = load_tasks(task_files(root, domain))
    wanted = set(ids or ())
    report.tasks = [t for t in report.tasks
                    if (capability is None or capability in t.capabilities) and (not wanted or t.id in wanted)]
    return report


def find_task(task_id: str, root: Path | None = None) -> Path | None:
    """The file of a task, by id (files are named after their task)."""
    for path in task_files(root):
        if path.stem == task_id:
            return path
    return None


def _distribution(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"min": 0, "mean": 0.0, "median": 0.0, "max": 0}
    return {"min": min(values), "mean": round(statistics.mean(values), 2), "median": statistics.median(values), "max": max(values)}


def suite_stats(tasks: list[Task]) -> dict[str, Any]:
    """Counts per domain and capability, changed rows (overall and per domain), kinds of change,
    and the tools the reference solutions use."""
    by_domain: dict[str, list[Task]] = {}
    for task in tasks:
        by_domain.setdefault(task.domain, []).append(task)
    domains = {}
    for name, items in sorted(by_domain.items()):
        caps = Counter(c for t in items for c in t.capabilities)
        domains[name] = {
            "tasks": len(items),
            "capabilities": {c: {"tasks": caps[c], "share": round(caps[c] / len(items), 4)} for c in CAPABILITIES},
            "changed_rows": _distribution([len(t.expected_diff) for t in items]),
            "changes": dict(Counter(ch.op for t in items for ch in t.expected_diff)),
            "templates": dict(sorted(Counter(t.generator.get("template", "?") for t in items).items())),
            "tools_used": dict(Counter(s.tool for t in items for s in t.reference_solution).most_common()),
        }
    return {
        "tasks": len(tasks),
        "domains": domains,
        "changed_rows": _distribution([len(t.expected_diff) for t in tasks]),
        "changes": dict(Counter(ch.op for t in tasks for ch in t.expected_diff)),
        "capabilities": {c: sum(c in t.capabilities for t in tasks) for c in CAPABILITIES},
    }
