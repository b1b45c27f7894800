"""The solver interface."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..trial import Trial, TrialLimits


@dataclass
class Outcome:
    termination: str
    error: str | None = None


class FatalSolverError(RuntimeError):
    """A configuration problem that every trial would hit (a rejected or missing API key, an
    unknown model): a batch stops at once instead of recording hundreds of identical failures.
    The message is one line, fit to show the user as it is."""


class Solver(Protocol):
    name: str

    def config(self) -> dict[str, Any]:
        """What shapes the results (recorded in sessions and hashed in the run manifest)."""
        ...

    async def solve(self, trial: Trial, limits: TrialLimits) -> Outcome: ...
