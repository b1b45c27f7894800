"""The solve screen for a person at the keyboard: no attempt is lost (leaving keeps it, reopening
offers to resume it, discarding and empty submits ask first, esc never discards), every pane is
one key away from anywhere, code mode opens in the editor, a narrow terminal shows one pane at a
time, and watching a solver starts paused with speed keys."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from appcheck import forget_unfinished, notified, run_call, until_settled
from textual.widget import Widget
from textual.widgets import Input, RichLog, TabbedContent, TextArea

from ebench.app.app import EBenchApp
from ebench.app.screens.base import EBenchScreen
from ebench.app.screens.dialogs import ConfirmDialog, ResumeDialog
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets.catalog import ToolCatalog
from ebench.app.widgets.code_editor import CodeEditor
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.diff_view import DiffView
from ebench.app.widgets.trace import CallTrace, CallView
from ebench.sessions.attempts import unfinished_attempt
from ebench.sessions.record import read_session
from ebench.sessions.solvers import OracleSolver
from ebench.tasks.suite import load_suite

TASK = "moba-0024"  # create a room (4 row changes), then invite three clanmates (one row each)
ROOM = {"name": "Friday Night Stack", "mode": "custom", "capacity": 4, "password": "4826"}
INVITEES = [33, 124, 162]
SIZE = (160, 45)


@pytest.fixture(scope="module")
def task():
    return load_suite(ids=[TASK]).tasks[0]


@pytest.fixture(autouse=True)
def no_attempt_left(task):
    forget_unfinished(task)


class Below(EBenchScreen):
    """A screen under the solve screen (the browser, in the app), so esc has somewhere to go."""


async def ready(pilot) -> SolveScreen:
    await until_settled(pilot, lambda: isinstance(pilot.app.screen, SolveScreen) and pilot.app.screen.trial is not None)
    screen = pilot.app.screen
    await until_settled(pilot, lambda: screen.last_diff is not None)
    return screen


async def test_an_attempt_left_by_quitting_is_resumed_with_its_world_and_passes(task):
    async with EBenchApp(lambda: SolveScreen(task, blind=True)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        room = screen.trial.history[-1].result["room_id"]
        path = screen.trial.writer.path
        await pilot.press("ctrl+q")  # quitting keeps the attempt
    left = unfinished_attempt(task)
    assert left is not None and left.session == path and (left.calls, left.blind) == (1, True)

    async with EBenchApp(lambda: SolveScreen(task, blind=True)).run_test(size=SIZE) as pilot:
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        await pilot.press("r")
        screen = await ready(pilot)
        assert screen.resumed_from == path and screen.trial.tool_calls == 1
        assert screen.query_one(CallTrace).call_ids == ["call-1"]
        assert screen.last_diff.actual.to_list() and len(screen.last_diff.actual) == 4  # the room is there again
        for player in INVITEES:
            await run_call(pilot, screen, "invite_to_room", {"room_id": room, "player_id": player})
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        assert screen.summary.passed and screen.summary.tool_calls == 4
    session = read_session(path)
    assert session.finished and session.end.grade.passed and not session.warnings
    assert unfinished_attempt(task) is None


async def test_start_over_deletes_the_unsubmitted_attempt(task):
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        path = screen.trial.writer.path
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        await pilot.press("d")
        screen = await ready(pilot)
        assert screen.trial.tool_calls == 0 and screen.resumed_from is None
        assert not path.exists()


async def test_an_attempt_made_in_code_mode_reopens_in_code_mode(task):
    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:  # opened in tools mode
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        await pilot.press("r")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, SolveScreen) and pilot.app.screen.code)
        screen = await ready(pilot)
        assert screen.code and screen.trial.code and screen.trial.tool_calls == 1


async def test_esc_leaves_a_field_then_the_screen_and_never_discards(task):
    app = EBenchApp(Below)
    async with app.run_test(size=SIZE) as pilot:
        messages = notified(app)
        await until_settled(pilot, lambda: isinstance(app.screen, Below) and app.screen.is_mounted, what="the screen below")
        app.push_screen(SolveScreen(task))
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        field = screen.query_one(CallComposer).field("name")
        field.focus()
        await until_settled(pilot, lambda: screen.focused is field, what="the field focused")
        await pilot.press("escape")  # leaves the field, not the screen
        await until_settled(pilot, lambda: screen.focused is not field, what="escape handled")
        assert app.screen is screen and isinstance(screen.focused, CallTrace)
        await pilot.press("escape")  # now leaves the screen, keeping the attempt
        await until_settled(pilot, lambda: isinstance(app.screen, Below))
        assert any("kept (1 call)" in message for message in messages)
    left = unfinished_attempt(task)
    assert left is not None and left.calls == 1


async def test_leaving_an_attempt_without_calls_leaves_nothing(task):
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        path = screen.trial.writer.path
    assert not path.exists() and unfinished_attempt(task) is None


async def test_a_new_attempt_and_an_empty_submit_ask_first(task):
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await pilot.press("ctrl+s")  # no call yet
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog))
        await pilot.press("escape")  # no
        await until_settled(pilot, lambda: pilot.app.screen is screen)
        assert not screen.submitted and screen.summary is None
        await run_call(pilot, screen, "create_room", ROOM)
        first = screen.trial
        await pilot.press("ctrl+n")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog))
        await pilot.press("n")  # keep it
        await until_settled(pilot, lambda: pilot.app.screen is screen)
        assert screen.trial is first and first.tool_calls == 1 and first.writer.path.exists()
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        await pilot.press("d")
        screen = await ready(pilot)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog))
        await pilot.press("y")  # submit with no calls, knowingly
        await until_settled(pilot, lambda: screen.summary is not None)
        assert not screen.summary.passed and screen.summary.tool_calls == 0


async def test_every_pane_is_one_key_away_even_from_inside_a_field(task):
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        composer = screen.query_one(CallComposer)
        field = composer.field("name")

        def within(pane: Widget) -> Callable[[Widget], bool]:
            return lambda focused: pane in focused.ancestors_with_self

        async def from_field(key: str, arrived: Callable[[Widget], bool]) -> Widget:
            """The focus where `key` pressed in a field puts it, once it is where `arrived` wants
            (the pane may show first and take the focus after a refresh)."""
            field.focus()
            await until_settled(pilot, lambda: screen.focused is field, what="the field focused")
            await pilot.press(key)
            await until_settled(pilot)
            await until_settled(pilot, lambda: screen.focused is not None and arrived(screen.focused), what=f"{key}'s pane focused")
            assert screen.focused is not None
            return screen.focused

        assert screen.query_one(ToolCatalog) in (await from_field("f2", within(screen.query_one(ToolCatalog)))).ancestors_with_self
        newest = await from_field("f4", lambda focused: isinstance(focused, CallView))
        assert isinstance(newest, CallView)  # the newest call, in the trace
        assert screen.query_one(DiffView) in (await from_field("f8", within(screen.query_one(DiffView)))).ancestors_with_self
        assert screen.query_one(DiffView) in (await from_field("alt+4", within(screen.query_one(DiffView)))).ancestors_with_self
        screen.query_one(CallTrace).focus()
        await pilot.press("f3")
        await until_settled(pilot)
        await until_settled(pilot, lambda: screen.focused is not None and composer in screen.focused.ancestors_with_self, what="f3's pane")
        assert composer in screen.focused.ancestors_with_self
        found = await from_field("ctrl+f", lambda focused: isinstance(focused, Input) and focused.id == "catalog-search")
        assert isinstance(found, Input) and found.id == "catalog-search"
        field.focus()
        await until_settled(pilot, lambda: screen.focused is field, what="the field focused")
        before = field.value
        await pilot.press("slash")  # inside a field "/" is a character, not a key of the screen
        assert "/" in field.value and "/" not in before and screen.focused is field
        await pilot.press("f9")  # the code editor's key: not in tools mode
        await until_settled(pilot, what="f9 handled")
        assert screen.focused is field
        assert "solve.pane.code" not in {b.binding.id for b in screen.active_bindings.values()}


async def test_code_mode_opens_in_the_editor_and_switches_with_keys(task):
    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        tabs = screen.query_one(TabbedContent)
        editor = screen.query_one(CodeEditor)
        assert tabs.active == "tab-code" and isinstance(screen.focused, TextArea)
        assert editor.region.height > screen.query_one(CallTrace).region.height  # the editor takes most of the room
        await pilot.press("f3")
        await until_settled(pilot)
        await until_settled(pilot, lambda: screen.focused is not None and tabs in screen.focused.ancestors_with_self, what="f3's pane")
        assert tabs.active == "tab-call" and tabs in screen.focused.ancestors_with_self  # no tool yet: the Call tab
        await pilot.press("f9")
        await until_settled(pilot)
        await until_settled(pilot, lambda: isinstance(screen.focused, TextArea), what="the editor focused")
        assert tabs.active == "tab-code" and isinstance(screen.focused, TextArea)


async def test_a_failed_block_shows_its_reason_before_its_long_output(task):
    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        editor = screen.query_one(CodeEditor)
        editor.code = "for i in range(1600):\n    print('line', i)\n1 / 0\n"
        await pilot.press("ctrl+r")
        await until_settled(pilot, lambda: not screen.busy and "failed" in editor.output_text)
        lines = editor.output_text.splitlines()
        assert lines[0].startswith("✗ failed") and "ZeroDivisionError" in lines[1]
        assert any(line == "line 1599" for line in lines)  # the output is all there, below the reason


async def test_at_80x24_one_pane_at_a_time_each_reachable_by_key(task):
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        assert screen.narrow
        panes = {
            "f2": screen.query_one(ToolCatalog),
            "f3": screen.query_one(CallComposer),
            "f4": screen.query_one(CallTrace),
            "f8": screen.query_one(DiffView),
        }
        for key, pane in panes.items():
            await pilot.press(key)
            await until_settled(pilot)

            def alone(pane: Widget = pane) -> bool:
                """The pane focused, and laid out as the only pane shown."""
                shown = [other for other in panes.values() if other.region.height > 0]
                return screen.focused is not None and pane in screen.focused.ancestors_with_self and shown == [pane]

            await until_settled(pilot, alone, what=f"{key}'s pane alone")
            assert pane.region.height >= 8 and pane.region.width >= 70, (key, pane.region)
            assert pane in screen.focused.ancestors_with_self
            hidden = [other for other in panes.values() if other is not pane and other.region.height > 0]
            assert not hidden, (key, hidden)


async def test_watching_starts_paused_with_speed_keys_and_the_oracles_steps_in_the_conversation(task):
    async with EBenchApp(lambda: SolveScreen(task, watcher=OracleSolver())).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        gate = screen.gate
        await until_settled(pilot, lambda: gate.waiting)
        assert gate.paused and screen.trial.tool_calls == 0
        assert "paused" in screen.query_one("#task").status
        rate = gate.rate
        await pilot.press("plus")
        assert gate.rate is None or gate.rate > rate
        await pilot.press("minus", "minus")
        assert gate.rate is not None and gate.rate < rate
        await pilot.press("n")
        await until_settled(pilot, lambda: screen.trial.tool_calls == 1 and gate.waiting)
        log = screen.query_one("#conversation", RichLog)
        await until_settled(pilot, lambda: any("create_room" in line.text for line in log.lines))
        assert any("step 1/4" in line.text for line in log.lines)
