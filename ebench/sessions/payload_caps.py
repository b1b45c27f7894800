"""What a session keeps of the payloads a solver and its tools produce: the recording caps, and
the marker that stands in for a value beyond them.

A payload is a value that would be recorded whole and whose size the solver decides: a call's
tool name, arguments and result (a perturbed call's `sent`, a note's `args` and `result`), a
message's content, its reasoning, and the name, id and arguments of each tool call it asked for.
Model code can make these as large as it likes (an exec_code block makes up to 1,000 calls of up
to 4 MB each), so what one trial records is bounded, by three caps:

- VALUE_CAP (512 KiB): one value;
- BLOCK_CAP (4 MiB): the payloads of the calls made inside one exec_code block, together;
- TRIAL_CAP (16 MiB): every payload of the trial, together (blocks included).

A value is measured by its text: a string is its own text, any other value its compact JSON, in
UTF-8 bytes. A value over VALUE_CAP, or that does not fit in what is left of its block's or the
trial's budget, is recorded as a marker,
`{"truncated": true, "bytes": N, "sha256": "<hex>", "head": "<its first HEAD_CHARS characters>"}`
(`bytes` and `sha256` of the whole text), and its event names the field in `capped`. A budget a
value did not fit in is spent: every later value of it is a marker, and once the trial's is spent
markers have no `head` (about 100 bytes each). A value of at most ALWAYS_KEPT (256) bytes is
always kept and never charged, since its marker would be as large: tool names, ids and ordinary
arguments stay readable, so the calls after a flood still replay. So a session holds at most
TRIAL_CAP of payloads, plus a few hundred bytes per event; the events are as many as the calls
and messages (bounded by a run's limits: calls, turns, and 1,000 calls per block). A marker is recognised by `capped`,
never by its shape: a solver can send a dict that looks like one.

The caps change only the record. The tool received the real arguments and the solver the real
result; what the solver is handed also says that the record is truncated (a `recording` note,
`with_note`), so a model that floods its own record learns it. Grading never reads a payload:
it is the diff of the trial's copy, which the `end` event records whole. That diff is not capped
because regrading and every report rest on it, and it holds the rows the trial changed, not what
the solver sent: each value in it passed the tools' own bounds (a string of at most 10,000
characters), so it grows with the writes made, not with the size of what the model sends.

The caps are far above what real trials record: the largest result of a call in the shipped
tasks' reference solutions is under 9 KB, its largest arguments about 1 KB, and the largest whole
reference solution (144 calls) under 400 KB; an exec_code block's own result is at most about
150,000 characters (its printed output, value and error are capped by the sandbox).
"""

from __future__ import annotations

import copy
import hashlib
import threading
from dataclasses import dataclass
from typing import Any

from ..engine.tools import ToolResult
from .events import ToolCallEvent
from .record import encoded_value, value_json

KIB = 1024
VALUE_CAP = 512 * KIB
BLOCK_CAP = 4 * KIB * KIB
TRIAL_CAP = 16 * KIB * KIB
HEAD_CHARS = 256  # of a marker's head: enough to recognise what the value was
ALWAYS_KEPT = 256  # bytes: a value this small is always kept whole, uncharged (a marker is as large)

# The key of the note added to what the solver is handed when its record was truncated.
RECORDING_NOTE = "recording"
CHILDREN = "children"  # in a block's `capped`: calls made inside it were recorded truncated


@dataclass(frozen=True)
class RecordingCaps:
    """The caps of one trial's record, in bytes (the defaults are the module's)."""

    value: int = VALUE_CAP
    block: int = BLOCK_CAP
    trial: int = TRIAL_CAP

    def describe(self) -> str:
        return f"{_size(self.value)} a value, {_size(self.block)} an exec_code block's calls, {_size(self.trial)} a trial"


def _size(n: int) -> str:
    if n % (KIB * KIB) == 0:
        return f"{n // (KIB * KIB)} MiB"
    return f"{n // KIB} KiB" if n % KIB == 0 else f"{n} bytes"


def payload_text(value: Any) -> str:
    """The text a value is measured and hashed by: a string itself, anything else its compact JSON."""
    return value if isinstance(value, str) else value_json(value)


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a solver's text may hold lone surrogates


def marker(value: Any, head: bool = True) -> dict[str, Any]:
    """The marker recorded instead of `value`."""
    return _marker(payload_text(value), head)


def _marker(text: str, head: bool) -> dict[str, Any]:
    data = _encoded(text)
    found: dict[str, Any] = {"truncated": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if head:
        found["head"] = text[:HEAD_CHARS]
    return found


def matches_marker(recorded: Any, value: Any) -> bool:
    """Whether `value` is the one a recorded marker stands for (same length and hash)."""
    if not isinstance(recorded, dict):
        return False
    found = _marker(payload_text(value), head=False)
    return bool(recorded.get("bytes") == found["bytes"] and recorded.get("sha256") == found["sha256"])


def rerunnable(event: ToolCallEvent) -> bool:
    """Whether a recorded call can be run again (replay, resume): not when its tool or arguments
    were recorded truncated. Such a call that failed changed nothing, so skipping it rebuilds the
    same state; one that succeeded cannot be rebuilt."""
    return not {"tool", "args"} & set(event.capped or ())


class RecordingBudget:
    """The room left in one trial's record, and in the current exec_code block's. Once a value
    does not fit in what is left of a budget, that budget is spent: every later value of it is a
    marker (so a flood cannot be followed by values that squeeze into the rest). A value over
    VALUE_CAP is a marker without spending anything. Thread-safe: a block's calls are recorded
    from the thread that runs it."""

    def __init__(self, caps: RecordingCaps | None = None) -> None:
        self.caps = caps or RecordingCaps()
        self.spent = 0  # bytes of the values kept whole and of markers' heads
        self.truncated = 0  # values recorded as markers
        self.trial_spent = False
        self._block_spent = 0
        self._block_full = False
        self._block_truncated = 0
        self._in_block = False
        self._lock = threading.Lock()

    def keep(self, value: Any, in_block: bool = False) -> tuple[Any, bool]:
        """What to record of `value`: itself when it fits under every cap (charged to them), else
        its marker; and whether it was truncated. A value of at most ALWAYS_KEPT bytes is kept and
        not charged (its marker would be as large), so a tool name, an id and the arguments of an
        ordinary call are recorded whatever the budget: a call after a flood still replays. None,
        booleans and numbers are such values."""
        kept, truncated, _ = self.keep_encoded(value, in_block)
        return kept, truncated

    def keep_encoded(self, value: Any, in_block: bool = False) -> tuple[Any, bool, bytes | None]:
        """`keep`, and the JSON of a value kept whole that is neither a string nor a number (as
        `record.encoded_value` makes it; None otherwise): it was made to measure the value, and
        the session line takes it as made instead of encoding the value again."""
        if value is None or isinstance(value, (bool, int, float)):
            return value, False, None
        if short_text(value):
            return value, False, None
        encoded = None if isinstance(value, str) else encoded_value(value)
        made: str | bytes
        if encoded is not None:  # measured by the encoding's length: no text made, nothing encoded again
            made, size = encoded, len(encoded)
        else:
            made = payload_text(value)
            size = len(made) if made.isascii() else len(_encoded(made))
        if size <= ALWAYS_KEPT:
            return value, False, encoded
        charged = self._charge(size, in_block, made)
        if charged is None:
            return value, False, encoded
        return _marker(*charged), True, None

    def _charge(self, size: int, in_block: bool, made: str | bytes) -> tuple[str, bool] | None:
        """Charge a value of `size` bytes (`made`: its text, or its JSON as encoded) to the
        budgets: None when it is kept whole, else its text and whether its marker keeps a head."""
        with self._lock:
            block = in_block and self._in_block
            trial_fits = not self.trial_spent and self.spent + size <= self.caps.trial
            block_fits = not block or (not self._block_full and self._block_spent + size <= self.caps.block)
            if size <= self.caps.value:
                if trial_fits and block_fits:
                    self.spent += size
                    if block:
                        self._block_spent += size
                    return None
                self.trial_spent = self.trial_spent or not trial_fits
                self._block_full = self._block_full or not block_fits
            self.truncated += 1
            if block:
                self._block_truncated += 1
            text = made.decode() if isinstance(made, bytes) else made
            head = len(_encoded(text[:HEAD_CHARS]))
            with_head = not self.trial_spent and self.spent + head <= self.caps.trial
            if with_head:
                self.spent += head
            else:
                self.trial_spent = True
            return text, with_head

    def begin_block(self) -> None:
        """The calls recorded from now on (with `in_block`) share one block's cap."""
        with self._lock:
            self._in_block, self._block_spent, self._block_full, self._block_truncated = True, 0, False, 0

    def end_block(self) -> int:
        """The block is over: how many of its calls' values were recorded truncated."""
        with self._lock:
            self._in_block = False
            return self._block_truncated


def short_text(value: Any) -> bool:
    """A string kept whole whatever the budgets (a tool's name, an id): at most ALWAYS_KEPT bytes
    however it encodes (at most 4 UTF-8 bytes a character)."""
    return isinstance(value, str) and len(value) * 4 <= ALWAYS_KEPT


def recording_note(capped: list[str], caps: RecordingCaps) -> str:
    """What the solver is told when its call's record was truncated (`capped`: the fields)."""
    what = [f for f in capped if f != CHILDREN]
    parts = []
    if what:
        names = ", ".join(what[:-1]) + " and " + what[-1] if len(what) > 1 else what[0]
        parts.append(f"this call's {names} were recorded truncated in the session")
    if CHILDREN in capped:
        parts.append("some of the calls made in this block were recorded truncated in the session")
    said = "; ".join(parts)
    return (
        f"{said[:1].upper()}{said[1:]} (recording caps: {caps.describe()}). "
        "Only the record is cut: the calls ran, and you received their results, whole."
    )


def with_note(result: ToolResult, note: str) -> ToolResult:
    """`result` (of whatever ToolResult class: a perturbed one keeps its fields and behaviour),
    with what the solver is handed carrying `note` under RECORDING_NOTE."""
    noted = copy.copy(result)
    noted.__class__ = _noted_class(type(result))
    noted.__dict__[RECORDING_NOTE] = note
    return noted


_NOTED: dict[type[ToolResult], type[ToolResult]] = {}  # a ToolResult class -> its noted subclass


def _noted_class(base: type[ToolResult]) -> type[ToolResult]:
    if base not in _NOTED:

        def for_solver(self: ToolResult) -> Any:
            payload = base.for_solver(self)
            note = self.__dict__[RECORDING_NOTE]
            return {**payload, RECORDING_NOTE: note} if isinstance(payload, dict) else {"result": payload, RECORDING_NOTE: note}

        _NOTED[base] = type(f"Noted{base.__name__}", (base,), {"for_solver": for_solver, "__doc__": "A result whose record was truncated."})
    return _NOTED[base]
