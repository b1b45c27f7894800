"""The call trace: every tool call of a trial, newest last, with the calls an exec_code block made
nested under the block.

One light widget per call (a `CallView` that renders one Rich Text, built once per state and
theme), so adding the 300th call costs what adding the first did. A block's children are recorded
before the block itself (they run while it runs): they wait under a "running exec_code…"
placeholder that becomes the block when its entry arrives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.theme import Theme
from textual.widget import Widget

from ...sessions.describe import shown_args
from ...sessions.events import BLOCK, ToolCallEvent, as_tool_call
from ...terminal import printable_text
from ..render import code_text, duration, json_text, muted_style, short_json, theme_style

# A call as the trace is handed it: its event, or that event's JSON (what a session line holds).
CallEntry = ToolCallEvent | Mapping[str, Any]
FOLD_LINES = 12  # a collapsed call shows this many lines of its result (or its block's code)
PREVIEW_WIDTH = 60  # the arguments' one-line preview


def call_number(call: ToolCallEvent) -> str:
    """ "call-12" → "12", "call-12.3" → "12.3"; other ids are shown as they are."""
    return str(call.id).removeprefix("call-")


def error_of(call: ToolCallEvent) -> tuple[str, str]:
    """A failed call's error code and message (from the payload's {"error": {...}} or a block's error)."""
    result = call.result
    code, message = call.error_code or "error", ""
    if isinstance(result, dict):
        error = result.get("error")
        if isinstance(error, dict):
            code = str(error.get("code") or code)
            message = str(error.get("message") or "")
        elif isinstance(error, str):
            message = error
    return code, message


class CallView(Widget, can_focus=True):
    """One call: a title line (number, ✓/✗, tool, arguments, duration) and its result, folded
    until expanded. Enter or a click toggles it and selects it."""

    DEFAULT_CSS = """
    CallView {
        height: auto;
        width: 1fr;
        padding: 0 1;
    }
    CallView:focus {
        background: $boost;
    }
    CallView.-marked {
        background: $primary 25%;
        border-left: thick $primary;
    }
    CallView.-pending {
        color: $text-muted;
    }
    CallView.-future {
        text-opacity: 45%;
    }
    """

    BINDINGS = [
        Binding("enter", "select", "Expand / use call", id="trace.select"),
        Binding("v", "view_result", "View result", id="trace.view"),
    ]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, entry: CallEntry | None, *, pending_id: str | None = None) -> None:
        super().__init__()
        self.entry = entry  # as handed (Selected hands it back)
        self.call = as_tool_call(entry) if entry is not None else None
        self.pending_id = pending_id  # a placeholder for the block whose children came first
        self._cache: tuple[tuple[Any, ...], Text] | None = None
        self.set_class(entry is None, "-pending")

    @property
    def call_id(self) -> str | None:
        return str(self.call.id) if self.call is not None else self.pending_id

    def set_entry(self, entry: CallEntry) -> None:
        """The placeholder's block arrived: show it."""
        self.entry = entry
        self.call = as_tool_call(entry)
        self.set_class(False, "-pending")
        self._cache = None
        self.refresh(layout=True)

    def watch_expanded(self) -> None:
        self.refresh(layout=True)

    def action_select(self) -> None:
        self.expanded = not self.expanded
        trace = next((a for a in self.ancestors if isinstance(a, CallTrace)), None)
        if trace is not None and trace._auto_expanded is self:
            trace._auto_expanded = None  # the person chose its state: a newer call leaves it alone
        if self.entry is not None:
            self.post_message(CallTrace.Selected(self.entry))

    def action_view_result(self) -> None:
        if self.entry is not None:  # a running block's placeholder has no result yet
            self.post_message(CallTrace.ViewResult(self.entry))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.focus()
        self.action_select()

    def theme_changed(self) -> None:
        self._cache = None
        self.refresh()

    def render(self) -> Text:
        theme = self.app.current_theme
        state = (self.expanded, theme.name, self.entry is None)
        if self._cache is None or self._cache[0] != state:
            # A call's arguments, result and output are the solver's and the world's text: shown escaped.
            self._cache = (state, printable_text(self._build(theme.dark, self.app.theme_variables)))
        return self._cache[1]

    def _build(self, dark: bool, variables: dict[str, str]) -> Text:
        call = self.call
        if call is None:
            return Text("▸ running exec_code…", style="italic")
        error_style = theme_style(variables, "error")
        muted = muted_style()
        ok = call.ok
        tool = str(call.tool)
        args = shown_args(call.args)
        block = call.role == BLOCK
        text = Text(no_wrap=False)
        text.append("▾ " if self.expanded else "▸ ", muted)
        text.append(f"{call_number(call)} ", muted)
        text.append("✓ " if ok else "✗ ", theme_style(variables, "success") if ok else error_style)
        text.append(tool, Style(bold=True))
        if not block:
            text.append("  " + short_json(args, PREVIEW_WIDTH))
        text.append(f"  {duration(call.seconds)}", muted)
        result = call.result
        fold = None if self.expanded else FOLD_LINES
        if block:
            code = args.get("code") if isinstance(args, dict) else args
            text.append("\n")
            text.append_text(code_text(str(code or ""), max_lines=fold, dark=dark))
            self._append_payload(text, result, ok, dark, error_style, muted, fold)
            return text
        if not ok:
            code, message = error_of(call)
            text.append(f"\n{code}", error_style + Style(bold=True))
            if message:
                text.append(f": {message}", error_style)
        if self.expanded:
            text.append("\nargs ", muted)
            text.append_text(json_text(args, dark=dark))
        if ok or self.expanded:
            text.append("\n")
            if self.expanded:
                text.append("result ", muted)
            text.append_text(json_text(result, max_lines=fold, dark=dark))
        return text

    @staticmethod
    def _append_payload(text: Text, payload: Any, ok: bool, dark: bool, error_style: Style, muted: Style, fold: int | None) -> None:
        """An exec_code block's payload: stdout, value, error or limit, and its call count."""
        if not isinstance(payload, dict):
            return
        if isinstance(payload.get("error"), dict):  # refused before running (e.g. not in code mode)
            error = payload["error"]
            text.append(f"\n{error.get('code')}: {error.get('message')}", error_style)
            return
        stdout = payload.get("stdout")
        if stdout:
            text.append("\nstdout\n", muted)
            text.append(str(stdout).rstrip("\n"))
        if payload.get("value") is not None:
            text.append("\nvalue ", muted)
            text.append_text(value_text(payload["value"], fold, dark))
        if payload.get("error"):
            text.append("\n" + str(payload["error"]).rstrip("\n"), error_style)
        if payload.get("limit"):
            text.append(f"\nlimit reached: {payload['limit']}", error_style)
        calls = payload.get("tool_calls")
        if calls is not None:
            text.append(f"\n{calls} tool call{'s' if calls != 1 else ''}", muted)


def value_text(value: Any, fold: int | None, dark: bool) -> Text:
    """exec_code's value is the repr of the block's last expression: highlight it as Python."""
    if isinstance(value, str):
        return code_text(value, max_lines=fold, dark=dark)
    return json_text(value, max_lines=fold, dark=dark)


class CallGroup(Vertical):
    """An exec_code block (or its placeholder) with the calls it made nested under it."""

    DEFAULT_CSS = """
    CallGroup {
        height: auto;
    }
    CallGroup > .children {
        height: auto;
        margin-left: 2;
        border-left: vkey $panel-lighten-2;
    }
    """

    def __init__(self, view: CallView) -> None:
        super().__init__()
        self.view = view
        self.children_box: Vertical | None = None
        self._waiting: list[CallView] = []  # children added before the group composed

    def compose(self) -> ComposeResult:
        yield self.view
        self.children_box = Vertical(*self._waiting, classes="children")
        self._waiting = []
        yield self.children_box

    def add_child(self, view: CallView) -> None:
        if self.children_box is None:
            self._waiting.append(view)
        else:
            self.children_box.mount(view)


class CallTrace(VerticalScroll):
    """The trial's calls, scrollable; `mark` highlights the current step (replay). Focusing the
    trace (`focus_newest`, the solve screen's F4) puts the focus on the newest call, where `v`
    and enter act; `end` goes back to the newest call and follows new ones again."""

    DEFAULT_CSS = """
    CallTrace {
        height: 1fr;
    }
    CallTrace > #trace-empty {
        color: $text-muted;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("end", "follow", "Newest call", id="trace.follow", tooltip="Go to the newest call and follow new ones", show=False),
        Binding("v", "view_result", "View result", id="trace.view_newest", show=False),
    ]

    class Selected(Message):
        """The user chose a call (enter or click on it): the solve screen loads it into the composer."""

        def __init__(self, entry: CallEntry) -> None:
            super().__init__()
            self.entry = entry  # as the trace was handed it
            self.call = as_tool_call(entry)

    class ViewResult(Message):
        """The user asked to see a call's result in full (v on it): the screen opens the result viewer."""

        def __init__(self, entry: CallEntry) -> None:
            super().__init__()
            self.entry = entry  # as the trace was handed it
            self.call = as_tool_call(entry)

    def __init__(
        self, entries: Sequence[CallEntry] | None = None, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._views: dict[str, CallView] = {}  # call id → its view (placeholders included)
        self._groups: dict[str, CallGroup] = {}  # block id → its group
        self._marked: str | None = None
        self._initial = list(entries or [])
        self._follow = True  # scrolled to the bottom: new calls scroll into view
        self._newest: CallView | None = None  # the last call added live (None in a replay: calls set at once)
        self._auto_expanded: CallView | None = None  # the newest call, expanded because it is newest

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        if self._initial:
            self.set_calls(self._initial)

    # -- the API -------------------------------------------------------------------------------
    def add_call(self, entry: CallEntry) -> None:
        """Append one call; a child of an exec_code block goes under its block. The newest call is
        expanded (the previous newest folds back unless the person changed it) and, unless the
        person scrolled up to read, scrolled into view."""
        self._add(entry, mount=True)
        view = self._views.get(str(as_tool_call(entry).id))
        if view is None:
            return
        previous = self._auto_expanded
        if previous is not None and previous is not view and previous.expanded:
            previous.expanded = False
        view.expanded = True
        self._auto_expanded = view
        self._newest = view
        if self._follow:
            self.call_after_refresh(self._follow_newest)

    @property
    def following(self) -> bool:
        """Whether new calls scroll into view (False once the person scrolls up, True again at the bottom)."""
        return self._follow

    def _follow_newest(self) -> None:
        if not self._follow:
            return
        newest = self._newest
        if newest is not None and newest.outer_size.height > self.scrollable_content_region.height:
            # Taller than the pane: its head (the call itself) in view, not the tail of its result.
            self.scroll_to_widget(newest, animate=False, top=True, immediate=True)
        else:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    @property
    def showing_newest(self) -> bool:
        """Whether the pane is where following puts it: at the bottom, or at the head of the
        newest call when that call is taller than the pane."""
        newest = self._newest
        if newest is not None and newest.outer_size.height > self.scrollable_content_region.height:
            return newest.region.y == self.scrollable_content_region.y
        return self.scroll_y == self.max_scroll_y

    def watch_virtual_size(self, size: Size) -> None:
        # The newest live call's view can grow after it was followed (its result is laid out a
        # frame later): while following, follow again, not to stop a line short. Not in a replay,
        # where `mark` decides what is in view.
        if self._newest is not None and self._follow:
            self.call_after_refresh(self._follow_newest)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value:  # the person scrolled up: stay where they are
            self._follow = new_value >= self.max_scroll_y
        elif new_value >= self.max_scroll_y:  # back at the bottom: follow again
            self._follow = True
        if not self._follow and self._newest is not None:
            self.call_after_refresh(self._follow_if_newest_shown)

    def _follow_if_newest_shown(self) -> None:
        """The newest call's head is in view (scrolled or tabbed back to it): follow again."""
        newest = self._newest
        if self._follow or newest is None or not newest.is_mounted:
            return
        region, content = newest.region, self.scrollable_content_region
        if region.height and content.y <= region.y < content.bottom:
            self._follow = True

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is self._newest:  # tabbed back to the newest call
            self._follow = True

    def newest_view(self) -> CallView | None:
        """The newest call's view (a live trial's last call; in a replay, the last one listed)."""
        if self._newest is not None and self._newest.is_attached:
            return self._newest
        views = [view for view in self._views.values() if view.entry is not None]
        return views[-1] if views else None

    def focus_newest(self) -> None:
        """Focus the newest call (scrolled into view), or the trace when it has none."""
        newest = self.newest_view()
        if newest is None:
            self.focus()
            return
        newest.focus(scroll_visible=False)
        self._follow = True
        self.call_after_refresh(self._follow_newest)

    def action_follow(self) -> None:
        self.focus_newest()

    def action_view_result(self) -> None:
        """`v` on the trace itself: the newest call's result."""
        newest = self.newest_view()
        if newest is not None:
            newest.action_view_result()

    def set_calls(self, entries: Sequence[CallEntry]) -> None:
        """Replace every call (replay): one batch mount, not one per call."""
        self.clear_calls()
        pending: list[Widget] = []
        for entry in entries:
            widget = self._add(entry, mount=False)
            if widget is not None:
                pending.append(widget)
        if pending:
            self.mount_all(pending)

    def clear_calls(self) -> None:
        self._views.clear()
        self._groups.clear()
        self._marked = None
        self._newest = None
        self._auto_expanded = None
        self.remove_children()

    def mark(self, call_id: str | None) -> None:
        """Highlight `call_id` as the current step and scroll it into view; None clears the mark."""
        if self._marked is not None and self._marked in self._views:
            self._views[self._marked].remove_class("-marked")
        self._marked = call_id
        view = self._views.get(call_id) if call_id is not None else None
        if view is not None:
            view.add_class("-marked")
            self.call_after_refresh(self.scroll_to_widget, view, animate=False)

    def dim_after(self, done: set[str]) -> None:
        """Replay: every call is shown once; those not yet made at the current step are dimmed, so
        stepping back and forth never rebuilds the list."""
        for call_id, view in self._views.items():
            view.set_class(call_id not in done, "-future")

    @property
    def made_ids(self) -> list[str]:
        """The ids of the calls not dimmed (replay: the calls made by the current step)."""
        return [call_id for call_id, view in self._views.items() if not view.has_class("-future")]

    @property
    def call_ids(self) -> list[str]:
        """The ids shown, in the order of their views (placeholders included)."""
        return list(self._views)

    def view(self, call_id: str) -> CallView | None:
        return self._views.get(call_id)

    # -- building ------------------------------------------------------------------------------
    def _add(self, entry: CallEntry, *, mount: bool) -> Widget | None:
        """Create the view for `entry` and mount it now, or return the new top-level widget for
        one batch mount (set_calls). A block's children go into the block's group."""
        call = as_tool_call(entry)
        call_id = str(call.id)
        parent = call.parent
        is_block = call.role == BLOCK
        if is_block and call_id in self._groups:
            self._groups[call_id].view.set_entry(entry)  # the block, after its children
            return None
        view = CallView(entry)
        self._views[call_id] = view
        created: Widget | None = None
        if parent:
            group = self._groups.get(str(parent))
            if group is None:  # the block is still running: a placeholder takes its place
                placeholder = CallView(None, pending_id=str(parent))
                self._views[str(parent)] = placeholder
                group = created = self._groups[str(parent)] = CallGroup(placeholder)
            group.add_child(view)
        elif is_block:
            created = self._groups[call_id] = CallGroup(view)
        else:
            created = view
        if created is not None and mount:
            self.mount(created)
            return None
        return created

    def _theme_changed(self, theme: Theme) -> None:
        for view in self._views.values():
            view.theme_changed()
