"""Issue 16: the trace follows the newest call (unless the person scrolled up to read), and an exact
tool name ranks first in the catalog's search."""

from __future__ import annotations

from typing import Any

from appcheck import until_settled
from textual.app import App, ComposeResult
from textual.widgets import Input

from ebench.app.widgets.catalog import ToolCatalog
from ebench.app.widgets.trace import CallTrace
from ebench.engine.domain_registry import get_domain


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


def laid_out(trace: CallTrace, call_id: str) -> bool:
    """The call's view mounted and placed (in view or not): it gets its region at the layout after its mount."""
    view = trace.view(call_id)
    return view is not None and view.is_mounted and view.region.height > 0


async def test_the_trace_follows_new_calls_until_the_person_scrolls_up():
    app = TraceHost()
    async with app.run_test(size=(100, 20)) as pilot:
        trace = app.query_one(CallTrace)
        for n in range(1, 41):
            trace.add_call(call(n))
            await until_settled(pilot)
            await until_settled(pilot, lambda: newest_visible(trace), what=f"call-{n} in view")  # noqa: B023 (awaited here)
        # its result is laid out a frame after the call: the trace follows again
        await until_settled(pilot, lambda: trace.scroll_y == trace.max_scroll_y and newest_visible(trace), what="the newest call followed")
        assert trace.max_scroll_y > 0
        assert trace.scroll_y == trace.max_scroll_y and newest_visible(trace)
        newest = trace.view("call-40")
        assert newest is not None and newest.expanded  # the newest result is expanded
        assert not trace.view("call-39").expanded  # type: ignore[union-attr]  # the previous one folded back
        # the person scrolls up to read: new calls leave the view where it is
        trace.scroll_to(y=0, animate=False, immediate=True)
        await until_settled(pilot, lambda: trace.scroll_y == 0, what="the scroll to the top")
        assert not trace.following
        trace.add_call(call(41))
        await until_settled(pilot)
        await until_settled(pilot, lambda: laid_out(trace, "call-41"), what="call-41 laid out")
        assert trace.scroll_y == 0 and not newest_visible(trace)
        # back at the bottom, following resumes
        trace.scroll_end(animate=False, immediate=True)
        await until_settled(pilot, lambda: trace.following, what="following again")
        assert trace.following
        trace.add_call(call(42))
        await until_settled(pilot)
        await until_settled(pilot, lambda: trace.scroll_y == trace.max_scroll_y and newest_visible(trace), what="call-42 followed")
        assert trace.scroll_y == trace.max_scroll_y and newest_visible(trace)


class CatalogHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ToolCatalog(list(get_domain("music").tools))


async def test_an_exact_tool_name_ranks_first_then_prefixes():
    app = CatalogHost()
    async with app.run_test(size=(160, 48)) as pilot:
        catalog = app.query_one(ToolCatalog)
        await until_settled(pilot, lambda: catalog.highlighted_name is not None, what="the catalog filled")
        names = [t.name for t in get_domain("music").tools]
        assert "save_album" in names and "list_saved_albums" in names
        catalog.query_one("#catalog-search", Input).value = "save_album"
        await until_settled(pilot, lambda: catalog.search_text == "save_album", what="the search")
        assert catalog.shown[0] == "save_album"
        assert catalog.highlighted_name == "save_album"
        catalog.query_one("#catalog-search", Input).value = "save"
        await until_settled(pilot, lambda: catalog.search_text == "save", what="the search")
        prefixed = [n for n in catalog.shown if n.startswith("save")]
        assert prefixed and catalog.shown[: len(prefixed)] == prefixed
