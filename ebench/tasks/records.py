"""The serialized forms of a diff and a grade: what a task file's expected diff and a session's end
event hold, and what regrade, the timeline and the app read back.

The models validate on read and dump to exactly the JSON written before they existed (keys absent
rather than null where the writers left them out), so old files and new files look alike.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel, SerializerFunctionWrapHandler, model_serializer

from .diff import Diff, RowChange

JsonValue = Any  # a column value as SQLite gives it: None, int, float, str (or bytes, shown by repr)


class RowChangeRecord(BaseModel):
    """One row's net change (`diff.RowChange`): `old`/`new` are absent when not applicable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    op: Literal["insert", "update", "delete"]
    key: dict[str, JsonValue]
    old: dict[str, JsonValue] | None = None
    new: dict[str, JsonValue] | None = None

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {name: value for name, value in data.items() if not (name in ("old", "new") and value is None)}

    @classmethod
    def of(cls, change: RowChange) -> RowChangeRecord:
        return cls(table=change.table, op=change.op, key=change.key, old=change.old, new=change.new)

    def change(self) -> RowChange:
        return RowChange(self.table, self.op, dict(self.key), self.old, self.new)


class DiffRecord(RootModel[list[RowChangeRecord]]):
    """A net diff as a JSON list of row changes (`Diff.to_list()`)."""

    @classmethod
    def of(cls, diff: Diff) -> DiffRecord:
        return cls([RowChangeRecord.of(c) for c in diff])

    def diff(self) -> Diff:
        return Diff([record.change() for record in self.root])


class WrongValueRecord(BaseModel):
    """A column the trial set to another value than expected. `old` (the world's value before the
    trial) is present for updates only, and may be null there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    op: Literal["insert", "update", "delete"] = "update"
    key: dict[str, JsonValue]
    column: str
    expected: JsonValue = None
    actual: JsonValue = None
    old: JsonValue = None

    @model_serializer(mode="wrap")
    def _old_for_updates(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.op != "update":
            data.pop("old", None)
        return data


class GradeRecord(BaseModel):
    """A grade as recorded in a session's end event (`grading.Grade.to_dict()`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    passed: bool
    expected_rows: int
    actual_rows: int
    matched_rows: int
    precision: float
    recall: float
    missing: list[RowChangeRecord] = []
    unexpected: list[RowChangeRecord] = []
    wrong: list[WrongValueRecord] = []
    note: str = ""


def diff_from_list(items: list[dict[str, Any]]) -> Diff:
    """A diff as recorded (a task's expected diff, a session's end event); pydantic's
    ValidationError (a ValueError) says what is malformed."""
    return DiffRecord.model_validate(items).diff()
