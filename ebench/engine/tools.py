"""Tool registry: typed Python functions declared once, schemas derived from their signatures.

A tool is `def name(env, arg: type = default, ...) -> dict` with a docstring whose first
paragraph describes it and whose `Args:` section documents each argument. The registry yields
OpenAI-style schemas (for litellm), MCP tool definitions and plain callables from the same
declaration. `call` validates arguments against the schema, runs a write tool inside a savepoint
so that a failing call changes nothing, and turns every failure into a structured error result.

Whatever a model sends is input, never a crash: before any tool runs, the arguments are checked
for what no tool can take (text that is not valid Unicode or holds NUL, megabytes of text, JSON
nested deeper than any argument, numbers JSON cannot carry), each refused as invalid_arguments.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import sqlite3
import time
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from ..errors import InputError


class ToolKind(StrEnum):
    """Whether a tool only reads the world or may change it (a write runs inside a savepoint)."""

    READ = "read"
    WRITE = "write"


class ErrorCode(StrEnum):
    """The code of an error result: what kind of mistake or refusal it is. Members equal their
    strings, so results, sessions and JSON carry the same text as before."""

    UNKNOWN_TOOL = "unknown_tool"  # no tool of that name
    INVALID_ARGUMENTS = "invalid_arguments"  # the arguments do not fit the tool's schema
    INVALID_VALUE = "invalid_value"  # an argument fits the schema but not the product's rules
    NOT_FOUND = "not_found"  # an unknown id
    FORBIDDEN = "forbidden"  # not allowed for this actor
    CONFLICT = "conflict"  # the current state does not allow it
    INTERNAL_ERROR = "internal_error"  # a bug in a tool, reported rather than raised


READ = ToolKind.READ
WRITE = ToolKind.WRITE
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Bounds on what a call may carry, far above any product limit (the longest text a tool takes is
# 2,000 characters, the longest list 500 ids, arguments are at most an array in an object).
# MAX_TEXT also keeps every LIKE pattern under SQLite's 50,000-byte limit (see search.py).
MAX_TEXT = 10_000  # characters in one string
MAX_ITEMS = 1_000  # elements of one array, or members of one object
MAX_DEPTH = 32  # levels of arrays and objects


class ToolError(InputError):
    """An error the solver sees: a bad argument, an unknown id, an action the product forbids.

    `code` is an ErrorCode (a plain string equal to one is accepted as well).
    """

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def not_found(what: str, ident: Any) -> ToolError:
    return ToolError(ErrorCode.NOT_FOUND, f"No {what} with id {ident}.")


@dataclass
class ToolEnv:
    """What a tool acts on: the trial's database, the actor it acts for, the frozen clock."""

    conn: sqlite3.Connection
    actor_id: int
    now: str

    def one(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> dict[str, Any] | None:
        cur = self.conn.execute(sql, params)
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([d[0] for d in cur.description], row))

    def all(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def scalar(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]


@dataclass
class ToolResult:
    tool: str
    ok: bool
    value: Any = None
    error_code: str | None = None
    error_message: str | None = None
    seconds: float = 0.0

    def payload(self) -> Any:
        """What the solver receives."""
        if self.ok:
            return self.value
        return {"error": {"code": self.error_code, "message": self.error_message}}

    def for_solver(self) -> Any:
        """What the solver is handed back: an exec_code block's whole payload, also on error (the
        output so far, the traceback), and for any other call `payload()`."""
        if self.tool == "exec_code" and self.value is not None:
            return self.value
        return self.payload()

    def to_json(self) -> str:
        return json.dumps(self.payload(), ensure_ascii=False)


@dataclass
class Param:
    name: str
    annotation: Any
    required: bool
    default: Any
    description: str
    schema: dict[str, Any]  # the property schema the solver sees
    accepts: dict[str, Any] = field(default_factory=dict)  # what values are checked against (value_schema)


@dataclass
class Tool:
    name: str
    kind: ToolKind
    func: Callable[..., Any]
    summary: str
    description: str
    params: list[Param]
    parameters: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def params_by_name(self) -> dict[str, Param]:
        """The parameters by name, in order (made once: every call looks its arguments up here)."""
        return {p.name: p for p in self.params}

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolRegistry:
    """The tools of one domain."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        self._tools: dict[str, Tool] = {}
        self._schemas: tuple[dict[str, Any], ...] | None = None

    # -- declaring -------------------------------------------------------------------------
    def read(self, func: Callable[..., Any]) -> Callable[..., Any]:
        self._add(func, READ)
        return func

    def write(self, func: Callable[..., Any]) -> Callable[..., Any]:
        self._add(func, WRITE)
        return func

    def _add(self, func: Callable[..., Any], kind: ToolKind) -> None:
        name = func.__name__
        if name in self._tools:
            raise ValueError(f"tool {name!r} is declared twice in {self.domain}")
        self._tools[name] = build_tool(func, kind)
        self._schemas = None

    # -- looking up ------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except (KeyError, TypeError):  # TypeError: a model sent a list or an object as the name
            raise ToolError(ErrorCode.UNKNOWN_TOOL, _unknown_tool_message(name, list(self._tools))) from None

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def openai_schemas(self) -> tuple[dict[str, Any], ...]:
        """The tools' OpenAI-style schemas, built once: every trial of a batch offers the same ones.
        Shared, so a tuple; a caller that adds tools makes a new list and never changes the dicts."""
        if self._schemas is None:
            self._schemas = tuple(t.openai_schema() for t in self)
        return self._schemas

    def callables(self, env: ToolEnv) -> dict[str, Callable[..., Any]]:
        """The tools as plain Python functions bound to `env` (for code that calls tools, such
        as exec_code): same names, arguments and results; an error result raises ToolError."""
        return {tool.name: self._bound(env, tool) for tool in self}

    def _bound(self, env: ToolEnv, tool: Tool) -> Callable[..., Any]:
        def call(**kwargs: Any) -> Any:
            result = self.call(env, tool.name, kwargs)
            if not result.ok:
                raise ToolError(result.error_code or ErrorCode.INTERNAL_ERROR, result.error_message or "")
            return result.value

        call.__name__ = call.__qualname__ = tool.name
        call.__doc__ = tool.description
        params = [
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if p.required else p.default,
                annotation=p.annotation,
            )
            for p in tool.params
        ]
        call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return call

    # -- calling ---------------------------------------------------------------------------
    def call(self, env: ToolEnv, name: Any, args: dict[str, Any] | str | None = None) -> ToolResult:
        """Run one tool call; never raises for the solver's mistakes, returns an error result.
        `name` is what the solver sent: a string, or anything else (an unknown tool)."""
        started = time.perf_counter()
        name = tool_name_text(name)
        try:
            tool = self.get(name)
            kwargs = validate_arguments(tool, parse_arguments(args))
        except ToolError as exc:
            return ToolResult(name, False, None, exc.code, exc.message, time.perf_counter() - started)
        conn = env.conn
        if tool.kind == WRITE:
            conn.execute("SAVEPOINT tool_call")
        try:
            value = tool.func(env, **kwargs)
        except Exception as exc:  # the solver must get an error result, whatever went wrong
            if tool.kind == WRITE:
                conn.execute("ROLLBACK TO tool_call")
                conn.execute("RELEASE tool_call")
            if isinstance(exc, ToolError):
                code, message = exc.code, exc.message
            else:
                code, message = ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            return ToolResult(name, False, None, code, message, time.perf_counter() - started)
        if tool.kind == WRITE:
            conn.execute("RELEASE tool_call")
        return ToolResult(name, True, value, None, None, time.perf_counter() - started)


def tool_name_text(name: Any) -> str:
    """The text a tool name stands for: a model may send a list or an object as the name (its
    repr then), even one nested too deeply to print."""
    if isinstance(name, str):
        return name
    stack = [(name, 0)]
    while stack:  # iterative: how deep repr could go must not depend on the caller's stack
        value, depth = stack.pop()
        if isinstance(value, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                return f"<{_json_type(name)} nested more than {MAX_DEPTH} levels deep>"
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    try:
        return repr(name)
    except Exception:  # a value that cannot describe itself
        return f"<{_json_type(name)}>"


def _unknown_tool_message(name: str, known: list[str]) -> str:
    import difflib

    name = str(name)
    # No tool name is long; a long one is not close to any (and difflib on megabytes is slow).
    close = difflib.get_close_matches(name, known, n=3) if len(name) <= 100 else []
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    return f"Unknown tool {_shown(name)}.{hint}"


def _shown(text: str, limit: int = 60) -> str:
    """A string quoted for a message: escaped (no NUL, surrogate or line break reaches the
    message) and cut to `limit` characters."""
    if len(text) > limit:
        return repr(text[:limit]) + f"... ({len(text)} characters)"
    return repr(text)


# -- schema from signature -----------------------------------------------------------------

_ARGS_HEADER = re.compile(r"^\s*Args:\s*$")
_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, str, dict[str, str]]:
    """(summary, description without the Args section, {arg: description})."""
    doc = inspect.cleandoc(doc or "")
    lines = doc.splitlines()
    args: dict[str, str] = {}
    body: list[str] = []
    in_args = False
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            if line and not line.startswith(" "):  # a new section ends Args
                in_args = False
                body.append(line)
                continue
            match = _ARG_LINE.match(line)
            if match and (current is None or len(line) - len(line.lstrip()) <= 4):
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
            continue
        body.append(line)
    # Paragraphs are unwrapped: the docstring's line breaks are for the source, not the reader.
    paragraphs = "\n".join(body).strip().split("\n\n")
    description = "\n\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)
    summary = description.split("\n\n", 1)[0]
    return summary, description, args


def type_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema for the annotation types tools may use."""
    origin = typing.get_origin(annotation)
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if origin is Literal:
        values = list(typing.get_args(annotation))
        kinds = {type(v) for v in values}
        schema: dict[str, Any] = {"enum": values}
        if kinds == {str}:
            schema["type"] = "string"
        elif kinds == {int}:
            schema["type"] = "integer"
        return schema
    if origin is list:
        (item,) = typing.get_args(annotation) or (str,)
        return {"type": "array", "items": type_schema(item)}
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            inner = type_schema(members[0])
            return {**inner, "nullable": True} if "type" in inner else inner
    raise TypeError(f"unsupported tool argument type: {annotation!r}")


def build_tool(func: Callable[..., Any], kind: ToolKind) -> Tool:
    name = func.__name__
    if not func.__doc__:
        raise TypeError(f"tool {name!r} needs a docstring")
    summary, description, arg_docs = parse_docstring(func.__doc__)
    hints = typing.get_type_hints(func)
    sig = inspect.signature(func)
    params_iter = iter(sig.parameters.values())
    next(params_iter)  # env
    params: list[Param] = []
    for p in params_iter:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise TypeError(f"tool {name!r}: argument {p.name!r} must be a plain named argument")
        if p.name not in hints:
            raise TypeError(f"tool {name!r}: argument {p.name!r} needs a type annotation")
        if p.name not in arg_docs:
            raise TypeError(f"tool {name!r}: argument {p.name!r} is not documented under Args:")
        schema = dict(type_schema(hints[p.name]))
        schema.pop("nullable", None)
        schema["description"] = arg_docs[p.name]
        required = p.default is inspect.Parameter.empty
        if not required and p.default is not None:
            schema["default"] = p.default
        params.append(Param(p.name, hints[p.name], required, p.default, arg_docs[p.name], schema, value_schema(hints[p.name])))
    unknown_docs = set(arg_docs) - {p.name for p in params}
    if unknown_docs:
        raise TypeError(f"tool {name!r} documents arguments it does not take: {sorted(unknown_docs)}")
    parameters = {
        "type": "object",
        "properties": {p.name: p.schema for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }
    return Tool(name, kind, func, summary, description, params, parameters)


# -- argument validation -------------------------------------------------------------------


def parse_arguments(args: dict[str, Any] | str | None) -> dict[str, Any]:
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Arguments are not valid JSON: {exc.msg} at position {exc.pos}.") from None
        except RecursionError:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, _too_deep()) from None
        except ValueError:  # an integer of more than 4,300 digits (Python's conversion limit)
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, "Arguments are not valid JSON: a number has too many digits.") from None
    if not isinstance(args, dict):
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Arguments must be a JSON object, got {_json_type(args)}.")
    check_input(args)
    return args


def _too_deep() -> str:
    return f"Arguments are nested too deeply: at most {MAX_DEPTH} levels of arrays and objects."


def check_input(args: dict[str, Any]) -> None:
    """Refuse what no tool can take, wherever it sits in the arguments: text that is not valid
    Unicode (lone surrogates) or holds NUL (SQLite's text functions stop at it), text longer than
    MAX_TEXT, arrays or objects larger than MAX_ITEMS, nesting deeper than MAX_DEPTH, numbers that
    are not finite. Iterative (a deep value must not exhaust the stack); the messages name the
    argument and never repeat the bad text itself."""
    stack: list[tuple[str, Any, int]] = []
    if len(args) > MAX_ITEMS:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Arguments have {len(args)} names; no tool takes more than a few.")
    for key, value in args.items():
        problem = _text_problem(key, 100) if isinstance(key, str) else None
        if problem:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"An argument name {problem}.")
        stack.append((str(key), value, 1))
    while stack:
        name, value, depth = stack.pop()
        if isinstance(value, str):
            problem = _text_problem(value, MAX_TEXT)
            if problem:
                raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Argument {_shown(name)} {problem}.")
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Argument {_shown(name)} is not a finite number.")
        elif isinstance(value, (list, dict)):
            if depth >= MAX_DEPTH:
                raise ToolError(ErrorCode.INVALID_ARGUMENTS, _too_deep())
            if len(value) > MAX_ITEMS:
                what = "items" if isinstance(value, list) else "members"
                raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Argument {_shown(name)} has {len(value)} {what}; at most {MAX_ITEMS}.")
            if isinstance(value, dict):
                for key in value:
                    if isinstance(key, str):
                        problem = _text_problem(key, 100)
                        if problem:
                            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Argument {_shown(name)} has a member name that {problem}.")
            stack.extend((name, v, depth + 1) for v in (value if isinstance(value, list) else value.values()))


def _text_problem(text: str, longest: int) -> str | None:
    if len(text) > longest:
        return f"is too long: {len(text)} characters, at most {longest}"
    if "\x00" in text:
        return "contains a NUL character (U+0000), which no text may hold"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"contains a lone surrogate (U+{ord(text[exc.start]):04X}) at position {exc.start}: it is not valid Unicode text"
    return None


def validate_arguments(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    known = tool.params_by_name
    unknown = [k for k in args if k not in known]
    if unknown:
        names = ", ".join(_shown(str(u), 40) for u in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"{tool.name} does not take {names}; it takes: {', '.join(known) or 'no arguments'}.",
        )
    missing = [p.name for p in tool.params if p.required and p.name not in args]
    if missing:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"{tool.name} is missing required argument(s): {', '.join(missing)}.")
    kwargs: dict[str, Any] = {}
    for name, value in args.items():
        mismatch = value_mismatch(known[name].accepts, value)
        if mismatch is not None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS, f"Argument {name!r} {_solver_problem(mismatch)}.")
        kwargs[name] = _integral(known[name].annotation, value)
    return kwargs


def _integral(annotation: Any, value: Any) -> Any:
    """2.0 where an integer is expected becomes 2 (JSON has one number type)."""
    if not isinstance(value, (float, list)):  # the usual argument: nothing to convert, no annotation to read
        return value
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            annotation = members[0]
    if isinstance(value, float) and _accepts_int(annotation) and not _accepts_float(annotation):
        return int(value)
    if isinstance(value, list) and typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation) or (str,)
        return [_integral(item, v) for v in value]
    return value


def _accepts_int(annotation: Any) -> bool:
    return annotation is int or int in typing.get_args(annotation)


def _accepts_float(annotation: Any) -> bool:
    return annotation is float or float in typing.get_args(annotation)


_JSON_TYPES = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)  # bool before int: bool is an int


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def _preview(value: Any, limit: int = 40) -> str:
    """The start of a value's JSON, for a message (ASCII: escapes, not the characters)."""
    try:
        return json.dumps(value)[:limit]
    except (TypeError, ValueError, RecursionError):  # not JSON, or an integer too long to print
        return f"<{_json_type(value)}>"


@dataclass(frozen=True)
class Mismatch:
    """Why a value does not fit a parameter, for its reader to phrase: the registry tells the
    solver ("must be an integer, got string ..."), the app's call form tells its user."""

    expected: str  # the schema's type (integer, number, string, boolean, array, object), or "enum"
    value: Any
    choices: tuple[Any, ...] = ()  # the enum's members
    out_of_range: bool = False  # an integer SQLite cannot hold
    item: int | None = None  # for an array: the first item that does not fit...
    inner: Mismatch | None = None  # ...and why


def value_mismatch(schema: Mapping[str, Any], value: Any) -> Mismatch | None:
    """None when `value` fits a parameter's JSON schema as `type_schema` derives it (type, enum,
    array items, nullable), else why not. A schema without a type or enum takes any value."""
    if value is None and schema.get("nullable"):
        return None
    if "enum" in schema:
        return _enum_mismatch(tuple(schema["enum"]), value)
    kind = schema.get("type")
    if kind == "integer":
        return _integer_mismatch(value)
    if kind == "array":
        return _array_mismatch(schema.get("items") or {}, value)
    fits = _SCALAR_FITS.get(kind) if isinstance(kind, str) else None
    return None if fits is None or fits(value) else Mismatch(str(kind), value)


# How a value of the other JSON types fits (an integer, an enum and an array have their own checks).
_SCALAR_FITS: dict[str, Callable[[Any], bool]] = {
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
}


def _enum_mismatch(choices: tuple[Any, ...], value: Any) -> Mismatch | None:
    # JSON true is not 1: a member must match in type as well as in value.
    if value in choices and type(value) in {type(c) for c in choices}:
        return None
    return Mismatch("enum", value, choices)


def _integer_mismatch(value: Any) -> Mismatch | None:
    number = int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(number, int) and not isinstance(number, bool):
        # SQLite integers are 64-bit; a larger number cannot name anything.
        return None if INT64_MIN <= number <= INT64_MAX else Mismatch("integer", value, out_of_range=True)
    return Mismatch("integer", value)


def _array_mismatch(items: Mapping[str, Any], value: Any) -> Mismatch | None:
    if not isinstance(value, list):
        return Mismatch("array", value)
    for index, element in enumerate(value):
        inner = value_mismatch(items, element)
        if inner is not None:
            return Mismatch("array", value, item=index, inner=inner)
    return None


def _solver_problem(mismatch: Mismatch) -> str:
    """A mismatch phrased for the solver, after "Argument 'x' "."""
    if mismatch.inner is not None:
        return f"item {mismatch.item} {_solver_problem(mismatch.inner)}"
    if mismatch.out_of_range:
        return "is out of range for an integer"
    value, expected = mismatch.value, mismatch.expected
    if expected == "enum":
        return f"must be one of {', '.join(json.dumps(c) for c in mismatch.choices)}, got {_preview(value)}"
    if expected == "integer":
        return f"must be an integer, got {_json_type(value)} {_preview(value)}"
    if expected == "number":
        return f"must be a number, got {_json_type(value)} {_preview(value)}"
    if expected == "boolean":
        return f"must be true or false, got {_json_type(value)}"
    article = "an" if expected[0] in "aeiou" else "a"
    return f"must be {article} {expected}, got {_json_type(value)}"


def value_schema(annotation: Any) -> dict[str, Any]:
    """The schema a value of this annotation is checked against: `type_schema`, nullable when
    the annotation takes None (whatever the inner schema looks like)."""
    schema = type_schema(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation):
        schema = {**schema, "nullable": True}
    return schema


# -- pagination ----------------------------------------------------------------------------

PAGE_SIZE = 20


def check_page(page: int) -> int:
    if page < 1:
        raise ToolError(ErrorCode.INVALID_VALUE, "page starts at 1.")
    return page


def paginate(
    env: ToolEnv,
    select: str,
    params: tuple[Any, ...] | list[Any] | dict[str, Any],
    page: int,
    order_by: str,
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    count: tuple[str, Any] | str | int | None = None,
) -> dict[str, Any]:
    """One page of `select` (a query without ORDER BY/LIMIT) with the total and page count.

    `params` are positional (`?`) or named (`:name`, a dict). `count` is how to get the total
    when counting `select` itself would be wasteful: a cheaper (sql, params) that counts the same
    rows, a query string taking the same params, or the total when it is already known.
    """
    page = int(check_page(page))
    if count is None:
        total = env.scalar(f"SELECT COUNT(*) FROM ({select})", params)
    elif isinstance(count, int):
        total = count
    elif isinstance(count, str):
        total = env.scalar(count, params)
    else:
        total = env.scalar(*count)
    offset = (page - 1) * PAGE_SIZE
    # Past the last page there is nothing to fetch (and a huge offset would overflow SQLite).
    if offset >= total:
        rows = []
    elif isinstance(params, dict):
        rows = env.all(
            f"{select} ORDER BY {order_by} LIMIT :_page_size OFFSET :_offset", {**params, "_page_size": PAGE_SIZE, "_offset": offset}
        )
    else:
        rows = env.all(f"{select} ORDER BY {order_by} LIMIT ? OFFSET ?", [*params, PAGE_SIZE, offset])
    items = [shape(r) for r in rows] if shape else rows
    return {
        "items": items,
        "page": page,
        "page_size": PAGE_SIZE,
        "total": total,
        "total_pages": max(1, -(-total // PAGE_SIZE)),
    }
