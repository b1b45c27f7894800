"""The shipped task suite (JSON files inside the package) and its statistics."""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InputError
from .public import biting_conditions
from .spec import CAPABILITIES, LoadReport, Task
from .suite_cache import load_tasks_cached

SUITE_DIR = Path(__file__).resolve().parent / "data"
SPLITS_DIR = Path(__file__).resolve().parent / "splits"
# The shipped task sets a command can name (`--split NAME`): the paper-shaped suite, the tasks
# whose user holds facts, and the composed tasks (new structure, not only new values). The
# scenarios are conversations, not tasks: `--scenarios` runs them.
SPLITS = {"suite": SUITE_DIR, "ask": SPLITS_DIR / "ask", "composed": SPLITS_DIR / "composed"}
TASKS_ENV = "EBENCH_TASKS"
FIRST_SUITE_VERSION = "1"  # the suite shipped before suite versions were recorded


def tasks_root(root: Path | None = None) -> Path:
    """The task folder commands use: `root`, else $EBENCH_TASKS (a private split, say), else the
    shipped suite."""
    if root is not None:
        return root
    configured = os.environ.get(TASKS_ENV)
    return Path(configured) if configured else SUITE_DIR


def shipped_splits() -> dict[str, Path]:
    """The shipped splits present in this install, by name (the suite first)."""
    return {name: path for name, path in SPLITS.items() if path.is_dir()}


def split_name(root: Path | None) -> str | None:
    """The name of the shipped split `root` is (None: the configured default's), or None when
    it is a folder of the user's."""
    folder = tasks_root(root).resolve()
    return next((name for name, path in SPLITS.items() if path.resolve() == folder), None)


class NoTasks(InputError, ValueError):
    """A task source that is missing, or holds no task file nor line at all."""


def task_files(root: Path | None = None, domain: str | None = None) -> list[Path]:
    """The files the tasks at `root` are read from, whatever its shape: a folder of domain folders
    (`<domain>/<id>.json`, the shipped layout; `domain` narrows it to one), a flat folder of task
    files (`*.json` but its suite.json), or a JSONL file or a single task file (the path itself).
    A flat folder's or a file's tasks of other domains are left out by `load_suite`."""
    root = tasks_root(root)
    if root.is_file():
        return [root]
    nested = sorted(root.glob("*/*.json"))
    if nested:
        return [path for path in nested if path.parent.name == domain] if domain else nested
    return sorted(path for path in root.glob("*.json") if path.name != "suite.json")


def check_task_source(root: Path) -> None:
    """Raise NoTasks (one line) unless `root` is a folder or file holding at least one task file
    or JSONL line."""
    if not root.exists():
        raise NoTasks(f"{root}: no such folder or file")
    files = task_files(root)
    if root.is_file() and root.suffix == ".jsonl":
        if not any(line.strip() for line in _text(root).splitlines()):
            raise NoTasks(f"{root}: no task in it (a JSONL file holds one task per line)")
    elif not files:
        raise NoTasks(f"{root}: no task files in it (<domain>/<id>.json, or *.json beside each other, or give a .jsonl file)")


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "?"  # not empty: the loader reports why it cannot be read, as for any task file


def load_suite(
    root: Path | None = None, domain: str | None = None, capability: str | None = None, ids: Iterable[str] | None = None
) -> LoadReport:
    """Tasks of the suite (or of `root`: a folder of domain folders, a flat folder of task files,
    or a JSONL file), filtered; unreadable files and lines are reported, not raised. A `root` that
    is missing or holds no task at all is NoTasks."""
    check_task_source(tasks_root(root))
    report = load_tasks_cached(task_files(root, domain))  # parsed once, then loaded (suite_cache.py)
    wanted = set(ids or ())
    report.tasks = [
        t
        for t in report.tasks
        if (domain is None or t.domain == domain)
        and (capability is None or capability in t.capabilities)
        and (not wanted or t.id in wanted)
    ]
    return report


def find_task(task_id: str, root: Path | None = None) -> Path | None:
    """The file of a task, by id (files are named after their task)."""
    for path in task_files(root):
        if path.stem == task_id:
            return path
    return None


def suite_info(root: Path | None = None) -> dict[str, Any]:
    """The suite's record (`suite.json`): its version, how it was generated, its recorded audit."""
    path = tasks_root(root) / "suite.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_split_domain(root: Path, version: str, about: str, domain: str, entry: dict[str, Any]) -> dict[str, Any]:
    """Update a shipped split's suite.json with how one domain's tasks were made (its version, what
    it is, and per domain the command's seed and count), keeping the other domains' entries."""
    record = suite_info(root) if (root / "suite.json").exists() else {}
    record.update(about=about, version=version)
    record["domains"] = dict(sorted({**record.get("domains", {}), domain: entry}.items()))
    (root / "suite.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def suite_version(root: Path | None = None) -> str | None:
    version = suite_info(root).get("version")
    return None if version is None else str(version)


def _distribution(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"min": 0, "mean": 0.0, "median": 0.0, "p90": 0, "max": 0}
    ordered = sorted(values)
    return {
        "min": ordered[0],
        "mean": round(statistics.mean(ordered), 2),
        "median": statistics.median(ordered),
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "max": ordered[-1],
    }


def _biting_counts(tasks: list[Task]) -> dict[str, int]:
    """Tasks by how many of their stated conditions bite (as certified: `generator.bites`); tasks
    without that record are left out."""
    counts = Counter(str(biting_conditions(t.generator["bites"])) for t in tasks if isinstance(t.generator.get("bites"), list))
    return dict(sorted(counts.items(), key=lambda kv: int(kv[0])))


def suite_stats(tasks: list[Task]) -> dict[str, Any]:
    """Per domain: tasks, templates and tasks per template, public solution length, changed rows,
    capability shares, kinds of change and the tools the solutions use."""
    by_domain: dict[str, list[Task]] = {}
    for task in tasks:
        by_domain.setdefault(task.domain, []).append(task)
    domains = {}
    for name, items in sorted(by_domain.items()):
        caps = Counter(c for t in items for c in t.capabilities)
        templates = Counter(t.generator.get("template", "?") for t in items)
        lengths = [len(t.reference_solution) for t in items]
        domains[name] = {
            "tasks": len(items),
            "capabilities": {c: {"tasks": caps[c], "share": round(caps[c] / len(items), 4)} for c in CAPABILITIES},
            "changed_rows": _distribution([len(t.expected_diff) for t in items]),
            "changes": dict(Counter(ch.op for t in items for ch in t.expected_diff)),
            "templates": dict(sorted(templates.items())),
            "tasks_per_template": _distribution(list(templates.values())),
            "solution_length": {**_distribution(lengths), "share_40_or_more": round(sum(n >= 40 for n in lengths) / len(lengths), 4)},
            "certified": sum(isinstance(t.generator.get("stated"), dict) for t in items),
            "tools_used": dict(Counter(s.tool for t in items for s in t.reference_solution).most_common()),
            "biting_conditions": _biting_counts(items),
        }
    return {
        "tasks": len(tasks),
        "domains": domains,
        "changed_rows": _distribution([len(t.expected_diff) for t in tasks]),
        "changes": dict(Counter(ch.op for t in tasks for ch in t.expected_diff)),
        "capabilities": {c: sum(c in t.capabilities for t in tasks) for c in CAPABILITIES},
    }
