"""The task pane of the solve screen: the request, who is asking, the world's clock and the mode;
the attempt's state (calls so far, the timer in blind mode, the grade after submit) on its border."""

from __future__ import annotations

import time

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...tasks.spec import Task
from ...terminal import printable, printable_text

# The clock the blind-mode timer reads; tests freeze it for stable snapshots.
monotonic = time.monotonic


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


class TaskPane(Static):
    DEFAULT_CSS = """
    TaskPane {
        height: auto;
        max-height: 9;
        padding: 0 1;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        border-subtitle-color: $text;
        border-subtitle-align: left;
    }
    """

    status: reactive[str] = reactive("preparing a private copy of the world…")
    turn: reactive[str] = reactive("", layout=True)  # a scenario: which turn ("turn 2/4 · follow-up")
    request: reactive[str] = reactive("", layout=True)  # a scenario: the current turn's message

    def __init__(self, task: Task, *, actor: str = "", now: str = "", mode: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.task_spec = task
        self.actor = actor
        self.now = now
        self.mode = mode
        self.started: float | None = None  # blind mode: when the attempt started (the timer runs)
        self.stopped: float | None = None
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

    def render(self) -> Text:
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
