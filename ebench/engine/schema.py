"""Declarative schema: tables, typed columns, keys, constraints, and the table dependency graph.

A domain declares its schema once; from it come the DDL, the fill order (topological order of
the foreign-key graph), the statistics, and the volatile columns that grading ignores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

INTEGER = "INTEGER"
TEXT = "TEXT"
REAL = "REAL"
_TYPES = {INTEGER, TEXT, REAL}

# Tables whose name starts with this prefix belong to ebench itself (build metadata), not the world.
INTERNAL_PREFIX = "_ebench"


class SchemaError(InputError, ValueError):
    """A schema that cannot be built: a cycle, an unknown table or column, a bad type."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    primary_key: bool = False
    not_null: bool = False
    unique: bool = False
    check: str | None = None
    default: Any = None
    references: str | None = None  # "table" or "table.column"; the column defaults to "id"
    on_delete: str | None = None  # "CASCADE", "SET NULL"; None keeps SQLite's NO ACTION
    volatile: bool = False  # ignored when grading (e.g. a playlist position that depends on call order)
    doc: str = ""

    @property
    def ref_table(self) -> str | None:
        return self.references.split(".", 1)[0] if self.references else None

    @property
    def ref_column(self) -> str | None:
        if not self.references:
            return None
        return self.references.split(".", 1)[1] if "." in self.references else "id"


@dataclass(frozen=True)
class ForeignKey:
    table: str
    column: str
    ref_table: str
    ref_column: str

    def __str__(self) -> str:
        return f"{self.table}.{self.column} -> {self.ref_table}.{self.ref_column}"


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()  # composite key; a single-column key is marked on the column
    unique: tuple[tuple[str, ...], ...] = ()
    checks: tuple[str, ...] = ()
    indexes: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise SchemaError(f"table {self.name!r} declares a column twice")
        for col in self.columns:
            if col.type not in _TYPES:
                raise SchemaError(f"column {self.name}.{col.name} has unknown type {col.type!r}")
        for group in (self.primary_key, *self.unique, *self.indexes):
            for name in group:
                if name.split()[0] not in names:  # an index term may add "COLLATE NOCASE" or "DESC"
                    raise SchemaError(f"table {self.name!r} has no column {name!r}")
        if self.primary_key and any(c.primary_key for c in self.columns):
            raise SchemaError(f"table {self.name!r} declares both a column key and a composite key")

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def key(self) -> tuple[str, ...]:
        """The primary key's column names."""
        if self.primary_key:
            return self.primary_key
        return tuple(c.name for c in self.columns if c.primary_key)

    @property
    def has_generated_id(self) -> bool:
        """True when the key is a single INTEGER column that SQLite allocates (rowid alias)."""
        cols = [c for c in self.columns if c.primary_key]
        return len(cols) == 1 and cols[0].type == INTEGER

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise SchemaError(f"table {self.name!r} has no column {name!r}")

    @property
    def foreign_keys(self) -> list[ForeignKey]:
        return [
            ForeignKey(self.name, c.name, c.ref_table, c.ref_column)  # type: ignore[arg-type]
            for c in self.columns
            if c.references
        ]

    @property
    def volatile_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.volatile]

    def ddl(self) -> list[str]:
        parts = []
        for c in self.columns:
            piece = f"{c.name} {c.type}"
            if c.primary_key:
                piece += " PRIMARY KEY"
            if c.not_null:
                piece += " NOT NULL"
            if c.unique:
                piece += " UNIQUE"
            if c.default is not None:
                piece += f" DEFAULT {_sql_literal(c.default)}"
            if c.check:
                piece += f" CHECK ({c.check})"
            if c.references:
                piece += f" REFERENCES {c.ref_table}({c.ref_column})"
                if c.on_delete:
                    piece += f" ON DELETE {c.on_delete}"
            parts.append(piece)
        if self.primary_key:
            parts.append(f"PRIMARY KEY ({', '.join(self.primary_key)})")
        for group in self.unique:
            parts.append(f"UNIQUE ({', '.join(group)})")
        for check in self.checks:
            parts.append(f"CHECK ({check})")
        statements = [f"CREATE TABLE {self.name} (\n  " + ",\n  ".join(parts) + "\n)"]
        # Every foreign key gets an index: tools join and filter on them constantly.
        indexed = [(fk.column,) for fk in self.foreign_keys if (fk.column,) != self.key[:1]]
        for group in [*indexed, *self.indexes]:
            name = f"idx_{self.name}_{'_'.join(term.split()[0] for term in group)}"
            statements.append(f"CREATE INDEX {name} ON {self.name} ({', '.join(group)})")
        return statements


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


@dataclass(frozen=True)
class Schema:
    tables: tuple[Table, ...]
    _by_name: dict[str, Table] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Table] = {}
        for table in self.tables:
            if table.name in by_name:
                raise SchemaError(f"table {table.name!r} is declared twice")
            if table.name.startswith(INTERNAL_PREFIX):
                raise SchemaError(f"table name {table.name!r} is reserved for ebench")
            by_name[table.name] = table
        object.__setattr__(self, "_by_name", by_name)
        for table in self.tables:
            for fk in table.foreign_keys:
                parent = by_name.get(fk.ref_table)
                if parent is None:
                    raise SchemaError(f"{fk.table}.{fk.column} references unknown table {fk.ref_table!r}")
                if fk.ref_column not in parent.column_names:
                    raise SchemaError(f"{fk.table}.{fk.column} references unknown column {fk.ref_table}.{fk.ref_column}")

    def table(self, name: str) -> Table:
        try:
            return self._by_name[name]
        except KeyError:
            raise SchemaError(f"unknown table {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def foreign_keys(self) -> list[ForeignKey]:
        return [fk for t in self.tables for fk in t.foreign_keys]

    @property
    def column_count(self) -> int:
        return sum(len(t.columns) for t in self.tables)

    def dependencies(self) -> dict[str, list[str]]:
        """Each table's parent tables (the tables it references), self-references left out:
        a table that points at itself (a reply to a comment) is filled parents-first by its
        own generator, so it adds no ordering constraint between tables."""
        deps: dict[str, list[str]] = {}
        for table in self.tables:
            parents: list[str] = []
            for fk in table.foreign_keys:
                if fk.ref_table != table.name and fk.ref_table not in parents:
                    parents.append(fk.ref_table)
            deps[table.name] = parents
        return deps

    def fill_order(self) -> list[str]:
        """Topological order of the dependency graph, stable: among tables that are ready,
        the one declared first goes first. A cycle is a SchemaError naming its tables."""
        deps = self.dependencies()
        done: set[str] = set()
        order: list[str] = []
        declared = [t.name for t in self.tables]
        while len(order) < len(declared):
            ready = [n for n in declared if n not in done and all(p in done for p in deps[n])]
            if not ready:
                remaining = [n for n in declared if n not in done]
                cycle = _find_cycle(deps, remaining)
                raise SchemaError("the tables' foreign keys form a cycle: " + " -> ".join(cycle))
            order.append(ready[0])
            done.add(ready[0])
        return order

    def ddl(self) -> list[str]:
        statements: list[str] = []
        for name in self.fill_order():
            statements.extend(self.table(name).ddl())
        return statements


def _find_cycle(deps: dict[str, list[str]], nodes: list[str]) -> list[str]:
    """A cycle among `nodes`, as a path that starts and ends on the same table."""
    node_set = set(nodes)
    for start in nodes:
        path = [start]
        seen = {start}
        current = start
        while True:
            nxt = next((p for p in deps[current] if p in node_set), None)
            if nxt is None:
                break
            if nxt in seen:
                return path[path.index(nxt) :] + [nxt]
            path.append(nxt)
            seen.add(nxt)
            current = nxt
    return nodes  # unreachable when every remaining node has a remaining parent
