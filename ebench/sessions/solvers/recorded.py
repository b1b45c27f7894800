"""A model job's answers played back from its session files, with no API: the n-th request of a
session gets the answer its recording has for turn n (a message, a response without one, or the
request's final failure). A job replayed this way (`ebench tasks synthesize-replay`) makes the same
calls on the same worlds, so it ends with the same tasks; a request the recording has no answer
for means the replay went another way, which stops it (`ReplayDiverged`).

Retried failures are not replayed (the recording's next answer is what the retries got), and the
recorded cost of each answer is handed back as litellm's `response_cost`, so the costs match too."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..events import ApiErrorEvent, BadResponseEvent, MessageEvent
from ..model_client import RecordedApiError
from ..record import SessionFileError, read_session
from .base import FatalSolverError


class ReplayDiverged(FatalSolverError):
    """A request the recording has no answer for: the replay is no longer the recorded job."""


@dataclass(frozen=True)
class RecordedAnswer:
    message: MessageEvent | None = None
    error: ApiErrorEvent | None = None
    bad: bool = False  # a response without a message


def recorded_answers(path: Path) -> dict[int, RecordedAnswer]:
    """Each turn's final answer in one session file."""
    answers: dict[int, RecordedAnswer] = {}
    for event in read_session(path).events:
        if isinstance(event, MessageEvent) and event.role == "assistant" and event.turn is not None:
            answers[event.turn] = RecordedAnswer(message=event)
        elif isinstance(event, ApiErrorEvent) and event.retry_in is None and event.turn is not None:
            answers[event.turn] = RecordedAnswer(error=event)
        elif isinstance(event, BadResponseEvent) and event.turn is not None:
            answers[event.turn] = RecordedAnswer(bad=True)
    return answers


class RecordedResponses:
    """The answers recorded in the session files under `root`, by session name (the path relative
    to `root`, as the job names its sessions)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._sessions: dict[str, dict[int, RecordedAnswer]] = {}

    def answer(self, session: str, turn: int) -> Any:
        """The response for request `turn` (from 1) of `session`, shaped as litellm's."""
        if session not in self._sessions:
            try:
                self._sessions[session] = recorded_answers(self.root / session)
            except SessionFileError as exc:
                raise ReplayDiverged(f"no recording to replay {session} from: {exc}") from None
        recorded = self._sessions[session].get(turn)
        if recorded is None:
            raise ReplayDiverged(f"{session}: the recording has no answer for model turn {turn}; the replay went another way")
        if recorded.error is not None:
            error = recorded.error
            raise RecordedApiError(error.kind or "other", error.error or "recorded API error", error.status)
        if recorded.bad:
            return SimpleNamespace(choices=[])
        if recorded.message is not None and recorded.message.capped:  # payload_caps.py: not the answer the model gave
            raise ReplayDiverged(
                f"{session}: model turn {turn} was recorded truncated ({', '.join(recorded.message.capped)}); it cannot be replayed"
            )
        return _response(recorded.message)


def _response(message: Any) -> Any:
    calls = [
        SimpleNamespace(
            id=call.get("id"),
            function=SimpleNamespace(name=call["function"].get("name"), arguments=call["function"].get("arguments")),
        )
        for call in message.tool_calls or []
        if isinstance(call, dict) and isinstance(call.get("function"), dict)
    ]
    usage = message.usage or {}
    return SimpleNamespace(
        choices=[
            SimpleNamespace(
                message=SimpleNamespace(content=message.content, reasoning_content=message.reasoning, tool_calls=calls or None),
                finish_reason=message.finish_reason,
            )
        ],
        usage=SimpleNamespace(prompt_tokens=usage.get("input", 0), completion_tokens=usage.get("output", 0)),
        _hidden_params={"response_cost": message.cost},
    )
