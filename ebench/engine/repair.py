"""Validation and repair after filling.

Generators are written to be plausible, not perfect; these deterministic rules then make the
world consistent: chronology (nothing before what it depends on, nothing after the frozen now),
stored aggregates equal to their child rows, status fields that agree with the data. Each check
counts what it looked at and what it repaired, and the build prints that report.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import EBenchError


class RepairError(EBenchError, RuntimeError):
    """The checks did not reach a consistent world (a repair rule undoes another)."""


@dataclass
class CheckResult:
    name: str
    kind: str  # "chronology" | "clock" | "aggregate" | "status"
    description: str
    checked: int
    repaired: int


class Check(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def description(self) -> str: ...

    def violations(self, conn: sqlite3.Connection, now: str) -> int: ...
    def checked(self, conn: sqlite3.Connection) -> int: ...
    def repair(self, conn: sqlite3.Connection, now: str) -> int: ...


def _count(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


@dataclass
class NotBefore:
    """child.column must not be earlier than the referenced parent's column.

    Repair moves the child to a deterministic moment after the parent (a few hours, varied by
    the child's key), never past the clock. `fmt` is "date" or "datetime" (the child's format).
    """

    table: str
    column: str
    fk: str  # the child's column that references the parent
    parent: str
    parent_column: str
    parent_key: str = "id"
    key: str = "rowid"
    fmt: str = "datetime"
    kind: str = "chronology"

    @property
    def name(self) -> str:
        return f"{self.table}.{self.column} >= {self.parent}.{self.parent_column}"

    @property
    def description(self) -> str:
        return f"{self.table}.{self.column} is not before its {self.parent}.{self.parent_column}"

    def _parent_value(self) -> str:
        return f"(SELECT p.{self.parent_column} FROM {self.parent} p WHERE p.{self.parent_key} = {self.table}.{self.fk})"

    def _where(self) -> str:
        return f"{self.column} < {self._parent_value()}"

    def checked(self, conn: sqlite3.Connection) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table} WHERE {self.fk} IS NOT NULL")

    def violations(self, conn: sqlite3.Connection, now: str) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table} WHERE {self._where()}")

    def repair(self, conn: sqlite3.Connection, now: str) -> int:
        if self.fmt == "date":
            moved = f"date({self._parent_value()}, '+' || ({self.key} % 20) || ' days')"
            limit = "date(?)"
        else:
            moved = f"datetime({self._parent_value()}, '+' || (1 + {self.key} % 71) || ' hours')"
            limit = "?"
        sql = f"UPDATE {self.table} SET {self.column} = min({moved}, {limit}) WHERE {self._where()}"
        return conn.execute(sql, (now,)).rowcount


@dataclass
class NotAfterNow:
    """Nothing happens after the domain's frozen clock."""

    table: str
    column: str
    fmt: str = "datetime"
    kind: str = "clock"

    @property
    def name(self) -> str:
        return f"{self.table}.{self.column} <= now"

    @property
    def description(self) -> str:
        return f"{self.table}.{self.column} is not after the frozen clock"

    def _now(self, now: str) -> str:
        return now[:10] if self.fmt == "date" else now

    def checked(self, conn: sqlite3.Connection) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table} WHERE {self.column} IS NOT NULL")

    def violations(self, conn: sqlite3.Connection, now: str) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table} WHERE {self.column} > ?", (self._now(now),))

    def repair(self, conn: sqlite3.Connection, now: str) -> int:
        sql = f"UPDATE {self.table} SET {self.column} = ? WHERE {self.column} > ?"
        return conn.execute(sql, (self._now(now), self._now(now))).rowcount


@dataclass
class Aggregate:
    """A stored aggregate equals what its child rows say (a playlist's song count)."""

    table: str
    column: str
    child: str
    fk: str
    expr: str = "COUNT(*)"
    key: str = "id"
    kind: str = "aggregate"

    @property
    def name(self) -> str:
        what = "count" if self.expr == "COUNT(*)" else "sum"
        return f"{self.table}.{self.column} = {what} of {self.child}"

    @property
    def description(self) -> str:
        return f"{self.table}.{self.column} equals {self.expr} over its {self.child}"

    def _value(self) -> str:
        return f"(SELECT COALESCE({self.expr}, 0) FROM {self.child} c WHERE c.{self.fk} = {self.table}.{self.key})"

    def checked(self, conn: sqlite3.Connection) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table}")

    def violations(self, conn: sqlite3.Connection, now: str) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table} WHERE {self.column} IS NOT {self._value()}")

    def repair(self, conn: sqlite3.Connection, now: str) -> int:
        sql = f"UPDATE {self.table} SET {self.column} = {self._value()} WHERE {self.column} IS NOT {self._value()}"
        return conn.execute(sql).rowcount


@dataclass
class Rule:
    """A domain rule stated as SQL: `violation` is a WHERE clause over `table` that selects the
    rows breaking the rule; `fix` is the statement(s) that repair them (it may use `?` for now).
    A rule without a fix only verifies what the generators guarantee by construction (rows a
    repair could not invent): any violation fails the build at once."""

    name: str
    description: str
    table: str
    violation: str
    fix: str | tuple[str, ...] | None
    kind: str = "status"

    def checked(self, conn: sqlite3.Connection) -> int:
        return _count(conn, f"SELECT COUNT(*) FROM {self.table}")

    def violations(self, conn: sqlite3.Connection, now: str) -> int:
        sql = f"SELECT COUNT(*) FROM {self.table} WHERE {self.violation}"
        return _count(conn, sql, (now,) * sql.count("?"))

    def repair(self, conn: sqlite3.Connection, now: str) -> int:
        before = self.violations(conn, now)
        if self.fix is None:
            raise RepairError(f"rule {self.name!r} is violated by {before} rows and cannot be repaired: the generators must guarantee it")
        for statement in (self.fix,) if isinstance(self.fix, str) else self.fix:
            conn.execute(statement, (now,) * statement.count("?"))
        return before


def validate_and_repair(conn: sqlite3.Connection, checks: list[Check], now: str, max_rounds: int = 6) -> list[CheckResult]:
    """Run every check, repairing, until a whole round finds nothing (repairs can cascade:
    moving an album's date can move its songs'). Fails if the world does not settle."""
    repaired = {id(c): 0 for c in checks}
    for _ in range(max_rounds):
        changed = 0
        for check in checks:
            if check.violations(conn, now):
                count = check.repair(conn, now)
                repaired[id(check)] += count
                changed += count
        if not changed:
            break
    remaining = [c.name for c in checks if c.violations(conn, now)]
    if remaining:
        raise RepairError("the world did not settle; still violated: " + "; ".join(remaining))
    return [CheckResult(c.name, c.kind, c.description, c.checked(conn), repaired[id(c)]) for c in checks]
