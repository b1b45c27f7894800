"""Small modal questions: a yes/no confirmation, the choice offered when a task has an attempt
left unfinished, and the column to sort a table by. Each dismisses with the answer; `esc` closes
a dialog with the answer that loses nothing."""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from ...terminal import printable

DIALOG_CSS = """
{name} {{
    align: center middle;
    background: $background 60%;
}}
{name} > Vertical {{
    width: auto;
    max-width: 76;
    min-width: 40;
    height: auto;
    padding: 1 2;
    border: thick $primary;
    background: $surface;
}}
{name} .dialog-text {{
    width: auto;
    max-width: 70;
    margin-bottom: 1;
}}
{name} Horizontal {{
    width: auto;
    height: auto;
}}
{name} Button {{
    margin-right: 1;
}}
"""


class ConfirmDialog(ModalScreen[bool]):
    """A question with a yes and a no; `esc` and `n` answer no."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")
    BINDINGS = [
        Binding("escape,n", "answer(False)", "No", id="dialog.no"),
        Binding("y", "answer(True)", "Yes", id="dialog.yes"),
    ]

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(printable(self.question), classes="dialog-text", markup=False)  # it may quote an error
            with Horizontal():
                yield Button(f"{self.yes} (y)", id="dialog-yes", variant="warning")
                yield Button(f"{self.no} (n)", id="dialog-no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#dialog-no", Button).focus()  # enter on a fresh dialog loses nothing

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "dialog-yes")


ResumeChoice = Literal["resume", "restart", "back"]


class ResumeDialog(ModalScreen[ResumeChoice]):
    """A task with an unsubmitted attempt: go on with it (the default), start over (its session is
    deleted), or go back. `esc` goes back when there is somewhere to go, else resumes."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ResumeDialog")
    BINDINGS = [
        Binding("r", "choose('resume')", "Resume", id="dialog.resume"),
        Binding("d", "choose('restart')", "Start over", id="dialog.restart"),
        Binding("escape", "leave", "Back", id="dialog.back"),
    ]

    def __init__(self, what: str, *, can_go_back: bool) -> None:
        super().__init__()
        self.what = what
        self.can_go_back = can_go_back

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(printable(self.what), classes="dialog-text", markup=False)
            with Horizontal():
                yield Button("Resume (r)", id="resume", variant="primary")
                yield Button("Start over: discard it (d)", id="restart", variant="warning")
                if self.can_go_back:
                    yield Button("Back (esc)", id="back")

    def on_mount(self) -> None:
        self.query_one("#resume", Button).focus()

    def action_choose(self, choice: ResumeChoice) -> None:
        self.dismiss(choice)

    def action_leave(self) -> None:
        self.dismiss("back" if self.can_go_back else "resume")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        choice = event.button.id
        if choice in ("resume", "restart", "back"):
            self.dismiss(choice)  # type: ignore[arg-type]


class SortChooser(ModalScreen[int | None]):
    """Choose the column to sort a table by (`S` on a table): enter on a column sorts by it (on
    the column already sorted by, reverses it); "as given" undoes the sort; `esc` changes
    nothing. Dismisses with the column's index, NO_SORT, or None."""

    NO_SORT = -1
    DEFAULT_CSS = (
        DIALOG_CSS.format(name="SortChooser")
        + """
    SortChooser OptionList { height: auto; max-height: 20; width: auto; min-width: 30; border: none; }
    """
    )
    BINDINGS = [Binding("escape", "leave", "Back", id="dialog.back")]

    def __init__(self, labels: list[str], current: int | None, reverse: bool = False, *, start: int | None = None) -> None:
        """`labels`: the columns' names; `current`, `reverse`: the sort now; `start`: the column highlighted first."""
        super().__init__()
        self.labels, self.current, self.reverse = labels, current, reverse
        self.start = start if start is not None else current

    def compose(self) -> ComposeResult:
        options = []
        for index, label in enumerate(self.labels):
            mark = (" ▼" if self.reverse else " ▲") if index == self.current else ""
            options.append(Option(Text(printable(label + mark)), id=str(index)))
        options.append(Option(Text("as given (no sort)", style="italic"), id=str(self.NO_SORT)))
        with Vertical():
            yield Static("Sort by (enter; on the sorted column: reverse it)", classes="dialog-text")
            yield OptionList(*options, id="sort-columns")

    def on_mount(self) -> None:
        columns = self.query_one("#sort-columns", OptionList)
        columns.highlighted = self.start if self.start is not None and 0 <= self.start < len(self.labels) else 0
        columns.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id or self.NO_SORT))

    def action_leave(self) -> None:
        self.dismiss(None)
