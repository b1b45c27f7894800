"""Issue 33: code mode shows its output. After a run whose output does not fit, the output takes
most of the room (the verdict first); F7 switches the room (and the focus) between output and
editor, alt+up / alt+down move the split; esc in the output goes back to the code. Records a
block returns are a table in the result viewer (sort, search, v, i), from the output (`v`) or
the trace."""

from __future__ import annotations

import pytest
from appcheck import forget_unfinished, run_call, until_settled, until_solve_ready
from textual.widgets import DataTable, TextArea

from ebench.app.app import EBenchApp
from ebench.app.screens.result_view import ResultScreen
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets import trace as trace_module
from ebench.app.widgets.code_editor import OUTPUT_LARGE, OUTPUT_SMALL, CodeEditor
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.result_table import block_value
from ebench.tasks.suite import load_suite

TASK = "moba-0024"


@pytest.fixture(scope="module")
def task():
    return load_suite(ids=[TASK]).tasks[0]


@pytest.fixture(autouse=True)
def no_attempt_left(task):
    forget_unfinished(task)


async def ready(pilot) -> SolveScreen:
    return await until_solve_ready(pilot)


async def run_block(pilot, screen: SolveScreen, code: str) -> CodeEditor:
    editor = screen.query_one(CodeEditor)
    blocks = screen.trial.exec_blocks
    editor.code = code
    editor.query_one(TextArea).focus()
    await pilot.press("ctrl+r")
    await until_settled(pilot, lambda: screen.trial.exec_blocks == blocks + 1 and not screen.busy and not editor.running)
    return editor


def test_a_blocks_records_are_read_back_from_their_repr_never_evaluated():
    assert block_value({"value": "[{'id': 1, 'name': 'a'}, {'id': 2, 'name': None}]"}) == [{"id": 1, "name": "a"}, {"id": 2, "name": None}]
    assert block_value({"value": "{'room_id': 7, 'mode': 'custom'}"}) == {"room_id": 7, "mode": "custom"}
    assert block_value({"value": "42"}) is None and block_value({"value": "'text'"}) is None
    assert block_value({"value": "[datetime.date(2026, 1, 1)]"}) is None  # not a literal
    assert block_value({"value": "__import__('os').system('true')"}) is None
    assert block_value({"stdout": "x"}) is None


async def test_a_long_output_gets_the_room_and_f7_switches_it(task):
    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot)
        editor = screen.query_one(CodeEditor)
        code_input, output = editor.query_one("#code-input"), editor.query_one("#code-output-scroll")
        assert editor.output_share == OUTPUT_SMALL and code_input.region.height > output.region.height
        await run_block(pilot, screen, "for i in range(80):\n    print('line', i)\n")
        await until_settled(pilot, lambda: editor.output_share == OUTPUT_LARGE)
        await until_settled(pilot, lambda: output.region.height > code_input.region.height, what="the output given the room")
        assert output.region.height > code_input.region.height and output.scroll_y == 0  # the verdict first
        assert editor.output_text.startswith("✓ ok")
        await pilot.press("f7")  # from the editor: into the output, to scroll it
        await until_settled(pilot, lambda: screen.focused is output)
        await pilot.press("pagedown")
        await until_settled(pilot, lambda: output.scroll_y > 0)
        await pilot.press("alt+up")
        assert editor.output_share == OUTPUT_LARGE + 1
        await pilot.press("escape")  # back to the code, not out of the screen
        await until_settled(pilot, lambda: isinstance(screen.focused, TextArea))
        assert pilot.app.screen is screen
        await pilot.press("f7")
        await until_settled(pilot, lambda: screen.focused is output)
        await pilot.press("f7")  # again: the editor gets the room back
        await until_settled(pilot, lambda: isinstance(screen.focused, TextArea) and editor.output_share == OUTPUT_SMALL)
        await until_settled(pilot, lambda: code_input.region.height > output.region.height, what="the room back to the code")
        assert code_input.region.height > output.region.height


async def test_records_a_block_returns_are_a_table_with_sort_search_and_take(task, monkeypatch):
    monkeypatch.setattr(trace_module, "FOLD_LINES", 12)
    async with EBenchApp(lambda: SolveScreen(task, code=True)).run_test(size=(160, 45)) as pilot:
        screen = await ready(pilot)
        await run_call(pilot, screen, "get_my_profile", {})
        editor = await run_block(pilot, screen, "friends = list_friends()\nfriends['items']\n")
        block = screen.trial.history[-1]
        expected = block_value(block.result)
        assert isinstance(expected, list) and len(expected) > 1 and all(isinstance(r, dict) for r in expected)
        assert f"{len(expected)} records in the value" in editor.output_text.splitlines()[0]  # on the verdict line
        await pilot.press("f7")  # into the output
        await until_settled(pilot, lambda: screen.focused is editor.query_one("#code-output-scroll"))
        await pilot.press("v")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResultScreen))
        viewer = pilot.app.screen
        assert viewer.call.id == block.id and viewer.table is not None and viewer.table.kind == "records"
        assert len(viewer.table) == len(expected) and viewer.table.columns == list(expected[0])
        status = str(viewer.query_one("#result-status").render())
        assert f"{len(expected)} records in the block's value" in status
        table = viewer.query_one("#result-table", DataTable)
        assert table.row_count == len(expected)
        await pilot.press("s")  # sorts by the column under the cursor (an id column)
        column = viewer.table.columns[viewer.sort_column]
        values = [viewer.table.values[row][viewer.sort_column] for row in viewer.shown]
        assert column.endswith("id") and values == sorted(values)
        await pilot.press("escape")
        await until_settled(pilot, lambda: pilot.app.screen is screen)
        # from the trace too, and a value taken into the composer's field
        composer = screen.query_one(CallComposer)
        screen.query_one("ToolCatalog").select("invite_to_room", notify=True)
        await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == "invite_to_room")
        composer.field("player_id").focus()
        await until_settled(pilot, lambda: screen.focused is composer.field("player_id"), what="player_id focused")
        await pilot.press("f4", "v")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResultScreen))
        viewer = pilot.app.screen
        wanted = viewer.chosen_value()
        await pilot.press("i")
        await until_settled(pilot, lambda: pilot.app.screen is screen)
        assert composer.values["player_id"] == str(wanted)


SIZES = {"80x24": (80, 24), "160x45": (160, 45)}


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_of_the_output_given_the_room_after_a_run(snap_compare, task, monkeypatch, size):
    monkeypatch.setattr(trace_module, "duration", lambda seconds: "1 ms")  # the only thing that varies

    async def run_before(pilot) -> None:
        screen = await ready(pilot)
        editor = await run_block(pilot, screen, "friends = list_friends()\nfor f in friends['items']:\n    print(f)\nfriends['items']\n")
        await until_settled(pilot, lambda: editor.output_share == OUTPUT_LARGE)
        screen.set_focus(None)  # a blinking cursor would be caught on or off
        await until_settled(pilot, lambda: screen.focused is None, what="no focus")

    assert snap_compare(EBenchApp(lambda: SolveScreen(task, code=True)), terminal_size=SIZES[size], run_before=run_before)
