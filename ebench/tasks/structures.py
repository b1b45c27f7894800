"""Structure, measured: what a task's structure and phrasing skeleton are, and how many a set has.

A composed task's structure is its tree of parts (composition.py, `generator.structure`); a
templated task's is its template, whose every task shares one shape. A skeleton is the wording
with the values abstracted. `structure_stats` counts distinct structures and skeletons and the
difficulty (depth, conditions that bite, reference length) of a set (`ebench tasks stats`);
`overlap` gives the share of one set's tasks whose structure, or skeleton, occurs in another
(`ebench tasks overlap`).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .spec import Task
from .template_catalog import task_template


def task_structure(task: Task) -> str:
    """A task's structure: a composed task's tree (`generator.structure.id`), a template's name
    for a templated task (its template is its structure), else its generator's kind."""
    structure = task.generator.get("structure")
    if isinstance(structure, dict) and structure.get("id"):
        return f"composed:{task.domain}:{structure['id']}"
    template = task.generator.get("template")
    if template:
        return f"template:{task.domain}:{template}"
    return f"other:{task.domain}:{task.generator.get('kind', 'unknown')}"


def task_skeleton(task: Task) -> str:
    """A task's phrasing skeleton, values abstracted: the recorded one, or its template's phrasing."""
    skeleton = task.generator.get("skeleton")
    if isinstance(skeleton, str) and skeleton:
        return skeleton
    template = task_template(task)
    phrasing = task.generator.get("phrasing")
    if template is not None and isinstance(phrasing, int) and 0 <= phrasing < len(template.phrasings):
        return re.sub(r"\{[A-Za-z0-9_]+\}", "{}", template.phrasings[phrasing])
    return re.sub(r"\d+", "#", task.query)


def task_depth(task: Task) -> int | None:
    structure = task.generator.get("structure")
    depth = structure.get("depth") if isinstance(structure, dict) else None
    return depth if isinstance(depth, int) else None


def _spread(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"min": 0, "mean": 0.0, "max": 0, "counts": {}}
    counts = Counter(values)
    return {
        "min": min(values),
        "mean": round(statistics.mean(values), 2),
        "max": max(values),
        "counts": {str(k): counts[k] for k in sorted(counts)},
    }


def structure_stats(tasks: Sequence[Task]) -> dict[str, Any]:
    """Distinct structures and skeletons, the largest structure's share, and the difficulty
    distributions (depth, conditions that bite, reference length) of a set of tasks."""
    from .public import biting_conditions

    structures = Counter(task_structure(t) for t in tasks)
    skeletons = Counter(task_skeleton(t) for t in tasks)
    largest, largest_n = structures.most_common(1)[0] if structures else ("", 0)
    depths = [d for d in (task_depth(t) for t in tasks) if d is not None]
    bites = [biting_conditions(t.generator["bites"]) for t in tasks if isinstance(t.generator.get("bites"), list)]
    return {
        "tasks": len(tasks),
        "distinct_structures": len(structures),
        "largest_structure": largest,
        "largest_structure_share": round(largest_n / len(tasks), 4) if tasks else 0.0,
        "distinct_skeletons": len(skeletons),
        "composed": sum(t.generator.get("kind") == "composed" for t in tasks),
        "depth": _spread(depths),
        "biting_conditions": _spread(bites),
        "reference_length": _spread([len(t.reference_solution) for t in tasks]),
    }


def overlap(a: Sequence[Task], b: Sequence[Task]) -> dict[str, Any]:
    """The share of `b`'s tasks whose structure occurs in `a`, and separately whose phrasing
    skeleton does."""
    structures = {task_structure(t) for t in a}
    skeletons = {task_skeleton(t) for t in a}
    same_structure = [t.id for t in b if task_structure(t) in structures]
    same_skeleton = [t.id for t in b if task_skeleton(t) in skeletons]
    n = len(b)
    return {
        "a_tasks": len(a),
        "b_tasks": n,
        "structure_overlap": round(len(same_structure) / n, 4) if n else 0.0,
        "skeleton_overlap": round(len(same_skeleton) / n, 4) if n else 0.0,
        "same_structure": same_structure,
        "same_skeleton": same_skeleton,
    }


__all__ = ["overlap", "structure_stats", "task_depth", "task_skeleton", "task_structure"]
