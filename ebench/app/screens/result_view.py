"""The result viewer: one call's result on the whole screen, as a sortable, searchable table when it
holds records (a flat record as its fields), else as scrollable highlighted JSON; a cell's value can
be read in full, copied, or taken back into the composer, and the whole result opened in $PAGER.

The screen is opened for one call and dismissed with the value the person chose to take (None
when they only looked), so the opener decides where the value goes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding
from textual.containers import ScrollableContainer, VerticalScroll
from textual.screen import Screen
from textual.widgets import ContentSwitcher, DataTable, Footer, Input, Static

from ...sessions.events import BLOCK, ToolCallEvent
from ...terminal import printable, printable_json, printable_text
from ..render import json_text, muted_style, short_json, to_json
from ..widgets.result_table import MISSING, Cell, ResultTable, block_value, compact_text, full_text, merge_pages, page_context, table_of
from ..widgets.trace import call_number

MATCH_STYLE = "reverse"  # search matches: readable on every theme
ARGS_WIDTH = 60  # the title line's preview of the call's arguments
DEFAULT_PAGER = "less"


def pager_command(environ: Mapping[str, str]) -> list[str] | str:
    """The pager to run ($PAGER, else `less`) as a command, or why there is none (one line)."""
    spec = environ.get("PAGER", "").strip() or DEFAULT_PAGER
    try:
        command = shlex.split(spec)
    except ValueError as exc:
        return f"$PAGER cannot be read ({exc}): set it to a command such as 'less -R'"
    if not command:
        return "$PAGER is empty: set it to a command such as 'less -R'"
    if shutil.which(command[0]) is None:
        return f"No pager found ('{command[0]}' is not installed): set $PAGER to a pager you have"
    return command


def pager_text(payload: Any) -> str:
    """What the pager shows: a text result as it is, anything else as indented JSON; either with
    what a terminal would obey escaped (the pager may pass it through, as `less -R` does)."""
    text = printable(payload) if isinstance(payload, str) else printable_json(to_json(payload))
    return text if text.endswith("\n") else text + "\n"


class ResultScreen(Screen[Any]):
    """One call's result, full screen; dismissed with the taken value, or None."""

    DEFAULT_CSS = """
    ResultScreen {
        #result-title { height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; background: $panel; }
        #result-status { height: 1; padding: 0 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
        #result-search { display: none; margin: 0 1; }
        #result-search.shown { display: block; }
        #result-body { height: 1fr; }
        #result-table { height: 1fr; }
        #result-json { height: 1fr; padding: 0 1; }
        #result-json-text { width: auto; }
        #result-value {
            display: none;
            height: auto;
            max-height: 40%;
            border-top: solid $primary;
            padding: 0 1;
        }
        #result-value.shown { display: block; }
    }
    """

    BINDINGS = [
        Binding("escape", "back", "Close", id="result.back"),
        Binding("i", "use", "Use value", id="result.use"),
        Binding("y", "copy", "Copy", id="result.copy"),
        Binding("v", "value", "Value", tooltip="Show or hide the highlighted cell's whole value", id="result.value"),
        Binding("slash", "search", "Search", id="result.search"),
        Binding("n", "next_match", "Next", tooltip="The next match of the search", id="result.next"),
        Binding("N", "previous_match", "Previous match", id="result.previous", show=False),
        Binding("s", "sort", "Sort", tooltip="Sort by the column under the cursor; again: reversed", id="result.sort"),
        Binding("S", "choose_sort", "Sort by…", tooltip="Choose the column to sort by from a list", id="result.sort_by"),
        Binding("j", "toggle_json", "JSON", tooltip="Switch between the table and the JSON", id="result.json"),
        Binding("o", "pager", "Pager", tooltip="Open the whole result in $PAGER", id="result.pager"),
        Binding("a", "toggle_pages", "Pages", tooltip="Every page fetched together, or this call's page only", id="result.pages"),
    ]

    def __init__(self, call: ToolCallEvent, *, can_take: bool, pages: list[ToolCallEvent] | None = None) -> None:
        """`pages`: the calls that fetched `call`'s listing page by page ("All pages"): their
        records are shown as one table (`a` switches to `call`'s page alone)."""
        super().__init__()
        self.call = call
        self.can_take = can_take  # whether a value can go anywhere (a composer with a tool)
        self.pages = pages if pages is not None and len(pages) > 1 else None
        self.all_pages = self.pages is not None
        # An exec_code block's records (its last expression, a repr) are read back as data, to be a table.
        self.block_data = block_value(call.result) if call.role == BLOCK else None
        self.payload: Any = (
            merge_pages([page.result for page in self.pages])
            if self.pages
            else self.block_data
            if self.block_data is not None
            else call.result
        )
        self.table: ResultTable | None = table_of(self.payload)
        self.shown: list[int] = list(range(len(self.table))) if self.table is not None else []  # record indices, in screen order
        self.query_text = ""
        self.sort_column: int | None = None
        self.sort_reverse = False
        self.json_mode = self.table is None
        self._json: Text | None = None  # built on first use: a large result's JSON is only highlighted if read
        self._json_lines: list[int] = []  # the lines of the JSON view's matches
        self._json_match = -1
        self._cells: list[tuple[Text, ...]] = []

    # -- building ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="result-title", markup=False)
        yield Static("", id="result-status", markup=False)
        yield Input(placeholder="search the result (enter: keep, esc: clear)", id="result-search", compact=True)
        with ContentSwitcher(initial="result-json" if self.json_mode else "result-table", id="result-body"):
            yield DataTable(id="result-table", cursor_type="cell", zebra_stripes=True)
            with ScrollableContainer(id="result-json", can_focus=True):
                yield Static("", id="result-json-text", markup=False)
        with VerticalScroll(id="result-value"):
            yield Static("", id="result-value-text", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self._show_payload()
        self._focus_body()
        self._update_status()

    def _show_payload(self) -> None:
        """Build the table (or the JSON) of `self.payload`."""
        if self.table is not None:
            self._cells = [
                tuple(_cell(text, value) for text, value in zip(texts, row, strict=True))
                for texts, row in zip(self.table.texts, self.table.values, strict=True)
            ]
            self._fill_table()
            self.query_one("#result-table", DataTable).move_cursor(column=self.table.start_column(), animate=False)
        if self.json_mode:
            self._show_json()

    def _title(self) -> Text:
        call = self.call
        title = Text(no_wrap=True)
        if self.pages is not None and self.all_pages:
            first, last = self.pages[0], self.pages[-1]
            title.append(f"{call_number(first)}-{call_number(last)} ", muted_style())
            title.append(f"{len(self.pages)} pages of ", "bold")
        else:
            title.append(f"{call_number(call)} ", muted_style())
            title.append("✓ " if call.ok else "✗ ")
        title.append(str(call.tool), "bold")
        title.append("  " + short_json(call.args, ARGS_WIDTH), muted_style())
        if self.pages is not None:
            title.append("  (a: " + ("this page only)" if self.all_pages else "all pages)"), muted_style())
        return printable_text(title)

    def action_toggle_pages(self) -> None:
        """All the pages fetched together, or the page of the call the viewer was opened on."""
        if self.pages is None:
            return
        self.all_pages = not self.all_pages
        self.payload = merge_pages([page.result for page in self.pages]) if self.all_pages else self.call.result
        self.table = table_of(self.payload)
        self.shown = list(range(len(self.table))) if self.table is not None else []
        self.sort_column, self.sort_reverse, self._json = None, False, None
        self.query_text = ""
        self.query_one("#result-search", Input).value = ""
        self.query_one("#result-title", Static).update(self._title())
        self._show_payload()
        self._update_status()

    def _fill_table(self) -> None:
        """Show the rows in `self.shown` (built texts, matches highlighted); the cursor stays on its record."""
        assert self.table is not None
        table = self.query_one("#result-table", DataTable)
        keep = self.cursor_cell()
        table.clear(columns=True)
        for index, name in enumerate(self.table.columns):
            arrow = (" ▼" if self.sort_reverse else " ▲") if index == self.sort_column else ""
            table.add_column(Text(printable(name + arrow)), key=str(index))  # a Text: a str would be read as markup
        query = self.query_text
        for row in self.shown:
            cells = self._cells[row]
            if query:
                cells = tuple(_highlighted(cell, query) if self.table.cell_matches(row, c, query) else cell for c, cell in enumerate(cells))
            table.add_row(*cells, key=str(row))
        if keep is not None and keep.row in self.shown:
            table.move_cursor(row=self.shown.index(keep.row), column=keep.column, animate=False)

    def _refresh_rows(self) -> None:
        assert self.table is not None
        self.shown = self.table.order(self.table.matching(self.query_text), self.sort_column, self.sort_reverse)
        self._fill_table()
        self._update_status()
        self._show_value()

    def _show_json(self) -> None:
        if self._json is None:
            self._json = json_text(self.payload, dark=self.app.current_theme.dark)
            self._json.no_wrap = True
        text = self._json
        self._json_lines = []
        if self.query_text:
            text = text.copy()
            pattern = re.compile(re.escape(self.query_text), re.IGNORECASE)
            text.highlight_regex(pattern, MATCH_STYLE)
            plain = text.plain
            self._json_lines = sorted({plain.count("\n", 0, m.start()) for m in pattern.finditer(plain)})
        self._json_match = -1
        self.query_one("#result-json-text", Static).update(text)

    def _update_status(self) -> None:
        parts: list[str] = []
        if self.json_mode or self.table is None:
            parts.append("JSON")
            if self.query_text:
                count = len(self._json_lines)
                parts.append(f"{count} matching line{'s' if count != 1 else ''} for '{self.query_text}'")
        else:
            table = self.table
            what = "records" if table.kind == "records" else "fields"
            place = f" in {table.where}" if table.where else ""
            parts.append(
                f"{len(table)} {what}"
                + (" in the block's value" + (f" ({table.where})" if table.where else "") if self.block_data is not None else place)
            )
            parts += [f"{k} {compact_text(v)}" for k, v in page_context(self.payload, table.where)]
            if self.sort_column is not None:
                parts.append(f"sorted by {table.columns[self.sort_column]}" + (" (reversed)" if self.sort_reverse else ""))
            if self.query_text:
                parts.append(f"{len(self.shown)} of {len(table)} match '{self.query_text}'")
        self.query_one("#result-status", Static).update(printable(" · ".join(parts)))

    # -- the cursor --------------------------------------------------------------------------
    def cursor_cell(self) -> Cell | None:
        """The record and column under the table's cursor, or None (JSON view, no rows)."""
        if self.table is None or self.json_mode or not self.shown:
            return None
        table = self.query_one("#result-table", DataTable)
        row = min(max(table.cursor_row, 0), len(self.shown) - 1)
        column = min(max(table.cursor_column, 0), len(self.table.columns) - 1)
        return Cell(self.shown[row], column)

    def chosen_value(self) -> Any:
        """The highlighted cell's value (a flat record's table: the field's value); MISSING when none."""
        cell = self.cursor_cell()
        if cell is None or self.table is None:
            return MISSING
        return self.table.value(self.table.taken_cell(cell))

    # -- actions -----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        on_table = self.table is not None and not self.json_mode
        if action == "use":
            return self.can_take and on_table
        if action in ("value", "sort", "choose_sort"):
            return on_table
        if action == "toggle_json":
            return self.table is not None
        if action == "toggle_pages":
            return self.pages is not None
        return True

    def action_back(self) -> None:
        """Esc leaves the search first (clearing it), then closes the value pane, then the screen."""
        search = self.query_one("#result-search", Input)
        if search.has_class("shown") or self.query_text:
            self._end_search(clear=True)
        elif self.query_one("#result-value").has_class("shown"):
            self.query_one("#result-value").remove_class("shown")
        else:
            self.dismiss(None)

    def action_use(self) -> None:
        value = self.chosen_value()
        if value is MISSING or value is None:
            self.notify("That cell is empty: nothing to take.", severity="warning")
            return
        self.dismiss(value)

    def action_copy(self) -> None:
        if self.json_mode or self.table is None:
            text = pager_text(self.payload).rstrip("\n")
            what = "the whole result"
        else:
            value = self.chosen_value()
            if value is MISSING:
                self.notify("That cell is empty: nothing to copy.", severity="warning")
                return
            text = compact_text(value)
            what = short_json(text, 40)
        self.app.copy_to_clipboard(text)
        self.notify(printable(f"Copied {what} (if the terminal lets the app set the clipboard)."), title="Copy", markup=False)

    def action_value(self) -> None:
        pane = self.query_one("#result-value")
        pane.toggle_class("shown")
        self._show_value()

    def _show_value(self) -> None:
        """The value pane follows the cursor while it is open."""
        pane = self.query_one("#result-value")
        if not pane.has_class("shown"):
            return
        cell = self.cursor_cell()
        body = self.query_one("#result-value-text", Static)
        if cell is None or self.table is None:
            body.update("")
            return
        if self.table.kind == "fields":  # a field's value, named by its field, wherever the cursor is in the row
            name, value = self.table.values[cell.row]
        else:
            name, value = self.table.columns[cell.column], self.table.value(cell)
        label = Text(f"{name}: ", muted_style())
        shown = Text(full_text(value)) if isinstance(value, str) or value is MISSING else json_text(value, dark=self.app.current_theme.dark)
        body.update(printable_text(label + shown))

    def action_search(self) -> None:
        search = self.query_one("#result-search", Input)
        search.add_class("shown")
        search.focus()

    def _end_search(self, *, clear: bool) -> None:
        search = self.query_one("#result-search", Input)
        if clear:
            search.value = ""  # Changed clears the filter
            self._apply_query("")
            search.remove_class("shown")
        self._focus_body()

    @on(Input.Changed, "#result-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._apply_query(event.value)

    @on(Input.Submitted, "#result-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._end_search(clear=not event.value)
        if event.value:
            self.action_next_match()

    def _apply_query(self, query: str) -> None:
        if query == self.query_text:
            return
        self.query_text = query
        if self.table is not None:
            self._refresh_rows()
        if self.json_mode:
            self._show_json()
        self._update_status()

    def action_next_match(self, backwards: bool = False) -> None:
        if not self.query_text:
            self.action_search()
            return
        if self.json_mode:
            if not self._json_lines:
                self.notify(f"No match for '{self.query_text}'.", severity="warning")
                return
            step = -1 if backwards else 1
            self._json_match = (self._json_match + step) % len(self._json_lines)
            self.query_one("#result-json", ScrollableContainer).scroll_to(y=self._json_lines[self._json_match], animate=False)
            return
        assert self.table is not None
        table = self.query_one("#result-table", DataTable)
        position = (max(table.cursor_row, 0), max(table.cursor_column, 0))
        found = self.table.next_match(self.shown, position, self.query_text, backwards=backwards)
        if found is None:
            self.notify(f"No match for '{self.query_text}'.", severity="warning")
            return
        table.move_cursor(row=found[0], column=found[1], animate=False)
        table.focus()

    def action_previous_match(self) -> None:
        self.action_next_match(backwards=True)

    def sort_by(self, column: int | None, reverse: bool = False) -> None:
        self.sort_column, self.sort_reverse = column, reverse
        self._refresh_rows()

    def action_sort(self) -> None:
        """Sort by the column under the cursor; when already sorted by it, reverse the order."""
        cell = self.cursor_cell()
        if cell is None:
            return
        self.sort_by(cell.column, not self.sort_reverse if cell.column == self.sort_column else False)

    def action_choose_sort(self) -> None:
        """The columns in a list: the one chosen sorts the table, and the cursor goes to it."""
        from .dialogs import SortChooser

        if self.table is None:
            return
        table = self.query_one("#result-table", DataTable)

        def chosen(column: int | None) -> None:
            if column is None:
                return
            if column < 0:
                self.sort_by(None)
                return
            self.sort_by(column, not self.sort_reverse if column == self.sort_column else False)
            table.move_cursor(column=column, animate=False)

        self.app.push_screen(
            SortChooser(list(self.table.columns), self.sort_column, self.sort_reverse, start=max(table.cursor_column, 0)), chosen
        )

    @on(DataTable.HeaderSelected, "#result-table")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        column = event.column_index
        self.sort_by(column, not self.sort_reverse if column == self.sort_column else False)

    @on(DataTable.CellSelected, "#result-table")
    def _cell_selected(self, event: DataTable.CellSelected) -> None:
        """Enter (or a click) on a cell opens the value pane; only v closes it, so clicking around keeps it."""
        event.stop()
        self.query_one("#result-value").add_class("shown")
        self._show_value()

    @on(DataTable.CellHighlighted, "#result-table")
    def _cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        event.stop()
        self._show_value()

    def action_toggle_json(self) -> None:
        if self.table is None:
            return
        self.json_mode = not self.json_mode
        self.query_one("#result-body", ContentSwitcher).current = "result-json" if self.json_mode else "result-table"
        if self.json_mode:
            self._show_json()
            self.query_one("#result-value").remove_class("shown")
        self._focus_body()
        self._update_status()
        self.refresh_bindings()

    def action_pager(self) -> None:
        """The whole result in $PAGER (the app hands the terminal over until the pager quits)."""
        command = pager_command(os.environ)
        if isinstance(command, str):
            self.notify(command, title="Pager", severity="error")
            return
        try:
            with self.app.suspend():
                subprocess.run(command, input=pager_text(self.payload), text=True, encoding="utf-8", check=False)
        except SuspendNotSupported:
            self.notify("This terminal cannot hand the screen to a pager: copy the result with y instead.", title="Pager", severity="error")
        except OSError as exc:
            self.notify(f"The pager '{command[0]}' could not run: {exc.strerror or exc}.", title="Pager", severity="error")

    def _focus_body(self) -> None:
        self.query_one("#result-json" if self.json_mode else "#result-table").focus()


def _cell(text: str, value: Any) -> Text:
    """A cell as the table shows it: numbers right-aligned, the rest as text. Always a Text: the
    table reads a str as markup, and a value is anyone's text ("[@click=app.quit]")."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Text(text, justify="right")
    return Text(printable(text))


def _highlighted(cell: str | Text, query: str) -> Text:
    text = cell.copy() if isinstance(cell, Text) else Text(cell)
    text.highlight_words([query], MATCH_STYLE, case_sensitive=False)
    return text
