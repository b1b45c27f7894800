"""The run results screen on two real runs (oracle and no-op): leaderboard values as `build_reports`
computes them, sorting, the tabs, the Pass^k chart, opening a run's failed trials (replay stand-in),
and runs that cannot be read or scored."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from appcheck import StandIn, notified, stand_in, until_loaded, until_settled
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static, TabbedContent

from ebench.app.app import EBenchApp
from ebench.app.screens.dialogs import SortChooser
from ebench.app.screens.results import Leaderboard, ResultsScreen, pct
from ebench.app.widgets.chart import ChartSeries, PassKChart
from ebench.sessions.batch import Batch
from ebench.sessions.report import build_reports
from ebench.sessions.runs import load_runs
from ebench.sessions.solvers import NoopSolver, OracleSolver
from ebench.tasks.suite import load_suite

SIZE = (140, 36)
TRIALS = 3


@pytest.fixture(scope="module")
def run_paths(tmp_path_factory: pytest.TempPathFactory, moba_world) -> list[Path]:
    """An oracle run and a no-op run over four moba tasks, three trials each."""
    root = tmp_path_factory.mktemp("runs")
    tasks = [t for t in load_suite(domain="moba").tasks][:4]
    paths = []
    for name, solver in (("oracle", OracleSolver()), ("noop", NoopSolver())):
        batch = Batch(root / name, tasks, solver, TRIALS, label=name)
        batch.prepare()
        asyncio.run(batch.run(4))
        paths.append(root / name)
    return paths


@pytest.fixture
def replay_stand_in(monkeypatch: pytest.MonkeyPatch) -> list[StandIn]:
    return stand_in(monkeypatch, "ebench.app.screens.replay", "ReplayScreen")


def results_app(paths: list[Path], baseline: Path | None = None) -> EBenchApp:
    """The results of `paths`, the human baseline read from `baseline` (default: none, so what other
    tests left in the data directory's sessions never shows here)."""
    folder = baseline if baseline is not None else paths[0] / "no-sessions-here"
    return EBenchApp(lambda: ResultsScreen(paths, baseline=folder), theme="ebench-dark")


async def loaded(pilot: Any) -> ResultsScreen:
    return await until_loaded(pilot, ResultsScreen)


def table_rows(table: DataTable[Any]) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row(row.key)] for row in table.ordered_rows]


def errors_text(screen: ResultsScreen) -> str:
    return str(screen.query_one("#results-errors", Static).render())


# -- leaderboard -------------------------------------------------------------------------------------


async def test_leaderboard_rows_match_build_reports(run_paths):
    reports = build_reports([run for path in run_paths for run in load_runs(path)])
    app = results_app(run_paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(Leaderboard)
        assert app.focused is table
        assert [str(c.label) for c in table.columns.values()][:7] == [
            "Run",
            "Solver",
            "Trials",
            "Tasks",
            "Avg",
            f"Pass@{TRIALS}",
            f"Pass^{TRIALS}",
        ]
        rows = table_rows(table)
        assert [row[0] for row in rows] == ["oracle", "noop"]
        for row, report in zip(rows, reports):
            overall = report.metrics.overall
            assert row[2] == str(TRIALS) and row[3] == str(overall.tasks) == "4"
            assert row[4:7] == [pct(overall.avg), pct(overall.by_k[TRIALS].pass_at), pct(overall.by_k[TRIALS].pass_hat)]
            assert row[8] == f"{report.metrics.efficiency.total_calls:,.1f}"
            assert row[10] == str(report.metrics.failures.failed)
        assert rows[0][4:7] == ["100.0%"] * 3 and rows[1][4:7] == ["0.0%"] * 3
        assert errors_text(screen) == ""


async def test_s_sorts_by_the_column_under_the_cursor_and_a_header_click_sorts(run_paths):
    app = results_app(run_paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(Leaderboard)
        await pilot.press("s")  # the column under the cursor: Run, alphabetical
        assert table.sort_column == 0 and [r[0] for r in table_rows(table)] == ["noop", "oracle"]
        assert str(table.ordered_columns[0].label).startswith("Run ")
        await pilot.press("s")  # again: reversed
        assert [r[0] for r in table_rows(table)] == ["oracle", "noop"]
        # a click on the Calls/trial header: fewest calls first
        calls = next(i for i, c in enumerate(table.ordered_columns) if c.key.value == "calls")
        x = sum(c.get_render_width(table) for c in table.ordered_columns[:calls]) + 2
        await pilot.click(Leaderboard, offset=(x, 0))
        assert table.sort_column == calls
        assert [r[0] for r in table_rows(table)] == ["noop", "oracle"]
        await pilot.click(Leaderboard, offset=(x, 0))  # again: reversed
        assert [r[0] for r in table_rows(table)] == ["oracle", "noop"]
        assert table.column_cursor == calls  # a header click moves the column cursor there too
        await pilot.press("S")
        await until_settled(pilot, lambda: isinstance(app.screen, SortChooser))
        await pilot.press("end", "enter")  # as given
        await until_settled(pilot, lambda: app.screen is screen)
        assert table.sort_column is None  # back to the order given


async def test_a_narrow_leaderboard_has_short_headers_and_scrolls_sideways_to_the_last_column(run_paths):
    app = results_app(run_paths)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(Leaderboard)
        labels = [str(c.label) for c in table.ordered_columns]
        assert labels[7:] == ["Cost", "Calls", "Turns", "Failed", "Infra"]
        assert [row[0] for row in table_rows(table)] == ["oracle", "noop"]  # whole: the numbers take the width
        assert table.max_scroll_x > 0  # twelve columns do not fit in 80: the rest is reached with the arrow keys
        while table.column_cursor < len(table.record_columns) - 1:  # the column cursor to the last column
            await pilot.press("right")
        await until_settled(pilot, lambda: table.scroll_x == table.max_scroll_x > 0, what="the last column scrolled into view")
        assert table.scroll_x == table.max_scroll_x > 0  # scrolled to show it
        await pilot.press("s")
        assert str(table.ordered_columns[-1].label) == "Infra ▲"


# -- tabs and chart ----------------------------------------------------------------------------------


async def test_every_tab_renders_its_table_and_the_chart_has_both_runs(run_paths):
    reports = build_reports([run for path in run_paths for run in load_runs(path)])
    app = results_app(run_paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        tabs = screen.query_one(TabbedContent)
        domains = table_rows(screen.query_one("#domains", DataTable))
        assert [(r[0], r[1]) for r in domains] == [("moba", "oracle"), ("moba", "noop")]
        assert domains[0][4:7] == ["100.0%"] * 3 and domains[1][4:7] == ["0.0%"] * 3
        capabilities = table_rows(screen.query_one("#capabilities", DataTable))
        touched = [name for name, s in reports[0].metrics.capabilities.items() if s.tasks]
        assert len(capabilities) == 2 * len(touched) > 0
        efficiency = table_rows(screen.query_one("#efficiency", DataTable))
        assert efficiency[0] == ["scored trials", "12", "12"]
        failures = table_rows(screen.query_one("#failures", DataTable))
        assert failures[0] == ["failed trials", "0 of 12", "12 of 12"]
        paths = table_rows(screen.query_one("#paths", DataTable))
        assert paths[0] == ["trials with a path", "0", "0"]  # the oracle and noop take no model turns
        assert ["progress rate (failed)", "-", "0.0%"] in paths  # noop changes nothing: no progress
        for pane in ("tab-domains", "tab-capabilities", "tab-efficiency", "tab-paths", "tab-failures", "tab-chart"):
            tabs.active = pane
            await until_settled(pilot, lambda: tabs.get_pane(pane).region.width > 0, what=f"{pane} shown")  # noqa: B023 (awaited here)
            assert tabs.active == pane
        chart = screen.query_one(PassKChart)
        assert [s.label for s in chart.series] == ["oracle", "noop"]
        assert chart.series[0].pass_hat == [1.0] * TRIALS and chart.series[1].pass_at == [0.0] * TRIALS
        drawn = chart.draw(80, 20, ["red", "blue"]).plain
        lines = drawn.splitlines()
        assert lines[0].startswith("100% ┤") and "●" in lines[0]
        zero = next(line for line in lines if line.startswith("  0% ┤"))
        assert "●" in zero
        assert sum("Pass^k" in line and label in line for line in lines for label in ("oracle", "noop")) == 2


def test_chart_draws_dashed_pass_at_and_solid_pass_hat_in_theme_colours():
    chart = PassKChart([ChartSeries("a", [0.5, 0.25, 0.0], [0.5, 0.75, 1.0]), ChartSeries("b", [1.0], [1.0])])
    text = chart.draw(60, 16, ["#111111", "#222222"])
    lines = text.plain.splitlines()
    assert len(lines) == 16 and all(len(line) <= 60 for line in lines)
    assert text.plain.count("○") >= 3 and text.plain.count("●") >= 4  # markers of every point (and the legend)
    assert "Pass^3 0.0% · Pass@3 100.0%" in text.plain and "Pass^1 100.0%" in text.plain
    styles = {str(span.style) for span in text.spans}
    assert {"#111111", "#222222"} <= styles
    assert "No scored trials" in PassKChart([]).draw(40, 10, []).plain


async def test_the_chart_takes_its_colours_from_the_theme():
    class ChartApp(App[None]):
        def compose(self) -> ComposeResult:
            yield PassKChart([ChartSeries("a", [1.0, 0.5], [1.0, 1.0]), ChartSeries("b", [0.2, 0.1], [0.2, 0.3])])

    app = ChartApp()
    async with app.run_test(size=(60, 20)) as pilot:
        chart = app.query_one(PassKChart)
        app.theme = "textual-dark"
        await until_settled(pilot, what="the theme applied")
        dark = chart.colours()
        assert dark == [app.theme_variables["primary"], app.theme_variables["accent"]]
        app.theme = "textual-light"
        await until_settled(pilot, what="the theme applied")
        assert chart.colours() != dark
        rendered = chart.render()
        assert isinstance(rendered, Text) and "Pass^k" in rendered.plain


# -- opening failed trials ---------------------------------------------------------------------------


async def test_enter_opens_the_failed_trials_of_the_selected_run_in_the_replay(run_paths, replay_stand_in):
    app = results_app(run_paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        messages = notified(app)
        await pilot.press("enter")  # oracle: nothing failed
        assert replay_stand_in == [] and app.screen is screen
        assert any("every scored trial passed" in message for message in messages)
        await pilot.press("down", "enter")
        [made] = replay_stand_in
        assert app.screen is made
        [path] = made.args
        assert path == run_paths[1]
        assert made.kwargs["failed"] is True
        [run] = made.kwargs["runs"]
        assert run.label == "noop" and run.path == run_paths[1] and len(run.results) == 4 * TRIALS
        await pilot.press("escape")
        assert app.screen is screen


# -- errors ------------------------------------------------------------------------------------------


async def test_broken_runs_show_a_message_and_the_others_still_show(run_paths, tmp_path):
    bad_manifest = tmp_path / "bad-manifest"
    bad_manifest.mkdir()
    (bad_manifest / "manifest.json").write_text("{not json")
    unscorable = tmp_path / "unscorable"
    shutil.copytree(run_paths[0], unscorable)
    manifest = json.loads((unscorable / "manifest.json").read_text())
    (unscorable / "manifest.json").write_text(json.dumps(dict(manifest, label="unscorable")))
    lines = (unscorable / "results.jsonl").read_text().splitlines()
    first = dict(json.loads(lines[0]), tool_calls="many")
    (unscorable / "results.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    app = results_app([bad_manifest, unscorable, empty, run_paths[1]])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        text = errors_text(screen)
        assert "unreadable manifest" in text
        assert "tool_calls must be a number" in text and "unscorable" in text
        assert "neither a run directory" in text
        assert [r[0] for r in table_rows(screen.query_one(Leaderboard))] == ["noop"]


async def test_no_readable_run_is_a_message_not_a_crash(tmp_path):
    app = results_app([tmp_path / "missing"])
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert "no such file or folder" in errors_text(screen) and "No run to show" in errors_text(screen)
        assert screen.query_one(Leaderboard).row_count == 0
        await pilot.press("enter", "s")
        assert app.screen is screen
        tabs = screen.query_one(TabbedContent)
        tabs.active = "tab-chart"
        await until_settled(pilot, lambda: tabs.get_pane("tab-chart").region.width > 0, what="the chart shown")
        assert "No scored trials" in str(screen.query_one(PassKChart).render())


# -- snapshots ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 55)], ids=["80x24", "120x40", "200x55"])
def test_snapshot_results_leaderboard(snap_compare, run_paths, size):
    async def run_before(pilot: Any) -> None:
        await loaded(pilot)

    assert snap_compare(results_app(run_paths), terminal_size=size, run_before=run_before)


def test_snapshot_results_chart(snap_compare, run_paths):
    async def run_before(pilot: Any) -> None:
        screen = await loaded(pilot)
        tabs = screen.query_one(TabbedContent)
        tabs.active = "tab-chart"
        await until_settled(pilot, lambda: tabs.get_pane("tab-chart").region.width > 0, what="the chart shown")

    assert snap_compare(results_app(run_paths), terminal_size=SIZE, run_before=run_before)


# -- the human baseline --------------------------------------------------------------------------------


async def test_the_human_baseline_shows_beside_the_runs_overall_and_per_task(run_paths, tmp_path):
    from ebench.sessions.attempts import human_trial
    from ebench.sessions.report import blind_attempts, human_baseline
    from ebench.sessions.trial import AGENT_STOPPED

    tasks = load_suite(domain="moba").tasks[:2]
    for task in tasks:  # a person's blind attempt at each: the reference's calls, then submit
        trial = human_trial(task, blind=True, folder=tmp_path)
        for step in task.reference_solution:
            trial.call(step.tool, step.args)
        trial.finish(AGENT_STOPPED)
    assisted = human_trial(tasks[0], blind=False, folder=tmp_path)  # not blind: not a baseline
    assisted.finish(AGENT_STOPPED)
    reports = build_reports([run for path in run_paths for run in load_runs(path)])
    expected = human_baseline(reports, blind_attempts(tmp_path), str(tmp_path))
    assert [t.task for t in expected.tasks] == [t.id for t in tasks]
    app = results_app(run_paths, baseline=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        line = str(screen.query_one("#results-baseline", Static).render())
        assert "human baseline: 100.0% of 2 blind attempts passed" in line and "on 2 tasks" in line
        assert "oracle 100.0%" in line and "noop 0.0%" in line
        overall = screen.query_one("#baseline", DataTable)
        assert [str(c.label) for c in overall.ordered_columns] == [" ", "human baseline", "oracle", "noop"]
        assert table_rows(overall)[0] == ["trials", "2", "6", "6"]
        per_task = table_rows(screen.query_one("#baseline-tasks", DataTable))
        assert [row[0] for row in per_task] == [t.id for t in tasks] and all(row[1] == "1/1" for row in per_task)
        tabs = screen.query_one(TabbedContent)
        tabs.active = "tab-baseline"
        await until_settled(pilot, lambda: tabs.get_pane("tab-baseline").region.width > 0, what="the baseline shown")
        assert tabs.active == "tab-baseline"


async def test_no_baseline_no_tab(run_paths):
    app = results_app(run_paths)
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert screen.baseline is None and not screen.query_one("#results-baseline", Static).has_class("shown")
        assert not screen.query_one(TabbedContent).get_tab("tab-baseline").display


def test_snapshot_of_the_human_baseline_tab(snap_compare, run_paths, tmp_path):
    from ebench.sessions.attempts import human_trial
    from ebench.sessions.trial import AGENT_STOPPED

    for number, task in enumerate(load_suite(domain="moba").tasks[:2]):
        trial = human_trial(task, blind=True, folder=tmp_path)
        for step in task.reference_solution[: None if number else 1]:  # the second passes, the first stops after one call
            trial.call(step.tool, step.args)
        trial.finish(AGENT_STOPPED)
        # the times in the session are the machine's: fixed here, so the snapshot never moves
        path = trial.writer.path
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        lines[-1]["summary"]["seconds"] = 95.0 + 60 * number
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    async def run_before(pilot) -> None:
        screen = await loaded(pilot)
        tabs = screen.query_one(TabbedContent)
        tabs.active = "tab-baseline"
        await until_settled(pilot, lambda: tabs.get_pane("tab-baseline").region.width > 0, what="the baseline shown")

    assert snap_compare(results_app(run_paths, baseline=tmp_path), terminal_size=SIZE, run_before=run_before)
