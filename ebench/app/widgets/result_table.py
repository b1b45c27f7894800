"""A tool result as a table: where its records are, their columns, and each cell's short text, full
text, search text and sort key. Pure (no widgets), and built once per result, so sorting and
filtering a thousand rows only reorders indices.

Tool results are pages like {"items": [{...}], "total": 62, "page": 1, ...}, a record with a page
inside ({"playlist": {...}, "songs": {"items": [...]}}), a bare list, or one flat record
({"room_id": 12, ...}); a flat record becomes a two-column table of its fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..render import to_json

CELL_WIDTH = 40  # a cell shows this many characters; the rest is one key away (the value pane)
FIELD, VALUE = "field", "value"  # the columns of a flat record's table


class _Missing:
    """A record without this column's key (shown empty, sorted last, never taken)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def find_records(payload: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """(where, records): the payload's list of records and its path ("items", "songs.items", "" for
    a bare list), or None. A page's "items" wins; otherwise the longest list of records among the
    payload's fields and the pages nested one level down."""
    if _is_records(payload):
        return "", payload
    if not isinstance(payload, dict):
        return None
    if _is_records(payload.get("items")):
        return "items", payload["items"]
    found: list[tuple[str, list[dict[str, Any]]]] = []
    for key, value in payload.items():
        if _is_records(value):
            found.append((str(key), value))
        elif isinstance(value, dict):
            for inner_key, inner in value.items():
                if _is_records(inner):
                    found.append((f"{key}.{inner_key}", inner))
    if not found:
        return None
    return max(found, key=lambda pair: len(pair[1]))  # max keeps the first of equals


def columns_of(records: Sequence[dict[str, Any]]) -> list[str]:
    """The union of the records' keys, in the order they are first met."""
    seen: dict[str, None] = {}
    for record in records:
        for key in record:
            seen.setdefault(str(key), None)
    return list(seen)


def compact_text(value: Any) -> str:
    """A value on one line: a string as it is, anything else as compact JSON."""
    if value is MISSING:
        return ""
    text = value if isinstance(value, str) else to_json(value, indent=None)
    return " ".join(text.split()) if "\n" in text or "\r" in text or "\t" in text else text


def clip(text: str, width: int) -> str:
    """`text` cut to `width` characters, the cut marked with "…"."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def cell_text(value: Any, width: int = CELL_WIDTH) -> str:
    """What a cell shows: the value on one line, cut to `width`."""
    return clip(compact_text(value), width)


def full_text(value: Any) -> str:
    """A cell's whole value: a string as it is, anything else as indented JSON."""
    if value is MISSING:
        return ""
    return value if isinstance(value, str) else to_json(value)


def sort_key(value: Any) -> tuple[int, Any]:
    """Orders any mix of values: numbers by value, then strings case-insensitively, then the rest by
    their JSON (booleans sort as numbers, as JSON readers expect)."""
    if isinstance(value, bool | int | float):
        return (0, float(value))
    if isinstance(value, str):
        return (1, value.casefold())
    return (2, to_json(value, indent=None))


def _blank(value: Any) -> bool:
    return value is MISSING or value is None


@dataclass(frozen=True)
class Cell:
    row: int  # the record's index in the table (not its position on screen)
    column: int


class ResultTable:
    """The rows of one result, built once: raw values, shown texts and search texts."""

    def __init__(self, kind: Literal["records", "fields"], where: str, columns: list[str], values: list[tuple[Any, ...]]) -> None:
        self.kind = kind
        self.where = where  # the records' path in the payload ("" for a bare list or a flat record)
        self.columns = columns
        self.values = values
        self.texts = [tuple(cell_text(v) for v in row) for row in values]
        # Searched case-insensitively in the whole value, not the cut text shown.
        self._search = [tuple(compact_text(v).casefold() for v in row) for row in values]
        self._sort_keys: dict[int, list[tuple[int, Any]]] = {}

    def __len__(self) -> int:
        return len(self.values)

    def value(self, cell: Cell) -> Any:
        return self.values[cell.row][cell.column]

    def taken_cell(self, cell: Cell) -> Cell:
        """The cell a key takes its value from: a flat record's table always gives the value, not the field's name."""
        if self.kind == "fields":
            return Cell(cell.row, self.columns.index(VALUE))
        return cell

    def start_column(self) -> int:
        """Where the cursor starts: on the first id column, as ids are what people take from a
        result most; a flat record's values; else the first column."""
        if self.kind == "fields":
            return self.columns.index(VALUE)
        return next((i for i, name in enumerate(self.columns) if name == "id" or name.endswith("_id")), 0)

    def matching(self, query: str) -> list[int]:
        """The rows where some cell's whole value contains `query` (any case); all rows for ""."""
        needle = query.casefold()
        if not needle:
            return list(range(len(self.values)))
        return [i for i, row in enumerate(self._search) if any(needle in text for text in row)]

    def cell_matches(self, row: int, column: int, query: str) -> bool:
        return bool(query) and query.casefold() in self._search[row][column]

    def order(self, rows: list[int], column: int | None, reverse: bool = False) -> list[int]:
        """`rows` sorted by `column` (stable; empty and null cells last either way), or as they are."""
        if column is None:
            return list(rows)
        keys = self._sort_keys.get(column)
        if keys is None:
            keys = self._sort_keys[column] = [sort_key(row[column]) for row in self.values]
        present = [i for i in rows if not _blank(self.values[i][column])]
        blank = [i for i in rows if _blank(self.values[i][column])]
        return sorted(present, key=keys.__getitem__, reverse=reverse) + blank

    def next_match(self, shown: list[int], position: tuple[int, int], query: str, *, backwards: bool = False) -> tuple[int, int] | None:
        """The (row position, column) in `shown` of the next cell after `position` (row-major,
        wrapping) whose value contains `query`, or None."""
        if not query or not shown:
            return None
        width = len(self.columns)
        total = len(shown) * width
        start = position[0] * width + position[1]
        step = -1 if backwards else 1
        for offset in range(1, total + 1):
            flat = (start + step * offset) % total
            row, column = divmod(flat, width)
            if self.cell_matches(shown[row], column, query):
                return row, column
        return None


def table_of(payload: Any) -> ResultTable | None:
    """The payload's records as a table, a flat record's fields as a two-column table, or None
    (an error, a text, a list of plain values: shown as JSON)."""
    found = find_records(payload)
    if found is not None:
        where, records = found
        columns = columns_of(records)
        values = [tuple(record.get(column, MISSING) for column in columns) for record in records]
        return ResultTable("records", where, columns, values)
    if isinstance(payload, dict) and payload and "error" not in payload:
        return ResultTable("fields", "", [FIELD, VALUE], [(str(key), value) for key, value in payload.items()])
    return None


def page_context(payload: Any, where: str) -> list[tuple[str, Any]]:
    """The plain values beside the records (total, page, next_cursor...), for the title line."""
    holder = payload
    for part in where.split(".")[:-1]:
        holder = holder.get(part) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or not where:
        return []
    return [(str(k), v) for k, v in holder.items() if isinstance(v, str | int | float | bool) or v is None]


def merge_pages(pages: list[Any]) -> Any:
    """The pages of one listing ({"items", "page", "total", ...} each, in page order) as one
    result: every page's items, "pages" naming the span, the last page's other plain values."""
    items: list[Any] = []
    numbers = []
    last: dict[str, Any] = {}
    for page in pages:
        if not isinstance(page, dict) or not isinstance(page.get("items"), list):
            continue
        items.extend(page["items"])
        numbers.append(page.get("page"))
        last = page
    merged = {k: v for k, v in last.items() if k not in ("items", "page")}
    span = f"{numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else str(numbers[0]) if numbers else ""
    return {"items": items, "pages": span, **merged}


BLOCK_VALUE_LIMIT = 4_000_000  # characters of a block's value read back as data (a larger one stays text)


def block_value(payload: Any) -> Any:
    """The data an exec_code block's last expression held, read back from its repr (Python
    literals only, never evaluated: `ast.literal_eval`), when it holds records or is a record (a
    list of dicts, a page of them, one dict); else None (text, a number, a repr of objects)."""
    import ast

    value = payload.get("value") if isinstance(payload, dict) else None
    if not isinstance(value, str) or len(value) > BLOCK_VALUE_LIMIT:
        return None
    try:
        data = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if find_records(data) is not None or (isinstance(data, dict) and data):
        return data
    return None
