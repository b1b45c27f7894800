"""The replay debugger screen, driven with Pilot over real runs made by `Batch` (oracle, noop and a
sloppy solver that makes one wrong write and stops early): the trial list's filters, sorting and
widths, the trial view, and snapshots of both at three terminal sizes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from appcheck import until_settled
from textual.widgets import Checkbox, DataTable, OptionList, Select

from ebench.app.app import EBenchApp
from ebench.app.screens.replay import ReplayScreen, ReplayTrialScreen, TrialTable, TrialView, path_line, position_text, step_detail
from ebench.app.widgets.diff_view import DiffView
from ebench.app.widgets.trace import CallTrace
from ebench.sessions.attempts import human_trial
from ebench.sessions.batch import Batch
from ebench.sessions.record import SessionWriter
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_runs
from ebench.sessions.solvers import NoopSolver, OracleSolver, Outcome
from ebench.sessions.timeline import Timeline
from ebench.sessions.trial import AGENT_STOPPED, Trial, TrialLimits
from ebench.tasks.spec import resolve_args
from ebench.tasks.suite import load_suite

TASKS = ["music-0020", "music-0001"]
WRONG_SONG = 391


class SloppySolver:
    """Says what it does, favourites a song nobody asked for, then does half the work."""

    name = "sloppy"

    def config(self) -> dict[str, Any]:
        return {"name": self.name}

    async def solve(self, trial: Trial, limits: TrialLimits) -> Outcome:
        assert trial.task is not None
        play_sloppily(trial)
        return Outcome(AGENT_STOPPED)


def play_sloppily(trial: Trial) -> None:
    assert trial.task is not None
    trial.message("user", trial.task.query)
    trial.message("assistant", "I will favourite the matching songs.", reasoning="Rock, 2015, at least 3:50: start with the ones I know.")
    trial.call("favourite_song", {"song_id": WRONG_SONG})
    results: list[Any] = []
    steps = trial.task.reference_solution
    for step in steps[: max(1, len(steps) // 2)]:
        results.append(trial.call(step.tool, resolve_args(step.args, results)).value)
    trial.message("assistant", "Done.")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, music_world) -> dict[str, Path]:
    tasks = load_suite(ids=TASKS).tasks
    root = tmp_path_factory.mktemp("replay-runs")
    out = {}
    for solver in (OracleSolver(), NoopSolver(), SloppySolver()):
        batch = Batch(root / solver.name, tasks, solver, 1)
        batch.prepare()
        asyncio.run(batch.run(2))
        out[solver.name] = root / solver.name
    return out


async def settle(pilot, view: TrialView | None = None) -> None:
    """Wait until the trial view has its analysis and the current step's rebuilt state."""

    def settled() -> bool:
        current = view or pilot.app.screen.query_one(TrialView)
        return current.timeline is not None and current.analysed and current.state is not None and current.state.step == current.current

    await until_settled(pilot, settled, what="the trial view")


def all_runs(runs: dict[str, Path]):
    return [run for name in ("oracle", "noop", "sloppy") for run in load_runs(runs[name])]


async def test_filter_open_step_jump_and_reference(runs):
    app = EBenchApp(lambda: ReplayScreen(runs["oracle"], runs=all_runs(runs)), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        table = screen.query_one("#replay-table", DataTable)
        assert table.row_count == 6 and not screen.query_one("#replay-failed", Checkbox).value
        await pilot.press("f")  # failed only
        await until_settled(pilot, lambda: len(screen.shown) != 6, what="the failed-only filter")
        assert table.row_count == 4 and all(not row.passed for row in screen.shown)
        screen.query_one("#replay-solver", Select).value = "sloppy"
        await until_settled(pilot, lambda: len(screen.shown) != 4, what="the solver filter")
        assert {row.solver for row in screen.shown} == {"sloppy"} and table.row_count == 2
        await pilot.press("slash", *"0020")
        # each letter refilters: wait for the whole word's
        await until_settled(pilot, lambda: [row.task for row in screen.shown] == ["music-0020"], what="the search")
        assert [row.task for row in screen.shown] == ["music-0020"]
        await pilot.press("enter")  # the search hands over to the table
        assert app.screen.focused is table
        await pilot.press("enter")
        await until_settled(pilot, lambda: isinstance(app.screen, ReplayTrialScreen), what="the trial opened")
        trial_screen = app.screen
        assert isinstance(trial_screen, ReplayTrialScreen)
        view = trial_screen.query_one(TrialView)
        await settle(pilot, view)
        timeline = view.timeline
        assert timeline is not None and view.current == 0
        diff = trial_screen.query_one(DiffView)
        assert diff.counts["matched"] == 0 and diff.counts["unexpected"] == 0

        # The first call is the wrong favourite; the diff follows each step, forward and back.
        first_call = next(s.index for s in timeline.steps if s.kind == "tool_call")
        for _ in range(first_call):
            await pilot.press("right")
        await settle(pilot, view)
        assert view.current == first_call
        assert diff.counts["unexpected"] == 1 and diff.counts["matched"] == 0
        trace = trial_screen.query_one(CallTrace)
        assert trace.made_ids == ["call-1"]
        everything = trace.call_ids  # every call is listed once; those still to come are dimmed
        assert everything == [str(e.id) for e in timeline.calls_until(timeline.last)]
        await pilot.press("l")
        await settle(pilot, view)
        assert diff.counts["matched"] == 2 and diff.counts["unexpected"] == 1
        assert trace.made_ids == ["call-1", "call-2"] and trace.call_ids == everything
        await pilot.press("left", "left")
        await settle(pilot, view)
        assert view.current == first_call - 1 and diff.counts["unexpected"] == 0 and diff.counts["matched"] == 0
        assert trace.made_ids == [] and trace.call_ids == everything
        await pilot.press("end")
        await settle(pilot, view)
        final = timeline.final_state()
        assert view.current == timeline.last and diff.counts["matched"] == len(final.grade.matched) > 0

        # The point of no return is the wrong favourite, made first and never undone.
        await pilot.press("x")
        await settle(pilot, view)
        assert view.point == first_call == view.current
        assert timeline.steps[view.current].event.args == {"song_id": WRONG_SONG}
        assert "no return at step" in str(trial_screen.query_one("#replay-position").render())

        # The reference solution beside the trial.
        assert not view.reference_shown
        await pilot.press("r")
        await until_settled(pilot, lambda: view.reference is not None, what="the reference solution")
        assert view.reference_shown and view.reference is not None
        assert len(view.reference) == len(timeline.task.reference_solution)
        assert view.reference[-1].grade.passed
        # Numbered 1/n, 2/n, ... (not by the expected changes made, which repeat).
        options = view.query_one("#replay-reference-steps", OptionList)
        n = len(view.reference)
        numbers = [str(options.get_option_at_index(i).prompt).split()[0] for i in range(options.option_count)]
        assert numbers == [f"{i + 1}/{n}" for i in range(n)]
        await pilot.press("r")
        assert not view.reference_shown

        await pilot.press("escape")  # back to the table, filters kept
        await until_settled(pilot, lambda: app.screen is screen, what="back to the table")
        assert app.screen is screen and table.row_count == 1


def list_app(runs: dict[str, Path]) -> EBenchApp:
    return EBenchApp(lambda: ReplayScreen(runs["oracle"], runs=all_runs(runs)), theme="ebench-dark")


def headers(table: DataTable[Any]) -> list[str]:
    return [str(column.label) for column in table.ordered_columns]


def row_text(screen: ReplayScreen) -> str:
    return str(screen.query_one("#replay-row").render())


async def test_the_trial_list_sorts_by_key_and_header_click_and_x_clears_the_filters(runs):
    app = list_app(runs)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        table = screen.query_one(TrialTable)
        given = [(row.solver, row.task) for row in table.shown]
        await pilot.press("s")  # by the column under the cursor: the task
        assert headers(table)[0] == "Task ▲" and [row.task for row in table.shown] == sorted(row.task for row in screen.shown)
        await pilot.press("right", "right", "s")  # by result: passed first
        assert headers(table)[2] == "Result ▲" and [row.passed for row in table.shown] == [True, True, False, False, False, False]
        await pilot.press("s")  # again: reversed
        assert headers(table)[2] == "Result ▼" and [row.passed for row in table.shown][-2:] == [True, True]
        # a click on the Calls header: fewest first, again: most first
        calls = [c.key.value for c in table.ordered_columns].index("calls")
        x = sum(c.get_render_width(table) for c in table.ordered_columns[:calls]) + 2
        inset = table.content_region.offset - table.region.offset
        await pilot.click(table, offset=(inset.x + x, inset.y))
        assert [row.calls for row in table.shown] == sorted(row.calls for row in screen.shown) and headers(table)[calls] == "Calls ▲"
        await pilot.click(table, offset=(inset.x + x, inset.y))
        assert [row.calls for row in table.shown] == sorted((row.calls for row in screen.shown), reverse=True)
        # the cursor stays on its trial; enter opens it, and the line below names it whole
        top = table.highlighted()
        assert top is not None and top == screen.shown[0] and table.shown.index(top) == table.cursor_row != 0
        assert f"{top.task} · trial {top.trial} · {top.solver}" in row_text(screen) and top.termination in row_text(screen)
        await pilot.press("enter")
        assert isinstance(app.screen, ReplayTrialScreen) and app.screen.path == top.session
        await settle(pilot)
        await pilot.press("escape")
        # the filter keys open each filter; x clears them all
        for key, name in (("d", "domain"), ("k", "capability"), ("m", "solver")):
            await pilot.press(key)
            select = screen.query_one(f"#replay-{name}", Select)
            assert select.expanded
            await pilot.press("escape")
            table.focus()
        await pilot.press("f")
        screen.query_one("#replay-solver", Select).value = "sloppy"
        await pilot.press("slash", *"0020", "enter")
        assert [(row.solver, row.task) for row in screen.shown] == [("sloppy", "music-0020")]
        await pilot.press("x")
        assert len(screen.shown) == 6 and not screen.query_one("#replay-failed", Checkbox).value
        assert screen.query_one("#replay-solver", Select).is_blank() and screen.query_one("#replay-search").value == ""
        assert app.focused is table and sorted(given) == sorted((row.solver, row.task) for row in table.shown)
        ids = {binding.id for binding in ReplayScreen.BINDINGS}
        assert {"replay.domain", "replay.capability", "replay.solver", "replay.clear", "replay.sort", "replay.sort_by"} <= ids


async def test_at_80_columns_every_header_shows_the_result_is_whole_and_cut_cells_end_in_an_ellipsis(runs):
    app = list_app(runs)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        table = screen.query_one(TrialTable)
        await until_settled(pilot, lambda: screen.has_class("-narrow") and table.row_count > 0, what="the narrow table")
        assert screen.has_class("-narrow")
        assert headers(table) == ["Task", "Trial", "Result", "Calls", "Ended", "Solver", "Domain", "Capabilities"]
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.scrollable_content_region.width
        results = [str(table.get_cell(str(row.session), "result")) for row in table.shown]
        assert set(results) == {"✓ passed", "✗ failed"}
        cells = [str(table.get_cell(str(row.session), "capabilities")) for row in table.shown]
        assert any(cell.endswith("…") for cell in cells)
        row = table.highlighted()
        assert row is not None and str(table.get_cell(str(row.session), "termination")).endswith("…")
        assert f"ended: {row.termination}" in row_text(screen)  # the cut cell, whole, under the table
        await pilot.press("down")
        assert table.shown[1].task in row_text(screen) and f"run {table.shown[1].run}" in row_text(screen)


async def test_the_results_screen_contract_opens_the_failed_trials_of_one_run(runs):
    [run] = load_runs(runs["sloppy"])
    app = EBenchApp(lambda: ReplayScreen(run.path, runs=[run], failed=True), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert screen.query_one("#replay-failed", Checkbox).value
        assert len(screen.shown) == 2 and all(not row.passed for row in screen.shown)
        await pilot.press("enter")
        await until_settled(pilot, lambda: isinstance(app.screen, ReplayTrialScreen), what="the trial opened")
        assert isinstance(app.screen, ReplayTrialScreen)
        await settle(pilot)


async def test_a_folder_without_runs_given_is_loaded_in_a_worker(runs):
    app = EBenchApp(lambda: ReplayScreen(runs["oracle"] / "sessions"), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        await until_settled(pilot, lambda: app.screen.rows, what="the runs")
        assert len(app.screen.rows) == 2 and all(row.passed for row in app.screen.rows)
        await pilot.press("f")
        await until_settled(pilot, lambda: len(app.screen.shown) != 2, what="the failed-only filter")
        assert app.screen.shown == []


async def test_one_session_file_opens_the_trial_directly(runs):
    session = runs["sloppy"] / "sessions" / "music-0020" / "1.jsonl"
    app = EBenchApp(lambda: ReplayScreen(session), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert not screen.query("#replay-table") and screen.single
        view = screen.query_one(TrialView)
        await settle(pilot, view)
        # The model's message: content and reasoning text in the event pane.
        message = next(s.index for s in view.timeline.steps if s.kind == "message" and s.event.reasoning)
        view.goto(message)
        await settle(pilot, view)
        detail = str(screen.query_one("#replay-detail-body").render())
        assert "start with the ones I know" in detail and "favourite the matching songs" in detail
        await pilot.press("end")
        await settle(pilot, view)
        assert screen.query_one(DiffView).counts["unexpected"] == 1
        grade_text = str(screen.query_one("#replay-grade-body").render())
        assert "FAIL" in grade_text and "agent_stopped" in grade_text and "point of no return" in grade_text
        await pilot.press("home")
        await settle(pilot, view)
        assert view.current == 0 and screen.query_one(DiffView).counts["matched"] == 0
        # Keys held down: the rebuilds of the steps passed over are dropped, the last one shows.
        await pilot.press(*["right"] * 6, "left")
        await settle(pilot, view)
        expected = view.timeline.state_at(5)
        assert view.current == view.state.step == 5 and view.state.diff.to_list() == expected.diff.to_list()
        assert screen.query_one(DiffView).counts["matched"] == len(expected.grade.matched)
        # Keys are bindings with ids (palette, help, keymap).
        ids = {active.binding.id for active in screen.active_bindings.values()}
        assert {"replay.next", "replay.previous", "replay.first", "replay.last", "replay.no_return", "replay.reference"} <= ids
        assert "replay.open" not in ids  # no table here


async def test_a_folder_of_human_attempts_one_trial_number_and_a_grade_in_words(tmp_path, music_world):
    task = load_suite(ids=["music-0020"]).tasks[0]
    for _ in range(2):  # two attempts at one task: each session's start says trial 1
        trial = human_trial(task, blind=True, folder=tmp_path)
        play_sloppily(trial)
        trial.finish(AGENT_STOPPED)
    app = EBenchApp(lambda: ReplayScreen(tmp_path), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await until_settled(pilot, lambda: len(screen.shown) == 2, what="the trials")
        assert [row.trial for row in screen.shown] == [1, 2]
        screen.open_row(1)
        await until_settled(pilot, lambda: isinstance(app.screen, ReplayTrialScreen), what="the trial screen")
        trial_screen = app.screen
        view = trial_screen.query_one(TrialView)
        await settle(pilot, view)
        # The header and the title agree on the trial's number.
        assert "· trial 2 ·" in trial_screen.sub_title
        assert "· trial 2 ·" in str(trial_screen.query_one("#replay-title").render())
        # A person's attempt ended by submitting, not by "agent_stopped".
        grade_text = str(trial_screen.query_one("#replay-grade-body").render())
        assert "outcome: submitted" in grade_text and "agent_stopped" not in grade_text


async def test_an_unreadable_session_is_shown_not_raised(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "start"}\n', encoding="utf-8")
    app = EBenchApp(lambda: ReplayScreen(bad), theme="ebench-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await until_settled(pilot)
        view = app.screen.query_one(TrialView)
        assert view.timeline is None and view.error and "not an ebench-session" in view.error
        await pilot.press("right", "x", "r")  # nothing to step through: no error


def test_position_text_and_step_detail(runs):
    assert position_text(0, 10, 0, 5, None).startswith("step 0/10  ░")
    bar = position_text(5, 10, 3, 5, 2)
    assert "calls 3/5" in bar and "✗ no return at step 2" in bar and bar.count("█") == 19  # 20 filled, one is the ✗ mark
    timeline = Timeline.open(runs["sloppy"] / "sessions" / "music-0020" / "1.jsonl")
    call = next(s for s in timeline.steps if s.kind == "tool_call")
    text = step_detail(call).plain
    assert "favourite_song" in text and '"song_id": 391' in text and "result" in text


def deterministic_session(path: Path) -> Path:
    """A sloppy session whose times are fixed, so the snapshot never moves."""
    [task] = load_suite(ids=["music-0020"]).tasks
    trial = Trial(task, writer=SessionWriter(path), solver={"name": "sloppy"})
    play_sloppily(trial)
    trial.finish(AGENT_STOPPED)
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        event = json.loads(line)
        event["t"] = number * 0.5
        if "seconds" in event:
            event["seconds"] = 0.002
        if event["event"] == "start":
            event.update(started="2026-01-01T00:00:00Z", session="sloppy/1.jsonl")
        if event["event"] == "end":
            event["summary"].update(seconds=1.0, session="sloppy/1.jsonl")
        lines.append(json.dumps(event, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


SIZES = [(80, 24), (120, 40), (200, 55)]
SIZE_IDS = ["80x24", "120x40", "200x55"]


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_snapshot_trial_view_at_the_first_correct_call(snap_compare, tmp_path, music_world, size):
    session = deterministic_session(tmp_path / "1.jsonl")

    async def step_to_a_call(pilot) -> None:
        await settle(pilot)
        view = pilot.app.screen.query_one(TrialView)
        view.goto(5)  # start, user, assistant, the wrong favourite, the first right one
        await settle(pilot, view)

    app = EBenchApp(lambda: ReplayScreen(session), theme="ebench-dark")
    assert snap_compare(app, terminal_size=size, run_before=step_to_a_call)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_snapshot_trial_list(snap_compare, runs, size):
    async def run_before(pilot) -> None:
        await until_settled(pilot, lambda: pilot.app.screen.query_one(TrialTable).row_count > 0, what="the trial list")

    assert snap_compare(list_app(runs), terminal_size=size, run_before=run_before)


async def test_a_narrow_trial_view_keeps_every_pane_and_a_bar_that_fits(tmp_path, music_world):
    session = deterministic_session(tmp_path / "1.jsonl")
    app = EBenchApp(lambda: ReplayScreen(session), theme="ebench-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(TrialView)
        assert view.has_class("-narrow")
        for pane in ("#replay-steps", "#replay-detail", "#replay-trace", "#replay-diff", "#replay-grade"):
            region = view.query_one(pane).region
            assert region.width >= 20 and region.height >= 5 and region.right <= 80
        position = str(view.query_one("#replay-position").render())
        assert "✗ no return at step" in position and len(position) <= 78
        # narrow, the reference takes the event's and the trace's place; r gives them back
        await pilot.press("r")
        await until_settled(pilot, lambda: view.reference is not None, what="the reference solution")
        assert view.reference_shown and not view.query_one("#replay-middle").display
        assert view.query_one("#replay-reference").region.right <= 80 and view.query_one("#replay-diff").region.width >= 20
        await pilot.press("r")
        assert not view.reference_shown and view.query_one("#replay-middle").display


async def test_the_diff_has_the_room_its_lines_need_and_the_steps_no_empty_rows(tmp_path, music_world):
    """Issue 33: the steps take the rows they have (the grade goes under them), the diff its own
    column with every line wrapped whole (enter: one row each, cut with "…")."""
    session = deterministic_session(tmp_path / "1.jsonl")
    app = EBenchApp(lambda: ReplayScreen(session), theme="ebench-dark")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(TrialView)
        view.goto(5)
        await settle(pilot, view)
        steps, grade = view.query_one("#replay-steps"), view.query_one("#replay-grade")
        assert steps.region.height == len(view.timeline.steps) + 2  # its rows and its border, no more
        assert grade.region.y >= steps.region.bottom and grade.region.x == steps.region.x
        diff = view.query_one(DiffView)
        assert diff.wrap and diff.region.height >= 30
        rows = [text for _, text in diff.rows]
        assert not any(row.endswith("…") for row in rows)
        whole = "".join(row.strip() for row in rows)
        assert all("".join(line.split()) in "".join(whole.split()) for _, line in diff.lines)  # every line, whole
        diff.focus()
        await pilot.press("enter")
        assert not diff.wrap


def test_the_path_is_said_in_words():
    def line(**turns: int | None) -> str | None:
        return path_line(TrialSummary(task="t", trial=1, passed=True, **turns))  # type: ignore[arg-type]

    assert line(call_turns=3, optimal_turns=3) == "the model called tools in 3 turns, the fewest this task allows"
    assert line(call_turns=5, optimal_turns=2) == (
        "the model called tools in 5 turns; 2 would do (calls that need no earlier result can share a turn)"
    )
    assert line(call_turns=None, optimal_turns=0) is None and line(call_turns=4) is None and path_line(None) is None


def test_model_events_read_well_in_the_list_and_the_event_pane():
    from ebench.sessions.events import event_from
    from ebench.sessions.timeline import Step

    asks = Step(
        3,
        "message",
        event_from(
            {
                "event": "message",
                "t": 1.0,
                "role": "assistant",
                "content": None,
                "reasoning": "Page through the songs first.",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "search_songs", "arguments": "{}"}}],
                "usage": {"input": 120, "output": 30},
            }
        )[0],
    )
    assert asks.label == "assistant: → search_songs"
    text = step_detail(asks).plain
    assert "Page through the songs first." in text and "search_songs" in text and "input 120" in text
    error = Step(
        4,
        "api_error",
        event_from(
            {"event": "api_error", "t": 2.0, "kind": "rate_limit", "status": 429, "attempt": 1, "error": "slow down", "retry_in": 1.5}
        )[0],
    )
    assert error.label == "api error: slow down"
    assert "status: 429" in step_detail(error).plain and "retry_in: 1.5" in step_detail(error).plain
