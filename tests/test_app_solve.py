"""The solve screen, driven with Pilot against a real world copy: compose and run calls, a bad
call's error, exec_code, the live diff, submit and grade, new attempts, blind mode, and watching
the oracle with pause and step. Every attempt is a recorded session; the world is never written."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from appcheck import forget_unfinished, run_call, until_settled
from textual.widgets import TextArea

from ebench.app.app import EBenchApp
from ebench.app.screens.dialogs import ConfirmDialog
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets import task_pane
from ebench.app.widgets import trace as trace_module
from ebench.app.widgets.catalog import ToolCatalog
from ebench.app.widgets.code_editor import CodeEditor
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.diff_view import DiffView
from ebench.app.widgets.trace import CallTrace
from ebench.engine.domain_registry import get_domain
from ebench.paths import sessions_dir
from ebench.sessions.record import read_session
from ebench.sessions.solvers import OracleSolver
from ebench.sessions.trial import current_world
from ebench.tasks.suite import load_suite

TASK = "moba-0024"  # create a room (4 row changes), then invite three clanmates (one row each)
ROOM = {"name": "Friday Night Stack", "mode": "custom", "capacity": 4, "password": "4826"}
INVITEES = [33, 124, 162]
SIZE = (180, 50)


@pytest.fixture(scope="module")
def task():
    return load_suite(ids=[TASK]).tasks[0]


@pytest.fixture(autouse=True)
def world_untouched(task):
    path = current_world(get_domain(task.domain))[0]
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    yield
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.fixture(autouse=True)
def no_attempt_left(task):
    forget_unfinished(task)


async def ready(pilot) -> SolveScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SolveScreen)
    await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
    return screen


def session_files(kind: str = "human") -> set[Path]:
    return set(sessions_dir().glob(f"*-{TASK}-{kind}*.jsonl"))


async def test_compose_and_run_calls_then_submit_and_pass(task):
    before = session_files()
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(DiffView).counts["missing"] == len(task.expected_diff)
        await run_call(pilot, screen, "create_room", ROOM)
        trace = screen.query_one(CallTrace)
        assert trace.call_ids == ["call-1"]
        assert screen.query_one(DiffView).counts == {"matched": 4, "missing": 3, "unexpected": 0, "wrong": 0, "actual": 4}
        room = screen.trial.history[-1].result["room_id"]
        for player in INVITEES:
            await run_call(pilot, screen, "invite_to_room", {"room_id": room, "player_id": player})
        assert screen.query_one(DiffView).counts["matched"] == len(task.expected_diff)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        status = screen.query_one(task_pane.TaskPane).status
        assert screen.summary.passed and "PASS" in status
        assert "submitted" in status and "agent_stopped" not in status  # a person's words
        # a submitted attempt takes no more calls
        screen.query_one(CallComposer).set_args({"room_id": room, "player_id": 5})
        await pilot.press("f5")
        await until_settled(pilot)  # a call it wrongly started would be waited for
        assert screen.trial.tool_calls == 4
    [new] = session_files() - before
    session = read_session(new)
    assert session.finished and session.end.grade.passed
    assert session.start.solver.name == "human" and session.start.solver.label == "human-assisted"
    assert [e.tool for e in session.tool_calls()] == ["create_room", *["invite_to_room"] * 3]


async def test_a_bad_call_shows_the_tools_error_and_changes_nothing(task):
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "invite_to_room", {"room_id": 999999, "player_id": 33})
        [entry] = screen.trial.history
        assert not entry.ok and entry.error_code == "not_found"
        view = screen.query_one(CallTrace).view("call-1")
        assert view is not None and "not_found" in str(view.render())
        assert screen.query_one(DiffView).counts["actual"] == 0


async def test_exec_code_runs_nests_its_calls_and_solves_the_task(task):
    code = (
        f"room = create_room(**{ROOM!r})['room_id']\n"
        f"for player in {INVITEES!r}:\n    invite_to_room(room_id=room, player_id=player)\n"
        "print('invited', len(list_room_invitations(direction='sent')))\n"
    )
    app = EBenchApp(lambda: SolveScreen(task, code=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(ToolCatalog).select("exec_code", notify=True)
        await until_settled(pilot, what="the choice of exec_code")
        editor = screen.query_one(CodeEditor)
        editor.code = code
        editor.query_one("#code-input").focus()
        await pilot.press("ctrl+r")
        await until_settled(pilot)  # the block's worker, then the diff's
        assert screen.trial.exec_blocks == 1 and not screen.busy and not editor.running
        assert screen.query_one(DiffView).counts["matched"] == 7
        block = screen.trial.history[-1]
        assert block.tool == "exec_code" and block.ok, block
        children = [e for e in screen.trial.history if e.parent == block.id]
        assert [c.tool for c in children] == ["create_room", *["invite_to_room"] * 3, "list_room_invitations"]
        assert "invited" in str(editor.query_one("#code-output").render())
        assert set(screen.query_one(CallTrace).call_ids) >= {block.id, *(c.id for c in children)}


async def test_a_new_attempt_starts_clean_and_drops_the_unsubmitted_one(task):
    before = session_files()
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        first = screen.trial
        await pilot.press("ctrl+n")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ConfirmDialog))
        await pilot.press("y")  # discarding an attempt with calls is confirmed
        await until_settled(pilot, lambda: screen.trial is not None and screen.trial is not first and screen.last_diff is not None)
        assert screen.query_one(CallTrace).call_ids == []
        assert screen.query_one(DiffView).counts["actual"] == 0
        second = screen.trial.writer.path
        # the unsubmitted attempt was never graded, so it is not a result: only the new one's file is left
        # (it may reuse the name the discarded file had, so the check is on the files and their contents)
        assert session_files() - before == {second}
        assert "tool_call" not in second.read_text()
    # leaving the screen abandons the open attempt too
    assert not second.exists() and session_files() == before


async def test_blind_mode_hides_the_expected_side_until_submit(task, monkeypatch):
    clock = iter(range(0, 10_000, 7))
    monkeypatch.setattr(task_pane, "monotonic", lambda: next(clock))
    app = EBenchApp(lambda: SolveScreen(task, blind=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        diff = screen.query_one(DiffView)
        shown = " ".join(text for _, text in diff.lines).lower()
        assert set(diff.counts) <= {"actual", "insert", "update", "delete"}
        assert not re.search(r"\b(missing|matched|unexpected|wrong|pass|fail)\b", shown), shown
        assert "expected changes hidden" in shown
        pane = screen.query_one(task_pane.TaskPane)
        assert pane.elapsed and pane.elapsed > 0 and str(pane.border_subtitle).startswith("⏱ ")
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        assert diff.counts["matched"] == 4 and diff.counts["missing"] == 3  # revealed after submit
        stopped = pane.elapsed
        assert pane.elapsed == stopped  # the timer stopped at submit
        path = screen.trial.writer.path
    session = read_session(path)
    assert session.start.solver.to_dict() == {"name": "human", "label": "human", "blind": True, "via": "terminal"}
    assert session.end.grade.passed is False


async def test_watching_the_oracle_paused_stepping_then_resumed(task):
    app = EBenchApp(lambda: SolveScreen(task, watcher=OracleSolver(), paused=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        gate = screen.gate
        await until_settled(pilot, lambda: gate.waiting)
        assert screen.trial.tool_calls == 0
        screen.query_one(CallTrace).focus()
        await pilot.press("n")
        await until_settled(pilot, lambda: screen.trial.tool_calls == 1 and gate.waiting)
        await until_settled(pilot, lambda: screen.query_one(CallTrace).call_ids == ["call-1"])
        await until_settled(pilot, lambda: screen.query_one(DiffView).counts["matched"] == 4)
        await pilot.press("p")  # resume
        await until_settled(pilot, lambda: screen.summary is not None)
        assert screen.summary.passed and screen.trial.tool_calls == 4
        assert screen.query_one(DiffView).counts["matched"] == len(task.expected_diff)
        status = screen.query_one(task_pane.TaskPane).status
        assert "PASS" in status and "(agent_stopped)" in status  # a model's trial keeps its termination
        path = screen.trial.writer.path
    assert read_session(path).start.solver.to_dict() == {"name": "oracle"}


async def test_a_call_picked_in_the_trace_comes_back_into_the_composer(task):
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        composer = screen.query_one(CallComposer)
        screen.query_one(ToolCatalog).select("get_my_profile", notify=True)
        await until_settled(
            pilot, lambda: composer.tool is not None and composer.tool.name == "get_my_profile", what="get_my_profile chosen"
        )
        screen.post_message(CallTrace.Selected(screen.trial.history[0]))
        await until_settled(pilot, lambda: composer.tool.name == "create_room" and composer.values.get("name"))
        assert json.loads(json.dumps(composer.values))["name"] == ROOM["name"]


SIZES = {"80x24": (80, 24), "120x40": (120, 40), "200x55": (200, 55)}


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_of_the_solve_screen_after_one_call(snap_compare, task, monkeypatch, size):
    monkeypatch.setattr(trace_module, "duration", lambda seconds: "1 ms")  # the only thing that varies

    async def run_before(pilot) -> None:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        await pilot.press("f4")  # the trace (in a narrow terminal, the one pane shown), on its newest call
        await until_settled(pilot, lambda: screen.focused is not None and screen.query_one(CallTrace) in screen.focused.ancestors_with_self)
        # The call's result is laid out a frame after it is scrolled to, and the trace follows
        # again: the screen is compared once it shows the newest call.
        trace = screen.query_one(CallTrace)

        def newest_shown_whole() -> bool:
            """The newest call laid out as tall as what it renders, wrapped (its result included), and in view."""
            newest = trace.newest_view()
            if newest is None:
                return False
            rows = newest.render().wrap(pilot.app.console, newest.size.width)  # type: ignore[union-attr]
            return newest.size.height == len(rows) and trace.showing_newest

        await until_settled(pilot, newest_shown_whole, what="the newest call followed")

    assert snap_compare(EBenchApp(lambda: SolveScreen(task)), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_of_the_solve_screen_in_code_mode(snap_compare, task, size):
    async def run_before(pilot) -> None:
        screen = await ready(pilot)
        screen.query_one(CodeEditor).code = "rooms = list_rooms()\nprint(len(rooms['items']))\n"
        await until_settled(pilot, lambda: isinstance(screen.focused, TextArea))  # the editor has the focus
        screen.set_focus(None)  # a blinking cursor would be caught on or off: the layout is what is compared
        await until_settled(pilot, lambda: screen.focused is None, what="no focus")

    assert snap_compare(EBenchApp(lambda: SolveScreen(task, code=True)), terminal_size=SIZES[size], run_before=run_before)


async def test_from_the_browser_to_a_graded_attempt_and_back(task):
    """The real screens end to end: the browser opens the solve screen on the highlighted task; the
    submitted attempt shows as the task's result when the person comes back."""
    from ebench.app.screens.browser import BrowserScreen, TaskTable, attempt_status

    app = EBenchApp(BrowserScreen)
    async with app.run_test(size=SIZE) as pilot:
        browser = app.screen
        await until_settled(pilot, lambda: browser.loaded)
        table = browser.query_one(TaskTable)
        table.move_cursor(row=[t.id for t in browser.shown].index(TASK))
        await until_settled(
            pilot, lambda: (highlighted := browser.highlighted_task()) is not None and highlighted.id == TASK, what="the task highlighted"
        )
        table.focus()
        await pilot.press("enter")
        screen = await ready(pilot)
        assert screen.task_spec.id == TASK and not screen.code and not screen.blind
        await run_call(pilot, screen, "create_room", ROOM)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        await pilot.press("escape", "escape")  # out of the composer's field, then back to the browser
        assert app.screen is browser
        await until_settled(
            pilot, lambda: browser.attempts.get(TASK) is not None and browser.attempts[TASK].session == screen.trial.writer.path
        )
        assert attempt_status(browser.attempts[TASK]) == "failed"


async def test_watching_a_model_one_turn_at_a_time(task, monkeypatch):
    """Model mode: the real litellm client against a local fake server; `n` lets one model turn
    through (one request, its call), the conversation shows the model's messages, `p` resumes."""
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.solvers.llm import LLMSolver
    from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    with FakeOpenAI(ReferencePlayer([task])) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        app = EBenchApp(lambda: SolveScreen(task, watcher=solver, paused=True))
        async with app.run_test(size=SIZE) as pilot:
            screen = await ready(pilot)
            await until_settled(pilot, lambda: screen.gate.waiting)
            assert server.requests == []
            screen.query_one(CallTrace).focus()
            await pilot.press("n")
            await until_settled(pilot, lambda: screen.gate.waiting and screen.trial.turns == 1)
            assert len(server.requests) == 1 and screen.trial.tool_calls == 1
            await until_settled(pilot, lambda: screen.query_one(CallTrace).call_ids == [screen.trial.history[0].id])
            log = screen.query_one("#conversation")
            await until_settled(pilot, lambda: any("assistant" in str(line.text) for line in log.lines))
            await pilot.press("p")
            await until_settled(pilot, lambda: screen.summary is not None)
            assert screen.summary.passed and screen.summary.turns == 5
            path = screen.trial.writer.path
    start = read_session(path).start
    assert start.solver.name == "llm" and start.solver.model == "openai/fake"
