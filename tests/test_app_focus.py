"""Issue 33: small screens and focus. The whole request one key away (F6) however short the
terminal; focus goes where the person types next (the table after a filter's choice, the first
field after a tool is picked, the newest call on F4); a focused field shows its whole
description; ctrl+a selects all in the raw JSON; the trace follows the newest call again once it
is in view; keys typed while the world copy is prepared are kept."""

from __future__ import annotations

import threading

import pytest
from appcheck import forget_unfinished, run_call, until_loaded, until_settled
from textual.widgets import Footer, Input, Select, TextArea

from ebench.app.app import EBenchApp
from ebench.app.screens import solve as solve_module
from ebench.app.screens.browser import BrowserScreen, TaskTable
from ebench.app.screens.result_view import ResultScreen
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets import task_pane
from ebench.app.widgets import trace as trace_module
from ebench.app.widgets.code_editor import CodeEditor
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.task_pane import TaskPane
from ebench.app.widgets.trace import CallTrace, CallView
from ebench.tasks.suite import load_suite

LONG = "meeting-0099"  # a request of 303 characters: its date and time come last
MOBA = "moba-0024"
ROOM = {"name": "Friday Night Stack", "mode": "custom", "capacity": 4, "password": "4826"}
SIZES = {"80x24": (80, 24), "200x55": (200, 55)}


@pytest.fixture(scope="module")
def tasks():
    found = {task.id: task for task in load_suite(ids=[LONG, MOBA]).tasks}
    return found


@pytest.fixture(autouse=True)
def no_attempt_left(tasks):
    for task in tasks.values():
        forget_unfinished(task)


async def ready(pilot) -> SolveScreen:
    await until_settled(pilot, lambda: isinstance(pilot.app.screen, SolveScreen) and pilot.app.screen.trial is not None)
    screen = pilot.app.screen
    await until_settled(pilot, lambda: screen.last_diff is not None)
    return screen


def shown(pane: TaskPane) -> str:
    return pane.shown_text(pane.size.width)[0].plain


# -- the request, whole on a key -------------------------------------------------------------------


async def test_at_80x24_a_cut_request_ends_in_an_ellipsis_and_f6_shows_it_whole(tasks):
    task = tasks[LONG]
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        pane = screen.query_one(TaskPane)
        await until_settled(pilot, lambda: pane.cut)
        assert shown(pane).endswith("…") and len(shown(pane).splitlines()) == 3
        assert "F6 whole request" in str(pane.border_title)
        assert "capabilities" not in shown(pane)  # the lines past the cut (who asks, when, the capabilities)
        await pilot.press("f6")
        await until_settled(pilot, lambda: pane.expanded and not shown(pane).endswith("…"))

        def laid_out() -> bool:
            """The pane as tall as its whole text (wrapped) and its border: laid out since it expanded."""
            return pane.region.height == len(pane.shown_text(pane.size.width)[0].wrap(pilot.app.console, pane.size.width)) + 2

        await until_settled(pilot, laid_out, what="the whole request laid out")
        whole = " ".join(shown(pane).split())
        assert task.query in whole and "as " in whole and "capabilities" in whole
        assert laid_out()
        assert "F6 less" in str(pane.border_title)
        composer = screen.query_one(CallComposer)
        search = screen.query_one("#catalog-search", Input)
        search.focus()
        await until_settled(pilot, lambda: screen.focused is search, what="the search focused")
        await pilot.press("f6")  # from inside a field too
        await until_settled(pilot, lambda: not pane.expanded and pane.cut)
        assert composer.tool is None


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_of_the_whole_request(snap_compare, tasks, size):
    async def run_before(pilot) -> None:
        screen = await ready(pilot)
        await pilot.press("f6")
        pane = screen.query_one(TaskPane)
        await until_settled(pilot, lambda: pane.expanded)
        screen.set_focus(None)
        await until_settled(pilot, lambda: screen.focused is None, what="no focus")

    assert snap_compare(EBenchApp(lambda: SolveScreen(tasks[LONG])), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_of_a_tool_picked_in_the_search_its_first_field_described(snap_compare, tasks, size):
    async def run_before(pilot) -> None:
        screen = await ready(pilot)
        await pilot.press("ctrl+f", *"get_schedule", "enter")
        composer = screen.query_one(CallComposer)
        await until_settled(pilot, lambda: composer.tool is not None and screen.focused is composer.field("employee_id"))
        await pilot.press("tab")  # to the start: its date format shows under it
        await until_settled(pilot, lambda: composer.help_text.startswith("start: "))
        # The cursor blinks on a clock: caught on or off by how long the machine took. Held on,
        # as it shows while the person types.
        start = composer.field("start")
        assert isinstance(start, Input) and screen.focused is start
        start.cursor_blink = False
        # the line under the form shown: laid out
        await until_settled(pilot, lambda: composer.query_one("#composer-help").region.height > 0, what="the help line laid out")

    assert snap_compare(EBenchApp(lambda: SolveScreen(tasks[LONG])), terminal_size=SIZES[size], run_before=run_before)


# -- focus where the person types next -----------------------------------------------------------


async def test_a_domain_chosen_in_the_browser_gives_the_focus_back_to_the_table():
    async with EBenchApp(BrowserScreen).run_test(size=(120, 40)) as pilot:
        browser = await until_loaded(pilot, BrowserScreen)
        table = browser.query_one(TaskTable)
        await pilot.press("d")
        select = browser.query_one("#browser-domain", Select)
        await until_settled(pilot, lambda: select.expanded)
        await pilot.press("down", "down", "enter")  # past the blank choice ("any domain") to the first domain
        await until_settled(pilot, lambda: not select.expanded and browser.filters.domain is not None)
        await until_settled(pilot, lambda: browser.focused is table)
        row = table.cursor_row
        await pilot.press("down")  # moves in the table, does not reopen the list
        await until_settled(pilot, lambda: table.cursor_row != row, what="the cursor moved")
        assert not select.expanded and table.cursor_row == row + 1


async def test_a_tool_picked_in_the_search_puts_the_focus_in_its_first_field(tasks):
    async with EBenchApp(lambda: SolveScreen(tasks[MOBA])).run_test(size=(160, 45)) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+f")
        await until_settled(pilot, lambda: screen.focused is not None and screen.focused.id == "catalog-search")
        await pilot.press(*"create_room", "enter")
        composer = screen.query_one(CallComposer)
        await until_settled(pilot, lambda: composer.tool is not None and screen.focused is composer.field("name"))
        await pilot.press(*"abc")
        assert composer.values["name"] == "abc"


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_focused_field_shows_its_whole_description(tasks, size):
    async with EBenchApp(lambda: SolveScreen(tasks[LONG])).run_test(size=size) as pilot:
        screen = await ready(pilot)
        composer = screen.query_one(CallComposer)
        screen.query_one("ToolCatalog").select("get_schedule", notify=True)
        await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == "get_schedule")
        composer.field("end").focus()
        await until_settled(pilot, lambda: composer.help_text.startswith("end: "))
        help_line = composer.query_one("#composer-help")
        await until_settled(pilot, lambda: help_line.region.height > 0)
        assert "include that whole day" in composer.help_text  # the end of a description the label cuts
        label_lines = composer.field("end").parent.label.region
        assert label_lines.height == 1  # the fields keep their place: the description is below the form
        composer.field("start").focus()
        await until_settled(pilot, lambda: composer.help_text.startswith("start: ") and "today 00:00" in composer.help_text)
        screen.query_one(CallTrace).focus()
        await until_settled(pilot, lambda: composer.help_text == "")  # focus left the fields


async def test_ctrl_a_selects_all_in_the_raw_json(tasks):
    async with EBenchApp(lambda: SolveScreen(tasks[MOBA])).run_test(size=(160, 45)) as pilot:
        screen = await ready(pilot)
        composer = screen.query_one(CallComposer)
        screen.query_one("ToolCatalog").select("create_room", notify=True)
        await until_settled(pilot, lambda: composer.tool is not None)
        composer.set_args(ROOM)
        await composer.form_ready()
        await pilot.press("ctrl+j")
        raw = composer.query_one("#composer-raw-text", TextArea)
        await until_settled(pilot, lambda: screen.focused is raw)
        await pilot.press("ctrl+a")
        assert raw.selected_text == raw.text and "Friday Night Stack" in raw.text


async def test_f4_lands_on_the_newest_call_where_v_opens_its_result_and_following_resumes(tasks, monkeypatch):
    monkeypatch.setattr(trace_module, "FOLD_LINES", 12)
    async with EBenchApp(lambda: SolveScreen(tasks[MOBA])).run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        for name in ("get_my_profile", "list_rooms", "list_friends", "get_my_profile"):
            await run_call(pilot, screen, name, {})
        trace = screen.query_one(CallTrace)
        newest = trace.view("call-4")
        await pilot.press("f4")
        await until_settled(pilot, lambda: screen.focused is newest)
        await pilot.press("v")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResultScreen))
        assert pilot.app.screen.call.id == "call-4"
        await pilot.press("escape")
        await until_settled(pilot, lambda: pilot.app.screen is screen)
        # back through the calls to the first: the trace stops following
        while screen.focused is not trace.view("call-1"):
            await pilot.press("shift+tab")
        await until_settled(pilot, lambda: not trace.following)
        # tabbing forward to the newest one follows again
        while screen.focused is not newest:
            await pilot.press("tab")
        await until_settled(pilot, lambda: trace.following)
        await run_call(pilot, screen, "list_rooms", {})
        await until_settled(pilot, lambda: trace.showing_newest)
        # scrolled away, `end` goes back to the newest call and follows
        trace.scroll_to(y=0, animate=False, immediate=True)
        await until_settled(pilot, lambda: not trace.following)
        trace.view("call-1").focus()
        await pilot.press("end")
        await until_settled(pilot, lambda: trace.following and isinstance(screen.focused, CallView) and screen.focused.call_id == "call-5")


# -- keys typed while the world copy is prepared -----------------------------------------------------


async def test_keys_typed_while_the_copy_is_prepared_are_kept_and_a_block_asked_for_runs_once_ready(tasks, monkeypatch):
    opened = solve_module.human_trial
    release = threading.Event()

    def held(*args, **kwargs):
        release.wait()
        return opened(*args, **kwargs)

    monkeypatch.setattr(solve_module, "human_trial", held)
    clock = iter(range(0, 100_000, 2))
    monkeypatch.setattr(task_pane, "monotonic", lambda: next(clock))
    try:
        async with EBenchApp(lambda: SolveScreen(tasks[MOBA], code=True)).run_test(size=(120, 40)) as pilot:
            screen = pilot.app.screen
            editor = screen.query_one(CodeEditor)
            await until_settled(pilot, lambda: screen._preparing is not None and screen.focused is editor.query_one(TextArea))
            await pilot.press(*"print('hi')")
            await pilot.press("ctrl+r")
            assert editor.code == "print('hi')"
            pane = screen.query_one(TaskPane)
            assert pane.status.startswith("preparing a private copy of the world") and "what you type is kept" in pane.status
            screen._every_second()
            assert " s · " in pane.status  # the seconds so far
            assert len(screen.query_one(Footer).children) > 3  # the keys show meanwhile
            assert screen.trial is None
            release.set()
            await until_settled(pilot, lambda: screen.trial is not None and screen.trial.exec_blocks == 1 and not screen.busy)
            assert "hi" in editor.output_text
    finally:
        release.set()
