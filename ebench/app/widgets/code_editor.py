"""The exec_code editor of code mode: Python in a TextArea, a Run button (ctrl+r), and the
block's output below.

The editor never runs code itself: it posts `CodeEditor.Run` and the screen runs the block in a
worker, then calls `show_output` with the exec_code result.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, LoadingIndicator, Static, TextArea

from ...terminal import printable_text
from ..render import code_text, json_text, muted_style, theme_style


def output_text(ok: bool, payload: Any, variables: dict[str, str], *, dark: bool = True) -> Text:
    """An exec_code result for people: a verdict line, stdout, the value, the error or limit in the
    error colour, and how many tool calls the block made."""
    error_style = theme_style(variables, "error")
    muted = muted_style()
    text = Text(no_wrap=False)
    text.append("✓ ok" if ok else "✗ failed", theme_style(variables, "success") if ok else error_style + Style(bold=True))
    if not isinstance(payload, dict):
        text.append("\n")
        text.append_text(json_text(payload, dark=dark))
        return text
    refused = payload.get("error")
    if isinstance(refused, dict):  # the tool refused the block (not code mode, bad arguments)
        text.append(f"\n{refused.get('code')}: {refused.get('message')}", error_style)
        return text
    calls = payload.get("tool_calls")
    if calls is not None:
        text.append(f"  ·  {calls} tool call{'s' if calls != 1 else ''}", muted)
    # Why it failed comes first, above output that can run to thousands of lines: the limit hit,
    # and the error's last line (the exception); the whole traceback follows the output.
    if payload.get("limit"):
        text.append(f"\nlimit reached: {payload['limit']}", error_style + Style(bold=True))
    reason = str(refused or "").strip().splitlines()
    if reason:
        text.append("\n" + reason[-1], error_style + Style(bold=True))
    stdout = payload.get("stdout")
    if stdout:
        text.append("\nstdout\n", muted)
        text.append(str(stdout).rstrip("\n"))
    value = payload.get("value")
    if value is not None:
        text.append("\nvalue ", muted)
        # The value is the repr of the block's last expression: Python literals, highlighted as such.
        text.append_text(code_text(value, dark=dark) if isinstance(value, str) else json_text(value, dark=dark))
    if len(reason) > 1:
        text.append("\n" + str(refused).rstrip("\n"), error_style)
    return text


class CodeEditor(Vertical):
    """Python for one exec_code block, and the last block's output."""

    DEFAULT_CSS = """
    CodeEditor {
        height: 1fr;
    }
    CodeEditor > #code-input {
        height: 2fr;
        min-height: 5;
    }
    CodeEditor > #code-bar {
        height: auto;
        padding: 0 1;
    }
    CodeEditor #code-run {
        min-width: 16;
    }
    CodeEditor #code-running {
        display: none;
        width: 12;
        height: 1;
        margin: 0 0 0 1;
    }
    CodeEditor.-running #code-running {
        display: block;
    }
    CodeEditor #code-hint {
        color: $text-muted;
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        margin: 0 0 0 2;
        width: 1fr;
    }
    CodeEditor > #code-output-scroll {
        height: 1fr;
        min-height: 3;
        border-top: solid $panel-lighten-2;
        padding: 0 1;
    }
    CodeEditor #code-output {
        height: auto;
    }
    """

    BINDINGS = [Binding("ctrl+r", "run", "Run code", id="code.run")]

    running: reactive[bool] = reactive(False)

    class Run(Message):
        """Run this block (the screen runs it in a worker and calls `show_output`)."""

        def __init__(self, code: str) -> None:
            super().__init__()
            self.code = code

    def __init__(self, code: str = "", *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._initial_code = code
        self._output: tuple[bool, Any] | None = None

    def compose(self) -> ComposeResult:
        yield TextArea.code_editor(self._initial_code, language="python", id="code-input")
        with Horizontal(id="code-bar"):
            yield Button("Run ▶", id="code-run", variant="primary", tooltip="Run the block (ctrl+r)", compact=True)
            yield LoadingIndicator(id="code-running")
            yield Static("ctrl+r runs the block; its tool calls show in the trace", id="code-hint")
        with VerticalScroll(id="code-output-scroll"):
            yield Static("no output yet", id="code-output", markup=False)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._paint_output())

    @property
    def code(self) -> str:
        return self.query_one("#code-input", TextArea).text

    @code.setter
    def code(self, value: str) -> None:
        self.query_one("#code-input", TextArea).load_text(value)

    def watch_running(self, running: bool) -> None:
        self.set_class(running, "-running")
        if self.is_mounted:
            self.query_one("#code-run", Button).disabled = running
            self.query_one("#code-hint", Static).update(
                "running…" if running else "ctrl+r runs the block; its tool calls show in the trace"
            )

    def action_run(self) -> None:
        """Post Run unless a block is running. The screen sets `running` when it accepts the block
        (it may refuse: the trial ended); `show_output` sets it back."""
        if self.running:
            self.app.bell()
            return
        self.post_message(self.Run(self.code))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "code-run":
            event.stop()
            self.action_run()

    def show_output(self, ok: bool, payload: Any) -> None:
        """Show an exec_code result (the tool's payload, or its error payload); ends `running`."""
        self._output = (ok, payload)
        self.running = False
        self._paint_output()
        self.query_one("#code-output-scroll", VerticalScroll).scroll_home(animate=False)  # the verdict and reason first

    @property
    def output_text(self) -> str:
        """The output as plain text (what the output area shows)."""
        return self._render_output().plain

    def _render_output(self) -> Text:
        if self._output is None:
            return Text("no output yet")
        # The block's output is the code's to choose: what a terminal would obey is shown escaped.
        return printable_text(output_text(*self._output, self.app.theme_variables, dark=self.app.current_theme.dark))

    def _paint_output(self) -> None:
        if self.is_mounted:
            self.query_one("#code-output", Static).update(self._render_output())
