"""`ebench play` and `ebench replay`: the Textual app. Arguments are checked here, before the app
starts, so a wrong task id or run folder is a one-line error rather than a broken screen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from . import common

if TYPE_CHECKING:
    from ..app.app import ScreenFactory
    from ..sessions.solvers.base import Solver

THEME_OPTION = typer.Option(
    None,
    "--theme",
    help="ebench-dark, ebench-light, ebench-contrast, a Textual theme, or one of yours in <data dir>/themes/*.toml; "
    "for this run only. Default: the theme last chosen in the app (F10), else ebench-dark.",
)

# `ebench play --web` listens on this machine only unless told otherwise: the app can write files in the data directory.
DEFAULT_WEB_HOST, DEFAULT_WEB_PORT = "127.0.0.1", 8000
# Each browser tab is one `ebench play` process: a few are enough for a person, and a page cannot start hundreds.
DEFAULT_MAX_TABS = 3


def launch(start: ScreenFactory | None, theme: str | None) -> None:
    """Run the app on `start` (a screen factory; None opens the task browser)."""
    from ..app.app import EBenchApp
    from ..paths import data_dir

    EBenchApp(start, theme=theme, home=data_dir()).run()


def serve_web(play_args: list[str], host: str, port: int, max_tabs: int = DEFAULT_MAX_TABS) -> None:
    """`ebench play --web`: serve `ebench play <play_args>` until Ctrl+C; an address that cannot be used is a usage error."""
    from ..app.web import WebServeError, serve

    try:
        serve(play_args, host, port, max_tabs)
    except WebServeError as exc:
        common.fail(str(exc), 2)


def check_theme(theme: str | None) -> None:
    """An unknown --theme is a usage error listing the themes (before any world is built)."""
    if theme is None:
        return
    from ..app.app import EBenchApp
    from ..paths import data_dir

    available = EBenchApp(None, home=data_dir()).available_themes
    if theme not in available:
        common.fail(f"unknown theme {theme!r}; available: {', '.join(sorted(available))}", 2)


def play_command(
    task_id: str | None = typer.Option(None, "--task", help="Open this task's solve screen directly."),
    code: bool = typer.Option(False, "--code", help="Code mode: an exec_code editor runs Python that calls the tools."),
    blind: bool = typer.Option(
        False,
        "--blind",
        help="Human baseline: the expected diff stays hidden until submit; the attempt is timed and recorded as solver 'human'.",
    ),
    model: str | None = typer.Option(
        None, "--model", help="Watch this model (a litellm model string) solve the task, with pause and step."
    ),
    api_base: str | None = typer.Option(None, "--api-base", help="The model API's base URL."),
    model_arg: list[str] = typer.Option([], "--model-arg", help="key=value passed to the model call; repeatable."),
    oracle: bool = typer.Option(False, "--oracle", help="Watch the reference solution being played, call by call."),
    as_user: bool = typer.Option(
        False, "--as-user", help="With --model: you play the user, answering the model's questions (tasks with a user profile)."
    ),
    speed: float | None = typer.Option(
        None,
        "--speed",
        min=0,
        help="With --model or --oracle: steps per second once running (0: full speed). Watching starts paused either way (p runs).",
    ),
    tasks_dir: Path | None = typer.Option(
        None,
        "--tasks-dir",
        help="Tasks from this folder (<domain>/<id>.json, or task files side by side) or JSONL file instead of the shipped suite.",
    ),
    split: str | None = common.SPLIT_OPTION,
    theme: str | None = THEME_OPTION,
    web: bool = typer.Option(False, "--web", help="Serve the app as a web page instead: each browser tab runs its own app."),
    host: str = typer.Option(DEFAULT_WEB_HOST, "--host", help="With --web: the address to listen on."),
    port: int = typer.Option(DEFAULT_WEB_PORT, "--port", min=1, max=65535, help="With --web: the port to listen on."),
    max_tabs: int = typer.Option(
        DEFAULT_MAX_TABS, "--max-tabs", min=1, help="With --web: at most this many tabs (app processes) at once; more are refused."
    ),
) -> None:
    """The app: browse the tasks, solve one yourself, or watch a model or the oracle solve it.

    Trials work on a private copy of the world, never the world itself. No API key is needed unless a model is watched.
    With --web the same app is served at http://HOST:PORT for a browser, to whoever opens the URL printed with its token
    (?token=...); Ctrl+C stops the server."""
    check_theme(theme)
    _check_watch_flags(task_id, code=code, blind=blind, model=model, oracle=oracle, as_user=as_user, speed=speed)
    tasks_dir = common.tasks_folder(tasks_dir, split)
    _check_web_flags(web, host, port, max_tabs)
    task = None
    if task_id is not None:
        task = common.task(task_id, tasks_dir)
        common.world(common.domain(task.domain))  # built (with progress) before the app takes the screen
    if web:
        from .run import parse_model_args

        parse_model_args(model_arg)  # a malformed pair is said here, not in every browser tab
        valued_options = {
            "--task": task_id,
            "--tasks-dir": str(tasks_dir.resolve()) if tasks_dir else None,
            "--model": model,
            "--api-base": api_base,
            "--theme": theme,
            "--speed": None if speed is None else f"{speed:g}",
        }
        flags = {"--code": code, "--blind": blind, "--oracle": oracle, "--as-user": as_user}
        serve_web(_web_play_args(valued_options, model_arg, flags), host, port, max_tabs)
        return
    if task is None:
        from ..app.screens.browser import BrowserScreen

        launch(lambda: BrowserScreen(tasks_dir=tasks_dir), theme)
        return
    watcher = _watcher(model, api_base, model_arg) if model or oracle else None
    from ..app.screens.solve import SolveScreen
    from ..sessions.watch import DEFAULT_SPEED

    rate = DEFAULT_SPEED if speed is None else speed or None  # 0: no limit
    if as_user and not task.user_profile:
        common.fail(f"--as-user: {task.id} has no user profile, so the model has nothing to ask (try a task of the ask split)", 2)
    launch(lambda: SolveScreen(task, code=code, blind=blind, watcher=watcher, speed=rate, play_user=as_user), theme)


def _check_watch_flags(
    task_id: str | None, *, code: bool, blind: bool, model: str | None, oracle: bool, as_user: bool, speed: float | None
) -> None:
    """The options that solve or watch one task: each needs the task, and some exclude others."""
    if (model or oracle or blind or code) and not task_id:
        common.fail("--code, --blind, --model and --oracle apply to one task: add --task ID", 2)
    if model and oracle:
        common.fail("watch either --model or --oracle, not both", 2)
    if blind and (model or oracle):
        common.fail("--blind is for a person solving; it does not combine with --model or --oracle", 2)
    if as_user and not model:
        common.fail("--as-user is for watching a model: add --model", 2)
    if speed is not None and not (model or oracle):
        common.fail("--speed applies to watching: add --model or --oracle", 2)


def _check_web_flags(web: bool, host: str, port: int, max_tabs: int) -> None:
    if not web and (host, port) != (DEFAULT_WEB_HOST, DEFAULT_WEB_PORT):
        common.fail("--host and --port apply to --web", 2)
    if not web and max_tabs != DEFAULT_MAX_TABS:
        common.fail("--max-tabs applies to --web", 2)


def _web_play_args(valued_options: dict[str, str | None], model_arg: list[str], flags: dict[str, bool]) -> list[str]:
    """Each tab runs `ebench play` with the same options (the folder made absolute), without --web."""
    play_args = [part for name, value in valued_options.items() if value is not None for part in (name, value)]
    play_args += [part for pair in model_arg for part in ("--model-arg", pair)]
    play_args += [flag for flag, on in flags.items() if on]
    return play_args


def _watcher(model: str | None, api_base: str | None, model_arg: list[str]) -> Solver:
    """The solver watched on the solve screen: the model when one is named, else the oracle."""
    from ..sessions.solvers.base import SolverOptions
    from .run import chosen_solver, parse_model_args

    # A watched model retries less than a batch: a person is waiting on the screen.
    options = SolverOptions(model=model, api_base=api_base, model_args=parse_model_args(model_arg), retries=2, backoff=1.0)
    return chosen_solver("llm" if model else "oracle", options)


def replay_command(
    source: Path = typer.Argument(
        ...,
        metavar="RUN_DIR|SESSION_FILE|SESSIONS_DIR",
        help="A run directory, a sessions folder (e.g. <data dir>/sessions) or one session file.",
        show_default=False,
    ),
    failed: bool = typer.Option(False, "--failed", help="List only the failed trials."),
    theme: str | None = THEME_OPTION,
) -> None:
    """The replay debugger: step through recorded trials with the database rebuilt at every step."""
    check_theme(theme)
    from ..sessions.record import SessionFileError, read_session
    from ..sessions.runs import RunError, load_runs

    if not source.exists():
        common.fail(f"{source}: no such file or folder", 2)
    if source.is_file():
        try:
            common.warn(read_session(source).warnings)
        except SessionFileError as exc:
            common.fail(str(exc), 2)
        runs = None
    else:
        try:
            runs = load_runs(source)
        except RunError as exc:
            common.fail(str(exc), 2)
        common.warn([w for run in runs for w in run.warnings])
    from ..app.screens.replay import ReplayScreen

    launch(lambda: ReplayScreen(source, runs=runs, failed=failed), theme)


def report_app(paths: list[Path], theme: str | None) -> None:
    """`ebench report RUN... --app`: the run results screen (runs already checked by the caller)."""
    from ..app.screens.results import ResultsScreen

    launch(lambda: ResultsScreen(paths), theme)
