"""The trace, live diff and code editor widgets, driven with Pilot in a small host screen of the
real app (so the theme's diff colours exist), plus the pure helpers they render with."""

from __future__ import annotations

from collections.abc import Callable
from itertools import takewhile
from typing import Any

import pytest
from appcheck import until_settled
from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Static, TextArea

from ebench.app.app import EBenchApp
from ebench.app.render import duration, json_text, short_json
from ebench.app.widgets.code_editor import CodeEditor
from ebench.app.widgets.diff_view import BLIND_NOTE, DiffView, diff_lines
from ebench.app.widgets.trace import FOLD_LINES, CallGroup, CallTrace, CallView
from ebench.tasks.diff import Diff, RowChange
from ebench.tasks.grading import Grade, WrongValue, explain


class Host(Screen[None]):
    """Composes the widgets under test and keeps the messages they post."""

    def __init__(self, make: Callable[[], list[Widget]]) -> None:
        super().__init__()
        self.make = make
        self.selected: list[dict[str, Any]] = []
        self.runs: list[str] = []

    def compose(self) -> ComposeResult:
        yield from self.make()

    def on_call_trace_selected(self, message: CallTrace.Selected) -> None:
        self.selected.append(message.entry)

    def on_code_editor_run(self, message: CodeEditor.Run) -> None:
        self.runs.append(message.code)
        self.query_one(CodeEditor).running = True  # as the solve screen does when it runs the block


def host_app(*widgets: Callable[[], Widget]) -> EBenchApp:
    return EBenchApp(lambda: Host(lambda: [make() for make in widgets]), theme="ebench-dark")


def call(
    n: int,
    tool: str = "search_songs",
    *,
    ok: bool = True,
    result: Any = None,
    parent: str | None = None,
    args: Any = None,
    error: tuple[str, str] | None = None,
) -> dict[str, Any]:
    ident = f"{parent}.{n}" if parent else f"call-{n}"
    if error:
        result = {"error": {"code": error[0], "message": error[1]}}
    return {
        "id": ident,
        "tool": tool,
        "args": args if args is not None else {"query": f"q{n}"},
        "ok": ok and not error,
        "result": result if result is not None else {"n": n},
        "error_code": error[0] if error else None,
        "seconds": 0.002,
        "parent": parent,
        "turn": 1,
    }


def block(n: int, code: str = "songs = search_songs(query='x')\nprint(len(songs))", **payload: Any) -> dict[str, Any]:
    result = {"ok": True, "stdout": "2\n", "value": "[1, 2]", "tool_calls": 2, **payload}
    return {
        "id": f"call-{n}",
        "tool": "exec_code",
        "args": {"code": code},
        "ok": result["ok"],
        "result": result,
        "error_code": None if result["ok"] else "code_error",
        "seconds": 0.25,
        "parent": None,
        "turn": 1,
    }


def plain(widget: Widget) -> str:
    return widget.render().plain  # type: ignore[union-attr]


def laid_out(trace: CallTrace) -> bool:
    """Every call's view mounted and placed on the screen (a view gets its region at the layout
    after its mount)."""
    views = [trace.view(call_id) for call_id in trace.call_ids]
    return all(view is not None and view.is_mounted and view.region.width > 0 for view in views)


def fits(view: CallView) -> bool:
    """The view's height is that of what it renders now, wrapped: laid out since it last folded or expanded."""
    return view.is_mounted and view.size.height == len(view.render().wrap(view.app.console, view.size.width))  # type: ignore[union-attr]


# -- render helpers ------------------------------------------------------------------------------


def test_render_helpers():
    assert duration(0.0004) == "0.4 ms" and duration(0.003) == "3 ms" and duration(1.23) == "1.2 s"
    assert duration(125) == "2 m 05 s" and duration(None) == ""
    assert short_json({"a": "x" * 50}, 20) == '{"a": "xxxxxxxxxxxx…' and len(short_json({"a": "x" * 50}, 20)) == 20
    assert short_json([1, 2], 20) == "[1, 2]"
    folded = json_text(list(range(40)), max_lines=12)
    assert folded.plain.splitlines()[:2] == ["[", "  0,"]
    assert folded.plain.splitlines()[-1] == "… 30 more lines" and len(folded.plain.splitlines()) == 13
    assert "more line" not in json_text(list(range(40))).plain
    assert any(span.style for span in json_text({"a": 1}).spans)  # highlighted


# -- CallTrace -----------------------------------------------------------------------------------


async def test_trace_adds_calls_and_nests_children_after_the_block_arrives():
    """Trial.history order: a block's children first, then the block."""
    app = host_app(lambda: CallTrace(id="trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        trace = app.screen.query_one(CallTrace)
        trace.add_call(call(1))
        trace.add_call(call(1, "get_song", parent="call-2"))
        await until_settled(pilot, lambda: laid_out(trace), what="the calls laid out")
        placeholder = trace.view("call-2")
        assert placeholder is not None and placeholder.entry is None
        assert "running exec_code…" in plain(placeholder)
        trace.add_call(call(2, "get_song", parent="call-2", error=("not_found", "No song 999.")))
        trace.add_call(block(2))
        trace.add_call(call(3))
        await until_settled(pilot, lambda: laid_out(trace), what="the calls laid out")
        assert trace.call_ids == ["call-1", "call-2.1", "call-2", "call-2.2", "call-3"]
        top = list(trace.children)
        assert [type(w) for w in top] == [CallView, CallGroup, CallView]
        group = top[1]
        assert isinstance(group, CallGroup) and group.view is placeholder and placeholder.entry is not None
        assert group.children_box is not None
        assert [v.call_id for v in group.children_box.query(CallView)] == ["call-2.1", "call-2.2"]
        block_text = plain(placeholder)
        assert "exec_code" in block_text and "songs = search_songs(query='x')" in block_text
        assert "stdout\n2" in block_text and "[1, 2]" in block_text and "2 tool calls" in block_text
        # Children sit to the right of the block (indented).
        child = trace.view("call-2.1")
        assert child is not None and child.region.x > placeholder.region.x


async def test_trace_nests_children_that_arrive_after_their_block():
    app = host_app(lambda: CallTrace(id="trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        trace = app.screen.query_one(CallTrace)
        trace.add_call(block(1))
        # the block's group composed (its children box made) before the children come
        await until_settled(pilot, lambda: laid_out(trace), what="the block laid out")
        trace.add_call(call(1, "get_song", parent="call-1"))
        trace.add_call(call(2, "get_song", parent="call-1"))
        await until_settled(pilot, lambda: laid_out(trace), what="the children laid out")
        group = trace.query_one(CallGroup)
        assert group.children_box is not None
        assert [v.call_id for v in group.children_box.query(CallView)] == ["call-1.1", "call-1.2"]
        assert len(trace.query(CallGroup)) == 1  # no placeholder made for a block already shown


async def test_set_calls_batches_both_orders_and_clear_calls_empties():
    app = host_app(lambda: CallTrace(id="trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        trace = app.screen.query_one(CallTrace)
        trace.add_call(call(9))
        history = [call(1), call(1, "get_song", parent="call-2"), block(2), call(3), block(4), call(1, "get_song", parent="call-4")]
        trace.set_calls(history)
        await until_settled(pilot, lambda: len(trace.query(CallView)) == 6 and laid_out(trace), what="the calls replaced")
        assert trace.call_ids == ["call-1", "call-2.1", "call-2", "call-3", "call-4", "call-4.1"]
        groups = list(trace.query(CallGroup))
        assert len(groups) == 2
        for group, child in zip(groups, ["call-2.1", "call-4.1"], strict=True):
            assert group.children_box is not None
            assert [v.call_id for v in group.children_box.query(CallView)] == [child]
        assert len(trace.query(CallView)) == 6
        trace.clear_calls()
        await until_settled(pilot, lambda: len(trace.query(CallView)) == 0, what="the calls removed")
        assert trace.call_ids == [] and len(trace.query(CallView)) == 0


async def test_long_result_is_folded_and_enter_expands_it_and_selects_the_call():
    long_result = {"songs": [{"id": i, "title": f"Song {i}"} for i in range(30)]}
    app = host_app(lambda: CallTrace(id="trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        trace = app.screen.query_one(CallTrace)
        entry = call(1, result=long_result, args={"query": "moon", "limit": 30})
        trace.add_call(entry)
        view = trace.view("call-1")
        assert view is not None
        await until_settled(pilot, lambda: laid_out(trace) and fits(view), what="the call laid out")
        assert view.expanded  # the newest call is shown expanded
        trace.add_call(call(2))  # a newer call folds it back
        await until_settled(pilot, lambda: laid_out(trace) and fits(view), what="the call folded and laid out")
        assert not view.expanded and trace.view("call-2").expanded  # type: ignore[union-attr]
        folded = plain(view)
        assert "more lines" in folded and '"title": "Song 29"' not in folded
        assert len(folded.splitlines()) == 1 + FOLD_LINES + 1  # title, 12 lines, the marker
        assert 'search_songs  {"query": "moon", "limit": 30}' in folded  # one-line arguments
        height_folded = view.size.height
        view.focus()
        await pilot.press("enter")
        await until_settled(pilot, lambda: app.screen.selected != [] and fits(view), what="the call expanded and selected")  # type: ignore[attr-defined]
        assert view.expanded
        expanded = plain(view)
        assert "more lines" not in expanded and '"title": "Song 29"' in expanded
        assert 'args {\n  "query": "moon",\n  "limit": 30\n}' in expanded  # full arguments when expanded
        assert view.size.height > height_folded
        assert app.screen.selected == [entry]  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until_settled(pilot, lambda: len(app.screen.selected) == 2, what="the call folded and selected")  # type: ignore[attr-defined]
        assert not view.expanded and "more lines" in plain(view)
        # A click toggles and selects too.
        await pilot.click(view)
        await until_settled(pilot, lambda: len(app.screen.selected) == 3, what="the click's selection")  # type: ignore[attr-defined]
        assert view.expanded and len(app.screen.selected) == 3  # type: ignore[attr-defined]


async def test_error_call_shows_its_code_and_message():
    app = host_app(lambda: CallTrace(id="trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        trace = app.screen.query_one(CallTrace)
        trace.add_call(call(1, "like_comment", args={"comment_id": 999}, error=("not_found", "No comment 999.")))
        trace.add_call(call(2))
        failed = {"ok": False, "stdout": "", "value": None, "error": "Traceback:\nNameError: name 'x' is not defined", "tool_calls": 0}
        trace.add_call(block(3, code="x", **failed))
        await until_settled(pilot, lambda: laid_out(trace), what="the calls laid out")
        bad, good, bad_block = (trace.view(i) for i in ("call-1", "call-2", "call-3"))
        assert bad is not None and good is not None and bad_block is not None
        text = plain(bad)
        assert "✗ like_comment" in text and "not_found: No comment 999." in text
        assert "✓ search_songs" in plain(good)
        # The error is painted in the theme's error colour.
        error_colour = app.theme_variables["error"].lower()
        styles = [str(span.style) for span in bad.render().spans]  # type: ignore[union-attr]
        assert any(error_colour in style for style in styles)
        assert "✗ exec_code" in plain(bad_block) and "NameError: name 'x' is not defined" in plain(bad_block)


async def test_mark_highlights_a_call_and_scrolls_it_into_view_with_300_calls():
    app = host_app(lambda: CallTrace(id="trace"))
    async with app.run_test(size=(120, 30)) as pilot:
        trace = app.screen.query_one(CallTrace)
        for n in range(1, 301):
            trace.add_call(call(n))
        await until_settled(pilot, lambda: laid_out(trace), what="the calls laid out")
        assert len(trace.call_ids) == 300
        trace.mark("call-290")
        marked = trace.view("call-290")
        assert marked is not None
        # the mark scrolls the call into view after the next refresh
        await until_settled(pilot, lambda: trace.region.contains_region(marked.region), what="call-290 scrolled into view")
        assert marked.has_class("-marked")
        assert trace.scroll_y > 0
        assert trace.region.contains_region(marked.region)  # on screen
        trace.mark("call-2")
        first = trace.view("call-2")
        assert first is not None
        await until_settled(pilot, lambda: trace.region.contains_region(first.region), what="call-2 scrolled into view")
        assert not marked.has_class("-marked") and first.has_class("-marked")
        trace.mark(None)
        assert not any(v.has_class("-marked") for v in trace.query(CallView))


# -- DiffView ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def partial_trial(music_world):
    """music-0013 (follow six artists, make a playlist private) done partly and wrongly: four of the
    six artists followed, one artist too many (the first one the actor can follow: artist 2), and the
    playlist renamed instead of made private."""
    from ebench.sessions.trial import Trial
    from ebench.tasks.spec import load_task
    from ebench.tasks.suite import find_task

    path = find_task("music-0013")
    assert path is not None
    task = load_task(path)
    trial = Trial(task, solver={"name": "test"})
    try:
        for artist in (91, 143, 158, 231):
            assert trial.call("follow_artist", {"artist_id": artist}).ok
        extra = next(a for a in range(1, 400) if trial.call("follow_artist", {"artist_id": a}).ok)
        assert extra not in (294, 319)
        assert trial.call("update_playlist", {"playlist_id": 147, "name": "Party Starters!"}).ok
        actual = trial.diff()
        yield task, actual, explain(task.expected_diff, actual, trial.domain.schema)
    finally:
        trial.close()


def test_diff_lines_of_a_partial_wrong_trial(partial_trial):
    _task, actual, result = partial_trial
    lines = diff_lines(result, actual, blind=False)
    kinds = [kind for kind, _ in lines]
    assert set(kinds) <= {"header", "matched", "missing", "unexpected", "wrong", "actual", "note"}
    assert lines[0] == (
        "header",
        f"✓ {len(result.matched)} matched  − {len(result.missing)} missing  "
        f"+ {len(result.unexpected)} unexpected  ≠ {len(result.wrong)} wrong",
    )
    assert lines[1] == ("header", "not yet")
    assert kinds.count("matched") == len(result.matched) == 8  # four follows: artist update + follow row each
    # The follow of 294 is paired with the extra follow (same user, same time): a wrong artist_id.
    assert kinds.count("missing") == len(result.missing) == 3
    assert kinds.count("unexpected") == len(result.unexpected) == 1
    assert kinds.count("wrong") == len(result.wrong) == 3
    texts = [text for _, text in lines]
    # A row is named by its other key columns, never by the value it got wrong.
    assert "≠ insert followed_artists (user_id=39): artist_id expected 294, got 2" in texts
    assert any(t.startswith("≠ update playlists (id=147): is_public expected 0, got 1") for t in texts)
    assert '≠ update playlists (id=147): name expected "Party Starters", got "Party Starters!" (was "Party Starters")' in texts
    assert "− update artists id=294: follower_count: 3 → 4" in texts
    assert '− insert followed_artists user_id=39 artist_id=319: followed_at="2026-10-15 20:30:00"' in texts
    assert "✓ update artists id=91: follower_count: 3 → 4" in texts
    assert "+ update artists id=2: follower_count: 1 → 2" in texts
    # Sections in order: wrong, missing, unexpected, matched.
    headers = [text.split(" (")[0] for kind, text in lines[2:] if kind == "header"]
    assert headers == ["Wrong values", "Missing changes", "Unexpected changes", "Matched changes"]


def test_diff_lines_of_a_pass_and_of_nothing_to_compare(partial_trial):
    task, _actual, _result = partial_trial
    from ebench.engine.domain_registry import get_domain

    schema = get_domain(task.domain).schema
    passed = explain(task.expected_diff, task.expected_diff, schema)
    lines = diff_lines(passed, task.expected_diff, blind=False)
    assert lines[1] == ("header", "PASS")
    assert {kind for kind, _ in lines[2:]} == {"header", "matched"}
    free = diff_lines(None, task.expected_diff, blind=False)
    assert [kind for kind, _ in free[:2]] == ["header", "note"] and {k for k, _ in free[2:]} == {"actual"}


async def test_diff_view_shows_counts_and_lines(partial_trial):
    _task, actual, result = partial_trial
    app = host_app(lambda: DiffView(id="diff"))
    async with app.run_test(size=(140, 40)) as pilot:
        view = app.screen.query_one(DiffView)
        view.show(result, actual)
        await until_settled(pilot, what="the diff shown")
        assert view.counts == {"matched": 8, "missing": 3, "unexpected": 1, "wrong": 3, "actual": len(actual)}
        shown = view.text.plain
        assert shown.startswith("✓ 8 matched  − 3 missing  + 1 unexpected  ≠ 3 wrong")
        assert "Missing changes (3)" in shown and "not yet" in shown


async def test_blind_diff_view_hides_the_expected_side(partial_trial):
    _task, actual, result = partial_trial
    app = host_app(lambda: DiffView(id="diff"))
    async with app.run_test(size=(140, 40)) as pilot:
        view = app.screen.query_one(DiffView)
        view.show(result, actual, blind=True)
        await until_settled(pilot, what="the diff shown")
        counts = actual.counts()
        assert view.counts == {"actual": len(actual), **counts}
        assert not {"matched", "missing", "unexpected", "wrong"} & set(view.counts)
        shown = view.text.plain
        lowered = shown.lower()
        for word in ("matched", "missing", "unexpected", "wrong", "expected 0", "pass", "not yet", "≠", "✓"):
            assert word not in lowered.replace(BLIND_NOTE, ""), word
        assert BLIND_NOTE in shown
        assert f"{len(actual)} changes made:  {counts['insert']} insert  {counts['update']} update" in shown
        kinds = [kind for kind, _ in view.lines]
        assert set(kinds) == {"header", "note", "actual"} and kinds.count("actual") == len(actual)
        assert "• update playlists id=147: name: " in shown  # the trial's own changes are all there


def test_a_song_added_in_place_of_another_is_named_by_its_playlist_not_by_the_wrong_song(music_world):
    """music-0005: a playlist of ten songs, one of them the wrong song. The row is the playlist's
    entry; the song it should have had is what is wrong, not what names it."""
    from ebench.sessions.trial import Trial
    from ebench.tasks.spec import load_task
    from ebench.tasks.suite import find_task

    path = find_task("music-0005")
    assert path is not None
    task = load_task(path)
    trial = Trial(task, solver={"name": "test"})
    try:
        assert trial.call("save_album", {"album_id": 483}).ok
        playlist = trial.call("create_playlist", {"name": "Night Shift", "is_public": False}).value["playlist_id"]
        for song in (2570, 1, *range(2572, 2580)):  # song 1 instead of 2571
            assert trial.call("add_song_to_playlist", {"playlist_id": playlist, "song_id": song}).ok
        actual = trial.diff()
        result = explain(task.expected_diff, actual, trial.domain.schema)
    finally:
        trial.close()
    wrong = [text for kind, text in diff_lines(result, actual, blind=False) if kind == "wrong"]
    assert f"≠ insert playlist_songs (playlist_id={playlist}): song_id expected 2571, got 1" in wrong


def saved_albums(n: int) -> Grade:
    """n albums one user should have saved, none saved: lines alike up to the album."""
    missing = [
        RowChange(
            "saved_albums",
            "insert",
            {"user_id": 11, "album_id": 500 + i},
            new={"user_id": 11, "album_id": 500 + i, "saved_at": "2026-10-15 20:30:00"},
        )
        for i in range(n)
    ]
    return Grade(False, n, 0, 0, missing=missing)


def painted(view: DiffView) -> list[str]:
    return ["".join(segment.text for segment in view.render_line(y)).rstrip() for y in range(view.scrollable_content_region.height)]


async def test_cut_lines_end_in_an_ellipsis_differ_within_the_width_and_enter_wraps_them():
    grade = saved_albums(7)
    app = host_app(lambda: DiffView(id="diff"))
    async with app.run_test(size=(40, 24)) as pilot:
        view = app.screen.query_one(DiffView)
        view.show(grade, Diff([]))
        view.focus()
        await until_settled(pilot, lambda: view.has_focus, what="the diff focused")
        width = view.scrollable_content_region.width
        rows = [row for row in painted(view) if row.startswith("−")]
        assert len(rows) == 7 and all(row.endswith("…") and cell_len(row) == width for row in rows)
        assert rows[0].startswith("− insert saved_albums album_id=500 ")  # the column that varies comes first
        assert len(set(rows)) == 7  # they differ within the width
        await pilot.press("enter")
        assert view.wrap and len(view.rows) > len(view.lines)
        shown = painted(view)
        assert not any(row.endswith("…") for row in shown)
        first = next(i for i, row in enumerate(shown) if row.startswith("−"))
        rest = takewhile(lambda row: row.startswith("  "), shown[first + 1 :])
        assert shown[first] + "".join(row.removeprefix("  ") for row in rest) == next(t for k, t in view.lines if k == "missing")
        await pilot.press("enter")
        assert not view.wrap and view.rows == view.lines


def many_changes(n: int) -> tuple[Grade, Diff]:
    """A fixed grade of n changed rows over every section (no world needed)."""
    inserts = [
        RowChange(
            "followed_artists",
            "insert",
            {"user_id": 7, "artist_id": i},
            new={"user_id": 7, "artist_id": i, "followed_at": "2026-10-15 20:30:00"},
        )
        for i in range(n)
    ]
    updates = [RowChange("artists", "update", {"id": i}, old={"follower_count": i}, new={"follower_count": i + 1}) for i in range(n)]
    deleted = RowChange("playlist_songs", "delete", {"playlist_id": 3, "song_id": 4}, old={"playlist_id": 3, "song_id": 4, "position": 2})
    wrong = WrongValue("playlists", {"id": 5}, "name", "Road trip", "Raod trip", old="Old name")
    half = n // 2
    unexpected = [*updates[: n - half], deleted]
    actual = Diff([*inserts[:half], *unexpected])
    grade = Grade(False, n, len(actual), half, missing=inserts[half:], unexpected=unexpected, wrong=[wrong], matched=inserts[:half])
    return grade, actual


async def test_a_250_row_diff_renders(partial_trial):
    grade, actual = many_changes(250)
    app = host_app(lambda: DiffView(id="diff"))
    async with app.run_test(size=(140, 40)) as pilot:
        view = app.screen.query_one(DiffView)
        view.show(grade, actual)
        await until_settled(pilot, what="the diff shown")
        assert len(view.lines) == 2 + 4 + 125 + 125 + 126 + 1  # headers, sections, every change
        assert view.virtual_size.height == len(view.lines)
        view.scroll_end(animate=False)
        await until_settled(pilot, lambda: view.scroll_y > 0, what="the scroll to the end")
        assert view.scroll_y > 0
        view.show(grade, actual, blind=True)
        await until_settled(pilot, what="the blind diff shown")
        assert view.counts["actual"] == len(actual) == 251


# -- CodeEditor ----------------------------------------------------------------------------------


async def test_code_editor_runs_typed_code_with_ctrl_r_and_shows_output():
    app = host_app(lambda: CodeEditor(id="code"))
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one(CodeEditor)
        area = editor.query_one(TextArea)
        area.focus()
        await pilot.press(*"print(1)")
        await pilot.press("ctrl+r")
        await until_settled(pilot, lambda: app.screen.runs != [], what="the run")  # type: ignore[attr-defined]
        assert app.screen.runs == ["print(1)"]  # type: ignore[attr-defined]
        button = editor.query_one("#code-run", Button)
        assert editor.running and button.disabled
        await pilot.press("ctrl+r")  # a second run while the first is running is refused
        await until_settled(pilot, what="the second ctrl+r handled")
        assert app.screen.runs == ["print(1)"]  # type: ignore[attr-defined]
        editor.show_output(True, {"ok": True, "stdout": "1\n", "value": "{'a': [1, 2]}", "tool_calls": 3})
        await until_settled(pilot, what="the output shown")
        assert not editor.running and not button.disabled
        text = editor.output_text
        assert text.startswith("✓ ok") and "3 tool calls" in text and "stdout\n1" in text and "{'a': [1, 2]}" in text
        editor.code = "x = 1\nx"
        await pilot.click("#code-run")
        await until_settled(pilot, lambda: len(app.screen.runs) == 2, what="the second run")  # type: ignore[attr-defined]
        assert app.screen.runs[-1] == "x = 1\nx" and editor.code == "x = 1\nx"  # type: ignore[attr-defined]


async def test_code_editor_shows_errors_limits_and_refusals_in_the_error_colour():
    app = host_app(lambda: CodeEditor(id="code"))
    async with app.run_test(size=(120, 40)) as pilot:
        editor = app.screen.query_one(CodeEditor)
        editor.running = True
        await until_settled(pilot, what="the running state shown")
        assert editor.query_one("#code-run", Button).disabled and editor.has_class("-running")
        editor.show_output(
            False,
            {
                "ok": False,
                "stdout": "partial\n",
                "value": None,
                "error": "Traceback:\nZeroDivisionError: division by zero",
                "limit": "time",
                "tool_calls": 1,
            },
        )
        await until_settled(pilot, what="the output shown")
        text = editor.output_text
        assert text.startswith("✗ failed") and "partial" in text and "ZeroDivisionError" in text
        assert "limit reached: time" in text and "1 tool call" in text
        body = editor.query_one("#code-output", Static).content
        error_colour = app.theme_variables["error"].lower()
        assert any(error_colour in str(span.style) for span in body.spans)  # type: ignore[union-attr]
        editor.show_output(False, {"error": {"code": "unknown_tool", "message": "exec_code is only available in code mode."}})
        assert "unknown_tool: exec_code is only available in code mode." in editor.output_text


# -- snapshots -----------------------------------------------------------------------------------


def test_snapshot_diff_view(snap_compare):
    grade, actual = many_changes(8)
    app = host_app(lambda: DiffView(id="diff"))

    async def show(pilot):
        app.screen.query_one(DiffView).show(grade, actual)
        await until_settled(pilot, what="the diff shown")

    assert snap_compare(app, terminal_size=(100, 24), run_before=show)


def test_snapshot_diff_view_blind(snap_compare):
    grade, actual = many_changes(8)
    app = host_app(lambda: DiffView(id="diff"))

    async def show(pilot):
        app.screen.query_one(DiffView).show(grade, actual, blind=True)
        await until_settled(pilot, what="the diff shown")

    assert snap_compare(app, terminal_size=(100, 24), run_before=show)
