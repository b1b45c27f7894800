"""Text from outside ebench (a model, a tool result, a task file, a session) made safe to show on
a terminal: the one home of the rule every command and every pane of the app applies.

A terminal obeys the control characters in what it is given: ESC starts a sequence that sets the
window's title, clears the screen or moves the cursor (so a model could draw a fake "all tasks
passed" line), and the 8-bit C1 controls do the same in one character. Bidirectional overrides
make text read in another order than it is stored. Each is shown as its escape (`\\x1b`, `\\x9b`,
`\\u202e`) rather than dropped, so a reader sees something was there; newlines and tabs stay.
A lone surrogate (which no terminal can encode) is shown the same way.

Rich markup is a second channel where text goes through it (`[@click=...]` runs an action in a
Textual app): `markup_escaped` gives text for a markup string, `printable_text` a rich Text
(which is never parsed as markup) with its styles kept.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

# C0 controls but tab and newline, DEL, the C1 controls, the bidirectional marks, embeddings,
# overrides and isolates (what "Trojan Source" uses to reorder text), and lone surrogates.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def is_printable(text: str) -> bool:
    """Whether `text` holds no character `printable` would escape."""
    return _UNPRINTABLE.search(text) is None


def printable(text: str) -> str:
    """`text` with every character a terminal would obey (or cannot show) written as its escape."""
    return _UNPRINTABLE.sub(_escape, text)


def printable_json(json_text: str) -> str:
    """JSON text whose strings hold no character a terminal would obey: the ones `json.dumps`
    leaves raw (DEL, C1, bidirectional controls; lone surrogates) written as \\uXXXX escapes,
    which read back as the very same values. Outside strings JSON text is ASCII without them."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def markup_escaped(text: str) -> str:
    """`text` for a place in a Rich markup string: printable, and its tags shown, not applied."""
    from rich.markup import escape

    return escape(printable(text))


def printable_text(text: Text) -> Text:
    """A rich Text made printable, its styles kept on the characters they covered (a style over an
    escaped character covers its whole escape). The same Text when nothing needed escaping."""
    plain = text.plain
    if is_printable(plain):
        return text
    from bisect import bisect_left

    from rich.text import Span

    escaped = list(_UNPRINTABLE.finditer(plain))
    where = [match.start() for match in escaped]
    grown = [0]  # grown[k]: how much longer the first k escapes made the text
    for match in escaped:
        grown.append(grown[-1] + len(_escape(match)) - 1)

    def moved(offset: int) -> int:  # where an offset of the original lands in the escaped text
        return offset + grown[bisect_left(where, offset)]

    shown = text.copy()
    shown.plain = printable(plain)
    shown.spans = [Span(moved(span.start), moved(span.end), span.style) for span in text.spans]
    return shown
