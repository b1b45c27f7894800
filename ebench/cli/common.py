"""What every command shares: one-line errors, JSON output, the domain and world lookups.

Only typer and the standard library are imported at module level (see ebench/cli/__init__.py).
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")


def fail(message: str, code: int = 1) -> NoReturn:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {escape(message)}")  # one line, however long
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def console():
    from rich.console import Console

    return Console(highlight=False)


def domain(name: str):
    from ..domains import UnknownDomain, get_domain

    try:
        return get_domain(name)
    except UnknownDomain as exc:
        fail(str(exc), 2)


def domains(name: str | None) -> list:
    from ..domains import domain_names

    return [domain(n) for n in ([name] if name else domain_names())]


def world(domain, quiet: bool = False, seed: int | None = None):
    """The path of the domain's world for `seed` (default: the domain's own), building it first
    (with progress) when missing or stale. Each seed is its own file."""
    from ..domains.engine.world import is_current, world_path

    if not is_current(domain, seed):
        build_with_progress([domain], seed, quiet=quiet)
    return world_path(domain, seed)


def build_with_progress(domains: list, seed: int | None, quiet: bool = False) -> list:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from ..domains.engine.world import build_world

    reports = []
    out = console() if not quiet else None
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[table]}"),
        TimeElapsedColumn(), console=out, disable=quiet, transient=True,
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
    """A task by id (from the shipped suite, or from `root`), or a one-line error."""
    from ..tasks.spec import TaskFileError, load_task
    from ..tasks.suite import find_task

    path = find_task(task_id, root)
    if path is None:
        fail(f"no task {task_id!r}; `ebench tasks list` shows the ids", 2)
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
