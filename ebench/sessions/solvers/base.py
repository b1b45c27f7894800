"""The solver interface: what a solver is, the options it is built from, and how it fails."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ..trial import Trial, TrialLimits


@dataclass
class Outcome:
    termination: str
    error: str | None = None


class FatalSolverError(RuntimeError):
    """A configuration problem that every trial would hit (a rejected or missing API key, an
    unknown model): a batch stops at once instead of recording hundreds of identical failures.
    The message is one line, fit to show the user as it is."""


class SolverOptionsError(ValueError):
    """Options a solver cannot be built from (no --model for a model solver, an unreadable prices
    file): one line naming the option, shown to the user as a usage error."""


# Awaited by a solver before each step it takes: one model turn for a model solver, one tool call
# (or exec_code block) for a solver without a model. The app pauses a watched solver here, or
# lets one step through; it raises to abandon the trial. Batches pass none.
StepHook = Callable[[], Awaitable[None]]


@runtime_checkable
class Solver(Protocol):
    name: str

    def config(self) -> dict[str, Any]:
        """What shapes the results (recorded in sessions and hashed in the run manifest)."""
        ...

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        """Act on `trial` within `limits`, awaiting `step` (when given) before each step."""
        ...


class SolverOptions(BaseModel):
    """Everything a solver can be configured with from the command line, in one object. A solver's
    factory takes what it needs, and refuses (SolverOptionsError) what it lacks or cannot use."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None  # a litellm model string
    api_base: str | None = None  # the model API's base URL
    model_args: dict[str, Any] = Field(default_factory=dict)  # passed to every model call
    price_in: float | None = None  # USD per million input tokens, for models litellm does not price
    price_out: float | None = None
    prices: Path | None = None  # a JSON prices file {"model": {"input": USD/M, "output": USD/M}}
    replay_from: Path | None = None  # a run directory, sessions folder or session file to replay
    retries: int = Field(6, ge=0)  # transient API errors retried this many times per turn
    backoff: float = Field(1.0, ge=0)  # first retry delay in seconds, doubled each retry

    def refuse_model(self, solver: str) -> None:
        """For a solver that calls no model: --model would be silently ignored, so it is an error."""
        if self.model:
            raise SolverOptionsError(f"--model is for --solver llm, not {solver}")


# A registry entry: builds a solver from the options (SolverOptionsError when they do not fit).
SolverFactory = Callable[[SolverOptions], Solver]
