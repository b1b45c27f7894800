"""Session events described for people: the one place that knows how each kind of event reads.

`describe(event)` gives a one-line label (the replay's step lists, the point of no return) and
the parts of a detailed view (fields, prose, data, a call's status, code). The app draws the
parts (`ebench.app.screens.replay.step_detail`); the core uses the label (`timeline.Step.label`).
No textual here, and no drawing: a part says what to show, the app decides how it looks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .events import BLOCK, CHILD, ApiErrorEvent, EndEvent, MessageEvent, SessionEvent, StartEvent, ToolCallEvent, TurnEndEvent
from .results import TrialSummary

FIELD = "field"  # "name: value" on one line
PROSE = "prose"  # a heading and text as written (`italic` for a model's reasoning)
DATA = "data"  # a heading and a JSON value (`folded` when it may be long)
STATUS = "status"  # a call's outcome: ok, or its error code (`value`), and its duration
CODE = "code"  # an exec_code block's source
GAP = "gap"  # an empty line


@dataclass(frozen=True)
class Part:
    kind: str
    name: str = ""
    value: Any = None
    folded: bool = False
    italic: bool = False
    ok: bool = True
    seconds: float | None = None


@dataclass(frozen=True)
class Description:
    label: str  # one line, for lists
    parts: list[Part] = field(default_factory=list)  # the detailed view


def shown_args(args: Any) -> Any:
    """A call's arguments as a person should read them: a model sends them as a JSON string, which
    is shown decoded when it holds an object (an undecodable string stays as it was sent)."""
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except ValueError:
            return args
        return decoded if isinstance(decoded, dict) else args
    return args


def preview(value: Any, width: int = 60) -> str:
    """`value` on one line of at most `width` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def describe(event: SessionEvent) -> Description:
    """The label and the detailed parts of one event, by its kind."""
    if isinstance(event, StartEvent):
        return _start(event)
    if isinstance(event, MessageEvent):
        return _message(event)
    if isinstance(event, ToolCallEvent):
        return _tool_call(event)
    if isinstance(event, ApiErrorEvent):
        shown = [Part(FIELD, name, getattr(event, name)) for name in ("kind", "status", "attempt", "error", "retry_in")]
        return Description(f"api error: {preview(event.error or event.kind or '')}", [p for p in shown if p.value is not None])
    if isinstance(event, EndEvent):
        return _end(event)
    if isinstance(event, TurnEndEvent):
        return _turn_end(event)
    data = {k: v for k, v in event.to_dict().items() if k not in ("event", "t")}
    return Description(f"{event.event}: {preview(data)}", [Part(DATA, "event", data, folded=True)])


def _turn_end(event: TurnEndEvent) -> Description:
    """A scenario's turn is over: the chapter mark of a replay."""
    verdict = "PASS" if event.passed else "FAIL" if event.reached else "not reached"
    note = event.grade.note if event.grade is not None else ""
    parts = [
        Part(FIELD, "turn", event.index + 1),
        Part(FIELD, "kind", event.kind.replace("_", "-")),
        Part(FIELD, "verdict", verdict),
        Part(FIELD, "calls", event.calls),
    ]
    if note:
        parts.append(Part(PROSE, "note", note))
    if event.diff:
        parts.append(Part(DATA, "changes during the turn", event.diff, folded=True))
    return Description(f"── end of turn {event.index + 1} ({event.kind.replace('_', '-')}): {verdict} ──", parts)


def _start(event: StartEvent) -> Description:
    task = event.task
    parts = [
        Part(FIELD, "task", task.id if task else "(none)"),
        Part(FIELD, "domain", event.domain),
        Part(FIELD, "actor", event.actor),
        Part(FIELD, "mode", event.mode),
        Part(FIELD, "solver", event.solver_label),
    ]
    if task and task.query:
        parts.append(Part(PROSE, "request", task.query))
    if event.perturbation:  # a perturbed run (perturb.py): what the solver met instead
        parts.append(Part(FIELD, "perturbations", ", ".join(event.perturbation.subtypes) + f" (seed {event.perturbation.seed})"))
        if event.perturbation.request:
            parts.append(Part(PROSE, "request as the solver saw it", event.perturbation.request))
    return Description(f"start {task.id if task else ''} ({event.mode} mode, actor {event.actor})", parts)


def _message(event: MessageEvent) -> Description:
    text = event.content or ""
    if not text and event.tool_calls:
        text = "→ " + ", ".join(event.called_tools())
    parts = [Part(FIELD, "role", event.role)]
    if event.turn is not None:
        parts.append(Part(FIELD, "turn", event.turn))
    if event.user:  # a user's reply to the agent (users.py): who played the user, what it gave
        parts.append(Part(FIELD, "user", event.user))
        parts.append(Part(FIELD, "revealed", ", ".join(event.revealed or []) or "nothing"))
    if event.scenario_turn is not None:
        parts.append(Part(FIELD, "opens scenario turn", event.scenario_turn + 1))
    if event.reasoning:
        parts.append(Part(PROSE, "reasoning", event.reasoning, italic=True))
    content = event.content
    parts.append(Part(PROSE, "content", content if isinstance(content, str) else "" if content is None else content))
    if event.tool_calls:
        parts += [Part(GAP), Part(DATA, "tool calls requested", event.tool_calls, folded=True)]
    if event.usage:
        parts.append(Part(FIELD, "usage", ", ".join(f"{k} {v}" for k, v in event.usage.items())))
    return Description(f"{event.role or 'message'}: {preview(text)}", parts)


def _tool_call(event: ToolCallEvent) -> Description:
    mark = "✓" if event.ok else "✗"
    role = {BLOCK: "exec_code block", CHILD: f"call inside block {event.parent}"}.get(event.role, "call")
    parts = [
        Part(FIELD, "tool", event.tool),
        Part(FIELD, "id", f"{event.id} ({role})"),
        Part(STATUS, value=event.error_code, ok=event.ok, seconds=event.seconds),
    ]
    code = event.code
    if code is not None:
        parts.append(Part(CODE, "code", code))
    else:
        parts += [Part(DATA, "arguments", shown_args(event.args)), Part(GAP)]
    if event.sent is not None:  # perturbed (perturb.py): the canonical call above, as the solver sent it here
        parts += [
            Part(DATA, "sent", {**event.sent, "args": shown_args(event.sent.get("args"))} if isinstance(event.sent, dict) else event.sent),
            Part(GAP),
        ]
    if event.injected:
        parts.append(Part(FIELD, "answered by the perturbation (not run)", event.injected))
    if event.altered:
        parts.append(Part(FIELD, "result perturbed", ", ".join(event.altered)))
    parts.append(Part(DATA, "result", event.result, folded=True))
    if event.role == BLOCK:
        label = f"{mark} exec_code {preview(code or '', 50)}"
    else:
        label = f"{'  ↳ ' if event.role == CHILD else ''}{mark} {event.tool} {preview(shown_args(event.args), 50)}"
        if isinstance(event.sent, dict) and event.sent.get("tool") != event.tool:
            label += f" (sent as {event.sent.get('tool')})"
    return Description(label, parts)


def _end(event: EndEvent) -> Description:
    parts = [Part(FIELD, "termination", event.termination)]
    if event.error:
        parts.append(Part(FIELD, "error", event.error))
    parts.append(Part(FIELD, "recorded grade", "none" if not event.grade else event.verdict))
    summary = event.summary.to_dict() if isinstance(event.summary, TrialSummary) else {}  # none, or recorded unreadable
    for name in ("tool_calls", "inner_calls", "turns", "tokens_in", "tokens_out", "cost"):
        if summary.get(name) is not None:
            parts.append(Part(FIELD, name, summary[name]))
    return Description(f"end: {event.termination} ({event.verdict})", parts)
