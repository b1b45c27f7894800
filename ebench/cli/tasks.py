"""`ebench tasks`: list, show, generate, validate and measure tasks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from . import common

tasks_app = typer.Typer(help="Browse, generate and validate tasks (the shipped suite by default).", no_args_is_help=True)

DIR_OPTION = typer.Option(None, "--dir", help="A folder of task files (<domain>/<id>.json) instead of the shipped suite.")


def _load(root: Path | None, domain: str | None = None, capability: str | None = None, ids: list[str] | None = None):
    from ..tasks.suite import load_suite

    if domain:
        common.domain(domain)  # an unknown domain is a usage error
    capability = common.capability(capability)
    if root is not None and not root.is_dir():
        common.fail(f"no such folder: {root}", 2)
    return load_suite(root, domain, capability, ids)


def _warn_errors(errors) -> None:
    common.warn([str(e) for e in errors], "skipped")


@contextmanager
def _task_bar(label: str, total: int, *, quiet: bool) -> Iterator[Callable[[], None]]:
    """A transient progress bar over `total` tasks on the console (none when `quiet`); yields the step function."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        disable=quiet,
        transient=True,
        console=common.console(),
    ) as progress:
        bar = progress.add_task("tasks", total=total)
        yield lambda: progress.advance(bar)


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
        common.print_json(
            [
                {
                    "id": t.id,
                    "domain": t.domain,
                    "actor": t.actor,
                    "capabilities": t.capabilities,
                    "changed_rows": len(t.expected_diff),
                    "query": t.query,
                }
                for t in report.tasks
            ]
        )
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
    console.print(
        f"\n[bold]Expected changes[/]: {len(task.expected_diff)} rows "
        f"({stats['insert']} inserted, {stats['update']} updated, {stats['delete']} deleted)"
    )
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
def tasks_schema(as_json: bool = common.JSON_OPTION) -> None:
    """Print the JSON Schema of the task format (ebench-task/1), for editors and other tools
    (always JSON; --json is accepted like everywhere)."""
    from ..tasks.spec import task_json_schema

    common.print_json(task_json_schema())


@tasks_app.command("stats")
def tasks_stats(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    root: Path | None = DIR_OPTION,
    run_audit: bool = typer.Option(False, "--audit", help="Run the shortcut audit now (default: the shipped suite's recorded audit)."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Per domain: templates and tasks per template, public solution length, changed rows,
    capability shares, and the shortcut audit's result."""
    from ..tasks.spec import CAPABILITIES, CAPABILITY_TITLES
    from ..tasks.suite import suite_info, suite_stats

    report = _load(root, domain)
    _warn_errors(report.errors)
    stats = suite_stats(report.tasks)
    info = suite_info(root)
    if run_audit:
        from ..tasks.audit import audit, audit_brief

        stats["audit"] = {"recorded": False, **audit_brief(audit(report.tasks, _world_for).summary())}
    elif info.get("audit"):
        stats["audit"] = {"recorded": True, **info["audit"]}
    else:
        stats["audit"] = None
    stats["suite_version"] = info.get("version")
    if as_json:
        common.print_json(stats)
        return
    from rich.table import Table

    names = list(stats["domains"])
    table = Table(title=f"{stats['tasks']} tasks" + (f" (suite version {info['version']})" if info.get("version") else ""))
    table.add_column("")
    for name in names:
        table.add_column(name, justify="right")
    doms = stats["domains"]
    table.add_row("tasks", *[str(doms[n]["tasks"]) for n in names])
    table.add_row("templates", *[str(len(doms[n]["templates"])) for n in names])
    table.add_row(
        "tasks per template (min-max)", *[f"{doms[n]['tasks_per_template']['min']}-{doms[n]['tasks_per_template']['max']}" for n in names]
    )
    for key in ("mean", "p90", "max"):
        table.add_row(f"solution calls: {key}", *[str(doms[n]["solution_length"][key]) for n in names])
    table.add_row("solutions of 40+ calls", *[f"{doms[n]['solution_length']['share_40_or_more']:.0%}" for n in names])
    table.add_row("changed rows: mean", *[str(doms[n]["changed_rows"]["mean"]) for n in names])
    table.add_row("changed rows: range", *[f"{doms[n]['changed_rows']['min']}-{doms[n]['changed_rows']['max']}" for n in names])
    for cap in CAPABILITIES:
        table.add_row(
            CAPABILITY_TITLES[cap],
            *[f"{doms[n]['capabilities'][cap]['tasks']} ({doms[n]['capabilities'][cap]['share']:.0%})" for n in names],
        )
    for op in ("insert", "update", "delete"):
        table.add_row(f"{op}s", *[str(doms[n]["changes"].get(op, 0)) for n in names])
    table.add_row("tools used", *[str(len(doms[n]["tools_used"])) for n in names])
    console = common.console()
    console.print(table)
    rows = stats["changed_rows"]
    console.print(f"all domains: changed rows min {rows['min']}, mean {rows['mean']}, max {rows['max']}")
    audit_info = stats["audit"]
    if audit_info is None:
        console.print("shortcut audit: not recorded for these tasks (run with --audit, or `ebench tasks audit`)")
    else:
        how = "recorded when the suite was made" if audit_info["recorded"] else "run now"
        passed = {k: v for k, v in audit_info["passed"].items() if v}
        verdict = "[green]no shortcut passes any task[/]" if audit_info["clean"] else f"[red]shortcuts pass tasks: {passed}[/]"
        console.print(f"shortcut audit ({how}, {audit_info['tasks']} tasks): {verdict}")


def _world_for(task):
    """The task's world, or the one-line refusal when it was made on another."""
    from ..tasks.worlds import WorldMismatch, task_world

    try:
        return task_world(task)
    except WorldMismatch as exc:
        common.fail(str(exc), 2)


@tasks_app.command("generate")
def tasks_generate(
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    count: int = typer.Option(..., "--count", "-n", min=1, help="How many tasks to make."),
    seed: int = typer.Option(0, "--seed", "-s", help="Same seed, same tasks."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write into (as <out>/<domain>/<id>.json)."),
    prefix: str | None = typer.Option(None, "--prefix", help="Task id prefix (default: <domain>-s<seed>, which no shipped id uses)."),
    world_seed: int | None = typer.Option(
        None, "--world-seed", help="Make the tasks on the world of this seed (default: the domain's own)."
    ),
    as_suite: bool = typer.Option(
        False, "--as-suite", help="Make the shipped suite itself: ids <domain>-NNNN, not checked against the shipped tasks it replaces."
    ),
    force: bool = typer.Option(False, "--force", help="Replace task files that already exist."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Generate new certified tasks from the domain's templates. Each is checked on fresh copies of
    the world (see the README's Tasks section); none repeats a shipped task's request, diff or solution."""
    from ..tasks.generation import generate
    from ..tasks.suite import SUITE_DIR, load_suite

    the_domain = common.domain(domain)
    common.world(the_domain, quiet=as_json, seed=world_seed)
    if prefix is None:
        prefix = domain if as_suite else f"{domain}-s{seed}"
    shipped = [] if as_suite else load_suite(SUITE_DIR, domain=domain).tasks
    if not as_suite and any(t.id.startswith(f"{prefix}-") for t in shipped):
        common.fail(f"--prefix {prefix!r} would give ids of the shipped suite; choose another", 2)
    folder = out / domain
    if folder.exists() and not folder.is_dir():
        common.fail(f"{folder} is not a folder", 2)
    folder.mkdir(parents=True, exist_ok=True)
    existing = sorted(p.name for p in folder.glob("*.json"))
    if existing and not force:
        common.fail(f"{folder} already holds {len(existing)} task files; use --force to replace them, or another --out", 2)
    for name in existing:
        (folder / name).unlink()
    written: list[str] = []
    with _task_bar("generating", count, quiet=as_json) as advance:

        def save(task) -> None:
            path = folder / f"{task.id}.json"
            path.write_text(task.to_json(), encoding="utf-8")
            written.append(str(path))
            advance()

        try:
            report = generate(domain, count, seed, id_prefix=prefix, avoid=shipped, world_seed=world_seed, on_task=save)
        except ValueError as exc:
            common.fail(str(exc), 2)
    summary = {
        "domain": domain,
        "seed": seed,
        "world_seed": world_seed if world_seed is not None else the_domain.default_seed,
        "written": len(written),
        "attempts": report.attempts,
        "rejected": dict(report.rejected),
        "out": str(folder),
    }
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
    """Check every task: the file is valid, it was made on the world this ebench builds, the
    reference solution passes on a fresh copy within the task's budget, the public solution is re-run
    and reaches the expected diff, an empty trial fails, and the request leaks no id. Exit code 1
    when any task has a problem."""
    from ..tasks.reference import check_task

    report = _load(root, domain)
    for name in sorted({t.domain for t in report.tasks}):
        common.world(common.domain(name), quiet=as_json)  # with progress; other seeds' worlds are built as needed
    problems: dict[str, list[str]] = {str(e.source): [str(e)] for e in report.errors}
    with _task_bar("validating", len(report.tasks), quiet=as_json) as advance:
        certified = 0
        for task in report.tasks:
            check = check_task(task)
            certified += check.certified
            if not check.ok:
                problems[task.id] = check.problems
            advance()
    total = len(report.tasks) + len(report.errors)
    if as_json:
        common.print_json({"checked": total, "passed": total - len(problems), "public_solutions": certified, "problems": problems})
    else:
        from rich.markup import escape

        console = common.console()
        for name, items in problems.items():
            for item in items:
                console.print(f"[red]✗[/] {escape(name)}: {escape(item)}")
        console.print(f"{total - len(problems)}/{total} tasks valid; {certified} public solutions re-run")
    if problems:
        raise typer.Exit(1)


@tasks_app.command("audit")
def tasks_audit(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    root: Path | None = DIR_OPTION,
    record: bool = typer.Option(False, "--record", help="Write the result into the suite's suite.json (what `tasks stats` shows)."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Run the shortcut solvers on every task: each stated condition ignored or taken one step
    off, the first page of every listing only, the reference without its last write, the
    reference as another actor, and doing nothing. Prints how many tasks each one passes (and
    which). Exit code 1 when any shortcut passes a task, or a task has no public solver."""
    from ..tasks.audit import audit

    report = _load(root, domain)
    _warn_errors(report.errors)
    for name in sorted({t.domain for t in report.tasks}):
        common.world(common.domain(name), quiet=as_json)
    with _task_bar("auditing", len(report.tasks), quiet=as_json) as advance:
        result = audit(report.tasks, _world_for, on_task=lambda _: advance())
    summary = result.summary()
    if record:
        _record_audit(root, domain, summary)
    if as_json:
        common.print_json(summary)
    else:
        _print_audit(summary)
    if not summary["clean"]:
        raise typer.Exit(1)


def _record_audit(root: Path | None, domain: str | None, summary) -> None:
    import json

    from ..tasks.audit import audit_brief
    from ..tasks.suite import tasks_root

    if domain:
        common.fail("--record audits a whole suite: leave out --domain", 2)
    path = tasks_root(root) / "suite.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        info["audit"] = audit_brief(summary)
        path.write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except (OSError, ValueError) as exc:
        common.fail(f"cannot record the audit in {path}: {exc}")


def _print_audit(summary) -> None:
    from rich.table import Table

    table = Table(title=f"Shortcut solvers over {summary['tasks']} tasks")
    for col in ("shortcut", "tried on", "passes", "tasks passed"):
        table.add_column(col, justify="right" if col in ("tried on", "passes") else "left", overflow="fold")
    for family in summary["shortcuts"].values():
        ids = family["passed_ids"]
        shown = ", ".join(ids[:8]) + (f" (+{len(ids) - 8})" if len(ids) > 8 else "")
        table.add_row(family["title"], str(family["tasks"]), f"[red]{family['passed']}[/]" if family["passed"] else "0", shown)
    console = common.console()
    console.print(table)
    if summary["uncertified"]:
        console.print(
            f"[yellow]{len(summary['uncertified'])} task(s) have no public solver[/] (not certified): "
            + ", ".join(summary["uncertified"][:8])
        )
    console.print("[green]clean: no shortcut passes any task[/]" if summary["clean"] else "[red]not clean[/]")
