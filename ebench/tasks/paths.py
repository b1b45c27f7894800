"""The shortest path to a task: the fewest model turns a perfect agent needs, from the reference
solution's dependency graph (WildToolBench's optimal path, on ebench's tasks).

A perfect agent issues every call whose inputs it already has in one turn (parallel calls), so
its turns are the depth of the graph of which calls need which results. Reference solutions hold
literal ids (their generator knew them), so the graph is inferred from where each id comes from:

- a `$from` reference needs the step it names;
- an id argument (`id`, `*_id`, `*_ids`) needs the earliest earlier step whose result holds that
  id (the first moment the agent could know it); an id no earlier result holds was known from the
  start (the request, the agent's own account);
- a write also needs every earlier read that mentions an id it acts on, in the read's arguments
  or its result (the reads that checked what it changes: who is free, what it costs);
- page k > 1 of a listing needs page 1 of the same listing (the first page tells how many there
  are).

Calls in one turn run in the order given, so a write that must follow another can share its
turn; writes keep their order (one never moves before an earlier one: each changes what the next
finds). Otherwise only data the agent has to read before it can ask forms a dependency. On every
task of the shipped suite, issuing each level at once still passes (tests/test_paths.py). An
agent that skips a read the reference made may take fewer turns, and counts as optimal;
`ReferencePlayer(optimal=True)` in ebench.testing takes exactly the depth.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from .reference import run_steps
from .spec import Step, Task, references
from .worlds import task_world

PAGE = "page"


def _is_id_key(key: str) -> bool:
    return key == "id" or key.endswith("_id") or key.endswith("_ids")


def _id_values(value: Any) -> Iterator[int]:
    """The ids an id key holds: one integer, or a list of them."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, int) and not isinstance(item, bool):
            yield item


def _ids_in_args(args: dict[str, Any]) -> Iterator[int]:
    for key, value in args.items():
        if _is_id_key(key):
            yield from _id_values(value)


def ids_in_result(value: Any) -> set[int]:
    """Every integer a result holds under an id key (`id`, `*_id`, `*_ids`), at any depth."""
    found: set[int] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, item in current.items():
                if isinstance(key, str) and _is_id_key(key):
                    found.update(_id_values(item))
                if isinstance(item, (dict, list)):
                    stack.append(item)
        elif isinstance(current, list):
            stack.extend(current)
    return found


def _listing(step: Step) -> tuple[str, str]:
    """A listing's identity: its tool and arguments but the page."""
    rest = {k: v for k, v in step.args.items() if k != PAGE}
    return step.tool, repr(sorted(rest.items()))


def step_needs(steps: Sequence[Step], results: Sequence[Any], writes: Collection[str] = ()) -> list[set[int]]:
    """For each step, the earlier steps whose results it needs (see the module docstring);
    `writes` names the tools that change the world."""
    revealed: dict[int, int] = {}  # id -> the first step whose result held it
    mentioned: dict[int, set[int]] = {}  # id -> the reads that held it in their arguments or result
    first_pages: dict[tuple[str, str], int] = {}
    needs: list[set[int]] = []
    for index, step in enumerate(steps):
        ids = set(_ids_in_args(step.args))
        need = {ref for ref in references(step.args) if isinstance(ref, int) and 0 <= ref < index}
        need.update(revealed[value] for value in ids if value in revealed)
        write = step.tool in writes
        if write:
            for value in ids:
                need.update(mentioned.get(value, ()))
        page = step.args.get(PAGE)
        listing = _listing(step)
        if isinstance(page, int) and page > 1 and listing in first_pages:
            need.add(first_pages[listing])
        elif page in (None, 1):
            first_pages.setdefault(listing, index)
        needs.append(need)
        result = results[index] if index < len(results) else None
        found = ids_in_result(result)
        for value in found:
            revealed.setdefault(value, index)
        if not write:
            for value in found | ids:
                mentioned.setdefault(value, set()).add(index)
    return needs


def step_levels(steps: Sequence[Step], results: Sequence[Any], writes: Collection[str] = (), starts: Collection[int] = ()) -> list[int]:
    """The turn (from 0) in which a perfect agent issues each step: one after the latest step it
    needs. `starts`: steps that begin a new user turn (a scenario's), which nothing before them
    can share a model turn with."""
    levels: list[int] = []
    last_write = 0  # writes keep their order: one may share an earlier write's turn, never precede it
    floor = 0  # the first model turn of the current user turn
    for index, (step, need) in enumerate(zip(steps, step_needs(steps, results, writes))):
        if index in starts and levels:
            floor = last_write = max(levels) + 1
        level = max(floor, 1 + max((levels[j] for j in need), default=-1))
        if step.tool in writes:
            level = last_write = max(level, last_write)
        levels.append(level)
    return levels


def fewest_turns(steps: Sequence[Step], results: Sequence[Any], writes: Collection[str] = ()) -> int:
    """The model turns with calls a perfect agent needs: the depth of the dependency graph."""
    levels = step_levels(steps, results, writes)
    return max(levels) + 1 if levels else 0


def write_tools(domain_name: str) -> frozenset[str]:
    from ..engine.domain_registry import get_domain
    from ..engine.tools import WRITE

    return frozenset(tool.name for tool in get_domain(domain_name).tools if tool.kind == WRITE)


_CACHE: dict[tuple[str, str], tuple[int, ...]] = {}
_CACHE_LOCK = threading.Lock()


def reference_levels(task: Task, results: Callable[[], Sequence[Any]] | None = None) -> tuple[int, ...]:
    """`step_levels` of the task's reference solution, once per process: its results (which tell
    where each id comes from) are `results()`, or those of a run on a fresh copy of its world."""
    key = (task.id, repr([step.to_dict() for step in task.reference_solution]))
    with _CACHE_LOCK:
        known = _CACHE.get(key)
    if known is not None:
        return known
    if results is None:
        found: Sequence[Any] = run_steps(task.domain, task.actor, task.reference_solution, world=task_world(task), tolerant=True).results
    else:
        found = results()
    scenario = getattr(task, "scenario", None)
    starts = {start for start, end in scenario.turn_spans() if end > start} if scenario is not None else set()
    levels = tuple(step_levels(task.reference_solution, found, write_tools(task.domain), starts))
    with _CACHE_LOCK:
        _CACHE[key] = levels
    return levels


def optimal_turns(task: Task, results: Callable[[], Sequence[Any]] | None = None) -> int:
    """The fewest model turns with calls a perfect agent needs for the task (0 without a
    solution); `results` as for `reference_levels`. A scenario's is the sum of its turns' own
    fewest: a turn's calls cannot be sent before its message arrives."""
    levels = reference_levels(task, results) if task.reference_solution else ()
    scenario = getattr(task, "scenario", None)
    if scenario is not None:
        return sum(max(levels[start:end]) - min(levels[start:end]) + 1 for start, end in scenario.turn_spans() if end > start)
    return max(levels) + 1 if levels else 0
