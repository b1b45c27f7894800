"""The live diff: what the trial changed against what the task expects.

`diff_lines` turns a grade (from `ebench.tasks.grading.explain`, computed by the caller in a
worker) and the trial's actual diff into plain (kind, text) lines; `DiffView` is a virtual list of
them (only the lines on screen are rendered), so a diff of hundreds of rows repaints in
milliseconds. Every line carries a symbol as well as a colour (✓ matched, − missing, + unexpected,
≠ wrong). In blind mode nothing derived from the expected diff is shown: only what the trial did.
"""

from __future__ import annotations

import json
from typing import Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.theme import Theme

from ...tasks.diff import Diff, RowChange
from ...tasks.grading import Grade, WrongValue
from ..render import muted_style, theme_style

DiffLine = tuple[str, str]  # (kind, text)
KINDS = ("header", "matched", "missing", "unexpected", "wrong", "actual", "note")
SYMBOLS = {"matched": "✓", "missing": "−", "unexpected": "+", "wrong": "≠", "actual": "•"}
BLIND_NOTE = "expected changes hidden until submit"
VALUE_WIDTH = 40  # one value's preview; a long text is cut with "…"


def value_text(value: Any, width: int = VALUE_WIDTH) -> str:
    """A column value as people read it: JSON literals (strings quoted, null), cut to `width`."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def key_text(key: dict[str, Any]) -> str:
    return " ".join(f"{column}={value_text(value)}" for column, value in key.items())


def change_text(change: RowChange) -> str:
    """One change on one line: op, table, key, then what changed (an insert's values, an
    update's old → new, nothing more for a delete)."""
    head = f"{change.op} {change.table} {key_text(change.key)}"
    if change.op == "insert":
        values = {c: v for c, v in (change.new or {}).items() if c not in change.key}
        return head + (": " + ", ".join(f"{c}={value_text(v)}" for c, v in values.items()) if values else "")
    if change.op == "update":
        old = change.old or {}
        parts = [f"{c}: {value_text(old.get(c))} → {value_text(v)}" for c, v in (change.new or {}).items()]
        return head + (": " + ", ".join(parts) if parts else "")
    return head


def wrong_text(wrong: WrongValue) -> str:
    head = f"{wrong.op} {wrong.table} {key_text(wrong.key)} {wrong.column}: "
    if wrong.op == "update":
        head += f"{value_text(wrong.old)} → "
    return head + f"expected {value_text(wrong.expected)}, got {value_text(wrong.actual)}"


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
        lines += [("actual", f"{SYMBOLS['actual']} {change_text(c)}") for c in sorted(actual, key=RowChange.sort_key)]
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
    sections: list[tuple[str, str, list[str]]] = [
        ("wrong", "Wrong values", [wrong_text(w) for w in result.wrong]),
        ("missing", "Missing changes", [change_text(c) for c in result.missing]),
        ("unexpected", "Unexpected changes", [change_text(c) for c in result.unexpected]),
        ("matched", "Matched changes", [change_text(c) for c in result.matched]),
    ]
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


class DiffView(ScrollView, can_focus=True):
    """Expected vs actual, updated by `show` after every call. A virtual list: only the lines on
    screen are rendered (and cached), so a diff of hundreds of rows repaints in milliseconds; long
    lines scroll horizontally instead of wrapping."""

    DEFAULT_CSS = """
    DiffView {
        height: 1fr;
        padding: 0 1;
    }
    """

    BINDINGS = [
        Binding("up", "scroll_up", "Up", show=False, id="diff.up"),
        Binding("down", "scroll_down", "Down", show=False, id="diff.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="diff.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="diff.page_down"),
        Binding("home", "scroll_home", "Top", show=False, id="diff.top"),
        Binding("end", "scroll_end", "Bottom", show=False, id="diff.bottom"),
    ]

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[DiffLine] = [("note", "no changes yet")]
        self._counts: dict[str, int] = {}
        self._styles: dict[str, Style] = {}
        self._strips: dict[int, Strip] = {}  # line index → its rendered strip (uncropped)

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
    def text(self) -> Text:
        """Every line as one Rich Text, styled as shown (tests and copying read it)."""
        return paint(self._lines, self.app.theme_variables)

    def show(self, result: Grade | None, actual: Diff, *, blind: bool = False) -> None:
        self._lines = diff_lines(result, actual, blind)
        self._counts = counts_of(result, actual, blind)
        self._repaint()

    def _theme_changed(self, theme: Theme) -> None:
        self._repaint()

    def _repaint(self) -> None:
        self._styles = line_styles(self.app.theme_variables)
        self._strips.clear()
        width = max((cell_len(text) for _, text in self._lines), default=0)
        self.virtual_size = Size(width, len(self._lines))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        strip = self._strips.get(index)
        if strip is None:
            kind, line = self._lines[index]
            # A span, not the Text's own style: `Text.render` yields only its spans' styles. The
            # line's colour goes over the widget's base style.
            text = Text(line, no_wrap=True, end="")
            text.stylize(base + self._styles.get(kind, Style()))
            strip = self._strips[index] = Strip(text.render(self.app.console), cell_len(line))
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_offsets(scroll_x, index)
