"""Run results: a leaderboard of runs, their scores per domain and per capability, efficiency, failures,
a Pass^k-over-k chart, the cost-accuracy frontier and code vs tools on paired runs. Runs are read and scored in a worker; a run that cannot be read or scored
is named in a message above the tables, and the others still show. Enter on a run opens its failed
trials in the replay debugger."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

from ...sessions.report import DASH, num, pct
from ...terminal import printable
from ..widgets.chart import ChartSeries, PassKChart
from ..widgets.record_table import Column, RecordTable
from .base import CHOOSE_SORT_HELP, SORT_HELP, EBenchScreen, choose_sort

if TYPE_CHECKING:
    from ...sessions.report import Baseline, TableData
    from ...sessions.run_report import RunReport
    from ...sessions.runs import RunData


def cost(report: RunReport) -> str:
    eff = report.metrics.efficiency
    if eff.cost_unknown:
        return "unknown"
    return DASH if eff.cost_total is None else f"${eff.cost_total:,.4f}"


def leaderboard_columns(k: int) -> list[Column[RunReport]]:
    """Columns for the largest trial count `k` among the runs (Avg = Pass@1 = Pass^1): short
    names, the numbers never cut, the run and the solver cut when the screen is narrow."""

    def at_k(attr: str) -> Callable[[RunReport], float | None]:
        def value(report: RunReport) -> float | None:
            score = report.metrics.overall.by_k.get(k)
            return getattr(score, attr) if score else None

        return value

    def eff(attr: str) -> Callable[[RunReport], float | None]:
        return lambda report: getattr(report.metrics.efficiency, attr)

    def score(key: str, label: str, text: Callable[[RunReport], str], value: Callable[[RunReport], Any]) -> Column[RunReport]:
        return Column(key, label, text, value, higher_is_better=True, justify="right")

    def count(key: str, label: str, text: Callable[[RunReport], str], value: Callable[[RunReport], Any]) -> Column[RunReport]:
        return Column(key, label, text, value, justify="right")  # fewest first

    pass_at, pass_hat = at_k("pass_at"), at_k("pass_hat")
    return [
        Column("run", "Run", lambda r: r.label, lambda r: r.label.lower(), min_width=6),
        Column(
            "solver", "Solver", lambda r: str(r.model() or r.solver() or DASH), lambda r: str(r.model() or r.solver() or ""), min_width=6
        ),
        score("trials", "Trials", lambda r: str(r.metrics.max_trials), lambda r: r.metrics.max_trials),
        score("tasks", "Tasks", lambda r: str(r.metrics.overall.tasks), lambda r: r.metrics.overall.tasks),
        score("avg", "Avg", lambda r: pct(r.metrics.overall.avg), lambda r: r.metrics.overall.avg),
        score("pass_at", f"Pass@{k}", lambda r: pct(pass_at(r)), pass_at),
        score("pass_hat", f"Pass^{k}", lambda r: pct(pass_hat(r)), pass_hat),
        count("cost", "Cost", cost, lambda r: None if r.metrics.efficiency.cost_unknown else r.metrics.efficiency.cost_total),
        count("calls", "Calls", lambda r: num(r.metrics.efficiency.total_calls), eff("total_calls")),
        count("turns", "Turns", lambda r: num(r.metrics.efficiency.turns), eff("turns")),
        count("failed", "Failed", lambda r: str(r.metrics.failures.failed), lambda r: r.metrics.failures.failed),
        count("infra", "Infra", lambda r: str(r.metrics.infra.count), lambda r: r.metrics.infra.count),
    ]


class Leaderboard(RecordTable["RunReport"]):
    """One row per run; enter opens the run's failed trials (the screen handles RowSelected)."""

    BINDINGS = [Binding("enter", "select_cursor", "Failed trials", id="results.open")]


class ResultsScreen(EBenchScreen):
    """Several runs side by side (run directories or sessions folders)."""

    TITLE = "Run results"
    BINDINGS = [
        Binding("enter", "open", "Failed trials", id="results.open"),
        Binding("s", "sort", "Sort", id="results.sort", tooltip=SORT_HELP),
        Binding("S", "choose_sort", "Sort by…", id="results.sort_by", tooltip=CHOOSE_SORT_HELP),
        Binding("r", "reload", "Reload", id="results.reload"),
        Binding("x", "frontier_axis", "Frontier axis", id="results.frontier_axis", show=False),  # named in the chart's title
    ]
    DEFAULT_CSS = """
    ResultsScreen #results-errors {
        color: $error;
        padding: 0 1;
        height: auto;
        display: none;
    }
    ResultsScreen #results-errors.shown { display: block; }
    ResultsScreen #results-tabs { height: 1fr; }
    ResultsScreen TabPane { padding: 0; }
    ResultsScreen DataTable { height: 1fr; }
    ResultsScreen #frontier-chart { height: auto; padding: 1 1 0 1; }
    ResultsScreen #tab-frontier DataTable { height: auto; max-height: 1fr; }
    ResultsScreen #tab-baseline DataTable { height: auto; }
    ResultsScreen #results-baseline { height: auto; padding: 0 1; display: none; }
    ResultsScreen #results-baseline.shown { display: block; }
    ResultsScreen .results-caption {
        color: $text-muted;
        padding: 0 1;
        height: auto;
    }
    """

    class Loaded(Message):
        def __init__(self, runs: list[RunData], reports: list[RunReport], errors: list[str], baseline: Baseline | None = None) -> None:
            super().__init__()
            self.runs = runs
            self.reports = reports
            self.errors = errors
            self.baseline = baseline

    def __init__(self, paths: list[Path], *, baseline: Path | None = None) -> None:
        """`baseline`: the folder of sessions the human baseline is read from (default: the data
        directory's `sessions`), as `ebench report` reads it."""
        super().__init__()
        self.paths = list(paths)
        self.baseline_folder = baseline
        self.runs: list[RunData] = []
        self.reports: list[RunReport] = []
        self.errors: list[str] = []
        self.baseline: Baseline | None = None  # people's blind attempts at these runs' tasks (None: none)
        self.loaded = False
        self.frontier_axis = "cost"

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="results-errors", markup=False)  # errors quote the runs' files
        yield Static("", id="results-baseline", markup=False)  # the human baseline in one line, above every tab
        with TabbedContent(id="results-tabs"):
            with TabPane("Leaderboard", id="tab-leaderboard"):
                yield Leaderboard(leaderboard_columns(1), key=lambda report: report.label, id="leaderboard")
                yield Static(
                    "Avg = Pass@1 = Pass^1 · Calls, Turns: per trial · Infra: infrastructure errors · enter: the run's failed"
                    " trials in the replay debugger · ←/→ a column, s: sort by it (again: reversed), S: choose it, or click a header",
                    classes="results-caption",
                )
            with TabPane("Per domain", id="tab-domains"):
                yield DataTable(id="domains", cursor_type="row", zebra_stripes=True)
            with TabPane("Per capability", id="tab-capabilities"):
                yield DataTable(id="capabilities", cursor_type="row", zebra_stripes=True)
            with TabPane("Efficiency", id="tab-efficiency"):
                yield DataTable(id="efficiency", cursor_type="row", zebra_stripes=True)
                yield Static("", id="efficiency-caption", classes="results-caption")
            with TabPane("Paths", id="tab-paths"):
                yield DataTable(id="paths", cursor_type="row", zebra_stripes=True)
                yield Static("", id="paths-caption", classes="results-caption")
            with TabPane("Failures", id="tab-failures"):
                yield DataTable(id="failures", cursor_type="row", zebra_stripes=True)
            with TabPane("Pass^k chart", id="tab-chart"):
                yield PassKChart(id="chart")
            with TabPane("Frontier", id="tab-frontier"), VerticalScroll():
                yield Static("", id="frontier-chart")
                yield DataTable(id="frontier", cursor_type="row", zebra_stripes=True)
                yield Static("", id="frontier-caption", classes="results-caption")
            with TabPane("Code vs tools", id="tab-code"):
                yield DataTable(id="code-vs-tools", cursor_type="row", zebra_stripes=True)
                yield Static("", id="code-caption", classes="results-caption")
            with TabPane("Human baseline", id="tab-baseline"), VerticalScroll():
                yield Static("", id="baseline-caption", classes="results-caption")
                yield DataTable(id="baseline", cursor_type="row", zebra_stripes=True)
                yield Static("", id="baseline-tasks-caption", classes="results-caption")
                yield DataTable(id="baseline-tasks", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#results-tabs").loading = True
        self._load()

    # -- loading -----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="results-load")
    def _load(self) -> None:
        from ...paths import sessions_dir
        from ...sessions.metrics import MetricsError, run_metrics
        from ...sessions.report import blind_attempts, build_reports, human_baseline
        from ...sessions.runs import RunError, load_runs

        runs: list[RunData] = []
        errors: list[str] = []
        for path in self.paths:
            try:
                found = load_runs(path)
            except (RunError, OSError) as exc:
                errors.append(str(exc))
                continue
            for run in found:
                try:
                    run_metrics(run.results)  # a run that cannot be scored is named, the others still show
                except MetricsError as exc:
                    errors.append(f"{run.label} ({run.path}): {exc}")
                    continue
                runs.append(run)
        reports = build_reports(runs)
        # The human baseline as `ebench report` has it: people's blind attempts at these tasks.
        source = self.baseline_folder or sessions_dir()
        baseline = human_baseline(reports, blind_attempts(source), str(source)) if source.is_dir() else None
        self.post_message(self.Loaded(runs, reports, errors, baseline if baseline is not None and baseline.tasks else None))

    def on_results_screen_loaded(self, message: Loaded) -> None:
        self.runs, self.reports, self.errors = message.runs, message.reports, message.errors
        self.baseline = message.baseline
        self.loaded = True
        self.query_one("#results-tabs").loading = False
        errors = self.query_one("#results-errors", Static)
        lines = list(self.errors)
        if not self.runs:
            lines.append("No run to show.")
        errors.update(printable("\n".join(f"✗ {line}" for line in lines)))
        errors.set_class(bool(lines), "shown")
        table = self.query_one(Leaderboard)
        table.set_columns(leaderboard_columns(max((r.metrics.max_trials for r in self.reports), default=0) or 1))
        table.set_records(self.reports)
        self._fill_scopes("domains")
        self._fill_scopes("capabilities")
        self._fill_core_tables()
        self._fill_analyses()
        self.query_one(PassKChart).set_series(self.chart_series())
        self._fill_baseline()
        self.query_one(Leaderboard).focus()

    def _fill_baseline(self) -> None:
        """The human baseline: a line above the tabs (people beside the runs, on the same tasks),
        and its tab with the report's two tables, overall and per task."""
        from ...sessions.report import BASELINE_LABEL, baseline_tables, duration

        line = self.query_one("#results-baseline", Static)
        baseline = self.baseline
        tabs = self.query_one(TabbedContent)
        if baseline is None:
            tabs.hide_tab("tab-baseline")
        else:
            tabs.show_tab("tab-baseline")
        line.set_class(baseline is not None, "shown")
        if baseline is None:
            return
        human = baseline.human
        runs = " · ".join(f"{label} {pct(figures.pass_rate)}" for label, figures in baseline.runs.items())
        line.update(
            Text(
                printable(
                    f"{BASELINE_LABEL}: {pct(human.pass_rate)} of {human.trials} blind attempt{'s' if human.trials != 1 else ''} passed, "
                    f"median time {duration(human.median_seconds)}, on {len(baseline.tasks)} task{'s' if len(baseline.tasks) != 1 else ''}"
                    + (f"; the runs there: {runs}" if runs else "")
                    + " (tab: Human baseline)"
                )
            )
        )
        overall, per_task = baseline_tables(baseline)
        show_table(self.query_one("#baseline", DataTable), overall)
        show_table(self.query_one("#baseline-tasks", DataTable), per_task)
        self.query_one("#baseline-caption", Static).update(Text(printable(f"{overall.title}: {overall.caption or ''}")))
        self.query_one("#baseline-tasks-caption", Static).update(Text(printable(f"{per_task.title}: {per_task.caption or ''}")))

    # -- tables ------------------------------------------------------------------------------
    def _fill_scopes(self, kind: str) -> None:
        """One row per scope and run: the leaderboard's scores for that domain or capability."""
        from ...tasks.spec import CAPABILITIES, CAPABILITY_TITLES

        table = self.query_one(f"#{kind}", DataTable)
        table.clear(columns=True)
        k = max((r.metrics.max_trials for r in self.reports), default=0) or 1
        first = "Domain" if kind == "domains" else "Capability"
        for label in (first, "Run", "Tasks", "Trials", "Avg", f"Pass@{k}", f"Pass^{k}", "Infra errors"):
            table.add_column(label, key=label)
        if kind == "domains":
            names = sorted({d for r in self.reports for d in r.metrics.domains})
            titles = {n: n for n in names}
        else:
            names = [c for c in CAPABILITIES if any(r.metrics.capabilities[c].tasks for r in self.reports)]
            titles = dict(CAPABILITY_TITLES)
        for name in names:
            for number, report in enumerate(self.reports):
                score = getattr(report.metrics, kind).get(name)
                if score is None or not (score.tasks or score.infra_errors):
                    continue
                by_k = score.by_k.get(k)
                cells = [
                    titles[name],
                    report.label,
                    str(score.tasks),
                    str(score.trials),
                    pct(score.avg),
                    pct(by_k.pass_at if by_k else None),
                    pct(by_k.pass_hat if by_k else None),
                    str(score.infra_errors),
                ]
                table.add_row(
                    *[Text(printable(c), justify="left" if i < 2 else "right") for i, c in enumerate(cells)], key=f"{name}|{number}"
                )

    def _fill_core_tables(self) -> None:
        """Efficiency, paths and failures as `ebench report` prints them (runs as columns)."""
        from ...sessions.report import efficiency_table, failures_table, paths_table

        if not self.reports:
            for table_id in ("efficiency", "paths", "failures"):
                self.query_one(f"#{table_id}", DataTable).clear(columns=True)
            return
        for table_id, table in (("efficiency", efficiency_table(self.reports)), ("paths", paths_table(self.reports))):
            show_table(self.query_one(f"#{table_id}", DataTable), table)
            self.query_one(f"#{table_id}-caption", Static).update(Text(printable(table.caption or "")))
        show_table(self.query_one("#failures", DataTable), failures_table(self.reports))

    def _fill_analyses(self) -> None:
        """The frontier (chart on the chosen axis, table on every axis) and each code vs tools pair, as `ebench report` shows them."""
        from ...sessions.analyses import FRONTIER_AXES, analyses, frontier
        from ...sessions.frontier_plot import frontier_text
        from ...sessions.report import frontier_table, pair_table

        found = analyses(self.reports)
        chart = frontier(self.reports, self.frontier_axis)
        title = f"Avg^k over {FRONTIER_AXES[self.frontier_axis]} (x: next axis)"
        self.query_one("#frontier-chart", Static).update(Text(printable("\n".join([title, *frontier_text(chart)])), no_wrap=True))
        table = frontier_table(found)
        show_table(self.query_one("#frontier", DataTable), table)
        self.query_one("#frontier-caption", Static).update(Text(printable(table.caption or "")))
        pairs = self.query_one("#code-vs-tools", DataTable)
        pairs.clear(columns=True)
        for label in ("", "tools Avg^k", "code Avg^k", "gain", "relative"):
            pairs.add_column(label or " ")
        for number, pair in enumerate(found.pairs):
            data = pair_table(pair)
            if number:
                pairs.add_row(*[""] * 5)
            pairs.add_row(Text(printable(f"{pair.model}: {pair.tools} → {pair.code}"), style="bold"), "", "", "", "")
            for row in data.rows:
                cells = row if row is not None else [""] * 5
                pairs.add_row(*[Text(printable(cell), justify="left" if i == 0 else "right") for i, cell in enumerate(cells)])
        caption = (
            (pair_table(found.pairs[0]).caption or "")
            if found.pairs
            else "No pair: a tools-mode run and a code-mode run (--code) of the same model on the same tasks."
        )
        self.query_one("#code-caption", Static).update(Text(printable(caption)))

    def action_frontier_axis(self) -> None:
        from ...sessions.analyses import FRONTIER_AXES

        axes = list(FRONTIER_AXES)
        self.frontier_axis = axes[(axes.index(self.frontier_axis) + 1) % len(axes)]
        if self.loaded:
            self._fill_analyses()

    def chart_series(self) -> list[ChartSeries]:
        series = []
        for report in self.reports:
            by_k = report.metrics.overall.by_k
            ks = range(1, max(by_k, default=0) + 1)
            series.append(
                ChartSeries(
                    report.label,
                    [by_k[k].pass_hat if k in by_k else None for k in ks],
                    [by_k[k].pass_at if k in by_k else None for k in ks],
                )
            )
        return series

    # -- sorting (a score sorts best first) ----------------------------------------------------
    def action_sort(self) -> None:
        self.query_one(Leaderboard).sort_here()

    def action_choose_sort(self) -> None:
        choose_sort(self, self.query_one(Leaderboard))

    def action_reload(self) -> None:
        self.query_one("#results-tabs").loading = True
        self._load()

    # -- opening a run -----------------------------------------------------------------------
    def selected_run_index(self) -> int | None:
        report = self.query_one(Leaderboard).highlighted() if self.loaded else None
        return None if report is None else self.reports.index(report)

    @on(DataTable.RowSelected, "#leaderboard")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        index = self.selected_run_index()
        if index is None:
            return
        run, report = self.runs[index], self.reports[index]
        if not report.metrics.failures.failed and not report.metrics.infra.count:
            self.notify(printable(f"{report.label}: every scored trial passed"), title="Failed trials", markup=False)
            return
        from .replay import ReplayScreen

        self.app.push_screen(ReplayScreen(run.path, runs=[run], failed=True))


def show_table(table: DataTable[Any], data: TableData) -> None:
    """A core report table (first column names the rows, one column per run); a section break is a blank row.
    Every label and cell is a Text (a str would be read as markup): a run's label comes from its files."""
    table.clear(columns=True)
    for i, label in enumerate(data.columns):
        table.add_column(Text(printable(label or " ")), key=f"c{i}")
    for row in data.rows:
        if row is None:
            table.add_row(*[""] * len(data.columns))
        else:
            table.add_row(*[Text(printable(cell), justify="left" if i < data.labels else "right") for i, cell in enumerate(row)])
