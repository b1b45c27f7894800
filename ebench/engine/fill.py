"""Seeded, graph-ordered filling.

Tables are filled in the schema's topological order with foreign keys enforced, so a row can
only point at rows that exist. Each table's generator gets its own RNG and Faker seeded from
(seed, table): changing one generator does not reshuffle the others.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import EBenchError
from .schema import Schema

if TYPE_CHECKING:
    from faker import Faker

Row = dict[str, Any]
Generator = Callable[["FillContext"], Iterable[Row]]


class FillError(EBenchError, RuntimeError):
    """A generator produced a row the database refused (a missing parent, a broken constraint)."""


def derive_seed(seed: int, *labels: str) -> int:
    """A stable 64-bit seed for a sub-stream; hash-based so it is the same on every platform."""
    digest = hashlib.sha256(":".join([str(seed), *labels]).encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass
class FillContext:
    """What a table generator sees: the database filled so far, its RNG, Faker, the clock."""

    conn: sqlite3.Connection
    schema: Schema
    table: str
    rng: random.Random
    faker: Faker
    now: str
    seed: int
    # One dict per build, the same for every table: a plan drawn once and used by several
    # generators (an organisation chart, a calendar) lives here, never in module state.
    shared: dict[str, Any] = field(default_factory=dict)

    def ids(self, table: str, where: str = "") -> list[int]:
        """Primary keys of rows that exist in `table` (optionally filtered), in key order."""
        key = self.schema.table(table).key[0]
        sql = f"SELECT {key} FROM {table}" + (f" WHERE {where}" if where else "") + f" ORDER BY {key}"
        return [r[0] for r in self.conn.execute(sql)]

    def rows(self, table: str, columns: str = "*", where: str = "") -> list[sqlite3.Row]:
        """Existing rows of a filled table, in key order."""
        order = ", ".join(self.schema.table(table).key)
        sql = f"SELECT {columns} FROM {table}" + (f" WHERE {where}" if where else "") + f" ORDER BY {order}"
        cur = self.conn.execute(sql)
        cur.row_factory = sqlite3.Row
        return cur.fetchall()


@dataclass
class TableFill:
    table: str
    rows: int
    seconds: float


def fill(
    conn: sqlite3.Connection,
    schema: Schema,
    generators: Mapping[str, Generator],
    seed: int,
    now: str,
    faker_locales: list[str],
    on_table: Callable[[TableFill], None] | None = None,
) -> list[TableFill]:
    """Fill every table of `schema` in topological order. Returns per-table row counts."""
    from faker import Faker  # heavy import: only at build time

    missing = [t.name for t in schema.tables if t.name not in generators]
    extra = [name for name in generators if name not in schema]
    if missing or extra:
        raise FillError(
            "generators do not match the schema"
            + (f"; no generator for: {', '.join(missing)}" if missing else "")
            + (f"; generator for unknown table: {', '.join(extra)}" if extra else "")
        )
    faker = Faker(faker_locales)
    conn.execute("PRAGMA foreign_keys=ON")
    results: list[TableFill] = []
    shared: dict[str, Any] = {}
    for name in schema.fill_order():
        started = time.perf_counter()
        table = schema.table(name)
        faker.seed_instance(derive_seed(seed, name, "faker"))
        ctx = FillContext(
            conn=conn,
            schema=schema,
            table=name,
            rng=random.Random(derive_seed(seed, name)),
            faker=faker,
            now=now,
            seed=seed,
            shared=shared,
        )
        rows = list(generators[name](ctx))
        count = _insert(conn, table.name, table.column_names, rows)
        result = TableFill(name, count, time.perf_counter() - started)
        results.append(result)
        if on_table:
            on_table(result)
    return results


def _insert(conn: sqlite3.Connection, table: str, columns: list[str], rows: list[Row]) -> int:
    if not rows:
        return 0
    unknown = set().union(*(r.keys() for r in rows)) - set(columns)
    if unknown:
        raise FillError(f"generator for {table!r} produced unknown columns: {sorted(unknown)}")
    used = [c for c in columns if any(c in r for r in rows)]
    sql = f"INSERT INTO {table} ({', '.join(used)}) VALUES ({', '.join('?' for _ in used)})"
    values = [tuple(r.get(c) for c in used) for r in rows]
    conn.execute("SAVEPOINT fill_batch")
    try:
        conn.executemany(sql, values)
    except sqlite3.IntegrityError as exc:
        # executemany does not say which row failed: replay one by one to name it.
        conn.execute("ROLLBACK TO fill_batch")
        for row, value in zip(rows, values):
            try:
                conn.execute(sql, value)
            except sqlite3.IntegrityError as row_exc:
                conn.execute("ROLLBACK TO fill_batch")
                conn.execute("RELEASE fill_batch")
                raise FillError(f"table {table!r} refused row {row}: {row_exc}") from exc
        conn.execute("RELEASE fill_batch")
        raise FillError(f"table {table!r} refused a row: {exc}") from exc
    conn.execute("RELEASE fill_batch")
    return len(rows)
