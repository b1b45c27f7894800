"""What every ebench screen shares: a header, a footer with its keys, and `back`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable

if TYPE_CHECKING:
    from ..widgets.record_table import RecordTable


def cursor_row(table: DataTable[Any]) -> int | None:
    """The row under the table's cursor, kept within the table; None when the table is empty."""
    if table.row_count == 0:
        return None
    return min(max(table.cursor_row, 0), table.row_count - 1)


# Keys shown as one entry in the footer ("d k t Filter"), so a table screen's keys fit at 80 columns.
FILTER_KEYS = Binding.Group("Filter", compact=True)
SORT_KEYS = Binding.Group("Sort", compact=True)
SORT_HELP = "Sort by the column under the cursor (←/→ move it); again: reversed"
CHOOSE_SORT_HELP = "Choose the column to sort by from a list"


def choose_sort(screen: Screen[Any], table: RecordTable[Any], then: Callable[[], None] | None = None) -> None:
    """`S` on a table: the columns in a list; the one chosen sorts the table (then `then`)."""
    from .dialogs import SortChooser

    def chosen(column: int | None) -> None:
        table.sort_chosen(column)
        if then is not None:
            then()

    labels = [column.label for column in table.record_columns]
    screen.app.push_screen(SortChooser(labels, table.sort_column, table.sort_reverse, start=table.column_cursor), chosen)


class EBenchScreen(Screen[None]):
    TITLE = "ebench"
    BINDINGS = [Binding("escape", "back", "Back", id="screen.back")]

    def action_back(self) -> None:
        # The bottom of the stack is Textual's empty default screen; the first real screen stays.
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return len(self.app.screen_stack) > 2  # a screen opened directly has nothing to go back to
        return True
