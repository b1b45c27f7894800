"""Paraphrases of a generated task: its template's other phrasing skeletons, filled with its values.

A template phrases a draft with one of its skeletons (`Template.phrase`), chosen by the draft's
seeded RNG. Drafting again with the task's RNG (`Random(f"{domain}:{seed}:{template}:{attempt}")`,
as `generate` made it) on the task's world, with `phrase` replaced by one that records the values
it is given, gives those values back; the other skeletons filled with them are the same request in
other words, with exactly the same stated values (so the certification of the task, which rests
on the values and the conditions, not on the wording, holds for them).

The re-draft is trusted only when it reproduces the task's query exactly. `phrase` draws the
skeleton with `rng.choice` over the skeletons not used up at the time, which the task does not
record: how many were free changes how much of the stream the draw consumes, so each count is
tried, from all of them down. A paraphrase that leaks a hidden value (`leaked`) or repeats the
query (`query_key`) is dropped; duplicates are dropped. A task not made by a template (a model
wrote it, or its template is gone) has none.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from random import Random
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.world import ensure_world, scratch_copy
from .spec import Task
from .template_api import GenContext, NoTarget, Template, leaked, query_key


def skeleton_paraphrases(task: Task, template: Template | None, conn: sqlite3.Connection) -> list[str]:
    """The task's request in its template's other skeletons (see the module); [] when the template
    cannot reproduce the request. `conn`: a read-only or scratch copy of the task's world."""
    generator = task.generator
    if generator.get("kind") == "model" or "paraphrase_of" in generator:
        return []
    chosen = generator.get("phrasing")
    if template is None or not isinstance(chosen, int) or not 0 <= chosen < len(template.phrasings):
        return []
    for free in range(len(template.phrasings), 0, -1):
        found = _redraft(template, task, conn, chosen, free)
        if found is None:
            continue
        values, hidden = found
        out: list[str] = []
        seen = {query_key(task.query)}
        for index, skeleton in enumerate(template.phrasings):
            if index == chosen:
                continue
            text = skeleton.format(**values)
            if query_key(text) in seen or leaked(text, hidden):
                continue
            seen.add(query_key(text))
            out.append(text)
        return out
    return []


def _redraft(template: Template, task: Task, conn: sqlite3.Connection, chosen: int, free: int) -> tuple[dict[str, Any], list[Any]] | None:
    """The values `phrase` was given and the draft's hidden values, when drafting again with the
    task's RNG (the skeleton drawn among `free`) reproduces its query; else None."""
    generator = task.generator
    captured: dict[str, Any] = {}

    class Capturing(type(template)):  # type: ignore[misc]
        def phrase(self, ctx: GenContext, **values: Any) -> str:
            ctx.rng.choice(range(free))  # the draw consumes what the original one did
            ctx.phrasing = chosen
            captured.clear()
            captured.update(values)
            text: str = self.phrasings[chosen].format(**values)
            return text

    rng = Random(f"{task.domain}:{generator.get('seed')}:{template.name}:{generator.get('attempt')}")
    try:
        draft = Capturing().draft(GenContext(task.domain, conn, rng))
    except (NoTarget, KeyError, IndexError, ValueError, TypeError, sqlite3.Error):
        return None
    if draft.query != task.query or not captured:
        return None
    return captured, list(draft.hidden)


def fill_paraphrases(tasks: Iterable[Task], template_for: Callable[[Task], Template | None]) -> dict[str, list[str]]:
    """Each task's skeleton paraphrases, by id (one scratch copy per world, closed after);
    `template_for` finds a task's template (template_catalog.py: this module is below it)."""
    copies: dict[tuple[str, int], sqlite3.Connection] = {}
    out: dict[str, list[str]] = {}
    try:
        for task in tasks:
            domain = get_domain(task.domain)
            seed = int(task.world.get("seed", domain.default_seed)) if task.world else domain.default_seed
            if (task.domain, seed) not in copies:
                copies[(task.domain, seed)] = scratch_copy(ensure_world(domain, seed))
            out[task.id] = skeleton_paraphrases(task, template_for(task), copies[(task.domain, seed)])
    finally:
        for conn in copies.values():
            conn.close()
    return out
