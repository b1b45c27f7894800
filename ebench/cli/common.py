"""What every command shares: one-line errors, JSON output, the domain and world lookups.

Only typer, the standard library and ebench.errors (which imports nothing) are imported at module
level (see ebench/cli/__init__.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from typer.core import TyperGroup

# The exit codes (README, "Commands") are defined with the errors that carry them.
from ..errors import EXIT_ENVIRONMENT as EXIT_ENVIRONMENT  # re-exported: the commands name it common.EXIT_ENVIRONMENT
from ..errors import EXIT_INTERRUPTED, EBenchError, os_error_exit_code, os_error_message

if TYPE_CHECKING:  # for the annotations only: the command line stays cheap to start
    from rich.console import Console

    from ..engine.domain import Domain
    from ..engine.fill import TableFill
    from ..engine.tools import ToolEnv
    from ..engine.world import BuildReport
    from ..sessions.runs import RunData
    from ..tasks.spec import Task

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")


SPLIT_OPTION = typer.Option(
    None, "--split", help="A shipped task set: suite (the default, 323 tasks), ask (the user holds facts) or composed (new structure)."
)


def tasks_folder(tasks_dir: Path | None, split: str | None) -> Path | None:
    """The tasks `--tasks-dir` (a folder of domain folders, a flat folder of task files, or a JSONL
    file) or `--split` names (None: the default suite), or a one-line error."""
    from ..tasks.suite import SPLITS, NoTasks, check_task_source, shipped_splits

    if split is None:
        if tasks_dir is not None:
            try:
                check_task_source(tasks_dir)
            except NoTasks as exc:
                fail(f"--tasks-dir {exc}", 2)
        return tasks_dir
    if tasks_dir is not None:
        fail("--split and --tasks-dir both name the tasks: give one", 2)
    if split not in SPLITS:
        fail(f"--split {split!r}: one of {', '.join(SPLITS)}", 2)
    found = shipped_splits().get(split)
    if found is None:
        fail(f"--split {split}: this install has no such split", 2)
    return found


def fail(message: str, code: int = 1) -> NoReturn:
    from rich.console import Console

    from ..terminal import markup_escaped

    # One line, however long; a message may quote a file or a model, so it is made printable.
    Console(stderr=True, highlight=False, emoji=False, soft_wrap=True).print(f"[bold red]error:[/] {markup_escaped(message)}")
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    from ..terminal import printable_json

    sys.stdout.write(printable_json(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n")


def console() -> Console:
    from rich.console import Console

    # No emoji codes either: ":x:" in a model's text is shown as written, not as a picture.
    return Console(highlight=False, emoji=False)


def domain(name: str) -> Domain:
    """The domain called `name`: UnknownDomain, or PluginError for an installed domain package
    that cannot be loaded, are one line (exit 2) from the root command."""
    from ..engine.domain_registry import get_domain

    return get_domain(name)


def domains(name: str | None) -> list[Domain]:
    """The domain named, or every domain that loads: a broken plug-in is a warning, and skipped."""
    from ..engine.domain_registry import loaded_domains

    return [domain(name)] if name else loaded_domains()


def world(domain: Domain, quiet: bool = False, seed: int | None = None) -> Path:
    """The path of the domain's world for `seed` (default: the domain's own), building it first
    (with progress) when missing or stale. Each seed is its own file."""
    from ..engine.world import world_path, world_state

    state = world_state(domain, seed)
    if state == "damaged":  # never used: said, then rebuilt
        sys.stderr.write(
            f"note: the {domain.name} world at {world_path(domain, seed)} is damaged (its bytes changed "
            "since it was built); rebuilding it\n"
        )
    if state != "current":
        build_with_progress([domain], seed, quiet=quiet)
    return world_path(domain, seed)


def build_with_progress(domains: list[Domain], seed: int | None, quiet: bool = False) -> list[BuildReport]:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ..engine.world import build_world

    reports = []
    out = console() if not quiet else None
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[table]}"),
        TimeElapsedColumn(),
        console=out,
        disable=quiet,
        transient=True,
    ) as progress:
        for domain in domains:
            task = progress.add_task(f"building {domain.name}", total=len(domain.schema.tables) + 1, table="")

            def on_table(fill: TableFill, task: Any = task) -> None:
                progress.update(task, advance=1, table=f"{fill.table} ({fill.rows} rows)")

            progress.update(task, table="schema")
            try:
                report = build_world(domain, seed, on_table=on_table)
            except Exception as exc:  # a failed build is an expected, explainable outcome
                from ..engine.fill import FillError
                from ..engine.repair import RepairError
                from ..engine.world import WorldError

                if isinstance(exc, (FillError, RepairError, WorldError)):
                    fail(f"building {domain.name} failed: {exc}")
                raise
            progress.update(task, advance=1, table="checked")
            reports.append(report)
    return reports


def task(task_id: str, root: Path | None = None) -> Task:
    """A task by id (from the shipped suite, or from `root`), or a scenario by id (the shipped
    ones, or `root`'s) as the task a trial runs; or a one-line error (a damaged file: its
    TaskFileError, exit 2, from the root command)."""
    from ..tasks.scenarios import find_scenario
    from ..tasks.spec import load_task
    from ..tasks.suite import find_task, load_suite

    in_folder = root is None or root.is_dir()
    scenario = find_scenario(task_id, root) if in_folder else None
    if scenario is not None:
        return scenario.as_task()
    path = find_task(task_id, root) if in_folder else None
    if path is not None:
        return load_task(path)
    found = load_suite(root, ids=[task_id]).tasks if root is not None else []  # a JSONL line, or a file named otherwise
    if not found:
        fail(f"no task {task_id!r} (nor a scenario of that id); `ebench tasks list` shows the ids", 2)
    return found[0]


def actor_env(domain: Domain, actor: int) -> ToolEnv:
    """A scratch copy of the domain's world and a tool environment acting as `actor` (or a
    one-line error for an unknown actor)."""
    from ..engine.tools import ToolError
    from ..engine.world import scratch_copy

    conn = scratch_copy(world(domain, quiet=True))
    try:
        return domain.env(conn, actor)
    except ToolError as exc:
        conn.close()
        fail(exc.message, 2)


class OneLineErrors(TyperGroup):
    """The root command: usage errors and environment failures are one line on stderr (click's and
    typer's own rendering is a multi-line box), never a traceback. Its help, and every command's
    under it, reads as prose (`prose_help`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prose_help(self)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        extra["windows_expand_args"] = windows_expand_args
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        run = super().main
        try:
            code = _plugin_warnings_as_lines(lambda: run(args, prog_name, complete_var, standalone_mode=False, **extra))
        except typer.TyperException as exc:  # click's exceptions (typer vendors click) derive from it
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:  # `ebench tools`: the help
                sys.stdout.write(ctx.get_help() + "\n")
                sys.exit(0)
            where = ctx.command_path if ctx is not None else "ebench"
            _one_line(f"{exc.format_message()} (see '{where} --help')")
            sys.exit(getattr(exc, "exit_code", 2))
        except typer.Abort:
            _one_line("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except EBenchError as exc:  # the one place an error becomes its line and its exit code
            _one_line(str(exc))
            sys.exit(exc.exit_code)
        except OSError as exc:  # a full disk, a read-only data directory (74); a missing file (2)
            _one_line(os_error_message(exc))
            sys.exit(os_error_exit_code(exc))
        sys.exit(code if isinstance(code, int) else 0)


# -- help as written prose -------------------------------------------------------------------------


def unwrapped(text: str) -> str:
    """A docstring or help text as prose: each paragraph's lines (wrapped in the source) joined
    into one, so the terminal wraps it at its own width; a paragraph marked \\b, a list (lines
    starting "- " or "* ") or an indented block keeps its lines."""
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    kept = []
    for paragraph in paragraphs:
        lines = paragraph.split("\n")
        if (
            paragraph.startswith("\b")
            or any(line.startswith(("- ", "* ", " ", "\t")) for line in lines[1:])
            or lines[0].startswith(("- ", "* "))
        ):
            kept.append(paragraph)
        else:
            kept.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(kept)


def first_sentence(text: str) -> str:
    """The first sentence of a help text's first paragraph (a command's line in its group's list)."""
    import re

    paragraph = unwrapped(text).split("\n\n", 1)[0].removeprefix("\b").strip()
    found = re.match(r"(.+?[.!?])(?=\s+[A-Z(`-]|$)", paragraph, re.DOTALL)
    return found.group(1) if found else paragraph


def _no_type(ctx: Any) -> None:
    return None


def _no_range() -> None:
    return None


def range_words(limits: str) -> str:
    """click's "x>=1", "x<=9", "1<=x<=9" (or with <, >) in words: "at least 1", "1 to 9"."""
    import re

    both = re.fullmatch(r"(\S+?)(<=?)x(<=?)(\S+)", limits)
    if both:
        low, high = both.group(1), both.group(4)
        if both.group(2) == "<=" and both.group(3) == "<=":
            return f"{low} to {high}"
        lower = f"more than {low}" if both.group(2) == "<" else f"at least {low}"
        upper = f"less than {high}" if both.group(3) == "<" else f"at most {high}"
        return f"{lower}, {upper}"
    one = re.fullmatch(r"x([<>]=?)(\S+)", limits)
    if one:
        words = {">=": "at least", ">": "more than", "<=": "at most", "<": "less than"}
        return f"{words[one.group(1)]} {one.group(2)}"
    return limits


def _untyped_flags(params: list[Any]) -> list[Any]:
    for param in params:
        if getattr(param, "is_flag", False) and hasattr(param, "display_type_rich"):
            param.display_type_rich = _no_type  # an instance's own: a flag has no value to type
    return params


def prose_help(command: Any) -> None:
    """Make `command`'s help, and every command's under it, read as written prose at any width:
    paragraphs unwrapped (typer keeps the source's line breaks), a command listed by its first
    sentence, and no type after a flag (`<bool>` reads as if the flag took a value; --help and
    the completion flags are made when the help is, hence `get_params`)."""
    if command.help:
        command.help = unwrapped(command.help)
        if not command.short_help:
            command.short_help = first_sentence(command.help)
    for param in command.params:
        if getattr(param, "help", None):
            param.help = unwrapped(param.help)
        limits = param._get_number_range_help_str() if hasattr(param, "_get_number_range_help_str") else None
        if limits:  # said in the help, in words: the type column stays narrow, so option names are never cut
            text, words = (param.help or "").rstrip(), range_words(limits)
            sentence = words[0].upper() + words[1:] + "."
            param.help = f"{text} {sentence}" if text.endswith((".", ")")) else f"{text}. {sentence}" if text else sentence
            param._get_number_range_help_str = _no_range
            number = getattr(getattr(param, "type_descriptor", None), "ranged_type_name", None)
            if number:
                param.display_type_rich = lambda ctx, number=number: f"<{number}>"
    made = command.get_params
    command.get_params = lambda ctx: _untyped_flags(made(ctx))
    for sub in getattr(command, "commands", {}).values():
        prose_help(sub)


def _plugin_warnings_as_lines(main: Callable[[], Any]) -> Any:
    """Run `main` with each plug-in warning (ebench.registry.PluginWarning) shown as one line on
    stderr, `warning: ...`, instead of Python's two-line form; other warnings as before."""
    import warnings

    from ..registry import PluginWarning

    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, PluginWarning):
            warn([str(message)])
        else:
            shown(message, category, *args, **kwargs)

    warnings.showwarning = show
    try:
        return main()
    finally:
        warnings.showwarning = shown


def fail_os(exc: OSError, context: str = "") -> NoReturn:
    """An OSError as its one line and code: 74 for the disk or a folder's permissions, 2 otherwise."""
    fail(f"{os_error_message(exc)}{context}", os_error_exit_code(exc))


def _one_line(message: str) -> None:
    from ..terminal import printable

    sys.stderr.write(f"error: {printable(' '.join(message.split()))}\n")


def capability(name: str | None) -> str | None:
    """A --capability value (its id or short name), or a usage error listing both."""
    from ..tasks.spec import CAPABILITIES, CAPABILITY_SHORT, capability_named

    if name is None:
        return None
    found = capability_named(name)
    if found is None:
        known = ", ".join(f"{CAPABILITY_SHORT[c]} ({c})" for c in CAPABILITIES)
        fail(f"unknown capability {name!r}; known: {known}", 2)
    return found


def warn(lines: list[str], label: str = "warning:") -> None:
    """Warnings on stderr, one line each however long (stdout may hold --json)."""
    if lines:
        from rich.console import Console

        from ..terminal import markup_escaped

        err = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)
        for line in lines:
            err.print(f"[yellow]{label}[/] {markup_escaped(line)}")


def runs(paths: list[Path]) -> list[RunData]:
    """The runs (run directories, sessions folders) named on the command line, their damaged lines
    warned about; one that cannot be read is a usage error naming it."""
    from ..sessions.runs import RunError, load_runs

    loaded = []
    for path in paths:
        try:
            loaded.extend(load_runs(path))
        except RunError as exc:
            fail(str(exc), 2)
    warn([w for run in loaded for w in run.warnings])
    return loaded
