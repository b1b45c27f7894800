"""`ebench run`: score a solver on tasks (`--batch`), or watch one trial, and `ebench regrade`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import EXIT_INTERRUPTED
from ..sessions.solvers.registry import builtin_solver_names
from . import common
from .common import JSON_OPTION, console, fail, print_json

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from rich.console import Console

    from ..sessions.batch import Batch, Progress
    from ..sessions.events import SessionEvent
    from ..sessions.perturb import Perturbation
    from ..sessions.record import SessionWriter
    from ..sessions.results import TrialSummary
    from ..sessions.solvers.base import Solver, SolverOptions
    from ..sessions.trial import TrialLimits
    from ..sessions.users import UserSettings
    from ..tasks.spec import Task


def parse_model_args(items: list[str]) -> dict[str, Any]:
    """`key=value` pairs; values are read as JSON when they parse (0.2, true, {"a": 1}), else as text."""
    args: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--model-arg {item!r}: expected key=value", 2)
        try:
            args[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            args[key.strip()] = value
    return args


def chosen_solver(name: str, options: SolverOptions) -> Solver:
    """The registered solver `name` built from `options`. What stops it (an unknown name, options
    it cannot use, a broken plug-in) is an EBenchError: one line and its exit code, 2, from the
    root command (common.OneLineErrors)."""
    from ..sessions.solvers.registry import build_solver

    return build_solver(name, options)


def select_tasks(domain: str | None, task_ids: list[str], capability: str | None, tasks_dir: Path | None) -> list[Task]:
    from ..tasks.suite import load_suite

    capability = common.capability(capability)
    report = load_suite(tasks_dir, domain, capability, task_ids)
    common.warn([str(error) for error in report.errors], "skipped")
    missing = sorted(set(task_ids) - {t.id for t in report.tasks})
    if missing:
        fail(
            f"unknown task id(s): {', '.join(missing[:10])}"
            + (" (or filtered out by --domain/--capability)" if domain or capability else ""),
            2,
        )
    if not report.tasks:
        fail("no task matches the selection", 2)
    check_worlds(report.tasks)
    return report.tasks


def _shipped_scenarios() -> str:
    from ..tasks.scenarios import SCENARIOS_DIR

    return str(SCENARIOS_DIR)


def select_scenarios(domain: str | None, ids: list[str], capability: str | None, folder: Path | None) -> list[Task]:
    """The scenarios chosen, each as the task a trial runs (`Scenario.as_task`)."""
    from ..tasks.scenarios import load_scenarios

    if capability:
        fail("--capability selects tasks, not scenarios", 2)
    if folder is not None and not folder.is_dir():
        fail(f"--tasks-dir {folder}: not a directory", 2)
    if domain:
        common.domain(domain)
    found, errors = load_scenarios(folder, domain, ids or None)
    common.warn([str(error) for error in errors], "skipped")
    missing = sorted(set(ids) - {s.id for s in found})
    if missing:
        fail(f"unknown scenario id(s): {', '.join(missing[:10])}", 2)
    if not found:
        fail("no scenario matches the selection", 2)
    tasks = [scenario.as_task() for scenario in found]
    check_worlds(tasks)
    return tasks


def check_worlds(tasks: Iterable[Task]) -> None:
    """Refuse tasks made on a world this ebench does not build, before any trial starts."""
    from ..tasks.worlds import WorldMismatch, check_world

    bad = []
    for task in tasks:
        try:
            check_world(task)
        except WorldMismatch as exc:
            bad.append(str(exc))
    if bad:
        more = f" (and {len(bad) - 1} more task(s) like it)" if len(bad) > 1 else ""
        fail(bad[0] + more, 2)


def run_command(
    batch: bool = typer.Option(False, "--batch", help="Run every selected task x --trials headless, into a run directory."),
    solver_name: str = typer.Option(
        "llm", "--solver", help=f"A registered solver: {' | '.join(builtin_solver_names())}, or a plug-in's (ebench.solvers entry point)."
    ),
    model: str | None = typer.Option(None, "--model", help="A litellm model string (openai/gpt-4o, anthropic/..., ollama/...)."),
    api_base: str | None = typer.Option(None, "--api-base", help="The API's base URL (an OpenAI-compatible server, a proxy)."),
    model_arg: list[str] = typer.Option(
        [], "--model-arg", help="key=value passed to the model call (temperature=0, reasoning_effort=high); repeatable."
    ),
    price_in: float | None = typer.Option(None, "--price-in", help="USD per million input tokens (for models litellm does not price)."),
    price_out: float | None = typer.Option(None, "--price-out", help="USD per million output tokens."),
    prices: Path | None = typer.Option(None, "--prices", help='A JSON file {"model": {"input": USD/M, "output": USD/M}}.'),
    replay_from: Path | None = typer.Option(None, "--replay-from", help="With --solver replay: a run directory or session file."),
    trials: int = typer.Option(1, "--trials", min=1, help="Trials per task."),
    code: bool = typer.Option(False, "--code", help="Code mode: the solver also has exec_code."),
    domain: str | None = typer.Option(None, "--domain", help="Only this domain's tasks."),
    task: list[str] = typer.Option([], "--task", help="Only these task ids (repeatable)."),
    capability: str | None = typer.Option(None, "--capability", help="Only tasks with this capability."),
    tasks_dir: Path | None = typer.Option(
        None,
        "--tasks-dir",
        help="Tasks from this folder (<domain>/<id>.json, or task files side by side) or JSONL file instead of the shipped suite.",
    ),
    split: str | None = common.SPLIT_OPTION,
    scenarios: bool = typer.Option(
        False,
        "--scenarios",
        help="Run scenarios (conversations of several turns on one world copy) instead of tasks; --tasks-dir: their folder.",
    ),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Trials running at once (in all, over every worker)."),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        help="Processes running the batch, each with its own event loop (default: the machine's cores; 1 below 32 trials).",
    ),
    executor: str = typer.Option("local", "--executor", help="local (this machine) or ray (a Ray cluster: pip install 'ebench\\[ray]')."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="With --executor ray: the cluster's address (default: RAY_ADDRESS, else a local Ray started here)."
    ),
    out: Path | None = typer.Option(None, "--out", help="The run directory (default: a new one under the data directory)."),
    label: str | None = typer.Option(None, "--label", help="The run's name in reports (default: the model or solver)."),
    force: bool = typer.Option(False, "--force", help="Continue a run directory whose configuration differs."),
    max_turns: int = typer.Option(30, "--max-turns", min=1, help="Model turns per trial."),
    max_tool_calls: int = typer.Option(100, "--max-tool-calls", min=1, help="Top-level tool calls per trial."),
    trial_timeout: float = typer.Option(
        600.0, "--trial-timeout", min=1, help="Seconds of wall time per trial, not counting waits on the model's API."
    ),
    retries: int = typer.Option(6, "--retries", min=0, help="Retries of a transient API error (rate limit, 5xx, timeout)."),
    backoff: float = typer.Option(1.0, "--backoff", min=0, help="First retry delay in seconds, doubled each retry."),
    user: str = typer.Option(
        "scripted", "--user", help="Who answers a task's questions (tasks with a user profile): scripted, or llm (--user-model)."
    ),
    user_model: str | None = typer.Option(None, "--user-model", help="With --user llm: the litellm model that plays the user."),
    user_api_base: str | None = typer.Option(None, "--user-api-base", help="With --user llm: that model's API base URL."),
    perturb: list[str] = typer.Option(
        [],
        "--perturb",
        help="Perturb what the solver meets: FAMILY or FAMILY:SUBTYPE, repeatable (interface, intent, output, runtime; "
        "see the README's Perturbations).",
    ),
    perturb_seed: int = typer.Option(0, "--perturb-seed", min=0, help="The seed of --perturb: the same seed, the same perturbation."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Score a solver on tasks ([bold]--batch[/]), or run one task and watch its trace."""
    from ..sessions.solvers.base import SolverOptions
    from ..sessions.trial import TrialLimits

    options = SolverOptions(
        model=model,
        api_base=api_base,
        model_args=parse_model_args(model_arg),
        price_in=price_in,
        price_out=price_out,
        prices=prices,
        replay_from=replay_from,
        retries=retries,
        backoff=backoff,
    )
    the_solver = chosen_solver(solver_name, options)
    perturbation = _perturbation(perturb, perturb_seed, code)
    if scenarios and "intent" in perturbation.families:
        fail("--perturb intent rewords one request: it does not apply to --scenarios (their turns are messages of their own)", 2)
    user_settings = _user_settings(user, user_model, user_api_base)
    if split is not None and scenarios:
        fail("--split names a set of tasks; --scenarios runs the shipped scenarios (or --tasks-dir's)", 2)
    tasks_dir = common.tasks_folder(tasks_dir, split)
    tasks = select_scenarios(domain, task, capability, tasks_dir) if scenarios else select_tasks(domain, task, capability, tasks_dir)
    tasks = _replayable(the_solver, tasks)
    limits = TrialLimits(max_turns=max_turns, max_tool_calls=max_tool_calls, timeout=trial_timeout)
    if not batch:
        if len(tasks) != 1 or trials != 1:
            fail("without --batch, run one trial of one task (--task ID); use --batch for more", 2)
        _watch(the_solver, tasks[0], code, limits, as_json, user_settings, perturb=perturbation)
        return
    selection = {
        **({"scenarios": True} if scenarios else {}),
        "dir": str(tasks_dir.resolve()) if tasks_dir else _shipped_scenarios() if scenarios else None,
        "domain": domain,
        "capability": capability,
        "ids": sorted(task) or None,
    }
    run_label = label or model or solver_name
    if out is None:
        out = _new_run_dir(run_label)
    _check_executor(executor, ray_address, workers)
    where = {"workers": workers, "executor": executor, "ray_address": ray_address}
    _batch(
        the_solver,
        tasks,
        trials,
        code,
        limits,
        selection,
        run_label,
        out,
        force,
        concurrency,
        as_json,
        where,
        user_settings,
        perturb=perturbation,
    )


def _replayable(solver: Solver, tasks: list[Task]) -> list[Task]:
    """With --solver replay, only the tasks it has a recorded session of."""
    from ..sessions.solvers.simple import ReplaySolver

    if not isinstance(solver, ReplaySolver):
        return tasks
    tasks = [t for t in tasks if t.id in set(solver.task_ids)]
    if not tasks:
        fail("none of the selected tasks has a recorded session to replay", 2)
    return tasks


def _new_run_dir(label: str) -> Path:
    """A new run directory under the data directory, named by the time and the label."""
    from ..paths import runs_dir

    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in label)
    return runs_dir() / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}"


def _check_executor(executor: str, ray_address: str | None, workers: int | None) -> None:
    if executor not in ("local", "ray"):
        fail(f"--executor {executor!r}: expected local or ray", 2)
    if ray_address and executor != "ray":
        fail("--ray-address is for --executor ray", 2)
    if executor == "ray" and workers is not None:
        fail("--workers is for --executor local: on Ray, the cluster's CPUs decide", 2)


def _perturbation(values: list[str], seed: int, code: bool) -> Perturbation:
    """--perturb and --perturb-seed, checked (a usage error in one line)."""
    from ..sessions.perturb import PerturbError, parse_perturb

    try:
        perturbation = parse_perturb(values, seed)
        perturbation.check_mode(code)
    except PerturbError as exc:
        fail(f"--perturb: {exc}", 2)
    return perturbation


def _user_settings(kind: str, model: str | None, api_base: str | None) -> UserSettings:
    from ..sessions.users import UserSettings

    if kind not in ("scripted", "llm"):
        fail(f"--user {kind!r}: expected scripted or llm", 2)
    if kind == "llm" and not model:
        fail("--user llm needs --user-model (any litellm model string)", 2)
    if kind == "scripted" and (model or api_base):
        fail("--user-model and --user-api-base are for --user llm", 2)
    return UserSettings(kind=kind, model=model, api_base=api_base)  # type: ignore[arg-type]


def _batch(
    solver: Solver,
    tasks: list[Task],
    trials: int,
    code: bool,
    limits: TrialLimits,
    selection: dict[str, Any],
    label: str,
    out: Path,
    force: bool,
    concurrency: int,
    as_json: bool,
    where: dict[str, Any],
    user: UserSettings,
    perturb: Perturbation | None = None,
) -> None:
    from ..sessions.batch import Batch, Progress
    from ..sessions.executors import default_workers
    from ..sessions.runs import RunError

    batch = Batch(out, tasks, solver, trials, code, limits, selection, label, force, user, **({"perturb": perturb} if perturb else {}))
    batch.keep_summaries = False  # the progress counts the trials; results.jsonl keeps them
    try:
        batch.prepare()
    except RunError as exc:
        fail(str(exc), 2)
    common.warn(batch.warnings)
    err = console() if not as_json else None
    progress = Progress(total=len(batch.todo))
    if err and batch.kept:
        err.print(f"Resuming {out}: {batch.kept} trial(s) already finished, {len(batch.todo)} to run.", markup=False)
    workers: int = where["workers"] or default_workers(len(batch.todo))
    if where["executor"] == "ray":  # connected and its workers readied before the clock starts: a local Ray takes seconds
        _ready_ray(batch, where["ray_address"], err)
    local_pool = where["executor"] == "local" and workers > 1 and len(batch.todo) > 1
    workers = min(workers, len(batch.todo)) if local_pool else 1 if where["executor"] == "local" else workers
    started = time.perf_counter()
    status = _execute(batch, progress, concurrency, workers if local_pool else None, as_json, where)
    batch.finish(status)
    seconds = time.perf_counter() - started
    summary = {
        "run": str(out),
        "status": status,
        "trials_run": progress.done,
        "trials_kept": batch.kept,
        "trials_left": len(batch.todo) - progress.done,
        "passed": progress.passed,
        "scored": progress.scored,
        "infra_errors": progress.infra,
        "tokens": progress.tokens,
        "cost": None if progress.cost_unknown else round(progress.cost, 6),
        "seconds": round(seconds, 2),
        "executor": where["executor"],
        "workers": workers if where["executor"] == "local" else None,
    }
    if as_json:
        print_json(summary)
    else:
        _print_summary(summary, out)
    if status == "interrupted":
        raise typer.Exit(EXIT_INTERRUPTED)
    if progress.done and progress.infra == progress.done:
        fail(
            f"every trial that ran ({progress.done}) ended in an infrastructure error, so nothing was scored; "
            f"the sessions in {out} say why, and running the same command again retries them",
            1,
        )


def _ready_ray(batch: Batch, address: str | None, err: Console | None) -> None:
    """Connect to Ray and ready its workers (imports, worlds); a failure releases the run and is one line."""
    from ..sessions.executors import ExecutorError, connect_ray, warm_ray

    try:
        connect_ray(address)
        if err:
            err.print("Readying the Ray workers (imports, worlds)...")
        warm_ray(batch.runner, batch.manifest["suite"]["worlds"])
    except ExecutorError as exc:
        batch.lock.release()
        fail(str(exc), 2)


def _execute(batch: Batch, progress: Progress, concurrency: int, pool_workers: int | None, as_json: bool, where: dict[str, Any]) -> str:
    """Run the batch's trials under the progress bar (on a pool of `pool_workers` processes when
    given): the run's status, finished or interrupted; what stops it is recorded and one line."""
    from ..sessions.executors import ExecutorError
    from ..sessions.solvers.base import FatalSolverError

    status = "finished"
    pool = None
    try:
        # Before the bar's thread: forked workers start at once.
        pool = batch.worker_pool(pool_workers) if pool_workers is not None else None
        with _progress_bar(progress, quiet=as_json) as on_trial:
            batch.execute(concurrency, on_trial, pool=pool, executor=where["executor"], ray_address=where["ray_address"])
    except KeyboardInterrupt:
        status = "interrupted"
    except ExecutorError as exc:
        batch.finish("failed")
        fail(f"{exc}; {progress.done} trial(s) were kept: run the same command again to resume", 1)
    except FatalSolverError as exc:
        batch.finish("failed")
        fail(
            f"{exc}; the run stopped with {progress.done} trial(s) kept: fix the configuration and run the same command again to resume", 1
        )
    except OSError as exc:  # a full disk or a folder that became unwritable: what is recorded stays
        try:
            batch.finish("failed")
        except OSError:
            batch.lock.release()
        common.fail_os(exc, f" ({progress.done} trial(s) of this session were kept)")
    finally:
        if pool is not None:
            pool.close()
    return status


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    out_console = console()
    rate = f"{summary['passed'] / summary['scored']:.1%}" if summary["scored"] else "-"
    cost = "unknown" if summary["cost"] is None else f"${summary['cost']:.4f}"
    if summary["status"] == "interrupted":
        out_console.print(
            f"[yellow]Interrupted.[/] {summary['trials_run']} trial(s) finished and kept, "
            f"{summary['trials_left']} left: run the same command again to resume."
        )
    out_console.print(
        f"Ran {summary['trials_run']} trial(s) in {summary['seconds']:.1f} s: {summary['passed']}/"
        f"{summary['scored']} passed ({rate}), {summary['infra_errors']} infrastructure error(s) "
        f"left out of the scores; {summary['tokens']:,} tokens, cost {cost}."
    )
    out_console.print(f"Run directory: {out}\nReport: ebench report {out}", markup=False)  # a path is not markup


class _progress_bar:
    """A rich progress bar on stderr (trials, pass rate so far, tokens, cost, ETA), or nothing."""

    def __init__(self, progress: Progress, quiet: bool) -> None:
        self.progress = progress
        self.quiet = quiet

    def __enter__(self) -> Callable[[TrialSummary], None]:
        if self.quiet:
            return self.progress.add
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.bar = Progress(
            TextColumn("[bold]trials"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.bar.start()
        self.task = self.bar.add_task("trials", total=self.progress.total, stats=self._stats())

        def on_trial(summary: TrialSummary) -> None:
            self.progress.add(summary)
            self.bar.update(self.task, advance=1, stats=self._stats())

        return on_trial

    def _stats(self) -> str:
        p = self.progress
        rate = f"{p.pass_rate:.1%}" if p.pass_rate is not None else "-"
        cost = f"${p.cost:.4f}" + ("+?" if p.cost_unknown else "")
        infra = f" infra {p.infra}" if p.infra else ""
        return f"pass {rate} ({p.passed}/{p.scored}){infra} tokens {p.tokens:,} cost {cost}"

    def __exit__(self, *exc: object) -> None:
        if not self.quiet:
            self.bar.stop()


def _watch(
    solver: Solver, task: Task, code: bool, limits: TrialLimits, as_json: bool, user: UserSettings, perturb: Perturbation | None = None
) -> None:
    """One trial with its events printed as they happen; recorded in the data directory's sessions."""
    import asyncio
    from functools import partial

    from ..paths import sessions_dir
    from ..sessions.record import new_session_file, secret_values
    from ..sessions.solvers.base import FatalSolverError
    from ..sessions.trial import open_trial

    path = new_session_file(sessions_dir(), task.id, solver.name)
    echo = partial(_echo_writer, quiet=as_json)
    trial = open_trial(
        task,
        path,
        secrets=secret_values(solver.config()),
        writer=echo,
        solver=solver.config(),
        code=code,
        session_name=str(path),
        user=user.for_task(task),
        perturb=perturb or None,
    )
    limits = limits.for_task(task)
    try:
        outcome = asyncio.run(solver.solve(trial, limits))
    except KeyboardInterrupt:
        trial.close()
        fail(f"interrupted; the partial session is in {path}", 130)
    except FatalSolverError as exc:
        trial.close()
        fail(str(exc), 1)
    summary = trial.finish(outcome.termination, outcome.error)
    summary.limits = {"max_turns": limits.max_turns, "max_tool_calls": limits.max_tool_calls}
    if as_json:
        print_json({**summary.to_dict(), "session": str(path)})
    else:
        from ..terminal import markup_escaped

        verdict = "[green]PASS[/]" if summary.passed else "[red]FAIL[/]"
        console().print(
            f"{verdict} {task.id}: {summary.termination}; {summary.tool_calls} call(s), {summary.turns} turn(s). "
            f"Session: {markup_escaped(str(path))}"
        )


def _echo_writer(path: Path, secrets: list[str], quiet: bool) -> SessionWriter:
    """A SessionWriter that also prints each event in one line (for `ebench run` of one task)."""
    from ..sessions.record import SessionWriter

    class EchoWriter(SessionWriter):
        def write(self, event: SessionEvent | str, **data: Any) -> SessionEvent:
            written = super().write(event, **data)
            if not quiet:
                _echo(written)
            return written

    return EchoWriter(path, secrets)


def _echo(event: SessionEvent) -> None:
    from ..sessions.describe import shown_args
    from ..sessions.events import ApiErrorEvent, MessageEvent, ToolCallEvent
    from ..terminal import markup_escaped as escape  # the model's and the tools' text, shown, never obeyed

    if isinstance(event, ToolCallEvent):
        mark = "[green]ok[/]" if event.ok else f"[red]{escape(str(event.error_code))}[/]"
        indent = "    " if event.parent else ""
        args = json.dumps(shown_args(event.args), ensure_ascii=False)[:160]
        console().print(f"{indent}[cyan]{escape(str(event.tool))}[/] {escape(args)} {mark}")
    elif isinstance(event, MessageEvent) and event.role == "assistant" and event.content:
        console().print(f"[bold]model:[/] {escape(str(event.content)[:400])}")
    elif isinstance(event, MessageEvent) and event.role == "user" and event.user:
        console().print(f"[bold]user ({escape(event.user)}):[/] {escape(str(event.content)[:400])}")
    elif isinstance(event, ApiErrorEvent):
        console().print(f"[yellow]api error[/] {escape(str(event.error))}")


def regrade_command(
    run: Path = typer.Argument(..., help="A run directory."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Grade every session of a run again from its recorded diff, against the current task files."""
    from ..sessions.regrade import RegradeError, regrade_run

    try:
        report = regrade_run(run)
    except RegradeError as exc:
        fail(str(exc), 2)
    if as_json:
        print_json(report)
        return
    from ..terminal import markup_escaped  # task ids and problems quote the run's files

    out = console()
    out.print(f"Regraded {report['regraded']} session(s) of {run}: {report['changed']} verdict(s) changed, {report['skipped']} skipped.")
    for change in report["changes"]:
        out.print(
            f"  {markup_escaped(str(change['task']))} trial {change['trial']}: {'pass' if change['was'] else 'fail'} -> {'pass' if change['now'] else 'fail'}"
        )
    for problem in report["problems"]:
        out.print(f"  [yellow]skipped[/] {markup_escaped(problem)}")
