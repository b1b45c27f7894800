"""Solvers for tests of where trials run (tests/test_executors.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ..sessions.solvers.base import Outcome, StepHook
from ..sessions.solvers.simple import OracleSolver
from ..sessions.trial import Trial, TrialLimits


class CrashOnceSolver(OracleSolver):
    """The oracle, except that the first process to start a trial of `task_id` dies on the spot, as
    a worker process or a cluster node lost mid-batch does; `marker` (created then) remembers it."""

    name = "crash-once"

    def __init__(self, marker: Path, task_id: str) -> None:
        self.marker = marker
        self.task_id = task_id

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        assert trial.task is not None
        if trial.task.id == self.task_id:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                os._exit(3)
        return await super().solve(trial, limits, step=step)


class StallingSolver(OracleSolver):
    """The oracle after `seconds` of waiting per trial: a batch that is still running when it is stopped."""

    name = "stalling"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        await asyncio.sleep(self.seconds)
        return await super().solve(trial, limits, step=step)
