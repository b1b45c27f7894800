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

from .solvers.base import FatalSolverError, Solver
from .trial import AGENT_ERROR, INFRA_ERROR, Trial, TrialLimits, TrialSummary


class Abandoned(Exception):
    """The watcher went away (the screen was closed): the trial stops where it is."""


class StepGate:
    def __init__(self, paused: bool = False) -> None:
        self._cond = threading.Condition()
        self.paused = paused
        self._credits = 0  # steps allowed through while paused
        self.closed = False
        self.waiting = False  # a step is held at the gate (the app shows "paused before step N")

    def wait(self) -> None:
        """Called by the solver's thread before each step; blocks while paused."""
        with self._cond:
            self.waiting = True
            try:
                while self.paused and self._credits == 0 and not self.closed:
                    self._cond.wait()
            finally:
                self.waiting = False
            if self.closed:
                raise Abandoned
            if self.paused and self._credits:
                self._credits -= 1

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
