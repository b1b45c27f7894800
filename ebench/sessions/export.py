"""Trajectories for fine-tuning: the recorded conversations of chosen trials, as JSON lines.

A trajectory is what the model saw and did in one trial: the system prompt, the user's request,
each assistant turn (its text and the tool calls it asked for) and each call's result as the
model received it, with the tool schemas it was offered and, alongside, the task, the grade and
where the trial was recorded (`metadata`, only when asked for: OpenAI's fine-tuning format has no
such key, so the default lines are accepted as they are). Two formats, one trajectory per line:

- `openai-chat`: OpenAI's chat fine-tuning format, `{"messages", "tools", "parallel_tool_calls"}`
  (`parallel_tool_calls`: whether the model issued more than one call in a turn); an
  assistant turn carries `tool_calls` (`{"id", "type": "function", "function": {"name",
  "arguments": JSON text}}`), and each call's result follows as a `tool` message whose
  `tool_call_id` names the call and whose `content` is the result as JSON text.
- `sharegpt`: LLaMA-Factory's ShareGPT tool-calling convention, `{"conversations": [{"from":
  "system" | "human" | "gpt" | "function_call" | "observation", "value"}], "tools": JSON text}`. A `function_call` value is `{"name", "arguments"}` (a list of them for parallel
  calls), an `observation` the result (a list of results, in call order, for parallel calls).
  The convention alternates human/observation with gpt/function_call and ends on the model's turn,
  so text the model wrote beside its tool calls is left out, and so are the results of its last
  calls when the trial ended on them.

Only top-level calls are turns: the calls an exec_code block made are inside the block's result,
as the model received them. The tools are the ones the model was offered: the domain's schemas as
this ebench describes them (plus exec_code for a code-mode trial), and in a run perturbed with
`--perturb interface` the renamed, shuffled, shortened schemas and their decoys, rebuilt from the
perturbation's seed, the task id and the trial number (`perturb.offered_schemas`).

Trajectories are real model behaviour only: a session without a model conversation (a person's
attempt, the oracle, a replay, an MCP client, whose messages ebench never sees) is skipped, and so
are infrastructure errors, damaged sessions and a turn whose calls were not all answered (a limit
hit in the middle of it), and sessions with a payload recorded truncated (past the recording
caps, `payload_caps`: arguments or results the model sent and saw are not all there); each skip is
counted by its reason. The arguments of a call are read from the model message that asked for it,
where a session stores them (a `tool_call` of format 2 refers to them). Sessions are written with
secrets redacted; the lines are written the same way (`record.session_line`).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .events import MessageEvent, ToolCallEvent
from .record import Session, SessionFileError, read_session, session_line
from .results import TrialSummary
from .runs import RunData

OPENAI_CHAT: Final = "openai-chat"
SHAREGPT: Final = "sharegpt"
FORMATS: Final = (OPENAI_CHAT, SHAREGPT)

# Why a trial was not exported (the keys of the summary's `skipped`).
NOT_PASSED = "not passed (--passed-only)"
INFRA_ERROR = "infrastructure error"
UNREADABLE = "unreadable session"
DAMAGED = "damaged session"
NO_MODEL = "no model conversation"
UNANSWERED = "unanswered tool calls"
UNKNOWN_DOMAIN = "unknown domain"
TRUNCATED = "payloads recorded truncated"


class Skip(Exception):
    """A trial that is not exported; the message is the reason, counted in the summary."""


@dataclass
class Trajectory:
    """One trial's conversation as OpenAI chat messages, the tools offered, and its metadata."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    metadata: dict[str, Any]

    def openai_chat(self) -> dict[str, Any]:
        parallel = any(len(m.get("tool_calls") or ()) > 1 for m in self.messages)
        return {"messages": self.messages, "tools": self.tools, "parallel_tool_calls": parallel}

    def sharegpt(self) -> dict[str, Any]:
        conversations: list[dict[str, Any]] = []
        results: list[Any] = []
        for message in self.messages:
            role = message["role"]
            if role == "tool":
                results.append(json.loads(message["content"]))
                continue
            if results:
                conversations.append(_observation(results))
                results = []
            if role == "system":
                conversations.append({"from": "system", "value": message["content"]})
            elif role == "user":
                conversations.append({"from": "human", "value": message["content"]})
            elif message.get("tool_calls"):
                calls = [_function_call(call["function"]) for call in message["tool_calls"]]
                value = calls[0] if len(calls) == 1 else calls
                conversations.append({"from": "function_call", "value": json.dumps(value, ensure_ascii=False)})
            else:
                conversations.append({"from": "gpt", "value": message["content"] or ""})
        # a trailing observation is left out: the convention ends on the model's turn
        tools = [tool.get("function", tool) for tool in self.tools]  # the bare function objects, as LLaMA-Factory's examples
        return {"conversations": conversations, "tools": json.dumps(tools, ensure_ascii=False)}

    def document(self, fmt: str, *, metadata: bool = False) -> dict[str, Any]:
        """The line's object; with `metadata`, the task, grade and session under `metadata` too."""
        document = self.openai_chat() if fmt == OPENAI_CHAT else self.sharegpt()
        return {**document, "metadata": self.metadata} if metadata else document


def _function_call(function: dict[str, Any]) -> dict[str, Any]:
    arguments: Any = function["arguments"]
    with contextlib.suppress(ValueError):  # arguments that are not JSON stay the text the model sent
        arguments = json.loads(arguments)
    return {"name": function["name"], "arguments": arguments}


def _observation(results: list[Any]) -> dict[str, Any]:
    value = results[0] if len(results) == 1 else results
    return {"from": "observation", "value": json.dumps(value, ensure_ascii=False)}


@dataclass
class ExportSummary:
    """What an export wrote and what it skipped, by reason."""

    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {"written": self.written, "skipped": dict(sorted(self.skipped.items()))}

    def describe(self) -> str:
        skipped = ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped.items()))
        return f"wrote {self.written} trajectories" + (f"; skipped {skipped}" if skipped else "")


ToolSchemas = Callable[[str, bool], list[dict[str, Any]]]


def domain_tools() -> ToolSchemas:
    """The tool schemas offered in a trial of a domain (and exec_code in code mode), as the model
    solver builds them; looked up once per domain and mode. Skip for a domain that is not installed."""
    cache: dict[tuple[str, bool], list[dict[str, Any]]] = {}

    def tools(name: str, code: bool) -> list[dict[str, Any]]:
        if (name, code) not in cache:
            from ..engine.domain_registry import UnknownDomain, get_domain
            from ..registry import PluginError

            try:
                schemas = list(get_domain(name).tools.openai_schemas())
            except (UnknownDomain, PluginError):
                raise Skip(UNKNOWN_DOMAIN) from None
            if code:
                from .sandbox.schema import exec_code_tool

                schemas = [*schemas, exec_code_tool()]
            cache[name, code] = schemas
        return cache[name, code]

    return tools


def conversation(session: Session) -> list[dict[str, Any]]:
    """The session's conversation as OpenAI chat messages. Each assistant turn's calls are answered
    by the top-level tool_call events that follow it: by id (the model solver records the model's
    call ids), else in order."""
    messages: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    answers: list[ToolCallEvent] = []

    def close_turn() -> None:
        messages.extend(_answer(calls, answers))
        calls.clear()
        answers.clear()

    for event in session.events:
        if isinstance(event, MessageEvent):
            close_turn()
            if event.role in ("system", "user"):
                messages.append({"role": event.role, "content": _text(event.content)})
            elif event.role == "assistant":
                calls.extend(_tool_call(call, i) for i, call in enumerate(event.tool_calls or []))
                entry: dict[str, Any] = {"role": "assistant", "content": _text(event.content) if event.content is not None else None}
                if calls:
                    entry["tool_calls"] = list(calls)
                elif entry["content"] is None:
                    entry["content"] = ""
                messages.append(entry)
        elif isinstance(event, ToolCallEvent) and event.parent is None and calls:
            answers.append(event)
    close_turn()
    if not any(m["role"] == "assistant" for m in messages):
        raise Skip(NO_MODEL)
    return messages


def _answer(calls: list[dict[str, Any]], answers: list[ToolCallEvent]) -> list[dict[str, Any]]:
    """The tool messages answering `calls`, in the order of the calls (as the model solver sends them)."""
    unused = list(answers)
    paired: list[ToolCallEvent | None] = []
    for call in calls:
        match = next((a for a in unused if a.id == call["id"]), None)
        if match is not None:
            unused.remove(match)
        paired.append(match)
    for i, match in enumerate(paired):  # ids that differ: the remaining events, in order
        if match is None and unused:
            paired[i] = unused.pop(0)
    out = []
    for call, event in zip(calls, paired, strict=True):
        if event is None:
            raise Skip(UNANSWERED)
        out.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(event.result, ensure_ascii=False)})
    return out


def _tool_call(call: Any, index: int) -> dict[str, Any]:
    """A requested call in the OpenAI shape, whatever shape it was recorded in."""
    data: dict[str, Any] = call if isinstance(call, dict) else {}
    nested = data.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else data
    name = function.get("name")
    arguments = function.get("arguments")
    call_id = data.get("id")
    return {
        "id": call_id if isinstance(call_id, str) else f"call-{index + 1}",
        "type": "function",
        "function": {
            "name": name if isinstance(name, str) else str(name),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False),
        },
    }


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def trajectory(run: RunData, result: TrialSummary, tools: ToolSchemas, *, passed_only: bool = False) -> Trajectory:
    """One trial of a run as a trajectory; Skip says why it is not one."""
    if passed_only and not result.passed:
        raise Skip(NOT_PASSED)
    if result.infra_error:
        raise Skip(INFRA_ERROR)
    path = run.path / result.session
    try:
        session = read_session(path)
    except SessionFileError:
        raise Skip(UNREADABLE) from None
    if session.warnings:  # a line was lost: the conversation would not be the one the model had
        raise Skip(DAMAGED)
    if session.truncated:  # past the recording caps (payload_caps.py): not what the model sent and saw
        raise Skip(TRUNCATED)
    messages = conversation(session)
    start = session.start
    metadata = {
        "task": result.task,
        "trial": result.trial,
        "domain": result.domain or start.domain,
        "capabilities": list(result.capabilities),
        "passed": result.passed,
        "termination": str(result.termination) if result.termination is not None else None,
        "grade": result.grade.model_dump() if result.grade is not None else None,
        "model": start.solver.model,
        "solver": start.solver_label or result.solver,
        "run": str(run.path),  # as given: the session is named relative to it
        "session": _relative(path, run.path),
    }
    offered = tools(start.domain or result.domain, start.mode == "code")
    if start.perturbation:  # what a perturbed model was offered (interface:*), not the domain's own
        from .perturb import Perturbation, offered_schemas

        perturbation = Perturbation.from_dict(start.perturbation.to_dict())
        if "interface" in perturbation.families:
            from ..engine.domain_registry import get_domain

            registry = get_domain(start.domain or result.domain or "").tools
            offered = offered_schemas(perturbation, start.task.id if start.task else result.task, start.trial, registry)
    return Trajectory(messages, offered, metadata)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def export_lines(
    runs: Iterable[RunData],
    fmt: str,
    summary: ExportSummary,
    *,
    passed_only: bool = False,
    metadata: bool = False,
    secrets: Sequence[str] = (),
) -> Iterator[str]:
    """The JSON lines (without their newline) of every exported trial of `runs`, by task and trial;
    `summary` counts what was written and skipped."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    tools = domain_tools()
    for run in runs:
        for result in sorted(run.results, key=lambda r: (r.task, r.trial)):
            try:
                found = trajectory(run, result, tools, passed_only=passed_only)
            except Skip as skip:
                summary.skipped[str(skip)] += 1
                continue
            summary.written += 1
            yield session_line(found.document(fmt, metadata=metadata), secrets)
