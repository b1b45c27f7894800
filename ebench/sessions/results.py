"""The results line: what a run keeps about a finished trial, one JSON line of `results.jsonl`.

`TrialSummary` is written by the trial (and a batch, which adds the limits that applied) and read
back by the metrics, the report, regrade and the app. It dumps to the same JSON as before it was a
model: the same keys in the same order, cost and seconds rounded, `limits` only when set, and any
key it does not know (`regraded`, or one a later version adds) kept as it was read.

Reading is lenient where the scores always were: a missing or null count is 0, a missing grade
means ungraded. A field of the wrong type is a `ResultsLineError` naming the trial and the field.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError, model_serializer

from ..errors import InputError
from ..tasks.grading import Grade
from ..tasks.spec import Task
from .objects import JsonObject
from .terminations import Termination

RESULTS_FORMAT = "ebench-results/1"  # the version of the results line (named by its JSON schema)


def _null_is_zero(value: Any) -> Any:
    return 0 if value is None else value


def _empty_is_none(value: Any) -> Any:
    return None if value == {} else value


# Strict: a count written as "7" or true is a damaged record, not a number to guess at.
Count = Annotated[int, Strict(), BeforeValidator(_null_is_zero)]
Seconds = Annotated[float, Strict(), BeforeValidator(_null_is_zero)]
Rate = Annotated[float, Strict()]


class ResultsLineError(InputError, ValueError):
    """A results line that cannot be read or scored (a field of the wrong type); the message says
    which trial and which field."""


class GradeCounts(BaseModel):
    """A grade reduced to its counts (the full grade is in the session's end event)."""

    model_config = ConfigDict(extra="allow")

    expected_rows: Count = 0
    actual_rows: Annotated[int, Strict()] | None = None  # None: not recorded (no "left unchanged" verdict)
    matched_rows: Count = 0
    missing: Count = 0
    unexpected: Count = 0
    wrong: Count = 0
    precision: Rate | None = None
    recall: Rate | None = None

    @classmethod
    def of(cls, result: Grade) -> GradeCounts:
        return cls(
            expected_rows=result.expected_rows,
            actual_rows=result.actual_rows,
            matched_rows=result.matched_rows,
            missing=len(result.missing),
            unexpected=len(result.unexpected),
            wrong=len(result.wrong),
            precision=round(result.precision, 4),
            recall=round(result.recall, 4),
        )


def grade_counts(result: Grade) -> GradeCounts:
    return GradeCounts.of(result)


class ScenarioTurnResult(JsonObject):
    """A scenario's turn in a results line: its kind and whether it passed."""

    kind: str = ""
    passed: bool = False


class PerturbationRecord(JsonObject):
    """A perturbed trial's perturbation (perturb.py): its subtypes and seed; a start event adds the
    request as the solver saw it (when reworded) and the layer's notes."""

    subtypes: list[str] = Field(default_factory=list)
    seed: int = 0
    request: str | None = None
    notes: list[str] | None = None


class TrialSummary(BaseModel):
    """What a run keeps about a finished trial (one line of results.jsonl)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, validate_assignment=False)

    task: Annotated[str, Strict()]
    trial: Annotated[int, Strict()]
    domain: str = ""
    capabilities: list[Annotated[str, Strict()]] = Field(default_factory=list)
    passed: Annotated[bool, Strict()]
    termination: Termination | None = None  # None: not recorded (counted as "unknown")
    error: str | None = None
    session: str = ""
    tool_calls: Count = 0
    inner_calls: Count = 0
    exec_blocks: Count = 0
    turns: Count = 0
    tokens_in: Count = 0
    tokens_out: Count = 0
    cost: Annotated[float, Strict()] | None = None  # None: the price is unknown
    seconds: Seconds = 0.0
    reference_calls: Count = 0
    # The agent's path: model turns that made calls, and the fewest a perfect agent needs (see
    # ebench.tasks.paths); None and 0 when not measured (no model turns, or an older line).
    call_turns: Annotated[int, Strict()] | None = None
    optimal_turns: Count = 0
    # A task whose user holds facts (users.py): whether the agent asked for them before its first
    # write; None for a task without a user profile (and an older line).
    asked_first: Annotated[bool, Strict()] | None = None
    # A scenario (tasks/scenarios.py): each turn's kind and verdict, in order; None for a task.
    scenario_turns: list[ScenarioTurnResult] | None = None
    grade: Annotated[GradeCounts | None, BeforeValidator(_empty_is_none)] = None
    tool_errors: dict[str, Count] = Field(default_factory=dict)
    solver: str = ""
    # perturbed runs (perturb.py): {subtypes, seed}, and the failed calls by stage; None when clean
    perturbation: PerturbationRecord | None = None
    failure_stages: dict[str, Count] | None = None
    limits: dict[str, Count] | None = None  # the limits that applied (the run's, raised by the task's budget)
    regraded: str | None = None  # the ebench version that last regraded the line (see regrade.py)
    # Recorded as "infra_error"; a line also counts as one by its termination (see `infra_error`).
    marked_infra: Annotated[bool, Strict()] = Field(default=False, validation_alias="infra_error")

    @classmethod
    def not_started(cls, task: Task, trial: int, session: str, error: str) -> TrialSummary:
        """A trial that never got a world copy: an infrastructure error, left out of the scores."""
        return cls(
            task=task.id,
            trial=trial,
            domain=task.domain,
            capabilities=list(task.capabilities),
            passed=False,
            termination=Termination.INFRA_ERROR,
            error=error,
            session=session,
            cost=None,
            seconds=0.0,
            reference_calls=len(task.reference_solution),
            grade=None,
        )

    @classmethod
    def read(cls, data: Any) -> TrialSummary:
        """A results line from its JSON object; ResultsLineError says which field is wrong."""
        if isinstance(data, cls):
            return data
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ResultsLineError(_one_line(data, exc)) from None

    @property
    def infra_error(self) -> bool:
        return self.marked_infra or self.termination == Termination.INFRA_ERROR

    @model_serializer(mode="plain")
    def _as_written(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "trial": self.trial,
            "domain": self.domain,
            "capabilities": self.capabilities,
            "solver": self.solver,
            "passed": self.passed,
            "termination": None if self.termination is None else str(self.termination),
            "infra_error": self.infra_error,
            "error": self.error,
            "session": self.session,
            "tool_calls": self.tool_calls,
            "inner_calls": self.inner_calls,
            "exec_blocks": self.exec_blocks,
            "turns": self.turns,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": None if self.cost is None else round(self.cost, 8),
            "seconds": round(self.seconds, 4),
            "reference_calls": self.reference_calls,
            # only when measured: a line of an older version, or of a trial without model turns, reads back as written
            **({"call_turns": self.call_turns} if self.call_turns is not None else {}),
            **({"optimal_turns": self.optimal_turns} if self.optimal_turns else {}),
            **({"asked_first": self.asked_first} if self.asked_first is not None else {}),
            **({"scenario_turns": [_json(turn) for turn in self.scenario_turns]} if self.scenario_turns is not None else {}),
            "grade": None if self.grade is None else self.grade.model_dump(),
            "tool_errors": self.tool_errors,
            **({"perturbation": _json(self.perturbation)} if self.perturbation is not None else {}),
            **({"failure_stages": self.failure_stages} if self.failure_stages is not None else {}),
            **({"limits": self.limits} if self.limits is not None else {}),
            **({"regraded": self.regraded} if self.regraded is not None else {}),
            **(self.model_extra or {}),
        }

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def _json(value: Any) -> Any:
    """A nested object's JSON (a value assigned as a plain dict stays one)."""
    return value.to_dict() if isinstance(value, JsonObject) else value


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema of a results line (as read), titled with its format version."""
    schema = TrialSummary.model_json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:{RESULTS_FORMAT.replace('/', ':')}",
        **schema,
        "title": f"ebench results line ({RESULTS_FORMAT})",
    }


_NUMBER_ERRORS = ("int_type", "float_type", "int_parsing", "float_parsing", "int_from_float")


def _one_line(data: Any, exc: ValidationError) -> str:
    """The first problem of a results line, in one line naming the trial and the field."""
    where = f"result {data.get('task')}/{data.get('trial')}" if isinstance(data, dict) else "result"
    error = exc.errors()[0]
    names = [str(part) for part in error["loc"] if isinstance(part, str)]
    field = names[-1] if names else "line"
    value = error.get("input")
    if names[:1] == ["capabilities"]:
        return f"{where}: capabilities must be a list of names"
    if error["type"] in _NUMBER_ERRORS:
        return f"{where}: {field} must be a number, not {value!r}"
    if error["type"] in ("dict_type", "model_type", "model_attributes_type"):
        return f"{where}: {field} must be an object, not {value!r}"
    return f"{where}: {field}: {error['msg']}"
