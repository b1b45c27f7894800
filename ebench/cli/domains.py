"""`ebench domains`: build, inspect and measure the worlds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from . import common

if TYPE_CHECKING:
    from rich.console import Console

    from ..engine.world import BuildReport

domains_app = typer.Typer(help="Build, inspect and measure the domain worlds.", no_args_is_help=True)


@domains_app.command("list")
def domains_list(as_json: bool = common.JSON_OPTION) -> None:
    """List the domains and whether their worlds are built (a plug-in that cannot be loaded: a warning)."""
    from ..engine.world import built_seeds, world_path, world_state

    rows: list[dict[str, Any]] = []
    for domain in common.domains(None):
        name = domain.name
        # The default world always has a row; worlds of other seeds are listed when present.
        for seed in dict.fromkeys([domain.default_seed, *built_seeds(domain)]):
            path = world_path(domain, seed)
            state = world_state(domain, seed)
            rows.append(
                {
                    "name": name,
                    "title": domain.title,
                    "tables": len(domain.schema.tables),
                    "tools": len(domain.tools),
                    "now": domain.now,
                    "built": path.exists(),
                    "current": state == "current",
                    "state": state,
                    "seed": seed,
                    "default": seed == domain.default_seed,
                    "path": str(path),
                }
            )
    if as_json:
        common.print_json(rows)
        return
    from rich.table import Table

    table = Table(title="Domains")
    for col in ("name", "title", "tables", "tools", "now", "world", "seed"):
        table.add_column(col)
    for r in rows:
        state = {"current": "[green]built[/]", "stale": "[yellow]stale[/]", "damaged": "[red]damaged[/]"}.get(
            r["state"], "[dim]not built[/]"
        )
        table.add_row(r["name"], r["title"], str(r["tables"]), str(r["tools"]), r["now"], state, str(r["seed"]))
    common.console().print(table)


@domains_app.command("build")
def domains_build(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Build only this domain (default: all)."),
    seed: int | None = typer.Option(None, "--seed", min=0, help="Seed for the generators (default: the domain's own)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when the world is up to date."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Build worlds: seeded fill in dependency order, then validation and repair. A world of
    another seed is its own file: it never replaces the default world."""
    from ..engine.world import is_current

    targets = common.domains(domain)
    todo = [d for d in targets if force or not is_current(d, seed)]
    reports = common.build_with_progress(todo, seed, quiet=as_json) if todo else []
    skipped = [d.name for d in targets if d not in todo]
    if as_json:
        common.print_json({"built": [r.to_dict() for r in reports], "up_to_date": skipped})
        return
    console = common.console()
    for name in skipped:
        console.print(f"[green]{name}[/]: up to date (use --force to rebuild)")
    for report in reports:
        _print_build_report(console, report)


def _print_build_report(console: Console, report: BuildReport) -> None:
    from rich.table import Table

    from ..terminal import markup_escaped as escape  # a path (EBENCH_HOME) may hold anything

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
    seed: int | None = typer.Option(None, "--seed", min=0, help="The world of this seed (default: the domain's own)."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Size of each world: tables, columns, foreign keys, rows, cells, users, orphans, tools."""
    from ..engine.world import world_stats

    stats = [world_stats(d, common.world(d, quiet=as_json, seed=seed)) for d in common.domains(domain)]
    totals = {
        k: sum(getattr(s, k) for s in stats) for k in ("tables", "columns", "foreign_keys", "rows", "cells", "users", "orphans", "tools")
    }
    if as_json:
        common.print_json({"domains": [s.to_dict() for s in stats], "total": totals})
        return
    from rich.table import Table

    # One column per domain (and the total), one row per measure: stays readable at 80 columns.
    table = Table(title="World statistics")
    table.add_column("")
    for s in stats:
        table.add_column(s.domain, justify="right")
    if len(stats) > 1:
        table.add_column("total", justify="right", style="bold")
    labels = {
        "tables": "tables",
        "columns": "columns",
        "foreign_keys": "foreign keys",
        "rows": "rows",
        "cells": "cells",
        "users": "users (actors)",
        "orphans": "orphans (FK check)",
        "tools": "tools",
    }
    for key, label in labels.items():
        cells = [f"{getattr(s, key):,}" for s in stats]
        if len(stats) > 1:
            cells.append(f"{totals[key]:,}")
        table.add_row(label, *cells)
    table.add_row("read / write tools", *[f"{s.read_tools} / {s.write_tools}" for s in stats], *([""] if len(stats) > 1 else []))
    common.console().print(table)


@domains_app.command("schema")
def domains_schema(
    name: str = typer.Argument(..., help="The domain."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Show a domain's tables, their columns and keys, and the dependency graph with the fill order."""
    domain = common.domain(name)
    schema = domain.schema
    order = schema.fill_order()
    deps = schema.dependencies()
    if as_json:
        common.print_json(
            {
                "domain": domain.name,
                "fill_order": order,
                "tables": [
                    {
                        "name": t.name,
                        "doc": t.doc,
                        "key": list(t.key),
                        "depends_on": deps[t.name],
                        "columns": [
                            {
                                "name": c.name,
                                "type": c.type,
                                "not_null": c.not_null or c.primary_key,
                                "unique": c.unique,
                                "references": f"{c.ref_table}.{c.ref_column}" if c.references else None,
                                "volatile": c.volatile,
                                "check": c.check,
                            }
                            for c in t.columns
                        ],
                    }
                    for t in schema.tables
                ],
                "foreign_keys": [str(fk) for fk in schema.foreign_keys],
            }
        )
        return
    from rich.table import Table

    console = common.console()
    console.print(
        f"[bold]{domain.name}[/]: {len(schema.tables)} tables, {schema.column_count} columns, {len(schema.foreign_keys)} foreign keys"
    )
    for table_def in (schema.table(n) for n in order):
        table = Table(title=f"{table_def.name} — {table_def.doc}", title_justify="left", show_edge=False)
        for col in ("column", "type", "constraints", "references"):
            table.add_column(col)
        for c in table_def.columns:
            flags = [
                f
                for f, on in (("key", c.name in table_def.key), ("not null", c.not_null), ("unique", c.unique), ("volatile", c.volatile))
                if on
            ]
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
