"""Users: who answers when the agent talks instead of calling a tool.

A trial has a user when its task holds a user profile: facts the request leaves out on purpose
("the playlist's name"), which the agent must ask for before it acts. Without a profile there is
no one to talk to and an answer without a tool call ends the trial, as it always did.

- `ScriptedUser` (the default) is deterministic: it answers a message only when the message asks
  something (holds a "?"); it gives every fact one of whose `asked_by` words the question holds
  (a word of the question starting with it, any case); to any other question it says "I don't
  know." while it still holds a fact the agent has not asked for, and nothing once it has given
  them all (a polite "Anything else?" after the work is done ends the turn); it never volunteers.
  A message that asks nothing ends the conversation.
- `LLMUser` is any model (the model client: litellm's model strings) given the request and the profile and told to reveal only what is
  asked; it ends the conversation by answering STOP. Its requests are recorded with its answers.
- A person can be the user in the app (`PersonUser`, which awaits the app's answer).

Every reply is recorded as a `message` event of role "user" with `user` (who answered) and
`revealed` (the facts it gave). The rule "acting before asking fails the turn" is `AskedFirst`:
a write the world accepted while a fact of the profile was still unrevealed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..tasks.spec import UserFact
from .model_client import acompletion, classify, describe

if TYPE_CHECKING:
    from ..tasks.grading import Grade

DONT_KNOW = "I don't know."
STOP_WORD = "###STOP###"
# Per turn (a scenario's turn, or the whole of a single task): replies that give facts, and
# replies to small talk (a question that asks for no fact the user holds, "Anything else I can
# help you with?"). Small talk never counts against the facts' limit, and past its own limit the
# user has nothing more to say, which ends the turn: a polite agent is never starved of answers.
MAX_USER_REPLIES = 10
MAX_SMALL_TALK = 3


@dataclass
class Reply:
    """What the user said (None: nothing, the conversation is over) and which facts it gave."""

    text: str | None
    revealed: list[str] = field(default_factory=list)
    usage: dict[str, int] | None = None  # an LLM user's tokens


class User(Protocol):
    kind: str

    async def reply(self, message: str) -> Reply: ...

    def begin(self, request: str, profile: Sequence[UserFact]) -> None:
        """A scenario's next turn: the user now holds this turn's facts (scenarios.py)."""
        ...


class UserUnavailable(RuntimeError):
    """The simulated user could not answer (its model's API failed): not the agent's fault."""


_WORD = re.compile(r"[\w']+")


def asks(message: str) -> bool:
    return "?" in message


def facts_asked(profile: Iterable[UserFact], message: str) -> list[UserFact]:
    """The facts a question asks for: one of their `asked_by` words starts a word of the question."""
    words = [w.lower() for w in _WORD.findall(message)]
    return [f for f in profile if any(w.startswith(key.lower()) for key in f.asked_by for w in words)]


def question_for(profile: Sequence[UserFact]) -> str:
    """The question that asks for every fact of a profile (the oracle's, the test model's)."""
    names = [f.about for f in profile]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"Before I start, could you tell me the {listed}?"


class ScriptedUser:
    kind = "scripted"

    def __init__(self, profile: Sequence[UserFact]) -> None:
        self.profile = list(profile)
        self.given: set[str] = set()

    def begin(self, request: str, profile: Sequence[UserFact]) -> None:
        self.profile = list(profile)
        self.given = set()

    async def reply(self, message: str) -> Reply:
        return self.answer(message)

    def answer(self, message: str) -> Reply:
        if not asks(message):
            return Reply(None)
        facts = facts_asked(self.profile, message)
        if not facts:
            held = any(f.about not in self.given for f in self.profile)
            return Reply(DONT_KNOW if held else None)
        self.given.update(f.about for f in facts)
        return Reply(" ".join(f.answer for f in facts), [f.about for f in facts])


def user_prompt(request: str, profile: Sequence[UserFact]) -> str:
    facts = "\n".join(f"- {f.about}: {f.answer}" for f in profile)
    return (
        "You are a user of a product, talking to an assistant that acts for you. You asked:\n"
        f"{request}\n\nYou left some things out on purpose. What you know about them:\n{facts}\n\n"
        "Answer only what the assistant asks, in a sentence or two, in your own words; never volunteer "
        "a fact it did not ask for; if it asks something not listed above, say you don't know. "
        f"When its message asks you nothing (it reports what it did), answer exactly {STOP_WORD}."
    )


class LLMUser:
    """A simulated user played by a model (the model client). Its failures are infrastructure errors."""

    kind = "llm"

    def __init__(self, settings: UserSettings, profile: Sequence[UserFact], request: str) -> None:
        self.settings = settings
        self.profile: list[UserFact] = []
        self.messages: list[dict[str, Any]] = []
        self.begin(request, profile)

    def begin(self, request: str, profile: Sequence[UserFact]) -> None:
        """A new turn is a new brief: the request and the facts it leaves out."""
        self.profile = list(profile)
        self.messages = [{"role": "system", "content": user_prompt(request, profile)}]

    async def reply(self, message: str) -> Reply:
        self.messages.append({"role": "user", "content": message})
        args = dict(self.settings.model_args)
        timeout = args.pop("timeout", 120)  # a model argument wins, as it did in litellm's kwargs
        for attempt in range(self.settings.retries + 1):
            try:
                response = await acompletion(
                    self.settings.model or "",
                    self.messages,
                    api_base=self.settings.api_base,
                    model_args=args,
                    timeout=timeout,
                    max_retries=None,
                )
            except Exception as exc:
                if classify(exc) != "transient" or attempt >= self.settings.retries:
                    raise UserUnavailable(f"the simulated user's model failed: {describe(exc)}") from None
                await asyncio.sleep(min(30.0, 0.5 * 2**attempt))
                continue
            if response.choices:
                break
            # An answer with no choices at all (some providers do this under load) is asked again.
            if attempt >= self.settings.retries:
                raise UserUnavailable("the simulated user's model returned an empty response (no choices)")
        text = response.choices[0].message.content
        text = text if isinstance(text, str) else ""
        self.messages.append({"role": "assistant", "content": text})
        usage = getattr(response, "usage", None)
        tokens = {"input": int(getattr(usage, "prompt_tokens", 0) or 0), "output": int(getattr(usage, "completion_tokens", 0) or 0)}
        if STOP_WORD in text or not text.strip():
            return Reply(None, usage=tokens)
        return Reply(text, revealed_in(self.profile, text), tokens)


def revealed_in(profile: Iterable[UserFact], text: str) -> list[str]:
    """The facts a free-text reply (a model's, a person's) gave, judged by the profile's own words:
    the reply holds the fact's value."""
    return [f.about for f in profile if _core(f.answer) and _core(f.answer) in text.casefold()]


def _core(answer: str) -> str:
    """The part of a fact's answer that carries it: its quoted value if it has one, else the whole."""
    quoted = re.search(r"'([^']+)'|\"([^\"]+)\"", answer)
    return (quoted.group(1) or quoted.group(2) if quoted else answer).casefold()


class PersonUser:
    """The app's person at the keyboard, playing the user: `ask` hands the agent's message to the
    app and awaits what the person types (None or "" ends the conversation)."""

    kind = "person"

    def __init__(self, ask: Callable[[str], Awaitable[str | None]], profile: Sequence[UserFact] = ()) -> None:
        self.ask = ask
        self.profile = list(profile)

    def begin(self, request: str, profile: Sequence[UserFact]) -> None:
        self.profile = list(profile)

    async def reply(self, message: str) -> Reply:
        text = await self.ask(message)
        if not text or not text.strip():
            return Reply(None)
        return Reply(text, revealed_in(self.profile, text))


class UserSettings(BaseModel):
    """Who plays the user in a run: `scripted` (default) or `llm` with a model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["scripted", "llm"] = "scripted"
    model: str | None = None
    api_base: str | None = None
    model_args: dict[str, Any] = Field(default_factory=dict)
    retries: int = 3

    def config(self) -> dict[str, Any]:
        """What a run records (and hashes): nothing for the default, so older runs resume."""
        if self.kind == "scripted":
            return {}
        from .record import redact_config

        return {"kind": self.kind, "model": self.model, "api_base": self.api_base, "model_args": redact_config(self.model_args)}

    def make(self, profile: Sequence[UserFact], request: str) -> User:
        if self.kind == "llm":
            return LLMUser(self, profile, request)
        return ScriptedUser(profile)

    def for_task(self, task: Any) -> User | None:
        """The user of a trial of `task`: one only when there is someone to talk to (a user
        profile, or a scenario's turns)."""
        if not task.user_profile and getattr(task, "scenario", None) is None:
            return None
        return self.make(task.user_profile, task.query)


class AskedFirst:
    """The rule "acting before asking fails": fed a trial's events in order (live, or read back
    from its session), it notes the facts of the profile still unrevealed when the first write
    the world accepted was made. A child call of a code block counts like any call."""

    def __init__(self, profile: Sequence[UserFact], writes: frozenset[str]) -> None:
        self.needed = {f.about for f in profile}
        self.writes = writes
        self.told: set[str] = set()
        self.early: list[str] = []  # the facts missing at the first accepted write
        self.wrote = False

    def see(self, event: Any) -> None:
        if not self.needed or self.wrote:
            return
        kind = getattr(event, "event", "")
        if kind == "message" and getattr(event, "role", "") == "user":
            self.told.update(event.revealed or [])
        elif kind == "tool_call" and event.ok and event.role != "block" and str(event.tool) in self.writes:
            self.wrote = True
            self.early = sorted(self.needed - self.told)

    @property
    def note(self) -> str:
        return f"acted before asking the user for: {', '.join(self.early)}" if self.early else ""


def asked_first_of(task: Any, events: Iterable[Any]) -> AskedFirst | None:
    """The rule's verdict over a recorded session's events (None: the task has no user profile)."""
    if not task.user_profile:
        return None
    from ..tasks.paths import write_tools

    rule = AskedFirst(task.user_profile, write_tools(task.domain))
    for event in events:
        rule.see(event)
    return rule


def with_asked_first(verdict: Grade, rule: AskedFirst | None) -> Grade:
    """The grade under the rule: a passing end state reached by acting before asking fails."""
    if rule is not None and rule.early and verdict.passed:
        return verdict.model_copy(update={"passed": False, "note": rule.note})
    return verdict
