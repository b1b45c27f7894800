"""The task pane of the solve screen: the request, who is asking, the world's clock and the mode;
the attempt's state (calls so far, the timer in blind mode, the grade after submit) on its border.

The pane takes at most `max_lines` lines (fewer in a short terminal); what does not fit is cut
with "…" and its title names the key that shows the pane whole (`expanded`)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widgets import Static

from ...tasks.spec import Task
from ...terminal import printable, printable_text

# The clock the blind-mode timer reads; tests freeze it for stable snapshots.
monotonic = time.monotonic


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


COMPACT_LINES = 7  # the pane's lines when the terminal has room
SHORT_LINES = 3  # in a short terminal (the work area keeps its rows)
EXPAND_KEY = "F6"  # shown in the title when the pane is cut (the screen binds it)


class TaskPane(Static):
    DEFAULT_CSS = """
    TaskPane {
        height: auto;
        padding: 0 1;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        border-subtitle-color: $text;
        border-subtitle-align: left;
    }
    TaskPane.-expanded {
        max-height: 75%;
        border-title-color: $primary;
    }
    """

    status: reactive[str] = reactive("preparing a private copy of the world…")
    turn: reactive[str] = reactive("", layout=True)  # a scenario: which turn ("turn 2/4 · follow-up")
    request: reactive[str] = reactive("", layout=True)  # a scenario: the current turn's message
    max_lines: reactive[int] = reactive(COMPACT_LINES, layout=True)
    expanded: reactive[bool] = reactive(False, layout=True)  # the whole pane, whatever it takes

    def __init__(self, task: Task, *, actor: str = "", now: str = "", mode: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.task_spec = task
        self.actor = actor
        self.now = now
        self.mode = mode
        self.started: float | None = None  # blind mode: when the attempt started (the timer runs)
        self.stopped: float | None = None
        self.cut = False  # the whole pane does not fit its few lines (at the last paint)
        self.border_title = f"Task {task.id}"

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)

    def _tick(self) -> None:
        if self.started is not None and self.stopped is None:
            self._show_status()

    def start_timer(self, *, already: float = 0.0) -> None:
        """Run the timer; `already`: seconds spent before (a resumed attempt goes on counting)."""
        self.started, self.stopped = monotonic() - already, None
        self._show_status()

    def leave_out(self, seconds: float) -> None:
        """Idle time taken out of the attempt's time: the timer goes back by as much."""
        if self.started is not None and self.stopped is None and seconds > 0:
            self.started += seconds
            self._show_status()

    def stop_timer(self) -> None:
        if self.started is not None:
            self.stopped = monotonic()

    @property
    def elapsed(self) -> float | None:
        if self.started is None:
            return None
        return (self.stopped or monotonic()) - self.started

    def watch_status(self) -> None:
        self._show_status()

    def _show_status(self) -> None:
        """The status rides on the bottom border: always visible, however long the request."""
        elapsed = self.elapsed
        # A Text, not a str: a border's string is read as markup, and the status may quote an error.
        self.border_subtitle = Text(printable((f"⏱ {clock(elapsed)} · " if elapsed is not None else "") + self.status))

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        self._show_title()

    def _show_title(self) -> None:
        key = f"{EXPAND_KEY} less" if self.expanded and self.cut else f"{EXPAND_KEY} whole request" if self.cut else ""
        title = f"Task {self.task_spec.id}" + (f" · {key}" if key else "")
        if self.border_title != title:
            self.border_title = title

    def shown_text(self, width: int) -> tuple[Text, bool]:
        """What the pane shows at `width` cells, and whether the whole pane takes more than
        `max_lines` lines: then, unless expanded, those lines, the last ending in "…"."""
        text = self.full_text()
        if width <= 1:
            return text, False
        lines = text.wrap(self.app.console, width)
        if len(lines) <= self.max_lines:
            return text, False
        if self.expanded:
            return text, True
        kept = list(lines)[: self.max_lines]
        last = kept[-1]
        last.rstrip()
        last.truncate(width - 1)
        last.append("…", style="bold")
        return Text("\n").join(kept), True

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        text, _ = self.shown_text(width)
        return len(text.wrap(self.app.console, max(width, 1)))

    def render(self) -> Text:
        text, self.cut = self.shown_text(self.size.width)  # cut, expanded or not: the title names the key
        self._show_title()
        return text

    def full_text(self) -> Text:
        """The whole pane: the request, who asks, the world's clock, the domain, the mode, the capabilities."""
        task = self.task_spec
        text = Text(justify="left")
        if self.turn:
            text.append(self.turn + "  ", style="dim")
        text.append(self.request or task.query, style="bold")
        meta = [("as ", self.actor), ("at ", self.now), ("domain ", task.domain), ("mode ", self.mode)]
        for i, (label, value) in enumerate(m for m in meta if m[1]):
            text.append("  ·  " if i else "\n", style="dim")
            text.append(label, style="dim")
            text.append(value)
        text.append("\ncapabilities ", style="dim")
        text.append(", ".join(task.capabilities))
        return printable_text(text)  # the task file's request and the world's names
