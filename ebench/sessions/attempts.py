"""Trials made outside a batch from the app: a person solving (solver "human"), or a model
watched live. They are recorded in `<data dir>/sessions/` like MCP trials, so `ebench report`
and `ebench replay` read them; the task browser shows each task's latest human result."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths import sessions_dir
from ..tasks.spec import Task
from .events import EndEvent, SessionEvent, StartEvent, ToolCallEvent, event_from
from .record import SessionFileError, SessionWriter, new_session_file, read_session, secret_values, session_files
from .trial import ResumeError, Trial, open_trial
from .users import UserSettings

HUMAN = "human"

# Where a person's attempt was made: `ebench play --web` runs each browser tab's app with
# EBENCH_VIA=web, so a human baseline says whether it came through the web view.
VIA_VARIABLE = "EBENCH_VIA"
WEB, TERMINAL = "web", "terminal"


# What ended a person's attempt, in words: the termination codes are about a model's loop.
HUMAN_OUTCOMES = {
    "agent_stopped": "submitted",
    "max_turns": "turn limit reached",
    "max_tool_calls": "call limit reached",
    "time_limit": "time ran out",
    "context_limit": "context limit reached",
    "agent_error": "ended by an error",
    "infra_error": "ended by a harness error",
}


def is_human(solver: dict[str, Any]) -> bool:
    """Whether a session's solver is a person (the app's human attempts)."""
    return solver.get("name") == HUMAN


def human_outcome(termination: object) -> str:
    """How a person's attempt ended, in words ("submitted" rather than "agent_stopped")."""
    return HUMAN_OUTCOMES.get(str(termination), str(termination))


def attempt_via(environ: dict[str, str] | None = None) -> str:
    """Where this process's attempts are made: WEB in a tab of `ebench play --web`, else TERMINAL."""
    return WEB if (os.environ if environ is None else environ).get(VIA_VARIABLE) == WEB else TERMINAL


def human_trial(task: Task, *, code: bool = False, blind: bool = False, folder: Path | None = None, via: str | None = None) -> Trial:
    """A person's attempt, recorded exactly like a model's; blind attempts are human baselines.
    The solver records `via` (default: `attempt_via()`), "web" or "terminal"."""
    # Only blind attempts are baselines: with the expected diff in view, a person is being helped.
    label = HUMAN if blind else f"{HUMAN}-assisted"
    solver = {"name": HUMAN, "label": label, "blind": blind, "via": via or attempt_via()}
    return recorded_trial(task, HUMAN, solver, code=code, folder=folder)


def recorded_trial(task: Task, kind: str, solver: dict[str, Any], *, code: bool = False, folder: Path | None = None) -> Trial:
    """A trial recorded into a fresh session file; the file is removed again if the trial cannot start."""
    path = new_session_file(folder or sessions_dir(), task.id, kind)
    user = UserSettings().for_task(task)  # the scripted user; a screen may seat a person instead
    return open_trial(task, path, secrets=secret_values(solver), code=code, solver=solver, user=user)


def discard(trial: Trial) -> None:
    """Abandon an unfinished attempt: close it and delete its session (it was never graded)."""
    trial.close()
    if trial.writer is not None and not trial.finished:
        trial.writer.path.unlink(missing_ok=True)


@dataclass(frozen=True)
class UnfinishedAttempt:
    """A person's attempt left without submitting: its session has no end event and can go on."""

    session: Path
    calls: int  # top-level calls (an exec_code block is one)
    code: bool
    blind: bool
    seconds: float  # time spent on it so far (the last recorded event's time)


def unfinished_attempt(task: Task, folder: Path | None = None) -> UnfinishedAttempt | None:
    """The task's latest human attempt, when it was left unfinished (None when the latest one was
    submitted, or there is none). Only attempts made on this very task count (same request)."""
    latest = latest_attempts(folder, queries={task.id: task.query}).get(task.id)
    if latest is None or latest.ended:
        return None
    try:
        session = read_session(latest.session)
    except SessionFileError:
        return None
    start = session.start
    calls = [e for e in session.events if isinstance(e, ToolCallEvent) and not e.parent]
    return UnfinishedAttempt(
        latest.session,
        len(calls),
        start.mode == "code",
        bool(start.solver.get("blind")),
        max((e.t or 0.0 for e in session.events), default=0.0),
    )


def resume_trial(task: Task, path: Path) -> Trial:
    """Continue an unfinished human attempt of `task` in its own session file: the recorded calls
    are re-executed on a fresh copy (the world as it was left), new events are appended.
    ResumeError when the file is not such an attempt or cannot be continued faithfully."""
    try:
        session = read_session(path)
    except SessionFileError as exc:
        raise ResumeError(str(exc)) from None
    start = session.start
    if start.task is None or start.task.id != task.id or start.task.query != task.query:
        raise ResumeError(f"{path}: an attempt at another task")
    if start.solver.get("name") != HUMAN:
        raise ResumeError(f"{path}: not a person's attempt")
    if any(isinstance(e, EndEvent) for e in session.events):
        raise ResumeError(f"{path}: already submitted")
    events = session.events[1:]
    writer = SessionWriter(path, secret_values(start.solver), resume_at=max((e.t or 0.0 for e in events), default=0.0))
    try:
        user = UserSettings().for_task(task)
        return Trial(task, writer=writer, solver=dict(start.solver), code=start.mode == "code", resumed=events, user=user)
    except BaseException:
        writer.close()  # the file stays as it was: the attempt is still there to resume or discard
        raise


def discard_session(path: Path) -> None:
    """Delete an unfinished attempt's session (the person chose to start over)."""
    path.unlink(missing_ok=True)


@dataclass
class Attempt:
    task: str
    passed: bool | None  # None: abandoned or still open (no end event)
    termination: str | None
    session: Path
    started: str
    ended: bool = False  # an end event was written (submitted, or ended by a limit or an error)
    via: str | None = None  # WEB or TERMINAL; None for an attempt recorded before ebench noted it (either)


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
        via = start.solver.get("via")
        latest[task_id] = Attempt(
            task_id,
            end.passed if end else None,
            end.termination if end else None,
            path,
            start.started,
            end is not None,
            via if isinstance(via, str) else None,
        )
    return latest
