"""ebench as an Inspect AI eval: `inspect eval ebench/ebench --model openai/... -T split=composed`.

Inspect finds the task through its `inspect_ai` entry point (pyproject: `ebench =
"ebench.integrations.inspect"`), which imports this module; `@task ebench` is then registered as
`ebench/ebench`. Inspect imports every installed extension whenever it runs, so this module loads
nothing of ebench until a task is asked for.

Each sample is one ebench task. Its solver opens a trial on a fresh copy of the task's world
(`open_trial`), offers the trial's tools (the domain's, and exec_code in code mode, run through
ebench's own sandbox) as Inspect tools, and drives the conversation as ebench's model solver does:
ebench's system prompt and the task's request, every tool call executed and answered with its
JSON payload, a scripted user who answers the agent's questions on a task whose user holds facts,
ebench's turn and call limits (a task's budget raises them). Inspect's own limits (`--message-limit`,
`--token-limit`, `--time-limit`, `--working-limit`) apply too and end the trial like ebench's.

The scorer is ebench's diff grade: CORRECT or INCORRECT (so `accuracy` is the pass rate), an
explanation listing the missing, unexpected and wrong-valued row changes, and metadata with the
task, its capabilities, the termination, the rows the trial changed and its results line.

Each trial is recorded as an ebench session (in the data directory's sessions folder, or `-T
sessions=DIR`), and the session's text is kept in the sample's store, so `ebench import inspect
LOG --out DIR` (`import_log`) makes a run directory from the log alone, which `ebench report` and
the app's replay read like any run.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput, execute_tools
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolParams
from inspect_ai.util import LimitExceededError

from ..api import InputError

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer
    from inspect_ai.solver import Solver

    from ..api import EndEvent, Grade, RunManifest, StartEvent, Trial, TrialLimits, TrialSummary
    from ..api import Task as EBenchTask

SOLVER_NAME = "inspect"  # the solver's name in sessions and results lines
SESSION_KEY = "ebench_session"  # the sample store's key for the session's JSON lines
SCORER_NAME = "ebench_grade"
MODES = ("tools", "code")
EXPLAINED_ROWS = 20  # row changes listed per kind in a score's explanation; the session has them all


class InspectOptionsError(InputError, ValueError):
    """A `-T` option the task cannot be built with; the message names it."""


# -- the task ----------------------------------------------------------------------------------


@task
def ebench(
    split: str | None = None,
    domain: str | None = None,
    mode: str = "tools",
    tasks: str | list[str] | None = None,
    tasks_dir: str | None = None,
    capability: str | None = None,
    max_turns: int | None = None,
    max_tool_calls: int | None = None,
    sessions: str | None = None,
) -> Task:
    """ebench's tasks as an Inspect eval.

    Args:
        split: suite, ask or composed (the shipped task sets); default: ebench's default task
            folder ($EBENCH_TASKS, else the suite).
        domain: only this domain's tasks (music, moba, meeting, or a plug-in's).
        mode: tools (each tool a function) or code (the tools and exec_code).
        tasks: task ids, comma-separated (or a list): only these.
        tasks_dir: a folder of task files instead of a split.
        capability: only the tasks that test this capability.
        max_turns: model turns per trial (default ebench's 30, raised by a task's budget).
        max_tool_calls: tool calls per trial (default ebench's 100, raised by a task's budget).
        sessions: the folder the trials' session files go to (default: ebench's data directory).
    """
    if mode not in MODES:
        raise InspectOptionsError(f"-T mode={mode!r}: one of {', '.join(MODES)}")
    chosen = load_tasks(split, domain, tasks, tasks_dir, capability)
    limits = _limits(max_turns, max_tool_calls)
    folder = tasks_folder(split, tasks_dir)
    task_set = _remember(folder, chosen)
    return Task(
        dataset=MemoryDataset([_sample(t) for t in chosen], name=f"ebench-{split or 'suite'}"),
        solver=ebench_agent(task_set=task_set, mode=mode, sessions=sessions, **limits),
        scorer=diff_grade(),
        cleanup=_cleanup,
        metadata={"ebench": {"split": split, "domain": domain, "mode": mode, "tasks_dir": tasks_dir}},
        version=_suite_version(folder) or 0,  # the task set's version, as Inspect records a task's
    )


def load_tasks(
    split: str | None,
    domain: str | None,
    ids: str | Sequence[str] | None,
    tasks_dir: str | None = None,
    capability: str | None = None,
) -> list[EBenchTask]:
    """The tasks the options choose, in the folder's order; an option that chooses none is an error."""
    from ..api import get_domain, load_suite

    root = tasks_folder(split, tasks_dir)
    if domain is not None:
        get_domain(domain)  # UnknownDomain names the installed ones
    wanted = _ids(ids)
    report = load_suite(root, domain=domain, capability=capability, ids=wanted or None)
    if report.errors:
        raise InspectOptionsError(f"{len(report.errors)} task file(s) cannot be read, the first: {report.errors[0]}")
    unknown = sorted(set(wanted) - {t.id for t in report.tasks})
    if unknown:
        raise InspectOptionsError(f"-T tasks: no such task here: {', '.join(unknown)}")
    if not report.tasks:
        raise InspectOptionsError("no task matches these options")
    return report.tasks


def tasks_folder(split: str | None, tasks_dir: str | None) -> Path:
    """The folder `-T split` or `-T tasks_dir` names, else ebench's default ($EBENCH_TASKS, else the suite)."""
    from ..api import SPLITS, shipped_splits, tasks_root

    if split is not None and tasks_dir is not None:
        raise InspectOptionsError("-T split and -T tasks_dir both name the tasks: give one")
    if split is not None:
        if split not in SPLITS:
            raise InspectOptionsError(f"-T split={split!r}: one of {', '.join(SPLITS)}")
        found = shipped_splits().get(split)
        if found is None:
            raise InspectOptionsError(f"-T split={split}: this install has no such split")
        return found
    if tasks_dir is not None and not Path(tasks_dir).exists():
        raise InspectOptionsError(f"-T tasks_dir={tasks_dir}: no such file or folder")
    return tasks_root(Path(tasks_dir) if tasks_dir else None)


# The tasks of the evals built in this process, by task set (the folder they came from): the
# solver's options must be JSON (Inspect logs them), so it names its set and finds a sample's task here.
_TASK_SETS: dict[str, dict[str, EBenchTask]] = {}


def _remember(folder: Path, chosen: list[EBenchTask]) -> str:
    """Keep the tasks for the solver; the name of their set."""
    name = str(folder.resolve())
    _TASK_SETS.setdefault(name, {}).update({t.id: t for t in chosen})
    return name


def _ids(ids: str | Sequence[str] | None) -> list[str]:
    """`-T tasks=a,b` (a string) or `-T tasks=[a,b]` (a list): the ids, in order."""
    if ids is None:
        return []
    items = ids.split(",") if isinstance(ids, str) else [str(i) for i in ids]
    return [i.strip() for i in items if i.strip()]


def _limits(max_turns: int | None, max_tool_calls: int | None) -> dict[str, int]:
    from ..api import TrialLimits

    defaults = TrialLimits()
    limits = {
        "max_turns": defaults.max_turns if max_turns is None else max_turns,
        "max_tool_calls": defaults.max_tool_calls if max_tool_calls is None else max_tool_calls,
    }
    for name, value in limits.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InspectOptionsError(f"-T {name}={value!r}: a whole number, 1 or more")
    return limits


def _sample(t: EBenchTask) -> Sample:
    """One task as a sample: its id, its request (the solver sends it with ebench's system prompt)
    and what a reader of the log wants to group by."""
    return Sample(
        id=t.id,
        input=t.query,
        metadata={
            "domain": t.domain,
            "actor": t.actor,
            "capabilities": list(t.capabilities),
            "reference_calls": len(t.reference_solution),
            "expected_rows": len(t.expected_diff),
        },
    )


# -- a running trial, by sample --------------------------------------------------------------


@dataclass
class _Run:
    """One sample's trial, from the solver (which opens it) to the scorer or the cleanup (which
    finish it): a trial is not a value Inspect can keep in the state or the store."""

    trial: Trial
    limits: TrialLimits
    termination: str | None = None
    error: str | None = None
    asked: list[tuple[str, str, dict[str, Any], str]] = field(default_factory=list)  # (id, tool, args, args as JSON text)
    summary: TrialSummary | None = None

    def end(self, termination: str, error: str | None = None) -> None:
        if self.termination is None:
            self.termination, self.error = termination, error

    def call_id(self, tool: str, args: dict[str, Any]) -> tuple[str | None, Any]:
        """The model's id of the call being executed, and its arguments as the message holds them
        (the session then refers to them rather than writing them twice). Inspect runs the calls
        of a message one by one, in order; one it refused (bad arguments) never arrives here."""
        for index, (call_id, name, asked, text) in enumerate(self.asked):
            if name == tool and asked == args:
                del self.asked[: index + 1]
                return call_id, text
        return None, args


_RUNS: dict[str, _Run] = {}  # by the sample's uuid (one per sample and epoch)


async def _open(state: TaskState, task_set: str, mode: str, sessions: str | None, limits: dict[str, int]) -> _Run:
    from ..api import TrialLimits, UserSettings, new_session_file, open_trial, secret_values, sessions_dir

    found = _TASK_SETS[task_set][str(state.sample_id)]
    folder = Path(sessions) if sessions else sessions_dir()
    path = new_session_file(folder, found.id, SOLVER_NAME)
    solver = {"name": SOLVER_NAME, "model": str(state.model)}
    opener = functools.partial(
        open_trial,
        found,
        path,
        secrets=secret_values(),
        solver=solver,
        code=mode == "code",
        trial_number=state.epoch,
        session_name=str(path),
        user=UserSettings().for_task(found),
    )
    # The first trial of a world builds or checks it: seconds, kept off Inspect's event loop, and
    # one at a time (two threads building one world would share its temporary file).
    trial = await anyio.to_thread.run_sync(_locked, opener)
    run = _Run(trial, TrialLimits(**limits).for_task(found))
    _RUNS[state.uuid] = run
    return run


_OPENING = threading.Lock()


def _locked(opener: Callable[[], Trial]) -> Trial:
    with _OPENING:
        return opener()


async def _finish(state: TaskState, termination: str, error: str | None = None, *, failed: bool = False) -> _Run | None:
    """Grade and close the sample's trial (once), and keep its session in the sample's store.
    `failed`: the sample ended in an error, whatever the solver had noted."""
    run = _RUNS.pop(state.uuid, None)
    if run is None:
        return None
    if failed:
        run.termination = None
    run.end(termination, error)
    assert run.termination is not None
    summary = await anyio.to_thread.run_sync(run.trial.finish, run.termination, run.error)
    summary.limits = {"max_turns": run.limits.max_turns, "max_tool_calls": run.limits.max_tool_calls}
    run.summary = summary
    session = Path(run.trial.session_name)
    if session.is_file():
        state.store.set(SESSION_KEY, session.read_text(encoding="utf-8"))
    return run


async def _cleanup(state: TaskState) -> None:
    """A trial the scorer did not finish (the sample failed or was cancelled): recorded as an
    infrastructure error, left out of the scores."""
    await _finish(state, "infra_error", "the Inspect sample ended in an error or was cancelled", failed=True)


# -- the solver --------------------------------------------------------------------------------


@solver
def ebench_agent(task_set: str, mode: str = "tools", sessions: str | None = None, max_turns: int = 30, max_tool_calls: int = 100) -> Solver:
    """ebench's model loop on a trial of the sample's task (see the module's docstring); `task_set`
    names the tasks `ebench` loaded."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run = await _open(state, task_set, mode, sessions, {"max_turns": max_turns, "max_tool_calls": max_tool_calls})
        try:
            await _converse(run, state, generate)
        except LimitExceededError as exc:
            run.end(_termination_of(exc.type), f"inspect {exc.type} limit: {exc.message}")
            raise
        except anyio.get_cancelled_exc_class():
            # Inspect cancels a sample for its time and working limits (scored after), or an
            # interrupt or the eval's end (not scored: the cleanup records an infrastructure error).
            run.end("time_limit", "stopped by Inspect (a time or working limit, or an interrupt)")
            raise
        return state

    return solve


def _termination_of(limit: str) -> str:
    """ebench's termination for an Inspect limit."""
    return {"message": "max_turns", "turn": "max_turns", "token": "context_limit", "time": "time_limit", "working": "time_limit"}.get(
        limit, "agent_error"
    )


async def _converse(run: _Run, state: TaskState, generate: Generate) -> None:
    from ..api import system_prompt

    trial = run.trial
    assert trial.task is not None
    label = trial.domain.actor_label(trial.conn, trial.task.actor)
    system = system_prompt(trial.domain, label, trial.code, asks=trial.user is not None)
    trial.message("system", system)
    trial.message("user", trial.request)
    state.messages = [ChatMessageSystem(content=system), ChatMessageUser(content=trial.request)]
    state.tools = [_tool(run, schema) for schema in trial.tool_schemas()]
    while True:
        if trial.turns >= run.limits.max_turns:
            return run.end("max_turns")
        started = time.perf_counter()
        state = await generate(state, tool_calls="none")
        trial.turns += 1
        _record_turn(run, state.output, time.perf_counter() - started)
        if not state.output.message.tool_calls:
            if state.output.stop_reason == "model_length":
                return run.end("context_limit", "the model's answer was cut at its length limit")
            reply = await _user_reply(run, state.output.message.text) if trial.user is not None else None
            if reply is None:
                return run.end("agent_stopped")
            state.messages.append(ChatMessageUser(content=reply))
            continue
        # Results whole (0: no cut), as ebench sends them: its tools page their own results, and
        # Inspect's default would cut a page at 16 KB.
        executed = await execute_tools(state.messages, state.tools, max_output=0)
        state.messages.extend(executed.messages)
        if run.termination is not None:  # a limit was reached during the calls
            return


def _record_turn(run: _Run, output: ModelOutput, seconds: float) -> None:
    """The model's message, recorded as ebench's model solver records it."""
    message = output.message
    usage = output.usage
    tokens_in = usage.input_tokens if usage else 0
    tokens_out = usage.output_tokens if usage else 0
    cost = usage.total_cost if usage else None
    run.trial.add_usage(tokens_in, tokens_out, cost)
    calls = []
    run.asked = []
    for call in message.tool_calls or []:
        text = json.dumps(call.arguments, ensure_ascii=False)
        calls.append({"id": call.id, "type": "function", "function": {"name": call.function, "arguments": text}})
        run.asked.append((call.id, call.function, call.arguments, text))
    run.trial.message(
        "assistant",
        message.text or None,
        tool_calls=calls,
        finish_reason=output.stop_reason,
        turn=run.trial.turns,
        usage={"input": tokens_in, "output": tokens_out},
        cost=cost,
        seconds=round(seconds, 4),
    )


async def _user_reply(run: _Run, text: str) -> str | None:
    """The user's answer to the agent's message (a task whose user holds facts), or the next
    turn of a scenario; None: the conversation is over."""
    reply = await run.trial.ask_user(text)
    return reply if reply is not None else run.trial.end_turn()


def _tool(run: _Run, schema: dict[str, Any]) -> ToolDef:
    """One of the trial's tools as an Inspect tool: executed on the trial (recorded in its session)
    and answered with the JSON payload ebench's own solver sends."""
    function = schema["function"]
    name = function["name"]

    async def execute(**kwargs: Any) -> str:
        trial = run.trial
        if trial.tool_calls >= run.limits.max_tool_calls:
            run.end("max_tool_calls")
            return json.dumps({"error": {"code": "max_tool_calls", "message": "The trial's tool call limit is reached."}})
        call_id, args = run.call_id(name, kwargs)
        if name == "exec_code" and trial.code:
            block = functools.partial(trial.exec_code, kwargs.get("code"), call_id=call_id, turn=trial.turns)
            result = await anyio.to_thread.run_sync(block)  # a block runs for seconds: off the event loop
        else:
            result = trial.call(name, args, call_id=call_id, turn=trial.turns)
            await trial.wait_latency()
        return json.dumps(result.for_solver(), ensure_ascii=False)

    return ToolDef(
        execute,
        name=name,
        description=function.get("description", ""),
        parameters=ToolParams.model_validate(function.get("parameters") or {}),
        parallel=False,  # one call at a time on the trial's copy, in the order the model sent them
    )


# -- the scorer --------------------------------------------------------------------------------


@scorer(metrics=[accuracy(), stderr()], name=SCORER_NAME)
def diff_grade() -> Scorer:
    """ebench's grade of the trial's changes to its world against the task's expected changes."""

    async def score(state: TaskState, target: Target) -> Score:
        run = await _finish(state, "agent_stopped")
        if run is None or run.summary is None:
            return Score(value=INCORRECT, explanation="the trial never started")
        trial, summary = run.trial, run.summary
        result = trial.final_grade
        changed = trial.final_diff.to_list() if trial.final_diff is not None else []
        return Score(
            value=CORRECT if summary.passed else INCORRECT,
            answer=f"{len(changed)} row change(s)",
            explanation=explain(result, summary.termination or "", summary.error),
            metadata={
                "task": summary.task,
                "domain": summary.domain,
                "capabilities": summary.capabilities,
                "termination": summary.termination,
                "changed_rows": changed,
                "summary": summary.to_dict(),
            },
        )

    return score


def explain(result: Grade | None, termination: str, error: str | None = None) -> str:
    """The grade in words: the verdict and counts, then each missing, unexpected and wrong-valued
    row change (the first EXPLAINED_ROWS of each), and how the trial ended."""
    lines = [result.summary() if result is not None else "not graded"]
    if result is not None:
        if result.note:
            lines.append(result.note)
        for kind, changes in (("missing", result.missing), ("unexpected", result.unexpected)):
            lines += [f"{kind}: {_change(c.to_dict())}" for c in changes[:EXPLAINED_ROWS]]
            if len(changes) > EXPLAINED_ROWS:
                lines.append(f"... and {len(changes) - EXPLAINED_ROWS} more {kind}")
        for wrong in result.wrong[:EXPLAINED_ROWS]:
            was = f" (was {wrong.old!r})" if wrong.op == "update" else ""
            lines.append(
                f"wrong: {wrong.op} {wrong.table} {_key(wrong.key)}.{wrong.column}: expected {wrong.expected!r}, got {wrong.actual!r}{was}"
            )
        if len(result.wrong) > EXPLAINED_ROWS:
            lines.append(f"... and {len(result.wrong) - EXPLAINED_ROWS} more wrong values")
    lines.append(f"ended: {termination}" + (f" ({error})" if error else ""))
    return "\n".join(lines)


def _key(key: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in key.items()) + "}"


def _change(change: dict[str, Any]) -> str:
    """A row change in one line: an insert by its values, a delete by its key, an update by its key
    and each changed column's old and new value."""
    table, op = change["table"], change["op"]
    if op == "insert":
        return f"insert {table} {_key(change.get('new') or {})}"
    if op == "delete":
        return f"delete {table} {_key(change['key'])}"
    old, new = change.get("old") or {}, change.get("new") or {}
    columns = ", ".join(f"{c} {old.get(c)!r} -> {v!r}" for c, v in new.items())
    return f"update {table} {_key(change['key'])}: {columns}"


# -- an Inspect log as an ebench run -----------------------------------------------------------


@dataclass
class Imported:
    """What `import_log` made of a log."""

    out: Path
    trials: int = 0
    passed: int = 0
    infra_errors: int = 0  # samples that failed (the trial is left out of the scores)
    without_session: int = 0  # failed before their trial opened: a results line only

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "trials": self.trials,
            "passed": self.passed,
            "infra_errors": self.infra_errors,
            "without_session": self.without_session,
        }


class LogImportError(InputError, ValueError):
    """A log that cannot be imported, or a destination that cannot take it; the message says why."""


def import_log(log: Path, out: Path) -> Imported:
    """Write the ebench run directory of an Inspect log of `ebench/ebench`: each sample's session
    (kept in its store) as `sessions/<task>/<epoch>.jsonl`, its results line, and a manifest that
    names the model, the mode, the limits and the log. `out` must be new or empty."""
    from ..api import MANIFEST, RESULTS, write_json_atomic

    evaluated = _read_log(log, out)
    samples = evaluated.samples or []
    summary = Imported(out)
    lines: list[dict[str, Any]] = []
    worlds: dict[str, str] = {}
    for sample in sorted(samples, key=lambda s: (str(s.id), s.epoch)):
        result, had_session = _sample_result(sample, out, worlds)
        summary.trials += 1
        summary.without_session += not had_session
        summary.passed += result.passed and not result.infra_error
        summary.infra_errors += result.infra_error
        lines.append(result.to_dict())
    manifest = _manifest(evaluated, log, lines, worlds)
    out.mkdir(parents=True, exist_ok=True)
    with (out / RESULTS).open("w", encoding="utf-8") as results:
        for line in lines:
            results.write(json.dumps(line, ensure_ascii=False) + "\n")
    write_json_atomic(out / MANIFEST, manifest.to_dict())
    return summary


def _read_log(log: Path, out: Path) -> Any:
    """The log, read, once it is known to be one of ebench's eval and `out` can take it."""
    from inspect_ai.log import read_eval_log

    if not log.exists():
        raise LogImportError(f"{log}: no such file")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LogImportError(f"--out {out}: not an empty folder; name a new one")
    try:
        evaluated = read_eval_log(str(log))
    except Exception as exc:  # Inspect's reader says why in its own words
        raise LogImportError(f"{log}: not a readable Inspect log: {exc}") from None
    if not any(SESSION_KEY in (s.store or {}) or _scored(s) is not None for s in evaluated.samples or []):
        raise LogImportError(f"{log}: no sample of an ebench eval (`inspect eval ebench/ebench`) in it")
    return evaluated


def _sample_result(sample: Any, out: Path, worlds: dict[str, str]) -> tuple[TrialSummary, bool]:
    """One sample's results line, its session written beside it (and its world noted in `worlds`);
    whether it had a session."""
    from ..api import SESSIONS, Termination, TrialSummary, trial_session_file

    task_id, epoch = str(sample.id), sample.epoch
    path = trial_session_file(out / SESSIONS, task_id, epoch)
    session = (sample.store or {}).get(SESSION_KEY)
    score = _scored(sample)
    recorded = (score.metadata or {}).get("summary") if score is not None else None
    relative = ""
    if isinstance(session, str):
        relative = str(path.relative_to(out))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(session, encoding="utf-8")
        start, end = _start_and_end(session)
        if start is not None and start.world and start.domain:
            worlds[f"{start.domain}:{start.world_seed}"] = str(start.world)
        if not recorded and end is not None and isinstance(end.summary, TrialSummary):
            recorded = end.summary.to_dict()
    if isinstance(recorded, dict):
        return TrialSummary.read(dict(recorded, session=relative, trial=epoch)), isinstance(session, str)
    metadata = sample.metadata or {}  # the sample failed before its trial opened
    failed = TrialSummary(
        task=task_id,
        trial=epoch,
        domain=str(metadata.get("domain", "")),
        capabilities=list(metadata.get("capabilities", [])),
        passed=False,
        termination=Termination.INFRA_ERROR,
        error=sample.error.message if sample.error is not None else "the sample has no ebench trial",
        session=relative,
        cost=None,
        solver=SOLVER_NAME,
    )
    return failed, isinstance(session, str)


def _manifest(evaluated: Any, log: Path, lines: list[dict[str, Any]], worlds: dict[str, str]) -> RunManifest:
    """The run's manifest: the model and the options the eval ran with, the tasks, the worlds."""
    from ..api import (
        RUN_FORMAT,
        RunConfig,
        RunLimits,
        RunManifest,
        SolverInfo,
        SuiteRecord,
        TaskSelection,
        TaskSet,
        __version__,
        config_hash,
    )

    params = _solver_params(evaluated)
    ids = sorted({line["task"] for line in lines})
    args = evaluated.eval.task_args or {}
    selection = {k: args[k] for k in ("split", "domain", "tasks", "tasks_dir", "capability") if args.get(k) is not None}
    config = RunConfig.model_validate(
        {
            "solver": SolverInfo(name=SOLVER_NAME, model=evaluated.eval.model),
            "code": params.get("mode") == "code",
            "limits": RunLimits(max_turns=params.get("max_turns"), max_tool_calls=params.get("max_tool_calls")),
            "tasks": TaskSelection.model_validate(selection),
            # where the run came from (a key of this import's own, kept as an extra)
            "inspect": {"log": str(log), "eval_id": evaluated.eval.eval_id, "run_id": evaluated.eval.run_id, "task": evaluated.eval.task},
        }
    )
    return RunManifest(
        format=RUN_FORMAT,
        label=f"inspect {evaluated.eval.model}",
        ebench_version=__version__,
        config=config,
        config_hash=config_hash(config.to_dict()),
        trials=max((s.epoch for s in evaluated.samples or []), default=1),
        tasks=TaskSet(count=len(ids), ids=ids),
        started=evaluated.eval.created,
        ended=evaluated.stats.completed_at or None,
        status="finished" if evaluated.status == "success" else evaluated.status,
        suite=SuiteRecord(
            version=str(evaluated.eval.task_version) if evaluated.eval.task_version else None,
            worlds=dict(sorted(worlds.items())),
        ),
    )


def _scored(sample: Any) -> Score | None:
    """The sample's ebench grade, if it was scored."""
    scores = sample.scores or {}
    score = scores.get(SCORER_NAME)
    return score if isinstance(score, Score) else None


def _solver_params(evaluated: Any) -> dict[str, Any]:
    """The options the eval's ebench solver ran with (mode, limits), as Inspect logged them."""
    for step in evaluated.plan.steps if evaluated.plan else []:
        if str(step.solver).endswith("ebench_agent"):
            return dict(step.params or {})
    return {}


def _start_and_end(session: str) -> tuple[StartEvent | None, EndEvent | None]:
    """A session's start and end events (None when missing or unreadable)."""
    from ..api import EndEvent, StartEvent, event_from

    lines = session.splitlines()

    def event(line: str | None) -> Any:
        try:
            value = json.loads(line) if line else None
        except ValueError:
            return None
        return event_from(value)[0] if isinstance(value, dict) else None

    start, end = event(lines[0] if lines else None), event(lines[-1] if lines else None)
    return start if isinstance(start, StartEvent) else None, end if isinstance(end, EndEvent) else None


def _suite_version(folder: Path) -> str | None:
    from ..api import suite_version

    return suite_version(folder)
