"""`ebench report RUN [RUN...]`: score runs and show them side by side."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import os_error_exit_code
from . import common

if TYPE_CHECKING:
    from rich.console import Console

    from ..sessions.report import Baseline, TableData
    from ..sessions.run_report import RunReport

RUNS_ARGUMENT = typer.Argument(
    ..., metavar="RUN...", help="Run directories (each with manifest.json and results.jsonl), or a folder of sessions.", show_default=False
)
CSV_OPTION = typer.Option(
    None,
    "--csv",
    metavar="FILE",
    help="Also write every number to FILE as CSV, one row per (run, scope, metric): columns run, path, scope, metric, value; "
    "scope is overall, domain:NAME, capability:NAME, efficiency, failures or infra; the analyses' frontier:AXIS, "
    "code_vs_tools (also code_vs_tools:domain:NAME and code_vs_tools:capability:NAME), code_usage:GROUP, domain_efficiency:NAME and correlation; and baseline and baseline:TASK "
    'with the human baseline (the people\'s figures as the run "human baseline"); rates are fractions 0..1, '
    "a missing value is empty.",
)
BASELINE_OPTION = typer.Option(
    None,
    "--baseline",
    metavar="FOLDER",
    help="Read the human baseline from this folder of sessions instead of the data directory's sessions.",
    show_default=False,
)
NO_BASELINE_OPTION = typer.Option(False, "--no-baseline", help="Leave out the human baseline.")
FRONTIER_SVG_OPTION = typer.Option(
    None,
    "--frontier-svg",
    metavar="FILE",
    help="Also write the cost-accuracy frontier (Avg^k over --frontier-axis, one marker per run, the frontier as a line) to FILE as SVG.",
    show_default=False,
)
FRONTIER_AXIS_OPTION = typer.Option(
    "cost",
    "--frontier-axis",
    metavar="AXIS",
    help="The frontier's x axis, per task: cost, calls (total calls) or tokens (in + out); for the chart and --frontier-svg.",
)


def report_command(
    runs: list[Path] = RUNS_ARGUMENT,
    as_json: bool = common.JSON_OPTION,
    csv_path: Path | None = CSV_OPTION,
    app: bool = typer.Option(
        False,
        "--app",
        help="Open the results in the app: leaderboard, per domain and capability, "
        "Pass^k over k; a row opens its failed trials in the replay debugger.",
    ),
    theme: str | None = typer.Option(None, "--theme", help="The app's theme (with --app)."),
    baseline_folder: Path | None = BASELINE_OPTION,
    no_baseline: bool = NO_BASELINE_OPTION,
    frontier_svg: Path | None = FRONTIER_SVG_OPTION,
    frontier_axis: str = FRONTIER_AXIS_OPTION,
) -> None:
    """Score runs: Avg, Pass@k and Pass^k overall, per domain and per capability, efficiency and failures,
    one column per run (the paper's Avg3 / Pass@3 / Pass^3 table too when runs have 3 trials per task).
    Trials that hit an infrastructure error are left out of every score and counted apart.
    A folder of sessions (the data directory's `sessions`: trials from the app, the MCP server,
    `ebench run` of one task) is reported too, one column per solver.
    The human baseline, people's blind attempts at the reported tasks (pass rate, median time, mean
    calls, overall and per task, beside each run), is shown when there is one.
    Then the paper's analyses: the cost-accuracy frontier (a table and a chart), code vs tools for a
    tools-mode and a code-mode run of one model on the same tasks, a code run's tasks by exec_code use,
    and calls, turns and tokens per domain with their Pearson r against Avg^k."""
    from ..sessions.analyses import FRONTIER_AXES, frontier
    from ..sessions.frontier_plot import frontier_svg as svg_of
    from ..sessions.frontier_plot import frontier_text
    from ..sessions.metrics import MetricsError
    from ..sessions.report import build_reports, report_document, tables

    _check_options(frontier_axis, no_baseline, baseline_folder)
    loaded = common.runs(runs)
    try:
        reports = build_reports(loaded)
    except MetricsError as exc:
        common.fail(str(exc), 2)
    if app:
        if as_json:
            common.fail("--app and --json do not combine", 2)
        from .play import check_theme, report_app

        check_theme(theme)

        report_app(list(runs), theme)
        return
    baseline = None if no_baseline else _baseline(reports, baseline_folder)
    written = _write_csv(reports, csv_path, baseline) if csv_path is not None else 0
    chart = frontier(reports, frontier_axis)
    if frontier_svg is not None:
        _write_text(frontier_svg, svg_of(chart))
    if as_json:
        common.print_json(report_document(reports, baseline))
        return
    from ..terminal import markup_escaped as escape  # run labels and task ids come from the runs' files

    console = common.console()
    for data in tables(reports, baseline):
        _print_table(console, data)
    console.print(f"[bold]Frontier chart[/]: Avg^k over {FRONTIER_AXES[frontier_axis]}")
    console.print(escape("\n".join(frontier_text(chart))), highlight=False, soft_wrap=True)
    if csv_path is not None:
        console.print(f"wrote {written} rows to {escape(str(csv_path))}")
    if frontier_svg is not None:
        console.print(f"wrote the frontier chart to {escape(str(frontier_svg))}")


def _check_options(frontier_axis: str, no_baseline: bool, baseline_folder: Path | None) -> None:
    from ..sessions.analyses import FRONTIER_AXES

    if frontier_axis not in FRONTIER_AXES:
        common.fail(f"--frontier-axis {frontier_axis}: not an axis; use one of {', '.join(FRONTIER_AXES)}", 2)
    if no_baseline and baseline_folder is not None:
        common.fail("--baseline and --no-baseline do not combine", 2)
    if baseline_folder is not None and not baseline_folder.is_dir():
        common.fail(f"--baseline {baseline_folder}: no such folder; give a folder of sessions such as <data dir>/sessions", 2)


def _write_csv(reports: list[RunReport], path: Path, baseline: Baseline | None) -> int:
    """--csv: the rows written, or a one-line error."""
    from ..sessions.report import write_csv

    try:
        return write_csv(reports, path, baseline)
    except OSError as exc:
        common.fail(f"cannot write {path}: {exc.strerror or exc}", os_error_exit_code(exc))


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        common.fail(f"cannot write {path}: {exc.strerror or exc}", os_error_exit_code(exc))


def _print_table(console: Console, data: TableData) -> None:
    """One report table; never squeezes numbers into ellipses: a table wider than the terminal is printed at its natural width."""
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table

    from ..terminal import markup_escaped as escape  # run labels and task ids come from the runs' files

    table = Table(title=escape(data.title), caption=data.caption and escape(data.caption), title_justify="left")
    for i, column in enumerate(data.columns):
        table.add_column(escape(column), justify="left" if i < data.labels else "right", no_wrap=i >= data.labels)
    for row in data.rows:
        if row is None:
            table.add_section()
        else:
            table.add_row(*[escape(cell) for cell in row])
    natural = Measurement.get(console, console.options.update(max_width=10_000), table).maximum
    if natural > console.width:
        Console(highlight=False, emoji=False, width=natural).print(table)
    else:
        console.print(table)


def _baseline(reports: list[RunReport], folder: Path | None) -> Baseline | None:
    """The human baseline from `folder` (always, even empty, when asked for), else from the data
    directory's sessions when people attempted any reported task blind."""
    from ..paths import sessions_dir
    from ..sessions.report import blind_attempts, human_baseline

    source = folder if folder is not None else sessions_dir()
    baseline = human_baseline(reports, blind_attempts(source), str(source))
    return baseline if baseline.tasks or folder is not None else None
