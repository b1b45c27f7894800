"""The exec_code editor of code mode: Python in a TextArea, a Run button (ctrl+r), and the
block's output below.

The editor never runs code itself: it posts `CodeEditor.Run` and the screen runs the block in a
worker, then calls `show_output` with the exec_code result. Editor and output share the room: the
output takes most of it after a run whose output does not fit, F7 switches (and focuses the side
that grew), alt+up / alt+down move the split a step. Records the block returned are named in the
output, and `v` there (or on the block in the trace) shows them as a table.
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
from .result_table import block_value, find_records


def output_text(ok: bool, payload: Any, variables: dict[str, str], *, dark: bool = True, records: int = 0) -> Text:
    """An exec_code result for people: a verdict line (how many tool calls the block made, and
    `records`, how many records its value holds), stdout, the value, the error or limit in the
    error colour."""
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
    if records:
        text.append(f"  ·  {records} record{'s' if records != 1 else ''} in the value (F7 then v: a table)", muted)
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


class EditorArea(TextArea):
    """A TextArea where ctrl+a selects all, as people expect of an editor (Textual gives ctrl+a to
    the line's start, which `home` still does; F7 selects all too): the exec_code editor, and the
    composer's raw JSON."""

    BINDINGS = [Binding("ctrl+a", "select_all", "Select all", show=False, id="editor.select_all")]


OUTPUT_SMALL, OUTPUT_LARGE = 3, 7  # tenths of the room the output takes


class OutputScroll(VerticalScroll):
    """The block's output, scrollable and focusable (F7); `v` shows its records as a table."""

    BINDINGS = [Binding("v", "view_records", "Records table", id="code.records")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "view_records":
            editor = self.parent
            return isinstance(editor, CodeEditor) and editor.records > 0
        return True

    def action_view_records(self) -> None:
        self.post_message(CodeEditor.ViewRecords())


class CodeEditor(Vertical):
    """Python for one exec_code block, and the last block's output."""

    DEFAULT_CSS = """
    CodeEditor {
        height: 1fr;
    }
    CodeEditor > #code-input {
        height: 7fr;
        min-height: 3;
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
        height: 3fr;
        min-height: 3;
        border-top: solid $panel-lighten-2;
        padding: 0 1;
    }
    CodeEditor > #code-output-scroll:focus {
        border-top: solid $primary;
    }
    CodeEditor #code-output {
        height: auto;
    }
    """

    BINDINGS = [
        Binding("ctrl+r", "run", "Run code", id="code.run"),
        # Priority: the editor's own F7 (select all; ctrl+a does it too) gives way.
        Binding(
            "f7,alt+7",
            "toggle_output",
            "Output",
            id="code.output",
            priority=True,
            tooltip="Give the room to the output, or back to the editor",
        ),
        Binding("alt+up", "move_split(1)", "Output bigger", id="code.output_bigger", show=False),
        Binding("alt+down", "move_split(-1)", "Output smaller", id="code.output_smaller", show=False),
    ]

    running: reactive[bool] = reactive(False)
    # Tenths of the room the output takes (the editor has the rest): OUTPUT_SMALL at first, OUTPUT_LARGE after a long output.
    output_share: reactive[int] = reactive(3)

    class Run(Message):
        """Run this block (the screen runs it in a worker and calls `show_output`)."""

        def __init__(self, code: str) -> None:
            super().__init__()
            self.code = code

    class ViewRecords(Message):
        """`v` on the output: the last block's records, as a table (the screen opens the result viewer)."""

    def __init__(self, code: str = "", *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._initial_code = code
        self._output: tuple[bool, Any] | None = None
        self.records = 0  # records in the last block's value (shown as a table on `v`)

    def compose(self) -> ComposeResult:
        yield EditorArea.code_editor(self._initial_code, language="python", id="code-input")
        with Horizontal(id="code-bar"):
            yield Button("Run ▶", id="code-run", variant="primary", tooltip="Run the block (ctrl+r)", compact=True)
            yield LoadingIndicator(id="code-running")
            yield Static("ctrl+r runs the block; its tool calls show in the trace", id="code-hint")
        with OutputScroll(id="code-output-scroll"):
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
        """Show an exec_code result (the tool's payload, or its error payload); ends `running`.
        An output longer than its room takes most of the room (the editor keeps a few lines)."""
        self._output = (ok, payload)
        self.running = False
        records = block_value(payload)
        found = find_records(records) if records is not None else None
        self.records = len(found[1]) if found is not None else (1 if records is not None else 0)
        self._paint_output()
        self.query_one("#code-output-scroll", VerticalScroll).scroll_home(animate=False)  # the verdict and reason first
        self.call_after_refresh(self._room_for_output)

    def _room_for_output(self) -> None:
        scroll = self.query_one("#code-output-scroll", VerticalScroll)
        if scroll.max_scroll_y > 0 and self.output_share < OUTPUT_LARGE:
            self.output_share = OUTPUT_LARGE

    def watch_output_share(self, share: int) -> None:
        self.query_one("#code-input").styles.height = f"{10 - share}fr"
        self.query_one("#code-output-scroll").styles.height = f"{share}fr"

    def validate_output_share(self, share: int) -> int:
        return min(max(share, 1), 9)

    def action_toggle_output(self) -> None:
        """The output large and focused (to scroll it), or the editor large and focused."""
        scroll = self.query_one("#code-output-scroll", VerticalScroll)
        if scroll.has_focus or self.output_share >= OUTPUT_LARGE and not self.query_one("#code-input").has_focus:
            self.output_share = OUTPUT_SMALL
            self.query_one("#code-input").focus()
        else:
            self.output_share = max(self.output_share, OUTPUT_LARGE)
            scroll.focus()

    def action_move_split(self, step: int) -> None:
        self.output_share += step

    @property
    def output_text(self) -> str:
        """The output as plain text (what the output area shows)."""
        return self._render_output().plain

    def _render_output(self) -> Text:
        if self._output is None:
            return Text("no output yet · F7: the output's room, and back")
        # The block's output is the code's to choose: what a terminal would obey is shown escaped.
        return printable_text(output_text(*self._output, self.app.theme_variables, dark=self.app.current_theme.dark, records=self.records))

    def _paint_output(self) -> None:
        if self.is_mounted:
            self.query_one("#code-output", Static).update(self._render_output())
