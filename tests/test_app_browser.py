"""The task browser: first paint before the suite is loaded, filters and their keys, fuzzy search,
sorting, preview, blind mode, the narrow layout, opening a task (solve screen stand-in), the
person's attempts, and the run results key."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from appcheck import StandIn, notified, stand_in, until_loaded, until_settled
from textual.widgets import DataTable, Input, Select, Static

from ebench.app.app import EBenchApp
from ebench.app.screens.browser import BrowserScreen, TaskTable
from ebench.app.screens.dialogs import SortChooser
from ebench.app.widgets.record_table import cut, fit_widths
from ebench.sessions.attempts import human_trial
from ebench.sessions.trial import AGENT_STOPPED
from ebench.tasks.spec import CAPABILITY_TITLES, resolve_args
from ebench.tasks.suite import load_suite

SIZE = (160, 48)
SEARCH_WORD = "infrastructure"  # a word of exactly one task's request


@pytest.fixture(scope="module")
def suite():
    return load_suite().tasks


@pytest.fixture(autouse=True)
def data_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A fresh sessions folder and runs folder per test (the data directory is shared by the test session)."""
    sessions, runs = tmp_path / "sessions", tmp_path / "runs"
    sessions.mkdir()
    runs.mkdir()
    monkeypatch.setattr("ebench.sessions.attempts.sessions_dir", lambda: sessions)
    monkeypatch.setattr("ebench.paths.sessions_dir", lambda: sessions)
    monkeypatch.setattr("ebench.paths.runs_dir", lambda: runs)
    return {"sessions": sessions, "runs": runs}


@pytest.fixture
def solve_stand_in(monkeypatch: pytest.MonkeyPatch) -> list[StandIn]:
    return stand_in(monkeypatch, "ebench.app.screens.solve", "SolveScreen")


def app_with_browser() -> EBenchApp:
    return EBenchApp(lambda: BrowserScreen(), theme="ebench-dark")


async def loaded(pilot: Any) -> BrowserScreen:
    return await until_loaded(pilot, BrowserScreen)


def row_ids(screen: BrowserScreen) -> list[str]:
    table = screen.query_one(TaskTable)
    return [str(row.key.value) for row in table.ordered_rows]


def status_line(screen: BrowserScreen) -> str:
    return str(screen.query_one("#browser-status-line", Static).render())


def preview(screen: BrowserScreen) -> str:
    return str(screen.query_one("#browser-preview-body", Static).render())


def result_cell(screen: BrowserScreen, task_id: str) -> str:
    return str(screen.query_one(TaskTable).get_cell(task_id, "result"))


def headers(table: DataTable[Any]) -> list[str]:
    return [str(column.label) for column in table.ordered_columns]


async def click_header(pilot: Any, table: DataTable[Any], key: str) -> None:
    """A click on the middle of a column's header."""
    columns = table.ordered_columns
    index = next(i for i, column in enumerate(columns) if column.key.value == key)
    x = sum(column.get_render_width(table) for column in columns[:index]) + columns[index].get_render_width(table) // 2
    inset = table.content_region.offset - table.region.offset  # the pane's border
    await pilot.click(table, offset=(inset.x + x, inset.y))


# -- loading -----------------------------------------------------------------------------------------


async def test_first_paint_comes_before_the_suite_is_loaded_then_every_task_shows(monkeypatch, suite):
    from ebench.tasks import suite as suite_module

    release = threading.Event()
    real = suite_module.load_suite

    def slow_load(*args: Any, **kwargs: Any):
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(suite_module, "load_suite", slow_load)
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        # the first paint: the screen mounted while its loader is held
        await until_settled(
            pilot, lambda: isinstance(app.screen, BrowserScreen) and "loading tasks" in status_line(app.screen), what="the first paint"
        )
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        table = screen.query_one(TaskTable)
        assert not screen.loaded and table.loading and table.row_count == 0
        assert "loading tasks" in status_line(screen)
        release.set()
        await loaded(pilot)
        assert table.row_count == len(suite) == len(row_ids(screen))
        assert not table.loading and app.focused is table
        assert f"{len(suite)} of {len(suite)} tasks" in status_line(screen)


def test_importing_the_browser_loads_no_solve_screen_editor_or_model_code():
    code = (
        "import sys, ebench.app.screens.browser; "
        "print([m for m in ('ebench.app.screens.solve', 'litellm', 'textual.widgets._text_area', "
        "'ebench.sessions.trial', 'ebench.sessions.attempts', 'ebench.tasks.suite') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


async def test_rows_show_domain_capabilities_changed_rows_and_reference_calls(suite):
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(TaskTable)
        task = suite[5]
        row = [str(cell) for cell in table.get_row(task.id)]
        assert row[0] == task.id and row[1] == task.domain
        assert row[3] == str(len(task.expected_diff)) and row[4] == str(len(task.reference_solution))
        assert row[5] == ""  # untried


# -- filters, search, preview ------------------------------------------------------------------------


async def test_domain_capability_and_status_filters_narrow_the_table(suite):
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        screen.query_one("#browser-domain", Select).value = "moba"
        await until_settled(pilot, lambda: screen.filters.domain == "moba", what="the domain filter")
        moba = [t.id for t in suite if t.domain == "moba"]
        assert row_ids(screen) == moba
        screen.query_one("#browser-capability", Select).value = "cross_entity_cascade"
        await until_settled(pilot, lambda: screen.filters.capability == "cross_entity_cascade", what="the capability filter")
        both = [t.id for t in suite if t.domain == "moba" and "cross_entity_cascade" in t.capabilities]
        assert row_ids(screen) == both and 0 < len(both) < len(moba)
        assert f"{len(both)} of {len(suite)} tasks" in status_line(screen)
        screen.query_one("#browser-status", Select).value = "passed"
        await until_settled(pilot, lambda: screen.filters.status == "passed", what="the status filter")
        assert row_ids(screen) == []
        assert "No task matches" in preview(screen)
        screen.query_one("#browser-status", Select).value = "untried"
        await until_settled(pilot, lambda: screen.filters.status == "untried", what="the status filter")
        assert row_ids(screen) == both
        screen.query_one("#browser-domain", Select).clear()
        screen.query_one("#browser-capability", Select).clear()
        await until_settled(pilot, lambda: screen.filters.domain is None and screen.filters.capability is None, what="the filters cleared")
        assert len(row_ids(screen)) == len(suite)


async def test_the_split_picker_loads_a_shipped_split_and_goes_back_to_the_folder_it_started_on(suite):
    from ebench.tasks.suite import SPLITS, shipped_splits

    ask = load_suite(SPLITS["ask"]).tasks
    app = app_with_browser()  # started on the tests' folder ($EBENCH_TASKS): "this folder"
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        picker = screen.query_one("#browser-split", Select)
        assert picker.value == "folder"
        assert [value for _, value in screen.split_choices()] == [*shipped_splits(), "folder"]
        picker.value = "ask"
        await until_settled(pilot, lambda: screen.loaded and screen.tasks_dir == SPLITS["ask"])
        assert row_ids(screen) == [t.id for t in ask] and all(t.user_profile for t in ask)
        picker.value = "folder"
        await until_settled(pilot, lambda: screen.loaded and screen.tasks_dir != SPLITS["ask"])
        assert row_ids(screen) == [t.id for t in suite]


async def test_slash_focuses_the_search_and_a_word_of_the_request_finds_its_task(suite):
    [wanted] = [t for t in suite if SEARCH_WORD in t.query.lower()]
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        await pilot.press("slash")
        assert app.focused is screen.query_one("#browser-search", Input)
        await pilot.press(*SEARCH_WORD)
        await until_settled(pilot, lambda: screen.filters.search == SEARCH_WORD, what="the search")
        ids = row_ids(screen)
        assert ids[0] == wanted.id and len(ids) < len(suite)
        assert wanted.query[:40] in preview(screen)  # the cursor starts on the best match
        await pilot.press("enter")  # leaves the search for the table
        assert app.focused is screen.query_one(TaskTable)
        # fuzzy: a letter left out still finds it; searching by id works too
        screen.query_one("#browser-search", Input).value = "infrastrcture"
        await until_settled(pilot, lambda: screen.filters.search == "infrastrcture", what="the search")
        assert row_ids(screen)[0] == wanted.id
        screen.query_one("#browser-search", Input).value = wanted.id
        await until_settled(pilot, lambda: screen.filters.search == wanted.id, what="the search")
        assert row_ids(screen)[0] == wanted.id
        screen.query_one("#browser-search", Input).value = "zzqqxx"
        await until_settled(pilot, lambda: screen.filters.search == "zzqqxx", what="the search")
        assert row_ids(screen) == []


async def test_the_preview_follows_the_cursor(suite):
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        first, second = suite[0], suite[1]
        text = preview(screen)
        assert first.id in text and first.query[:30] in text and f"user {first.actor}" in text
        await pilot.press("down")
        text = preview(screen)
        assert second.id in text and second.query[:30] in text
        assert f"{len(second.reference_solution)} calls" in text
        for table_name in {c.table for c in second.expected_diff}:
            assert table_name in text


async def test_s_sorts_by_the_column_under_the_cursor_S_chooses_one_and_a_header_click_sorts(suite):
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(TaskTable)
        suite_order = [t.id for t in suite]
        assert table.column_cursor == 0 and "reverse" in str(table.ordered_columns[0].label.style)  # the column under the cursor
        await pilot.press("s")  # the task column, ascending
        assert row_ids(screen) == sorted(suite_order) and headers(table)[0] == "Task ▲"
        await pilot.press("s")  # again: reversed
        assert row_ids(screen) == sorted(suite_order, reverse=True) and headers(table)[0] == "Task ▼"
        await pilot.press("right")  # the cursor to the domain column; its header shows it
        assert table.column_cursor == 1 and "reverse" in str(table.ordered_columns[1].label.style)
        assert "reverse" not in str(table.ordered_columns[0].label.style)
        await pilot.press("s")  # by domain, suite order kept within a domain (a stable sort)
        assert headers(table)[:2] == ["Task", "Domain ▲"]
        assert row_ids(screen) == [t.id for t in sorted(suite, key=lambda t: t.domain)]
        await click_header(pilot, table, "rows")
        by_rows = [t.id for t in sorted(suite, key=lambda t: len(t.expected_diff))]
        assert row_ids(screen) == by_rows and "Rows ▲" in headers(table)
        await click_header(pilot, table, "rows")  # again: reversed
        assert row_ids(screen) == [t.id for t in sorted(suite, key=lambda t: -len(t.expected_diff))] and "Rows ▼" in headers(table)
        assert screen.highlighted_task() is not None and screen.highlighted_task().id in preview(screen)
        # S: the columns in a list; the one chosen sorts (the cursor goes to it), "as given" undoes the sort
        await pilot.press("S")
        await until_settled(pilot, lambda: isinstance(app.screen, SortChooser))
        await pilot.press("home", "down", "enter")  # Domain
        await until_settled(pilot, lambda: app.screen is screen)
        assert headers(table)[1] == "Domain ▲" and table.column_cursor == 1
        await pilot.press("S")
        await until_settled(pilot, lambda: isinstance(app.screen, SortChooser))
        await pilot.press("end", "enter")  # as given
        await until_settled(pilot, lambda: app.screen is screen)
        assert table.sort_column is None and row_ids(screen) == suite_order  # back to the suite's order
        assert not any(marker in "".join(headers(table)) for marker in "▲▼")


async def test_filter_keys_open_each_filter_and_x_clears_every_filter(suite):
    wanted = next(t for t in suite if t.domain == "moba" and "cross_entity_cascade" in t.capabilities)
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        for key, select_id in (("d", "#browser-domain"), ("k", "#browser-capability"), ("t", "#browser-status")):
            await pilot.press(key)
            select = screen.query_one(select_id, Select)
            assert select.expanded and select.has_focus_within
            await pilot.press("escape")  # closes the choices, the focus stays on the filter
            assert not select.expanded
            screen.query_one(TaskTable).focus()
        screen.query_one("#browser-domain", Select).value = "moba"
        screen.query_one("#browser-capability", Select).value = "cross_entity_cascade"
        screen.query_one("#browser-status", Select).value = "untried"
        screen.query_one("#browser-search", Input).value = wanted.id
        filters = screen.filters
        await until_settled(
            pilot,
            lambda: (
                (filters.domain, filters.capability, filters.status, filters.search)
                == ("moba", "cross_entity_cascade", "untried", wanted.id)
            ),
            what="the four filters",
        )
        assert row_ids(screen)[0] == wanted.id and len(row_ids(screen)) < len(suite)
        await pilot.press("x")
        assert row_ids(screen) == [t.id for t in suite]
        assert screen.query_one("#browser-domain", Select).is_blank() and screen.query_one("#browser-capability", Select).is_blank()
        assert screen.query_one("#browser-status", Select).value == "all" and screen.query_one("#browser-search", Input).value == ""
        assert app.focused is screen.query_one(TaskTable)
        assert f"{len(suite)} of {len(suite)} tasks" in status_line(screen)


def expected_answer_strings(task) -> list[str]:
    """What the browser shows of a task's expected answer outside blind mode."""
    stats = task.stats
    kinds = ", ".join(f"{stats[k]} {k}" for k in ("inserts", "updates", "deletes") if stats.get(k))
    return ["changed rows", f"{len(task.expected_diff)} ({kinds})", f"{len(task.reference_solution)} calls", "tables"]


async def test_blind_mode_hides_the_expected_answer_from_the_columns_and_the_preview(suite):
    task = next(t for t in suite if len(t.expected_diff) > 1 and t.stats.get("updates"))
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(TaskTable)
        table.move_cursor(row=row_ids(screen).index(task.id))
        await until_settled(pilot, lambda: preview(screen).startswith(task.id), what="the task's preview")
        assert {"Rows", "Calls"} <= set(headers(table))
        row = [str(cell) for cell in table.get_row(task.id)]
        assert str(len(task.expected_diff)) in row and str(len(task.reference_solution)) in row
        assert all(text in preview(screen) for text in expected_answer_strings(task))
        assert "blind off" in status_line(screen)

        await pilot.press("b")
        assert screen.blind_mode and "blind on: the expected answer is hidden" in status_line(screen)
        assert headers(table) == ["Task", "Domain", "Capabilities", "Result"]
        row = [str(cell) for cell in table.get_row(task.id)]
        assert row[:3] == [task.id, task.domain, str(table.get_cell(task.id, "capabilities"))] and len(row) == 4
        shown = preview(screen)
        assert task.query[:40] in shown and "hidden in blind mode" in shown
        assert not any(text in shown for text in expected_answer_strings(task))
        for change_table in {c.table for c in task.expected_diff} - set(task.query.lower().split()):
            assert f"tables        {change_table}" not in shown

        while table.column_cursor < len(table.record_columns) - 1:
            await pilot.press("right")  # to the result column
        await pilot.press("s")  # a sort by the result column survives the columns coming back
        assert headers(table)[-1] == "Result ▲"
        await pilot.press("b")
        assert not screen.blind_mode and {"Rows", "Calls", "Result ▲"} <= set(headers(table))
        assert all(text in preview(screen) for text in expected_answer_strings(task))


# -- width: cut text, the narrow layout --------------------------------------------------------------


def test_widths_are_cut_from_the_column_with_most_to_spare_and_a_cut_cell_ends_in_an_ellipsis():
    assert fit_widths([10, 40, 8], [None, 6, None], 100) == [10, 40, 8]  # room enough: natural widths
    assert fit_widths([10, 40, 8], [None, 6, None], 38) == [10, 20, 8]
    assert fit_widths([10, 40, 20], [4, 6, None], 30) == [4, 6, 20]  # a column without a minimum is never cut
    assert fit_widths([10, 40, 20], [4, 6, 8], 36) == [10, 12, 14]  # the most to spare first, then in turn
    assert cut("acquisition, filtering", 12, "left").plain == "acquisition…"
    assert cut("✓ passed", 8, "left").plain == "✓ passed"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_at_a_narrow_width_every_column_shows_the_preview_goes_below_and_the_result_is_whole(size, moba_tasks, data_folders):
    passed = moba_tasks[0]
    record_attempt(passed, data_folders["sessions"], solve=True)
    app = app_with_browser()
    async with app.run_test(size=size) as pilot:
        screen = await loaded(pilot)
        table = screen.query_one(TaskTable)
        preview_pane = screen.query_one("#browser-preview")
        if size[0] < 110:
            assert screen.has_class("-narrow") and preview_pane.region.y >= table.region.bottom
        else:
            assert screen.has_class("-wide") and preview_pane.region.x >= table.region.right
        assert headers(table) == ["Task", "Domain", "Capabilities", "Rows", "Calls", "Result"]
        used = sum(column.get_render_width(table) for column in table.ordered_columns)
        assert used <= table.scrollable_content_region.width  # no column scrolled out of sight
        assert str(table.get_cell(passed.id, "result")) == "✓ passed"
        longest = max(screen.tasks, key=lambda t: len(t.capabilities))
        cell = str(table.get_cell(longest.id, "capabilities"))
        assert cell.endswith("…") and len(cell) == table.columns[table.ordered_columns[2].key].width
        table.move_cursor(row=row_ids(screen).index(longest.id))
        await until_settled(pilot, lambda: preview(screen).startswith(longest.id), what="the task's preview")
        assert all(CAPABILITY_TITLES[c] in preview(screen) for c in longest.capabilities)  # the cut cell, whole


# -- opening a task ----------------------------------------------------------------------------------


async def test_enter_opens_the_solve_screen_with_the_task_and_the_mode_toggles(suite, solve_stand_in):
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        await pilot.press("down", "down", "enter")
        [made] = solve_stand_in
        assert app.screen is made
        assert made.args == (suite[2],) and made.kwargs == {"code": False, "blind": False}
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("c", "b")
        assert screen.code_mode and screen.blind_mode
        assert "code mode on" in status_line(screen) and "blind on" in status_line(screen)
        await pilot.press("enter")
        assert solve_stand_in[-1].args == (suite[2],)
        assert solve_stand_in[-1].kwargs == {"code": True, "blind": True}
        await pilot.press("escape")
        await pilot.press("c")
        assert not screen.code_mode and screen.blind_mode


async def test_the_bindings_have_ids_and_show_in_the_palette_commands():
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        ids = {b.id for b in BrowserScreen.BINDINGS}
        assert {
            "browser.open",
            "browser.search",
            "browser.code",
            "browser.blind",
            "browser.results",
            "browser.domain",
            "browser.capability",
            "browser.status",
            "browser.clear",
            "browser.sort",
            "browser.sort_by",
        } <= ids
        titles = {command.title for command in app.get_system_commands(screen)}
        assert {"Open task", "Search", "Code mode", "Blind mode", "Run results", "Clear filters", "Sort", "Sort by…"} <= titles


# -- attempts ----------------------------------------------------------------------------------------


def record_attempt(task, folder: Path, *, solve: bool, finish: bool = True) -> None:
    trial = human_trial(task, folder=folder)
    if solve:
        results = []
        for step in task.reference_solution:
            result = trial.call(step.tool, resolve_args(step.args, results))
            assert result.ok
            results.append(result.value)
    if finish:
        trial.finish(AGENT_STOPPED)
    else:
        trial.close()


@pytest.fixture(scope="module")
def moba_tasks(suite, moba_world):
    return [t for t in suite if t.domain == "moba"][:4]


async def test_attempts_show_as_results_and_update_when_the_solve_screen_closes(moba_tasks, data_folders, solve_stand_in):
    folder = data_folders["sessions"]
    passed, failed, open_, later = moba_tasks
    record_attempt(passed, folder, solve=True)
    record_attempt(failed, folder, solve=False)
    record_attempt(open_, folder, solve=False, finish=False)
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        assert result_cell(screen, passed.id) == "✓ passed"
        assert result_cell(screen, failed.id) == "✗ failed"
        assert result_cell(screen, open_.id) == "… open"
        assert result_cell(screen, later.id) == ""
        for status, expected in (("passed", [passed.id]), ("failed", [failed.id]), ("open", [open_.id])):
            screen.query_one("#browser-status", Select).value = status
            await until_settled(pilot, lambda: screen.filters.status == status, what=f"the {status} filter")  # noqa: B023 (awaited here)
            assert row_ids(screen) == expected
        screen.query_one("#browser-status", Select).value = "all"
        await until_settled(pilot, lambda: screen.filters.status == "all", what="the filter cleared")
        screen.query_one(TaskTable).move_cursor(row=row_ids(screen).index(later.id))
        await pilot.press("enter")
        assert solve_stand_in[-1].args == (later,)
        record_attempt(later, folder, solve=True)  # what the solve screen records
        await pilot.press("escape")
        await until_settled(pilot, lambda: result_cell(screen, later.id), what="the browser's attempts")
        assert result_cell(screen, later.id) == "✓ passed"
        assert "✓ passed" in preview(screen)


# -- run results key ---------------------------------------------------------------------------------


async def test_results_key_without_runs_says_how_to_make_one(data_folders):
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        screen = await loaded(pilot)
        messages = notified(app)
        await pilot.press("R")
        assert app.screen is screen
        assert any("no runs yet" in message for message in messages)


async def test_results_key_opens_the_results_screen_on_the_runs_and_the_sessions(data_folders, monkeypatch):
    runs = data_folders["runs"]
    (runs / "a-run").mkdir()
    (runs / "a-run" / "manifest.json").write_text(json.dumps({"format": "ebench-run/1"}))
    (runs / "not-a-run").mkdir()
    (data_folders["sessions"] / "x-human.jsonl").write_text("{}\n")
    stand_in(monkeypatch, "ebench.app.screens.results", "ResultsScreen")
    app = app_with_browser()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("R")
        [made] = StandIn.made
        assert app.screen is made
        assert made.args == ([runs / "a-run", data_folders["sessions"]],)


# -- snapshot ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 55)], ids=["80x24", "120x40", "200x55"])
def test_snapshot_browser_after_loading(snap_compare, size):
    async def run_before(pilot: Any) -> None:
        await loaded(pilot)

    assert snap_compare(app_with_browser(), terminal_size=size, run_before=run_before)
