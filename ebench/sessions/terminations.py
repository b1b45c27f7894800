"""Why a trial ended: the reasons a session's end event and a results line record."""

from __future__ import annotations

from enum import StrEnum


class Termination(StrEnum):
    """Why a trial ended. Only INFRA_ERROR is not the solver's result (left out of the scores)."""

    AGENT_STOPPED = "agent_stopped"
    MAX_TURNS = "max_turns"
    MAX_TOOL_CALLS = "max_tool_calls"
    TIME_LIMIT = "time_limit"
    CONTEXT_LIMIT = "context_limit"
    AGENT_ERROR = "agent_error"
    INFRA_ERROR = "infra_error"
