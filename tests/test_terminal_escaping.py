"""Terminals are not a channel (issue 28, part 3): text from outside ebench (a model's message, a
tool's result, exec_code's output, a task file, a run's label) never drives the terminal it is
shown on, and never acts as markup in the app.

A hostile string sets the window's title, clears the screen and draws a fake "all 323 tasks
passed" line, with the 8-bit CSI, a bidirectional override and a carriage return besides; its
markup would quit the app when clicked. Each is sent for real: exec_code blocks in the sandbox,
a model behind the local fake OpenAI server, task files and runs on disk, sessions replayed in
the app under Pilot. What comes out is checked for raw control characters (none), for the
escapes a reader sees instead (`\\x1b`), and, in the app, for click actions in what is drawn.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from appcheck import until_settled
from rich.segment import ControlType, Segment
from rich.style import Style
from rich.text import Span, Text
from textual.app import App
from textual.color import Color
from textual.widgets import DataTable, OptionList, RichLog, Static
from typer.testing import CliRunner

from ebench.app.app import EBenchApp
from ebench.app.render import UnprintableFilter
from ebench.app.screens.browser import BrowserScreen
from ebench.app.screens.replay import ReplayTrialScreen, TrialView
from ebench.app.screens.result_view import ResultScreen, pager_text
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets.trace import CallTrace
from ebench.cli import app as cli
from ebench.sessions.batch import Batch
from ebench.sessions.events import ToolCallEvent
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.runs import load_run
from ebench.sessions.solvers import Outcome
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.trial import AGENT_STOPPED, Trial, TrialLimits
from ebench.tasks.suite import load_suite
from ebench.terminal import is_printable, markup_escaped, printable, printable_json, printable_text
from ebench.testing.fake_openai import FakeOpenAI, Script, completion, error

# Set the window's title, clear the screen, home the cursor: then a line of our own.
TITLE, CLEAR = "\x1b]0;pwned\x07", "\x1b[2J\x1b[H"
FAKE_LINE = "all 323 tasks passed"
CLICK = f"[@click=app.quit]{FAKE_LINE}[/]"  # Rich and Textual markup: quits the app when clicked
HOSTILE = f"{TITLE}{CLEAR}{CLICK} \x9b31m red \u202eevil\r"
NAME = f"{TITLE}[@click=app.quit]x[/]\x9b2J\u202e"  # the same, short enough for a playlist's name (60)
SHOWN_NAME = "\\x1b]0;pwned\\x07[@click=app.quit]x[/]\\x9b2J\\u202e"
# What a terminal obeys, or reads backwards: none of these may reach it raw.
RAW = ("\x1b", "\x9b", "\x07", "\u202e", "\r", "\x7f")
SHOWN_TITLE = "\\x1b]0;pwned\\x07"  # how the title sequence reads once escaped
TASK = "music-0005"

runner = CliRunner()


def invoke(*args: str):
    # Wide, so no line is wrapped; and colourless, so any ESC in the output is the text's own.
    return runner.invoke(cli, list(args), env={"COLUMNS": "400", "FORCE_COLOR": None, "TTY_COMPATIBLE": None})


def assert_inert(output: str) -> None:
    """Nothing in `output` a terminal would obey (or show reversed)."""
    found = [repr(c) for c in RAW if c in output]
    assert not found, f"raw {', '.join(found)} in: {output!r}"
    assert is_printable(output.replace("\n", "").replace("\t", ""))


def flat(output: str) -> str:
    return " ".join(output.split())


# -- ebench.terminal ------------------------------------------------------------------------------


def test_printable_escapes_what_a_terminal_obeys_and_keeps_the_rest():
    text = f"{HOSTILE}\x00\x7f\x85\u2066x\u2069\u200f\u061c\ud800 tab\tnew\nline é 中 ✓ 🎵"
    shown = printable(text)
    assert_inert(shown)
    assert shown.startswith(SHOWN_TITLE + "\\x1b[2J\\x1b[H" + CLICK)
    escapes = ("\\x9b31m", "\\u202eevil", "\\x0d", "\\x00", "\\x7f", "\\x85", "\\u2066x\\u2069", "\\u200f\\u061c", "\\ud800")
    for escape in escapes:
        assert escape in shown
    assert shown.endswith(" tab\tnew\nline é 中 ✓ 🎵")  # tabs, newlines and printable Unicode stay
    assert printable(shown) == shown  # escaping twice changes nothing
    assert is_printable(shown) and not is_printable(text) and is_printable("plain ✓\n")


def test_printable_json_reads_back_as_the_very_same_values():
    value = {
        HOSTILE: [HOSTILE, "\\\x9b", "\x7f\\", "\u202e\u2069", "\ud83c", 1.5, None],  # keys, escapes beside backslashes
        "nested": {"a\x85b": "\x1b" * 3, "plain": "é ✓"},
    }
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value, ensure_ascii=False, indent=2), json.dumps(value)):
        shown = printable_json(text)
        assert_inert(shown)
        assert json.loads(shown) == json.loads(text) == value
    assert "é ✓" in printable_json(json.dumps(value, ensure_ascii=False))  # printable text stays as it was


def test_markup_escaped_shows_tags_and_escapes_as_written():
    for text in (HOSTILE, "[bold]b[/bold] [link=https://example.com]x[/link]", "ends in a backslash \\", "[@click=screen.delete()]x"):
        markup = markup_escaped(text)
        parsed = Text.from_markup(f"[bold]{markup}[/bold]")  # as the commands use it: inside their own tags
        assert parsed.plain == printable(text)  # every tag of the text shown, none applied
        assert parsed.spans == [Span(0, len(parsed.plain), "bold")]
        assert_inert(markup)


def test_printable_text_keeps_each_style_on_its_characters():
    text = Text("a")
    text.append("\x1b[2J", "red")
    text.append("b\u202ec", "bold")
    text.append("d", "italic")
    shown = printable_text(text)
    assert shown.plain == "a\\x1b[2Jb\\u202ecd"
    assert [(shown.plain[s.start : s.end], s.style) for s in shown.spans] == [("\\x1b[2J", "red"), ("b\\u202ec", "bold"), ("d", "italic")]
    # A span that starts or ends on an escaped character covers its whole escape.
    partial = Text("x\x1by\x1b", spans=[Span(1, 2, "red"), Span(3, 4, "blue")])
    assert [(s.start, s.end) for s in printable_text(partial).spans] == [(1, 5), (6, 10)]
    clean = Text("nothing to escape", style="bold")
    assert printable_text(clean) is clean


def test_the_apps_last_guard_blanks_what_reached_a_line_raw():
    segments = [Segment("ok "), Segment(f"x{HOSTILE}y", Style(bold=True)), Segment("\x1b[?25l", None, [(ControlType.HIDE_CURSOR,)])]
    filtered = UnprintableFilter().apply(segments, Color(0, 0, 0))
    assert filtered[0] == segments[0] and filtered[2] == segments[2]  # text already printable; a control segment is Textual's own
    assert is_printable(filtered[1].text) and filtered[1].style == Style(bold=True)
    assert FAKE_LINE in filtered[1].text


# -- the command line -----------------------------------------------------------------------------


@pytest.fixture()
def block(tmp_path: Path) -> Path:
    """An exec_code block that prints the hostile text, returns it, and calls a tool with it."""
    path = tmp_path / "hostile.py"
    path.write_text(f"print({HOSTILE!r})\nsearch_songs(query={HOSTILE!r})\nfrozenset([{HOSTILE!r}])\n", encoding="utf-8")
    return path


def test_tools_exec_prints_the_blocks_output_escaped(block, music_world):
    result = invoke("tools", "exec", str(block), "--domain", "music", "--actor", "1")
    assert result.exit_code == 0, result.output
    assert_inert(result.stdout)
    assert_inert(result.stderr)
    out = flat(result.stdout)
    assert f"{SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK}" in out  # the output, its tags as text, its escapes visible
    assert "search_songs(" in out and "\\x9b31m" in out  # the call's arguments too
    assert "value: frozenset({'\\x1b]0;pwned\\x07" in out  # the value (a repr)


def test_tools_exec_json_keeps_the_values_and_escapes_the_rest(block, music_world):
    result = invoke("tools", "exec", str(block), "--domain", "music", "--actor", "1", "--json")
    assert result.exit_code == 0, result.output
    assert_inert(result.stdout)
    payload = json.loads(result.stdout)
    assert payload["stdout"] == HOSTILE + "\n"  # exactly what the block printed
    assert payload["calls"][0]["args"] == {"query": HOSTILE}


def test_tools_call_json_escapes_what_the_world_holds(music_world):
    result = invoke("tools", "call", "create_playlist", json.dumps({"name": NAME}), "--domain", "music", "--actor", "1")
    assert result.exit_code == 0, result.output
    assert_inert(result.stdout)
    assert json.loads(result.stdout)["name"] == NAME


def test_an_error_quoting_a_name_is_one_escaped_line(tmp_path, music_world):
    missing = tmp_path / f"{TITLE}{CLEAR}[@click=app.quit]x[/].py"  # a file name may hold anything
    result = invoke("tools", "exec", str(missing), "--domain", "music", "--actor", "1")
    assert result.exit_code == 2
    assert_inert(result.stderr)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: cannot read") and f"{SHOWN_TITLE}\\x1b[2J\\x1b[H[@click=app.quit]x[/].py" in line


@pytest.fixture()
def hostile_tasks(tmp_path: Path) -> Path:
    """A task folder whose one task has the hostile text as its request and in its reference."""
    [task] = load_suite(ids=[TASK]).tasks
    data = json.loads(Path(task.source).read_text(encoding="utf-8"))
    data["query"] = HOSTILE
    data["reference_solution"][0]["args"]["note"] = HOSTILE
    folder = tmp_path / "tasks"
    (folder / "music").mkdir(parents=True)
    (folder / "music" / f"{TASK}.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return folder


def test_tasks_show_and_list_escape_the_task_file(hostile_tasks, music_world):
    shown = invoke("tasks", "show", TASK, "--dir", str(hostile_tasks))
    assert shown.exit_code == 0, shown.output
    assert_inert(shown.stdout)
    assert f"{SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK} \\x9b31m red \\u202eevil\\x0d" in shown.stdout
    assert '"note": "\\u001b]0;pwned\\u0007\\u001b[2J' in flat(shown.stdout)  # the reference's arguments (JSON)
    listed = invoke("tasks", "list", "--dir", str(hostile_tasks))
    assert listed.exit_code == 0, listed.output
    assert_inert(listed.stdout)
    assert f"{SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK}" in flat(listed.stdout)
    as_json = invoke("tasks", "show", TASK, "--dir", str(hostile_tasks), "--json")
    assert_inert(as_json.stdout)
    assert json.loads(as_json.stdout)["query"] == HOSTILE


@pytest.fixture()
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def hostile_model() -> Script:
    """A model that says the hostile text, calls a tool named with it and with it as an argument, then stops."""
    return Script(
        [
            completion(HOSTILE, [("search_songs", {"query": HOSTILE}), (f"{CLEAR}fake_tool", {})]),
            completion(f"{TITLE}done{CLEAR}"),
        ]
    )


def test_run_echoes_the_models_trace_escaped(fake_key, ebench_home, music_world):
    sessions = ebench_home / "sessions"
    before = set(sessions.glob("*.jsonl")) if sessions.is_dir() else set()
    with FakeOpenAI(hostile_model()) as server:
        result = invoke("run", "--task", TASK, "--model", "openai/fake", "--api-base", server.base_url, "--retries", "0")
    made = set(sessions.glob("*.jsonl")) - before
    for path in made:  # the shared data directory keeps no trial of this test
        path.unlink()
    assert result.exit_code == 0, result.output
    assert len(made) == 1
    assert_inert(result.stdout)
    assert_inert(result.stderr)
    out = flat(result.stdout)
    assert f"model: {SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK}" in out  # the model's words
    assert '"query": "\\u001b]0;pwned' in out and "\\x9b31m" in out  # its calls' arguments (as JSON)
    assert "\\x1b[2J\\x1b[Hfake_tool {} unknown_tool" in out  # and their names
    assert f"model: {SHOWN_TITLE}done" in out


def test_report_and_export_escape_a_runs_label_and_its_conversations(fake_key, tmp_path, music_world):
    out = tmp_path / "run"
    label = f"{TITLE}[@click=app.quit]evil[/]\x9b"
    with FakeOpenAI(hostile_model()) as server:
        ran = invoke(
            "run", "--batch", "--task", TASK, "--model", "openai/fake", "--api-base", server.base_url, "--retries", "0",
            "--label", label, "--out", str(out), "--json",
        )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert load_run(out).label == label  # recorded as given
    report = invoke("report", str(out), "--no-baseline")
    assert report.exit_code == 0, report.output
    assert_inert(report.stdout)
    assert f"{SHOWN_TITLE}[@click=app.quit]evil[/]\\x9b" in flat(report.stdout)
    exported = invoke("export", "trajectories", str(out))
    assert exported.exit_code == 0, exported.output
    assert_inert(exported.stdout)
    [line] = exported.stdout.splitlines()
    messages = json.loads(line)["messages"]
    assert HOSTILE in [m.get("content") for m in messages]  # the same values, read back
    to_file = invoke("export", "trajectories", str(out), "--out", str(tmp_path / "out.jsonl"))
    assert to_file.exit_code == 0, to_file.output
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == exported.stdout  # `cat FILE` is as safe


# -- the app ----------------------------------------------------------------------------------------


def drawn(app: App[Any]) -> tuple[str, list[str]]:
    """The whole screen as drawn (line filters applied): its text, and every click action in it."""
    strips = app.screen._compositor.render_strips()
    clicks = [str(s.style.meta["@click"]) for strip in strips for s in strip if s.style and s.style.meta and "@click" in s.style.meta]
    return "\n".join("".join(s.text for s in strip) for strip in strips), clicks


def assert_screen_inert(app: App[Any]) -> str:
    text, clicks = drawn(app)
    assert_inert(text)
    assert not [c for c in clicks if "quit" in c or "delete" in c], clicks
    return text


class HostileSolver:
    """Says the hostile text (as its reasoning too), makes a call carrying it, and stops."""

    name = f"{TITLE}solver[@click=app.quit]x[/]"

    def config(self) -> dict[str, Any]:
        return {"name": self.name}

    async def solve(self, trial: Trial, limits: TrialLimits) -> Outcome:
        assert trial.task is not None
        trial.message("user", trial.task.query)
        trial.message("assistant", HOSTILE, reasoning=f"[@click=screen.delete()]x[/]{CLEAR}")
        trial.call("search_songs", {"query": HOSTILE})
        trial.call("create_playlist", {"name": NAME})
        return Outcome(AGENT_STOPPED, error=HOSTILE)


@pytest.fixture(scope="module")
def hostile_session(tmp_path_factory, music_world) -> Path:
    out = tmp_path_factory.mktemp("hostile-run")
    batch = Batch(out, load_suite(ids=[TASK]).tasks, HostileSolver(), 1)
    batch.prepare()
    asyncio.run(batch.run(1))
    batch.finish("finished")
    [result] = load_run(out).results
    return out / result.session


async def test_a_replayed_session_is_shown_as_text_and_clicks_nothing(hostile_session):
    app = EBenchApp(lambda: ReplayTrialScreen(hostile_session, f"{TASK} · {HostileSolver.name}"), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.screen.query_one(TrialView)
        await until_settled(pilot, lambda: view.timeline is not None and view.analysed, what="the trial view")
        timeline = view.timeline
        assert timeline is not None
        message = next(s.index for s in timeline.steps if s.kind == "message" and HOSTILE in str(s.event.to_dict().get("content")))
        view.goto(message)
        await until_settled(pilot, lambda: view.state is not None and view.state.step == message, what="the message step")
        detail = app.screen.query_one("#replay-detail-body", Static)
        shown = detail.content
        assert isinstance(shown, Text)
        assert f"{SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK}" in shown.plain  # the model's words, as written
        assert "[@click=screen.delete()]x[/]\\x1b[2J" in shown.plain  # its reasoning
        steps = app.screen.query_one("#replay-steps", OptionList)
        assert all(is_printable(str(steps.get_option_at_index(i).prompt)) for i in range(steps.option_count))
        screen_text = assert_screen_inert(app)
        assert "[@click=screen.delete()]x[/]\\x1b[2J" in screen_text and SHOWN_TITLE in screen_text
        # The trace: the calls' arguments and results (the playlist's name) as text.
        trace = app.screen.query_one(CallTrace)
        view.goto(timeline.last)
        await until_settled(pilot, lambda: view.state is not None and view.state.step == timeline.last, what="the last step")
        for call_view in trace.query("CallView"):
            call_view.expanded = True
        await until_settled(pilot, what="the calls expanded")
        assert_screen_inert(app)
        # Clicking on the words that would quit the app does nothing of the kind.
        await pilot.click("#replay-detail-body")
        for call_view in trace.query("CallView"):
            await pilot.click(call_view)
        await until_settled(pilot, what="the clicks handled")
        assert app.is_running and app.return_code is None


async def test_a_watched_models_words_and_error_are_shown_as_text(fake_key, music_world):
    """The solve screen watching a model: its message and calls in the conversation, the API's
    error in the verdict (the task pane's border and the notification)."""
    [task] = load_suite(ids=[TASK]).tasks
    script = Script([completion(HOSTILE, [("search_songs", {"query": HOSTILE})]), error(400, f"{TITLE}{CLICK}")])
    with FakeOpenAI(script) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        app = EBenchApp(lambda: SolveScreen(task, watcher=solver, paused=False, speed=None), theme="ebench-dark")
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            screen = app.screen
            assert isinstance(screen, SolveScreen)
            await until_settled(pilot, lambda: screen.summary is not None and app.screen.query("Toast"), what="the watched model")
            try:
                conversation = "\n".join(line.text for line in screen.query_one("#conversation", RichLog).lines)
                assert f"{SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK}" in conversation.replace("\n", " ")
                assert screen.summary is not None and screen.summary.error and TITLE in screen.summary.error  # recorded as sent
                text = assert_screen_inert(app)
                assert "[@click=app.quit]" in text and SHOWN_TITLE in text  # the verdict quotes the error as written
                await pilot.click("#conversation")
                assert app.is_running and app.return_code is None
            finally:
                assert screen.trial is not None
                screen.trial.writer.path.unlink()  # the shared data directory keeps no trial of this test


@pytest.fixture()
def hostile_listing(music, music_conn) -> ToolCallEvent:
    """A real listing whose one playlist a model named with the hostile text."""
    env = music.env(music_conn, 1)
    created = music.tools.call(env, "create_playlist", {"name": NAME})
    assert created.ok, created
    listed = music.tools.call(env, "list_my_playlists", {})
    assert NAME in [item["name"] for item in listed.payload()["items"]]
    return ToolCallEvent(id="call-2", tool="list_my_playlists", args={}, ok=True, result=listed.payload())


class ResultHost(App[None]):
    def __init__(self, call: ToolCallEvent) -> None:
        super().__init__()
        self.call = call

    def on_mount(self) -> None:
        self.push_screen(ResultScreen(self.call, can_take=False))


async def test_the_result_viewer_shows_a_hostile_value_as_text(hostile_listing):
    app = ResultHost(hostile_listing)  # a plain App: no line filter behind the viewer's own escaping
    async with app.run_test(size=(200, 40), notifications=True) as pilot:

        def table_shown() -> bool:
            screen = app.screen
            return isinstance(screen, ResultScreen) and screen.query_one("#result-table", DataTable).row_count > 0

        await until_settled(pilot, table_shown, what="the result's table")
        text = assert_screen_inert(app)
        assert SHOWN_NAME in text
        table = app.screen.query_one("#result-table", DataTable)
        row = next(i for i in range(table.row_count) if "pwned" in str(table.get_row_at(i)))
        table.move_cursor(row=row, column=1)  # the name
        await pilot.press("y")  # copied: the notification names the value, as text
        await until_settled(pilot, lambda: app.screen.query("Toast"), what="the notification")
        assert SHOWN_NAME in assert_screen_inert(app)
        await pilot.press("j")  # the JSON view
        viewer = app.screen
        assert isinstance(viewer, ResultScreen)
        await until_settled(pilot, lambda: viewer.json_mode and viewer.query_one("#result-json").region.height > 0, what="the JSON view")
        assert_screen_inert(app)
        await pilot.click("#result-body")
        assert app.is_running and app.return_code is None
    paged = pager_text(hostile_listing.result)
    assert_inert(paged)
    assert json.loads(paged) == hostile_listing.result
    assert pager_text(HOSTILE) == printable(HOSTILE) + "\n"


async def test_the_task_browser_shows_a_hostile_task_file_as_text(hostile_tasks):
    broken = json.loads((hostile_tasks / "music" / f"{TASK}.json").read_text(encoding="utf-8"))
    broken["id"] = "music-0006"
    broken["domain"] = "[@click=app.quit]evil[/]"  # quoted by the error the browser notifies
    (hostile_tasks / "music" / "music-0006.json").write_text(json.dumps(broken), encoding="utf-8")
    app = EBenchApp(lambda: BrowserScreen(hostile_tasks), theme="ebench-dark")
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        await until_settled(pilot, lambda: screen.loaded and app.screen.query("Toast"), what="the browser and its notification")
        text = assert_screen_inert(app)
        assert SHOWN_TITLE in text
        assert "'[@click=app.quit]evil[/]'" in text  # the notification quotes the file as written
        preview = str(screen.query_one("#browser-preview-body", Static).content)
        assert f"{SHOWN_TITLE}\\x1b[2J\\x1b[H{CLICK}" in preview
        await pilot.click("#browser-preview-body")
        await until_settled(pilot, what="the click handled")
        assert app.is_running and app.return_code is None


def test_the_command_line_escapes_through_ebench_terminal_only():
    """No command uses rich's own `escape`: it escapes tags but leaves control characters raw."""
    root = Path(__file__).resolve().parent.parent / "ebench" / "cli"
    direct = [p.name for p in root.glob("*.py") if re.search(r"from rich\.markup import escape", p.read_text(encoding="utf-8"))]
    assert direct == []
