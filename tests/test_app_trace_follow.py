"""Issue 16: the trace follows the newest call (unless the person scrolled up to read), and an exact
tool name ranks first in the catalog's search."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Input

from ebench.app.widgets.catalog import ToolCatalog
from ebench.app.widgets.trace import CallTrace
from ebench.engine.domain_registry import get_domain
from tests.appcheck import until_settled


def call(n: int) -> dict[str, Any]:
    return {
        "id": f"call-{n}",
        "tool": "search_songs",
        "args": {"query": f"q{n}"},
        "ok": True,
        "result": {"count": n},
        "seconds": 0.01,
    }


class TraceHost(App[None]):
    def compose(self) -> ComposeResult:
        yield CallTrace(id="trace")


def newest_visible(trace: CallTrace) -> bool:
    newest = trace.view(trace.call_ids[-1])
    return newest is not None and trace.region.contains_region(newest.region)


async def test_the_trace_follows_new_calls_until_the_person_scrolls_up():
    app = TraceHost()
    async with app.run_test(size=(100, 20)) as pilot:
        trace = app.query_one(CallTrace)
        for n in range(1, 41):
            trace.add_call(call(n))
            await until_settled(pilot)
            await pilot.pause()
        assert trace.max_scroll_y > 0
        assert trace.scroll_y == trace.max_scroll_y and newest_visible(trace)
        newest = trace.view("call-40")
        assert newest is not None and newest.expanded  # the newest result is expanded
        assert not trace.view("call-39").expanded  # type: ignore[union-attr]  # the previous one folded back
        # the person scrolls up to read: new calls leave the view where it is
        trace.scroll_to(y=0, animate=False, immediate=True)
        await pilot.pause()
        assert not trace.following
        trace.add_call(call(41))
        await until_settled(pilot)
        await pilot.pause()
        assert trace.scroll_y == 0 and not newest_visible(trace)
        # back at the bottom, following resumes
        trace.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert trace.following
        trace.add_call(call(42))
        await until_settled(pilot)
        await pilot.pause()
        assert trace.scroll_y == trace.max_scroll_y and newest_visible(trace)


class CatalogHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolCatalog(list(get_domain("music").tools))


async def test_an_exact_tool_name_ranks_first_then_prefixes():
    app = CatalogHost()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        catalog = app.query_one(ToolCatalog)
        names = [t.name for t in get_domain("music").tools]
        assert "save_album" in names and "list_saved_albums" in names
        catalog.query_one("#catalog-search", Input).value = "save_album"
        await until_settled(pilot)
        await pilot.pause()
        assert catalog.shown[0] == "save_album"
        assert catalog.highlighted_name == "save_album"
        catalog.query_one("#catalog-search", Input).value = "save"
        await until_settled(pilot)
        await pilot.pause()
        prefixed = [n for n in catalog.shown if n.startswith("save")]
        assert prefixed and catalog.shown[: len(prefixed)] == prefixed
