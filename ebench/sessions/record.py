"""Session records: one JSON-lines file per trial, appended to as the trial goes.

Each line is one event, written and flushed when it happens, so a crash loses at most the line
being written (a torn last line is skipped on reading). Events, in order:

- `start`: the format, the session id, the task (id, domain, actor, query, capabilities, reference
  call count), the solver's configuration, the mode (tools or code), the ebench version, the world's
  fingerprint, the wall-clock start.
- `message`: a model message (role, content, reasoning, the tool calls it asked for, usage, cost).
- `tool_call`: one call: its id, tool, arguments as sent, ok, result (what the solver received),
  error code, duration; `parent` names the exec_code block a call was made from. Arguments the
  model message before it holds already are not written again (`args_in`; `read_session` puts
  them back).
- `api_error`: a failed model request (retried or final).
- `end`: termination reason, the final diff, the grade, totals.

Every event carries `t`, seconds since the trial started. Secrets never reach the file: every line
is scrubbed of the values of secret-looking configuration keys and environment variables. What a
solver and its tools produce is recorded within caps (`payload_caps`, applied by the trial). The
events are the models of `events`; `read_session` gives them back as those models.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from .events import (
    ARGS_IN_MESSAGE,
    BLOCK,
    CHILD,
    EXEC_CODE,
    SESSION_FORMAT,
    SESSION_FORMATS,
    EndEvent,
    MessageEvent,
    SessionEvent,
    StartEvent,
    ToolCallEvent,
    block_args,
    event_from,
    make_event,
)

_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|authorization|credential", re.IGNORECASE)
REDACTED = "[redacted]"


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_config(config: Any) -> Any:
    """The configuration with the values of secret-looking keys replaced (nested dicts included)."""
    if isinstance(config, dict):
        return {k: (REDACTED if is_secret_name(str(k)) and v not in (None, "") else redact_config(v)) for k, v in config.items()}
    if isinstance(config, list):
        return [redact_config(v) for v in config]
    return config


def secret_values(config: Any = None, environ: dict[str, str] | None = None) -> list[str]:
    """Strings that must never be written: values of secret-looking config keys and env variables."""
    found: set[str] = set()

    def walk(value: Any, secret: bool) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, secret or is_secret_name(str(k)))
        elif isinstance(value, list):
            for v in value:
                walk(v, secret)
        elif secret and isinstance(value, str) and len(value) >= 6:
            found.add(value)

    walk(config, False)
    for name, value in (os.environ if environ is None else environ).items():
        if is_secret_name(name) and len(value) >= 6:
            found.add(value)
    return sorted(found, key=len, reverse=True)  # longest first: no partial replacement


def trial_session_file(sessions: Path, task_id: str, trial: int) -> Path:
    """A batch trial's session in its run's sessions folder: `<task>/<trial>.jsonl` (a resumed run
    writes a trial that ended in an infrastructure error again, into the same file)."""
    return sessions / task_id / f"{trial}.jsonl"


def new_session_file(folder: Path, task_id: str, kind: str) -> Path:
    """Claim a fresh `<stamp>-<task>-<kind>.jsonl` in a folder of loose sessions (the data
    directory's, for the app, MCP and one-task runs): created empty here, so two trials started at
    the same moment (in threads or processes) never share a file. The stamp sorts by time to the
    millisecond."""
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f"-{int(now * 1000) % 1000:03d}"
    number = 1
    while True:
        suffix = "" if number == 1 else f"-{number}"
        path = folder / f"{stamp}-{task_id}-{kind}{suffix}.jsonl"
        try:
            path.touch(exist_ok=False)
            return path
        except FileExistsError:
            number += 1


def session_files(folder: Path, kind: str) -> list[Path]:
    """The files `new_session_file` claimed in `folder` for trials of `kind` (a task id may hold
    dashes, the kind is matched after one)."""
    return list(folder.glob(f"*-{kind}*.jsonl"))


class SessionWriter:
    """Appends events to one session file; thread-safe (exec_code calls arrive from a thread)."""

    def __init__(self, path: Path, secrets: Iterable[str] = (), *, resume_at: float | None = None) -> None:
        """A new session file; with `resume_at` (the last recorded event's time), the existing
        file is continued: events are appended and their times go on from there."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume_at is not None:
            drop_torn_line(path)
        # Unbuffered bytes: a line is one write() of its UTF-8, so nothing waits in a buffer to be
        # flushed and nothing is encoded twice (the line is made as bytes, `session_bytes`).
        self._handle = path.open("ab" if resume_at is not None else "wb", buffering=0)
        self._secrets = _Secrets([s for s in secrets if s])
        self._lock = threading.Lock()
        self._started = time.perf_counter() - (resume_at or 0.0)
        self._last_t = resume_at or 0.0  # the time of the last event written (leave_out never goes before it)

    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    def leave_out(self, seconds: float) -> float:
        """Take up to `seconds` just passed out of the session's clock (a person's idle time), never
        so much that the next event would be stamped before the last one; returns what was taken."""
        with self._lock:
            taken = min(max(seconds, 0.0), max(self.elapsed() - self._last_t, 0.0))
            self._started += taken
        return taken

    def write(
        self,
        event: SessionEvent | str,
        *,
        encoded: Mapping[str, bytes] | None = None,
        as_record: dict[str, Any] | None = None,
        **data: Any,
    ) -> SessionEvent:
        """Append one event (a model, or a kind and its fields), stamped with its time, and return
        it. Never fails for what the event holds (whatever a solver sent: lone surrogates, NULs,
        values nested too deeply for json, integers too long to print). `encoded`: fields whose
        JSON the caller made already (`encoded_value`), written as made instead of encoded again.
        `as_record`: the model's `record()` as the caller made it, with a `t` to stamp (a trial's
        call line, `recorded_call`: the dict its model was made of)."""
        model = event if isinstance(event, SessionEvent) else make_event(event, **data)
        with self._lock:  # stamped where leave_out cannot move the clock between the stamp and its record
            t = round(self.elapsed(), 4)
            self._last_t = max(self._last_t, t)
        # what `model.t = t` does (t is a float, unvalidated as ever), without pydantic's __setattr__
        model.__dict__["t"] = t
        model.__pydantic_fields_set__.add("t")
        if as_record is None:
            as_record = model.record()
        else:
            as_record["t"] = t
        line = session_bytes(as_record, self._secrets, encoded) + b"\n"
        with self._lock:
            if not self._handle.closed:
                _write_all(self._handle, line)
        return model

    def close(self) -> None:
        with self._lock:
            self._handle.close()


def drop_torn_line(path: Path) -> None:
    """Cut a last line written only in part (a process killed mid-write), so appending starts a
    line of its own; `read_session` skipped that line anyway."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


# Characters a session line never holds raw: lone surrogates (UTF-8 cannot encode them, so
# writing the line would fail) and the line breaks str.splitlines() knows besides "\n" (json
# escapes the control characters, not these). Outside strings a JSON line is ASCII, so they only
# occur inside strings, where their \\uXXXX escape reads back as the very same character.
_RAW_UNSAFE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")
RECORDED_DEPTH = 100  # levels of a value kept when json cannot write it whole
# Keys that are not strings written as json.dumps writes them; dataclasses and datetimes go to
# `_jsonable`, as with json.dumps.
_ORJSON_STR_KEYS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | _ORJSON_STR_KEYS


class _Secrets:
    """The secrets a writer redacts, as text and as UTF-8 (a lone surrogate has no UTF-8, and no
    line orjson wrote can hold it)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self.text = [s for s in secrets if s]
        self.utf8 = [s.encode("utf-8", "surrogatepass") for s in self.text]

    def __iter__(self) -> Iterator[str]:
        return iter(self.text)


def session_line(record: dict[str, Any], secrets: Iterable[str] = ()) -> str:
    """One event as a line of JSON that is valid UTF-8 and reads back as the same values (a
    number that is not finite reads back as null); parts json cannot write (nested too deeply,
    integers too long, cycles) are replaced by a note, and `secrets` by REDACTED."""
    return session_bytes(record, secrets).decode("utf-8")


def session_bytes(record: dict[str, Any], secrets: Iterable[str] = (), encoded: Mapping[str, bytes] | None = None) -> bytes:
    """`session_line` as UTF-8, made as bytes (orjson's own output) without a text round trip.
    `encoded`: fields of `record` whose orjson JSON is made already (`encoded_value`)."""
    found = secrets if isinstance(secrets, _Secrets) else _Secrets(secrets)
    # orjson: the same JSON as json.dumps (compact), 5-10x faster on a page of results. It
    # refuses what json.dumps writes (integers beyond 64 bits, lone surrogates, more than 254
    # levels), which goes to json below; it writes a number that is not finite as null, as
    # JSON has no NaN (json.dumps would write NaN, which no JSON reader takes).
    data = _orjson_line(_with_fragments(record, encoded))
    if data is None:
        return _text_line(_stdlib_line(record), found.text).encode("utf-8")
    for secret in found.utf8:  # UTF-8 is self-synchronizing: a match in bytes is a match in text
        if secret in data:
            data = data.replace(secret, REDACTED.encode())
    if data.isascii():
        return data
    # Searched as text: a str of Latin-1 characters cannot hold U+2028 at all, and a search in
    # it is a memchr (bytes.find of a 3-byte needle is slower than the decode by far).
    text = data.decode("utf-8")
    if "\x85" not in text and "\u2028" not in text and "\u2029" not in text:
        return data
    return _text_line(text, ()).encode("utf-8")


def _orjson_line(record: Any) -> bytes | None:
    """orjson's JSON of `record`, None when it refuses it. Keys that are not strings are rare and
    make orjson take a slower path for every dict: tried without them first (the same JSON)."""
    try:
        return orjson.dumps(record, default=_jsonable, option=_ORJSON_STR_KEYS)
    except (orjson.JSONEncodeError, RecursionError, TypeError):
        pass
    try:
        return orjson.dumps(record, default=_jsonable, option=_ORJSON_OPTIONS)
    except (orjson.JSONEncodeError, RecursionError, TypeError):
        return None


def _with_fragments(record: dict[str, Any], encoded: Mapping[str, bytes] | None) -> dict[str, Any]:
    if not encoded:
        return record
    return {k: orjson.Fragment(encoded[k]) if k in encoded else v for k, v in record.items()}


def _text_line(line: str, secrets: Iterable[str]) -> str:
    """A line made as text (json's, for what orjson refuses): `secrets` redacted, and the
    characters no session line holds raw escaped."""
    for secret in secrets:  # before escaping: a secret may hold what gets escaped
        if secret in line:
            line = line.replace(secret, REDACTED)
    if line.isascii():
        return line
    return _RAW_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


def encoded_value(value: Any) -> bytes | None:
    """One field's JSON exactly as orjson writes it inside a session line (compact UTF-8), or None
    when orjson could not write it there (the line then goes through json, see `session_line`).
    Encoded inside a list: one level down, as in the line, so a value nested as deeply as orjson
    allows fails here as it would in the line."""
    data = _orjson_line([value])
    return None if data is None else data[1:-1]


def _write_all(handle: Any, data: bytes) -> None:
    """All of `data` to an unbuffered file (a write() may take only part of it)."""
    written = handle.write(data)
    if written < len(data):
        view = memoryview(data)[written:]
        while view:
            view = view[handle.write(view) :]


def value_json(value: Any) -> str:
    """One value's compact JSON text, as a session line would hold it (before secrets are
    redacted); what json cannot write is replaced by a note, as in `session_line`."""
    try:
        return orjson.dumps(value, default=_jsonable, option=_ORJSON_OPTIONS).decode()
    except (orjson.JSONEncodeError, RecursionError, TypeError):
        pass
    try:
        return json.dumps(value, ensure_ascii=False, default=_jsonable, separators=(",", ":"))
    except (RecursionError, ValueError, TypeError):
        try:
            return json.dumps(_recordable(value), ensure_ascii=False, default=_jsonable, separators=(",", ":"))
        except (RecursionError, ValueError, TypeError) as exc:
            return json.dumps(f"[a value that could not be written: {type(exc).__name__}]")


def _stdlib_line(record: dict[str, Any]) -> str:
    try:
        return json.dumps(record, ensure_ascii=False, default=_jsonable)
    except (RecursionError, ValueError, TypeError):
        try:
            line = json.dumps(_recordable(record), ensure_ascii=False, default=_jsonable)
        except (RecursionError, ValueError, TypeError) as exc:  # the stack is nearly spent already
            line = json.dumps(
                {"event": record.get("event"), "t": record.get("t"), "unrecorded": f"the event could not be written: {type(exc).__name__}"},
                default=repr,
            )
    return line


def _recordable(value: Any, depth: int = 0) -> Any:
    """`value` with what json cannot write replaced by a note."""
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int):
        try:
            int.__repr__(value)
        except ValueError:  # more digits than Python converts
            return f"[an integer of {value.bit_length()} bits, too long to record]"
        return value
    if depth >= RECORDED_DEPTH:
        return f"[nested more than {RECORDED_DEPTH} levels deep: not recorded]"
    if isinstance(value, dict):
        return {k if isinstance(k, str) else _key(k): _recordable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_recordable(v, depth + 1) for v in value]
    return _recordable(_jsonable(value), depth + 1)


def _key(key: Any) -> str:
    try:
        return repr(key)
    except Exception:
        return f"<{type(key).__name__}>"


def _jsonable(value: Any) -> Any:
    try:
        if hasattr(value, "to_dict"):
            return value.to_dict()
        if isinstance(value, (set, tuple)):
            return list(value)
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return repr(value)
    except Exception:  # a value that cannot even describe itself
        return f"<{type(value).__name__}>"


@dataclass
class Session:
    """A session record read back: its events (models), and the parts everything else asks for."""

    path: Path
    events: list[SessionEvent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # damaged lines skipped, "file:line: why"

    @property
    def start(self) -> StartEvent:
        first = self.events[0] if self.events else None
        return first if isinstance(first, StartEvent) else StartEvent()

    @property
    def end(self) -> EndEvent | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, EndEvent) else None

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def truncated(self) -> bool:
        """Whether a payload was recorded truncated (payload_caps.py): an event names it in `capped`."""
        return any(getattr(event, "capped", None) for event in self.events)

    @property
    def task_id(self) -> str:
        task = self.start.task
        return task.id if task is not None else ""

    def tool_calls(self, leaves: bool = True) -> Iterator[ToolCallEvent]:
        """Tool-call events in execution order. With `leaves`, the domain calls (top level and inside
        exec_code blocks, not the blocks themselves); otherwise the top-level calls (blocks included)."""
        for event in self.events:
            if not isinstance(event, ToolCallEvent):
                continue
            if leaves and event.role == BLOCK:
                continue
            if not leaves and event.role == CHILD:
                continue
            yield event


class SessionFileError(InputError, ValueError):
    pass


def read_session(path: str | Path) -> Session:
    """A session file, read line by line: a line that is not UTF-8, not JSON or not an event is
    skipped with a warning (`Session.warnings`, naming file and line), and so is a torn last line
    (a trial that crashed while writing it). A kind of event this ebench does not know is kept as
    an `OtherEvent`, an event whose fields have unexpected types as recorded (with a warning).
    Only a file without its start event is refused."""
    path = Path(path)
    events: list[SessionEvent] = []
    warnings: list[str] = []
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    lines = data.split(b"\n")  # not splitlines(): U+2028 and friends may stand inside an older line
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, 1):
        try:
            record = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            warnings.append(f"{path}:{number}: not UTF-8 text, skipped")
            continue
        except (ValueError, RecursionError):
            torn = number == len(lines) and not data.endswith(b"\n")
            warnings.append(
                f"{path}:{number}: "
                + ("a torn last line (the trial stopped while writing it), skipped" if torn else "not a JSON line, skipped")
            )
            continue
        if not isinstance(record, dict) or not isinstance(record.get("event"), str):
            warnings.append(f"{path}:{number}: not a session event, skipped")
            continue
        event, valid = event_from(record)
        if not valid:
            warnings.append(f"{path}:{number}: a {record['event']} event with fields of unexpected types, kept as recorded")
        events.append(event)
    if not events or not isinstance(events[0], StartEvent) or events[0].format not in SESSION_FORMATS:
        raise SessionFileError(f"{path}: not an {SESSION_FORMAT} session (no start event)")
    _restore_arguments(events)
    return Session(path, events, warnings)


def _restore_arguments(events: list[SessionEvent]) -> None:
    """Put back the arguments a tool_call stored in its model message (`args_in`): those of the
    call of the same id in the last assistant message before it (ids that message repeats are
    never referred to). A reference to nothing leaves `args` None."""
    asked: dict[str, Any] = {}
    for event in events:
        if isinstance(event, MessageEvent) and event.role == "assistant":
            asked = asked_arguments(event.tool_calls)
        elif isinstance(event, ToolCallEvent) and event.args_in == ARGS_IN_MESSAGE and event.args is None:
            call_id = event.id if isinstance(event.id, str) else None
            if call_id in asked:
                arguments = asked[call_id]
                event.args = block_args(arguments) if event.tool == EXEC_CODE else arguments


def asked_arguments(tool_calls: Any) -> dict[str, Any]:
    """id -> arguments of a model message's tool calls whose id is a string it does not repeat."""
    found: dict[str, Any] = {}
    repeated: set[str] = set()
    for call in tool_calls if isinstance(tool_calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        call_id = call.get("id") if isinstance(call, dict) else None
        if not isinstance(call_id, str) or not isinstance(function, dict) or "arguments" not in function:
            continue
        if call_id in found:
            repeated.add(call_id)
        found[call_id] = function["arguments"]
    return {k: v for k, v in found.items() if k not in repeated}
