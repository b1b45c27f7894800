"""The task specification (format `ebench-task/1`): loading, validating and saving task files.

A task file is one JSON object. Loading checks every field against the domain it names (its
tools, tables and key columns) and reports the first problem as a `TaskFileError` naming the
file and the field, so a malformed task never crashes a run half-way: a suite loader collects
the errors and keeps the good tasks.

A reference-solution argument may refer to an earlier step's result (a playlist created in
step 0, used in step 1) as `{"$from": 0, "path": "playlist_id"}`; `resolve_args` substitutes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn

from pydantic import ConfigDict, Field, StrictInt, StrictStr, model_serializer
from pydantic.json_schema import SkipJsonSchema
from typing_extensions import TypedDict  # pydantic reads typing's TypedDict only from Python 3.12

from ..errors import InputError
from .diff import Diff, RowChange
from .records import PositionalModel, trusted

if TYPE_CHECKING:
    from ..engine.domain import Domain
    from ..engine.schema import Table

TASK_FORMAT = "ebench-task/1"
CAPABILITIES = (
    "complete_data_acquisition",
    "multi_condition_filtering",
    "aggregation_computation",
    "cross_step_dependency",
    "precise_boundary_judgement",
    "cross_entity_cascade",
)
CAPABILITY_TITLES = {
    "complete_data_acquisition": "Complete data acquisition",
    "multi_condition_filtering": "Multi-condition filtering",
    "aggregation_computation": "Aggregation and computation",
    "cross_step_dependency": "Cross-step dependency",
    "precise_boundary_judgement": "Precise boundary judgement",
    "cross_entity_cascade": "Cross-entity cascade",
}
CAPABILITY_SHORT = {
    "complete_data_acquisition": "acquisition",
    "multi_condition_filtering": "filtering",
    "aggregation_computation": "aggregation",
    "cross_step_dependency": "dependency",
    "precise_boundary_judgement": "boundary",
    "cross_entity_cascade": "cascade",
}
_ID = re.compile(r"^[a-z][a-z0-9_-]{2,80}$")


def capability_named(name: str) -> str | None:
    """The capability a user means by `name`: its id or its short display name ("aggregation")."""
    wanted = name.strip().lower().replace("-", "_").replace(" ", "_")
    for cap in CAPABILITIES:
        if wanted in (cap, CAPABILITY_SHORT[cap]):
            return cap
    return None


class TaskWorld(TypedDict, total=False):
    """The world a task was made on: both keys, or none in a file older than worlds (`{}`)."""

    seed: int
    fingerprint: str


class TaskBudget(TypedDict, total=False):
    """The limits a correct solver finishes within (absent in older files)."""

    max_tool_calls: int
    max_turns: int


class TaskStats(TypedDict, total=False):
    """The expected diff's changed rows by kind (`diff_stats`); the loader checks the counts it knows."""

    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]  # other keys are kept, as they always were
    changed_rows: int
    inserts: int
    updates: int
    deletes: int
    tables: list[str]


class TaskFileError(InputError, ValueError):
    """A task file that cannot be used; the message names the file and the field."""

    def __init__(self, source: str, field_name: str, message: str) -> None:
        super().__init__(f"{source}: {field_name}: {message}")
        self.source = source
        self.field = field_name
        self.reason = message


@dataclass(frozen=True)
class UserFact:
    """A fact the request leaves out and the user holds: the scripted user gives `answer` when the
    agent's question holds one of the `asked_by` words (whole words, any case)."""

    about: str
    asked_by: tuple[str, ...]
    answer: str

    def to_dict(self) -> dict[str, Any]:
        return {"about": self.about, "asked_by": list(self.asked_by), "answer": self.answer}


class Step(PositionalModel):
    """One step of a reference solution as a task file holds it: a tool and its arguments."""

    # Made positionally as `Step(tool, args)` by templates and plug-ins.

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    args: dict[str, Any]

    if TYPE_CHECKING:

        def __init__(self, tool: str, args: dict[str, Any]) -> None: ...

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": self.args}


class Task(PositionalModel):
    """A task file as JSON (what `ebench tasks schema` prints), and the task a run loads from it. What
    each field must hold in the domain it names (its tools, tables, key columns) is checked by
    `parse_task`."""

    model_config = ConfigDict(extra="forbid", title="ebench task")
    # Made positionally as the dataclass it replaced was: `Task(id, domain, actor, query, ...)`.
    _positional: ClassVar[tuple[str, ...]] = (
        "id",
        "domain",
        "actor",
        "query",
        "capabilities",
        "expected_diff",
        "reference_solution",
        "generator",
        "stats",
        "world",
        "budget",
        "source",
        "user_profile",
        "paraphrases",
        "scenario",
    )

    format: StrictStr = Field(default=TASK_FORMAT, description=f"always {TASK_FORMAT!r}", json_schema_extra={"const": TASK_FORMAT})
    id: StrictStr = Field(
        description="unique id: lowercase letters, digits, '-' and '_' (e.g. 'music-0042')", json_schema_extra={"pattern": _ID.pattern}
    )
    domain: StrictStr = Field(description="the world the task runs in")
    actor: StrictInt = Field(description="id of the user the solver acts for", json_schema_extra={"minimum": 1})
    query: StrictStr = Field(description="the request, in the user's words")
    capabilities: list[str] = Field(
        description=f"one or more of {', '.join(CAPABILITIES)}",
        json_schema_extra={"items": {"enum": list(CAPABILITIES)}, "minItems": 1},
    )
    expected_diff: Diff = Field(
        description="the net row changes a correct solution makes: {table, op, key, old?, new?}",
        json_schema_extra={"minItems": 1},
    )
    reference_solution: list[Step] = Field(
        description="steps {tool, args} that produce expected_diff on a fresh copy",
        json_schema_extra={"minItems": 1},
    )
    generator: dict[str, Any] = Field(default_factory=dict, description="how the task was made: {template, seed, ...}")
    stats: TaskStats = Field(
        default_factory=lambda: TaskStats(), description="changed rows by kind: {changed_rows, inserts, updates, deletes, tables}"
    )
    world: TaskWorld = Field(
        default_factory=lambda: TaskWorld(),
        description="the world the task was made on: {seed, fingerprint}; a run refuses the task on another world",
    )
    budget: TaskBudget = Field(
        default_factory=lambda: TaskBudget(),
        description="limits a correct solver finishes within: {max_tool_calls, max_turns}; a run uses the larger of these and its own",
    )
    user_profile: list[UserFact] = Field(
        default_factory=list,
        description="facts the request leaves out, which the user gives only when asked: {about, asked_by: [words], answer}",
    )
    paraphrases: list[StrictStr] = Field(
        default_factory=list,
        description="the request in other words, with the same values (`ebench tasks paraphrases`; used by `--perturb intent:paraphrase`)",
    )
    # Not in the file: where it came from (for messages), and the Scenario it stands for (scenarios.py).
    source: SkipJsonSchema[str] = Field(default="", exclude=True)
    scenario: SkipJsonSchema[Any] = Field(default=None, exclude=True, repr=False)

    if TYPE_CHECKING:

        def __init__(
            self,
            id: str,
            domain: str,
            actor: int,
            query: str,
            capabilities: list[str],
            expected_diff: Diff,
            reference_solution: list[Step],
            generator: dict[str, Any] = ...,
            stats: TaskStats = ...,
            world: TaskWorld = ...,
            budget: TaskBudget = ...,
            source: str = "",
            user_profile: list[UserFact] = ...,
            paraphrases: list[str] = ...,
            scenario: Any = None,
            *,
            format: str = TASK_FORMAT,
        ) -> None: ...

    @model_serializer(mode="plain")
    def to_dict(self) -> dict[str, Any]:
        """The task file's JSON object (also `model_dump()`): optional fields written only when set."""
        return {
            "format": TASK_FORMAT,
            "id": self.id,
            "domain": self.domain,
            "actor": self.actor,
            "query": self.query,
            "capabilities": self.capabilities,
            "expected_diff": self.expected_diff.to_list(),
            "reference_solution": [s.to_dict() for s in self.reference_solution],
            "generator": self.generator,
            "stats": self.stats or diff_stats(self.expected_diff),
            **({"world": self.world} if self.world else {}),
            **({"budget": self.budget} if self.budget else {}),
            **({"user_profile": [f.to_dict() for f in self.user_profile]} if self.user_profile else {}),
            **({"paraphrases": self.paraphrases} if self.paraphrases else {}),
        }

    def to_json(self) -> str:
        """Readable and diff-friendly: one field per line, one change or step per line."""
        lines = []
        for name, value in self.to_dict().items():
            if name in ("expected_diff", "reference_solution") and value:
                items = ",\n".join(f"  {compact_json(item)}" for item in value)
                lines.append(f' "{name}": [\n{items}\n ]')
            else:
                lines.append(f" {json.dumps(name)}: {compact_json(value)}")
        return "{\n" + ",\n".join(lines) + "\n}\n"


def compact_json(value: Any) -> str:
    """One-line JSON, as task files and `ebench tasks show` print values."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def diff_stats(diff: Diff) -> TaskStats:
    counts = diff.counts()
    return {
        "changed_rows": len(diff),
        "inserts": counts["insert"],
        "updates": counts["update"],
        "deletes": counts["delete"],
        "tables": diff.tables(),
    }


def resolve_args(args: dict[str, Any], results: list[Any]) -> dict[str, Any]:
    """Substitute `{"$from": step, "path": "a.b"}` references by the earlier results' values."""

    def resolve(value: Any) -> Any:
        if isinstance(value, dict) and "$from" in value:
            current = results[value["$from"]]
            for part in str(value.get("path", "")).split("."):
                if part:
                    current = current[int(part)] if isinstance(current, list) else current[part]
            return current
        if isinstance(value, list):
            return [resolve(v) for v in value]
        return value

    return {k: resolve(v) for k, v in args.items()}


def remap_references(args: Any, new_index: Callable[[int], int]) -> Any:
    """`args` with every `{"$from": step, ...}` step index mapped to `new_index(step)` (the steps
    were reordered, repeated, or moved into a longer list)."""
    if isinstance(args, dict):
        if "$from" in args:
            return {**args, "$from": new_index(int(args["$from"]))}
        return {k: remap_references(v, new_index) for k, v in args.items()}
    if isinstance(args, list):
        return [remap_references(v, new_index) for v in args]
    return args


def references(args: Any) -> Iterator[Any]:
    """The steps the `{"$from": step, ...}` references in `args` name, wherever they sit."""
    if isinstance(args, dict):
        if "$from" in args:
            yield args["$from"]
            return
        for value in args.values():
            yield from references(value)
    elif isinstance(args, list):
        for value in args:
            yield from references(value)


def parse_task(data: Any, source: str = "<task>") -> Task:
    """A validated Task from decoded JSON, or TaskFileError naming the field at fault. The document's
    shape is checked first (each field's JSON type, as the task's schema gives it), then what its
    fields mean in the domain, in the order of the fields."""
    from ..engine.domain_registry import UnknownDomain, get_domain

    def fail(field_name: str, message: str) -> NoReturn:
        raise TaskFileError(source, field_name, message)

    if not isinstance(data, dict):
        fail("(document)", f"a task is a JSON object, got {type(data).__name__}")
    _check_shape(data, fail)
    doc = {name: data[name] if name in data else info.get_default(call_default_factory=True) for name, info in _DOCUMENT.items()}
    if doc["format"] != TASK_FORMAT:
        fail("format", f"unsupported format {doc['format']!r}; this ebench reads {TASK_FORMAT!r}")
    if not _ID.match(doc["id"]):
        fail("id", f"{doc['id']!r} is not a valid id (lowercase letters, digits, '-', '_'; 3-81 characters)")
    try:
        domain = get_domain(doc["domain"])
    except UnknownDomain as exc:
        fail("domain", str(exc))
    if not doc["query"].strip():
        fail("query", "empty")
    _check_capabilities(doc["capabilities"], fail)
    steps = _steps(doc["reference_solution"], domain, fail)
    diff = _expected_diff(doc["expected_diff"], domain, fail)
    _check_stats(doc["stats"], diff, fail)
    if not 1 <= doc["actor"] <= INT64_MAX:
        fail("actor", "must be a positive integer id (64-bit)")
    _check_world(doc["world"], fail)
    _check_budget(doc["budget"], fail)
    profile = _user_profile(doc["user_profile"], fail)
    for i, text in enumerate(doc["paraphrases"]):
        if not text.strip():
            fail(f"paraphrases[{i}]", "empty")
    # Every field checked above: made without validating again (a suite loads hundreds).
    values = {
        **doc,
        "domain": domain.name,
        "capabilities": list(doc["capabilities"]),
        "expected_diff": diff,
        "reference_solution": steps,
        "generator": dict(doc["generator"]),
        "stats": dict(doc["stats"]) or diff_stats(diff),
        "world": dict(doc["world"]),
        "budget": dict(doc["budget"]),
        "user_profile": profile,
        "paraphrases": list(doc["paraphrases"]),
        "source": source,
        "scenario": None,
    }
    return trusted(Task, values)


Fail = Callable[[str, str], NoReturn]  # raises the TaskFileError of a field

# The fields a task file holds, in the order it writes them (`source` and `scenario` are not written).
_DOCUMENT = {name: info for name, info in Task.model_fields.items() if not info.exclude}
# A file names its format: required there, though a Task made in Python gets it by default.
_REQUIRED = frozenset(["format", *(name for name, info in _DOCUMENT.items() if info.is_required())])
_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "array": list, "object": dict}


@cache
def _json_types() -> dict[str, str]:
    """Each field's JSON type, as the schema names it (for the one-line message of a wrong type)."""
    return {name: prop["type"] for name, prop in task_json_schema()["properties"].items()}


def _check_shape(data: dict[str, Any], fail: Fail) -> None:
    """The first shape problem: a missing or mistyped field in the fields' order, then an unknown
    field (the first by name). A field's items are checked with what they mean, later."""
    for name in _DOCUMENT:
        if name not in data:
            if name in _REQUIRED:
                fail(name, "missing")
            continue
        value, json_type = data[name], _json_types()[name]
        mistyped = not isinstance(value, _PYTHON_TYPES[json_type]) or (json_type == "integer" and isinstance(value, bool))
        if mistyped or (name == "paraphrases" and not all(isinstance(text, str) for text in value)):
            fail(name, f"must be a JSON {json_type}, got {type(value).__name__}")
    unknown = sorted(set(data) - set(_DOCUMENT))
    if unknown:
        fail(unknown[0], "unknown field")


def _check_capabilities(caps: list[Any], fail: Fail) -> None:
    if not caps:
        fail("capabilities", "at least one capability is required")
    for i, cap in enumerate(caps):
        if cap not in CAPABILITIES:
            fail(f"capabilities[{i}]", f"unknown capability {cap!r}; known: {', '.join(CAPABILITIES)}")
    if len(set(caps)) != len(caps):
        fail("capabilities", "a capability is listed twice")


def _steps(items: list[Any], domain: Domain, fail: Fail) -> list[Step]:
    steps: list[Step] = []
    for i, step in enumerate(items):
        where = f"reference_solution[{i}]"
        if not isinstance(step, dict) or set(step) != {"tool", "args"}:
            fail(where, 'each step is an object {"tool": NAME, "args": {...}}')
        if not isinstance(step["tool"], str) or step["tool"] not in domain.tools.names:
            fail(f"{where}.tool", f"no tool {step['tool']!r} in the {domain.name} domain")
        if not isinstance(step["args"], dict):
            fail(f"{where}.args", "must be a JSON object")
        _check_references(step["args"], i, f"{where}.args", fail)
        steps.append(trusted(Step, {"tool": step["tool"], "args": step["args"]}))  # checked above
    if not steps:
        fail("reference_solution", "at least one step is required")
    return steps


def _expected_diff(items: list[Any], domain: Domain, fail: Fail) -> Diff:
    changes = [_row_change(item, f"expected_diff[{i}]", domain, fail) for i, item in enumerate(items)]
    if not changes:
        fail("expected_diff", "a task must change something")
    return Diff(changes)


def _row_change(item: Any, where: str, domain: Domain, fail: Fail) -> RowChange:
    from ..engine.schema import SchemaError

    if not isinstance(item, dict):
        fail(where, "each change is a JSON object")
    extra = sorted(set(item) - {"table", "op", "key", "old", "new"})
    if extra:
        fail(f"{where}.{extra[0]}", "unknown field")
    try:
        table = domain.schema.table(item.get("table"))  # type: ignore[arg-type]
    except (SchemaError, TypeError):
        fail(f"{where}.table", f"no table {item.get('table')!r} in the {domain.name} world")
    op = item.get("op")
    if op not in ("insert", "update", "delete"):
        fail(f"{where}.op", f"must be insert, update or delete, got {op!r}")
    key = item.get("key")
    if not isinstance(key, dict) or set(key) != set(table.key):
        fail(f"{where}.key", f"must give exactly the key columns {list(table.key)} of {table.name}")
    for column, value in key.items():
        if not isinstance(value, (int, str)) or isinstance(value, bool) or _bad_value(value):
            fail(f"{where}.key.{column}", "a key value is an integer (64-bit) or a string")
    needs = {"insert": ("new",), "delete": ("old",), "update": ("old", "new")}[op]
    for part in ("old", "new"):
        value = item.get(part)
        if part in needs and not isinstance(value, dict):
            fail(f"{where}.{part}", f"a {op} needs {' and '.join(needs)} values")
        if part not in needs and value is not None:
            fail(f"{where}.{part}", f"a {op} has no {part} values")
        if isinstance(value, dict):
            _check_row(value, op, f"{where}.{part}", table, fail)
    return RowChange(table.name, op, key, item.get("old"), item.get("new"))


def _check_row(row: dict[str, Any], op: str, where: str, table: Table, fail: Fail) -> None:
    unknown_cols = sorted(set(row) - set(table.column_names))
    if unknown_cols:
        fail(f"{where}.{unknown_cols[0]}", f"{table.name} has no such column")
    for column, cell in row.items():
        if _bad_value(cell):
            fail(
                f"{where}.{column}", f"a value is null, a boolean, a 64-bit integer, a finite number or a string, got {type(cell).__name__}"
            )
    if op != "update" and set(row) != set(table.column_names):
        fail(where, f"a whole {table.name} row is needed: {table.column_names}")


def _check_stats(stats: dict[str, Any], diff: Diff, fail: Fail) -> None:
    if not stats:
        return
    expected_stats = diff_stats(diff)
    for name in ("changed_rows", "inserts", "updates", "deletes"):
        if name in stats and stats[name] != expected_stats[name]:
            fail(f"stats.{name}", f"says {stats[name]} but expected_diff has {expected_stats[name]}")


def _check_world(world: dict[str, Any], fail: Fail) -> None:
    if not world:
        return
    if set(world) != {"seed", "fingerprint"}:
        fail("world", 'must be {"seed": <integer>, "fingerprint": <string>}')
    if not isinstance(world["seed"], int) or isinstance(world["seed"], bool):
        fail("world.seed", "must be an integer")
    if not isinstance(world["fingerprint"], str) or not world["fingerprint"]:
        fail("world.fingerprint", "must be a non-empty string")


def _check_budget(budget: dict[str, Any], fail: Fail) -> None:
    for name, value in budget.items():
        if name not in ("max_tool_calls", "max_turns"):
            fail(f"budget.{name}", "unknown field (max_tool_calls, max_turns)")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            fail(f"budget.{name}", "must be a positive integer")


def _user_profile(items: list[Any], fail: Fail) -> list[UserFact]:
    facts = []
    for i, item in enumerate(items):
        where = f"user_profile[{i}]"
        if not isinstance(item, dict) or set(item) != {"about", "asked_by", "answer"}:
            fail(where, 'each fact is an object {"about": TEXT, "asked_by": [WORD, ...], "answer": TEXT}')
        words = item["asked_by"]
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w.strip() for w in words):
            fail(f"{where}.asked_by", "a non-empty list of words")
        for name in ("about", "answer"):
            if not isinstance(item[name], str) or not item[name].strip():
                fail(f"{where}.{name}", "a non-empty string")
        facts.append(UserFact(item["about"], tuple(words), item["answer"]))
    return facts


INT64_MAX = 2**63 - 1


def _bad_value(value: Any) -> bool:
    """Not a value a SQLite cell holds (a list, an object, an integer beyond 64 bits, NaN)."""
    if value is None or isinstance(value, (bool, str)):
        return False
    if isinstance(value, int):
        return not -INT64_MAX - 1 <= value <= INT64_MAX
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    return True


def _check_references(args: Any, step: int, where: str, fail: Fail) -> None:
    if isinstance(args, dict):
        if "$from" in args:
            ref = args["$from"]
            if set(args) - {"$from", "path"} or not isinstance(ref, int) or isinstance(ref, bool) or not 0 <= ref < step:
                fail(where, f'a reference is {{"$from": <earlier step>, "path": "field"}}; step {step} cannot use {args!r}')
            return
        for k, v in args.items():
            _check_references(v, step, f"{where}.{k}", fail)
    elif isinstance(args, list):
        for i, v in enumerate(args):
            _check_references(v, step, f"{where}[{i}]", fail)


def load_task(path: str | Path) -> Task:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(str(path), "(file)", exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise TaskFileError(str(path), "(file)", "not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(str(path), "(json)", f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise TaskFileError(str(path), "(json)", "nested too deeply") from None
    try:
        return parse_task(data, str(path))
    except RecursionError:  # a reference solution's arguments nested thousands deep
        raise TaskFileError(str(path), "reference_solution", "nested too deeply") from None


@dataclass
class LoadReport:
    tasks: list[Task]
    errors: list[TaskFileError]


def load_tasks(paths: Iterable[str | Path]) -> LoadReport:
    """Load many task files: good ones are kept, bad ones reported (never a crash half-way);
    duplicate ids are errors for the later files. A `.jsonl` path holds one task per line (see
    `load_task_lines`)."""
    tasks: list[Task] = []
    errors: list[TaskFileError] = []
    seen: dict[str, str] = {}
    for path in paths:
        loaded = load_task_lines(path) if Path(path).suffix == ".jsonl" else [_task_or_error(path)]
        for item in loaded:
            if isinstance(item, TaskFileError):
                errors.append(item)
            elif item.id in seen:
                errors.append(TaskFileError(item.source, "id", f"{item.id!r} is already used by {seen[item.id]}"))
            else:
                seen[item.id] = item.source
                tasks.append(item)
    return LoadReport(tasks, errors)


def _task_or_error(path: str | Path) -> Task | TaskFileError:
    try:
        return load_task(path)
    except TaskFileError as exc:
        return exc


# The fields of a task document, in the order a task file writes them (a dataset's columns).
TASK_FIELDS = tuple(_DOCUMENT)
_SCALAR_FIELDS = ("format", "id", "domain", "actor", "query")

# The fields a task document holds as an object or an array: a JSONL line may give them as JSON
# text, as a table (a dataset's Arrow columns) must hold rows of differing shapes.
_STRUCTURED = tuple(name for name in _DOCUMENT if name not in _SCALAR_FIELDS)


def load_task_lines(path: str | Path) -> list[Task | TaskFileError]:
    """The tasks of a JSONL file, one per non-blank line, each a task or the error naming its line
    (`FILE:LINE`). A line is a task document, or a row of the exported dataset
    (`ebench export dataset`) as `datasets` writes it back: a structured field may be its JSON
    text, and an optional field may be null (absent)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return [TaskFileError(str(path), "(file)", exc.strerror or str(exc))]
    except UnicodeDecodeError:
        return [TaskFileError(str(path), "(file)", "not UTF-8 text")]
    loaded: list[Task | TaskFileError] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            loaded.append(_task_line(line, f"{path}:{number}"))
    return loaded


def _task_line(line: str, source: str) -> Task | TaskFileError:
    try:
        data = json.loads(line)
        if isinstance(data, dict):
            data = _document_of_row(data, source)
        return parse_task(data, source)
    except json.JSONDecodeError as exc:
        return TaskFileError(source, "(json)", f"column {exc.colno}: {exc.msg}")
    except RecursionError:
        return TaskFileError(source, "(json)", "nested too deeply")
    except TaskFileError as exc:
        return exc


def _document_of_row(row: dict[str, Any], source: str) -> dict[str, Any]:
    """A dataset row as the task document it stands for: JSON text of a structured field decoded,
    a null optional field left out (a required one stays, and is reported missing by its type)."""
    document = {}
    for name, value in row.items():
        if value is None and name in _DOCUMENT and name not in _REQUIRED:
            continue
        if name in _STRUCTURED and isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise TaskFileError(source, name, f"JSON text that does not parse: column {exc.colno}: {exc.msg}") from None
        document[name] = value
    return document


def task_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the task format, for editors and other tools: the model's,
    titled and identified with the format version."""
    schema = Task.model_json_schema()
    # Each field's shape inline, as it always was (what it must hold in the domain, parse_task checks).
    defs = schema.pop("$defs")

    def inline(part: dict[str, Any]) -> dict[str, Any]:
        ref = part.pop("$ref", None)
        return {**defs[ref.rsplit("/", 1)[1]], **part} if ref else part

    for name, prop in schema["properties"].items():
        schema["properties"][name] = prop = inline(prop)
        if isinstance(prop.get("items"), dict):
            prop["items"] = inline(prop["items"])
    schema["required"] = [name for name in _DOCUMENT if name in _REQUIRED]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:{TASK_FORMAT.replace('/', ':')}",
        **schema,
        "title": f"ebench task ({TASK_FORMAT})",
    }
