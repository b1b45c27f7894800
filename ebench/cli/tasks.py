"""`ebench tasks`: list, show, generate, validate and measure tasks."""

from __future__ import annotations

from pathlib import Path

import typer

from . import common

tasks_app = typer.Typer(help="Browse, generate and validate tasks (the shipped suite by default).", no_args_is_help=True)

DIR_OPTION = typer.Option(None, "--dir", help="A folder of task files (<domain>/<id>.json) instead of the shipped suite.")


def _load(root: Path | None, domain: str | None = None, capability: str | None = None, ids: list[str] | None = None):
    from ..tasks.spec import CAPABILITIES
    from ..tasks.suite import load_suite

    if domain:
        common.domain(domain)  # an unknown domain is a usage error
    if capability and capability not in CAPABILITIES:
        common.fail(f"unknown capability {capability!r}; known: {', '.join(CAPABILITIES)}", 2)
    if root is not None and not root.is_dir():
        common.fail(f"no such folder: {root}", 2)
    return load_suite(root, domain, capability, ids)


def _warn_errors(errors) -> None:
    if errors:
        from rich.console import Console
        from rich.markup import escape

        err = Console(stderr=True, highlight=False)
        for e in errors:
            err.print(f"[yellow]skipped[/] {escape(str(e))}")


@tasks_app.command("list")
def tasks_list(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    capability: str | None = typer.Option(None, "--capability", "-c", help="Only tasks tagged with this capability."),
    root: Path | None = DIR_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """List tasks: id, domain, capabilities, changed rows and the request."""
    report = _load(root, domain, capability)
    _warn_errors(report.errors)
    if as_json:
        common.print_json([
            {"id": t.id, "domain": t.domain, "actor": t.actor, "capabilities": t.capabilities,
             "changed_rows": len(t.expected_diff), "query": t.query} for t in report.tasks
        ])
        return
    from rich.table import Table

    from ..tasks.spec import CAPABILITY_SHORT

    table = Table(title=f"{len(report.tasks)} tasks", show_lines=False)
    for col in ("id", "capabilities", "rows", "request"):
        table.add_column(col, overflow="fold", justify="right" if col == "rows" else "left")
    for t in report.tasks:
        table.add_row(t.id, ", ".join(CAPABILITY_SHORT[c] for c in t.capabilities), str(len(t.expected_diff)), t.query)
    common.console().print(table)


@tasks_app.command("show")
def tasks_show(
    task_id: str = typer.Argument(..., help="The task's id, e.g. music-0001."),
    root: Path | None = DIR_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Show one task in full: request, actor, capabilities, reference solution and expected changes."""
    from ..tasks.spec import CAPABILITY_TITLES, compact_json

    task = common.task(task_id, root)
    if as_json:
        common.print_json(task.to_dict())
        return
    from rich.markup import escape

    console = common.console()
    d = common.domain(task.domain)
    console.print(f"[bold]{task.id}[/] ({task.domain}) · actor {task.actor}: {escape(_actor_label(d, task.actor))}")
    console.print(f"capabilities: {', '.join(CAPABILITY_TITLES[c] for c in task.capabilities)}")
    console.print(f"\n[bold]Request[/]\n{escape(task.query)}\n")
    console.print(f"[bold]Reference solution[/] ({len(task.reference_solution)} calls)")
    for i, step in enumerate(task.reference_solution):
        console.print(f"  {i:>3}  {step.tool} {escape(compact_json(step.args))}")
    stats = task.expected_diff.counts()
    console.print(f"\n[bold]Expected changes[/]: {len(task.expected_diff)} rows "
                  f"({stats['insert']} inserted, {stats['update']} updated, {stats['delete']} deleted)")
    for change in task.expected_diff:
        detail = change.new if change.op == "update" else ""
        console.print(f"  {change.op:7} {change.table} {escape(compact_json(change.key))} {escape(compact_json(detail)) if detail else ''}")


def _actor_label(domain, actor: int) -> str:
    from ..domains.engine.world import open_world_readonly

    conn = open_world_readonly(common.world(domain, quiet=True))
    try:
        return domain.actor_label(conn, actor)
    finally:
        conn.close()


@tasks_app.command("schema")
def tasks_schema() -> None:
    """Print the JSON Schema of the task format (ebench-task/1), for editors and other tools."""
    from ..tasks.spec import task_json_schema

    common.print_json(task_json_schema())


@tasks_app.command("stats")
def tasks_stats(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    root: Path | None = DIR_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Counts per domain and capability, the changed-rows distribution, and the tools reference solutions use."""
    from ..tasks.spec import CAPABILITIES, CAPABILITY_TITLES
    from ..tasks.suite import suite_stats

    report = _load(root, domain)
    _warn_errors(report.errors)
    stats = suite_stats(report.tasks)
    if as_json:
        common.print_json(stats)
        return
    from rich.table import Table

    names = list(stats["domains"])
    table = Table(title=f"{stats['tasks']} tasks")
    table.add_column("")
    for name in names:
        table.add_column(name, justify="right")
    table.add_row("tasks", *[str(stats["domains"][n]["tasks"]) for n in names])
    for cap in CAPABILITIES:
        table.add_row(CAPABILITY_TITLES[cap], *[
            f"{stats['domains'][n]['capabilities'][cap]['tasks']} ({stats['domains'][n]['capabilities'][cap]['share']:.0%})" for n in names])
    for key in ("min", "mean", "median", "max"):
        table.add_row(f"changed rows: {key}", *[str(stats["domains"][n]["changed_rows"][key]) for n in names])
    for op in ("insert", "update", "delete"):
        table.add_row(f"{op}s", *[str(stats["domains"][n]["changes"].get(op, 0)) for n in names])
    table.add_row("templates", *[str(len(stats["domains"][n]["templates"])) for n in names])
    table.add_row("tools used", *[str(len(stats["domains"][n]["tools_used"])) for n in names])
    console = common.console()
    console.print(table)
    rows = stats["changed_rows"]
    console.print(f"all domains: changed rows min {rows['min']}, mean {rows['mean']}, max {rows['max']}")


@tasks_app.command("generate")
def tasks_generate(
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    count: int = typer.Option(..., "--count", "-n", min=1, help="How many tasks to make."),
    seed: int = typer.Option(0, "--seed", "-s", help="Same seed, same tasks."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write into (as <out>/<domain>/<id>.json)."),
    prefix: str | None = typer.Option(None, "--prefix", help="Task id prefix (default: the domain name)."),
    force: bool = typer.Option(False, "--force", help="Replace task files that already exist."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Generate new tasks from the domain's templates, each checked on fresh copies of the world."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..tasks.generation import generate

    common.world(common.domain(domain), quiet=as_json)
    folder = out / domain
    folder.mkdir(parents=True, exist_ok=True)
    existing = sorted(p.name for p in folder.glob("*.json"))
    if existing and not force:
        common.fail(f"{folder} already holds {len(existing)} task files; use --force to replace them, or another --out", 2)
    for name in existing:
        (folder / name).unlink()
    written: list[str] = []
    with Progress(TextColumn("[bold]generating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=as_json, transient=True, console=common.console()) as progress:
        bar = progress.add_task("tasks", total=count)

        def save(task) -> None:
            path = folder / f"{task.id}.json"
            path.write_text(task.to_json(), encoding="utf-8")
            written.append(str(path))
            progress.advance(bar)

        try:
            report = generate(domain, count, seed, id_prefix=prefix, on_task=save)
        except ValueError as exc:
            common.fail(str(exc), 2)
    summary = {"domain": domain, "seed": seed, "written": len(written), "attempts": report.attempts,
               "rejected": dict(report.rejected), "out": str(folder)}
    if as_json:
        common.print_json(summary)
    else:
        rejected = ", ".join(f"{n} {reason}" for reason, n in report.rejected.most_common()) or "none"
        common.console().print(f"wrote {len(written)} tasks to {folder} ({report.attempts} drafts; rejected: {rejected})")
    if len(written) < count:
        common.fail(f"only {len(written)} of {count} tasks could be made: the templates ran out of targets")


@tasks_app.command("validate")
def tasks_validate(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    root: Path | None = DIR_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Check every task: the file is valid, the reference solution passes on a fresh copy, an empty
    trial fails, and the request leaks no id. Exit code 1 when any task has a problem."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..tasks.reference import check_task

    report = _load(root, domain)
    for name in sorted({t.domain for t in report.tasks}):
        common.world(common.domain(name), quiet=as_json)
    problems: dict[str, list[str]] = {str(e.source): [str(e)] for e in report.errors}
    with Progress(TextColumn("[bold]validating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  disable=as_json, transient=True, console=common.console()) as progress:
        bar = progress.add_task("tasks", total=len(report.tasks))
        for task in report.tasks:
            check = check_task(task)
            if not check.ok:
                problems[task.id] = check.problems
            progress.advance(bar)
    total = len(report.tasks) + len(report.errors)
    if as_json:
        common.print_json({"checked": total, "passed": total - len(problems), "problems": problems})
    else:
        from rich.markup import escape

        console = common.console()
        for name, items in problems.items():
            for item in items:
                console.print(f"[red]✗[/] {escape(name)}: {escape(item)}")
        console.print(f"{total - len(problems)}/{total} tasks valid")
    if problems:
        raise typer.Exit(1)
