"""Substring search indexes for tools (trigram FTS5), built with the world.

A product's search box matches words anywhere in a title. `LIKE '%love%'` does that by scanning
every row; a trigram index finds the candidates directly. The index only narrows the rows:
tools still apply the LIKE condition, so results are exactly what LIKE would give.
The index tables carry ebench's internal prefix, so statistics and diffs leave them out.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .schema import INTERNAL_PREFIX
from .tools import ToolError

MIN_TRIGRAM_QUERY = 3  # a trigram index cannot answer shorter strings
LIKE_PATTERN_LIMIT = 50_000  # SQLITE_MAX_LIKE_PATTERN_LENGTH, the default of every build


@dataclass(frozen=True)
class SearchIndex:
    name: str
    columns: tuple[str, ...]
    source: str  # SELECT key, text1, text2... (one row per searchable entity)

    @property
    def table(self) -> str:
        return f"{INTERNAL_PREFIX}_search_{self.name}"

    def build(self, conn: sqlite3.Connection) -> None:
        cols = ", ".join(self.columns)
        conn.execute(f"CREATE VIRTUAL TABLE {self.table} USING fts5({cols}, tokenize='trigram')")
        conn.execute(f"INSERT INTO {self.table} (rowid, {cols}) {self.source}")


def like_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (ESCAPE '\\').

    SQLite refuses a longer pattern than LIKE_PATTERN_LIMIT bytes as an error of the query ("LIKE
    or GLOB pattern too complex"); the search text is the solver's, so it is refused as theirs.
    (The engine's MAX_TEXT keeps every argument well below it: 10,000 characters escape to at most
    40,002 bytes.)"""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    if len(pattern) > LIKE_PATTERN_LIMIT // 4 and len(pattern.encode("utf-8", "surrogatepass")) > LIKE_PATTERN_LIMIT:
        raise ToolError("invalid_arguments", f"The search text is too long ({len(text)} characters).")
    return pattern


def candidates(index: SearchIndex, key_expr: str, text: str) -> tuple[str, list[str]]:
    """A WHERE fragment restricting `key_expr` to rows whose indexed text may contain `text`
    (always true for queries too short for trigrams), and its parameters."""
    if len(text) < MIN_TRIGRAM_QUERY:
        return "1", []
    phrase = '"' + text.replace('"', '""') + '"'
    return f"{key_expr} IN (SELECT rowid FROM {index.table} WHERE {index.table} MATCH ?)", [phrase]
