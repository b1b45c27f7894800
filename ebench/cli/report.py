"""`ebench report RUN [RUN...]`: score runs and show them side by side."""

from __future__ import annotations

from pathlib import Path

import typer

from . import common

RUNS_ARGUMENT = typer.Argument(
    ..., metavar="RUN...", help="Run directories (each with manifest.json and results.jsonl), or a folder of sessions.", show_default=False
)
CSV_OPTION = typer.Option(
    None,
    "--csv",
    metavar="FILE",
    help="Also write every number to FILE as CSV, one row per (run, scope, metric): columns run, path, scope, metric, value; "
    "scope is overall, domain:NAME, capability:NAME, efficiency, failures or infra; rates are fractions 0..1, "
    "a missing value is empty.",
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
) -> None:
    """Score runs: Avg, Pass@k and Pass^k overall, per domain and per capability, efficiency and failures,
    one column per run (the paper's Avg3 / Pass@3 / Pass^3 table too when runs have 3 trials per task).
    Trials that hit an infrastructure error are left out of every score and counted apart.
    A folder of sessions (the data directory's `sessions`: trials from the app, the MCP server,
    `ebench run` of one task) is reported too, one column per solver."""
    from ..sessions.metrics import MetricsError
    from ..sessions.report import build_reports, report_document, tables, write_csv
    from ..sessions.runs import RunError, load_runs

    loaded = []
    for path in runs:
        try:
            loaded.extend(load_runs(path))
        except RunError as exc:
            common.fail(str(exc), 2)
    common.warn([w for run in loaded for w in run.warnings])
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
    if csv_path is not None:
        try:
            written = write_csv(reports, csv_path)
        except OSError as exc:
            common.fail(f"cannot write {csv_path}: {exc.strerror or exc}")
    if as_json:
        common.print_json(report_document(reports))
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.measure import Measurement
    from rich.table import Table

    console = common.console()
    for data in tables(reports):
        table = Table(title=data.title, caption=data.caption, title_justify="left")
        for i, column in enumerate(data.columns):
            table.add_column(escape(column), justify="left" if i < data.labels else "right", no_wrap=i >= data.labels)
        for row in data.rows:
            if row is None:
                table.add_section()
            else:
                table.add_row(*[escape(cell) for cell in row])
        # Never squeeze numbers into ellipses: a table wider than the terminal is printed at its natural width.
        natural = Measurement.get(console, console.options.update(max_width=10_000), table).maximum
        Console(highlight=False, width=natural).print(table) if natural > console.width else console.print(table)
    if csv_path is not None:
        console.print(f"wrote {written} rows to {escape(str(csv_path))}")
