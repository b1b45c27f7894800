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
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diff import Diff, RowChange

FORMAT = "ebench-task/1"
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


# field -> (JSON type, required, description): the validator and `task_json_schema()` share it.
FIELDS: dict[str, tuple[str, bool, str]] = {
    "format": ("string", True, f"always {FORMAT!r}"),
    "id": ("string", True, "unique id: lowercase letters, digits, '-' and '_' (e.g. 'music-0042')"),
    "domain": ("string", True, "the world the task runs in"),
    "actor": ("integer", True, "id of the user the solver acts for"),
    "query": ("string", True, "the request, in the user's words"),
    "capabilities": ("array", True, f"one or more of {', '.join(CAPABILITIES)}"),
    "expected_diff": ("array", True, "the net row changes a correct solution makes: {table, op, key, old?, new?}"),
    "reference_solution": ("array", True, "steps {tool, args} that produce expected_diff on a fresh copy"),
    "generator": ("object", False, "how the task was made: {template, seed, ...}"),
    "stats": ("object", False, "changed rows by kind: {changed_rows, inserts, updates, deletes, tables}"),
    "world": ("object", False, "the world the task was made on: {seed, fingerprint}; a run refuses the task on another world"),
    "budget": (
        "object",
        False,
        "limits a correct solver finishes within: {max_tool_calls, max_turns}; a run uses the larger of these and its own",
    ),
}
_JSON_TYPES = {"string": str, "integer": int, "array": list, "object": dict}


class TaskFileError(ValueError):
    """A task file that cannot be used; the message names the file and the field."""

    def __init__(self, source: str, field_name: str, message: str) -> None:
        super().__init__(f"{source}: {field_name}: {message}")
        self.source = source
        self.field = field_name
        self.reason = message


@dataclass(frozen=True)
class Step:
    tool: str
    args: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": self.args}


@dataclass
class Task:
    id: str
    domain: str
    actor: int
    query: str
    capabilities: list[str]
    expected_diff: Diff
    reference_solution: list[Step]
    generator: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    world: dict[str, Any] = field(default_factory=dict)  # {seed, fingerprint}; empty in older files
    budget: dict[str, int] = field(default_factory=dict)  # {max_tool_calls, max_turns}; empty in older files
    source: str = ""  # the file it came from, for messages

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
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


def diff_stats(diff: Diff) -> dict[str, Any]:
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


def parse_task(data: Any, source: str = "<task>") -> Task:
    """A validated Task from decoded JSON, or TaskFileError naming the field at fault."""
    from ..domains import UnknownDomain, get_domain
    from ..domains.engine.schema import SchemaError

    def fail(field_name: str, message: str) -> TaskFileError:
        return TaskFileError(source, field_name, message)

    if not isinstance(data, dict):
        raise fail("(document)", f"a task is a JSON object, got {type(data).__name__}")
    for name, (json_type, required, _) in FIELDS.items():
        if name not in data:
            if required:
                raise fail(name, "missing")
            continue
        value = data[name]
        if not isinstance(value, _JSON_TYPES[json_type]) or (json_type == "integer" and isinstance(value, bool)):
            raise fail(name, f"must be a JSON {json_type}, got {type(value).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise fail(unknown[0], "unknown field")
    if data["format"] != FORMAT:
        raise fail("format", f"unsupported format {data['format']!r}; this ebench reads {FORMAT!r}")
    if not _ID.match(data["id"]):
        raise fail("id", f"{data['id']!r} is not a valid id (lowercase letters, digits, '-', '_'; 3-81 characters)")
    try:
        domain = get_domain(data["domain"])
    except UnknownDomain as exc:
        raise fail("domain", str(exc)) from None
    if not data["query"].strip():
        raise fail("query", "empty")
    caps = data["capabilities"]
    if not caps:
        raise fail("capabilities", "at least one capability is required")
    for i, cap in enumerate(caps):
        if cap not in CAPABILITIES:
            raise fail(f"capabilities[{i}]", f"unknown capability {cap!r}; known: {', '.join(CAPABILITIES)}")
    if len(set(caps)) != len(caps):
        raise fail("capabilities", "a capability is listed twice")

    steps: list[Step] = []
    for i, step in enumerate(data["reference_solution"]):
        where = f"reference_solution[{i}]"
        if not isinstance(step, dict) or set(step) != {"tool", "args"}:
            raise fail(where, 'each step is an object {"tool": NAME, "args": {...}}')
        if not isinstance(step["tool"], str) or step["tool"] not in domain.tools.names:
            raise fail(f"{where}.tool", f"no tool {step['tool']!r} in the {domain.name} domain")
        if not isinstance(step["args"], dict):
            raise fail(f"{where}.args", "must be a JSON object")
        _check_references(step["args"], i, f"{where}.args", fail)
        steps.append(Step(step["tool"], step["args"]))
    if not steps:
        raise fail("reference_solution", "at least one step is required")

    changes: list[RowChange] = []
    for i, item in enumerate(data["expected_diff"]):
        where = f"expected_diff[{i}]"
        if not isinstance(item, dict):
            raise fail(where, "each change is a JSON object")
        extra = sorted(set(item) - {"table", "op", "key", "old", "new"})
        if extra:
            raise fail(f"{where}.{extra[0]}", "unknown field")
        try:
            table = domain.schema.table(item.get("table"))  # type: ignore[arg-type]
        except (SchemaError, TypeError):
            raise fail(f"{where}.table", f"no table {item.get('table')!r} in the {domain.name} world") from None
        op = item.get("op")
        if op not in ("insert", "update", "delete"):
            raise fail(f"{where}.op", f"must be insert, update or delete, got {op!r}")
        key = item.get("key")
        if not isinstance(key, dict) or set(key) != set(table.key):
            raise fail(f"{where}.key", f"must give exactly the key columns {list(table.key)} of {table.name}")
        for column, value in key.items():
            if not isinstance(value, (int, str)) or isinstance(value, bool) or _bad_value(value):
                raise fail(f"{where}.key.{column}", "a key value is an integer (64-bit) or a string")
        needs = {"insert": ("new",), "delete": ("old",), "update": ("old", "new")}[op]
        for part in ("old", "new"):
            value = item.get(part)
            if part in needs and not isinstance(value, dict):
                raise fail(f"{where}.{part}", f"a {op} needs {' and '.join(needs)} values")
            if part not in needs and value is not None:
                raise fail(f"{where}.{part}", f"a {op} has no {part} values")
            if isinstance(value, dict):
                unknown_cols = sorted(set(value) - set(table.column_names))
                if unknown_cols:
                    raise fail(f"{where}.{part}.{unknown_cols[0]}", f"{table.name} has no such column")
                for column, cell in value.items():
                    if _bad_value(cell):
                        raise fail(
                            f"{where}.{part}.{column}",
                            f"a value is null, a boolean, a 64-bit integer, a finite number or a string, got {type(cell).__name__}",
                        )
                if op != "update" and set(value) != set(table.column_names):
                    raise fail(f"{where}.{part}", f"a whole {table.name} row is needed: {table.column_names}")
        changes.append(RowChange(table.name, op, key, item.get("old"), item.get("new")))
    diff = Diff(changes)
    if not changes:
        raise fail("expected_diff", "a task must change something")
    stats = data.get("stats") or {}
    if stats:
        expected_stats = diff_stats(diff)
        for name in ("changed_rows", "inserts", "updates", "deletes"):
            if name in stats and stats[name] != expected_stats[name]:
                raise fail(f"stats.{name}", f"says {stats[name]} but expected_diff has {expected_stats[name]}")
    if not isinstance(data["actor"], int) or not 1 <= data["actor"] <= INT64_MAX:
        raise fail("actor", "must be a positive integer id (64-bit)")
    world = dict(data.get("world") or {})
    if world:
        if set(world) != {"seed", "fingerprint"}:
            raise fail("world", 'must be {"seed": <integer>, "fingerprint": <string>}')
        if not isinstance(world["seed"], int) or isinstance(world["seed"], bool):
            raise fail("world.seed", "must be an integer")
        if not isinstance(world["fingerprint"], str) or not world["fingerprint"]:
            raise fail("world.fingerprint", "must be a non-empty string")
    budget = dict(data.get("budget") or {})
    for name, value in budget.items():
        if name not in ("max_tool_calls", "max_turns"):
            raise fail(f"budget.{name}", "unknown field (max_tool_calls, max_turns)")
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise fail(f"budget.{name}", "must be a positive integer")
    return Task(
        data["id"],
        domain.name,
        data["actor"],
        data["query"],
        list(caps),
        diff,
        steps,
        dict(data.get("generator") or {}),
        dict(stats) or diff_stats(diff),
        world,
        budget,
        source,
    )


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


def _check_references(args: Any, step: int, where: str, fail) -> None:
    if isinstance(args, dict):
        if "$from" in args:
            ref = args["$from"]
            if set(args) - {"$from", "path"} or not isinstance(ref, int) or isinstance(ref, bool) or not 0 <= ref < step:
                raise fail(where, f'a reference is {{"$from": <earlier step>, "path": "field"}}; step {step} cannot use {args!r}')
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
    duplicate ids are errors for the later files."""
    tasks: list[Task] = []
    errors: list[TaskFileError] = []
    seen: dict[str, str] = {}
    for path in paths:
        try:
            task = load_task(path)
        except TaskFileError as exc:
            errors.append(exc)
            continue
        if task.id in seen:
            errors.append(TaskFileError(str(path), "id", f"{task.id!r} is already used by {seen[task.id]}"))
            continue
        seen[task.id] = str(path)
        tasks.append(task)
    return LoadReport(tasks, errors)


def task_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the task format, for editors and other tools."""
    props: dict[str, Any] = {}
    for name, (json_type, _, description) in FIELDS.items():
        props[name] = {"type": json_type, "description": description}
    props["format"]["const"] = FORMAT
    props["id"]["pattern"] = _ID.pattern
    props["actor"]["minimum"] = 1
    props["capabilities"]["items"] = {"enum": list(CAPABILITIES)}
    props["capabilities"]["minItems"] = 1
    props["reference_solution"]["items"] = {
        "type": "object",
        "required": ["tool", "args"],
        "additionalProperties": False,
        "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
    }
    props["reference_solution"]["minItems"] = 1
    props["expected_diff"]["items"] = {
        "type": "object",
        "required": ["table", "op", "key"],
        "additionalProperties": False,
        "properties": {
            "table": {"type": "string"},
            "op": {"enum": ["insert", "update", "delete"]},
            "key": {"type": "object"},
            "old": {"type": "object"},
            "new": {"type": "object"},
        },
    }
    props["expected_diff"]["minItems"] = 1
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:{FORMAT.replace('/', ':')}",
        "title": "ebench task",
        "type": "object",
        "required": [n for n, (_, req, _) in FIELDS.items() if req],
        "additionalProperties": False,
        "properties": props,
    }
