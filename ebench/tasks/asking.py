"""Tasks whose user holds what the request leaves out (the shipped "ask" split).

An ask variant is a certified task with one or two values the user chooses freely (a playlist's
name, a message's text, a note) taken out of the request and put in its user profile: the request
says "with a name I'll give you", and the scripted user gives the name when asked. Everything
else stays the certified task's (actor, expected diff, reference solution, world), so the variant
is certified by the original's certificate plus two checks of its own:

- the hidden value no longer appears in the request (nothing to read it from but the user);
- the hidden value bites: it is written into the expected diff, so an agent that acts without
  asking (inventing a name) cannot reach the expected end state.

Only values the user states in quotes, once, are hidden; the wording keeps one reading because
the gap is named ("a message I'll give you") and nothing in the world can fill it. A scenario's
clarify turn hides them silently (`announce=False`): the request simply lacks the value, and the
agent has to notice that it cannot act without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .spec import Task, UserFact

VARIANT = "ask"
SPLIT_DIR = Path(__file__).resolve().parent / "splits" / VARIANT
MAX_HIDDEN = 2

# The stated values a user chooses freely, what the request calls them, the words a question
# about them holds, and how the user gives them.
FREE_VALUES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "name": ("name", ("name", "call", "title"), "Call it '{}'."),
    "title": ("title", ("title", "name", "call"), "The title is '{}'."),
    "new_title": ("new title", ("title", "name", "call"), "The new title is '{}'."),
    "message": ("message", ("message", "say", "text", "write", "post"), "The message is '{}'."),
    "text": ("text", ("text", "message", "say", "write", "post"), "The text is '{}'."),
    "note": ("note", ("note",), "The note is '{}'."),
}

# How the quoted value sits in the request, and what takes its place ({noun}: what it is), said
# aloud ("with a name I'll give you": the ask split) or silently (the request simply lacks it, as
# a person's often does: a scenario's clarify turn, where the agent must notice the gap). A bare
# quoted value is replaced only where the result reads as a request (a message to post, a meeting
# to set up), else the value is not hidden.
_SLOTS = (
    (r"\b(?:with )?the (?:note|message|title|name) {q}", "with a {noun} I'll give you", "with a {noun}"),
    (r" ?\b(?:called|named|titled|saying|noting|note) {q}", " with a {noun} I'll give you", ""),
    (r"\bthe comment {q}", "a comment I'll give you", "a comment"),
    (r"\ba (comment|message|reply|note) {q}", r"a \1 I'll give you", r"a \1"),
    (r"{q} as the (?:note|message|title|name)\b", "a {noun} I'll give you", "a {noun}"),
    (r"\b(playlist|room|chat|entry|series|block) {q}", r"\1 with a {noun} I'll give you", r"\1"),
    (
        r"\b([Ss]et up|[Ss]chedule|[Bb]ook|need|[Ff]or) {q}(?= on\b| \(| as\b| from\b|[,.:;])",
        r"\1 a meeting whose {noun} I'll give you",
        r"\1 a meeting",
    ),
    (r"\b(an online) {q}(?= on\b| \(| as\b| from\b|[,.:;])", r"\1 meeting whose {noun} I'll give you", r"\1 meeting"),
)
# For a message or text: "post 'Hello'" -> "post a message I'll give you" / "post a message".
_BARE = ("a {noun} I'll give you", "a {noun}")


def _hide(query: str, value: str, noun: str, announce: bool = True) -> str | None:
    quoted = re.escape(f"'{value}'")
    slots = [*_SLOTS, *([(r"{q}", *_BARE)] if noun in ("message", "text") else [])]
    for pattern, said, silent in slots:
        found = list(re.finditer(pattern.format(q=quoted), query))
        if len(found) == 1:
            start, end = found[0].span()
            words = said if announce else silent
            return query[:start] + found[0].expand(words.format(noun=noun)) + query[end:]
        if found:
            return None
    return None


def _bites(task: Task, value: str) -> bool:
    """The value is written by the task: some new cell of the expected diff is it (a value that
    only names something existing, like the title of a meeting to find, is not hidden)."""
    return any(cell == value for change in task.expected_diff for cell in (change.new or {}).values())


def ask_variant(task: Task, announce: bool = True) -> Task | None:
    """The task with its freely chosen values held by the user, or None when it has none that
    can be hidden (none stated in quotes once, or none written by the task). `announce`: the
    request names the gap ("a name I'll give you"); otherwise it simply lacks the value."""
    stated = task.generator.get("stated")
    if not isinstance(stated, dict) or task.user_profile:
        return None
    query = task.query
    facts: list[UserFact] = []
    hidden: list[str] = []
    nouns: set[str] = set()
    for key, value in stated.items():
        if key not in FREE_VALUES or not isinstance(value, str) or not value or len(facts) >= MAX_HIDDEN:
            continue
        noun, asked_by, answer = FREE_VALUES[key]
        if noun in nouns or query.count(f"'{value}'") != 1 or not _bites(task, value):
            continue
        changed = _hide(query, value, noun, announce)
        if changed is None:
            continue
        query = changed
        nouns.add(noun)
        hidden.append(key)
        facts.append(UserFact(noun, asked_by, answer.format(value)))
    if not facts or _leaks(query, stated, hidden):
        return None
    return task.model_copy(
        update={
            "id": f"{task.id}-{VARIANT}",
            "query": query,
            "paraphrases": [p for p in (_hidden_in(text, stated, hidden, announce) for text in task.paraphrases) if p is not None],
            "generator": {**task.generator, "variant": VARIANT, "hidden": hidden, "original": task.id},
            "user_profile": facts,
            "source": "",
        }
    )


def _leaks(text: str, stated: dict[str, Any], hidden: list[str]) -> bool:
    return any(str(stated[key]).casefold() in text.casefold() for key in hidden)


def _hidden_in(paraphrase: str, stated: dict[str, Any], hidden: list[str], announce: bool = True) -> str | None:
    """A paraphrase of the original with the same values hidden, or None when one cannot be."""
    text: str | None = paraphrase
    for key in hidden:
        text = _hide(text, stated[key], FREE_VALUES[key][0], announce) if text is not None else None
    return text if text is not None and not _leaks(text, stated, hidden) else None


def ask_variants(tasks: Iterable[Task]) -> list[Task]:
    return [variant for task in tasks if (variant := ask_variant(task)) is not None]


def write_split(tasks: Iterable[Task], out: Path, suite_version: str | None) -> list[Task]:
    """Write the ask variants of `tasks` as a task folder (<domain>/<id>.json and suite.json);
    returns them. The folder's files are replaced."""
    import json

    variants = ask_variants(tasks)
    for old in out.glob("*/*.json"):
        old.unlink()
    for task in variants:
        path = out / task.domain / f"{task.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(task.to_json(), encoding="utf-8")
    counts: dict[str, int] = {}
    for task in variants:
        counts[task.domain] = counts.get(task.domain, 0) + 1
    record = {
        "about": "The ask split: tasks of the shipped suite whose freely chosen values (names, messages, notes, titles) "
        "the user holds and gives only when asked (ebench/tasks/asking.py). Made with `ebench tasks ask-split --as-suite`; "
        "a test regenerates it and compares the files byte for byte.",
        "version": f"{suite_version or '?'}-{VARIANT}",
        "derived_from": suite_version,
        "counts": dict(sorted(counts.items())),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return variants
