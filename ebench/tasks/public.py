"""Public solvers: the proof that a task can be solved through the product's tools alone.

Every template has, beside its SQL generator, a public solver: `solve(api, params)` receives only
what the query states (`params`, the values phrased into it) and reaches the end state through
`PublicAPI`, which calls the domain's public tools as the task's actor on a fresh copy. There is
no SQL and no hidden id on this side. The calls it makes (reads and writes) become the task's
stored reference solution, with `$from` references for ids created during the trial.

The same solver, run with one stated condition broken (`Lazy`), is the sloppy solver that ignores
that condition, takes a boundary one step wrong or reads only the first page. The generator
rejects a draft unless every such variant ends in a different state (the condition bites), and
`ebench tasks audit` runs them again over a whole suite. A solver states each condition through
the helpers below (`keep`, `compare`, `top`, `order`, `pick`, `all_pages`), so the variants come
for free and cannot drift from the correct solver.
"""

from __future__ import annotations

import operator
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.domain import Domain
from ..engine.tools import WRITE, ToolError
from .spec import Step

# How a condition can be got wrong, per kind of condition. "ignore" drops it; "off_by_one" takes a
# boundary one step wrong (">=" read as ">", "before" as "on or before", k as k + 1).
MODES: dict[str, tuple[str, ...]] = {
    "filter": ("ignore",),
    "boundary": ("ignore", "off_by_one"),
    "ranking": ("ignore", "off_by_one"),
    "ordering": ("ignore",),
    "scope": ("ignore",),
}
# The capability a condition exercises when it bites (a condition may name another). Filters
# count towards multi-condition filtering only two at a time (certify.capabilities_from).
KIND_CAPABILITY = {
    "filter": None,
    "boundary": "precise_boundary_judgement",
    "ranking": "aggregation_computation",
    "ordering": None,
    "scope": "complete_data_acquisition",
}
FIRST_PAGE = "first_page"  # the lazy variant that reads only page 1 of every listing
READING = "reading"  # the other reading of a point the wording leaves open

# A clause (Template.clauses) whose value the task writes (a new playlist's name, a message): it
# bites by being in the expected diff.
WRITTEN = "written"

# The plans a correct solver may follow. PLAIN lists without the tools' own filters and checks
# every candidate itself (the stored reference solution); FILTERED also hands each listing the
# server-side filters and sort its tool offers for the stated conditions (`all_pages(narrow=...)`),
# as a careful agent does. Both must end in the expected state; "complete data acquisition" is
# claimed only where even the filtered plan needs more than one page (certify.capabilities_from).
PLAIN = "plain"
FILTERED = "server_filters"

# A boundary is an inequality; one step off is the other inclusivity.
_OPS: dict[str, Callable[[Any, Any], bool]] = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_ONE_STEP_OFF = {">=": ">", ">": ">=", "<=": "<", "<": "<="}


@dataclass(frozen=True)
class Condition:
    """A condition the query states. `kind` decides how a sloppy solver gets it wrong."""

    name: str
    kind: str
    capability: str | None = None  # exercised besides the kind's own (a counted threshold: aggregation too)
    tie_break_stated: bool = False  # rankings: the query names the tie-break, so ties are allowed

    def __post_init__(self) -> None:
        if self.kind not in MODES:
            raise ValueError(f"condition {self.name!r}: unknown kind {self.kind!r}; known: {', '.join(MODES)}")

    @property
    def modes(self) -> tuple[str, ...]:
        return MODES[self.kind]

    @property
    def exercises(self) -> tuple[str, ...]:
        """The capabilities this condition exercises when it bites."""
        return tuple(c for c in (KIND_CAPABILITY[self.kind], self.capability) if c)


@dataclass(frozen=True)
class Lazy:
    """Which condition a sloppy solver gets wrong, and how; `Lazy()` is the correct solver."""

    condition: str | None = None
    mode: str | None = None

    @property
    def label(self) -> str:
        if self.condition is None:
            return "correct"
        return self.condition if self.condition == FIRST_PAGE else f"{self.condition}:{self.mode}"


CORRECT = Lazy()


@dataclass(frozen=True)
class Reading:
    """A point the product's vocabulary leaves open (does a genre include its sub-genres? can a
    non-VIP listener "play" a VIP-only song?). The public solver takes the intended reading through
    `PublicAPI.reading(name, chosen, other)`. `decided_by` is a regular expression over the
    request: where it matches, the wording decides the point and the other reading is not a
    correct one; elsewhere both readings must end in the same state, or the draft is rejected."""

    name: str
    decided_by: str = ""

    def decided(self, query: str) -> bool:
        return bool(self.decided_by) and re.search(self.decided_by, query, re.IGNORECASE) is not None


def as_reading(item: str | Reading) -> Reading:
    return item if isinstance(item, Reading) else Reading(item)


class NotCertifiable(Exception):
    """The data makes the wording ambiguous or a condition moot (a tie at a top-k cut, k or fewer
    candidates): the generator draws again."""


class PublicSolverFailed(Exception):
    """A tool refused a call of the correct public solver: the draft (or the solver) is wrong."""


class CreatedId(int):
    """An id returned by a write that created it: recorded as a `$from` reference, so the stored
    solution replays on any copy."""

    step: int
    path: str

    def __new__(cls, value: int, step: int, path: str) -> CreatedId:
        obj = super().__new__(cls, value)
        obj.step = step
        obj.path = path
        return obj


def _ids(value: Any, created: Callable[[CreatedId], Any]) -> Any:
    """`value` with every CreatedId in it replaced by `created(it)`."""
    if isinstance(value, CreatedId):
        return created(value)
    if isinstance(value, dict):
        return {k: _ids(v, created) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_ids(v, created) for v in value]
    return value


def _plain(value: Any) -> Any:
    return _ids(value, int)


def _recorded(value: Any) -> Any:
    return _ids(value, lambda created: {"$from": created.step, "path": created.path})


@dataclass
class PublicAPI:
    """The tools, as the task's actor, plus the condition helpers a public solver states its
    conditions with. Errors: the correct solver stops (`PublicSolverFailed`); a lazy one moves on
    with `None`, as a sloppy agent would."""

    domain: Domain
    conn: sqlite3.Connection
    actor: int
    lazy: Lazy = CORRECT
    conditions: dict[str, Condition] = field(default_factory=dict)
    readings: tuple[str, ...] = ()
    plan: str = PLAIN
    steps: list[Step] = field(default_factory=list)
    consulted: set[str] = field(default_factory=set)  # conditions the solver stated
    paged: bool = False  # a listing had more than one page
    narrowed: bool = False  # a listing offered server-side filters (the solver has a FILTERED plan)

    def __post_init__(self) -> None:
        self.env = self.domain.env(self.conn, self.actor)

    @property
    def now(self) -> str:
        """The world's clock, which every tool result and profile also shows the solver."""
        return self.domain.now

    # -- tools -----------------------------------------------------------------------------
    def call(self, tool: str, creates: str | None = None, **args: Any) -> Any:
        """Call `tool`; with `creates`, that field of the result is an id the call created."""
        self.steps.append(Step(tool, _recorded(args)))
        result = self.domain.tools.call(self.env, tool, _plain(args))
        if not result.ok:
            if self.lazy == CORRECT:
                raise PublicSolverFailed(f"{tool}({_plain(args)}) was refused: {result.error_code}: {result.error_message}")
            return None
        value = result.value
        if creates is not None:
            if self.domain.tools.get(tool).kind != WRITE:
                raise ValueError(f"{tool} is a read tool: it creates nothing")
            value = dict(value)
            value[creates] = CreatedId(value[creates], len(self.steps) - 1, creates)
        return value

    def all_pages(self, tool: str, within: str | None = None, narrow: dict[str, Any] | None = None, **args: Any) -> list[Any]:
        """Every item of a paged listing, page by page (the first page only, when lazy). `within`:
        the field of the result that holds the listing (get_playlist's "songs"), if not the result.
        `narrow`: the tool's own filters and sort that express stated conditions exactly; the
        FILTERED plan sends them, the PLAIN plan does not (the solver checks every item itself
        either way, so both plans must reach the same state)."""

        def listing(result: Any) -> dict[str, Any]:
            found: dict[str, Any] = result[within] if within else result
            return found

        if narrow:
            self.narrowed = True
            if self.plan == FILTERED:
                args = {**args, **narrow}

        first = self.call(tool, page=1, **args)
        if first is None:
            return []
        items = list(listing(first)["items"])
        pages = int(listing(first).get("total_pages", 1))
        if pages > 1:
            self.paged = True
            if self.lazy.condition == FIRST_PAGE:
                return items
        for page in range(2, pages + 1):
            more = self.call(tool, page=page, **args)
            if more is not None:
                items.extend(listing(more)["items"])
        return items

    # -- conditions ------------------------------------------------------------------------
    def _state(self, name: str, kinds: Iterable[str]) -> str | None:
        """Mark `name` as stated; the way it is got wrong in this run, if it is."""
        condition = self.conditions.get(name)
        if condition is None:
            raise ValueError(f"the solver states an undeclared condition {name!r}")
        if condition.kind not in kinds:
            raise ValueError(f"condition {name!r} is a {condition.kind}, not one of {', '.join(kinds)}")
        self.consulted.add(name)
        return self.lazy.mode if self.lazy.condition == name else None

    def keep(self, name: str, ok: bool) -> bool:
        """A filter: keep the candidate when `ok` (every candidate, when the filter is ignored)."""
        return True if self._state(name, ("filter",)) == "ignore" else bool(ok)

    def heeds(self, name: str) -> bool:
        """A stated clause that adds to the work or chooses a source ("plus everyone still
        invited", "accept theirs if they asked first"), declared as a filter: True, or False in
        the run that ignores it."""
        return self._state(name, ("filter",)) != "ignore"

    def compare(self, name: str, value: Any, op: str, bound: Any) -> bool:
        """A boundary or threshold: `value op bound` (the wrong inclusivity when off by one)."""
        mode = self._state(name, ("boundary",))
        if mode == "ignore":
            return True
        if mode == "off_by_one":
            op = _ONE_STEP_OFF[op]
        return _OPS[op](value, bound)

    def top(self, name: str, ranked: Sequence[Any], k: int, measure: Callable[[Any], Any]) -> list[Any]:
        """The first `k` of `ranked` (sorted best first, the stated tie-break applied). The correct
        solver refuses data with k or fewer candidates, or a tie of `measure` across the cut
        (unless the query names the tie-break): such a ranking excludes nothing, or has two readings."""
        mode = self._state(name, ("ranking",))
        ranked = list(ranked)
        if self.lazy == CORRECT:
            if len(ranked) <= k:
                raise NotCertifiable(f"{name}: {len(ranked)} candidates for a top {k}")
            if not self.conditions[name].tie_break_stated and measure(ranked[k - 1]) == measure(ranked[k]):
                raise NotCertifiable(f"{name}: a tie across the top-{k} cut")
        if mode == "ignore":
            return ranked
        if mode == "off_by_one":
            return ranked[: k + 1]
        return ranked[:k]

    def order(self, name: str, items: Iterable[Any], key: Callable[[Any], Any]) -> list[Any]:
        """A stated ordering (by `key`); ignored, the items stay as the tool listed them."""
        items = list(items)
        return items if self._state(name, ("ordering",)) == "ignore" else sorted(items, key=key)

    def pick(self, name: str, stated: Any, otherwise: Any) -> Any:
        """A stated scope ("my whole history"): `stated`, or `otherwise` when it is ignored."""
        return otherwise if self._state(name, ("scope",)) == "ignore" else stated

    def reading(self, name: str, chosen: Any, other: Any) -> Any:
        """A point the wording leaves open (which credit counts, which name sorts): `chosen`, or the
        other reading. A task is certified only if both readings end in the same state."""
        if name not in self.readings:
            raise ValueError(f"the solver uses an undeclared reading {name!r}")
        self.consulted.add(name)
        return other if self.lazy.condition == name and self.lazy.mode == READING else chosen


def biting_conditions(bites: Iterable[str]) -> int:
    """How many stated conditions bite, from a certificate's bites (the lazy variants' labels that
    ended elsewhere): each condition once, however many of its ways bite; reading only the first
    page is no stated condition."""
    return len({label.split(":")[0] for label in bites if label != FIRST_PAGE})


def find_one(items: Iterable[dict[str, Any]], **match: Any) -> dict[str, Any]:
    """The single item whose fields equal `match` (names are compared case-insensitively); a
    public solver refuses a stated name that matches nothing or more than one item."""

    def same(a: Any, b: Any) -> bool:
        return a.casefold() == b.casefold() if isinstance(a, str) and isinstance(b, str) else a == b

    found = [i for i in items if all(same(i.get(k), v) for k, v in match.items())]
    if len(found) != 1:
        raise PublicSolverFailed(f"{len(found)} items match {match}")
    return found[0]


__all__ = [
    "CORRECT",
    "FILTERED",
    "FIRST_PAGE",
    "MODES",
    "PLAIN",
    "READING",
    "Condition",
    "CreatedId",
    "Lazy",
    "NotCertifiable",
    "PublicAPI",
    "PublicSolverFailed",
    "Reading",
    "WRITTEN",
    "ToolError",
    "as_reading",
    "biting_conditions",
    "find_one",
]
