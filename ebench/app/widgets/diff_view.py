"""The live diff: what the trial changed against what the task expects.

`diff_lines` turns a grade (from `ebench.tasks.grading.explain`, computed by the caller in a
worker) and the trial's actual diff into plain (kind, text) lines; `DiffView` is a virtual list of
them (only the lines on screen are rendered), so a diff of hundreds of rows repaints in
milliseconds. Every line carries a symbol as well as a colour (✓ matched, − missing, + unexpected,
≠ wrong). In blind mode nothing derived from the expected diff is shown: only what the trial did.

A line names its row by the key columns that tell it apart from its neighbours first, so lines cut
at the pane's edge still differ; a cut line ends in "…", and enter wraps every line in full.
"""

from __future__ import annotations

import json
from typing import Any

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Resize
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.theme import Theme

from ...tasks.diff import Diff, RowChange
from ...tasks.grading import Grade, WrongValue
from ...terminal import printable
from ..render import muted_style, theme_style

DiffLine = tuple[str, str]  # (kind, text)
KeyOrder = dict[str, list[str]]  # table -> its key columns, the ones that tell its rows apart first
KINDS = ("header", "matched", "missing", "unexpected", "wrong", "actual", "note")
SYMBOLS = {"matched": "✓", "missing": "−", "unexpected": "+", "wrong": "≠", "actual": "•"}
BLIND_NOTE = "expected changes hidden until submit"
VALUE_WIDTH = 40  # one value's preview; a long text is cut with "…"
CUT = "…"  # ends a line cut at the pane's edge
WRAP_INDENT = "  "  # continues a wrapped line, so each change still starts at the left edge


def value_text(value: Any, width: int = VALUE_WIDTH) -> str:
    """A column value as people read it: JSON literals (strings quoted, null), cut to `width`.
    A value a trial wrote is anyone's text: what a terminal would obey is shown escaped."""
    text = printable(json.dumps(value, ensure_ascii=False, default=str))
    return text if len(text) <= width else text[: width - 1] + "…"


def key_text(key: dict[str, Any], order: list[str] | None = None) -> str:
    """The key as `column=value` pairs, in `order` (the columns that vary first) when given."""
    columns = [c for c in order or () if c in key] + [c for c in key if c not in (order or ())]
    return " ".join(f"{column}={value_text(key[column])}" for column in columns)


def key_order(keys: list[tuple[str, dict[str, Any]]]) -> KeyOrder:
    """Each table's key columns, those whose values differ between the listed rows first: seven
    saved albums of one user read "album_id=5 user_id=11", so lines cut short still differ."""
    values: dict[str, dict[str, set[str]]] = {}
    for table, key in keys:
        for column, value in key.items():
            values.setdefault(table, {}).setdefault(column, set()).add(repr(value))
    return {table: sorted(columns, key=lambda c: len(columns[c]) == 1) for table, columns in values.items()}


def change_text(change: RowChange, order: KeyOrder | None = None) -> str:
    """One change on one line: op, table, key, then what changed (an insert's values, an
    update's old → new, nothing more for a delete)."""
    head = f"{change.op} {change.table} {key_text(change.key, (order or {}).get(change.table))}"
    if change.op == "insert":
        values = {c: v for c, v in (change.new or {}).items() if c not in change.key}
        return head + (": " + ", ".join(f"{c}={value_text(v)}" for c, v in values.items()) if values else "")
    if change.op == "update":
        old = change.old or {}
        parts = [f"{c}: {value_text(old.get(c))} → {value_text(v)}" for c, v in (change.new or {}).items()]
        return head + (": " + ", ".join(parts) if parts else "")
    return head


def wrong_identity(wrong: WrongValue) -> dict[str, Any]:
    """The key columns that name the row: never the wrong column itself. A new row paired with
    one that went to the wrong song is "(playlist_id=12): song_id expected 2571, got 1", not named
    by the song it should have had."""
    return {c: v for c, v in wrong.key.items() if c != wrong.column}


def wrong_text(wrong: WrongValue, order: KeyOrder | None = None) -> str:
    identity = wrong_identity(wrong)
    head = f"{wrong.op} {wrong.table}" + (f" ({key_text(identity, (order or {}).get(wrong.table))})" if identity else "")
    text = f"{head}: {wrong.column} expected {value_text(wrong.expected)}, got {value_text(wrong.actual)}"
    return text + (f" (was {value_text(wrong.old)})" if wrong.op == "update" else "")


def counts_of(result: Grade | None, actual: Diff, blind: bool) -> dict[str, int]:
    """The counts shown at the top. Blind (or nothing to compare with): the trial's changes by op."""
    ops = actual.counts()
    if blind or result is None:
        return {"actual": len(actual), **ops}
    return {
        "matched": len(result.matched),
        "missing": len(result.missing),
        "unexpected": len(result.unexpected),
        "wrong": len(result.wrong),
        "actual": len(actual),
    }


def diff_lines(result: Grade | None, actual: Diff, blind: bool) -> list[DiffLine]:
    """What `DiffView.show` paints, as (kind, text) lines; kind is one of KINDS."""
    counts = counts_of(result, actual, blind)
    if blind or result is None:
        ops = "  ".join(f"{counts[op]} {op}" for op in ("insert", "update", "delete"))
        lines: list[DiffLine] = [("header", f"{counts['actual']} changes made:  {ops}")]
        lines.append(("note", BLIND_NOTE if blind else "no expected changes to compare with"))
        changes = sorted(actual, key=RowChange.sort_key)
        order = key_order([(c.table, c.key) for c in changes])
        lines += [("actual", f"{SYMBOLS['actual']} {change_text(c, order)}") for c in changes]
        return lines
    lines = [
        (
            "header",
            f"✓ {counts['matched']} matched  − {counts['missing']} missing  + {counts['unexpected']} unexpected  ≠ {counts['wrong']} wrong",
        ),
        ("header", "PASS" if result.passed else "not yet"),
    ]
    if result.note:
        lines.append(("note", result.note))
    wrong_order = key_order([(w.table, wrong_identity(w)) for w in result.wrong])
    sections: list[tuple[str, str, list[str]]] = [("wrong", "Wrong values", [wrong_text(w, wrong_order) for w in result.wrong])]
    for kind, title, changes in (
        ("missing", "Missing changes", result.missing),
        ("unexpected", "Unexpected changes", result.unexpected),
        ("matched", "Matched changes", result.matched),
    ):
        order = key_order([(c.table, c.key) for c in changes])
        sections.append((kind, title, [change_text(c, order) for c in changes]))
    for kind, title, texts in sections:
        if texts:
            lines.append(("header", f"{title} ({len(texts)})"))
            lines += [(kind, f"{SYMBOLS[kind]} {text}") for text in texts]
    return lines


def line_styles(variables: dict[str, str]) -> dict[str, Style]:
    """The style of each kind of line, from the theme's variables."""
    return {
        "header": Style(bold=True),
        "note": muted_style() + Style(italic=True),
        "actual": Style(),
        **{kind: theme_style(variables, f"diff-{kind}") for kind in ("matched", "missing", "unexpected", "wrong")},
    }


def paint(lines: list[DiffLine], variables: dict[str, str]) -> Text:
    """The lines as one Rich Text, coloured from the theme's variables."""
    styles = line_styles(variables)
    text = Text(no_wrap=False)
    for index, (kind, line) in enumerate(lines):
        if index:
            text.append("\n")
        text.append(line, styles[kind])
    return text


def wrap_line(text: str, width: int) -> list[str]:
    """One line as rows of at most `width` cells; rows after the first are indented."""
    if cell_len(text) <= width or width <= len(WRAP_INDENT) + 1:
        return [text]
    first = chop_cells(text, width)[0]
    return [first, *(WRAP_INDENT + part for part in chop_cells(text[len(first) :], width - len(WRAP_INDENT)))]


class DiffView(ScrollView, can_focus=True):
    """Expected vs actual, updated by `show` after every call. A virtual list: only the rows on
    screen are rendered (and cached), so a diff of hundreds of rows repaints in milliseconds. Long
    lines are cut at the edge with "…" and scroll horizontally; enter wraps them instead."""

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("enter", "toggle_wrap", "Wrap lines", tooltip="Show every line in full, wrapped, or one row each", id="diff.wrap"),
        Binding("up", "scroll_up", "Up", show=False, id="diff.up"),
        Binding("down", "scroll_down", "Down", show=False, id="diff.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="diff.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="diff.page_down"),
        Binding("home", "scroll_home", "Top", show=False, id="diff.top"),
        Binding("end", "scroll_end", "Bottom", show=False, id="diff.bottom"),
    ]

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None, wrap: bool = False) -> None:
        """`wrap`: start with every line wrapped in full (enter switches)."""
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[DiffLine] = [("note", "no changes yet")]
        self._rows: list[DiffLine] = list(self._lines)  # what is painted: the lines, or their wrapped rows
        self._wrap = wrap
        self._counts: dict[str, int] = {}
        self._styles: dict[str, Style] = {}
        self._strips: dict[int, Strip] = {}  # row index → its rendered strip (uncropped)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self._repaint()

    @property
    def counts(self) -> dict[str, int]:
        """The counts shown at the top (blind: only the trial's own changes by op)."""
        return dict(self._counts)

    @property
    def lines(self) -> list[DiffLine]:
        return list(self._lines)

    @property
    def rows(self) -> list[DiffLine]:
        """The rows as painted: the lines, or (wrapping) each line's rows."""
        return list(self._rows)

    @property
    def wrap(self) -> bool:
        return self._wrap

    @property
    def text(self) -> Text:
        """Every line as one Rich Text, styled as shown (tests and copying read it)."""
        return paint(self._lines, self.app.theme_variables)

    def show(self, result: Grade | None, actual: Diff, *, blind: bool = False) -> None:
        self._lines = diff_lines(result, actual, blind)
        self._counts = counts_of(result, actual, blind)
        self._repaint()

    def action_toggle_wrap(self) -> None:
        self._wrap = not self._wrap
        self.scroll_to(x=0, animate=False)
        self._repaint()

    def on_resize(self, event: Resize) -> None:
        if self._wrap:  # the rows depend on the width
            self._repaint()

    def _theme_changed(self, theme: Theme) -> None:
        self._repaint()

    def _repaint(self) -> None:
        self._styles = line_styles(self.app.theme_variables)
        self._strips.clear()
        if self._wrap:
            region = self.content_region
            self._rows = self._wrapped(region.width)
            if len(self._rows) > region.height:  # the vertical scrollbar will take its columns
                self._rows = self._wrapped(region.width - self.styles.scrollbar_size_vertical)
        else:
            self._rows = self._lines
        width = max((cell_len(text) for _, text in self._rows), default=0)
        self.virtual_size = Size(width, len(self._rows))
        self.refresh()

    def _wrapped(self, width: int) -> list[DiffLine]:
        return [(kind, row) for kind, line in self._lines for row in wrap_line(line, max(width, 1))]

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, base)
        kind, line = self._rows[index]
        style = base + self._styles.get(kind, Style())
        strip = self._strips.get(index)
        if strip is None:
            # A span, not the Text's own style: `Text.render` yields only its spans' styles. The
            # line's colour goes over the widget's base style.
            text = Text(line, no_wrap=True, end="")
            text.stylize(style)
            strip = self._strips[index] = Strip(text.render(self.app.console), cell_len(line))
        end = scroll_x + width
        if strip.cell_length > end and width > 1:  # cut at the edge: say so
            shown = Strip.join([strip.crop(scroll_x, end - 1), Strip([Segment(CUT, style)], 1)]).extend_cell_length(width, base)
        else:
            shown = strip.crop_extend(scroll_x, end, base)
        return shown.apply_offsets(scroll_x, index)
