"""What a block returns: ExecResult, and one CallRecord per proxied tool call."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CallRecord:
    """One tool call made inside a block, in the order made (the session records them as
    children of the block)."""

    index: int
    tool: str
    args: dict[str, Any]
    ok: bool
    result: Any  # the payload the block received (the value, or {"error": {...}})
    seconds: float
    error_code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ExecResult:
    ok: bool
    stdout: str = ""
    value: str | None = None  # repr of the last expression's value, as in a notebook cell
    error: str | None = None  # a traceback of the block's own lines, or a limit message
    limit: str | None = None  # time, memory, output, tool_calls, forbidden, crash, protocol, code_size
    calls: list[CallRecord] = field(default_factory=list)
    seconds: float = 0.0

    def to_payload(self) -> dict[str, Any]:
        """The exec_code tool's result, as the solver receives it."""
        payload: dict[str, Any] = {"ok": self.ok, "stdout": self.stdout, "value": self.value}
        if self.error is not None:
            payload["error"] = self.error
        if self.limit is not None:
            payload["limit"] = self.limit
        payload["tool_calls"] = len(self.calls)
        return payload

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["calls"] = [c.to_dict() for c in self.calls]
        return data
