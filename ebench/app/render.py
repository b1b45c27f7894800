"""Pure rendering helpers shared by the app's widgets: highlighted JSON folded to a few lines,
durations and one-line previews. No widgets here, so they can be tested (and reused) without a screen."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.token import Token, _TokenType
from rich.color import ColorParseError
from rich.segment import Segment
from rich.style import Style
from rich.syntax import PygmentsSyntaxTheme
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter

from ..terminal import is_printable, printable

# Pygments styles for each kind of theme (Textual themes say whether they are dark).
DARK_CODE_THEME = "monokai"
LIGHT_CODE_THEME = "default"


def to_json(value: Any, indent: int | None = 2) -> str:
    """JSON for display: non-ASCII kept, anything JSON cannot encode shown through str()."""
    try:
        return json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # circular structures, keys JSON refuses
        return repr(value)


def fold(text: str, max_lines: int | None) -> tuple[str, int]:
    """The first `max_lines` lines of `text` and how many were left out."""
    if max_lines is None:
        return text, 0
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text, 0
    return "\n".join(lines[:max_lines]), len(lines) - max_lines


def more_lines(hidden: int) -> str:
    return f"… {hidden} more line{'s' if hidden != 1 else ''}"


@lru_cache(maxsize=8)
def _lexer(name: str) -> Lexer:
    return get_lexer_by_name(name, stripnl=False, ensurenl=False)


@lru_cache(maxsize=4)
def _token_styles(dark: bool) -> dict[_TokenType, Style]:
    return {}  # filled as tokens are met; one dict per kind of theme


def _token_style(token: _TokenType, dark: bool) -> Style:
    styles = _token_styles(dark)
    style = styles.get(token)
    if style is None:
        theme = PygmentsSyntaxTheme(DARK_CODE_THEME if dark else LIGHT_CODE_THEME)
        full = theme.get_style_for_token(token)
        # Colour and emphasis only: no background, and plain text keeps the widget's own colour.
        base = theme.get_style_for_token(Token.Text).color
        plain = token in Token.Text or token is Token or full.color == base
        style = Style(color=None if plain else full.color, bold=full.bold or None, italic=full.italic or None)
        styles[token] = style
    return style


def highlight(code: str, lexer: str, *, dark: bool = True) -> Text:
    """`code` highlighted by pygments (lexer name: "json", "python"...). Token colours only: the
    text sits on the widget's background and plain text keeps the widget's colour."""
    text = Text()
    for token, value in _lexer(lexer).get_tokens(printable(code)):
        text.append(value, _token_style(token, dark))
    text.rstrip()
    return text


def json_text(value: Any, *, indent: int = 2, max_lines: int | None = None, dark: bool = True) -> Text:
    """`value` as highlighted JSON, folded to `max_lines` with a "… N more lines" marker. Only the
    shown lines are highlighted, so a huge result costs no more than a small one."""
    shown, hidden = fold(to_json(value, indent), max_lines)
    text = highlight(shown, "json", dark=dark)
    if hidden:
        text.append("\n" + more_lines(hidden), style="dim italic")
    return text


def code_text(code: str, *, max_lines: int | None = None, dark: bool = True) -> Text:
    """Python source highlighted, folded like `json_text`."""
    shown, hidden = fold(code, max_lines)
    text = highlight(shown, "python", dark=dark)
    if hidden:
        text.append("\n" + more_lines(hidden), style="dim italic")
    return text


def duration(seconds: float | None) -> str:
    """A call's duration for people: "0.4 ms", "3 ms", "1.2 s", "2 m 05 s"; "" when unknown."""
    if seconds is None:
        return ""
    if seconds < 0.001:
        return f"{seconds * 1000:.1f} ms"
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} m {rest:02d} s"


def short_json(value: Any, width: int) -> str:
    """A one-line preview of `value`, cut to `width` characters with "…"."""
    text = printable(to_json(value, indent=None))
    text = " ".join(text.split())  # strings with newlines stay on one line
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"


def theme_style(variables: dict[str, str], name: str, **attributes: Any) -> Style:
    """A Rich style in the theme variable `name`'s colour (e.g. "diff-missing", "error"). A variable
    that is no plain colour (Textual's "auto 60%") or is missing gives no colour, only the attributes."""
    value = variables.get(name)
    try:
        return Style(color=value, **attributes)
    except ColorParseError:
        return Style(**attributes)


def muted_style() -> Style:
    """Secondary text (labels, durations): dimmed, so it follows any theme."""
    return Style(dim=True)


class UnprintableFilter(LineFilter):
    """The last guard of the screen: a character a terminal would obey (ESC, C1, a bidirectional
    override) that reached a line unescaped is written as blanks of its width, never raw. The panes
    show such characters as escapes (`ebench.terminal`); this catches a place that forgot."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [_blanked(segment) for segment in segments]


def _blanked(segment: Segment) -> Segment:
    if segment.control or is_printable(segment.text):
        return segment
    from rich.cells import cell_len

    blanked = "".join(char if is_printable(char) else " " * cell_len(char) for char in segment.text)
    return Segment(blanked, segment.style)
