"""A table of records that sorts by any column and fits its columns to its width.

The browser's tasks, the replay's trials and the results' leaderboard use it. The cursor is a row
with a column under it (`column_cursor`, moved by left/right, its header shown reversed): a screen
binds `s` (`sort_here`: by that column, again: reversed) and `S` (a `SortChooser` of the columns,
then `sort_by`); a header click sorts by that column and a second click reverses it; the sorted
header ends in ▲ (ascending) or ▼ (descending).
A column is as wide as its widest cell; when the table is narrower than its columns, the columns
that allow it are cut, the one with the most to spare first, and a cut cell ends in "…". A column
without a minimum width is never cut (a result or a count is always read whole), nor is any header;
what still does not fit scrolls sideways.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.widgets import DataTable

from ...terminal import printable, printable_text

R = TypeVar("R")

ASCENDING, DESCENDING = " ▲", " ▼"


@dataclass(frozen=True)
class Column(Generic[R]):
    """A column of records: its cell, the value it sorts by (None sorts last either way), and how
    far it may be cut."""

    key: str
    label: str
    text: Callable[[R], str | Text]
    value: Callable[[R], Any]
    higher_is_better: bool = False  # the first sort by this column puts the highest value first
    justify: Literal["left", "right"] = "left"
    min_width: int | None = None  # the column may be cut down to this many cells; None: never cut


def sorted_indices(records: Sequence[R], column: Column[R] | None, reverse: bool) -> list[int]:
    """Record indices in table order: by the column (best first, or reversed), records without a
    value last either way; without a column, as given. The sort is stable."""
    order = list(range(len(records)))
    if column is None:
        return order
    values = [column.value(record) for record in records]
    present = [i for i in order if values[i] is not None]
    absent = [i for i in order if values[i] is None]
    present.sort(key=lambda i: values[i], reverse=column.higher_is_better != reverse)
    return present + absent


def fit_widths(natural: list[int], minimum: list[int | None], available: int) -> list[int]:
    """Column widths (without the cell padding) within `available` cells: each column's natural
    width, the cuttable ones (a minimum) narrowed one cell at a time, the one with the most cells
    above its minimum first, until the total fits or no column can give more."""
    widths = list(natural)
    excess = sum(widths) - available
    while excess > 0:
        spare = [(widths[i] - low, i) for i, low in enumerate(minimum) if low is not None and widths[i] > low]
        if not spare:
            break
        _, widest = max(spare)
        widths[widest] -= 1
        excess -= 1
    return widths


def shown(text: str | Text) -> str | Text:
    """A cell's text as the table shows it: the records' text, what a terminal would obey escaped."""
    return printable_text(text) if isinstance(text, Text) else printable(text)


def cut(text: str | Text, width: int, justify: str) -> Text:
    """The cell as one line of at most `width` cells, ending in "…" when it was cut."""
    cell = text.copy() if isinstance(text, Text) else Text(text)  # as `shown` made it: never read as markup
    cell.no_wrap = True
    cell.justify = justify  # type: ignore[assignment]
    if cell.cell_len > width:
        cell.truncate(width, overflow="ellipsis")
    return cell


class RecordTable(DataTable[Any], Generic[R]):
    """Rows of records under `Column`s, keyed by `key(record)`; the cursor stays on its record
    when the records, the sort or the width change."""

    def __init__(self, columns: Sequence[Column[R]], key: Callable[[R], str], *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self.record_columns: list[Column[R]] = list(columns)
        self.record_key = key
        self.records: list[R] = []  # as given
        self.shown: list[R] = []  # in row order
        self.sort_column: int | None = None
        self.sort_reverse = False
        self.column_cursor = 0  # the column under the cursor: `s` sorts by it
        self._fitted_width = -1
        self._widths: list[int] = []

    # -- what the screens call -------------------------------------------------------------------
    def set_records(self, records: Sequence[R], *, keep_cursor: bool = True) -> None:
        self.records = list(records)
        self.refill(keep_cursor=keep_cursor)

    def set_columns(self, columns: Sequence[Column[R]]) -> None:
        """New columns (a column shown or hidden); the sort follows its column by key."""
        sorted_key = self.record_columns[self.sort_column].key if self.sort_column is not None else None
        self.record_columns = list(columns)
        keys = [column.key for column in self.record_columns]
        self.sort_column = keys.index(sorted_key) if sorted_key in keys else None
        self.refill()

    def sort_by(self, column: int | None, reverse: bool = False) -> None:
        self.sort_column, self.sort_reverse = column, reverse
        self.refill()

    def sort_here(self) -> None:
        """Sort by the column under the cursor; when already sorted by it, reverse the order."""
        column = min(self.column_cursor, len(self.record_columns) - 1)
        self.sort_by(column, not self.sort_reverse if column == self.sort_column else False)

    def reverse_sort(self) -> None:
        if self.sort_column is not None:
            self.sort_by(self.sort_column, not self.sort_reverse)

    def sort_chosen(self, column: int | None) -> None:
        """What a `SortChooser` answered: a column (reversed when already sorted by it, and the
        cursor goes there), NO_SORT (as given), or None (nothing)."""
        if column is None:
            return
        if column < 0:
            self.sort_by(None)
            return
        self.column_cursor = column
        self.sort_by(column, not self.sort_reverse if column == self.sort_column else False)

    def move_column(self, step: int) -> None:
        """Move the column cursor (its header shown reversed) and scroll it into view."""
        count = len(self.record_columns)
        if not count:
            return
        self.column_cursor = min(max(self.column_cursor + step, 0), count - 1)
        for index, column in enumerate(self.columns.values()):
            column.label = self._label(index)
        self.notify_style_update()  # the header is drawn again
        left = sum(width + 2 * self.cell_padding for width in self._widths[: self.column_cursor])
        right = left + (self._widths[self.column_cursor] + 2 * self.cell_padding if self.column_cursor < len(self._widths) else 0)
        if left < self.scroll_x:
            self.scroll_to(x=left, animate=False)
        elif right > self.scroll_x + self.scrollable_content_region.width:
            self.scroll_to(x=right - self.scrollable_content_region.width, animate=False)

    def action_cursor_left(self) -> None:
        self.move_column(-1)

    def action_cursor_right(self) -> None:
        self.move_column(1)

    def highlighted(self) -> R | None:
        """The record under the cursor; None when the table is empty."""
        if not self.shown or self.row_count == 0:
            return None
        return self.shown[min(max(self.cursor_row, 0), len(self.shown) - 1)]

    # -- filling -----------------------------------------------------------------------------------
    def refill(self, *, keep_cursor: bool = True) -> None:
        highlighted = self.highlighted() if keep_cursor else None
        columns = self.record_columns
        sort = columns[self.sort_column] if self.sort_column is not None else None
        self.shown = [self.records[i] for i in sorted_indices(self.records, sort, self.sort_reverse)]
        cells = [[shown(column.text(record)) for column in columns] for record in self.shown]  # measured as shown
        self.column_cursor = min(self.column_cursor, max(len(columns) - 1, 0))
        labels = [column.label + self._marker(i) for i, column in enumerate(columns)]
        natural = [max([cell_len(label)] + [cell_len(str(row[i])) for row in cells]) for i, label in enumerate(labels)]
        minimum = [None if c.min_width is None else max(c.min_width, cell_len(labels[i])) for i, c in enumerate(columns)]
        self._fitted_width = self.available_width()
        widths = self._widths = fit_widths(natural, minimum, self._fitted_width - 2 * self.cell_padding * len(columns))
        self.clear(columns=True)
        for index, (column, width) in enumerate(zip(columns, widths)):
            self.add_column(self._label(index), key=column.key, width=width)
        for record, row in zip(self.shown, cells):
            self.add_row(*[cut(cell, width, c.justify) for cell, width, c in zip(row, widths, columns)], key=self.record_key(record))
        if highlighted is not None:
            key = self.record_key(highlighted)
            if key in self.rows:
                self.move_cursor(row=self.get_row_index(key), animate=False)

    def available_width(self) -> int:
        """The cells the columns may take: the table's width less the vertical scrollbar, kept
        whether it shows or not, so that a scrollbar appearing never cuts the last column."""
        return max(0, self.size.width - self.styles.scrollbar_size_vertical)

    def _label(self, index: int) -> Text:
        """A column's header: its name and sort marker; the column under the cursor reversed."""
        column = self.record_columns[index]
        return Text(column.label + self._marker(index), justify=column.justify, style="reverse" if index == self.column_cursor else "")

    def _marker(self, index: int) -> str:
        if index != self.sort_column:
            return ""
        descending = self.record_columns[index].higher_is_better != self.sort_reverse
        return DESCENDING if descending else ASCENDING

    # -- events ------------------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        if self.available_width() != self._fitted_width:
            self.refill()

    @on(DataTable.HeaderSelected)
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = event.column_index
        self.column_cursor = column
        self.sort_by(column, not self.sort_reverse if column == self.sort_column else False)
