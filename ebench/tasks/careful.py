"""Careful variants: correct ways of doing a task other than its reference, each of which must pass.

A benchmark has two error rates. The lazy variants (public.py, audit.py) show that sloppy work
fails; these show that correct work done differently passes. Each is a plan a careful agent could
follow and that a grader must accept:

- `server_filters`: the public solver handing each listing the tools' own filters and sort for
  the stated conditions (`all_pages(narrow=...)`), and so reading fewer pages;
- `reading:NAME`: the other reading of a point the product's vocabulary leaves open, where the
  wording does not decide it (public.Reading);
- `writes_reordered`: every run of consecutive writes in another order (the reverse, as far as
  the ids one write creates for the next allow);
- `reads_repeated`: every read made twice;
- `extra_reads`: first, every read tool that needs no argument (a profile, a catalogue page).

A variant the product itself refuses (a reordered write that the product does not accept in that
order) is not applicable: nothing says a careful agent would insist. Every other variant must end
in the task's expected state; the generator rejects a draft where one does not
(certify.py, which also runs the template-level ones: `server_filters` and `reading`), and
`ebench tasks audit` counts them over a suite.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.tools import WRITE
from .diff import Diff
from .paths import write_tools
from .reference import run_steps
from .spec import Step, references, remap_references

# Careful families, in the order the audit lists them.
FAMILIES = {
    "server_filters": "the tools' own filters and sort for the stated conditions",
    "reading": "the other reading of a point the wording leaves open",
    "writes_reordered": "independent writes in another order",
    "reads_repeated": "every read made twice",
    "extra_reads": "harmless reads first (every read tool that needs no argument)",
}


@dataclass
class CarefulRun:
    family: str
    label: str
    diff: Diff | None  # None: not applicable (the product refused the plan's order)


def arranged(steps: Sequence[Step], order: Sequence[int]) -> list[Step]:
    """`steps` in `order` (old indices, each once), with `$from` references following their steps.
    `order` may repeat an index (a read made twice): references go to its first occurrence."""
    first: dict[int, int] = {}
    for position, old in enumerate(order):
        first.setdefault(old, position)
    return [Step(steps[old].tool, remap_references(steps[old].args, first.__getitem__)) for old in order]


def reordered_writes(steps: Sequence[Step], writes: Iterable[str]) -> list[Step] | None:
    """Each run of consecutive writes in reverse order, except that a write stays after the step
    whose created id it uses; None when no run changes order."""
    writes = frozenset(writes)
    order: list[int] = []
    index = 0
    while index < len(steps):
        if steps[index].tool not in writes:
            order.append(index)
            index += 1
            continue
        end = index
        while end < len(steps) and steps[end].tool in writes:
            end += 1
        run = range(index, end)
        needs = {i: {int(r) for r in references(steps[i].args) if index <= int(r) < end} for i in run}
        # Topological order of the run, the latest step first whenever it is free to go.
        placed: set[int] = set()
        free = [-i for i in run if not needs[i]]
        heapq.heapify(free)
        while free:
            i = -heapq.heappop(free)
            order.append(i)
            placed.add(i)
            for j in run:
                if j not in placed and -j not in free and needs[j] <= placed:
                    heapq.heappush(free, -j)
        index = end
    if order == list(range(len(steps))):
        return None
    return arranged(steps, order)


def repeated_reads(steps: Sequence[Step], writes: Iterable[str]) -> list[Step]:
    """Every read step made twice in a row."""
    writes = frozenset(writes)
    order = [i for i, step in enumerate(steps) for _ in range(1 if step.tool in writes else 2)]
    return arranged(steps, order)


def no_argument_reads(domain_name: str) -> list[Step]:
    """A call of every read tool that needs no argument, in the registry's order."""
    return [Step(t.name, {}) for t in get_domain(domain_name).tools if t.kind != WRITE and not any(p.required for p in t.params)]


def with_reads_first(domain_name: str, steps: Sequence[Step]) -> list[Step]:
    prefix = no_argument_reads(domain_name)
    shifted = [Step(s.tool, remap_references(s.args, lambda old: old + len(prefix))) for s in steps]
    return prefix + shifted


def write_refused(results: Sequence[Any], steps: Sequence[Step], writes: frozenset[str]) -> bool:
    """A write of a tolerant run (reference.run_steps) was refused: its result is None."""
    return any(result is None and step.tool in writes for result, step in zip(results, steps))


def reference_variants(domain_name: str, world: Path, actor: int, reference: Sequence[Step]) -> list[CarefulRun]:
    """The careful variants built from a reference solution (any task, template or not)."""
    writes = write_tools(domain_name)
    out: list[CarefulRun] = []
    reordered = reordered_writes(reference, writes)
    if reordered is not None:
        run = run_steps(domain_name, actor, reordered, world=world, tolerant=True)
        out.append(CarefulRun("writes_reordered", "writes_reordered", None if write_refused(run.results, reordered, writes) else run.diff))
    twice = repeated_reads(reference, writes)
    out.append(CarefulRun("reads_repeated", "reads_repeated", run_steps(domain_name, actor, twice, world=world, tolerant=True).diff))
    first = with_reads_first(domain_name, reference)
    out.append(CarefulRun("extra_reads", "extra_reads", run_steps(domain_name, actor, first, world=world, tolerant=True).diff))
    return out


__all__ = ["FAMILIES", "CarefulRun", "arranged", "reference_variants", "reordered_writes", "repeated_reads", "write_refused"]
