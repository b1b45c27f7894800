"""What the domains' tools share when they query: a WHERE clause built together with its
parameters, a row looked up by id, and the checks on dates and text that tools apply to what
the solver sends.

A filter adds its condition and the values it binds in one call, so a condition and its
parameters can never drift apart:

    where = Where().add("s.artist_id = ?", artist_id)
    env.all(SONG_SELECT + where.clause, where.params)

    where = NamedWhere(u=env.actor_id).add("p.region = :region", region=region)
    env.all(f"SELECT ... FROM players p WHERE {where.condition}", where.params)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .tools import ErrorCode, ToolEnv, ToolError, not_found

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class _Conditions:
    """Conditions joined by AND; the subclasses keep the values they bind."""

    def __init__(self) -> None:
        self.conditions: list[str] = []

    @property
    def condition(self) -> str:
        """The conditions joined by AND, or "1" (always true) when there are none."""
        return " AND ".join(self.conditions) or "1"

    @property
    def clause(self) -> str:
        """ " WHERE <conditions>" to append to a statement, or "" when there are none."""
        return " WHERE " + " AND ".join(self.conditions) if self.conditions else ""


class Where(_Conditions):
    """A WHERE clause with positional (`?`) parameters, each condition added with its values."""

    def __init__(self) -> None:
        super().__init__()
        self._values: list[Any] = []

    def add(self, condition: str, *values: Any) -> Where:
        self.conditions.append(condition)
        self._values.extend(values)
        return self

    @property
    def params(self) -> list[Any]:
        return list(self._values)


class NamedWhere(_Conditions):
    """A WHERE clause with named (`:name`) parameters. `values` given when it is made are bound
    for the whole statement (such as `u` for the current user in the selected columns)."""

    def __init__(self, **values: Any) -> None:
        super().__init__()
        self._values: dict[str, Any] = dict(values)

    def add(self, condition: str, **values: Any) -> NamedWhere:
        self.conditions.append(condition)
        self._values.update(values)
        return self

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._values)


def require(env: ToolEnv, table: str, ident: int, what: str) -> dict[str, Any]:
    """The row of `table` with this id, or not_found naming it as `what` ("No song with id 7.")."""
    row = env.one(f"SELECT * FROM {table} WHERE id = ?", (ident,))
    if row is None:
        raise not_found(what, ident)
    return row


def is_date(text: str) -> bool:
    """Whether `text` is a real calendar day written YYYY-MM-DD (strptime alone accepts
    2024-5-1, which would then compare wrongly as text)."""
    if not _DATE.fullmatch(text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def check_date(value: str | None, name: str, *, example: str) -> str | None:
    """A YYYY-MM-DD date argument (None when left out); `example` is the date the message shows."""
    if value is not None and not is_date(value):
        raise ToolError(ErrorCode.INVALID_VALUE, f"{name} must be a date like {example}, got {value!r}.")
    return value


def check_date_range(start: str | None, end: str | None, start_name: str, end_name: str, *, example: str) -> None:
    """Two optional date arguments bounding a range: each a date, the start not after the end."""
    check_date(start, start_name, example=example)
    check_date(end, end_name, example=example)
    if start and end and start > end:
        raise ToolError(ErrorCode.INVALID_VALUE, f"{start_name} ({start}) is after {end_name} ({end}).")


def check_text(value: str, name: str, longest: int, shortest: int = 1) -> str:
    """A text argument stripped of surrounding blanks, refused unless its length is in range."""
    text = value.strip()
    if not shortest <= len(text) <= longest:
        raise ToolError(ErrorCode.INVALID_VALUE, f"{name} must be {shortest} to {longest} characters long.")
    return text


def sql_literal(text: str) -> str:
    """A SQL string literal, for ORDER BY expressions (which paginate does not parameterise)."""
    return "'" + text.replace("'", "''") + "'"


def bool_columns(*names: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A row shaper turning SQLite's 0/1 in these columns into false/true (NULL stays null)."""

    def shape(row: dict[str, Any]) -> dict[str, Any]:
        for name in names:
            if row.get(name) is not None:
                row[name] = bool(row[name])
        return row

    return shape
