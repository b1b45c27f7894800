"""Trials made outside a batch from the app: a person solving (solver "human"), or a model
watched live. They are recorded in `<data dir>/sessions/` like MCP trials, so `ebench report`
and `ebench replay` read them; the task browser shows each task's latest human result.

A person's unsubmitted attempt also keeps a draft beside its session (`<session>.draft.json`,
rewritten atomically as it changes): what was typed but not sent (the code editor's text, the
composer's fields) and the time spent so far, so a quit or a killed process loses neither. Time
counts while the attempt is open; a gap with no input longer than IDLE_CAP counts as IDLE_CAP.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..paths import sessions_dir, write_text_atomically
from ..tasks.spec import Task
from .events import EndEvent, SessionEvent, SolverInfo, StartEvent, ToolCallEvent, event_from
from .record import REDACTED, SessionFileError, SessionWriter, new_session_file, read_session, secret_values, session_files
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


def is_human(solver: SolverInfo) -> bool:
    """Whether a session's solver is a person (the app's human attempts)."""
    return solver.name == HUMAN


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
    """Abandon an unfinished attempt: close it and delete its session and draft (it was never graded)."""
    trial.close()
    if trial.writer is not None and not trial.finished:
        trial.writer.path.unlink(missing_ok=True)
        drop_draft(trial.writer.path)


# -- time: counted while the attempt is open, idle gaps capped ---------------------------------

IDLE_CAP = 300.0  # seconds: a gap with no input longer than this counts as this much


class IdleClock:
    """A person's idle time: a gap with no input longer than `cap` seconds counts as `cap`.
    `excess()` is the time of the current gap beyond the cap not yet taken out (then counted as
    taken); `touch()` marks an input and returns the excess of the gap it ends. `clock` is
    injectable (tests), monotonic by default."""

    def __init__(self, cap: float = IDLE_CAP, clock: Callable[[], float] = time.monotonic) -> None:
        self.cap = cap
        self._clock = clock
        self._last = clock()
        self._taken = 0.0  # of the current gap, already taken out

    def excess(self) -> float:
        beyond = max(0.0, self._clock() - self._last - self.cap) - self._taken
        self._taken += beyond
        return beyond

    def touch(self) -> float:
        beyond = self.excess()
        self._last, self._taken = self._clock(), 0.0
        return beyond


def leave_out(trial: Trial, seconds: float) -> float:
    """Take `seconds` just passed (idle time beyond the cap) out of the attempt's time: its timer
    and the times of the events recorded from now on. Never before the last recorded event (a
    call running is work); returns the seconds taken."""
    if seconds <= 0:
        return 0.0
    taken = trial.writer.leave_out(seconds) if trial.writer is not None else seconds
    trial.started += taken
    return taken


# -- drafts: what was typed but not sent ---------------------------------------------------------

DRAFT_FORMAT = "ebench-draft/1"
DRAFT_SUFFIX = ".draft.json"


def draft_path(session: Path) -> Path:
    """Where an attempt's draft is kept: beside its session (not a `.jsonl`, so no reader of
    sessions meets it)."""
    return session.with_name(session.stem + DRAFT_SUFFIX)


@dataclass(frozen=True)
class Draft:
    """An attempt's unsent work and its time when last saved. `composer` is the app's: the tool
    chosen and each field's text, or the raw JSON text ({"tool", "fields"} or {"tool", "raw"}),
    with "sent": true when it is the call just run (shown again, but nothing unsent)."""

    seconds: float = 0.0
    code: str = ""
    composer: dict[str, Any] | None = field(default=None)

    @property
    def composer_text(self) -> bool:
        """Whether the composer holds typed text not sent yet (a field, or raw JSON other than `{}`)."""
        composer = self.composer or {}
        if composer.get("sent"):
            return False
        fields = composer.get("fields")
        raw = composer.get("raw")
        return bool(isinstance(fields, dict) and any(str(v).strip() for v in fields.values())) or (
            isinstance(raw, str) and raw.strip() not in ("", "{}")
        )

    @property
    def empty(self) -> bool:
        """Nothing typed: no code, no filled field."""
        return not self.code.strip() and not self.composer_text

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": DRAFT_FORMAT, "seconds": round(self.seconds, 3), "code": self.code}
        if self.composer is not None:
            data["composer"] = self.composer
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Draft | None:
        """The draft in `data`, or None when it is not one (another format, wrong types)."""
        if not isinstance(data, dict) or data.get("format") != DRAFT_FORMAT:
            return None
        seconds, code, composer = data.get("seconds", 0.0), data.get("code", ""), data.get("composer")
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not isinstance(code, str):
            return None
        return cls(max(float(seconds), 0.0), code, composer if isinstance(composer, dict) else None)


def save_draft(session: Path, draft: Draft) -> None:
    """Write the draft beside `session` atomically (a temporary file, then `os.replace`): a kill
    mid-write leaves the previous draft whole. Secrets are redacted as in the session. OSError
    when it cannot be written."""
    text = json.dumps(draft.to_dict(), ensure_ascii=False)
    for secret in secret_values():
        text = text.replace(json.dumps(secret, ensure_ascii=False)[1:-1], REDACTED)
    write_text_atomically(draft_path(session), text, prefix=".draft-")


def load_draft(session: Path) -> Draft | None:
    """The draft kept beside `session`; None when there is none or it cannot be read (never raises)."""
    try:
        return Draft.from_dict(json.loads(draft_path(session).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def drop_draft(session: Path) -> None:
    """Delete the draft kept beside `session` (the attempt was submitted or discarded)."""
    draft_path(session).unlink(missing_ok=True)


class DraftKeeper:
    """Writes the drafts of one attempt (its session file's) from any thread: drafts offered while
    one is being written fold into one, and the newest is always the one written last. After
    `drop`, nothing more is written."""

    def __init__(self, session: Path) -> None:
        self.session = session
        self._pending: Draft | None = None
        self._lock = threading.Lock()  # guards `_pending`
        self._writing = threading.Lock()  # one write at a time, so the newest is written last
        self.dropped = False
        self.saved: Draft | None = None  # the last draft written
        self.error: str | None = None  # why the last write failed

    def offer(self, draft: Draft) -> None:
        """The draft to write next (replacing one offered and not yet written)."""
        with self._lock:
            self._pending = draft

    def write(self) -> None:
        """Write the newest draft offered, if any (from a worker thread, or at close)."""
        with self._writing:
            with self._lock:
                draft, self._pending = self._pending, None
            if draft is None or self.dropped:
                return
            try:
                save_draft(self.session, draft)
            except OSError as exc:
                self.error = f"the draft could not be saved beside {self.session}: {exc.strerror or exc}"
                return
            self.saved, self.error = draft, None

    def drop(self) -> None:
        """The attempt is submitted or discarded: delete its draft; later offers are not written."""
        with self._writing:
            self.dropped = True
            drop_draft(self.session)


@dataclass(frozen=True)
class UnfinishedAttempt:
    """A person's attempt left without submitting: its session has no end event and can go on."""

    session: Path
    calls: int  # top-level calls (an exec_code block is one)
    code: bool
    blind: bool
    seconds: float  # time spent on it so far (its draft's time, else the last recorded event's)
    draft: Draft | None = None  # what was typed but not sent


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
    draft = load_draft(latest.session)
    recorded = max((e.t or 0.0 for e in session.events), default=0.0)
    return UnfinishedAttempt(
        latest.session,
        len(calls),
        start.mode == "code",
        bool(start.solver.blind),
        max(recorded, draft.seconds if draft else 0.0),
        draft,
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
    if not is_human(start.solver):
        raise ResumeError(f"{path}: not a person's attempt")
    if any(isinstance(e, EndEvent) for e in session.events):
        raise ResumeError(f"{path}: already submitted")
    events = session.events[1:]
    recorded = max((e.t or 0.0 for e in events), default=0.0)
    draft = load_draft(path)
    # The time spent after the last call (reading, typing) was saved with the draft.
    spent = max(recorded, draft.seconds if draft else 0.0)
    writer = SessionWriter(path, secret_values(start.solver.to_dict()), resume_at=spent)
    try:
        user = UserSettings().for_task(task)
        trial = Trial(task, writer=writer, solver=start.solver.to_dict(), code=start.mode == "code", resumed=events, user=user)
    except BaseException:
        writer.close()  # the file stays as it was: the attempt is still there to resume or discard
        raise
    trial.started -= spent - recorded  # the trial counts from its last event; the draft's time goes on
    return trial


def discard_session(path: Path) -> None:
    """Delete an unfinished attempt's session and its draft (the person chose to start over)."""
    path.unlink(missing_ok=True)
    drop_draft(path)


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
            if not isinstance(start, StartEvent) or start.solver.name != solver or start.task is None:
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
        via = start.solver.via
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
