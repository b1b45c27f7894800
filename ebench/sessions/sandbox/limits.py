"""Limits of one exec_code block, each with the message the solver gets when it is reached."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Per-block limits. Every block runs in a fresh worker, so each limit applies per block."""

    wall_seconds: float = 30.0  # the block is killed after this long (tool calls included)
    memory_mb: int = 512  # address space of the worker (RLIMIT_AS)
    output_chars: int = 64_000  # printed characters kept; the block stops beyond them
    tool_calls: int = 1000  # proxied tool calls per block
    code_chars: int = 200_000  # size of the code itself
    max_message_bytes: int = 4_000_000  # any single message from the worker (hostile input)
    startup_seconds: float = 20.0  # a worker that is not ready by then is a failure
    max_files: int = 64  # RLIMIT_NOFILE

    @property
    def cpu_seconds(self) -> int:
        """RLIMIT_CPU: a backstop behind the wall-time kill."""
        return int(self.wall_seconds) + 5

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        return (
            f"{self.wall_seconds:g} s wall time, {self.memory_mb} MB memory, "
            f"{self.output_chars} printed characters, {self.tool_calls} tool calls per block"
        )


def time_message(limits: Limits) -> str:
    return (
        f"Time limit reached: the block ran for more than {limits.wall_seconds:g} s and was "
        "stopped. Tool calls made before that took effect. Split the work into smaller blocks."
    )


def tool_calls_message(limits: Limits) -> str:
    return (
        f"Tool call limit reached: a block may make at most {limits.tool_calls} tool calls; "
        "this call was refused and the block was stopped. Calls made before it took effect."
    )


def output_marker(limits: Limits) -> str:
    return f"\n... [output truncated: more than {limits.output_chars} characters were printed]"
