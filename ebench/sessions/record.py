"""Session records: one JSON-lines file per trial, appended to as the trial goes.

Each line is one event, written and flushed when it happens, so a crash loses at most the line
being written (a torn last line is skipped on reading). Events, in order:

- `start`: the format, the session id, the task (id, domain, actor, query, capabilities, reference
  call count), the solver's configuration, the mode (tools or code), the ebench version, the world's
  fingerprint, the wall-clock start.
- `message`: a model message (role, content, reasoning, the tool calls it asked for, usage, cost).
- `tool_call`: one call: its id, tool, arguments as sent, ok, result (what the solver received),
  error code, duration; `parent` names the exec_code block a call was made from.
- `api_error`: a failed model request (retried or final).
- `end`: termination reason, the final diff, the grade, totals.

Every event carries `t`, seconds since the trial started. Secrets never reach the file: every line
is scrubbed of the values of secret-looking configuration keys and environment variables.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SESSION_FORMAT = "ebench-session/1"
_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|authorization|credential", re.IGNORECASE)
REDACTED = "[redacted]"


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_config(config: Any) -> Any:
    """The configuration with the values of secret-looking keys replaced (nested dicts included)."""
    if isinstance(config, dict):
        return {k: (REDACTED if is_secret_name(str(k)) and v not in (None, "") else redact_config(v))
                for k, v in config.items()}
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


def new_session_file(folder: Path, task_id: str, kind: str) -> Path:
    """Claim a fresh `<stamp>-<task>-<kind>.jsonl` in `folder`: created empty here, so two trials
    started at the same moment (in threads or processes) never share a file. The stamp sorts by
    time to the millisecond."""
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


class SessionWriter:
    """Appends events to one session file; thread-safe (exec_code calls arrive from a thread)."""

    def __init__(self, path: Path, secrets: Iterable[str] = ()) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = path.open("w", encoding="utf-8")
        self._secrets = [s for s in secrets if s]
        self._lock = threading.Lock()
        self._started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    def write(self, event: str, **data: Any) -> None:
        record = {"event": event, "t": round(self.elapsed(), 4), **data}
        line = json.dumps(record, ensure_ascii=False, default=_jsonable)
        for secret in self._secrets:
            if secret in line:
                line = line.replace(secret, REDACTED)
        with self._lock:
            if self._handle.closed:
                return
            self._handle.write(line + "\n")
            self._handle.flush()

    def close(self) -> None:
        with self._lock:
            self._handle.close()


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return repr(value)


@dataclass
class Session:
    """A session record read back: its events, and the parts everything else asks for."""

    path: Path
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def start(self) -> dict[str, Any]:
        return self.events[0] if self.events and self.events[0].get("event") == "start" else {}

    @property
    def end(self) -> dict[str, Any] | None:
        last = self.events[-1] if self.events else None
        return last if last and last.get("event") == "end" else None

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def task_id(self) -> str:
        return str(self.start.get("task", {}).get("id", ""))

    def tool_calls(self, leaves: bool = True) -> Iterator[dict[str, Any]]:
        """Tool-call events in execution order. With `leaves`, the domain calls (top level and inside
        exec_code blocks, not the blocks themselves); otherwise the top-level calls (blocks included)."""
        for event in self.events:
            if event.get("event") != "tool_call":
                continue
            if leaves and event.get("tool") == "exec_code" and event.get("parent") is None:
                continue
            if not leaves and event.get("parent") is not None:
                continue
            yield event


class SessionFileError(ValueError):
    pass


def read_session(path: str | Path) -> Session:
    path = Path(path)
    events: list[dict[str, Any]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, 1):
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):  # torn last line: the trial crashed while writing it
                break
            raise SessionFileError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(event, dict) or "event" not in event:
            raise SessionFileError(f"{path}:{number}: not a session event")
        events.append(event)
    if not events or events[0].get("event") != "start" or events[0].get("format") != SESSION_FORMAT:
        raise SessionFileError(f"{path}: not an {SESSION_FORMAT} session (no start event)")
    return Session(path, events)
