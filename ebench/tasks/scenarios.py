"""Scenarios: conversations of several user turns over one world copy (WildToolBench-style).

A scenario is one actor's conversation: an ordered list of turns, each one of

- `task`: a request, graded like any task (its expected diff);
- `follow_up`: a request whose meaning depends on the turn before ("now the same for Rock
  instead of Jazz"); its task holds the full request it stands for;
- `compound`: one message holding two independent requests; the turn's expected diff is both
  tasks' (which touch different rows, so it is their union);
- `chained`: one message holding two requests, the second using the first's result (an entity
  it creates, named by description, or changes that move the second's answer); one task whose
  expected diff is the net change of both;
- `reference` / `long_range`: a request that names an earlier turn's result or value by
  description ("the playlist you just made", "the same note as in my first request"): the turn
  before's (`reference`) or one two or more turns back (`long_range`); `refers_to` says which;
- `switch`: a request whose user changes a value mid-request ("... actually, make that Blues");
  graded on the new value;
- `clarify`: a request that leaves a value out (asking.py), silently: the user holds it in the
  turn's user profile and gives it when asked; acting before asking fails the turn;
- `chat`: a message that needs no change to the world; the turn passes when nothing changed
  (reads are allowed: an agent may look up the account it answers about).

Each task-bearing turn embeds its tasks (certified by scenario_generation.py on the world as the
earlier turns' expected changes leave it). Grading: after each turn, the changes made since the
previous turn ended are compared with the turn's expected diff; a failed turn does not stop the
scenario; the scenario passes (session accuracy) when every turn passed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PrivateAttr,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .diff import Diff
from .grading import Grade, grade
from .spec import Step, Task, TaskBudget, TaskFileError, TaskWorld, UserFact, parse_task, remap_references, task_json_schema

SCENARIO_FORMAT: Final = "ebench-scenario/1"
SCENARIOS_VERSION = "scenarios-3"
Kind = Literal["task", "follow_up", "compound", "chained", "reference", "long_range", "switch", "clarify", "chat"]
KINDS: tuple[Kind, ...] = get_args(Kind)
TASK_COUNT = {"task": 1, "follow_up": 1, "compound": 2, "chained": 1, "reference": 1, "long_range": 1, "switch": 1, "clarify": 1, "chat": 0}
REFERRING = ("follow_up", "reference", "long_range")  # kinds whose turn names the earlier turn it depends on
SCENARIOS_DIR = Path(__file__).resolve().parent / "splits" / "scenarios"
_ID = re.compile(r"^[a-z][a-z0-9_-]{2,80}$")
_TURN_SHAPE = 'each turn is {"kind": ..., "message": ..., "tasks": [...], "refers_to": ...}'
# What a field holds, as a bad file is told (by the field's name; a turn's by its index).
_EXPECTED = {
    "id": "lowercase letters, digits, '-' and '_' (3-81 characters)",
    "domain": "a domain name",
    "actor": "a positive integer id",
    "world": "an object",
    "generator": "an object",
    "turns": "a non-empty list of turns",
    "kind": f"one of {', '.join(KINDS)}",
    "message": "a non-empty string",
    "refers_to": "the index of an earlier turn",
    "tasks": "a list of tasks",
}


class _Problem(ValueError):
    """A check across fields failed: `field` (under the model's place in the file) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class _EmbeddedTask:
    """A turn's task: a Task in Python; in the file, the task document (`parse_task` checks it
    against its domain); its JSON Schema the task file's."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(
            _task, serialization=core_schema.plain_serializer_function_ser_schema(Task.to_dict)
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {}  # the task file's schema, put in by scenario_json_schema (its definitions beside the scenario's)


def _task(value: Any) -> Task:
    # parse_task's TaskFileError (a ValueError) reaches parse_scenario inside the ValidationError.
    return value if isinstance(value, Task) else parse_task(value)


class Turn(BaseModel):
    """One user turn: its kind, what the user says, the tasks it is graded by, the turn it refers to."""

    model_config = ConfigDict(extra="forbid", title="scenario turn")

    kind: Kind = Field(description="what the turn asks of the agent (the module's docstring: ebench/tasks/scenarios.py)")
    message: StrictStr = Field(description="what the user says")
    refers_to: StrictInt | None = Field(
        default=None, ge=0, description=f"the earlier turn (0-based) a {', '.join(REFERRING)} turn depends on"
    )
    tasks: list[Annotated[Task, _EmbeddedTask()]] = Field(
        default_factory=list,
        description="the tasks the turn is graded by (each a task file's document): "
        + ", ".join(f"{kind} {count}" for kind, count in TASK_COUNT.items()),
    )

    @field_validator("message")
    @classmethod
    def _said(cls, message: str) -> str:
        if not message.strip():
            raise ValueError("empty")
        return message

    @model_validator(mode="after")
    def _fits_its_kind(self) -> Turn:
        if len(self.tasks) != TASK_COUNT[self.kind]:
            raise _Problem("tasks", f"a {self.kind} turn has {TASK_COUNT[self.kind]} task(s)")
        if self.kind == "clarify" and not self.tasks[0].user_profile:
            raise _Problem("tasks", "a clarify turn's task holds the user profile it needs")
        if self.refers_to is not None and self.kind not in REFERRING:
            raise _Problem("refers_to", f"only a {', '.join(REFERRING)} turn refers to an earlier one")
        return self

    @model_serializer(mode="wrap")
    def _written(self, handler: core_schema.SerializerFunctionWrapHandler) -> dict[str, Any]:
        # As the files hold a turn: no refers_to when it refers to none, no tasks when it has none.
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if not (k == "refers_to" and v is None or k == "tasks" and not v)}

    @property
    def expected_diff(self) -> Diff:
        return Diff([change for task in self.tasks for change in task.expected_diff])

    @property
    def user_profile(self) -> list[UserFact]:
        return [fact for task in self.tasks for fact in task.user_profile]

    def reference_steps(self, offset: int = 0) -> list[Step]:
        """The turn's tasks' reference solutions one after the other, each `$from` reference moved
        to its step's place in that list (plus `offset`: where the list starts in a longer one)."""
        steps: list[Step] = []
        for task in self.tasks:
            shift = offset + len(steps)

            def moved(index: int, by: int = shift) -> int:
                return index + by

            steps.extend(Step(step.tool, remap_references(step.args, moved)) for step in task.reference_solution)
        return steps

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


class Scenario(BaseModel):
    """A scenario file (`ebench-scenario/1`): one actor's conversation over one world copy."""

    model_config = ConfigDict(extra="forbid", title=f"ebench scenario ({SCENARIO_FORMAT})")

    format: Literal["ebench-scenario/1"] = Field(default=SCENARIO_FORMAT, description=f"always {SCENARIO_FORMAT!r}")
    id: StrictStr = Field(pattern=_ID.pattern, description="unique id: lowercase letters, digits, '-' and '_' (e.g. 'music-s001')")
    domain: StrictStr = Field(description="the world the conversation runs in")
    actor: StrictInt = Field(ge=1, description="id of the user the agent acts for (every task's actor)")
    world: TaskWorld = Field(default_factory=lambda: TaskWorld(), description="the world it was made on: {seed, fingerprint}")
    generator: dict[str, Any] = Field(default_factory=dict, description="how it was made: {seed, pattern: [kind, ...]}")
    turns: list[Turn] = Field(min_length=1, description="the user's turns, in order")
    _source: str = PrivateAttr(default="")  # the file it came from, for messages

    @model_validator(mode="after")
    def _turns_fit(self) -> Scenario:
        for i, turn in enumerate(self.turns):
            if any((task.domain, task.actor) != (self.domain, self.actor) for task in turn.tasks):
                raise _Problem(f"turns[{i}].tasks", "every task of a scenario is the scenario's domain and actor")
            if turn.refers_to is not None and turn.refers_to >= i:
                raise _Problem(f"turns[{i}].refers_to", _EXPECTED["refers_to"])
        return self

    @property
    def source(self) -> str:
        return self._source

    @property
    def kinds(self) -> list[str]:
        return [turn.kind for turn in self.turns]

    def turn_spans(self) -> list[tuple[int, int]]:
        """Where each turn's steps stand in `as_task().reference_solution`: (start, end)."""
        spans, start = [], 0
        for turn in self.turns:
            end = start + sum(len(task.reference_solution) for task in turn.tasks)
            spans.append((start, end))
            start = end
        return spans

    def as_task(self) -> Task:
        """The scenario as the task a trial runs (its id, actor and world; the turns' changes and
        solutions one after the other): what results lines, reports and the app read."""
        tasks = [task for turn in self.turns for task in turn.tasks]
        caps = [c for c in dict.fromkeys(c for task in tasks for c in task.capabilities)]
        more = 5 * len(self.turns)  # room to read each turn's message and answer it
        budget = TaskBudget(
            max_tool_calls=sum(task.budget.get("max_tool_calls", 0) for task in tasks) + more,
            max_turns=sum(task.budget.get("max_turns", 0) for task in tasks) + more,
        )
        return Task(
            id=self.id,
            domain=self.domain,
            actor=self.actor,
            query=self.turns[0].message,
            capabilities=caps or ["cross_step_dependency"],
            expected_diff=Diff([c for turn in self.turns for c in turn.expected_diff]),
            reference_solution=[step for turn, (start, _) in zip(self.turns, self.turn_spans()) for step in turn.reference_steps(start)],
            generator={"scenario": self.kinds, **self.generator},
            world=self.world.copy(),
            budget=budget,
            source=self.source,
            scenario=self,
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n"


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """A validated Scenario, or TaskFileError naming the field at fault (the first, in the file's order)."""
    if not isinstance(data, dict):
        raise TaskFileError(source, "(document)", "a scenario is a JSON object")
    if data.get("format") != SCENARIO_FORMAT:
        raise TaskFileError(source, "format", f"expected {SCENARIO_FORMAT!r}")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise _file_error(exc, source) from None
    scenario._source = source
    return scenario


def _file_error(exc: ValidationError, source: str) -> TaskFileError:
    """The first problem pydantic found, as the one-line TaskFileError naming its field."""
    error = exc.errors()[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]).lstrip(".")
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, TaskFileError):  # an embedded task's own message, placed in the scenario
        return TaskFileError(f"{source}: {where}", cause.field, cause.reason)
    if isinstance(cause, _Problem):
        return TaskFileError(source, f"{where}.{cause.field}".lstrip("."), cause.message)
    if error["type"] == "extra_forbidden":
        return TaskFileError(source, where, "unknown field")
    names = [part for part in error["loc"] if isinstance(part, str)]
    if error["loc"][-1:] != tuple(names[-1:]):  # a turn itself, not one of its fields
        return TaskFileError(source, where, _TURN_SHAPE)
    return TaskFileError(source, where, _EXPECTED.get(names[-1], "invalid") if names else "invalid")


def scenario_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the scenario file, from the model: `format` is required in a file."""
    schema = Scenario.model_json_schema()
    schema["required"] = ["format", *schema["required"]]
    task = {k: v for k, v in task_json_schema().items() if k not in ("$schema", "$id")}
    defs = schema["$defs"]
    for name, definition in task.pop("$defs", {}).items():
        if defs.setdefault(name, definition) != definition:  # a name both records use is one model (e.g. TaskWorld)
            raise RuntimeError(f"two definitions named {name!r} in the scenario schema")
    defs["Task"] = task
    defs["Turn"]["properties"]["tasks"]["items"] = {"$ref": "#/$defs/Task"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"urn:{SCENARIO_FORMAT.replace('/', ':')}", **schema}


def load_scenario(path: Path) -> Scenario:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskFileError(str(path), "(file)", exc.strerror or str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskFileError(str(path), "(json)", str(exc)) from None
    return parse_scenario(data, str(path))


def scenario_files(root: Path | None = None, domain: str | None = None) -> list[Path]:
    return sorted((root or SCENARIOS_DIR).glob(f"{domain or '*'}/*.json"))


def load_scenarios(
    root: Path | None = None, domain: str | None = None, ids: list[str] | None = None
) -> tuple[list[Scenario], list[TaskFileError]]:
    """The scenarios of `root` (default: the shipped ones); bad files are reported, not raised."""
    found: list[Scenario] = []
    errors: list[TaskFileError] = []
    for path in scenario_files(root, domain):
        try:
            scenario = load_scenario(path)
        except TaskFileError as exc:
            errors.append(exc)
            continue
        if not ids or scenario.id in ids:
            found.append(scenario)
    return found, errors


def turn_grade(turn: Turn, diff: Diff, calls: int, schema: Any, acted_early: str = "") -> Grade:
    """A turn's grade from the changes made during it: a chat turn passes when nothing changed
    (reads are harmless); any other turn by its expected diff, and a clarify turn also fails
    when the agent acted before asking (`acted_early`: the rule's note, users.py)."""
    if turn.kind == "chat":
        passed = not len(diff)
        note = "" if passed else f"a turn that needs no change: {len(diff)} row(s) changed in {calls} call(s)"
        return Grade(passed, 0, len(diff), 0, unexpected=list(diff), note=note)
    result = grade(turn.expected_diff, diff, schema)
    if acted_early and result.passed:
        result = result.model_copy(update={"passed": False, "note": acted_early})
    return result


def not_reached(turn: Turn) -> Grade:
    """The grade of a turn the trial never got to (it ended first): nothing done."""
    expected = list(turn.expected_diff)
    return Grade(False, len(expected), 0, 0, missing=expected, note="the trial ended before this turn")


def scenario_grade(turns: list[Grade]) -> Grade:
    """The whole scenario: it passes when every turn passed (session accuracy); the counts add up."""
    passed = sum(g.passed for g in turns)
    return Grade(
        passed=bool(turns) and passed == len(turns),
        expected_rows=sum(g.expected_rows for g in turns),
        actual_rows=sum(g.actual_rows for g in turns),
        matched_rows=sum(g.matched_rows for g in turns),
        missing=[c for g in turns for c in g.missing],
        unexpected=[c for g in turns for c in g.unexpected],
        wrong=[w for g in turns for w in g.wrong],
        note=f"{passed} of {len(turns)} turns passed",
    )


def scenario_counts(scenarios: list[Scenario]) -> dict[str, Any]:
    """What a set of scenarios holds: scenarios per domain, turns per kind, and per domain the
    distinct patterns (kinds in order) and the largest share of scenarios one pattern has."""
    counts: dict[str, int] = {}
    kinds: dict[str, int] = dict.fromkeys(KINDS, 0)
    patterns: dict[str, dict[tuple[str, ...], int]] = {}
    for scenario in scenarios:
        counts[scenario.domain] = counts.get(scenario.domain, 0) + 1
        mine = patterns.setdefault(scenario.domain, {})
        mine[tuple(scenario.kinds)] = mine.get(tuple(scenario.kinds), 0) + 1
        for kind in scenario.kinds:
            kinds[kind] = kinds.get(kind, 0) + 1
    shares = {
        name: {"distinct": len(found), "max_share": round(max(found.values()) / counts[name], 4)}
        for name, found in sorted(patterns.items())
    }
    return {"counts": dict(sorted(counts.items())), "kinds": kinds, "patterns": shares}


def write_scenario_record(root: Path, seed: int) -> dict[str, Any]:
    """The folder's suite.json: its version (what a run records), how it was made, what it holds."""
    found, _ = load_scenarios(root)
    record = {
        "about": "The shipped scenarios: conversations of 4 turns over one world copy, certified turn by turn "
        "(ebench/tasks/scenario_generation.py). Made with `ebench tasks scenarios -n 40 -s SEED --as-suite`; a test rebuilds the "
        "first ones and compares them byte for byte.",
        "version": SCENARIOS_VERSION,
        "seed": seed,
        **scenario_counts(found),
    }
    (root / "suite.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def find_scenario(scenario_id: str, root: Path | None = None) -> Scenario | None:
    """A shipped (or `root`'s) scenario by id (files are named after their scenario), or None."""
    for path in scenario_files(root):
        if path.stem == scenario_id:
            try:
                return load_scenario(path)
            except TaskFileError:
                return None
    return None
