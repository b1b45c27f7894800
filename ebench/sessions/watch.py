"""Watching a solver work on a trial, with pause and step (the app's model mode).

The solver runs in its own thread and event loop; before each step it waits at a `StepGate`,
through the step hook every solver takes (`solve(trial, limits, step=...)`): a step is one model
turn for the model solver and one tool call for the solvers that make calls without a model. The
app drives the gate: pause, resume, step (let exactly one more step through), or close (abandon
the trial).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from .results import TrialSummary
from .solvers.base import FatalSolverError, Solver
from .trial import AGENT_ERROR, INFRA_ERROR, Trial, TrialLimits


class Abandoned(Exception):
    """The watcher went away (the screen was closed): the trial stops where it is."""


# The speeds a person can choose while watching, in steps per second; None: as fast as it goes.
SPEEDS: tuple[float | None, ...] = (0.5, 1.0, 2.0, 5.0, 10.0, None)
DEFAULT_SPEED = 2.0  # slow enough to follow each step as it lands


class StepGate:
    """Where a watched solver waits before each step: paused (one step per `step()`), or running,
    at most `rate` steps per second when a rate is set (a person can follow it)."""

    def __init__(self, paused: bool = False, rate: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._cond = threading.Condition()
        self.paused = paused
        self.rate = rate
        self._clock = clock
        self._next_due: float | None = None  # when running at a rate: the earliest the next step may go
        self._credits = 0  # steps allowed through while paused
        self.closed = False
        self.waiting = False  # a step is held at the gate (the app shows "paused before step N")

    def wait(self) -> None:
        """Called by the solver's thread before each step; blocks while paused."""
        with self._cond:
            self.waiting = True
            try:
                while not self.closed:
                    if self.paused:
                        if self._credits:
                            self._credits -= 1
                            break
                        self._cond.wait()
                        continue
                    delay = self.delay()
                    if delay <= 0:
                        break
                    self._cond.wait(delay)
            finally:
                self.waiting = False
            if self.closed:
                raise Abandoned
            self._next_due = self._clock() + 1.0 / self.rate if self.rate else None

    def delay(self) -> float:
        """Seconds until a running gate lets the next step through (0: now)."""
        if self.rate is None or self._next_due is None:
            return 0.0
        return max(0.0, self._next_due - self._clock())

    def set_rate(self, rate: float | None) -> None:
        """Steps per second while running (None: no limit); a step already waiting re-times itself."""
        with self._cond:
            if self._next_due is not None and self.rate:
                self._next_due -= 1.0 / self.rate
                self._next_due += 1.0 / rate if rate else 0.0
            self.rate = rate
            self._cond.notify_all()

    def pause(self) -> None:
        with self._cond:
            self.paused = True
            self._credits = 0

    def resume(self) -> None:
        with self._cond:
            self.paused = False
            self._cond.notify_all()

    def step(self) -> None:
        """Let one more step through (pausing first if running)."""
        with self._cond:
            self.paused = True
            self._credits += 1
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


def watch(trial: Trial, solver: Solver, limits: TrialLimits, gate: StepGate) -> TrialSummary | None:
    """Run `solver` on `trial` through `gate` (blocking: call it from a worker thread). Returns the
    finished trial's summary, or None when the watch was abandoned (the trial is closed unfinished)."""

    async def step() -> None:
        await asyncio.to_thread(gate.wait)  # blocks this trial's thread only, never its event loop

    try:
        outcome = asyncio.run(solver.solve(trial, limits.for_task(trial.task), step=step))
    except Abandoned:
        trial.close()
        return None
    except FatalSolverError as exc:
        return trial.finish(INFRA_ERROR, str(exc))
    except Exception as exc:  # a solver bug must not take the app down; it is recorded
        return trial.finish(AGENT_ERROR, f"{type(exc).__name__}: {exc}")
    if gate.closed:
        trial.close()
        return None
    return trial.finish(outcome.termination, outcome.error)
