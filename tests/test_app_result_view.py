"""The result viewer: real music tool results (a listener's 62 favourites, one song, a refused call)
as a table that sorts, searches, shows a cell in full, copies a cell and hands it back to the
opener; JSON for what is no table; the whole result in $PAGER. The table helpers are pure and
tested without an app; the trace's `v` that opens the viewer is tested in a small host."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from appcheck import notified, until_settled
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from ebench.app.render import to_json
from ebench.app.screens.dialogs import SortChooser
from ebench.app.screens.result_view import ResultScreen, pager_command, pager_text
from ebench.app.widgets.result_table import MISSING, Cell, cell_text, columns_of, find_records, sort_key, table_of
from ebench.app.widgets.trace import CallTrace
from ebench.sessions.events import ToolCallEvent

SIZE = (120, 40)
TARGET = 62  # the testers' tally: a listener with this many favourites


# -- real results ---------------------------------------------------------------------------------


def music_call(domain: Any, conn: Any, actor: int, tool: str, args: dict[str, Any], number: int = 1) -> ToolCallEvent:
    result = domain.tools.call(domain.env(conn, actor), tool, args)
    return ToolCallEvent(id=f"call-{number}", tool=tool, args=args, ok=result.ok, result=result.payload(), error_code=result.error_code)


@pytest.fixture()
def favourites(music, music_conn) -> ToolCallEvent:
    """Every favourite of the listener with (closest to) 62, all pages in one result."""
    actor = music_conn.execute(
        f"SELECT user_id FROM favourite_songs GROUP BY user_id ORDER BY ABS(COUNT(*) - {TARGET}), user_id LIMIT 1"
    ).fetchone()[0]
    first = music_call(music, music_conn, actor, "list_favourite_songs", {"page": 1})
    items = list(first.result["items"])
    for page in range(2, first.result["total_pages"] + 1):
        items += music_call(music, music_conn, actor, "list_favourite_songs", {"page": page}).result["items"]
    assert len(items) == first.result["total"] == TARGET
    return first.model_copy(update={"result": {**first.result, "items": items, "page_size": len(items), "total_pages": 1}})


@pytest.fixture()
def one_song(music, music_conn) -> ToolCallEvent:
    song = music_conn.execute("SELECT id FROM songs ORDER BY id LIMIT 1").fetchone()[0]
    return music_call(music, music_conn, 1, "get_song", {"song_id": song})


@pytest.fixture()
def refused(music, music_conn) -> ToolCallEvent:
    missing = music_conn.execute("SELECT MAX(id) + 1 FROM songs").fetchone()[0]
    call = music_call(music, music_conn, 1, "get_song", {"song_id": missing})
    assert not call.ok
    return call


class Host(App[None]):
    """Opens the viewer for one call and records what it was dismissed with."""

    def __init__(self, call: ToolCallEvent, *, can_take: bool = True) -> None:
        super().__init__()
        self.call = call
        self.can_take = can_take
        self.taken: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(ResultScreen(self.call, can_take=self.can_take), self.taken.append)


class SuspendingHost(Host):
    """The headless test driver cannot suspend; this host stands for a terminal that can, so the
    pager really runs (as a subprocess) while the app is 'suspended'."""

    @contextmanager
    def suspend(self) -> Iterator[None]:
        yield


async def opened(pilot: Any) -> ResultScreen:
    await until_settled(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ResultScreen)
    return screen


def column(screen: ResultScreen, name: str) -> list[Any]:
    """A column's values in the order the table shows them."""
    assert screen.table is not None
    index = screen.table.columns.index(name)
    return [screen.table.values[row][index] for row in screen.shown]


def shown_cell(screen: ResultScreen, row: int, col: int) -> str:
    return str(screen.query_one("#result-table", DataTable).get_cell_at(Coordinate(row, col)))


# -- the pure helpers ---------------------------------------------------------------------------


def test_find_records_in_each_shape_tools_return():
    records = [{"id": 1}, {"id": 2, "name": "b"}]
    assert find_records(records) == ("", records)
    assert find_records({"items": records, "total": 2}) == ("items", records)
    assert find_records({"playlist": {"id": 9}, "songs": {"items": records, "total": 2}}) == ("songs.items", records)
    assert find_records({"seasons": records[:1], "members": records}) == ("members", records)  # the longest list
    for nothing in ({"items": []}, {"error": {"code": "not_found", "message": "m"}}, "text", [1, 2], None, {"room_id": 4}):
        assert find_records(nothing) is None


def test_columns_cells_and_sort_keys():
    assert columns_of([{"b": 1, "a": 2}, {"c": 3, "a": 4}]) == ["b", "a", "c"]
    assert cell_text({"x": [1, 2]}) == '{"x": [1, 2]}'
    assert cell_text("line one\nline two") == "line one line two"
    long = "x" * 100
    assert cell_text(long, 10) == "x" * 9 + "…"
    assert cell_text(None) == "null" and cell_text(MISSING) == ""
    values = ["b", 10, None, "A", 2.5, True, {"k": 1}]
    ordered = sorted([v for v in values if v is not None], key=sort_key)
    assert ordered == [True, 2.5, 10, "A", "b", {"k": 1}]


def test_table_of_records_fields_and_nothing():
    table = table_of({"items": [{"id": 3, "tags": ["a"]}, {"id": 1, "extra": "e"}], "total": 2})
    assert table is not None and table.kind == "records" and table.columns == ["id", "tags", "extra"]
    assert table.values[1] == (1, MISSING, "e")
    assert table.order(list(range(2)), 0) == [1, 0]
    assert table.order(list(range(2)), 2) == [1, 0] and table.order(list(range(2)), 2, reverse=True) == [1, 0]  # missing last
    assert table.matching("E") == [1] and table.matching("") == [0, 1]
    assert table.next_match([0, 1], (0, 0), "e") == (1, 2)
    fields = table_of({"room_id": 12, "name": "Friday"})
    assert fields is not None and fields.kind == "fields" and fields.values == [("room_id", 12), ("name", "Friday")]
    assert fields.value(fields.taken_cell(Cell(0, 0))) == 12  # the field's value, not its name
    assert table_of({"error": {"code": "x", "message": "y"}}) is None and table_of("plain text") is None


def test_pager_command_and_text(tmp_path: Path):
    assert pager_command({"PAGER": f"{shlex.quote(sys.executable)} -c pass"}) == [sys.executable, "-c", "pass"]
    assert "not installed" in str(pager_command({"PAGER": "no-such-pager-here --flag"}))
    assert "cannot be read" in str(pager_command({"PAGER": "'unclosed"}))
    assert pager_text({"a": 1}) == '{\n  "a": 1\n}\n' and pager_text("plain") == "plain\n"


# -- the screen ----------------------------------------------------------------------------------


async def test_every_record_is_a_row_and_the_page_facts_are_shown(favourites):
    app = Host(favourites)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        table = screen.query_one("#result-table", DataTable)
        assert table.row_count == TARGET
        assert screen.table is not None and [str(c.label) for c in table.columns.values()] == screen.table.columns
        status = str(screen.query_one("#result-status", Static).render())
        assert f"{TARGET} records in items" in status and f"total {TARGET}" in status


async def test_sort_by_a_column_with_keys_and_header_clicks(favourites):
    app = Host(favourites)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.table is not None
        titles = screen.table.columns.index("title")
        table = screen.query_one("#result-table", DataTable)
        while table.cursor_column != titles:  # the cursor to the title column
            await pilot.press("right" if table.cursor_column < titles else "left")
        await pilot.press("s")  # sorts by the column under the cursor
        assert screen.sort_column == titles
        shown = column(screen, "title")
        assert shown == sorted(shown, key=str.casefold)
        assert shown_cell(screen, 0, titles) == cell_text(shown[0])
        await pilot.press("s")  # again: reversed
        assert column(screen, "title") == sorted(shown, key=str.casefold, reverse=True)
        label = str(screen.query_one("#result-table", DataTable).ordered_columns[titles].label)
        assert label == "title ▼"
        # S: the columns in a list; the one chosen sorts the table and the cursor goes to it
        await pilot.press("S")
        chooser = pilot.app.screen
        assert isinstance(chooser, SortChooser)
        await pilot.press("home", "enter")  # the first column
        await until_settled(pilot, lambda: pilot.app.screen is screen)
        assert screen.sort_column == 0 and table.cursor_column == 0
        first = column(screen, screen.table.columns[0])
        assert first == sorted(first, key=sort_key)
        table.post_message(DataTable.HeaderSelected(table, table.ordered_columns[1].key, 1, table.ordered_columns[1].label))
        await until_settled(pilot)
        plays = column(screen, screen.table.columns[1])
        assert screen.sort_column == 1 and plays == sorted(plays)


async def test_search_narrows_rows_next_match_moves_the_cursor_and_esc_unwinds(favourites):
    app = Host(favourites)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        table = screen.query_one("#result-table", DataTable)
        word = favourites.result["items"][5]["artist"].split()[0]
        expected = [
            i for i, item in enumerate(favourites.result["items"]) if any(word.casefold() in cell_text(v).casefold() for v in item.values())
        ]
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*word)
        assert table.row_count == len(expected) < TARGET and screen.shown == expected
        assert f"{len(expected)} of {TARGET} match" in str(screen.query_one("#result-status", Static).render())
        await pilot.press("enter")  # keep the filter, go to the first match
        assert app.focused is table
        cell = screen.cursor_cell()
        assert cell is not None and word.casefold() in cell_text(screen.table.value(cell)).casefold()  # type: ignore[union-attr]
        await pilot.press("n")
        assert screen.cursor_cell() != cell or len(expected) == 1
        await pilot.press("escape")  # leaves the search: every row again
        assert table.row_count == TARGET and screen.query_text == "" and app.screen is screen
        await pilot.press("escape")  # then closes, taking nothing
        await until_settled(pilot)
        assert app.screen is not screen and app.taken == [None]


async def test_use_value_hands_back_the_highlighted_id(favourites):
    app = Host(favourites)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.table is not None
        cell = screen.cursor_cell()  # the cursor starts on the first id column
        assert cell is not None and screen.table.columns[cell.column] == "song_id"
        await pilot.press("down", "down", "down", "i")
        await until_settled(pilot)
        assert app.taken == [favourites.result["items"][3]["song_id"]]


async def test_copy_puts_the_cell_on_the_clipboard_and_v_shows_it_whole(favourites):
    app = Host(favourites)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        messages = notified(app)
        assert screen.table is not None
        title, start = screen.table.columns.index("title"), screen.table.columns.index("song_id")
        await pilot.press(*["right"] * (title - start), "y")
        assert app.clipboard == favourites.result["items"][0]["title"]
        assert messages and messages[-1].startswith("Copied")
        await pilot.press("v")
        pane = screen.query_one("#result-value-text", Static)
        assert str(pane.render()) == f"title: {favourites.result['items'][0]['title']}"
        await pilot.press("down")  # the pane follows the cursor
        assert str(pane.render()) == f"title: {favourites.result['items'][1]['title']}"
        await pilot.press("escape")  # closes the pane before the screen
        assert not screen.query_one("#result-value").has_class("shown") and app.screen is screen


async def test_a_flat_record_is_a_table_of_its_fields_and_gives_the_value(one_song):
    app = Host(one_song)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.table is not None and screen.table.kind == "fields"
        assert screen.table.columns == ["field", "value"]
        assert column(screen, "field") == [str(k) for k in one_song.result]
        await pilot.press("i")  # on the field column: still the value
        await until_settled(pilot)
        assert app.taken == [next(iter(one_song.result.values()))]


async def test_a_refused_call_shows_json_and_takes_nothing(refused):
    app = Host(refused)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.json_mode and screen.table is None
        text = str(screen.query_one("#result-json-text", Static).render())
        assert "not_found" in text
        await pilot.press("i", "s")  # no cell to take, nothing to sort
        assert app.screen is screen and app.taken == []
        await pilot.press("slash", *"not_found", "enter")
        assert "1 matching line for 'not_found'" in str(screen.query_one("#result-status", Static).render())
        await pilot.press("escape", "escape")
        await until_settled(pilot)
        assert app.taken == [None]


async def test_without_a_place_to_put_it_use_value_is_not_offered(favourites):
    app = Host(favourites, can_take=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert not screen.check_action("use", ()) and screen.check_action("copy", ())
        await pilot.press("i")
        assert app.screen is screen and app.taken == []


async def test_j_switches_between_the_table_and_the_json(favourites):
    app = Host(favourites)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("j")
        assert screen.json_mode
        assert '"song_id"' in str(screen.query_one("#result-json-text", Static).render())
        await pilot.press("j")
        assert not screen.json_mode and screen.query_one("#result-table", DataTable).row_count == TARGET


async def test_a_thousand_records_show_and_sort():
    records = [{"id": i, "name": f"item {(i * 7919) % 1000:04d}", "meta": {"n": i % 3}} for i in range(1000)]
    call = ToolCallEvent(id="call-1", tool="exec_like", args={}, ok=True, result={"items": records, "total": 1000})
    app = Host(call)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.query_one("#result-table", DataTable).row_count == 1000
        await pilot.press("right", "s")  # from the id column (where the cursor starts) to the name, sorted by it
        names = column(screen, "name")
        assert names == sorted(names)
        assert shown_cell(screen, 0, 2) == '{"n": 0}'


# -- the pager -----------------------------------------------------------------------------------


def writing_pager(target: Path) -> str:
    """A $PAGER that writes what it is given to `target`."""
    script = f"import sys; open({str(target)!r}, 'w', encoding='utf-8').write(sys.stdin.read())"
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"


async def test_o_opens_the_whole_result_in_the_pager(favourites, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "paged.json"
    monkeypatch.setenv("PAGER", writing_pager(target))
    app = SuspendingHost(favourites)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot)
        await pilot.press("o")
        await until_settled(pilot)
    assert json.loads(target.read_text(encoding="utf-8")) == favourites.result
    assert target.read_text(encoding="utf-8") == to_json(favourites.result) + "\n"


async def test_the_pager_failing_is_one_line_never_a_traceback(favourites, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PAGER", writing_pager(tmp_path / "never.json"))
    app = Host(favourites)  # the headless driver: suspending is not supported
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        messages = notified(app)
        await pilot.press("o")
        monkeypatch.setenv("PAGER", "no-such-pager-here")
        await pilot.press("o")
        await until_settled(pilot)
        assert app.screen is screen
    assert len(messages) == 2 and all("\n" not in m for m in messages)
    assert "cannot hand the screen to a pager" in messages[0] and "not installed" in messages[1]
    assert not (tmp_path / "never.json").exists()


# -- the trace's key -----------------------------------------------------------------------------


async def test_v_on_a_call_in_the_trace_asks_to_view_its_result(favourites):
    class TraceHost(App[None]):
        def __init__(self) -> None:
            super().__init__()
            self.messages: list[Message] = []

        def compose(self) -> ComposeResult:
            yield CallTrace([favourites])

        def on_call_trace_view_result(self, message: CallTrace.ViewResult) -> None:
            self.messages.append(message)

        def on_call_trace_selected(self, message: CallTrace.Selected) -> None:
            self.messages.append(message)

    app = TraceHost()
    async with app.run_test(size=SIZE) as pilot:
        await until_settled(pilot)
        view = app.query_one(CallTrace).view("call-1")
        assert view is not None
        view.focus()
        await pilot.press("v")
        await until_settled(pilot)
        [message] = app.messages
        assert isinstance(message, CallTrace.ViewResult) and message.call.id == "call-1"
        assert message.entry is favourites and not view.expanded  # v opens the viewer, enter still expands


# -- snapshots -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_snapshot_result_table(snap_compare: Any, favourites: ToolCallEvent, size: tuple[int, int]):
    async def settle(pilot: Any) -> None:
        await until_settled(pilot)

    assert snap_compare(Host(favourites), terminal_size=size, run_before=settle)
