"""The solvers that need no model: oracle, noop and replay."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from ...engine.tools import ToolResult
from ...tasks.spec import resolve_args
from ..events import MessageEvent, ToolCallEvent, TurnEndEvent
from ..payload_caps import rerunnable
from ..perturb import Perturbation, PerturbedResult, retry_after
from ..record import Session, SessionFileError, read_session
from ..trial import AGENT_ERROR, AGENT_STOPPED, MAX_TOOL_CALLS, Trial, TrialLimits
from ..users import question_for
from .base import Outcome, SolverOptions, SolverOptionsError, StepHook


async def _call(trial: Trial, tool: Any, args: Any, step: StepHook | None) -> ToolResult:
    """One tool call, which is one step: the step hook is awaited first."""
    if step is not None:
        await step()
    return trial.call(tool, args)


MAX_ATTEMPTS = 5  # a call the perturbation layer answers with a transient error is retried this often


async def _through_layer(trial: Trial, tool: str, args: dict[str, Any], step: StepHook | None, limits: TrialLimits) -> ToolResult:
    """A canonical call as a solver that reads the offered tools sends it (perturb.py): under the
    offered names, retried after an injected transient or rate-limit error (after its retry_after),
    the latency awaited."""
    if trial.layer is None:
        return await _call(trial, tool, args, step)
    name, sent = trial.layer.present(tool, args)
    for _ in range(MAX_ATTEMPTS):
        result = await _call(trial, name, sent, step)
        await trial.wait_latency()
        if trial.tool_calls >= limits.max_tool_calls or not await retry_after(result, asyncio.sleep):
            break
    return result


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
    """Runs the task's reference solution, step by step, through the public tools; a scenario's
    turns one after the other, each ended before the next."""

    name = "oracle"

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        assert trial.task is not None
        if trial.scenario is None:
            return await self._play(trial, trial.task.user_profile, trial.task.reference_solution, limits, step)
        for turn in trial.scenario.turns:
            for number, task in enumerate(turn.tasks):
                outcome = await self._play(trial, task.user_profile if not number else [], task.reference_solution, limits, step)
                if outcome.termination != AGENT_STOPPED:
                    return outcome
            trial.end_turn()
        return Outcome(AGENT_STOPPED)

    async def _play(self, trial: Trial, profile: Any, steps: Any, limits: TrialLimits, step: StepHook | None) -> Outcome:
        if profile:  # what the request leaves out is asked for before anything is done
            question = question_for(profile)
            trial.message("assistant", question)
            await trial.ask_user(question)
        results: list[Any] = []
        for reference in steps:
            if trial.tool_calls >= limits.max_tool_calls:  # the oracle runs under the same limits as any solver
                return Outcome(MAX_TOOL_CALLS)
            try:
                args = resolve_args(reference.args, results)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                return Outcome(AGENT_ERROR, f"reference step {len(results)} cannot be resolved: {exc}")
            result = await _through_layer(trial, reference.tool, args, step, limits)
            if not result.ok:
                return Outcome(
                    AGENT_ERROR,
                    f"reference step {len(results)} ({reference.tool}) was refused: {result.error_code}: {result.error_message}",
                )
            # `$from` references read the canonical result (the layer's pages, noise and order aside)
            results.append(result.canonical if isinstance(result, PerturbedResult) else result.value)
        return Outcome(AGENT_STOPPED)


class NoopSolver(_OptionlessSolver):
    """Does nothing: every task must fail (it checks that no task passes on the untouched world)."""

    name = "noop"

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        while trial.end_turn() is not None:  # a scenario's turns pass by
            pass
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
        calls = {id(event) for event in session.tool_calls(leaves=True)}
        # A perturbed recording (perturb.py) replays as sent under the same perturbation (the
        # layer answers the same way again); otherwise its canonical calls, the layer's own answers left out.
        recorded = Perturbation.from_dict(session.start.perturbation.to_dict() if session.start.perturbation else None)
        same = trial.layer is not None and recorded == trial.layer.perturbation
        said: Any = None  # the agent's last message: a user's reply answered it
        for event in session.events:
            if isinstance(event, MessageEvent) and event.role == "assistant":
                said = event.content
            elif isinstance(event, MessageEvent) and event.role == "user" and event.user:
                # The conversation is replayed with this run's user, so the rule "ask before
                # acting" judges the replay as it judged the recording.
                trial.message("assistant", said)
                await trial.ask_user(str(said or ""))
            elif isinstance(event, TurnEndEvent) and event.reached and trial.turns_left:
                trial.end_turn()
            elif id(event) in calls:
                assert isinstance(event, ToolCallEvent)
                stopped = await self._replay_call(trial, event, same, limits, step)
                if stopped is not None:
                    return stopped
        return Outcome(AGENT_STOPPED)

    async def _replay_call(
        self, trial: Trial, event: ToolCallEvent, same: bool, limits: TrialLimits, step: StepHook | None
    ) -> Outcome | None:
        """One recorded call sent again (None), or why the replay stops here."""
        if trial.tool_calls >= limits.max_tool_calls:
            return Outcome(MAX_TOOL_CALLS)
        if event.injected and not same:
            return None
        if not rerunnable(event) and event.ok:  # a failed one is sent as recorded: it fails again, changing nothing
            return Outcome(AGENT_ERROR, f"call {event.id} was recorded with its arguments truncated; it cannot be replayed")
        tool, args = event.tool, event.args
        if same and isinstance(event.sent, dict):
            tool, args = event.sent.get("tool"), event.sent.get("args")
        elif trial.layer is not None and not same and isinstance(tool, str) and isinstance(args, dict):
            tool, args = trial.layer.present(tool, args)
        await _call(trial, tool, args, step)
        await trial.wait_latency()
        return None
