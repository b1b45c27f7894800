"""What every command shares: one-line errors, JSON output, the domain and world lookups.

Only typer and the standard library are imported at module level (see ebench/cli/__init__.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")

# Exit codes (README, "Commands"): 0 done; 1 done, and something failed (a task, a check);
# 2 bad input (usage, an unknown id, a malformed file); 74 the environment failed (a full disk, a
# read-only or unwritable folder); 130 interrupted.
EXIT_ENVIRONMENT = 74
EXIT_INTERRUPTED = 130


def fail(message: str, code: int = 1) -> NoReturn:
    from rich.console import Console

    from ..terminal import markup_escaped

    # One line, however long; a message may quote a file or a model, so it is made printable.
    Console(stderr=True, highlight=False, emoji=False, soft_wrap=True).print(f"[bold red]error:[/] {markup_escaped(message)}")
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    from ..terminal import printable_json

    sys.stdout.write(printable_json(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n")


def console():
    from rich.console import Console

    # No emoji codes either: ":x:" in a model's text is shown as written, not as a picture.
    return Console(highlight=False, emoji=False)


def domain(name: str):
    from ..domains import UnknownDomain, get_domain
    from ..registry import PluginError

    try:
        return get_domain(name)
    except UnknownDomain as exc:
        fail(str(exc), 2)
    except PluginError as exc:  # an installed domain package that cannot be loaded: said, not a traceback
        fail(str(exc))


def domains(name: str | None) -> list:
    from ..domains import domain_names

    return [domain(n) for n in ([name] if name else domain_names())]


def world(domain, quiet: bool = False, seed: int | None = None):
    """The path of the domain's world for `seed` (default: the domain's own), building it first
    (with progress) when missing or stale. Each seed is its own file."""
    from ..domains.engine.world import world_path, world_state

    state = world_state(domain, seed)
    if state == "damaged":  # never used: said, then rebuilt
        sys.stderr.write(
            f"note: the {domain.name} world at {world_path(domain, seed)} is damaged (its bytes changed "
            "since it was built); rebuilding it\n"
        )
    if state != "current":
        build_with_progress([domain], seed, quiet=quiet)
    return world_path(domain, seed)


def build_with_progress(domains: list, seed: int | None, quiet: bool = False) -> list:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ..domains.engine.world import build_world

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

            def on_table(fill, task=task):
                progress.update(task, advance=1, table=f"{fill.table} ({fill.rows} rows)")

            progress.update(task, table="schema")
            try:
                report = build_world(domain, seed, on_table=on_table)
            except Exception as exc:  # a failed build is an expected, explainable outcome
                from ..domains.engine.fill import FillError
                from ..domains.engine.repair import RepairError
                from ..domains.engine.world import WorldError

                if isinstance(exc, (FillError, RepairError, WorldError)):
                    fail(f"building {domain.name} failed: {exc}")
                raise
            progress.update(task, advance=1, table="checked")
            reports.append(report)
    return reports


def task(task_id: str, root=None):
    """A task by id (from the shipped suite, or from `root`), or a scenario by id (the shipped
    ones, or `root`'s) as the task a trial runs; or a one-line error."""
    from ..tasks.scenarios import find_scenario
    from ..tasks.spec import TaskFileError, load_task
    from ..tasks.suite import find_task

    scenario = find_scenario(task_id, root)
    if scenario is not None:
        return scenario.as_task()
    path = find_task(task_id, root)
    if path is None:
        fail(f"no task {task_id!r} (nor a scenario of that id); `ebench tasks list` shows the ids", 2)
    try:
        return load_task(path)
    except TaskFileError as exc:
        fail(str(exc))


def actor_env(domain, actor: int):
    """A scratch copy of the domain's world and a tool environment acting as `actor` (or a
    one-line error for an unknown actor)."""
    from ..domains.engine.tools import ToolError
    from ..domains.engine.world import scratch_copy

    conn = scratch_copy(world(domain, quiet=True))
    try:
        return domain.env(conn, actor)
    except ToolError as exc:
        conn.close()
        fail(exc.message, 2)


class OneLineErrors(TyperGroup):
    """The root command: usage errors and environment failures are one line on stderr (click's and
    typer's own rendering is a multi-line box), never a traceback."""

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
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
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
        except OSError as exc:  # a full disk, a read-only data directory: said, not a traceback
            _one_line(environment_message(exc))
            sys.exit(EXIT_ENVIRONMENT)
        sys.exit(code if isinstance(code, int) else 0)


def environment_message(exc: OSError) -> str:
    """One line for an environment failure: what failed, where, and that nothing recorded is lost."""
    import errno

    what = {
        errno.ENOSPC: "the disk is full",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EDQUOT: "the disk quota is exceeded",
    }.get(exc.errno or 0)
    where = f" ({exc.filename})" if exc.filename else ""
    reason = what or (exc.strerror or str(exc))
    return f"{reason}{where}: nothing already recorded was lost; free the space or fix the folder and run the same command again"


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


def runs(paths: list[Path]) -> list:
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
