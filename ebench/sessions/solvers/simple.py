"""The solvers that need no model: oracle, noop and replay."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from ...domains.engine.tools import ToolResult
from ...tasks.spec import resolve_args
from ..record import Session, SessionFileError, read_session
from ..trial import AGENT_ERROR, AGENT_STOPPED, MAX_TOOL_CALLS, Trial, TrialLimits
from .base import Outcome, SolverOptions, SolverOptionsError, StepHook


async def _call(trial: Trial, tool: Any, args: Any, step: StepHook | None) -> ToolResult:
    """One tool call, which is one step: the step hook is awaited first."""
    if step is not None:
        await step()
    return trial.call(tool, args)


class _OptionlessSolver:
    """A solver that takes no option: it refuses a model and its config is its name."""

    name: str

    @classmethod
    def from_options(cls, options: SolverOptions) -> Self:
        options.refuse_model(cls.name)
        return cls()

    def config(self) -> dict[str, Any]:
        return {"name": self.name}


class OracleSolver(_OptionlessSolver):
    """Runs the task's reference solution, step by step, through the public tools."""

    name = "oracle"

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        assert trial.task is not None
        results: list[Any] = []
        for reference in trial.task.reference_solution:
            if trial.tool_calls >= limits.max_tool_calls:  # the oracle runs under the same limits as any solver
                return Outcome(MAX_TOOL_CALLS)
            try:
                args = resolve_args(reference.args, results)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                return Outcome(AGENT_ERROR, f"reference step {len(results)} cannot be resolved: {exc}")
            result = await _call(trial, reference.tool, args, step)
            if not result.ok:
                return Outcome(
                    AGENT_ERROR,
                    f"reference step {len(results)} ({reference.tool}) was refused: {result.error_code}: {result.error_message}",
                )
            results.append(result.value)
        return Outcome(AGENT_STOPPED)


class NoopSolver(_OptionlessSolver):
    """Does nothing: every task must fail (it checks that no task passes on the untouched world)."""

    name = "noop"

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        return Outcome(AGENT_STOPPED)


def session_files(source: Path) -> list[Path]:
    """The session files of a run directory, a sessions folder, or one session file."""
    if source.is_file():
        return [source]
    root = source / "sessions" if (source / "sessions").is_dir() else source
    return sorted(root.rglob("*.jsonl"))


class ReplaySolver:
    """Re-executes the domain tool calls of recorded sessions, in their order (calls made inside an
    exec_code block are replayed one by one, without the sandbox), on a fresh copy.

    Trial k of a task replays that task's k-th recorded trial when there is one, else its first."""

    name = "replay"

    def __init__(self, source: Path) -> None:
        self.source = source
        self.sessions: dict[str, dict[int, Path]] = {}
        for path in session_files(source):
            try:
                session = read_session(path)
            except SessionFileError:
                continue
            if session.task_id:
                trial = session.start.trial or 1
                self.sessions.setdefault(session.task_id, {})[trial] = path
        if not self.sessions:
            raise SessionFileError(f"{source}: no session with a task to replay")

    @classmethod
    def from_options(cls, options: SolverOptions) -> ReplaySolver:
        options.refuse_model(cls.name)
        if options.replay_from is None:
            raise SolverOptionsError("--solver replay needs --replay-from RUN_DIR|SESSION_FILE")
        try:
            return cls(options.replay_from)
        except SessionFileError as exc:
            raise SolverOptionsError(str(exc)) from None

    @property
    def task_ids(self) -> Iterable[str]:
        return self.sessions.keys()

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "source": str(self.source)}

    def session_for(self, task_id: str, trial: int) -> Session:
        recorded = self.sessions[task_id]
        return read_session(recorded.get(trial) or recorded[min(recorded)])

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        assert trial.task is not None
        if trial.task.id not in self.sessions:
            return Outcome(AGENT_ERROR, f"no recorded session for task {trial.task.id}")
        session = self.session_for(trial.task.id, trial.trial_number)
        for event in session.tool_calls(leaves=True):
            if trial.tool_calls >= limits.max_tool_calls:
                return Outcome(MAX_TOOL_CALLS)
            await _call(trial, event.tool, event.args, step)
        return Outcome(AGENT_STOPPED)
