"""The `ebench` command line.

Only typer and the standard library are imported at module level: each command imports what it
needs when it runs, so `ebench --help` stays fast (no litellm, no mcp, no textual, no Faker).
Expected errors (an unknown domain, tool or actor, a malformed argument) are printed as one
line on stderr with a non-zero exit code, never as a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

app = typer.Typer(
    name="ebench",
    help="E-Bench: synthetic product worlds, multi-step tool-use tasks graded by database diff.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)
domains_app = typer.Typer(help="Build, inspect and measure the domain worlds.", no_args_is_help=True)
tools_app = typer.Typer(help="List the tools of a domain and call them on a scratch copy.", no_args_is_help=True)
app.add_typer(domains_app, name="domains")
app.add_typer(tools_app, name="tools")

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of tables.")


def _fail(message: str, code: int = 1) -> NoReturn:
    from rich.console import Console
    from rich.markup import escape

    Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _console():
    from rich.console import Console

    return Console(highlight=False)


def _domain(name: str):
    from .domains import UnknownDomain, get_domain

    try:
        return get_domain(name)
    except UnknownDomain as exc:
        _fail(str(exc), 2)


def _domains(name: str | None) -> list:
    from .domains import domain_names

    return [_domain(n) for n in ([name] if name else domain_names())]


def _world(domain, quiet: bool = False):
    """The domain's world path, building it first (with progress) when missing or stale.

    A world built with another seed (`domains build --seed N`) keeps that seed: it is rebuilt
    only when its code changed, and with the same seed."""
    from .domains.engine.world import built_seed, is_current, world_path

    seed = built_seed(domain)
    if not is_current(domain, seed):
        _build_with_progress([domain], seed, quiet=quiet)
    return world_path(domain)


def _build_with_progress(domains: list, seed: int | None, quiet: bool = False) -> list:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from .domains.engine.world import build_world

    reports = []
    console = _console() if not quiet else None
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[table]}"),
        TimeElapsedColumn(), console=console, disable=quiet, transient=True,
    ) as progress:
        for domain in domains:
            task = progress.add_task(f"building {domain.name}", total=len(domain.schema.tables) + 1, table="")

            def on_table(fill, task=task):
                progress.update(task, advance=1, table=f"{fill.table} ({fill.rows} rows)")

            progress.update(task, table="schema")
            try:
                report = build_world(domain, seed, on_table=on_table)
            except Exception as exc:  # a failed build is an expected, explainable outcome
                from .domains.engine.fill import FillError
                from .domains.engine.repair import RepairError
                from .domains.engine.world import WorldError

                if isinstance(exc, (FillError, RepairError, WorldError)):
                    _fail(f"building {domain.name} failed: {exc}")
                raise
            progress.update(task, advance=1, table="checked")
            reports.append(report)
    return reports


# -- domains ---------------------------------------------------------------------------------


@domains_app.command("list")
def domains_list(as_json: bool = JSON_OPTION) -> None:
    """List the domains and whether their worlds are built."""
    from .domains import domain_names
    from .domains.engine.world import built_seed, is_current, world_path

    rows = []
    for name in domain_names():
        domain = _domain(name)
        path, seed = world_path(domain), built_seed(domain)
        rows.append({
            "name": name, "title": domain.title, "tables": len(domain.schema.tables), "tools": len(domain.tools),
            "now": domain.now, "built": path.exists(), "current": is_current(domain, seed), "seed": seed, "path": str(path),
        })
    if as_json:
        _print_json(rows)
        return
    from rich.table import Table

    table = Table(title="Domains")
    for col in ("name", "title", "tables", "tools", "now", "world", "seed"):
        table.add_column(col)
    for r in rows:
        state = "[green]built[/]" if r["current"] else ("[yellow]stale[/]" if r["built"] else "[dim]not built[/]")
        table.add_row(r["name"], r["title"], str(r["tables"]), str(r["tools"]), r["now"], state, str(r["seed"]))
    _console().print(table)


@domains_app.command("build")
def domains_build(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Build only this domain (default: all)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed for the generators (default: the domain's own)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when the world is up to date."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Build worlds: seeded fill in dependency order, then validation and repair."""
    from .domains.engine.world import is_current

    targets = _domains(domain)
    todo = [d for d in targets if force or not is_current(d, seed)]
    reports = _build_with_progress(todo, seed, quiet=as_json) if todo else []
    skipped = [d.name for d in targets if d not in todo]
    if as_json:
        _print_json({"built": [r.to_dict() for r in reports], "up_to_date": skipped})
        return
    console = _console()
    for name in skipped:
        console.print(f"[green]{name}[/]: up to date (use --force to rebuild)")
    for report in reports:
        _print_build_report(console, report)


def _print_build_report(console, report) -> None:
    from rich.markup import escape
    from rich.table import Table

    console.print(
        f"[bold green]{report.domain}[/]: {report.rows:,} rows in {report.seconds:.2f}s "
        f"({report.rows / report.seconds:,.0f} rows/s), seed {report.seed} -> {escape(report.path)}"
    )
    table = Table(title=f"{report.domain}: validation and repair", show_lines=False)
    table.add_column("check")
    table.add_column("kind")
    table.add_column("checked", justify="right")
    table.add_column("repaired", justify="right")
    for c in report.checks:
        table.add_row(c.name, c.kind, f"{c.checked:,}", f"[yellow]{c.repaired:,}[/]" if c.repaired else "0")
    console.print(table)
    console.print(f"{len(report.checks)} checks, {report.repaired:,} values repaired; the world is consistent.")


@domains_app.command("stats")
def domains_stats(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain (default: all)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Size of each world: tables, columns, foreign keys, rows, cells, users, orphans, tools."""
    from .domains.engine.world import world_stats

    stats = [world_stats(d, _world(d, quiet=as_json)) for d in _domains(domain)]
    totals = {k: sum(getattr(s, k) for s in stats) for k in ("tables", "columns", "foreign_keys", "rows", "cells", "users", "orphans", "tools")}
    if as_json:
        _print_json({"domains": [s.to_dict() for s in stats], "total": totals})
        return
    from rich.table import Table

    # One column per domain (and the total), one row per measure: stays readable at 80 columns.
    table = Table(title="World statistics")
    table.add_column("")
    for s in stats:
        table.add_column(s.domain, justify="right")
    if len(stats) > 1:
        table.add_column("total", justify="right", style="bold")
    labels = {"tables": "tables", "columns": "columns", "foreign_keys": "foreign keys", "rows": "rows",
              "cells": "cells", "users": "users (actors)", "orphans": "orphans (FK check)", "tools": "tools"}
    for key, label in labels.items():
        cells = [f"{getattr(s, key):,}" for s in stats]
        if len(stats) > 1:
            cells.append(f"{totals[key]:,}")
        table.add_row(label, *cells)
    table.add_row("read / write tools", *[f"{s.read_tools} / {s.write_tools}" for s in stats], *([""] if len(stats) > 1 else []))
    _console().print(table)


@domains_app.command("schema")
def domains_schema(
    name: str = typer.Argument(..., help="The domain."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show a domain's tables, their columns and keys, and the dependency graph with the fill order."""
    domain = _domain(name)
    schema = domain.schema
    order = schema.fill_order()
    deps = schema.dependencies()
    if as_json:
        _print_json({
            "domain": domain.name,
            "fill_order": order,
            "tables": [
                {
                    "name": t.name, "doc": t.doc, "key": list(t.key), "depends_on": deps[t.name],
                    "columns": [
                        {"name": c.name, "type": c.type, "not_null": c.not_null or c.primary_key, "unique": c.unique,
                         "references": f"{c.ref_table}.{c.ref_column}" if c.references else None, "volatile": c.volatile,
                         "check": c.check}
                        for c in t.columns
                    ],
                }
                for t in schema.tables
            ],
            "foreign_keys": [str(fk) for fk in schema.foreign_keys],
        })
        return
    from rich.table import Table

    console = _console()
    console.print(f"[bold]{domain.name}[/]: {len(schema.tables)} tables, {schema.column_count} columns, {len(schema.foreign_keys)} foreign keys")
    for table_def in (schema.table(n) for n in order):
        table = Table(title=f"{table_def.name} — {table_def.doc}", title_justify="left", show_edge=False)
        for col in ("column", "type", "constraints", "references"):
            table.add_column(col)
        for c in table_def.columns:
            flags = [f for f, on in (("key", c.name in table_def.key), ("not null", c.not_null), ("unique", c.unique), ("volatile", c.volatile)) if on]
            table.add_row(c.name, c.type, ", ".join(flags), f"{c.ref_table}.{c.ref_column}" if c.references else "")
        console.print(table)
    # The graph as levels: a table's level is one more than its deepest parent's, so each
    # level can be filled once the levels above it are.
    level: dict[str, int] = {}
    for name in order:
        level[name] = 1 + max((level[p] for p in deps[name]), default=-1)
    children: dict[str, list[str]] = {n: [] for n in order}
    for child, parents in deps.items():
        for parent in parents:
            children[parent].append(child)
    graph = Table(title="dependency graph (fill order, top to bottom)", title_justify="left")
    for col in ("level", "table", "references", "referenced by"):
        graph.add_column(col)
    for name in order:
        graph.add_row(str(level[name]), name, ", ".join(deps[name]), ", ".join(children[name]))
    console.print(graph)
    console.print("[bold]fill order:[/] " + " -> ".join(order))


# -- tools -----------------------------------------------------------------------------------


@tools_app.command("list")
def tools_list(
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    as_json: bool = JSON_OPTION,
) -> None:
    """List a domain's tools: name, read/write, summary (and JSON schema with --json)."""
    d = _domain(domain)
    if as_json:
        _print_json([
            {"name": t.name, "kind": t.kind, "summary": t.summary, "description": t.description, "parameters": t.parameters}
            for t in d.tools
        ])
        return
    from rich.table import Table

    table = Table(title=f"{d.name} tools ({len(d.tools)})")
    table.add_column("tool", style="bold")
    table.add_column("kind")
    table.add_column("arguments")
    table.add_column("summary")
    for t in d.tools:
        args = ", ".join(p.name if p.required else f"[dim]{p.name}[/]" for p in t.params)
        table.add_row(t.name, "[yellow]write[/]" if t.kind == "write" else "read", args, t.summary)
    _console().print(table)


@tools_app.command("describe")
def tools_describe(
    name: str = typer.Argument(..., help="The tool's name."),
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show one tool in full: its description and every argument with type and default."""
    from .domains.engine.tools import ToolError

    d = _domain(domain)
    try:
        tool = d.tools.get(name)
    except ToolError as exc:
        _fail(exc.message, 2)
    if as_json:
        _print_json(tool.openai_schema()["function"] | {"kind": tool.kind})
        return
    from rich.table import Table

    console = _console()
    console.print(f"[bold]{tool.name}[/] ({tool.kind})\n")
    console.print(tool.description + "\n")
    table = Table(show_edge=False, caption="[bold]bold[/]: required", caption_justify="left")
    for col in ("argument", "type", "description"):
        table.add_column(col, overflow="fold")
    for p in tool.params:
        schema = tool.parameters["properties"][p.name]
        kind = schema.get("type", "") + (f"[{schema['items']['type']}]" if "items" in schema else "")
        if "enum" in schema:
            kind = "|".join(str(v) for v in schema["enum"])
        default = "" if p.required else f" [dim](default {json.dumps(p.default)})[/]"
        table.add_row(f"[bold]{p.name}[/]" if p.required else p.name, kind, p.description + default)
    console.print(table)


@tools_app.command("call")
def tools_call(
    name: str = typer.Argument(..., help="The tool's name."),
    args: str = typer.Argument("{}", help="The arguments as a JSON object, e.g. '{\"song_id\": 12}'."),
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    actor: int = typer.Option(..., "--actor", "-a", help="Id of the user the tool acts for."),
) -> None:
    """Call one tool on a scratch copy of the world and print its result as JSON.

    The world itself is never modified. Exit code 1 when the tool returns an error.
    """
    from .domains.engine.tools import ToolError
    from .domains.engine.world import scratch_copy

    d = _domain(domain)
    conn = scratch_copy(_world(d, quiet=True))
    try:
        env = d.env(conn, actor)
    except ToolError as exc:
        _fail(exc.message, 2)
    result = d.tools.call(env, name, args)
    _print_json(result.payload())
    if not result.ok:
        raise typer.Exit(1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
