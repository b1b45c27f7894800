"""A trial: one attempt at one task, on a fresh private copy of the world, recorded as it goes.

The trial owns the copy, the change tracker and the tool environment (bound to the task's actor
and the domain's frozen clock). Solvers act only through `call` and `exec_code`; both record the
call in the session before returning. `finish` grades the diff, writes the last event and returns
a `TrialSummary`, the line the run's results file keeps. The world file is never written.

What the session keeps of each payload (arguments, results, messages) is bounded by the trial's
`RecordingBudget` (payload_caps.py), and arguments the model message holds are not written again
(`args_in`); the tools and the solver always get the values whole.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..engine.domain import Domain
from ..engine.domain_registry import get_domain
from ..engine.tools import ErrorCode, ToolResult, tool_name_text
from ..engine.world import ensure_world, scratch_copy, world_id
from ..errors import InputError
from ..tasks.diff import ChangeTracker, Diff, tracker_script
from ..tasks.grading import Grade, grade
from ..tasks.paths import optimal_turns, write_tools
from ..tasks.reference import DEFAULT_LIMITS, ReferenceFailed, run_steps
from ..tasks.scenarios import Scenario, not_reached, scenario_grade, turn_grade
from ..tasks.spec import Task
from ..tasks.worlds import WorldMismatch, check_world, task_seed
from .events import (
    ARGS_IN_MESSAGE,
    BLOCK,
    CHILD,
    EXEC_CODE,
    SESSION_FORMAT,
    EndEvent,
    SessionEvent,
    SolverInfo,
    StartEvent,
    TaskHeader,
    ToolCallEvent,
    TurnEndEvent,
    block_args,
    make_event,
    recorded_call,
)
from .payload_caps import CHILDREN, RecordingBudget, RecordingCaps, matches_marker, recording_note, rerunnable, short_text, with_note
from .perturb import Layer, Perturbation
from .record import SessionWriter, asked_arguments
from .results import PerturbationRecord, ScenarioTurnResult, TrialSummary, grade_counts
from .terminations import Termination
from .users import MAX_SMALL_TALK, MAX_USER_REPLIES, AskedFirst, User, with_asked_first

# Module-level names for the members, so `from .trial import AGENT_STOPPED` reads as before.
AGENT_STOPPED = Termination.AGENT_STOPPED
MAX_TURNS = Termination.MAX_TURNS
MAX_TOOL_CALLS = Termination.MAX_TOOL_CALLS
TIME_LIMIT = Termination.TIME_LIMIT
CONTEXT_LIMIT = Termination.CONTEXT_LIMIT
AGENT_ERROR = Termination.AGENT_ERROR
INFRA_ERROR = Termination.INFRA_ERROR


# Bytes of a payload's JSON from which the line takes it as the caps made it: below, encoding it
# again inside the line costs less than handing it over (orjson.Fragment).
ENCODED_REUSED = 2048


class ResumeError(InputError, ValueError):
    """An unfinished attempt that cannot be continued (another task, finished, or its calls no
    longer give what was recorded)."""


def as_read_back(value: Any) -> Any:
    """A result as it reads back from the session file (JSON), so replayed and recorded compare."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def replays_as_recorded(event: ToolCallEvent, replayed: Any) -> bool:
    """Whether a call run again gave the result it recorded (a result recorded truncated: the
    one its marker stands for)."""
    if "result" in (event.capped or ()):
        return matches_marker(event.result, replayed)
    return bool(as_read_back(replayed) == as_read_back(event.result))


@dataclass
class TrialLimits:
    max_turns: int = DEFAULT_LIMITS["max_turns"]
    max_tool_calls: int = DEFAULT_LIMITS["max_tool_calls"]
    timeout: float = 600.0  # seconds of wall time for the whole trial, waits on the model's API not counted

    def for_task(self, task: Task | None) -> TrialLimits:
        """The larger of these limits and the task's budget (3x its public solution), so a correct
        solver can always finish within them."""
        if task is None or not task.budget:
            return self
        return replace(
            self,
            max_turns=max(self.max_turns, task.budget.get("max_turns", 0)),
            max_tool_calls=max(self.max_tool_calls, task.budget.get("max_tool_calls", 0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"max_turns": self.max_turns, "max_tool_calls": self.max_tool_calls, "timeout": self.timeout}


def task_header(task: Task) -> TaskHeader:
    return TaskHeader(
        id=task.id,
        domain=task.domain,
        actor=task.actor,
        query=task.query,
        capabilities=task.capabilities,
        reference_calls=len(task.reference_solution),
        source=task.source,
    )


_WORLDS: dict[tuple[str, int], tuple[Path, str]] = {}
_IMAGES: dict[tuple[str, int], bytes] = {}
_IMAGES_LOCK = threading.Lock()


def current_world(domain: Domain, seed: int | None = None) -> tuple[Path, str]:
    """The world of (domain, seed) (built if needed) and its fingerprint, checked once per process:
    the check hashes the domain's code, too slow to repeat for every trial of a batch."""
    seed = domain.default_seed if seed is None else seed
    if (domain.name, seed) not in _WORLDS:
        path = ensure_world(domain, seed)
        _WORLDS[(domain.name, seed)] = (path, world_id(domain, seed))
    return _WORLDS[(domain.name, seed)]


def trial_copy(domain: Domain, seed: int | None = None) -> sqlite3.Connection:
    """A private in-memory copy of the world with change tracking already installed.

    The first call per process copies the world, installs the tracker in the copy's main schema
    and keeps its serialized image; every trial then starts from `deserialize` of that image (a
    memory copy), instead of a backup plus ~100 DDL statements. The world file is only read."""
    seed = domain.default_seed if seed is None else seed
    with _IMAGES_LOCK:
        if (domain.name, seed) not in _IMAGES:
            prepared = scratch_copy(current_world(domain, seed)[0])
            prepared.executescript(tracker_script(domain.schema, temp=False))
            _IMAGES[(domain.name, seed)] = prepared.serialize()
            prepared.close()
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.deserialize(_IMAGES[(domain.name, seed)])
    conn.execute("PRAGMA foreign_keys=ON")
    # The copy is in memory already: SQLite's page cache (2 MB by default) would hold a second copy
    # of the pages a trial reads. 64 KB keeps a copy at about 4 MB instead of 6 (256 trials at
    # once: 500 MB less), and a page it misses is a memcpy from the image, as fast as a hit.
    conn.execute("PRAGMA cache_size=-64")
    return conn


class _OpenCopies:
    """Counts the trials' open copies, and gives the memory of closed ones back to the system.

    glibc keeps freed memory in the process: a copy (4-8 MB, in many pieces) freed among others
    still in use fragments the heap, so a batch of 256 concurrent trials kept 1.1 GB once they had
    ended. `malloc_trim` returns it; it is called only when the open copies fell to half their
    peak (and by at least TRIM_AFTER): never in a batch's steady state, where new trials reuse the
    freed memory, nor for one trial after another (trimming there would only cost page faults)."""

    TRIM_AFTER = 16  # copies closed since the peak (about 70 MB for the largest world)

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0
        self.peak = 0

    def opened(self) -> None:
        with self.lock:
            self.open += 1
            self.peak = max(self.peak, self.open)

    def closed(self) -> None:
        with self.lock:
            self.open -= 1
            if self.peak - self.open < self.TRIM_AFTER or self.open > self.peak // 2:
                return
            self.peak = self.open
        trim = _malloc_trim()
        if trim is not None:
            trim(0)


@functools.cache
def _glibc(name: str) -> Callable[..., int] | None:
    """A glibc function (malloc_trim, mallopt), or None on another C library (musl has neither) or system."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        function: Callable[..., int] = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    return function


def _malloc_trim() -> Callable[[int], int] | None:
    return _glibc("malloc_trim")


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK = 512 * 1024


MANY_COPIES = 64  # trials open at once from which their copies' blocks are mapped (map_large_blocks)


@functools.cache
def map_large_blocks() -> None:
    """For a process about to hold many copies at once (a batch at --concurrency MANY_COPIES or
    more): glibc serves every block of LARGE_BLOCK or more (a copy's 3-4 MB image, its growth)
    from a mapping of its own, given back to the system when freed. By default glibc raises that
    threshold to the largest block freed so far, after which copies come from the heap, where
    freed ones among live ones fragment it: 256 trials at once peaked at 2.3 GB, against 1.4 GB
    mapped. Not for every process: a mapped copy costs its page faults, about 2 ms a trial."""
    mallopt = _glibc("mallopt")
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK)


_OPEN_COPIES = _OpenCopies()


class _CopyPool:
    """Copies left by finished trials, ready for the next trial on the same world.

    A trial's copy runs inside one transaction, begun when the trial takes it (the tools' own
    savepoints nest in it). Giving the copy back rolls that transaction back, which returns every
    page to the image's state (rows, rowids, sequences, the change log), so the next trial finds
    exactly what a fresh copy holds, without paying a deserialize, a schema parse and a close
    again (2-3 ms of every trial). A copy whose transaction ended early (a statement committed or
    rolled it back) is closed, never reused."""

    KEEP = 8  # idle copies per world: in a batch, the next trial takes the last one's at once

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], list[sqlite3.Connection]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(domain: Domain, seed: int | None) -> tuple[str, int]:
        return domain.name, domain.default_seed if seed is None else seed

    def take(self, domain: Domain, seed: int | None) -> sqlite3.Connection:
        with self._lock:
            idle = self._idle.get(self._key(domain, seed))
            conn = idle.pop() if idle else None
        if conn is None:
            conn = trial_copy(domain, seed)
        conn.execute("BEGIN")
        return conn

    def give(self, domain: Domain, seed: int | None, conn: sqlite3.Connection) -> None:
        try:
            reusable = conn.in_transaction
            if reusable:
                conn.execute("ROLLBACK")
                reusable = not conn.in_transaction
        except sqlite3.Error:
            reusable = False
        if reusable:
            with self._lock:
                idle = self._idle.setdefault(self._key(domain, seed), [])
                if len(idle) < self.KEEP:
                    idle.append(conn)
                    return
        conn.close()

    def drop(self) -> None:
        """Close every idle copy (a batch has ended: nothing will take them soon)."""
        with self._lock:
            idle = [conn for copies in self._idle.values() for conn in copies]
            self._idle = {}
        for conn in idle:
            conn.close()

    def forget(self) -> None:
        """In a forked child: drop the parent's idle copies unused (a connection is not carried
        across a fork), with a lock no thread of the parent can be holding."""
        self._idle = {}
        self._lock = threading.Lock()


_COPIES = _CopyPool()
os.register_at_fork(after_in_child=_COPIES.forget)


def keep_idle_copies(keep: int | None) -> None:
    """How many copies of a world finished trials leave for the next (None: the default, KEEP)."""
    _COPIES.KEEP = type(_COPIES).KEEP if keep is None else keep


def drop_idle_copies() -> None:
    """Give back the memory of the copies finished trials left for the next ones."""
    _COPIES.drop()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class Trial:
    """A private copy of the world bound to one actor, with every call recorded in the session."""

    def __init__(
        self,
        task: Task | None,
        *,
        domain: Domain | None = None,
        actor: int | None = None,
        writer: SessionWriter | None = None,
        solver: dict[str, Any] | None = None,
        code: bool = False,
        trial_number: int = 1,
        session_name: str = "",
        resumed: Sequence[SessionEvent] | None = None,
        world_seed: int | None = None,
        user: User | None = None,
        perturb: Perturbation | None = None,
        recording: RecordingCaps | None = None,
    ) -> None:
        """`resumed`: the events an unfinished attempt recorded after its start (the session file
        goes on); its calls are re-executed on the fresh copy so the world is as it was left.
        `world_seed`: without a task, the world to work on (default: the domain's).
        `user`: who answers the agent's questions (users.py); only a task with a user profile has one.
        `perturb`: the perturbations the solver meets (perturb.py; PerturbError for code mode
        with a family it does not take). `recording`: the caps on what the session keeps of
        payloads (payload_caps.py; its defaults when None)."""
        self.task = task
        self.domain = domain or get_domain(task.domain if task else "")
        chosen = task.actor if task else actor
        if chosen is None:
            raise ValueError("a trial without a task needs an actor")
        self.actor: int = chosen
        self.writer = writer
        self.code = code
        self.trial_number = trial_number
        self.session_name = session_name or (str(writer.path) if writer else "")
        self.solver = dict(solver or {})
        self.started = time.perf_counter()
        # -- perturbations (perturb.py): the layer between the solver and the tools
        self.layer: Layer | None = None
        if perturb:
            perturb.check_mode(code)
            self.layer = Layer(perturb, task, self.domain.tools, trial_number)
        self._owed_latency = 0.0
        # --
        if task is not None:
            check_world(task)  # WorldMismatch: the task was made on a world this ebench does not build
        seed = task_seed(task) if task is not None else world_seed  # a task names its world; else the domain's, or this seed's
        world_id = current_world(self.domain, seed)[1]
        self.lock = threading.Lock()  # one tool call (or exec_code block) at a time on the copy
        self.tool_calls = 0
        self.inner_calls = 0
        self.exec_blocks = 0
        self.turns = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost: float | None = 0.0
        self.tool_errors: Counter[str] = Counter()
        self.history: list[ToolCallEvent] = []  # the recorded calls (for replay, the app)
        # Called with the kind and the model of every event recorded after the start (calls,
        # messages, API errors, the end), from whichever thread recorded it: the app watches a
        # trial through these.
        self.listeners: list[Callable[[str, SessionEvent], None]] = []
        self._next_id = 0
        self.recording = RecordingBudget(recording)
        # id -> arguments, as recorded, of the tool calls the last model message asked for: a
        # call made with those very arguments refers to them instead of writing them again
        self._asked: dict[str, Any] = {}
        self._sandbox: Any = None
        self.final_grade: Grade | None = None
        self.final_diff: Diff | None = None  # kept: the copy is closed once the trial is finished
        self.finished = False  # the end event is written
        self._closed = False
        self._released = False  # the copy went back to the pool (under the lock)
        self._seed = seed
        profile = task.user_profile if task is not None else []
        # A scenario (several turns of one conversation, scenarios.py) runs its turns in order:
        # each ends when the solver says so (`end_turn`) and is graded on its own changes.
        self.scenario: Scenario | None = task.scenario if task is not None else None
        self.turn_index = 0
        self._turn_calls = 0  # top-level calls made before the current turn began
        self.turn_grades: list[tuple[str, Grade, Diff]] = []
        self.user = user if profile or self.scenario is not None else None
        self.user_replies = 0  # this turn's replies that gave facts
        self.small_talk = 0  # this turn's other replies
        self.asked_first = AskedFirst(profile, write_tools(self.domain.name)) if profile else None
        self.conn = _COPIES.take(self.domain, seed)
        _OPEN_COPIES.opened()
        try:
            self.tracker = ChangeTracker(self.conn, self.domain.schema, install=False)
            self.env = self.domain.env(self.conn, self.actor)  # ToolError for an unknown actor
            if self.scenario is not None:
                self._begin_turn(0)
            if resumed is not None:
                self._restore(resumed)
            else:
                start = StartEvent(
                    format=SESSION_FORMAT,
                    session=self.session_name,
                    task=task_header(task) if task else None,
                    domain=self.domain.name,
                    actor=self.actor,
                    solver=SolverInfo.model_validate(self.solver),
                    mode="code" if code else "tools",
                    trial=trial_number,
                    ebench=__version__,
                    world=world_id,
                    world_seed=seed if seed is not None else self.domain.default_seed,
                    started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                )
                if self.layer is not None:  # written only when perturbed: a clean start reads as before
                    start.perturbation = PerturbationRecord.model_validate(self.layer.header())
                self.record(start)
            if code:
                # The worker of the first exec_code block starts now, in the background, while the
                # solver's first model turn runs: a cold start is 70-140 ms, a warm block a few ms.
                self.sandbox()
        except BaseException:
            self._release(None)  # a trial that cannot start keeps no copy and no worker (its opener closes the writer)
            raise

    def _restore(self, events: Sequence[SessionEvent]) -> None:
        """Bring the copy and the counters to where the recorded attempt stopped. A call whose
        result differs now (the tools or the world changed) is refused: the attempt cannot be
        continued faithfully."""
        elapsed = 0.0
        for event in events:
            elapsed = max(elapsed, event.t or 0.0)
            if self.asked_first is not None:  # what the user told the attempt still counts
                self.asked_first.see(event)
            if isinstance(event, TurnEndEvent) and self.scenario is not None:
                self._close_turn(record=False)
                self._begin_turn(self.turn_index)
            if not isinstance(event, ToolCallEvent):
                continue
            number = str(event.id).removeprefix("call-").split(".")[0]
            if number.isdigit():
                self._next_id = max(self._next_id, int(number))
            if not event.ok and event.error_code:
                self.tool_errors[event.error_code] += 1
            self.history.append(event)
            if event.role == BLOCK:
                self.tool_calls += 1
                # a block's args recorded truncated were a long code string (a block without one is small)
                self.exec_blocks += not rerunnable(event) or (isinstance(event.args, dict) and isinstance(event.args.get("code"), str))
                continue
            if event.role == CHILD:
                self.inner_calls += 1
            else:
                self.tool_calls += 1
            if event.injected:  # the layer answered instead of running it (perturb.py)
                continue
            if not rerunnable(event):
                if event.ok:
                    raise ResumeError(f"call {event.id} was recorded with its arguments truncated; the attempt cannot be resumed")
                continue  # a refused call changed nothing: there is nothing to redo
            replayed = self._execute(tool_name_text(event.tool), event.args).for_solver()
            if not replays_as_recorded(event, replayed):
                raise ResumeError(f"call {event.id} ({event.tool}) gives another result now; the attempt cannot be resumed")
        self.started -= elapsed

    @property
    def seconds(self) -> float:
        """Time spent on the attempt so far (a resumed one counts its earlier sessions)."""
        return time.perf_counter() - self.started

    # -- recording -------------------------------------------------------------------------
    def record(self, event: SessionEvent, encoded: dict[str, bytes] | None = None, as_record: dict[str, Any] | None = None) -> None:
        """Write one event to the session and hand it to the listeners (`encoded`: fields whose
        JSON is made already; `as_record`: its line's fields as made, `SessionWriter.write`)."""
        if self.writer is not None:
            self.writer.write(event, encoded=encoded or None, as_record=as_record)
        if self.asked_first is not None:
            self.asked_first.see(event)
        for listener in self.listeners:
            listener(event.event, event)

    def new_call_id(self) -> str:
        self._next_id += 1
        return f"call-{self._next_id}"

    def message(self, role: str, content: Any = None, **data: Any) -> None:
        """A message of the conversation (the model's, or the user's request), its content,
        reasoning and tool calls recorded within the caps."""
        capped: list[str] = []
        content = self._keep(content, "content", capped)
        if "reasoning" in data:
            data["reasoning"] = self._keep(data["reasoning"], "reasoning", capped)
        if isinstance(data.get("tool_calls"), list):
            data["tool_calls"] = [self._kept_call(call, i, capped) for i, call in enumerate(data["tool_calls"])]
        if role == "assistant":
            self._asked = asked_arguments(data.get("tool_calls"))
        if capped:
            data["capped"] = capped
        self.record(make_event("message", role=role, content=content, **data))

    def _kept_call(self, call: Any, index: int, capped: list[str]) -> Any:
        """A requested tool call as recorded: a new dict (the solver executes the one it holds),
        its id, name and arguments each within the caps."""
        if not isinstance(call, dict):
            return self._keep(call, f"tool_calls[{index}]", capped)
        kept = dict(call)
        if "id" in kept:
            kept["id"] = self._keep(kept["id"], f"tool_calls[{index}].id", capped)
        function = kept.get("function")
        if isinstance(function, dict):
            kept["function"] = {k: self._keep(v, f"tool_calls[{index}].{k}", capped) for k, v in function.items()}
        return kept

    def _keep(self, value: Any, name: str, capped: list[str], in_block: bool = False, encoded: dict[str, Any] | None = None) -> Any:
        """What the session keeps of one payload (`capped` names it when truncated); `encoded`
        gets (what is kept, its JSON when the caps made it) under `name`."""
        kept, truncated, json_made = self.recording.keep_encoded(value, in_block)
        if truncated:
            capped.append(name)
        if encoded is not None and json_made is not None and len(json_made) >= ENCODED_REUSED:
            encoded[name] = (kept, json_made)
        return kept

    def note(self, event: str, **data: Any) -> None:
        """Any other event, by its kind and fields (`record` takes its model); its `args` and
        `result`, when it has them, are recorded within the caps."""
        capped: list[str] = []
        for name in ("args", "result"):
            if name in data:
                data[name] = self._keep(data[name], name, capped)
        if capped:
            data["capped"] = capped
        self.record(make_event(event, **data))

    async def ask_user(self, message: str) -> str | None:
        """Hand the agent's message to the user and record the reply; None when there is no user,
        the user has nothing to say (the turn's conversation is over), or this turn's replies ran
        out (users.MAX_USER_REPLIES for facts, MAX_SMALL_TALK for the rest). UserUnavailable when
        a simulated user's model failed (not the agent's doing)."""
        if self.user is None or self.user_replies >= MAX_USER_REPLIES or self.small_talk >= MAX_SMALL_TALK:
            return None
        reply = await self.user.reply(message)
        if reply.text is None:
            return None
        if reply.revealed:
            self.user_replies += 1
        else:
            self.small_talk += 1
        extra = {"usage": reply.usage} if reply.usage else {}
        self.message("user", reply.text, user=self.user.kind, revealed=reply.revealed, **extra)
        return reply.text

    def add_usage(self, tokens_in: int, tokens_out: int, cost: float | None) -> None:
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        if cost is None or self.cost is None:
            self.cost = None  # one unknown price makes the trial's cost unknown
        else:
            self.cost += cost

    # -- acting ----------------------------------------------------------------------------
    def _execute(self, name: str, args: Any) -> ToolResult:
        with self.lock:
            self._check_open()
            return self.domain.tools.call(self.env, name, args)

    def _check_open(self) -> None:
        # A released copy may be another trial's by now: nothing reaches it through this one.
        if self._released:
            raise RuntimeError("the trial is closed")

    def call(self, name: Any, args: Any, *, call_id: str | None = None, turn: int | None = None) -> ToolResult:
        """Run one top-level tool call and record it. Never raises for the solver's mistakes."""
        call_id = call_id or self.new_call_id()
        if self.layer is not None:  # perturbed: the layer maps the call, runs it or answers instead
            made = self.layer.call(name, args, self._execute)
            self.tool_calls += 1
            self._owed_latency += made.result.latency
            perturbed = {
                "sent": made.sent,
                "injected": made.injected,
                "altered": made.altered or None,
                "latency": made.result.latency or None,
            }
            return self._after(
                made.result, call_id, made.tool, made.args, turn, None, {k: v for k, v in perturbed.items() if v is not None}
            )
        # Whatever the name and arguments hold (a list as the name, lone surrogates, JSON nested
        # thousands deep), the registry answers with an error result and the writer records it.
        result = self._execute(tool_name_text(name), args)
        self.tool_calls += 1
        return self._after(result, call_id, name, args, turn, None)

    # -- perturbations (perturb.py) ---------------------------------------------------------
    @property
    def request(self) -> str:
        """The task's request as the solver sees it (perturbed by intent:*)."""
        if self.layer is not None and self.task is not None:
            return self.layer.request
        return self.task.query if self.task is not None else ""

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI tool schemas the solver is offered (renamed, shuffled, with distractors,
        terse under interface:*), a new list (the domain's schemas are shared)."""
        if self.code:
            from .sandbox.schema import code_mode_tools

            return list(code_mode_tools(self.domain.tools))
        if self.layer is not None:
            return list(self.layer.schemas)
        return list(self.domain.tools.openai_schemas())

    async def wait_latency(self) -> None:
        """Wait out the latency the calls so far added (runtime:latency): an asyncio sleep, so the
        other trials of the loop go on meanwhile."""
        owed, self._owed_latency = self._owed_latency, 0.0
        if owed > 0:
            import asyncio

            await asyncio.sleep(owed)

    def exec_code(self, code: Any, *, call_id: str | None = None, turn: int | None = None) -> ToolResult:
        """Run one exec_code block (code mode); its tool calls are recorded as the block's children,
        within the block's recording cap."""
        call_id = call_id or self.new_call_id()
        started = time.perf_counter()
        self.tool_calls += 1
        truncated_children = 0
        if not self.code:
            result = ToolResult("exec_code", False, None, ErrorCode.UNKNOWN_TOOL, "exec_code is only available in code mode.", 0.0)
        elif not isinstance(code, str):
            result = ToolResult(
                "exec_code", False, None, ErrorCode.INVALID_ARGUMENTS, "exec_code takes one argument, 'code' (a string).", 0.0
            )
        else:
            self.exec_blocks += 1

            def on_call(record: Any) -> None:
                self.inner_calls += 1
                if not record.ok:
                    self.tool_errors[record.error_code or "error"] += 1
                event = self._record_call(
                    f"{call_id}.{record.index}",
                    record.tool,
                    record.args,
                    record.ok,
                    record.result,
                    record.error_code,
                    record.seconds,
                    call_id,
                    turn,
                )
                # The block's own list of its calls keeps what the session keeps: a block of
                # 1,000 calls of 4 MB each must not hold 4 GB until it ends.
                record.args, record.result = event.args, event.result

            self.recording.begin_block()
            try:
                outcome = self.sandbox().run(code, on_call=on_call)
            finally:
                truncated_children = self.recording.end_block()
            # The value is the whole payload, also on error: see ToolResult.for_solver.
            result = ToolResult(
                "exec_code",
                outcome.ok,
                outcome.to_payload(),
                None if outcome.ok else (f"limit_{outcome.limit}" if outcome.limit else "code_error"),
                outcome.error,
                time.perf_counter() - started,
            )
        return self._after(result, call_id, "exec_code", {"code": code}, turn, None, truncated_children=truncated_children)

    def sandbox(self) -> Any:
        if self._sandbox is None:
            from .sandbox import ExecCode

            self._sandbox = ExecCode(self._execute, self.domain.tools)
        return self._sandbox

    def _after(
        self,
        result: ToolResult,
        call_id: str,
        name: Any,
        args: Any,
        turn: int | None,
        parent: str | None,
        extra: dict[str, Any] | None = None,
        *,
        truncated_children: int = 0,
    ) -> ToolResult:
        """Record a top-level call, and give back what the solver is to be handed: the result,
        with a note when its record (or a block's children's) was truncated."""
        if not result.ok and result.error_code:
            self.tool_errors[result.error_code] += 1
        event = self._record_call(
            call_id, name, args, result.ok, result.for_solver(), result.error_code, result.seconds, parent, turn, extra, truncated_children
        )
        if event.capped:
            return with_note(result, recording_note(event.capped, self.recording.caps))
        return result

    def _record_call(
        self,
        call_id: str,
        tool: Any,
        args: Any,
        ok: bool,
        result: Any,
        error_code: str | None,
        seconds: float,
        parent: str | None,
        turn: int | None,
        extra: dict[str, Any] | None = None,
        truncated_children: int = 0,
    ) -> ToolCallEvent:
        """The one place a call entry is made: recorded with what the solver received (`extra`:
        the perturbation layer's fields, perturb.py), each payload within the caps; arguments the
        model message asked for with are referred to, not written again."""
        extra = dict(extra) if extra else {}
        capped: list[str] = []
        in_block = parent is not None
        if not short_text(tool):  # a tool's name is kept whole, uncharged: no need to measure it
            tool = self._keep(tool, "tool", capped, in_block)
        # The JSON the caps measured args and result by goes into the line as made (not encoded twice).
        encoded: dict[str, Any] = {}
        if parent is None and self._refers_to_message(call_id, tool, args):
            extra["args_in"] = ARGS_IN_MESSAGE
        else:
            args = self._keep(args, "args", capped, in_block, encoded)
        result = self._keep(result, "result", capped, in_block, encoded)
        if "sent" in extra:
            extra["sent"] = self._keep(extra["sent"], "sent", capped, in_block)
        if truncated_children:
            capped.append(CHILDREN)
        if capped:
            extra["capped"] = capped
        fields = {
            "event": "tool_call",
            "t": 0.0,  # the writer's stamp
            "id": call_id,
            "tool": tool,
            "args": args,
            "ok": ok,
            "result": result,
            "error_code": error_code,
            "seconds": round(seconds, 6),
            "parent": parent,
            "turn": turn,
        }
        if extra:
            fields.update(extra)
        event, as_given = recorded_call(fields)  # make_event's model, without its copy of the fields
        self.history.append(event)
        # The line is `fields` itself when the model holds them as given, in its fields' order, all
        # written (with `args_in`, the line leaves the arguments out: the model's record() does).
        as_record = fields if as_given and "args_in" not in fields else None
        if encoded:  # only for the very values the event holds (a field its model made anew is encoded anew)
            self.record(event, {name: json for name, (kept, json) in encoded.items() if getattr(event, name) is kept}, as_record)
        else:
            self.record(event, None, as_record)
        return event

    def _refers_to_message(self, call_id: str, tool: Any, args: Any) -> bool:
        """Whether the call's arguments are those the last model message recorded for its id (as
        `record.read_session` gives them back), once: the message then holds them for both."""
        if call_id not in self._asked:
            return False
        asked = self._asked.pop(call_id)
        if tool == EXEC_CODE:
            return isinstance(args, dict) and args == block_args(asked)
        return args is asked or (isinstance(args, str) and isinstance(asked, str) and args == asked)

    # -- ending ----------------------------------------------------------------------------
    def diff(self) -> Diff:
        with self.lock:
            self._check_open()
            return self.tracker.diff()

    def grade(self) -> Grade | None:
        if self.task is None:
            return None
        return grade(self.task.expected_diff, self.diff(), self.domain.schema)

    # -- scenarios -------------------------------------------------------------------------
    @property
    def expected_now(self) -> Diff:
        """What the changes so far are graded against: the task's expected diff, or the current
        scenario turn's (the changes are counted from the turn's start)."""
        if self.scenario is not None and self.turn_index < len(self.scenario.turns):
            return self.scenario.turns[self.turn_index].expected_diff
        return self.task.expected_diff if self.task is not None else Diff([])

    @property
    def turns_left(self) -> int:
        return len(self.scenario.turns) - self.turn_index if self.scenario is not None else 0

    def _begin_turn(self, index: int) -> None:
        assert self.scenario is not None
        if index >= len(self.scenario.turns):
            return
        turn = self.scenario.turns[index]
        profile = turn.user_profile
        self.asked_first = AskedFirst(profile, write_tools(self.domain.name)) if profile else None
        if self.user is not None and hasattr(self.user, "begin"):
            self.user.begin(turn.message, profile)
        self._turn_calls = self.tool_calls
        self.user_replies = self.small_talk = 0  # the limits are per turn

    def _close_turn(self, *, record: bool = True) -> None:
        """Grade the current turn on the changes made since it began, and start the next count."""
        assert self.scenario is not None
        turn = self.scenario.turns[self.turn_index]
        diff = self.diff()
        calls = self.tool_calls - self._turn_calls
        early = self.asked_first.note if self.asked_first is not None else ""
        result = turn_grade(turn, diff, calls, self.domain.schema, early)
        self.turn_grades.append((turn.kind, result, diff))
        if record:
            self.record(
                TurnEndEvent(index=self.turn_index, kind=turn.kind, passed=result.passed, calls=calls, diff=diff.to_list(), grade=result)
            )
        with self.lock:
            self.tracker.checkpoint()
        self.turn_index += 1

    def end_turn(self) -> str | None:
        """The solver is done with the current turn: it is graded, and the next one's message is
        recorded and returned (None: that was the last turn, or this is no scenario)."""
        if self.scenario is None or self.turn_index >= len(self.scenario.turns):
            return None
        self._close_turn()
        if self.turn_index >= len(self.scenario.turns):
            return None
        self._begin_turn(self.turn_index)
        message = self.scenario.turns[self.turn_index].message
        self.message("user", message, scenario_turn=self.turn_index)
        return message

    def _scenario_result(self) -> tuple[Grade, Diff]:
        """The scenario's grade at the end: the current turn graded, the ones never begun failed."""
        assert self.scenario is not None
        if self.turn_index < len(self.scenario.turns):
            self._close_turn()
        for index in range(len(self.turn_grades), len(self.scenario.turns)):
            turn = self.scenario.turns[index]
            missed = not_reached(turn)
            self.turn_grades.append((turn.kind, missed, Diff([])))
            self.record(TurnEndEvent(index=index, kind=turn.kind, passed=False, reached=False, grade=missed))
        combined = scenario_grade([g for _, g, _ in self.turn_grades])
        return combined, Diff([change for _, _, diff in self.turn_grades for change in diff])

    def call_turns(self) -> int | None:
        """The model turns that made at least one call (the agent's path length); None when no
        model took turns (a person, the oracle, an MCP client: their calls carry no turn)."""
        if not self.turns:
            return None
        return len({call.turn for call in self.history if call.parent is None and call.turn is not None})

    def _optimal_turns(self) -> int:
        """The fewest turns a perfect agent needs for the task (0: not measured). Only model
        trials have a path to compare it with."""
        if self.task is None or not self.turns:
            return 0
        try:
            return optimal_turns(self.task, self._reference_results)
        except (ReferenceFailed, WorldMismatch):  # a task its world no longer fits: no path figure
            return 0

    def _reference_results(self) -> list[Any]:
        """The task's reference solution run on a copy from the pool (given back rolled back):
        what a perfect agent would have read, for the path figure."""
        assert self.task is not None
        conn = _COPIES.take(self.domain, self._seed)
        try:
            return run_steps(self.domain.name, self.task.actor, self.task.reference_solution, conn, tolerant=True, tracked=True).results
        finally:
            _COPIES.give(self.domain, self._seed, conn)

    def finish(self, termination: Termination | str, error: str | None = None) -> TrialSummary:
        """Grade the trial, write its last event, release the copy. An infrastructure error is
        recorded with its diff but no grade: it is not the solver's result."""
        actual = self.diff()
        result = None
        if self.scenario is not None and termination != INFRA_ERROR:
            result, actual = self._scenario_result()
        elif self.task is not None and termination != INFRA_ERROR:
            result = grade(self.task.expected_diff, actual, self.domain.schema)
            result = with_asked_first(result, self.asked_first)
        self.final_grade = result
        self.final_diff = actual
        seconds = self.seconds
        summary = TrialSummary(
            task=self.task.id if self.task else "",
            trial=self.trial_number,
            domain=self.domain.name,
            capabilities=list(self.task.capabilities) if self.task else [],
            passed=bool(result and result.passed),
            termination=Termination(termination),  # ValueError for a reason nobody defined
            error=error,
            session=self.session_name,
            tool_calls=self.tool_calls,
            inner_calls=self.inner_calls,
            exec_blocks=self.exec_blocks,
            turns=self.turns,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost=self.cost,
            seconds=seconds,
            reference_calls=len(self.task.reference_solution) if self.task else 0,
            call_turns=self.call_turns(),
            optimal_turns=self._optimal_turns(),
            asked_first=None if self.asked_first is None or self.scenario is not None else not self.asked_first.early,
            scenario_turns=None if self.scenario is None else [ScenarioTurnResult(kind=k, passed=g.passed) for k, g, _ in self.turn_grades],
            grade=grade_counts(result) if result else None,
            tool_errors=dict(sorted(self.tool_errors.items())),
            solver=str(self.solver.get("label") or self.solver.get("name", "")),
        )
        if self.layer is not None:  # perturbed (perturb.py): the report groups and attributes by these
            summary.perturbation = PerturbationRecord.model_validate({k: v for k, v in self.layer.header().items() if k != "request"})
            summary.failure_stages = self.layer.finish()
        self.record(
            EndEvent(
                termination=termination,
                error=error,
                diff=actual.to_list(),
                grade=result,
                summary=TrialSummary.model_validate(summary.to_dict()),  # as written (rounded); a batch adds limits to its own
            )
        )
        self.finished = True
        self.close()
        return summary

    def close(self) -> None:
        self._release(self.writer)

    def _release(self, writer: SessionWriter | None) -> None:
        """Stop the exec_code worker (after a block still running), close `writer`, free the copy; once."""
        if self._closed:
            return
        self._closed = True
        if self._sandbox is not None:
            self._sandbox.close()
        if writer is not None:
            writer.close()
        with self.lock:  # never under a diff or call running in another thread (the app's workers)
            self._released = True
            _COPIES.give(self.domain, self._seed, self.conn)
        _OPEN_COPIES.closed()


def open_trial(
    task: Task,
    path: Path,
    *,
    secrets: Iterable[str] = (),
    writer: Callable[[Path, list[str]], SessionWriter] = SessionWriter,
    **options: Any,
) -> Trial:
    """A trial of `task` recorded into the session file `path` (named by `record.new_session_file`
    or `record.trial_session_file`). A trial that cannot start (its world is not this ebench's, its
    actor is unknown) leaves no file behind: the writer is closed, the file removed, the error raised."""
    session = writer(path, list(secrets))
    try:
        return Trial(task, writer=session, **options)
    except BaseException:
        session.close()
        path.unlink(missing_ok=True)
        raise
