"""Trials made outside a batch from the app: a person solving (solver "human"), or a model
watched live. They are recorded in `<data dir>/sessions/` like MCP trials, so `ebench report`
and `ebench replay` read them; the task browser shows each task's latest human result."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths import sessions_dir
from ..tasks.spec import Task
from .events import EndEvent, SessionEvent, StartEvent, event_from
from .record import new_session_file, secret_values, session_files
from .trial import Trial, open_trial

HUMAN = "human"


def human_trial(task: Task, *, code: bool = False, blind: bool = False, folder: Path | None = None) -> Trial:
    """A person's attempt, recorded exactly like a model's; blind attempts are human baselines."""
    # Only blind attempts are baselines: with the expected diff in view, a person is being helped.
    label = HUMAN if blind else f"{HUMAN}-assisted"
    return recorded_trial(task, HUMAN, {"name": HUMAN, "label": label, "blind": blind}, code=code, folder=folder)


def recorded_trial(task: Task, kind: str, solver: dict[str, Any], *, code: bool = False, folder: Path | None = None) -> Trial:
    """A trial recorded into a fresh session file; the file is removed again if the trial cannot start."""
    path = new_session_file(folder or sessions_dir(), task.id, kind)
    return open_trial(task, path, secrets=secret_values(solver), code=code, solver=solver)


def discard(trial: Trial) -> None:
    """Abandon an unfinished attempt: close it and delete its session (it was never graded)."""
    trial.close()
    if trial.writer is not None and not trial.finished:
        trial.writer.path.unlink(missing_ok=True)


@dataclass
class Attempt:
    task: str
    passed: bool | None  # None: abandoned or still open (no end event)
    termination: str | None
    session: Path
    started: str


def _last_line(path: Path, chunk: int = 65536) -> str:
    """The file's last line, read from the end: an end event (final diff, grade) can be long."""
    with path.open("rb") as handle:
        end = handle.seek(0, 2)
        tail = b""
        while end > 0:
            start = max(0, end - chunk)
            handle.seek(start)
            tail = handle.read(end - start) + tail
            end = start
            if b"\n" in tail.rstrip(b"\n"):
                break
    return tail.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode("utf-8", "replace")


def _first_line(path: Path) -> str:
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        return handle.readline()


def _event(line: str) -> SessionEvent | None:
    """The model of one session line (None when it is not an event, or not a well-formed one)."""
    data = json.loads(line)
    if not isinstance(data, dict) or not isinstance(data.get("event"), str):
        return None
    event, valid = event_from(data)
    return event if valid else None


def latest_attempts(folder: Path | None = None, solver: str = HUMAN, queries: dict[str, str] | None = None) -> dict[str, Attempt]:
    """Each task's most recent attempt by `solver`, read from the first and last lines of the
    session files only (the browser calls this for hundreds of files). With `queries` (task id ->
    request), an attempt counts only for the task it was made on: a regenerated suite may give
    an old id to another task."""
    folder = folder or sessions_dir()
    latest: dict[str, Attempt] = {}

    def written(path: Path) -> tuple[int, str]:
        try:
            return path.stat().st_mtime_ns, path.name
        except OSError:
            return 0, path.name

    for path in sorted(session_files(folder, solver), key=written):  # oldest first: the latest wins
        try:
            start = _event(_first_line(path))
            if not isinstance(start, StartEvent) or start.solver.get("name") != solver or start.task is None:
                continue
            end = None
            try:
                last = _event(_last_line(path))
                end = last if isinstance(last, EndEvent) else None
            except json.JSONDecodeError:
                pass
        except (OSError, json.JSONDecodeError, RecursionError):
            continue  # not a session: skipped here, `ebench report` names it
        task_id = start.task.id
        if queries is not None and queries.get(task_id) != start.task.query:
            continue
        latest[task_id] = Attempt(task_id, end.passed if end else None, end.termination if end else None, path, start.started)
    return latest
