"""The solver interface: what a solver is, the options it is built from, and how it fails."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ...errors import EBenchError, InputError

if TYPE_CHECKING:
    from ...engine.domain import Domain
    from ...engine.tools import ToolResult
    from ...tasks.diff import Diff
    from ...tasks.grading import Grade
    from ...tasks.spec import Task
    from ..trial import Trial, TrialLimits


@dataclass
class Outcome:
    termination: str
    error: str | None = None


class FatalSolverError(EBenchError, RuntimeError):
    """A configuration problem that every trial would hit (a rejected or missing API key, an
    unknown model): a batch stops at once instead of recording hundreds of identical failures.
    The message is one line, fit to show the user as it is."""


class SolverOptionsError(InputError, ValueError):
    """Options a solver cannot be built from (no --model for a model solver, an unreadable prices
    file): one line naming the option, shown to the user as a usage error."""


# Awaited by a solver before each step it takes: one model turn for a model solver, one tool call
# (or exec_code block) for a solver without a model. The app pauses a watched solver here, or
# lets one step through; it raises to abandon the trial. Batches pass none.
StepHook = Callable[[], Awaitable[None]]


class TrialView(Protocol):
    """What a solver may rely on of the `Trial` it is given (the public contract, ebench.api):
    the request and the tools it is offered, the calls that act on the world, what it records,
    and the grade. A `Trial` is one; everything else on a trial is ebench's own."""

    task: Task | None  # the task (its `query`, `actor`, `reference_solution`); None for a trial without one
    domain: Domain
    actor: int  # who the trial acts for
    code: bool  # code mode: the one tool is exec_code
    turns: int  # the model turns so far (a solver counts its own turns here)
    tool_calls: int  # the top-level calls so far (a block counts once)

    @property
    def request(self) -> str:
        """The task's request as the solver sees it (reworded under a --perturb intent)."""
        ...

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI-style tool schemas the solver is offered (exec_code alone in code mode)."""
        ...

    def call(self, name: Any, args: Any, *, call_id: str | None = None, turn: int | None = None) -> ToolResult:
        """Run one tool call and record it; never raises for the solver's mistakes."""
        ...

    def exec_code(self, code: Any, *, call_id: str | None = None, turn: int | None = None) -> ToolResult:
        """Run one exec_code block (code mode) and record it with its calls."""
        ...

    def message(self, role: str, content: Any = None, **data: Any) -> None:
        """Record a message ("assistant", "user", ...; `tool_calls` and `usage` among `data`)."""
        ...

    def note(self, event: str, **data: Any) -> None:
        """Record any other session event, by its kind and fields."""
        ...

    def add_usage(self, tokens_in: int, tokens_out: int, cost: float | None) -> None:
        """Count a model call's tokens and cost (None: unknown) towards the trial's."""
        ...

    async def ask_user(self, message: str) -> str | None:
        """The user's reply to the agent's message (None: no user, or nothing more to say)."""
        ...

    def end_turn(self) -> str | None:
        """Close the current turn of a scenario: the next turn's message, or None."""
        ...

    def diff(self) -> Diff:
        """The changes the trial has made to its copy of the world so far."""
        ...

    def grade(self) -> Grade | None:
        """Those changes graded against the task's expected diff (None without a task)."""
        ...


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
