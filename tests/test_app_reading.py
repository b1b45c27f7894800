"""Issue 33: reading results. A list tool's every page fetched from the composer (each page a call
of its own) and read as one table; the replay's diff given the room its lines need, and its path
said in words; the human baseline on the run results screen, overall and per task."""

from __future__ import annotations

import pytest
from appcheck import forget_unfinished, until_settled

from ebench.app.app import EBenchApp
from ebench.app.screens.result_view import ResultScreen
from ebench.app.screens.solve import SolveScreen, page_series
from ebench.app.widgets.catalog import ToolCatalog
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.result_table import merge_pages
from ebench.sessions.record import read_session
from ebench.tasks.suite import load_suite

MUSIC = "music-0020"
SIZE = (160, 45)
ROCK_SINCE_2020 = {"genre": "Rock", "released_after": "2020-01-01"}


@pytest.fixture(scope="module")
def music():
    return load_suite(ids=[MUSIC]).tasks[0]


@pytest.fixture(autouse=True)
def no_attempt_left(music):
    forget_unfinished(music)


async def ready(pilot) -> SolveScreen:
    await until_settled(pilot, lambda: isinstance(pilot.app.screen, SolveScreen) and pilot.app.screen.trial is not None)
    screen = pilot.app.screen
    await until_settled(pilot, lambda: screen.last_diff is not None)
    return screen


def test_pages_merge_into_one_listing():
    pages = [
        {"items": [{"id": 1}, {"id": 2}], "page": 1, "total": 3, "total_pages": 2},
        {"items": [{"id": 3}], "page": 2, "total": 3, "total_pages": 2},
    ]
    assert merge_pages(pages) == {"items": [{"id": 1}, {"id": 2}, {"id": 3}], "pages": "1-2", "total": 3, "total_pages": 2}


async def test_all_pages_of_a_list_tool_are_fetched_one_call_each_and_read_as_one_table(music):
    async with EBenchApp(lambda: SolveScreen(music)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        composer = screen.query_one(CallComposer)
        screen.query_one(ToolCatalog).select("create_playlist", notify=True)
        await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == "create_playlist")
        assert "composer.all_pages" not in {b.binding.id for b in screen.active_bindings.values()}  # not a list tool
        screen.query_one(ToolCatalog).select("search_songs", notify=True)
        await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == "search_songs")
        composer.set_args(ROCK_SINCE_2020)
        await until_settled(pilot, lambda: screen.focused is not None and composer in screen.focused.ancestors)
        await pilot.press("ctrl+g")
        await until_settled(pilot, lambda: screen.trial.tool_calls > 0 and not screen.busy)
        calls = screen.trial.history
        first = calls[0].result
        assert first["total_pages"] > 2 and screen.trial.tool_calls == first["total_pages"]
        assert [call.args for call in calls] == [{**ROCK_SINCE_2020, "page": n} for n in range(1, first["total_pages"] + 1)]
        assert all(call.tool == "search_songs" and call.ok for call in calls)
        path = screen.trial.writer.path
        assert page_series(calls, calls[1]) == calls
        # v on any page: the records of every page, one table; `a` shows that call's page alone
        await pilot.press("f4")
        await pilot.press("v")
        await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResultScreen))
        viewer = pilot.app.screen
        assert viewer.all_pages and len(viewer.table) == first["total"]
        assert f"{first['total_pages']} pages of" in str(viewer.query_one("#result-title").render())
        await pilot.press("a")
        assert not viewer.all_pages and len(viewer.table) == len(calls[-1].result["items"])
        await pilot.press("a")
        assert len(viewer.table) == first["total"]
    recorded = [event for event in read_session(path).tool_calls()]
    assert len(recorded) == first["total_pages"]  # each page recorded as the call it is
