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

MIN_TRIGRAM_QUERY = 3  # a trigram index cannot answer shorter strings


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
    """A LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped (ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def candidates(index: SearchIndex, key_expr: str, text: str) -> tuple[str, list[str]]:
    """A WHERE fragment restricting `key_expr` to rows whose indexed text may contain `text`
    (always true for queries too short for trigrams), and its parameters."""
    if len(text) < MIN_TRIGRAM_QUERY:
        return "1", []
    phrase = '"' + text.replace('"', '""') + '"'
    return f"{key_expr} IN (SELECT rowid FROM {index.table} WHERE {index.table} MATCH ?)", [phrase]
