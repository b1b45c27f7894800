"""`ebench tasks`: list, show, generate, validate and measure tasks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..errors import EXIT_INTERRUPTED
from . import common

if TYPE_CHECKING:
    from rich.table import Table

    from ..engine.domain import Domain
    from ..sessions.paraphrase import AttemptRecord, ParaphraseSummary
    from ..sessions.synthesize import DraftRecord, SynthesisSummary
    from ..tasks.spec import LoadReport, Task

tasks_app = typer.Typer(help="Browse, generate and validate tasks (the shipped suite by default).", no_args_is_help=True)

DIR_OPTION = typer.Option(
    None,
    "--dir",
    help="Tasks from this folder (<domain>/<id>.json, or task files side by side) or JSONL file instead of the shipped suite.",
)
# Shipped files are never a command's default output: rewriting them is asked for by name.
AS_SUITE_OPTION = typer.Option(False, "--as-suite", help="Rewrite the shipped files themselves (a new suite version).")


def _output_folder(out: Path | None, as_suite: bool, shipped: Path, default_name: str) -> Path:
    """Where a command that writes task data writes: `--out`, the shipped folder with
    `--as-suite`, else a folder of that name in the data directory."""
    from ..paths import data_dir

    if out is not None and as_suite:
        common.fail("--out and --as-suite name two places: give one", 2)
    if as_suite:
        return shipped
    return out if out is not None else data_dir() / default_name


def _load(root: Path | None, domain: str | None = None, capability: str | None = None, ids: list[str] | None = None) -> LoadReport:
    from ..tasks.suite import load_suite

    if domain:
        common.domain(domain)  # an unknown domain is a usage error
    capability = common.capability(capability)
    return load_suite(root, domain, capability, ids)  # a missing or empty source: NoTasks, one line


def _warn_errors(errors: Iterable[object]) -> None:
    common.warn([str(e) for e in errors], "skipped")


def verifier_listing(listing: str) -> tuple[str, list[str]]:
    """'MODEL [key=value ...]' (a --verifier-model): the model and its own sampling arguments (a
    model string has no spaces). Listings that differ only in a stated seed are distinct verifiers."""
    model, *own = listing.split() or [""]
    if not model or any("=" not in item for item in own):
        common.fail(f"--verifier-model {listing!r}: expected a model, then key=value arguments (e.g. 'openai/gpt-4o-mini seed=2')", 2)
    return model, own


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


def _price_table(path: Path | None) -> dict[str, dict[str, float]]:
    """--prices read, or a one-line usage error."""
    from ..sessions.model_client import PricesError, load_prices

    try:
        return load_prices(path) if path is not None else {}
    except PricesError as exc:
        common.fail(str(exc), 2)


def _run_model_job(job: Callable[[], Any], partial: Callable[[], Any], stopped: str) -> tuple[Any, bool]:
    """Run a model job (synthesis, paraphrasing) to its summary, and whether ctrl+c cut it short:
    what it logged stays, and its summary says how far it got. A fatal model error (a key, a
    model that does not exist) stops it with `stopped`; a full disk is the environment's error."""
    import asyncio

    from ..sessions.solvers.base import FatalSolverError

    try:
        return asyncio.run(job()), False
    except KeyboardInterrupt:
        summary = partial()
        summary.status = "interrupted"
        return summary, True
    except FatalSolverError as exc:
        common.fail(f"{exc}; {stopped}", 1)
    except OSError as exc:
        common.fail_os(exc)


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
    from ..terminal import markup_escaped

    table = Table(title=f"{len(report.tasks)} tasks", show_lines=False)
    for col in ("id", "capabilities", "rows", "request"):
        table.add_column(col, overflow="fold", justify="right" if col == "rows" else "left")
    for t in report.tasks:
        table.add_row(t.id, ", ".join(CAPABILITY_SHORT[c] for c in t.capabilities), str(len(t.expected_diff)), markup_escaped(t.query))
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
    from ..terminal import markup_escaped as escape  # the task file's text (and the world's) shown, never obeyed

    console = common.console()
    d = common.domain(task.domain)
    console.print(f"[bold]{task.id}[/] ({task.domain}) · actor {task.actor}: {escape(_actor_label(d, task.actor))}")
    console.print(f"capabilities: {', '.join(CAPABILITY_TITLES[c] for c in task.capabilities)}")
    console.print(f"\n[bold]Request[/]\n{escape(task.query)}\n")
    console.print(f"[bold]Reference solution[/] ({len(task.reference_solution)} calls)")
    for i, step in enumerate(task.reference_solution):
        console.print(f"  {i:>3}  {escape(step.tool)} {escape(compact_json(step.args))}")
    stats = task.expected_diff.counts()
    console.print(
        f"\n[bold]Expected changes[/]: {len(task.expected_diff)} rows "
        f"({stats['insert']} inserted, {stats['update']} updated, {stats['delete']} deleted)"
    )
    for change in task.expected_diff:
        detail = change.new if change.op == "update" else ""
        console.print(
            f"  {change.op:7} {escape(change.table)} {escape(compact_json(change.key))} {escape(compact_json(detail)) if detail else ''}"
        )


def _actor_label(domain: Domain, actor: int) -> str:
    from ..engine.world import open_world_readonly

    conn = open_world_readonly(common.world(domain, quiet=True))
    try:
        return domain.actor_label(conn, actor)
    finally:
        conn.close()


@tasks_app.command("schema")
def tasks_schema(
    scenario: bool = typer.Option(False, "--scenario", help="The scenario file's schema (ebench-scenario/1) instead."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Print the JSON Schema of the task format (ebench-task/1), or with --scenario of the scenario
    format (ebench-scenario/1), for editors and other tools (always JSON; --json is accepted like everywhere)."""
    from ..tasks.scenarios import scenario_json_schema
    from ..tasks.spec import task_json_schema

    common.print_json(scenario_json_schema() if scenario else task_json_schema())


@tasks_app.command("stats")
def tasks_stats(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    root: Path | None = DIR_OPTION,
    run_audit: bool = typer.Option(False, "--audit", help="Run the shortcut audit now (default: the shipped suite's recorded audit)."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Per domain: templates and tasks per template, public solution length, changed rows,
    capability shares, and the shortcut audit's result."""
    from ..tasks.suite import suite_info, suite_stats

    report = _load(root, domain)
    _warn_errors(report.errors)
    stats = suite_stats(report.tasks)
    info = suite_info(root)
    stats["audit"] = _stats_audit(run_audit, report.tasks, info)
    stats["suite_version"] = info.get("version")
    _add_structure_stats(stats, report.tasks)
    if as_json:
        common.print_json(stats)
        return
    console = common.console()
    console.print(_stats_table(stats, info.get("version")))
    rows = stats["changed_rows"]
    console.print(f"all domains: changed rows min {rows['min']}, mean {rows['mean']}, max {rows['max']}")
    _print_stats_audit(stats["audit"])
    _print_structure_stats(stats)


def _stats_audit(run_audit: bool, tasks: list[Task], info: dict[str, Any]) -> dict[str, Any] | None:
    """The shortcut audit's brief: run now (--audit), else the suite's recorded one, else None."""
    if run_audit:
        from ..tasks.audit import audit, audit_brief

        return {"recorded": False, **audit_brief(audit(tasks, _world_for).summary())}
    if info.get("audit"):
        return {"recorded": True, **info["audit"]}
    return None


def _stats_table(stats: dict[str, Any], version: Any) -> Table:
    """`tasks stats`' table: one row per measure, one column per domain."""
    from rich.table import Table

    from ..tasks.spec import CAPABILITIES, CAPABILITY_TITLES

    names = list(stats["domains"])
    table = Table(title=f"{stats['tasks']} tasks" + (f" (suite version {version})" if version else ""))
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
    counts = sorted({k for n in names for k in doms[n]["biting_conditions"]}, key=int)
    for k in counts:
        table.add_row(
            f"tasks with {k} biting condition{'s' if k != '1' else ''}", *[str(doms[n]["biting_conditions"].get(k, 0)) for n in names]
        )
    return table


def _print_stats_audit(audit_info: dict[str, Any] | None) -> None:
    console = common.console()
    if audit_info is None:
        console.print("shortcut audit: not recorded for these tasks (run with --audit, or `ebench tasks audit`)")
        return
    how = "recorded when the suite was made" if audit_info["recorded"] else "run now"
    passed = {k: v for k, v in audit_info["passed"].items() if v}
    verdict = "[green]no shortcut passes any task[/]" if audit_info["clean"] else f"[red]shortcuts pass tasks: {passed}[/]"
    console.print(f"shortcut audit ({how}, {audit_info['tasks']} tasks): {verdict}")
    careful = audit_info.get("careful")
    if careful:
        tried = sum(f["tried"] for f in careful.values())
        passed_careful = sum(f["passed"] for f in careful.values())
        console.print(f"careful variants ({how}): {passed_careful} of {tried} passed")


def _add_structure_stats(stats: dict[str, Any], tasks: list[Task]) -> None:
    """Structure (distinct structures, the largest one's share) and difficulty (depth, biting
    conditions, reference length), over all the tasks and per domain."""
    from ..tasks.structures import structure_stats

    stats["structure"] = structure_stats(tasks)
    for name, entry in stats["domains"].items():
        entry["structure"] = structure_stats([t for t in tasks if t.domain == name])


def _spread_text(spread: dict[str, Any]) -> str:
    counts = ", ".join(f"{k}: {n}" for k, n in spread["counts"].items())
    return f"min {spread['min']}, mean {spread['mean']}, max {spread['max']} ({counts})" if spread["counts"] else "n/a"


def _print_structure_stats(stats: dict[str, Any]) -> None:
    console = common.console()
    for name, entry in [("all domains", stats["structure"]), *((n, d["structure"]) for n, d in stats["domains"].items())]:
        if not entry["tasks"]:
            continue
        console.print(
            f"structure ({name}): {entry['distinct_structures']} distinct of {entry['tasks']} tasks, largest share "
            f"{entry['largest_structure_share']:.1%}; {entry['distinct_skeletons']} phrasing skeletons; {entry['composed']} composed"
        )
    entry = stats["structure"]
    if entry["depth"]["counts"]:
        console.print(f"composition depth: {_spread_text(entry['depth'])}")
    console.print(f"conditions that bite: {_spread_text(entry['biting_conditions'])}")
    ref = entry["reference_length"]
    console.print(f"reference length: min {ref['min']}, mean {ref['mean']}, max {ref['max']}")


def _world_for(task: Task) -> Path:
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
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Same seed, same tasks."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write into (as <out>/<domain>/<id>.json)."),
    prefix: str | None = typer.Option(None, "--prefix", help="Task id prefix (default: <domain>-s<seed>, which no shipped id uses)."),
    world_seed: int | None = typer.Option(
        None, "--world-seed", min=0, help="Make the tasks on the world of this seed (default: the domain's own)."
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

        def save(task: Task) -> None:
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


@tasks_app.command("synthesize")
def tasks_synthesize(
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    generator_model: str = typer.Option(..., "--generator-model", help="The litellm model string that writes the drafts."),
    verifier_model: list[str] = typer.Option(
        ...,
        "--verifier-model",
        help="A litellm model that solves each draft, optionally with its own sampling arguments ('openai/gpt-4o-mini seed=2'); "
        "repeatable: one vote per distinct configuration.",
    ),
    count: int = typer.Option(..., "--count", "-n", min=1, help="How many tasks to accept."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write into: <out>/<domain>/<id>.json, synthesis.jsonl, sessions/."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Seeds the users sampled for the drafts."),
    world_seed: int | None = typer.Option(
        None, "--world-seed", min=0, help="Make the drafts on the world of this seed (default: the domain's)."
    ),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Drafts in progress at once."),
    min_votes: int | None = typer.Option(
        None, "--min-votes", min=1, help="Verifiers that must pass a draft (default 2, or all when fewer)."
    ),
    budget: float | None = typer.Option(None, "--budget", min=0, help="USD: no new draft starts once this much is spent."),
    max_drafts: int | None = typer.Option(None, "--max-drafts", min=1, help="Drafts to try at most (default 4 x --count)."),
    capability: list[str] = typer.Option([], "--capability", "-c", help="Aim only at these capabilities (repeatable; default all six)."),
    actor: list[int] = typer.Option([], "--actor", help="Sample the users from these ids only (repeatable)."),
    api_base: str | None = typer.Option(None, "--api-base", help="The API's base URL for every model."),
    generator_api_base: str | None = typer.Option(None, "--generator-api-base", help="The generator's API base URL."),
    verifier_api_base: str | None = typer.Option(None, "--verifier-api-base", help="The verifiers' API base URL."),
    model_arg: list[str] = typer.Option([], "--model-arg", help="key=value passed to every model call (repeatable)."),
    generator_model_arg: list[str] = typer.Option([], "--generator-model-arg", help="key=value for the generator's calls only."),
    verifier_model_arg: list[str] = typer.Option([], "--verifier-model-arg", help="key=value for the verifiers' calls only."),
    verifier_tools: str = typer.Option(
        "privileged",
        "--verifier-tools",
        help="privileged (as in the paper: the verifiers get the generator's query_sql and exec_code) or public (the stricter test).",
    ),
    allow_same_verifier: bool = typer.Option(
        False,
        "--allow-same-verifier",
        help="Run even when the distinct verifier configurations are fewer than --min-votes (the quorum is lowered to them).",
    ),
    weak_model: str | None = typer.Option(
        None, "--weak-model", help="A weak litellm model: a draft it solves (public tools) is rejected as too easy."
    ),
    prices: Path | None = typer.Option(None, "--prices", help='A JSON file {"model": {"input": USD/M, "output": USD/M}}.'),
    retries: int = typer.Option(6, "--retries", min=0, help="Retries of a transient API error (rate limit, 5xx, timeout)."),
    backoff: float = typer.Option(1.0, "--backoff", min=0, help="First retry delay in seconds, doubled each retry."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Call no model: print the plan and its estimated cost at most."),
    estimate_turns: int = typer.Option(12, "--estimate-turns", min=1, help="--dry-run: model turns per trial."),
    estimate_tokens: int = typer.Option(3000, "--estimate-tokens", min=0, help="--dry-run: prompt tokens per turn."),
    estimate_output_tokens: int = typer.Option(300, "--estimate-output-tokens", min=0, help="--dry-run: completion tokens per turn."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Have a model write tasks: each draft is made on a private copy of the world, checked (see
    the README's Tasks section), and kept when at least --min-votes verifier models solve it.
    Run again with the same --out and options to continue an interrupted synthesis.
    Exit code 1 when fewer than --count were accepted (the budget or --max-drafts ran out)."""
    from ..sessions.model_client import LLMConfig
    from ..sessions.synthesize import Synthesis, SynthesisConfig, SynthesisError
    from ..terminal import markup_escaped
    from .run import parse_model_args

    common.domain(domain)
    capabilities = [common.capability(c) for c in capability]
    price_table = _price_table(prices)
    shared = parse_model_args(model_arg)

    def role(model: str, base: str | None, args: list[str]) -> LLMConfig:
        return LLMConfig(
            model=model, api_base=base or api_base, model_args={**shared, **parse_model_args(args)}, retries=retries, backoff=backoff
        )

    def verifier(listing: str) -> LLMConfig:
        model, own = verifier_listing(listing)
        return role(model, verifier_api_base, [*verifier_model_arg, *own])

    config = SynthesisConfig(
        domain=domain,
        generator=role(generator_model, generator_api_base, generator_model_arg),
        verifiers=[verifier(m) for m in verifier_model],
        count=count,
        out=out,
        seed=seed,
        concurrency=concurrency,
        min_votes=min_votes,
        budget=budget,
        max_drafts=max_drafts,
        actors=actor or None,
        prices=price_table,
        verifier_tools=verifier_tools,
        world_seed=world_seed,
        weak=role(weak_model, verifier_api_base, verifier_model_arg) if weak_model else None,
        allow_same_verifier=allow_same_verifier,
    )
    if capabilities:
        config.capabilities = [c for c in capabilities if c]
    common.world(common.domain(domain), quiet=as_json, seed=world_seed)  # built (with progress) before any model call
    if dry_run:
        try:
            planner = Synthesis(config)
            planner.load()
        except SynthesisError as exc:
            common.fail(str(exc), 2)
        common.warn(planner.warnings)
        plan = planner.estimate(estimate_turns, estimate_tokens, estimate_output_tokens)
        _print_synthesis_plan(plan, as_json)
        if not as_json:
            common.console().print(
                f"verifiers: {plan['verifiers']} listed, {plan['distinct_verifiers']} distinct (one vote each), {plan['votes_needed']} needed"
            )
        return
    with _task_bar("synthesizing", count, quiet=as_json) as advance:

        def on_draft(record: DraftRecord, summary: SynthesisSummary) -> None:
            if record.outcome == "accepted":
                advance()
            if not as_json:
                cost = f"${summary.cost:.4f}" + ("+?" if summary.cost_unknown else "")
                verdict = record.task if record.outcome == "accepted" else f"{record.outcome}: {record.reason}"
                common.console().print(
                    f"draft {record.draft} ({record.capability}, actor {record.actor}): {markup_escaped(str(verdict))}; cost so far {cost}"
                )

        try:
            synthesis = Synthesis(config, on_draft)
            synthesis.prepare()
        except SynthesisError as exc:
            common.fail(str(exc), 2)
        common.warn(synthesis.warnings)
        earlier = synthesis.summary
        for _ in range(min(earlier.accepted, count)):
            advance()
        if earlier.resumed and not as_json:
            common.console().print(
                f"resuming {out}: {earlier.resumed} drafts done, {earlier.accepted} accepted, cost so far ${earlier.cost:.4f}"
            )
        summary, interrupted = _run_model_job(
            synthesis.run, lambda: synthesis.summary, f"the synthesis stopped: what was accepted is in {out}"
        )
    if budget is not None and summary.cost_unknown:
        common.warn([f"{summary.cost_unknown} trial(s) had no price, so --budget counted them as free; give --prices"])
    result = summary.to_dict()
    if as_json:
        common.print_json(result)
    else:
        rejected = ", ".join(f"{n} {reason}" for reason, n in summary.rejected.most_common()) or "none"
        cost = f"${summary.cost:.4f}" + (f" (+{summary.cost_unknown} trial(s) unpriced)" if summary.cost_unknown else "")
        common.console().print(  # a rejection's reason may quote the model
            f"accepted {summary.accepted} of {summary.drafts} drafts into {out / domain} "
            f"({summary.unverified} unverified, {summary.infra_errors} lost to the generator's API; "
            f"rejected: {markup_escaped(rejected)}); cost {cost}"
        )
        common.console().print(
            f"verifiers: {summary.verifiers} listed, {summary.distinct_verifiers} distinct (one vote each), "
            f"{summary.votes_needed} needed; their tools: {', '.join(summary.verifier_tools)}"
        )
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if summary.accepted < count:
        how = {
            "budget": "the budget was spent",
            "drafts": "--max-drafts ran out",
            "api": "the generator's API failed for several drafts in a row (see synthesis.jsonl); run again to continue",
        }.get(summary.status, "the run stopped")
        common.fail(f"only {summary.accepted} of {count} tasks were accepted: {how}")


@tasks_app.command("synthesize-replay")
def tasks_synthesize_replay(
    source: Path = typer.Argument(..., help="The folder of a synthesis (its synthesis.json, synthesis.jsonl and sessions/)."),
    out: Path = typer.Option(..., "--out", "-o", help="A new folder for the replayed synthesis."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Run a synthesis again with no API: every model request is answered from its recorded
    sessions. The drafts, verdicts and task files must come out the same; exit code 1 names what
    did not (a world or an ebench that changed since)."""
    from ..sessions.synthesize import Synthesis, SynthesisConfig, SynthesisError, replay_differences

    try:
        config = SynthesisConfig.replaying(source, out)
        common.domain(config.domain)
        common.world(common.domain(config.domain), quiet=as_json, seed=config.world_seed)
        synthesis = Synthesis(config)
        synthesis.prepare()
    except SynthesisError as exc:
        common.fail(str(exc), 2)
    summary, interrupted = _run_model_job(synthesis.run, lambda: synthesis.summary, f"the replay stopped; what it made is in {out}")
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    differences = replay_differences(source, out, config.domain)
    if as_json:
        common.print_json({**summary.to_dict(), "source": str(source), "differences": differences})
    else:
        common.console().print(f"replayed {summary.drafts} drafts of {source} into {out}: {summary.accepted} accepted")
    if differences:
        common.fail(f"the replay differs from {source}: " + "; ".join(differences[:5]) + (" ..." if len(differences) > 5 else ""))
    if not as_json:
        common.console().print("the same drafts, verdicts and task files as the recording")


def _print_synthesis_plan(plan: dict[str, Any], as_json: bool) -> None:
    if as_json:
        common.print_json({"dry_run": True, **plan})
        return
    say = common.console().print
    done = plan["done"]
    if done:
        say(f"{plan['out']} has {done['drafts']} drafts done, {done['accepted']} accepted, cost so far ${done['cost']:.4f}")
    mix = ", ".join(f"{n} {capability}" for capability, n in plan["capabilities"].items())
    say(f"plan: up to {plan['drafts']} more drafts (--max-drafts {plan['max_drafts']}) for {plan['count']} tasks: {mix}")
    a = plan["assumptions"]
    say(
        f"estimate, every draft verified, {a['turns_per_trial']} turns a trial of {a['prompt_tokens_per_turn']} prompt"
        f" + {a['completion_tokens_per_turn']} completion tokens:"
    )
    for m in plan["models"]:
        cost = m["cost"] if m["cost"] == "unknown" else f"${m['cost']:.4f}"
        say(f"  {m['role']} {m['model']}: {m['trials']} trials, {cost}")
    total = plan["cost"] if plan["cost"] == "unknown" else f"${plan['cost']:.4f}"
    unknown = f" (${plan['cost_priced']:.4f} for the priced models; give --prices for the others)" if plan["cost"] == "unknown" else ""
    say(f"at most {total}{unknown}")


@tasks_app.command("paraphrase")
def tasks_paraphrase(
    model: str = typer.Option(..., "--model", "-m", help="The litellm model string that rewords the requests."),
    verifier_model: list[str] = typer.Option(
        ..., "--verifier-model", help="A litellm model that solves each paraphrased task (repeatable: one vote each)."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write into: <out>/<domain>/<id>-p<n>.json, paraphrase.jsonl, sessions/."),
    task: list[str] = typer.Option([], "--task", "-t", help="Reword only these task ids (repeatable; default every task)."),
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain's tasks."),
    tasks_dir: Path | None = typer.Option(
        None, "--tasks-dir", help="A folder of task files (<domain>/<id>.json) instead of the shipped suite."
    ),
    variants: int = typer.Option(1, "--variants", min=1, help="Rewordings to try per task."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Tasks being reworded at once."),
    min_votes: int | None = typer.Option(
        None, "--min-votes", min=1, help="Verifiers that must pass a paraphrase (default 2, or all when fewer)."
    ),
    budget: float | None = typer.Option(None, "--budget", min=0, help="USD: no new attempt starts once this much is spent."),
    api_base: str | None = typer.Option(None, "--api-base", help="The API's base URL for every model."),
    prices: Path | None = typer.Option(None, "--prices", help='A JSON file {"model": {"input": USD/M, "output": USD/M}}.'),
    retries: int = typer.Option(6, "--retries", min=0, help="Retries of a transient API error (rate limit, 5xx, timeout)."),
    backoff: float = typer.Option(1.0, "--backoff", min=0, help="First retry delay in seconds, doubled each retry."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Reword the requests of existing tasks: a paraphrase keeps the task's expected diff, reference
    solution, actor and world, and is kept only when it leaks no id or count and at least
    --min-votes verifier models solve the task from the new wording. Exit code 1 when none was kept
    or the budget stopped the run."""
    from ..sessions.model_client import LLMConfig
    from ..sessions.paraphrase import ParaphraseConfig, ParaphraseError, Paraphrasing
    from ..terminal import markup_escaped
    from .run import check_worlds, parse_model_args

    report = _load(tasks_dir, domain, None, task or None)
    _warn_errors(report.errors)
    missing = sorted(set(task) - {t.id for t in report.tasks})
    if missing:
        common.fail(f"no task {missing[0]!r} in {tasks_dir or 'the shipped suite'}; see `ebench tasks list`", 2)
    if not report.tasks:
        common.fail("no task to paraphrase", 2)
    check_worlds(report.tasks)  # the verifiers' trials need the world each task was made on
    price_table = _price_table(prices)

    def role(name: str, own: list[str] | None = None) -> LLMConfig:
        return LLMConfig(model=name, api_base=api_base, model_args=parse_model_args(own or []), retries=retries, backoff=backoff)

    config = ParaphraseConfig(
        model=role(model),
        verifiers=[role(*verifier_listing(m)) for m in verifier_model],
        out=out,
        variants=variants,
        concurrency=concurrency,
        min_votes=min_votes,
        budget=budget,
        prices=price_table,
    )
    for name in sorted({t.domain for t in report.tasks}):
        common.world(common.domain(name), quiet=as_json)
    with _task_bar("paraphrasing", len(report.tasks) * variants, quiet=as_json) as advance:

        def on_attempt(record: AttemptRecord, summary: ParaphraseSummary) -> None:
            advance()
            if not as_json:
                verdict = record.paraphrase if record.outcome == "kept" else f"{record.outcome}: {record.reason}"  # a model's words
                common.console().print(
                    f"{markup_escaped(str(record.task))} variant {record.variant}: {markup_escaped(str(verdict))}; cost so far ${summary.cost:.4f}"
                )

        try:
            paraphrasing = Paraphrasing(config, on_attempt)
            paraphrasing.prepare()
        except ParaphraseError as exc:
            common.fail(str(exc), 2)
        summary, interrupted = _run_model_job(
            lambda: paraphrasing.run(report.tasks), lambda: paraphrasing.summary, f"the run stopped: what was kept is in {out}"
        )
    if budget is not None and summary.cost_unknown:
        common.warn([f"{summary.cost_unknown} exchange(s) had no price, so --budget counted them as free; give --prices"])
    if as_json:
        common.print_json(summary.to_dict())
    else:
        rejected = ", ".join(f"{n} {reason}" for reason, n in summary.rejected.most_common()) or "none"
        common.console().print(  # a rejection's reason may quote the model
            f"kept {summary.kept} of {summary.attempts} paraphrases in {out} "
            f"({summary.unverified} unverified; rejected: {markup_escaped(rejected)}); cost ${summary.cost:.4f}"
        )
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if summary.status == "budget":
        common.fail(f"the budget was spent after {summary.attempts} attempts; kept {summary.kept}")
    if summary.kept == 0:
        common.fail("no paraphrase was kept")


@tasks_app.command("ask-split")
def tasks_ask_split(
    root: Path | None = DIR_OPTION,
    out: Path | None = typer.Option(None, "--out", "-o", help="Where to write it (default: ask-split/ in the data directory)."),
    as_suite: bool = AS_SUITE_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Write the [bold]ask[/] split: tasks whose user holds a value the request leaves out (a name, a message)."""
    from ..tasks.asking import SPLIT_DIR, write_split
    from ..tasks.suite import suite_version

    target = _output_folder(out, as_suite, SPLIT_DIR, "ask-split")
    report = _load(root)
    _warn_errors(report.errors)
    try:
        variants = write_split(report.tasks, target, suite_version(root))
    except OSError as exc:
        common.fail_os(exc)
    counts: dict[str, int] = {}
    for task in variants:
        counts[task.domain] = counts.get(task.domain, 0) + 1
    if as_json:
        common.print_json({"out": str(target), "tasks": len(variants), "counts": counts})
    else:
        common.console().print(f"Wrote {len(variants)} ask task(s) of {len(report.tasks)} to {target}: {counts}")


@tasks_app.command("paraphrases")
def tasks_paraphrases(
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    root: Path | None = DIR_OPTION,
    as_suite: bool = AS_SUITE_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Store each task's [bold]paraphrases[/] (its template's other phrasing skeletons, filled with
    the same values; what [bold]run --perturb intent:paraphrase[/] draws from) in its file. A
    task whose template does not reproduce its request gets none; only changed files are written.
    The shipped suite's files are rewritten only with [bold]--as-suite[/]."""
    import json as jsonlib

    from ..tasks.skeletons import fill_paraphrases
    from ..tasks.spec import parse_task
    from ..tasks.suite import SUITE_DIR, tasks_root
    from ..tasks.template_catalog import task_template

    if as_suite and root is not None:
        common.fail("--dir and --as-suite name two folders: give one", 2)
    if as_suite:
        root = SUITE_DIR
    elif tasks_root(root).resolve() == SUITE_DIR.resolve():
        common.fail("this would rewrite the shipped suite's files: name a task folder with --dir, or pass --as-suite", 2)
    report = _load(root, domain)
    _warn_errors(report.errors)
    found = fill_paraphrases(report.tasks, task_template)
    written = 0
    for task in report.tasks:
        if task.paraphrases == found[task.id]:
            continue
        path = Path(task.source)
        try:  # read again just before writing: the file is the source of truth
            current = parse_task(jsonlib.loads(path.read_text(encoding="utf-8")), str(path))
            current.paraphrases = found[task.id]
            path.write_text(current.to_json(), encoding="utf-8")
        except OSError as exc:
            common.fail_os(exc)
        written += 1
    with_some = sum(1 for texts in found.values() if texts)
    summary = {"tasks": len(found), "with_paraphrases": with_some, "paraphrases": sum(map(len, found.values())), "written": written}
    if as_json:
        common.print_json({**summary, "without": sorted(k for k, v in found.items() if not v)})
    else:
        common.console().print(
            f"{with_some}/{len(found)} tasks have paraphrases ({summary['paraphrases']} in all); {written} file(s) written"
        )


@tasks_app.command("scenarios")
def tasks_scenarios(
    domain: list[str] = typer.Option([], "--domain", "-d", help="Only this domain (repeatable; default: all three)."),
    count: int = typer.Option(40, "--count", "-n", min=1, help="Scenarios per domain."),
    seed: int = typer.Option(2026, "--seed", "-s", min=0, help="The seed: the same seed gives the same scenarios, byte for byte."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Where to write them (default: scenarios/ in the data directory)."),
    as_suite: bool = AS_SUITE_OPTION,
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Build [bold]scenarios[/]: conversations of 4 turns (task, follow-up, compound, chained, reference, long-range, switch, clarify, chat), certified turn by turn."""
    from ..tasks.scenario_generation import generate_scenarios, write_scenarios
    from ..tasks.scenarios import SCENARIOS_DIR, write_scenario_record

    domains = [common.domain(d).name for d in domain] or ["music", "meeting", "moba"]
    target = _output_folder(out, as_suite, SCENARIOS_DIR, "scenarios")
    made = {}
    for name in domains:
        common.world(common.domain(name))
        with _task_bar(f"{name} scenarios", count, quiet=as_json) as advance:
            scenarios = generate_scenarios(name, count, seed, lambda _: advance())
        try:
            write_scenarios(scenarios, target)
        except OSError as exc:
            common.fail_os(exc)
        made[name] = len(scenarios)
    record = write_scenario_record(target, seed)
    if as_json:
        common.print_json({"out": str(target), "scenarios": made, "kinds": record["kinds"]})
    else:
        common.console().print(f"Wrote {sum(made.values())} scenario(s) to {target}: {made}; turns by kind: {record['kinds']}")


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
    from ..tasks.task_check import check_task

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
        from ..terminal import markup_escaped as escape  # a problem may quote the task file

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
    """Measure both error rates of a suite. Shortcuts (must fail): each stated condition ignored
    or taken one step off, the first page of every listing only (with the tools' own filters),
    the reference without its last write, the reference as another actor, doing nothing.
    Careful variants (must pass): the tools' own filters and sort, the other reading of a point
    the wording leaves open, independent writes reordered, reads repeated, harmless reads added.
    Also lists clauses that bite nothing and terms the product's vocabulary leaves open. Exit
    code 1 when a shortcut passes a task, a careful variant fails one, a clause bites nothing, a
    term is left open, or a task has no public solver."""
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
    if not (summary["clean"] and summary["careful_clean"]):
        raise typer.Exit(1)


def _record_audit(root: Path | None, domain: str | None, summary: dict[str, Any]) -> None:
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
    except OSError as exc:
        common.fail_os(exc, " (recording the audit)")
    except ValueError as exc:  # a damaged suite.json: bad input
        common.fail(f"cannot record the audit in {path}: {exc}", 2)


def _print_audit(summary: dict[str, Any]) -> None:
    from rich.table import Table

    from ..terminal import markup_escaped

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
    careful = Table(title="Careful variants (every correct way must pass)")
    for col in ("careful variant", "tried", "passed", "tasks failed"):
        careful.add_column(col, justify="right" if col in ("tried", "passed") else "left", overflow="fold")
    for family in summary["careful"].values():
        ids = family["failed_ids"]
        shown = ", ".join(ids[:8]) + (f" (+{len(ids) - 8})" if len(ids) > 8 else "")
        passed = f"[red]{family['passed']}[/]" if family["passed"] < family["tried"] else str(family["passed"])
        careful.add_row(family["title"], str(family["tried"]), passed, shown)
    console.print(careful)
    by_template = Table(title="Careful variants per template")
    for col in ("template", "tasks", "tried", "passed"):
        by_template.add_column(col, justify="left" if col == "template" else "right")
    for name, entry in summary["careful_by_template"].items():
        passed = f"[red]{entry['passed']}[/]" if entry["passed"] < entry["tried"] else str(entry["passed"])
        by_template.add_row(name, str(entry["tasks"]), str(entry["tried"]), passed)
    console.print(by_template)
    rate = summary["careful_rate"]
    console.print(f"careful variants passed: {'n/a' if rate is None else f'{rate:.1%}'}")
    for task_id, problems in summary["clauses_without_bite"].items():  # a clause quotes the task file
        console.print(f"[red]clause bites nothing[/] {task_id}: {markup_escaped('; '.join(problems))}")
    if summary["clauses_undeclared"]:
        console.print(f"[yellow]templates that declare no clauses[/]: {', '.join(summary['clauses_undeclared'])}")
    for task_id, terms in summary["open_terms"].items():
        console.print(f"[red]term left open[/] {task_id}: {', '.join(terms)}")
    if summary["careful_clean"]:
        console.print("[green]every careful variant passes; every clause bites; no term is left open[/]")


@tasks_app.command("compose")
def tasks_compose(
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    count: int = typer.Option(..., "--count", "-n", min=1, help="How many tasks to make."),
    seed: int = typer.Option(0, "--seed", "-s", min=0, help="Same seed, same tasks (byte for byte)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Folder to write into (as <out>/<domain>/<id>.json); default: the data directory's composed/."
    ),
    split: str = typer.Option(
        "public", "--split", help="public (default), or private: only the reserved part of the grammar, which public tasks never use."
    ),
    depth: str = typer.Option(
        "3-5", "--depth", help="Parts composed beyond the source (terms, reduction, writes): a number or a range such as 2-5."
    ),
    conditions: str | None = typer.Option(
        None, "--conditions", help="Keep tasks whose stated conditions that bite number this many: a number or a range such as 2-4."
    ),
    calls: str | None = typer.Option(
        None, "--calls", help="Keep tasks whose reference solution makes this many calls: a number or a range such as 5-30."
    ),
    prefix: str | None = typer.Option(None, "--prefix", help="Task id prefix (default: <domain>-c<seed>, private <domain>-p<seed>)."),
    world_seed: int | None = typer.Option(
        None, "--world-seed", min=0, help="Make the tasks on the world of this seed (default: the domain's own)."
    ),
    as_suite: bool = typer.Option(False, "--as-suite", help="Write the shipped composed split itself (ebench/tasks/splits/composed)."),
    force: bool = typer.Option(False, "--force", help="Replace task files that already exist."),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Processes that certify (default: the cores, at most 2); the tasks are the same however many."
    ),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Compose new certified tasks from the domain's task grammar (its parts: sources, filters,
    reductions, writes), with open structure: each task is a structure sampled from the grammar and
    certified like a template's (see the README's "Composed tasks"). Seeded and reproducible."""
    import os

    from ..tasks.composition import COMPOSED_DIR, COMPOSED_VERSION, SHARDS, SPLITS, Bounds, Depth, compose
    from ..tasks.structures import structure_stats
    from ..tasks.suite import SUITE_DIR, load_suite, record_split_domain

    the_domain = common.domain(domain)
    if split not in SPLITS:
        common.fail(f"--split {split!r}: use one of {', '.join(SPLITS)}", 2)
    try:
        depth_range = Depth.parse(depth)
        bounds = Bounds(Bounds.parse_range("--conditions", conditions), Bounds.parse_range("--calls", calls))
    except ValueError as exc:
        common.fail(str(exc), 2)
    root = _output_folder(out, as_suite, COMPOSED_DIR, "composed")
    common.world(the_domain, quiet=as_json, seed=world_seed)
    if prefix is None:
        prefix = f"{domain}-{'p' if split == 'private' else 'c'}{'' if as_suite else seed}"
    shipped = load_suite(SUITE_DIR, domain=domain).tasks
    if any(t.id.startswith(f"{prefix}-") for t in shipped):
        common.fail(f"--prefix {prefix!r} would give ids of the shipped suite; choose another", 2)
    folder = _emptied_folder(root / domain, force)
    made: list[Task] = []
    with _task_bar("composing", count, quiet=as_json) as advance:

        def save(task: Task) -> None:
            (folder / f"{task.id}.json").write_text(task.to_json(), encoding="utf-8")
            made.append(task)

        try:
            report = compose(
                domain,
                count,
                seed,
                split=split,
                depth=depth_range,
                id_prefix=prefix,
                avoid=shipped,
                world_seed=world_seed,
                on_task=save,
                on_progress=advance,
                workers=workers or min(SHARDS, os.cpu_count() or 1),
                bounds=bounds,
            )
        except ValueError as exc:
            common.fail(str(exc), 2)
        except OSError as exc:
            common.fail_os(exc)
        except RuntimeError as exc:  # a composing process failed: said in one line
            common.fail(str(exc), 1)
    structure = structure_stats(made)
    if as_suite:
        record_split_domain(
            root,
            COMPOSED_VERSION,
            "The shipped composed split: tasks whose structure is drawn from each domain's task grammar and certified like a "
            "template's (ebench/tasks/composition.py). Made per domain with `ebench tasks compose --domain D --count N --seed S "
            "--as-suite`.",
            domain,
            {"seed": seed, "count": len(made), "split": split, "depth": depth, "distinct_structures": structure["distinct_structures"]},
        )
    summary = {
        "domain": domain,
        "seed": seed,
        "split": split,
        "depth": depth,
        "conditions": conditions,
        "calls": calls,
        "world_seed": world_seed if world_seed is not None else the_domain.default_seed,
        "written": len(made),
        "attempts": report.attempts,
        "rejected": dict(report.rejected),
        "distinct_structures": structure["distinct_structures"],
        "largest_structure_share": structure["largest_structure_share"],
        "out": str(folder),
    }
    if as_json:
        common.print_json(summary)
    else:
        rejected = ", ".join(f"{n} {reason}" for reason, n in report.rejected.most_common()) or "none"
        common.console().print(
            f"wrote {len(made)} composed tasks ({structure['distinct_structures']} distinct structures) to {folder} "
            f"({report.attempts} drafts; rejected: {rejected})"
        )
    if len(made) < count:
        common.fail(f"only {len(made)} of {count} tasks could be composed: the grammar's structures found no more certifiable data")


def _emptied_folder(folder: Path, force: bool) -> Path:
    """The domain's output folder, made and emptied of task files (which needs --force)."""
    if folder.exists() and not folder.is_dir():
        common.fail(f"{folder} is not a folder", 2)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        common.fail_os(exc)
    existing = sorted(p.name for p in folder.glob("*.json"))
    if existing and not force:
        common.fail(f"{folder} already holds {len(existing)} task files; use --force to replace them, or another --out", 2)
    for name in existing:
        (folder / name).unlink()
    return folder


@tasks_app.command("overlap")
def tasks_overlap(
    first: Path = typer.Argument(..., help="Folder A of task files (<domain>/<id>.json)."),
    second: Path = typer.Argument(..., help="Folder B: the share of its tasks whose structure occurs in A is measured."),
    domain: str | None = typer.Option(None, "--domain", "-d", help="Only this domain."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """The share of B's tasks whose structure occurs in A (a template's name is a templated task's
    structure; a composed task's is its tree of parts), and separately whose phrasing skeleton does."""
    from ..tasks.structures import overlap

    a = _load(first, domain)
    b = _load(second, domain)
    _warn_errors([*a.errors, *b.errors])
    result = overlap(a.tasks, b.tasks)
    result["a"], result["b"] = str(first), str(second)
    if as_json:
        common.print_json(result)
        return
    console = common.console()
    n = result["b_tasks"]
    console.print(f"{n} tasks in {second}, {result['a_tasks']} in {first}")
    console.print(f"structure overlap: {result['structure_overlap']:.1%} ({len(result['same_structure'])} of {n} tasks of B)")
    console.print(f"skeleton overlap: {result['skeleton_overlap']:.1%} ({len(result['same_skeleton'])} of {n} tasks of B)")
