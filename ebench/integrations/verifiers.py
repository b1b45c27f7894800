"""ebench as an RL environment for `verifiers` (Prime Intellect's environment library, 0.4's v1 stack).

    from ebench.integrations.verifiers import load_environment
    env = load_environment(domain="music", split="composed", mode="tools")

Each rollout owns its world: the harness opens an ebench trial (`ebench.api.open_trial`) on a fresh
copy of the task's world, offers the model the domain's public tools (and `exec_code` in code
mode, through ebench's sandbox), runs ebench's own tool-use loop (the `llm` solver, so a rollout
is the same trajectory `ebench run` would record) against the endpoint verifiers hands it (its
interception server, which records the tokens for training), and grades the trial's database
diff. Nothing is shared between rollouts but read-only worlds: the trial's copy, session file and
sandbox are its own, so rollouts run concurrently (tests/rl/test_verifiers_env.py runs 64).

Rewards (`EbenchTask`), both from the diff grade of the trial:

- `passed`, weight 1: 1.0 when the trial's net diff equals the task's expected diff, else 0.0.
- `partial_credit`, weight `partial_weight` (default 0.5): row-level credit,
  ``max(0, (matched - penalty * unexpected) / expected)``, where `expected` is the number of
  row changes the task expects, `matched` how many of them the trial made exactly, and
  `unexpected` how many row changes it made that the task does not expect (rows it should not
  have written); `penalty` (`unexpected_penalty`, default 1.0) is what one stray write costs
  against one right one. An expected row written with a wrong value counts neither as
  matched nor as unexpected: it is a miss. A passing trial scores 1.0, an empty one 0.0, and
  stray writes can bring it to 0 but never below.

Where the tasks come from (`split`): the shipped `suite`, `ask` or `composed` set, or, with
`seed`, tasks freshly composed from the domain's task grammar (ebench.tasks.composition, as
`ebench tasks compose --seed` makes them; public structures only, the private ones stay held
out for evaluation, and no task equal to a shipped one), so that training never sees the tasks
it is tested on.

verifiers resolves a taskset id to a top-level module exporting its `Taskset` (and here its
`Harness`) in `__all__`: this module, under the id `ebench_verifiers` (registered when it is
imported; a one-line top-level module `ebench_verifiers` makes `vf-eval ebench_verifiers` find it
from the command line). `load_environment` builds the config itself.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.clients import ModelContext
from verifiers.v1.runtimes import ProgramResult, Runtime

from ..api import Grade, InputError, Task, TrialLimits, load_suite, open_trial

MODES = ("tools", "code")
SPLITS = ("suite", "ask", "composed")
# verifiers imports a taskset (and harness) id as a top-level module: this module answers to it.
TASKSET_ID = "ebench_verifiers"


class RLEnvError(InputError, ValueError):
    """An environment that cannot be built as asked; the message is one line."""


# -- the rewards, defined once ---------------------------------------------------------------------


def pass_reward(grade: Grade | None) -> float:
    """1.0 when the trial passed (its diff equals the expected diff), else 0.0 (no grade: 0.0)."""
    return 1.0 if grade is not None and grade.passed else 0.0


def partial_credit(grade: Grade | None, unexpected_penalty: float = 1.0) -> float:
    """Row-level credit: (matched - unexpected_penalty * unexpected) / expected, floored at 0 (see
    the module's docstring)."""
    if grade is None or grade.expected_rows <= 0:
        return 0.0
    score = (grade.matched_rows - unexpected_penalty * len(grade.unexpected)) / grade.expected_rows
    return max(0.0, min(1.0, score))


# -- where the tasks come from ---------------------------------------------------------------------


def environment_tasks(domain: str | None = None, split: str = "suite", seed: int | None = None, count: int = 50) -> list[Task]:
    """The tasks an environment serves: a shipped split's (of `domain`, or every domain), or with
    `seed` `count` tasks of `domain` freshly composed from its grammar's public structures."""
    from ..api import SPLITS as SHIPPED
    from ..api import shipped_splits

    if seed is not None:
        if domain is None:
            raise RLEnvError("a freshly composed taskset (seed=...) is of one domain: give domain=...")
        return composed_tasks(domain, seed, count)
    if split not in SHIPPED:
        raise RLEnvError(f"split {split!r}: one of {', '.join(SHIPPED)} (or seed=N for freshly composed tasks)")
    folder = shipped_splits().get(split)
    if folder is None:
        raise RLEnvError(f"split {split!r}: this install has no such split")
    report = load_suite(folder, domain=domain)
    if not report.tasks:
        raise RLEnvError(f"no {domain or ''} task in the {split} split".replace("  ", " "))
    return report.tasks


def composed_tasks(domain: str, seed: int, count: int) -> list[Task]:
    """`count` tasks composed with `seed` from the public part of `domain`'s grammar, none equal to
    a shipped task (the same tasks for the same seed, as `ebench tasks compose --seed` makes)."""
    from ..api import SPLITS as SHIPPED
    from ..api import compose

    shipped = [t for folder in SHIPPED.values() if folder.is_dir() for t in load_suite(folder, domain=domain).tasks]
    try:
        report = compose(domain, count, seed, split="public", id_prefix=f"{domain}-rl{seed}", avoid=shipped)
    except ValueError as exc:
        raise RLEnvError(str(exc)) from None
    return list(report.tasks)


# -- one rollout's world -----------------------------------------------------------------------------


@dataclass
class RolloutResult:
    grade: Grade | None
    termination: str
    session: Path


async def play(task: Task, model: str, api_base: str, api_key: str, *, code: bool, limits: TrialLimits, sessions: Path) -> RolloutResult:
    """One trial of `task` on its own world copy, played by ebench's tool-use loop (the `llm`
    solver) against the OpenAI-compatible endpoint `api_base`, graded and recorded into a session
    file under `sessions`. The trial's copy, session and sandbox belong to this call alone."""
    from ..api import LLMConfig, LLMSolver, UserSettings, new_session_file

    model_name = model if "/" in model else f"openai/{model}"  # litellm's route to an OpenAI-compatible server
    solver = LLMSolver(LLMConfig(model=model_name, api_base=api_base, model_args={"api_key": api_key}, retries=2, backoff=0.2))
    await asyncio.to_thread(_world_ready, task)
    path = new_session_file(sessions, task.id, "rl")
    user = UserSettings().for_task(task)  # the scripted user, for a task whose user holds facts (the ask split)
    trial = await asyncio.to_thread(open_trial, task, path, code=code, user=user, solver={"name": "verifiers", "model": model})
    try:
        outcome = await solver.solve(trial, limits.for_task(task))  # a task's own budget raises the limits, as in `ebench run`
        summary = await asyncio.to_thread(trial.finish, outcome.termination, outcome.error)
    finally:
        trial.close()  # after finish, a no-op; after a failure, the copy and the session are released
    return RolloutResult(trial.final_grade, str(summary.termination), path)


_WORLDS = threading.Lock()


def _world_ready(task: Task) -> None:
    """Build (or check) the task's world once, one rollout at a time: concurrent rollouts of a
    process would otherwise race to build the same world file (its temporary file is named by
    process, not by thread)."""
    from ..api import task_world

    with _WORLDS:
        task_world(task)


# -- verifiers: the taskset, its tasks and their rewards ---------------------------------------------


class EbenchTasksetConfig(vf.TasksetConfig):
    domain: str | None = None
    """One domain's tasks (music, meeting, moba), or every domain's (None)."""
    split: str = "suite"
    """A shipped task set: suite, ask or composed."""
    seed: int | None = None
    """Compose fresh tasks with this seed instead of a shipped split (needs a domain)."""
    count: int = 50
    """How many tasks to compose with `seed`."""
    mode: str = "tools"
    """tools (the domain's tools as calls) or code (exec_code too: the tools as Python functions)."""
    unexpected_penalty: float = 1.0
    """What one unexpected row change costs in the partial credit, against one matched row."""


class EbenchTaskData(vf.TaskData):
    task: dict[str, Any]
    """The ebench task document (ebench-task/1)."""
    mode: str = "tools"
    unexpected_penalty: float = 1.0


class EbenchTask(vf.Task[EbenchTaskData, vf.State, vf.TaskConfig]):
    """One ebench task; its rewards read the grade the harness left on the trace."""

    @vf.reward(weight=1.0)
    async def passed(self, trace: vf.Trace) -> float:
        return pass_reward(_grade_of(trace))

    @vf.reward(weight=0.5)  # the default; `load_environment(partial_weight=...)` sets it in the task config
    async def partial_credit(self, trace: vf.Trace) -> float:
        return partial_credit(_grade_of(trace), self.data.unexpected_penalty)


class EbenchTaskset(vf.Taskset[EbenchTask, EbenchTasksetConfig]):
    def load(self) -> Iterator[EbenchTask]:
        config = self.config
        if config.mode not in MODES:
            raise RLEnvError(f"mode {config.mode!r}: tools or code")
        for task in environment_tasks(config.domain, config.split, config.seed, config.count):
            yield EbenchTask(
                EbenchTaskData(
                    id=task.id,
                    name=task.id,
                    prompt=task.query,
                    task=task.to_dict(),
                    mode=config.mode,
                    unexpected_penalty=config.unexpected_penalty,
                ),
                config.task,
            )


def _grade_of(trace: vf.Trace) -> Grade | None:
    """The grade the harness recorded on the trace (None: the rollout never got one)."""
    from ..api import Grade as GradeType

    record = trace.info.get("ebench_grade")
    if not isinstance(record, dict):
        return None
    return GradeType.model_validate(record)


# -- verifiers: the harness that plays a rollout in-process --------------------------------------------


class EbenchHarnessConfig(vf.HarnessConfig):
    max_turns: int = 30
    max_tool_calls: int = 100
    sessions: str | None = None
    """Where rollouts' session files go (default: a temporary folder per process)."""


class EbenchHarness(vf.Harness[EbenchHarnessConfig]):
    """Plays a rollout in this process: ebench's tool-use loop on the rollout's own trial, its model
    calls sent to verifiers' interception endpoint. No program to install, no tool server."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False  # exec_code runs in ebench's own sandbox, never on the runtime
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: ModelContext,
        trace: vf.Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        from ..api import parse_task

        assert isinstance(data, EbenchTaskData) or hasattr(data, "task"), "an ebench harness plays ebench tasks"
        task = parse_task(data.task, f"<{data.id}>")  # type: ignore[attr-defined]
        code = getattr(data, "mode", "tools") == "code"
        limits = TrialLimits(max_turns=self.config.max_turns, max_tool_calls=self.config.max_tool_calls)
        played = await play(task, ctx.model, endpoint, secret, code=code, limits=limits, sessions=_sessions(self.config.sessions))
        trace.info["ebench_grade"] = played.grade.to_dict() if played.grade is not None else None
        trace.info["ebench_session"] = str(played.session)
        trace.info["ebench_termination"] = played.termination
        return ProgramResult(exit_code=0, stdout=played.termination, stderr="")


_SESSIONS: Path | None = None


def _sessions(configured: str | None) -> Path:
    global _SESSIONS
    if configured:
        return Path(configured)
    if _SESSIONS is None:
        _SESSIONS = Path(tempfile.mkdtemp(prefix="ebench-rl-sessions-"))
    return _SESSIONS


# -- the entry point ---------------------------------------------------------------------------------------


def load_environment(
    domain: str | None = None,
    split: str = "suite",
    mode: str = "tools",
    seed: int | None = None,
    *,
    count: int = 50,
    partial_weight: float = 0.5,
    unexpected_penalty: float = 1.0,
    max_turns: int = 30,
    max_tool_calls: int = 100,
    sessions: str | Path | None = None,
    **env: Any,
) -> vf.Env:
    """A verifiers environment of ebench tasks: `domain` (None: all), `split` (suite, ask,
    composed) or `seed` (freshly composed tasks of `domain`), `mode` (tools, code). Rewards:
    `passed` (1/0) and `partial_credit` (weighted by `partial_weight`; see the module). `env`:
    further `vf.EnvConfig` fields (max_concurrent_agents, timeout, retries...)."""
    if mode not in MODES:
        raise RLEnvError(f"mode {mode!r}: tools or code")
    if seed is None and split not in SPLITS:
        raise RLEnvError(f"split {split!r}: one of {', '.join(SPLITS)} (or seed=N for freshly composed tasks)")
    from verifiers.v1.configs.task import RewardFunctionConfig

    weights = vf.TaskConfig(rewards={"partial_credit": RewardFunctionConfig(weight=partial_weight)})
    taskset = EbenchTasksetConfig(
        id=TASKSET_ID,
        task=weights,
        domain=domain,
        split=split,
        seed=seed,
        count=count,
        mode=mode,
        unexpected_penalty=unexpected_penalty,
    )
    harness = EbenchHarnessConfig(
        id=TASKSET_ID, max_turns=max_turns, max_tool_calls=max_tool_calls, sessions=str(sessions) if sessions else None
    )
    # The harness plays in this process: its runtime is a local scratch folder, not a sandbox.
    agent = vf.AgentConfig(harness=harness, runtime=vf.SubprocessConfig())
    config = vf.SingleAgentEnvConfig(taskset=taskset, agent=agent, **env)
    return vf.SingleAgentEnv(config)


def tasks_of(env: vf.Env) -> Iterable[Any]:
    """The environment's tasks (verifiers `Task`s), in order."""
    return iter(env.taskset)


__all__ = ["EbenchHarness", "EbenchTaskset", "load_environment"]

sys.modules.setdefault(TASKSET_ID, sys.modules[__name__])
