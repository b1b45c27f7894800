"""Stepping through a recorded session: every event is a step, and the database state at any step
is rebuilt by re-executing the recorded domain calls on a fresh private copy of the world.

Tools are deterministic (frozen clock, sequential ids), so replaying the leaf calls (top-level
domain calls, and the calls made inside exec_code blocks, in recorded order) reproduces the state
the trial had. Each re-executed call's result is compared with the recorded one: the first
difference means the session was recorded against another world or other code (`check`).

A session recorded within its caps (payload_caps.py) replays too: a result recorded as a marker is
compared by its length and hash, and a call whose arguments were recorded truncated is not run:
one that failed changed nothing (the state is rebuilt exactly), one that succeeded is a mismatch.

Going to a step restores the nearest checkpoint (a serialized image of the copy, taken every
`checkpoint_every` calls the first time they are executed) and re-executes at most that many calls;
stepping forward one call from the current position re-executes just that call.

The module also lists the trials of runs for the replay screen (`trial_rows`, `filter_rows`).
No textual here: this is the core the screen drives from a worker thread.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.tools import ToolEnv
from ..tasks.diff import ChangeTracker, Diff, diff_from_list
from ..tasks.grading import Grade, explain
from ..tasks.spec import Task, load_task, resolve_args
from ..tasks.suite import find_task
from ..tasks.worlds import WorldMismatch, task_seed, world_fingerprint, world_matches
from .describe import describe, shown_args
from .describe import preview as _preview
from .events import BLOCK, CALL, CHILD, MessageEvent, SessionEvent, SolverInfo, ToolCallEvent, TurnEndEvent
from .payload_caps import marker, rerunnable
from .record import Session, read_session
from .results import TrialSummary
from .runs import RunData
from .trial import as_read_back, replays_as_recorded, trial_copy

CHECKPOINT_EVERY = 8
_TRUNCATED = "its arguments were recorded truncated: the call cannot be run again"


@dataclass(frozen=True)
class Step:
    """One recorded event. `calls` is how many leaf calls the state at this step has applied; a
    leaf's `leaf` is its 0-based position among the leaf calls (None for other steps). `role`:
    CALL and CHILD steps are re-executed, a BLOCK is not (its children are)."""

    index: int
    kind: str
    event: SessionEvent
    role: str | None = None
    calls: int = 0
    leaf: int | None = None

    @property
    def is_leaf(self) -> bool:
        return self.role in (CALL, CHILD)

    @property
    def call_id(self) -> str | None:
        return self.event.id if isinstance(self.event, ToolCallEvent) else None

    @property
    def label(self) -> str:
        """A one-line description for step lists."""
        return describe(self.event).label


@dataclass
class StepState:
    """The rebuilt state at one step: the net diff so far and its grade against the expected diff
    (None when the session's task is unknown)."""

    step: int
    calls: int
    diff: Diff
    grade: Grade | None

    @property
    def passed(self) -> bool:
        return bool(self.grade and self.grade.passed)

    @property
    def counts(self) -> dict[str, int]:
        counts = {"changes": len(self.diff), "calls": self.calls}
        if self.grade is not None:
            counts.update(
                matched=len(self.grade.matched),
                missing=len(self.grade.missing),
                unexpected=len(self.grade.unexpected),
                wrong=len(self.grade.wrong),
            )
        return counts


@dataclass(frozen=True)
class Mismatch:
    """A re-executed call whose result differs from the recorded one."""

    step: int
    call_id: str | None
    tool: str
    recorded: Any
    replayed: Any

    def describe(self) -> str:
        return f"step {self.step} ({self.tool}, {self.call_id}): recorded {_preview(self.recorded)}, replayed {_preview(self.replayed)}"


@dataclass
class ReferenceStep:
    """One step of the task's reference solution, run on a fresh copy, with the state after it."""

    index: int
    tool: str
    args: dict[str, Any]
    ok: bool
    result: Any
    error: str | None
    diff: Diff
    grade: Grade | None

    @property
    def label(self) -> str:
        return f"{'✓' if self.ok else '✗'} {self.tool} {_preview(shown_args(self.args), 50)}"


def _errors(grade: Grade | None) -> frozenset[str]:
    """The state's errors as stable signatures: unexpected changes and wrong values (the parts of
    a failure that a later call must undo; missing changes only need more work)."""
    if grade is None:
        return frozenset()
    found = {"+" + json.dumps(c.to_dict(), sort_keys=True, default=repr) for c in grade.unexpected}
    # A wrong value of a new row is known by its table, column and actual value: which expected row
    # it is paired with may change as other rows arrive. An existing row's is known by its key.
    found |= {
        "≠" + json.dumps([w.table, w.op, None if w.op == "insert" else w.key, w.column, w.actual], sort_keys=True, default=repr)
        for w in grade.wrong
    }
    return frozenset(found)


def task_for(session: Session) -> Task | None:
    """The session's task from the suite, or None if it is no longer there: a task of that id with
    another request or actor is another task (a regenerated suite reuses ids)."""
    path = find_task(session.task_id) if session.task_id else None
    if path is None:
        from ..tasks.scenarios import find_scenario

        scenario = find_scenario(session.task_id) if session.task_id else None
        return scenario.as_task() if scenario is not None else None
    task = load_task(path)
    header = session.start.task
    if header is not None and (header.query not in ("", task.query) or header.actor not in (None, task.actor)):
        return None
    return task


class Timeline:
    """A recorded session as steps, with the database state rebuilt at any step.

    Thread-safe: one lock guards the private copy, so a worker rebuilding a step that is no
    longer wanted only delays the next rebuild."""

    def __init__(self, session: Session, task: Task | None = None, *, checkpoint_every: int = CHECKPOINT_EVERY) -> None:
        self.session = session
        start = session.start
        self.domain = get_domain(start.domain or (start.task.domain if start.task else ""))
        self.actor = start.actor
        self.mode = start.mode or "tools"
        self.task = task if task is not None else task_for(session)
        recorded_seed = start.world_seed
        self.seed = (
            int(recorded_seed)
            if isinstance(recorded_seed, int)
            else task_seed(self.task)
            if self.task is not None
            else self.domain.default_seed
        )
        recorded = start.world
        if recorded and not world_matches(self.domain.name, self.seed, str(recorded)):
            raise WorldMismatch(
                f"{session.path} was recorded on the {self.domain.name} world {recorded}, which this ebench "
                f"does not build (seed {self.seed} gives {world_fingerprint(self.domain.name, self.seed)}): "
                "its steps cannot be rebuilt here"
            )
        self.checkpoint_every = max(1, checkpoint_every)
        self.steps = self._steps(session)
        self.leaves = [s for s in self.steps if s.is_leaf]
        self._lock = threading.RLock()
        self._checkpoints: dict[int, bytes] = {}
        self._conn: sqlite3.Connection | None = None
        self._tracker: ChangeTracker | None = None
        self._env: ToolEnv | None = None
        self._position = 0  # leaf calls applied on the current copy
        self._replayed: dict[int, Any] = {}  # leaf position -> replayed result (first execution)
        self._mismatch: Mismatch | None = None
        self._checked = False
        self._errors_by_calls: list[frozenset[str]] | None = None
        self._reference: list[ReferenceStep] | None = None
        self._final: StepState | None = None
        self._closed = False

    @classmethod
    def open(cls, path: str | Path, task: Task | None = None, **options: Any) -> Timeline:
        return cls(read_session(path), task, **options)

    @staticmethod
    def _steps(session: Session) -> list[Step]:
        steps: list[Step] = []
        calls = 0
        for index, event in enumerate(session.events):
            role = leaf = None
            if isinstance(event, ToolCallEvent):
                role = event.role
                if role != BLOCK:
                    leaf = calls
                    calls += 1
            steps.append(Step(index, event.event, event, role, calls, leaf))
        return steps

    # -- positions -------------------------------------------------------------------------
    @property
    def last(self) -> int:
        return len(self.steps) - 1

    @property
    def end_step(self) -> int:
        """The end event's step (the last step when the session has none: a crashed trial)."""
        return self.last

    @property
    def chapters(self) -> list[int]:
        """The steps where a scenario's turns begin (the first step, then each next turn's
        message); empty for a session of one task."""
        starts = [s.index for s in self.steps if isinstance(s.event, MessageEvent) and s.event.scenario_turn is not None]
        ended = any(isinstance(s.event, TurnEndEvent) for s in self.steps)
        return [0, *starts] if starts or ended else []

    def chapter_of(self, k: int) -> int:
        """The scenario turn (from 1) that step k belongs to (0 for a session of one task)."""
        return sum(start <= k for start in self.chapters)

    def step_of_call(self, call_id: str) -> int | None:
        return next((s.index for s in self.steps if s.call_id == call_id), None)

    def calls_until(self, k: int) -> list[ToolCallEvent]:
        """The recorded tool-call events up to step k (blocks and children), for a call trace."""
        return [s.event for s in self.steps[: self._clamp(k) + 1] if isinstance(s.event, ToolCallEvent)]

    def _clamp(self, k: int) -> int:
        return min(max(k, 0), self.last)

    # -- rebuilding ------------------------------------------------------------------------
    def _load(self, image: bytes | None) -> None:
        if self._conn is not None:
            self._conn.close()
        if image is None:
            conn = trial_copy(self.domain, self.seed)
        else:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            conn.deserialize(image)
            conn.execute("PRAGMA foreign_keys=ON")
        self._conn = conn
        self._tracker = ChangeTracker(conn, self.domain.schema, install=False)
        self._env = self.domain.env(conn, self.actor)

    def _goto(self, calls: int) -> None:
        """Bring the private copy to the state after `calls` leaf calls."""
        if self._closed:
            raise RuntimeError("the timeline is closed")
        if self._conn is None or calls < self._position:
            base = max((c for c in self._checkpoints if c <= calls), default=0)
            self._load(self._checkpoints.get(base))
            self._position = base
            if base == 0 and 0 not in self._checkpoints:
                assert self._conn is not None
                self._checkpoints[0] = self._conn.serialize()
        while self._position < calls:
            self._apply(self.leaves[self._position])
            self._position += 1
            if self._position % self.checkpoint_every == 0 and self._position not in self._checkpoints:
                assert self._conn is not None
                self._checkpoints[self._position] = self._conn.serialize()

    def _apply(self, step: Step) -> None:
        event = step.event
        assert isinstance(event, ToolCallEvent) and self._env is not None
        name = event.tool
        same: bool | None = None  # decided here, else by comparing `replayed` with the recorded result
        try:
            if event.injected:  # the perturbation layer answered instead of running it (perturb.py)
                replayed = as_read_back(event.result)
            elif not rerunnable(event):  # its arguments were recorded truncated (payload_caps.py)
                # a call that failed changed nothing: skipping it rebuilds the same state
                replayed = as_read_back(event.result) if not event.ok else {"error": {"code": "replay_error", "message": _TRUNCATED}}
            else:
                result = self.domain.tools.call(self._env, name, event.args)  # as recorded: the registry names any name
                replayed = as_read_back(result.payload())
                if event.altered:  # the solver got the result perturbed: the canonical one is what replays
                    replayed = as_read_back(event.result) if result.ok else replayed
                elif "result" in (event.capped or ()):  # recorded as a marker: compared by length and hash
                    same = replays_as_recorded(event, result.payload())
                    replayed = marker(result.payload(), head=False)
        except Exception as exc:  # a call that no longer runs is a mismatch, not a crash of the debugger
            replayed = {"error": {"code": "replay_error", "message": f"{type(exc).__name__}: {exc}"}}
            same = False
        assert step.leaf is not None
        if step.leaf not in self._replayed:
            self._replayed[step.leaf] = replayed
            if same is None:
                same = replayed == as_read_back(event.result)
            if self._mismatch is None and not same:
                self._mismatch = Mismatch(step.index, step.call_id, str(name), event.result, replayed)

    def _state(self, k: int) -> StepState:
        assert self._tracker is not None
        diff = self._tracker.diff()
        grade = explain(self.task.expected_diff, diff, self.domain.schema) if self.task else None
        return StepState(k, self._position, diff, grade)

    def state_at(self, k: int) -> StepState:
        """The state once step k has happened (k is clamped to the steps)."""
        k = self._clamp(k)
        with self._lock:
            self._goto(self.steps[k].calls if self.steps else 0)
            return self._state(k)

    def diff_at(self, k: int) -> Diff:
        return self.state_at(k).diff

    def grade_at(self, k: int) -> Grade | None:
        return self.state_at(k).grade

    def final_state(self) -> StepState:
        if self._final is None:
            self._final = self.state_at(self.last)
        return self._final

    # -- faithfulness ----------------------------------------------------------------------
    def check(self) -> Mismatch | None:
        """Re-execute every call once; the first whose result differs from the recording, if any."""
        with self._lock:
            if not self._checked:
                self._goto(len(self.leaves))
                self._checked = True
            return self._mismatch

    @property
    def faithful(self) -> bool:
        return self.check() is None

    def recorded_diff(self) -> Diff | None:
        end = self.session.end
        return diff_from_list(end.diff) if end and isinstance(end.diff, list) else None

    # -- point of no return ----------------------------------------------------------------
    def _errors_timeline(self) -> list[frozenset[str]]:
        """The errors of the state after 0, 1, ..., n leaf calls (one forward pass, kept)."""
        with self._lock:
            if self._errors_by_calls is None:
                errors = []
                self._goto(0)
                errors.append(_errors(self._state(0).grade))
                for calls in range(1, len(self.leaves) + 1):
                    self._goto(calls)
                    errors.append(_errors(self._state(0).grade))
                self._errors_by_calls = errors
                self._checked = True
            return self._errors_by_calls

    def point_of_no_return(self) -> int | None:
        """The step of the first call after which this trial could no longer pass, as it went on.

        Definition: the final state's errors are its unexpected changes and wrong values. Each
        one entered the state at some call and was never undone afterwards (it is present in
        every later state, through the end); the point of no return is the earliest such call.
        An error made and later repaired does not count; an error repaired and made again counts
        from when it was made again. If the trial failed only by what it left undone (missing
        changes and no errors), nothing it did was fatal: the point is the end step, where it
        stopped with work left. None when the final state passes or the task is unknown.

        "Could no longer pass" is about this trial's own continuation: after that call, every
        state it went through carries an error that is still there when it ended. (A different
        continuation could undo it; the point shows where this one went wrong for good.)"""
        final = self.final_state()
        if final.grade is None or final.grade.passed:
            return None
        errors = self._errors_timeline()
        lasting = errors[-1]
        if not lasting:
            return self.end_step
        earliest: int | None = None
        for error in lasting:
            since = len(errors) - 1
            while since > 0 and error in errors[since - 1]:
                since -= 1
            # `since` >= 1: the initial state (no calls) has no errors.
            earliest = since if earliest is None else min(earliest, since)
        assert earliest is not None and earliest >= 1
        return self.leaves[earliest - 1].index

    # -- the reference solution ------------------------------------------------------------
    def reference_steps(self) -> list[ReferenceStep]:
        """The task's reference solution run step by step on a fresh copy, with the diff and
        grade after each step (empty when the task is unknown). A step that cannot be resolved
        or is refused ends the list with its error."""
        if self._reference is not None:
            return self._reference
        steps: list[ReferenceStep] = []
        if self.task is not None:
            conn = trial_copy(self.domain, self.seed)
            try:
                tracker = ChangeTracker(conn, self.domain.schema, install=False)
                env = self.domain.env(conn, self.task.actor)
                results: list[Any] = []
                for i, step in enumerate(self.task.reference_solution):
                    try:
                        args = resolve_args(step.args, results)
                    except (KeyError, IndexError, TypeError, ValueError) as exc:
                        diff = tracker.diff()
                        steps.append(
                            ReferenceStep(i, step.tool, dict(step.args), False, None, f"cannot be resolved: {exc}", diff, self._grade(diff))
                        )
                        break
                    result = self.domain.tools.call(env, step.tool, args)
                    diff = tracker.diff()
                    error = None if result.ok else f"{result.error_code}: {result.error_message}"
                    steps.append(
                        ReferenceStep(i, step.tool, args, result.ok, as_read_back(result.payload()), error, diff, self._grade(diff))
                    )
                    if not result.ok:
                        break
                    results.append(result.value)
            finally:
                conn.close()
        self._reference = steps
        return steps

    def _grade(self, diff: Diff) -> Grade | None:
        return explain(self.task.expected_diff, diff, self.domain.schema) if self.task else None

    def close(self) -> None:
        """Release the copy and the checkpoints; a rebuild still running in a worker finishes first."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._position = 0
            self._checkpoints.clear()


# -- the trials of runs -------------------------------------------------------------------------
@dataclass(frozen=True)
class TrialRow:
    """One finished trial of a run, as the replay screen lists it."""

    run: str
    task: str
    trial: int
    domain: str
    capabilities: tuple[str, ...]
    solver: str
    passed: bool
    termination: str
    calls: int
    session: Path
    error: str | None = None
    result: TrialSummary | None = field(default=None, compare=False, hash=False, repr=False)


def solver_name(run: RunData, result: TrialSummary) -> str:
    """The model (or label) of the solver that made a trial: what tells runs apart."""
    solver = run.manifest.config.solver if run.manifest.config else None  # as it describes itself, or a bare name
    described = solver if isinstance(solver, SolverInfo) else SolverInfo(name=solver or "")
    for value in (described.label, described.model, result.solver, described.name):
        if value:
            return str(value)
    return run.label


def session_file(run: RunData, result: TrialSummary) -> Path:
    """A result's session file: relative to the run directory in batch runs, as found (absolute,
    or relative to the working directory) in pseudo-runs made from a sessions folder."""
    recorded = Path(result.session)
    if recorded.is_absolute():
        return recorded
    inside = run.path / recorded
    return inside if inside.exists() or not recorded.exists() else recorded


def trial_rows(runs: Iterable[RunData]) -> list[TrialRow]:
    rows = []
    for run in runs:
        for result in run.results:
            rows.append(
                TrialRow(
                    run=run.label,
                    task=result.task,
                    trial=result.trial or 1,
                    domain=result.domain,
                    capabilities=tuple(result.capabilities),
                    solver=solver_name(run, result),
                    passed=result.passed,
                    termination=str(result.termination or ""),
                    calls=result.tool_calls,
                    session=session_file(run, result),
                    error=result.error,
                    result=result,
                )
            )
    rows.sort(key=lambda r: (r.solver, r.task, r.trial))
    return rows


def filter_rows(
    rows: Iterable[TrialRow],
    *,
    failed: bool = False,
    domain: str | None = None,
    capability: str | None = None,
    solver: str | None = None,
    search: str = "",
) -> list[TrialRow]:
    """Rows kept by the filters (None or "" means any); `search` matches task, domain, solver,
    termination and error, case-insensitively, every word somewhere."""
    words = search.lower().split()
    kept = []
    for row in rows:
        if failed and row.passed:
            continue
        if domain and row.domain != domain:
            continue
        if capability and capability not in row.capabilities:
            continue
        if solver and row.solver != solver:
            continue
        haystack = " ".join([row.task, row.domain, row.solver, row.termination, row.error or "", row.run]).lower()
        if any(word not in haystack for word in words):
            continue
        kept.append(row)
    return kept
