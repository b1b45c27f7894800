"""Issue 33: nothing a person types is lost, and the time an attempt is open is counted.

The code editor's text and the composer's filled fields are kept beside the attempt's session as
they change (`<session>.draft.json`, written atomically) and put back on resume, after a quit and
after the app's process is killed with SIGKILL; time counts while the attempt is open, a gap
with no input longer than IDLE_CAP counting as IDLE_CAP."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest
from appcheck import SAFETY_SECONDS, forget_unfinished, run_call, until_settled, until_solve_ready

from ebench.app.app import EBenchApp
from ebench.app.screens.dialogs import ResumeDialog
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets.code_editor import CodeEditor
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.trace import CallTrace
from ebench.paths import sessions_dir
from ebench.sessions.attempts import (
    IDLE_CAP,
    Draft,
    IdleClock,
    draft_path,
    human_trial,
    leave_out,
    load_draft,
    resume_trial,
    save_draft,
    unfinished_attempt,
)
from ebench.sessions.record import read_session
from ebench.tasks.suite import load_suite

TASK = "moba-0024"  # create a room, then invite three clanmates
ROOM = {"name": "Friday Night Stack", "mode": "custom", "capacity": 4, "password": "4826"}
SIZE = (160, 45)


@pytest.fixture(scope="module")
def task():
    return load_suite(ids=[TASK]).tasks[0]


@pytest.fixture(autouse=True)
def no_attempt_left(task):
    forget_unfinished(task)


async def ready(pilot) -> SolveScreen:
    return await until_solve_ready(pilot)


def kept(screen: SolveScreen, check) -> bool:
    """Whether the draft written beside the screen's attempt passes `check`."""
    draft = load_draft(screen.trial.writer.path)
    return draft is not None and bool(check(draft))


# -- the core: idle time, the clock taken back, drafts on disk ------------------------------------


def test_a_gap_longer_than_the_cap_counts_as_the_cap():
    now = [1000.0]
    idle = IdleClock(cap=300, clock=lambda: now[0])
    now[0] += 120
    assert idle.touch() == 0  # two minutes between inputs: all of it counts
    now[0] += 420
    assert idle.excess() == 120  # seven minutes idle so far: two are beyond the cap
    now[0] += 60
    assert idle.excess() == 60  # only what was not taken out already
    assert idle.touch() == 0  # the input ends the gap: its excess was taken out
    now[0] += 301
    assert idle.touch() == 1
    assert IDLE_CAP == 300


def test_time_left_out_moves_the_trial_and_its_session_clock_but_never_before_the_last_event(task, tmp_path):
    trial = human_trial(task, folder=tmp_path)
    try:
        trial.call("create_room", ROOM)
        last = trial.history[-1].t
        started = trial.started
        taken = leave_out(trial, 10_000.0)  # far more than has passed since the call
        assert 0 <= taken <= trial.seconds + taken
        assert trial.started == started + taken
        trial.call("get_my_profile", {})
        assert trial.history[-1].t >= last  # the session's times still go forward
    finally:
        trial.close()


def test_a_draft_is_written_whole_and_a_damaged_one_is_no_draft(tmp_path):
    session = tmp_path / "20260101-000000-000-moba-0024-human.jsonl"
    session.write_text("")
    draft = Draft(42.5, "print(1)\n", {"tool": "create_room", "fields": {"name": "A"}})
    save_draft(session, draft)
    assert draft_path(session).name.endswith(".draft.json") and not list(tmp_path.glob(".draft-*"))
    assert load_draft(session) == draft
    assert not draft.empty and draft.composer_text
    assert Draft(1.0, "  \n", {"tool": "x", "raw": "{}"}).empty
    draft_path(session).write_text('{"format": "ebench-draft/1", "seconds": "soon"}')
    assert load_draft(session) is None
    draft_path(session).write_text("{not json")
    assert load_draft(session) is None


def test_a_draft_redacts_secrets_as_the_session_does(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_API_KEY", "sk-secret-123456")
    session = tmp_path / "s-human.jsonl"
    session.write_text("")
    save_draft(session, Draft(1.0, "key = 'sk-secret-123456'\n"))
    assert "sk-secret-123456" not in draft_path(session).read_text()


def test_resuming_counts_the_time_spent_after_the_last_call(task, tmp_path):
    trial = human_trial(task, folder=tmp_path)
    trial.call("create_room", ROOM)
    path = trial.writer.path
    last = trial.history[-1].t
    trial.close()
    save_draft(path, Draft(last + 60.0, "rooms = list_rooms()\n"))  # a minute of work after the call, then a quit
    left = unfinished_attempt(task, tmp_path)
    assert left is not None and left.seconds == pytest.approx(last + 60.0, abs=0.001) and left.draft.code == "rooms = list_rooms()\n"
    resumed = resume_trial(task, path)
    try:
        assert resumed.seconds >= last + 59.999
        resumed.call("get_my_profile", {})
        assert resumed.history[-1].t >= last + 59.999  # the session's clock goes on from the draft's time
    finally:
        resumed.close()


# -- the app: drafts kept as they change, put back on resume ----------------------------------------


async def test_a_composed_call_and_its_time_survive_a_quit(task):
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "create_room", ROOM)
        composer = screen.query_one(CallComposer)
        screen.query_one("ToolCatalog").select("invite_to_room", notify=True)
        await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == "invite_to_room")
        composer.field("player_id").focus()
        await pilot.press("3", "3")
        await until_settled(pilot, lambda: kept(screen, lambda d: (d.composer or {}).get("fields") == {"player_id": "33"}))
        path = screen.trial.writer.path
        spent = screen.trial.seconds
        await pilot.press("ctrl+q")
    left = unfinished_attempt(task)
    assert left is not None and left.session == path
    assert left.seconds >= spent  # the time after the last call is counted (saved at quit)
    assert left.seconds > read_session(path).events[-1].t

    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        assert "invite_to_room call being composed" in str(pilot.app.screen.what)
        await pilot.press("r")
        screen = await ready(pilot)
        composer = screen.query_one(CallComposer)
        await until_settled(pilot, lambda: composer.tool is not None and composer.values.get("player_id") == "33")
        assert screen.trial.seconds >= left.seconds
        assert screen.query_one(CallTrace).call_ids == ["call-1"]


async def test_an_attempt_with_only_typed_code_is_kept_and_a_submitted_one_leaves_no_draft(task):
    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(CodeEditor).code = "rooms = list_rooms()\n"
        await until_settled(pilot, lambda: kept(screen, lambda d: d.code == "rooms = list_rooms()\n"))
        path = screen.trial.writer.path
    left = unfinished_attempt(task)
    assert left is not None and left.session == path and left.calls == 0 and left.draft.code == "rooms = list_rooms()\n"

    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=SIZE) as pilot:
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        await pilot.press("r")
        screen = await ready(pilot)
        assert screen.query_one(CodeEditor).code == "rooms = list_rooms()\n"
        await run_call(pilot, screen, "create_room", ROOM)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
    assert not draft_path(path).exists() and unfinished_attempt(task) is None


# -- a real process, killed ---------------------------------------------------------------------------

CODE_LINES = ["rooms = list_rooms()", "print(len(rooms['items']))"]


class Terminal:
    """`ebench play` in a pseudo-terminal of 120x40: keys are written to it, its output drained."""

    def __init__(self, *args: str) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ebench", *args], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def kill(self) -> int:
        self.process.send_signal(signal.SIGKILL)
        code = self.process.wait(timeout=SAFETY_SECONDS)
        os.close(self.master)
        return code


def wait_for(condition, what: str):
    """Poll `condition` (a file another process writes) until it holds; the bound only catches a hang."""
    deadline = time.monotonic() + SAFETY_SECONDS
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {SAFETY_SECONDS:.0f} s")


async def test_a_code_block_typed_in_a_real_terminal_survives_sigkill(task):
    """`ebench play --task ID --code` in a pseudo-terminal: the block is typed key by key into the
    editor, the process is killed with SIGKILL once the draft is on disk (nothing of the app runs
    after that: no unmount, no save at exit), then the task is opened again and resumed."""
    before = set(sessions_dir().glob(f"*-{TASK}-human*.jsonl"))
    terminal = Terminal("play", "--task", TASK, "--code")
    try:
        session = wait_for(lambda: next(iter(set(sessions_dir().glob(f"*-{TASK}-human*.jsonl")) - before), None), "the attempt opened")
        wait_for(lambda: load_draft(session) is not None, "the attempt's first draft")  # the screen is up and the editor focused
        terminal.type("\r".join(CODE_LINES))
        typed = "\n".join(CODE_LINES)
        draft = wait_for(lambda: (d := load_draft(session)) is not None and d.code.strip() == typed and d, "the typed block kept")
    finally:
        code = terminal.kill()
    assert code == -signal.SIGKILL
    assert json.loads(draft_path(session).read_text())["code"].strip() == typed
    assert draft.seconds >= 0

    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=SIZE) as pilot:
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResumeDialog))
        assert "an unsent code block (2 lines)" in str(pilot.app.screen.what)
        await pilot.press("r")
        screen = await ready(pilot)
        assert screen.resumed_from == session
        editor = screen.query_one(CodeEditor)
        assert editor.code.strip() == typed
        await pilot.press("ctrl+r")  # and it runs as typed
        await until_settled(pilot, lambda: not screen.busy and screen.trial.exec_blocks == 1)
        assert screen.trial.history[-1].ok and "✓ ok" in editor.output_text
