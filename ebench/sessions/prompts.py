"""What a solver is told: the product, the user, the time (shared by the model solver and MCP)."""

from __future__ import annotations

from ..engine.domain import Domain

GUIDANCE = (
    "Carry out the user's request with the tools. Look up what you need; do not guess ids. "
    "When the request is done (or cannot be done), reply to the user without calling a tool."
)


def solver_context(domain: Domain, actor_label: str) -> str:
    """The product's description, the current user and the current time."""
    return f"{domain.description}\n\nThe current {domain.actor_noun} is {actor_label}. The current time is {domain.now}."


ASK_GUIDANCE = (
    "\nThe request may leave out something you need that only the user knows: ask the user (reply "
    "without calling a tool, with a question) before you change anything."
)


def system_prompt(domain: Domain, actor_label: str, code: bool = False, *, asks: bool = False) -> str:
    """`asks`: the trial has a user who answers questions (its task holds a user profile)."""
    extra = (
        "\nYou can also run Python with exec_code, in which every tool is a function: use it to "
        "page through long lists and to make many calls in one step."
        if code
        else ""
    )
    return f"{solver_context(domain, actor_label)}\n\n{GUIDANCE}{extra}{ASK_GUIDANCE if asks else ''}"
