"""Change capture on a trial's database, and the net diff against the world it was copied from.

A `ChangeTracker` installs temporary triggers on the trial copy (temp objects live only in that
connection; the world file is never touched). Before a row is first updated or deleted its
original values are copied into a temp shadow table, exactly (no JSON round trip of REALs), and
every touched row id is logged. The net diff then reads only the touched rows, so its cost grows
with the number of changes, not with the size of the world:

- a row inserted then deleted cancels; several updates fold into one; an update that restores
  the original values disappears;
- rows are identified by primary key. For a table whose key SQLite allocates (a single INTEGER
  key), a deleted row whose id is reused by a new insert is reported as a delete plus an insert,
  so the diff never depends on whether an id happened to be reused; for natural or composite keys
  (a playlist's song), a delete then re-insert of the same key folds into an update or nothing;
- updates list only the columns that changed, without the volatile ones; an update that changed
  only volatile columns is not a change.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, NotRequired

from pydantic import ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from ..engine.schema import INTERNAL_PREFIX, Schema, Table

Op = Literal["insert", "update", "delete"]
_LOG = f"{INTERNAL_PREFIX}_touched"

Row = dict[str, Any]  # a row as the change log holds it: column -> value
JsonValue = Any  # a column value as SQLite gives it: None, int, float, str (or bytes, shown by repr)


class RowChangeFields(TypedDict):
    """One row's net change: `key` holds its primary key values, `old`/`new` the full row for a
    delete/insert and only the changed columns for an update; they are absent when not applicable."""

    __pydantic_config__ = ConfigDict(extra="forbid", title="RowChange")  # type: ignore[misc]

    table: str
    op: Op
    key: dict[str, JsonValue]
    old: NotRequired[dict[str, JsonValue] | None]
    new: NotRequired[dict[str, JsonValue] | None]


@dataclass(frozen=True)
class RowChange:
    """One row's net change (its JSON: `RowChangeFields`). For an insert into a table with a
    generated id, `key` holds the id the trial happened to get (grading resolves it).

    A dataclass, not a pydantic model: the tracker makes one per changed row and grading reads
    them in its hottest loops, where a model's attributes cost three times as much to read.
    pydantic validates and writes it through `__get_pydantic_core_schema__` (a field of `Grade`,
    the items of a `Diff`, `RowChange.from_dict`), and its JSON Schema is `RowChangeFields`'."""

    table: str
    op: Op
    key: dict[str, Any]
    old: dict[str, Any] | None = None
    new: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"table": self.table, "op": self.op, "key": self.key}
        if self.old is not None:
            data["old"] = self.old
        if self.new is not None:
            data["new"] = self.new
        return data

    @classmethod
    def from_dict(cls, data: Any) -> RowChange:
        """A change as recorded; pydantic's ValidationError (a ValueError) says what is malformed."""
        return _row_change_adapter().validate_python(data)

    def sort_key(self) -> tuple[Any, ...]:
        return (self.table, _OP_ORDER[self.op], tuple(_sortable(v) for v in self.key.values()))

    @classmethod
    def _of_fields(cls, data: RowChangeFields) -> RowChange:
        return cls(data["table"], data["op"], data["key"], data.get("old"), data.get("new"))

    @classmethod
    def _kept(cls, value: Any, validate: core_schema.ValidatorFunctionWrapHandler) -> RowChange:
        """A RowChange is kept as it is (Python callers made it); anything else is validated as JSON."""
        return value if isinstance(value, cls) else validate(value)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        from_fields = core_schema.no_info_after_validator_function(cls._of_fields, handler.generate_schema(RowChangeFields))
        return core_schema.json_or_python_schema(
            json_schema=from_fields,
            python_schema=core_schema.no_info_wrap_validator_function(cls._kept, from_fields),
            serialization=core_schema.plain_serializer_function_ser_schema(cls.to_dict),
        )


@cache
def _row_change_adapter() -> TypeAdapter[RowChange]:
    return TypeAdapter(RowChange)


_OP_ORDER = {"delete": 0, "update": 1, "insert": 2}


def _sortable(value: Any) -> tuple[Any, ...]:
    # Mixed types (NULL, numbers, text) sort deterministically.
    return (0, 0) if value is None else (1, value) if isinstance(value, (int, float)) else (2, str(value))


@dataclass
class Diff:
    """A net diff: row changes, in the tracker's order. A runtime container (counted, iterated,
    extended by its makers), not a pydantic model; pydantic validates and serializes it as the JSON
    list of its changes (`__get_pydantic_core_schema__`), so it can be a field of a model, has a
    JSON Schema (docs/schemas/diff.schema.json), and `Diff.from_list` reads it back."""

    changes: list[RowChange] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.changes)

    def __iter__(self) -> Iterator[RowChange]:
        return iter(self.changes)

    def counts(self) -> dict[str, int]:
        out = {"insert": 0, "update": 0, "delete": 0}
        for change in self.changes:
            out[change.op] += 1
        return out

    def tables(self) -> list[str]:
        return sorted({c.table for c in self.changes})

    def to_list(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.changes]

    @classmethod
    def from_list(cls, items: Any) -> Diff:
        """A diff as recorded (a task's expected diff, a session's end event); pydantic's
        ValidationError (a ValueError) says what is malformed."""
        return _diff_adapter().validate_python(items)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        changes = handler.generate_schema(list[RowChange])
        return core_schema.no_info_after_validator_function(
            cls, changes, serialization=core_schema.plain_serializer_function_ser_schema(lambda diff: diff.changes, return_schema=changes)
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema.update(title="Diff", description="A net diff as a JSON list of row changes ({table, op, key, old?, new?}).")
        return json_schema


@cache
def _diff_adapter() -> TypeAdapter[Diff]:
    return TypeAdapter(Diff)


def diff_from_list(items: Any) -> Diff:
    """`Diff.from_list`, by its public name (`ebench.api`)."""
    return Diff.from_list(items)


def diff_json_schema() -> dict[str, Any]:
    """The JSON Schema of a recorded diff (docs/schemas/diff.schema.json)."""
    return _diff_adapter().json_schema()


def _shadow(table: str) -> str:
    return f"{INTERNAL_PREFIX}_old_{table}"


def tracker_script(schema: Schema, temp: bool = True) -> str:
    """The SQL that installs change tracking: a log of touched row ids, a shadow table per table
    for the original values, and triggers. `temp=False` puts them in the main schema, so a copy
    of a prepared database (serialize/deserialize) arrives with tracking already in place."""
    kind = "TEMP " if temp else ""
    target = "main." if temp else ""
    index_schema = "temp." if temp else ""
    statements = [
        f"CREATE {kind}TABLE IF NOT EXISTS {_LOG} (tbl TEXT NOT NULL, rid INTEGER NOT NULL, "
        "replaced INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tbl, rid)) WITHOUT ROWID"
    ]
    for table in schema.tables:
        t = table.name
        shadow = _shadow(t)
        old_values = ", ".join(f"OLD.{col}" for col in table.column_names)
        # The first touch of an original row saves its values; a row inserted during the trial
        # has no shadow, so its later updates save nothing (the rid is already logged).
        save_old = (
            f"INSERT OR IGNORE INTO {shadow} SELECT OLD.rowid, {old_values} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {_LOG} WHERE tbl = '{t}' AND rid = OLD.rowid); "
            f"INSERT OR IGNORE INTO {_LOG} (tbl, rid) VALUES ('{t}', OLD.rowid);"
        )
        # An insert on a rid whose original row was deleted marks it replaced.
        log_new = (
            f"INSERT INTO {_LOG} (tbl, rid) VALUES ('{t}', NEW.rowid) ON CONFLICT (tbl, rid) DO UPDATE "
            f"SET replaced = EXISTS (SELECT 1 FROM {shadow} WHERE _rid = NEW.rowid);"
        )
        statements += [
            f"CREATE {kind}TABLE IF NOT EXISTS {shadow} AS SELECT rowid AS _rid, * FROM main.{t} WHERE 0",
            f"CREATE UNIQUE INDEX IF NOT EXISTS {index_schema}{shadow}_rid ON {shadow} (_rid)",
            f"CREATE {kind}TRIGGER IF NOT EXISTS {INTERNAL_PREFIX}_{t}_bu BEFORE UPDATE ON {target}{t} BEGIN {save_old} END",
            f"CREATE {kind}TRIGGER IF NOT EXISTS {INTERNAL_PREFIX}_{t}_bd BEFORE DELETE ON {target}{t} BEGIN {save_old} END",
            f"CREATE {kind}TRIGGER IF NOT EXISTS {INTERNAL_PREFIX}_{t}_ai AFTER INSERT ON {target}{t} BEGIN {log_new} END",
            # A key change moves the row to another rid: log the new one as inserted.
            f"CREATE {kind}TRIGGER IF NOT EXISTS {INTERNAL_PREFIX}_{t}_au AFTER UPDATE ON {target}{t} "
            f"WHEN NEW.rowid != OLD.rowid BEGIN {log_new} END",
        ]
    return ";\n".join(statements) + ";"


class ChangeTracker:
    """Records every row change made on `conn` from now on; `diff()` gives the net change."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, install: bool = True) -> None:
        """`install=False`: the tracker's tables and triggers are already in `conn` (a copy of a
        database prepared with `tracker_script(schema, temp=False)`, see sessions/trial.py)."""
        self.conn = conn
        self.schema = schema
        for table in schema.tables:
            if not table.key:
                raise ValueError(f"table {table.name!r} has no primary key: its changes cannot be identified")
        if install:
            # One script: about 90 statements, several times faster than one execute() each.
            conn.executescript(tracker_script(schema))

    def checkpoint(self) -> None:
        """Forget the changes so far: `diff()` gives what changes from now on (a scenario's turns)."""
        self.conn.execute(f"DELETE FROM {_LOG}")
        for table in self.schema.tables:
            self.conn.execute(f"DELETE FROM {_shadow(table.name)}")

    def touched(self) -> int:
        """How many row ids were touched so far (before netting)."""
        count: int = self.conn.execute(f"SELECT COUNT(*) FROM {_LOG}").fetchone()[0]
        return count

    def diff(self) -> Diff:
        changes: list[RowChange] = []
        tables = [r[0] for r in self.conn.execute(f"SELECT DISTINCT tbl FROM {_LOG} ORDER BY tbl")]
        for name in tables:
            changes.extend(self._table_diff(self.schema.table(name)))
        changes.sort(key=RowChange.sort_key)
        return Diff(changes)

    def _table_diff(self, table: Table) -> list[RowChange]:
        cols = table.column_names
        col_list = ", ".join(cols)
        shadow = _shadow(table.name)
        log = {rid: replaced for rid, replaced in self.conn.execute(f"SELECT rid, replaced FROM {_LOG} WHERE tbl = ?", (table.name,))}
        old_rows = {
            r[0]: dict(zip(cols, r[1:]))
            for r in self.conn.execute(
                f"SELECT _rid, {col_list} FROM {shadow} WHERE _rid IN (SELECT rid FROM {_LOG} WHERE tbl = ?)", (table.name,)
            )
        }
        new_rows = {
            r[0]: dict(zip(cols, r[1:]))
            for r in self.conn.execute(
                f"SELECT rowid, {col_list} FROM main.{table.name} WHERE rowid IN (SELECT rid FROM {_LOG} WHERE tbl = ?)", (table.name,)
            )
        }
        return net_changes(table, [(old_rows.get(rid), new_rows.get(rid), bool(replaced)) for rid, replaced in log.items()])


def net_changes(table: Table, touched: list[tuple[Row | None, Row | None, bool]]) -> list[RowChange]:
    """Net row changes from (original row, current row, id reused) triples of one table."""
    key_cols = table.key
    volatile = set(table.volatile_columns)
    deleted: dict[tuple[Any, ...], Row] = {}
    inserted: dict[tuple[Any, ...], Row] = {}
    out: list[RowChange] = []

    def key_of(row: Row) -> tuple[Any, ...]:
        return tuple(row[k] for k in key_cols)

    for old, new, replaced in touched:
        if old is None and new is None:
            continue  # inserted then deleted: cancels
        if old is not None and new is not None and not replaced and key_of(old) == key_of(new):
            change = _update(table, old, new, volatile)
            if change:
                out.append(change)
            continue
        if old is not None:
            deleted[key_of(old)] = old
        if new is not None:
            inserted[key_of(new)] = new
    if not table.has_generated_id:
        # A natural key deleted and inserted again is the same row: fold into an update.
        for key in sorted(set(deleted) & set(inserted), key=lambda k: tuple(_sortable(v) for v in k)):
            change = _update(table, deleted.pop(key), inserted.pop(key), volatile)
            if change:
                out.append(change)
    out.extend(RowChange(table.name, "delete", dict(zip(key_cols, k)), old=row) for k, row in deleted.items())
    out.extend(RowChange(table.name, "insert", dict(zip(key_cols, k)), new=row) for k, row in inserted.items())
    return out


def _update(table: Table, old: Row, new: Row, volatile: set[str]) -> RowChange | None:
    changed = [c for c in table.column_names if c not in volatile and old[c] != new[c]]
    if not changed:
        return None
    return RowChange(
        table.name, "update", {k: old[k] for k in table.key}, old={c: old[c] for c in changed}, new={c: new[c] for c in changed}
    )


def full_diff(world: sqlite3.Connection, trial: sqlite3.Connection, schema: Schema) -> Diff:
    """The same net diff by comparing every row of both databases: slow, and independent of the
    triggers. It is the reference the tracker is tested against (and a fallback for a trial
    database whose tracker was lost)."""
    changes: list[RowChange] = []
    for table in schema.tables:
        cols = table.column_names
        sql = f"SELECT rowid, {', '.join(cols)} FROM {table.name}"
        before = {r[0]: dict(zip(cols, r[1:])) for r in world.execute(sql)}
        after = {r[0]: dict(zip(cols, r[1:])) for r in trial.execute(sql)}
        touched = []
        for rid in before.keys() | after.keys():
            old, new = before.get(rid), after.get(rid)
            if old == new:
                continue
            # Without a log, a reused id is indistinguishable from an update when the key is equal.
            touched.append((old, new, False))
        changes.extend(net_changes(table, touched))
    changes.sort(key=RowChange.sort_key)
    return Diff(changes)
