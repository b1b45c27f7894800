"""The events of a session record, as pydantic models: one class per kind, told apart by `event`.

Every line of a session file is one of these (see `record` for the file). The models keep the
on-disk JSON as it was: the same keys in the same order, and only the keys that were written (a
field left at its default by a writer is not written, and a key an older or newer ebench wrote
that no model names is kept as an extra). What a solver sent (a tool's name and arguments, a
message's content, the calls it asked for) is typed `Any`: it is recorded as sent, whatever it is.

A kind no model knows (written by a newer ebench) reads as an `OtherEvent`, never as an error.
`session_json_schema()` is the JSON Schema of the known kinds, versioned by `SESSION_FORMAT`.

Format 2 (`ebench-session/2`) stores each payload once and bounds it (`payload_caps`): a call whose
arguments are the very ones its model message asked for is written without `args` and with
`args_in: "message"` (the reader puts them back, `record.read_session`), and a field recorded
truncated holds a marker and is named in the event's `capped`. Format 1 files read as they were.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..tasks.grading import Grade
from .objects import JsonObject
from .results import PerturbationRecord, TrialSummary

SESSION_FORMAT = "ebench-session/2"
SESSION_FORMATS = ("ebench-session/1", SESSION_FORMAT)  # what read_session reads: every format ebench wrote

# The role of a tool-call event in the trial (and so in a replay).
CALL = "call"  # a top-level domain call
BLOCK = "block"  # an exec_code block: its children are the domain calls it made
CHILD = "child"  # a domain call made inside an exec_code block
EXEC_CODE = "exec_code"
# A tool_call's `args_in`: its arguments are the `arguments` of the tool call of the same id in the
# model message that asked for it (the last assistant message before it); for an exec_code block,
# {"code": <that text's code>} (`block_args`).
ARGS_IN_MESSAGE = "message"


def _require_event(schema: dict[str, Any]) -> None:
    """Every event names its kind: `event` is required in the schema (its model has a default)."""
    required = schema.setdefault("required", [])
    if "event" in schema.get("properties", {}) and "event" not in required:
        required.insert(0, "event")


class Record(BaseModel):
    """A part of a session line: keys nobody declared are kept; `to_dict` is the JSON as written."""

    model_config = ConfigDict(extra="allow")

    def to_dict(self) -> dict[str, Any]:
        """The keys that were set (by the writer, or read from the file), then the extras."""
        data = {name: _plain(getattr(self, name)) for name in type(self).model_fields if name in self.model_fields_set}
        data.update({k: _plain(v) for k, v in (self.model_extra or {}).items()})
        return data


def _plain(value: Any) -> Any:
    return value.to_dict() if isinstance(value, (Record, JsonObject, TrialSummary, Grade)) else value


class SessionEvent(Record):
    """One line of a session file. `t` is the seconds since the trial started (the writer stamps it)."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_require_event)

    event: str
    t: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The line's JSON object: `event` and `t` first, as every session line has them."""
        return {"event": self.event, "t": self.t, **{k: v for k, v in super().to_dict().items() if k not in ("event", "t")}}

    def record(self) -> dict[str, Any]:
        """The line to write, shallow: values stay as given (the writer copes with what json cannot
        write), nested models become dicts when json meets them."""
        data: dict[str, Any] = {"event": self.event, "t": self.t}
        # pydantic's own attributes, read once: model_fields_set is a property and model_fields a
        # slow descriptor, and this runs for every call a trial records
        fields_set = self.__pydantic_fields_set__
        values = self.__dict__
        for name in type(self).__pydantic_fields__:
            if name in fields_set and name not in data:
                data[name] = values[name]
        data.update(self.__pydantic_extra__ or {})
        return data


class TaskHeader(Record):
    """The task a session is an attempt at, as recorded in its start event."""

    id: str = ""
    domain: str = ""
    actor: int | None = None
    query: str = ""
    capabilities: list[str] = Field(default_factory=list)
    reference_calls: int = 0
    source: str | None = None


class ClientInfo(JsonObject):
    """The MCP client that was the solver (`ebench mcp serve`), as it named itself."""

    name: str = ""
    version: str = ""


class SolverInfo(JsonObject):
    """What a solver says about itself (its `config()`), in a start event and a run's configuration:
    the keys ebench's own solvers write are typed, a third-party solver's own keys are kept."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    name: str = ""
    label: str | None = None  # how reports name it, when not by `name` (a person, an MCP client)
    model: str | None = None  # llm: the litellm model string
    api_base: str | None = None
    model_args: dict[str, Any] | None = None  # llm: as sent, secrets redacted
    price_in: float | None = None  # llm: USD per million tokens, when given
    price_out: float | None = None
    source: str | None = None  # replay: the run or session file replayed
    blind: bool | None = None  # human: the expected changes were hidden
    via: str | None = None  # human: "terminal" or "web"
    client: ClientInfo | None = None  # mcp: the client that called

    @property
    def shown_name(self) -> str:
        """The solver as reports name it: its label, else its name."""
        return self.label or self.name


class StartEvent(SessionEvent):
    """The first line: what the trial is (the task, the solver, the mode) and on which world."""

    event: Literal["start"] = "start"
    format: str = ""  # SESSION_FORMAT (a start without one is not of a format this ebench reads)
    session: str = ""
    task: TaskHeader | None = None
    domain: str = ""
    actor: int | None = None
    solver: SolverInfo = Field(default_factory=SolverInfo)
    mode: str = "tools"
    trial: int = 1
    ebench: str = ""
    world: str | None = None
    world_seed: int | None = None
    started: str = ""
    # perturbed runs (perturb.py): {subtypes, seed, request?, notes?}; written only when perturbed
    perturbation: PerturbationRecord | None = None

    @property
    def solver_label(self) -> str:
        return self.solver.shown_name if isinstance(self.solver, SolverInfo) else ""


class MessageEvent(SessionEvent):
    """A message of the conversation: the system prompt, the user's request, the model's turns."""

    event: Literal["message"] = "message"
    role: str = ""
    content: Any = None
    reasoning: Any = None
    tool_calls: list[Any] | None = None  # as the model asked for them
    finish_reason: Any = None
    turn: int | None = None
    usage: dict[str, Any] | None = None
    cost: float | None = None
    seconds: float | None = None
    repaired: list[str] | None = None  # the fields made sendable before going back to the model
    user: str | None = None  # a user's reply: who played the user (scripted, llm, person)
    revealed: list[str] | None = None  # a user's reply: the facts of the profile it gave
    scenario_turn: int | None = None  # a scenario's user message: the turn it opens (from 0)
    capped: list[str] | None = None  # the fields recorded truncated (payload_caps), e.g. "tool_calls[0].arguments"

    def called_tools(self) -> list[str]:
        """The names of the tools the message asked for ("?" for a request without one)."""
        names = []
        for call in self.tool_calls or []:
            function = (call.get("function") or call) if isinstance(call, dict) else None
            names.append(str(function.get("name", "?")) if isinstance(function, dict) else "?")
        return names


class ToolCallEvent(SessionEvent):
    """One call: as sent (tool, arguments), what the solver received (`result`), and where it sat
    (`parent` names the exec_code block a call was made from)."""

    event: Literal["tool_call"] = "tool_call"
    id: str = ""
    tool: Any = None
    args: Any = None
    ok: bool = False
    result: Any = None
    error_code: str | None = None
    seconds: float = 0.0
    parent: str | None = None
    turn: int | None = None
    # perturbed runs (perturb.py), each written only when set: `tool` and `args` are then the
    # canonical call, `sent` {tool, args} what the solver sent when it differs; `injected` an error
    # the layer answered instead of running the call; `altered` what it did to the result
    sent: Any = None
    injected: str | None = None
    altered: list[str] | None = None
    latency: float | None = None
    # format 2, each written only when set: `args_in` where the arguments are stored instead
    # (ARGS_IN_MESSAGE), `capped` the fields recorded truncated (payload_caps; a block's
    # "children": calls made inside it were), the solver then got its result with a note
    args_in: str | None = None
    capped: list[str] | None = None

    # With `args_in`, `args` holds the arguments (in memory, and as read back) but the line does
    # not: the JSON as written, and the line to write, leave them out.
    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        if self.args_in is not None:
            data.pop("args", None)
        return data

    def record(self) -> dict[str, Any]:
        data = super().record()
        if self.args_in is not None:
            data.pop("args", None)
        return data

    @property
    def role(self) -> str:
        if self.parent is not None:
            return CHILD
        return BLOCK if self.tool == EXEC_CODE else CALL

    @property
    def code(self) -> str | None:
        """An exec_code block's code (None for other calls, or a block sent without a string)."""
        code = self.args.get("code") if self.role == BLOCK and isinstance(self.args, dict) else None
        return code if isinstance(code, str) else None


class ApiErrorEvent(SessionEvent):
    """A failed model request, retried (`retry_in` seconds later) or final."""

    event: Literal["api_error"] = "api_error"
    turn: int | None = None
    attempt: int | None = None
    kind: str | None = None
    error: str | None = None
    status: Any = None
    seconds: float | None = None
    retry_in: float | None = None


class BadResponseEvent(SessionEvent):
    """A model response without a message."""

    event: Literal["bad_response"] = "bad_response"
    turn: int | None = None
    response: str | None = None


class ClientEvent(SessionEvent):
    """The MCP client that is the solver (noted at its first call)."""

    event: Literal["client"] = "client"
    name: str = ""
    version: str = ""


class SignalEvent(SessionEvent):
    """A stop signal the MCP server got while the trial was open."""

    event: Literal["signal"] = "signal"
    signal: str = ""


class InternalErrorEvent(SessionEvent):
    """A harness fault during a batch trial (not counted against the solver)."""

    event: Literal["internal_error"] = "internal_error"
    error: str = ""
    traceback: str = ""


class EndEvent(SessionEvent):
    """The last line: why the trial ended, the final diff, the grade and the results line."""

    event: Literal["end"] = "end"
    termination: str = ""
    error: str | None = None
    diff: list[Any] = Field(default_factory=list)
    grade: Grade | None = None
    summary: TrialSummary | None = None  # the trial's results line

    @property
    def passed(self) -> bool:
        return grade_passed(self.grade)

    @property
    def verdict(self) -> str:
        return "no grade" if not self.grade else "PASS" if self.passed else "FAIL"


class TurnEndEvent(SessionEvent):
    """A scenario's turn is over (scenarios.py): what changed during it and its grade."""

    event: Literal["turn_end"] = "turn_end"
    index: int = 0  # the turn's place in the scenario, from 0
    kind: str = ""
    passed: bool = False
    calls: int = 0  # top-level calls made during the turn
    reached: bool = True  # false: the trial ended before the turn began
    diff: list[Any] = Field(default_factory=list)
    grade: Grade | None = None


def grade_passed(grade: Grade | Mapping[str, Any] | None) -> bool:
    """A recorded grade's verdict; an event kept unvalidated (`event_from`) holds the grade as read."""
    if isinstance(grade, Mapping):
        return bool(grade.get("passed"))
    return grade is not None and grade.passed


class OtherEvent(SessionEvent):
    """A kind this ebench does not know (a newer one wrote it): kept as read."""

    @property
    def data(self) -> dict[str, Any]:
        return {k: v for k, v in self.to_dict().items() if k not in ("event", "t")}


Event = Annotated[
    Union[  # noqa: UP007 (a discriminated union reads best spelled out)
        StartEvent,
        MessageEvent,
        ToolCallEvent,
        ApiErrorEvent,
        BadResponseEvent,
        ClientEvent,
        SignalEvent,
        InternalErrorEvent,
        TurnEndEvent,
        EndEvent,
    ],
    Field(discriminator="event"),
]
# kind -> model, from the union (Annotated's first argument)
EVENT_TYPES: dict[str, type[SessionEvent]] = {cls.model_fields["event"].default: cls for cls in get_args(get_args(Event)[0])}


def event_from(data: Mapping[str, Any]) -> tuple[SessionEvent, bool]:
    """The model of one event's JSON object, and whether it validated. A kind no model knows is an
    OtherEvent; an event whose fields have unexpected types is kept as recorded, unvalidated."""
    cls = EVENT_TYPES.get(str(data.get("event")), OtherEvent)
    try:
        return cls.model_validate(data), True
    except ValidationError as exc:
        return _kept_as_recorded(cls, data, exc), False


def _kept_as_recorded(cls: type[SessionEvent], data: Mapping[str, Any], exc: ValidationError) -> SessionEvent:
    """An event with fields of unexpected types: those kept as recorded (a nested object's known
    keys unchecked), the others validated, so a reader meets the same kinds of values as usual."""
    wrong = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    try:
        checked = cls.model_validate({k: v for k, v in data.items() if k not in wrong})
    except ValidationError:
        checked = None
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in wrong and checked is not None and key in checked.model_fields_set:
            values[key] = getattr(checked, key)
        else:
            values[key] = _unchecked(cls, key, value)
    return cls.model_construct(**values)


def _unchecked(cls: type[SessionEvent], key: str, value: Any) -> Any:
    """A JSON object recorded where a JsonObject is expected (a solver), as that model, unchecked;
    anything else as recorded."""
    field = cls.model_fields.get(key)
    if field is None or not isinstance(value, dict):
        return value
    for kind in (field.annotation, *get_args(field.annotation)):
        if isinstance(kind, type) and issubclass(kind, JsonObject):
            return kind.model_construct(**value)
    return value


def make_event(kind: str, **data: Any) -> SessionEvent:
    """An event of `kind` made of keyword fields (for writers that name their kind as a string)."""
    return event_from({"event": kind, **data})[0]


def code_argument(arguments: Any) -> str | None:
    """The `code` of an exec_code call's arguments (JSON text), or None when they are not {"code": str}."""
    try:
        parsed = json.loads(arguments)
    except (TypeError, ValueError, RecursionError):
        return None
    if isinstance(parsed, dict) and set(parsed) == {"code"} and isinstance(parsed["code"], str):
        return parsed["code"]
    return None


def block_args(arguments: Any) -> dict[str, Any]:
    """What an exec_code block records as its `args`, from the arguments the model sent."""
    return {"code": code_argument(arguments)}


def as_tool_call(entry: ToolCallEvent | Mapping[str, Any]) -> ToolCallEvent:
    """A call entry as its model (widgets are also handed the JSON of one)."""
    if isinstance(entry, ToolCallEvent):
        return entry
    event = event_from({"event": "tool_call", **entry})[0]
    assert isinstance(event, ToolCallEvent)
    return event


# The fields of a call line a trial gives (besides `tool`, `args` and `result`, typed Any, any value).
_MADE_FIELDS = frozenset(
    ("event", "t", "id", "tool", "args", "ok", "result", "error_code", "seconds", "parent", "turn", "args_in", "capped")
)
_CALL_DEFAULTS: dict[str, Any] = {name: field.get_default() for name, field in ToolCallEvent.model_fields.items()}
_new_object, _set = object.__new__, object.__setattr__


def recorded_call(fields: dict[str, Any]) -> tuple[ToolCallEvent, bool]:
    """`event_from` of the call line a trial makes, for every call: the same model, and whether it
    holds `fields` as given. It is made without validation when each field already has its
    model's exact type (`type(v) is`, so a str or int subclass, an ErrorCode, a bool as the turn,
    is validated, and may change)."""
    get = fields.get
    error_code, parent, turn, args_in, capped = get("error_code"), get("parent"), get("turn"), get("args_in"), get("capped")
    if (
        fields.keys() <= _MADE_FIELDS
        and get("event") == "tool_call"
        and type(get("t", 0.0)) is float
        and type(get("id")) is str
        and type(get("ok")) is bool
        and type(get("seconds")) is float
        and (error_code is None or type(error_code) is str)
        and (parent is None or type(parent) is str)
        and (turn is None or type(turn) is int)
        and (args_in is None or type(args_in) is str)
        and (capped is None or (type(capped) is list and all(type(name) is str for name in capped)))
    ):
        model = _new_object(ToolCallEvent)
        _set(model, "__dict__", {**_CALL_DEFAULTS, **fields})
        _set(model, "__pydantic_fields_set__", set(fields))
        _set(model, "__pydantic_extra__", {})
        _set(model, "__pydantic_private__", None)
        return model, True
    event = event_from(fields)[0]
    assert isinstance(event, ToolCallEvent)
    return event, False


def session_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of one line of a session file (JSON lines): the models',
    titled and identified with the format version."""
    schema = TypeAdapter(Event).json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:{SESSION_FORMAT.replace('/', ':')}",
        **schema,
        "title": f"ebench session event ({SESSION_FORMAT})",
        "description": "One line of a session file. The first is a start event, a finished trial's last an end event; "
        "readers keep keys and kinds they do not know.",
    }
