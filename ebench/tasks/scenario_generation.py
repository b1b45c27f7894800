"""Building scenarios from the task templates, certified turn by turn (see scenarios.py).

1. Draft pool: every template drafts many times with seeded RNGs (cheap: SQL only); drafts that
   leak a hidden value are dropped. Drafts are grouped by actor: a scenario is one actor's.
2. For each actor, in a fixed order, a scenario's 4 turns are chosen one at a time on a private
   copy of the world that carries the expected changes of the turns before. At each position the
   kinds the domain has used least so far are tried first (a seeded tie-break), and the first one
   that can be filled wins; a kind other than `task` comes at most once per scenario, and no
   sequence of kinds (a pattern) is used by more than one scenario in ten. The kinds:
   - task: a draft certified (certify.py: the public solver agrees with the SQL generator, every
     condition bites, no reading changes the answer) on that state, and independent of it: its
     public solver on the untouched world reaches the same changes (so a failed earlier turn does
     not move its answer); its reference solution replays on the state;
   - follow_up: the previous turn's request with one or two stated values changed, said as "Now the
     same, but with 'Rock' instead of 'Jazz'."; certified on the state that turn leaves, on which
     it depends by design (what it repeats may already be done);
   - switch: a request whose user changes one stated value mid-request ("... Actually, make that
     'Blues' instead of 'Jazz'."): graded on the new value, which ends elsewhere than the first;
   - compound: two independent tasks of different templates in one message;
   - chained: two tasks in one message, the second using the first's result: it names the entity
     the first creates by description ("... then follow the main artists of the new playlist"), or
     its answer changes with the first's writes ("Once that's done: ..."). Each part is certified
     on the state it runs on, the second checked to depend on the first, and the pair is one task
     whose expected diff is the net change of both (the second done first ends elsewhere);
   - reference / long_range: a request that names an earlier turn's result or value by
     description instead ("the playlist you just made", "the second of the two playlists you just
     made", "the same note as in my first request"): the previous turn's (reference), or one two or
     more turns back (long_range). It depends on that turn by design;
   - clarify: the request's freely chosen value (asking.py) is held in the user profile, silently:
     the request simply lacks it (hidden intent: it does not announce the gap);
   - chat: a message that needs no change, from the domain's chat lines filled with the actor's data
     (`SCENARIO_CHATS` in its templates module) or general ones.
   A value changed by a follow-up, a switch or a reference is run through the template's public
   solver and certified like a draft, its own steps standing for the SQL generator's (the
   template's agreement was shown on the original draft). An actor whose drafts cannot fill 4 turns
   is passed over.

Everything is seeded: the same domain, seed and count give the same scenarios byte for byte, and
the first k scenarios of a larger count are those of count k (a scenario depends only on the ones
before it).
"""

from __future__ import annotations

import importlib
import re
import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from random import Random
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.world import ensure_world, scratch_copy, world_id
from .asking import FREE_VALUES, ask_variant
from .certify import Rejected, certify, run_public
from .diff import Diff
from .generation import certified_task
from .grading import grade
from .public import WRITTEN, NotCertifiable, PublicSolverFailed
from .reference import ReferenceFailed, run_steps
from .scenarios import KINDS, Kind, Scenario, Turn
from .spec import CAPABILITIES, Step, Task, TaskBudget, TaskWorld, diff_stats, remap_references
from .template_api import DATES_AND_TIMES, Draft, GenContext, NoTarget, Template, leaked, templates_for
from .template_helpers import pretty_day

TURNS = 4
ATTEMPTS = {"music": 100, "meeting": 160, "moba": 120}  # drafts per template in the pool
MIN_ROWS = 2
# First parts a chained turn tries. Most moba first parts open a room, which the next room would
# dissolve (`second_undoes_first`), so moba looks further.
CHAIN_TRIES = {"moba": 10}
MAX_SWAPS = 2  # values a follow-up changes
PATTERN_SHARE = 10  # a pattern is used by at most one scenario in this many
REPEATABLE = ("task",)  # kinds a scenario may hold more than once
FOLLOWED = ("task", "switch", "follow_up", "reference", "long_range")  # a follow-up repeats one of these
FOLLOW_UPS = (
    "Now do the same again, but with {changes}.",
    "Great. Same thing once more, this time with {changes}.",
    "Could you repeat that, with {changes}?",
    "Nice. Let's do that again with {changes}.",
    "One more like that, please: {changes}.",
)
SWITCHES = (
    "{request} Actually, wait: make that {new} instead of {old}.",
    "{request} Sorry, I meant {new}, not {old}.",
    "{request} Hmm, on second thought, use {new} rather than {old}.",
    "{request} Oh, and scratch {old}: {new} instead.",
)
COMPOUNDS = (
    "Two things. First: {a} Second: {b}",
    "{a} Also, separately: {b}",
    "A couple of things today. {a} And: {b}",
    "{a} While you're at it, one more thing: {b}",
    "Could you do two things for me? One: {a} Two: {b}",
)
CHAINS = (
    "{a} Once that's done: {b}",
    "{a} Then, with that in place: {b}",
    "Step one: {a} Step two, after step one: {b}",
    "{a} When that's finished, next: {b}",
)
THE_NEW = ("the new {noun}", "that new {noun}")
CHATS = (
    "Thanks, that's all I needed for that one.",
    "Perfect, thank you!",
    "Great, that's exactly what I wanted.",
    "Thanks! That saved me a lot of clicking.",
    "Which account am I signed in as right now?",
    "What's today's date, by the way?",
    "Sorry, I got distracted for a moment. Where were we?",
    "Cool, thanks. You're quicker at this than I am.",
    "Hmm, let me think about what's next. Nothing to do yet.",
)
# A chat line about an entity an earlier turn made (no change needed).
ENTITY_CHATS = (
    "Remind me, what did I call the {noun} you {verb} earlier? No need to change it.",
    "Just checking: the {noun} you {verb} is there now, right?",
)
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
# Stated values a later request may take from an earlier one by description: free text the user
# wrote (quoted), and dates.
TEXT_KEYS = {"note": "note", "message": "message", "text": "text", "reason": "reason"}
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class PooledDraft:
    template: Template
    attempt: int
    draft: Draft


def draft_pool(domain_name: str, seed: int, conn: sqlite3.Connection, attempts: int) -> dict[int, list[PooledDraft]]:
    """Drafts by actor, in a fixed order (template, then attempt)."""
    pool: dict[int, list[PooledDraft]] = {}
    for template in templates_for(domain_name):
        for attempt in range(attempts):
            ctx = GenContext(domain_name, conn, Random(f"{domain_name}:{seed}:scenario:{template.name}:{attempt}"))
            try:
                draft = template.draft(ctx)
            except NoTarget:
                continue
            if not leaked(draft.query, draft.hidden):
                pool.setdefault(draft.actor, []).append(PooledDraft(template, attempt, draft))
    return pool


def stated_values(pool: dict[int, list[PooledDraft]]) -> dict[tuple[str, str], list[Any]]:
    """Every value each (template, stated key) takes across the pool, in first-seen order: what a
    follow-up or a switch may change a value to (the template's own vocabulary for it)."""
    values: dict[tuple[str, str], list[Any]] = {}
    for drafts in pool.values():
        for pooled in drafts:
            for key, value in pooled.draft.stated.items():
                seen = values.setdefault((pooled.template.name, key), [])
                if _swappable(value) and value not in seen:
                    seen.append(value)
    return values


def _swappable(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool) and value != ""


def _domain_data(domain_name: str, name: str, default: Any) -> Any:
    """A constant of the domain's templates module (SCENARIO_ENTITIES, SCENARIO_CHATS)."""
    module = get_domain(domain_name).templates_module
    return getattr(importlib.import_module(module), name, default) if module else default


class _State:
    """The world as the scenario's earlier turns leave it: a private copy, a file of it that the
    certifier copies from, and the tasks applied (to go back to an earlier point)."""

    def __init__(self, domain_name: str, actor: int, world: Path, folder: Path) -> None:
        self.domain_name, self.actor = domain_name, actor
        self.world = world
        self.folder = folder
        self.conn = scratch_copy(world)
        self.path = folder / "state.db"
        self.applied: list[Task] = []
        self._save()

    def _save(self) -> None:
        self.path.unlink(missing_ok=True)
        target = sqlite3.connect(self.path)
        try:
            self.conn.backup(target)
        finally:
            target.close()

    def apply(self, tasks: list[Task]) -> None:
        for task in tasks:
            run_steps(self.domain_name, self.actor, task.reference_solution, self.conn)
        self.applied.extend(tasks)
        self._save()

    def back_to(self, count: int) -> None:
        """The state with only the first `count` applied tasks (a turn that could not be filled)."""
        if count == len(self.applied):
            return
        kept = self.applied[:count]
        self.conn.close()
        self.conn = scratch_copy(self.world)
        self.applied = []
        self.apply(kept)

    def snapshot(self, name: str) -> Path:
        """A copy of the state's file as it is now."""
        path = self.folder / name
        shutil.copyfile(self.path, path)
        return path

    def close(self) -> None:
        self.conn.close()


# -- writing and finding stated values in a request --------------------------------------------


def _as_written(value: Any) -> tuple[Callable[[Any], str], ...]:
    """The ways a request writes a stated value: as it is, and a date as a person writes it (with
    its weekday when the request gives one, so a change moves both)."""
    if isinstance(value, str) and _ISO_DAY.match(value):
        return (_weekday_day, pretty_day, str)
    return (str,)


def _weekday_day(value: str) -> str:
    return f"{datetime.strptime(value, '%Y-%m-%d'):%A}, {pretty_day(value)}"


def _word(text: str) -> re.Pattern[str]:
    """`text` where it stands on its own: not inside a longer word, number or clock time."""
    return re.compile(rf"(?<![\w:.]){re.escape(text)}(?![\w:]|\.\d)")


def _places(query: str, value: Any, write: Callable[[Any], str]) -> list[re.Match[str]]:
    """Where the request writes `value` as `write` writes it (a number inside a date or a clock
    time, the 1 of "June 1", is not the number)."""
    taken = [m.span() for m in DATES_AND_TIMES.finditer(query)] if isinstance(value, int) else []
    return [m for m in _word(write(value)).finditer(query) if not any(a <= m.start() < b for a, b in taken)]


def _written_once(query: str, value: Any) -> tuple[Callable[[Any], str], re.Match[str]] | None:
    """How the request writes `value`, and where, when it does so exactly once."""
    for write in _as_written(value):
        found = _places(query, value, write)
        if len(found) == 1:
            return write, found[0]
    return None


def _mentions(text: str, value: Any) -> bool:
    return any(_places(text, value, write) for write in _as_written(value))


def _changed_query(query: str, changes: list[tuple[str, Any, Any]]) -> tuple[str, list[tuple[str, str]]] | None:
    """The request with each (key, old, new) value rewritten, and each change as written (old, new);
    None when an old value is not written exactly once, or the texts overlap."""
    pairs = []
    for _, old, new in changes:
        found = _written_once(query, old)
        if found is None:
            return None
        write, match = found
        pairs.append((write(old), write(new)))
        query = query[: match.start()] + write(new) + query[match.end() :]
    texts = [text for pair in pairs for text in pair]
    if any(a in b for i, a in enumerate(texts) for j, b in enumerate(texts) if i != j):
        return None
    if any(_mentions(query, old) for _, old, _ in changes):
        return None
    return query, pairs


def _shown(pairs: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
    """The changes as a message says them: a value quoted in the request is quoted here too."""
    out = []
    for old, new in pairs:
        quote = "'" if f"'{old}'" in query else ""
        out.append((f"{quote}{old}{quote}", f"{quote}{new}{quote}"))
    return out


def _follow_up_message(pairs: list[tuple[str, str]], query: str, rng: Random) -> str:
    """ "Now the same, but with 'Rock' instead of 'Jazz'"."""
    changes = " and ".join(f"{new} instead of {old}" for old, new in _shown(pairs, query))
    return rng.choice(FOLLOW_UPS).format(changes=changes)


def _switch_message(request: str, pair: tuple[str, str], rng: Random) -> str:
    """The request as first said, then the value changed mid-request."""
    [(old, new)] = _shown([pair], request)
    return rng.choice(SWITCHES).format(request=request, old=old, new=new)


def _capitalised(text: str, at: int) -> bool:
    """Whether text inserted at `at` starts a sentence."""
    before = text[:at].rstrip()
    return not before or before[-1] in ".:!?"


def _describe_entity(query: str, name: str, noun: str, description: str) -> str | None:
    """The request with the entity it names (quoted, once, with its "my playlist" around it)
    described instead; None when it is not named that way."""
    pattern = rf"(?:\b(?:my|the|our) )?(?:{noun}s? )?'{re.escape(name)}'(?: (?:[a-z]+ )?{noun}\b)?"  # "the 'X' group chat" too
    found = list(re.finditer(pattern, query))
    if len(found) != 1 or f"'{name}'" in query[found[0].end() :] or query.count(name) != 1:
        return None
    start, end = found[0].span()
    text = description[0].upper() + description[1:] if _capitalised(query, start) else description
    return query[:start] + text + query[end:]


# How a quoted free text sits in a request, and what takes its place ({same}: "the same note as
# in my first request").
_TEXT_SLOTS = (
    (r"\b(?:the|a|an) (?:note|message|text|comment|reply|reason) {q}", "{same}"),
    (r"\b(?:with )?{q} as (?:the|its) (?:note|message|text|comment|reply|reason)\b", "with {same}"),
    (r"\b[Nn]ote {q}", "use {same}"),
    (r"\bas {q}", "with {same}"),
    (r"\b(?:saying|noting|reading|reason:|note:) {q}", "with {same}"),
    (r"{q}", "{same}"),
)


def _describe_value(query: str, key: str, value: Any, same: str) -> str | None:
    """The request with a stated value described instead of said ("the same note as before");
    None when it is not written once in a way that can be."""
    if key in TEXT_KEYS and isinstance(value, str):
        quoted = re.escape(f"'{value}'")
        for pattern, words in _TEXT_SLOTS:
            found = list(re.finditer(pattern.format(q=quoted), query))
            if len(found) == 1 and query.count(f"'{value}'") == 1:
                start, end = found[0].span()
                text = words.format(same=same)
                text = text[0].upper() + text[1:] if _capitalised(query, start) else text
                return query[:start] + text + query[end:]
            if found:
                return None
        return None
    if isinstance(value, str) and _ISO_DAY.match(value):
        written = _written_once(query, value)
        if written is None:
            return None
        _, match = written
        return query[: match.start()] + same + query[match.end() :]
    return None


def _dates_written(message: str) -> int:
    """How many distinct dates a message writes (clock times are not dates)."""
    return len({m.group() for m in DATES_AND_TIMES.finditer(message) if ":" not in m.group()})


def _capitals(value: Any) -> set[str]:
    """The capitalised words of a value (the names it holds)."""
    return set(re.findall(r"\b[A-Z][\w&-]+", value)) if isinstance(value, str) else set()


def _describable(key: str, value: Any) -> bool:
    """A stated value a later request may take by description: free text, or a date."""
    return (key in TEXT_KEYS and isinstance(value, str)) or (isinstance(value, str) and bool(_ISO_DAY.match(value)))


EARLIER = "I gave you earlier"


def _since(turn: int, position: int) -> str:
    """Where an earlier value was said, as the user puts it."""
    if turn == position - 1:
        return "in my last request"
    if turn == 0:
        return "in my first request"
    return EARLIER


def _category(said: _Said) -> str:
    """What the user calls a described value: its noun ("note"), or "date"."""
    return TEXT_KEYS.get(said.key, "date")


# -- what earlier turns made and said ----------------------------------------------------------


@dataclass
class _Made:
    """An entity an earlier turn created, which a later request may describe."""

    turn: int
    part: int  # which of the turn's requests made it (mention order)
    table: str
    name: str
    ident: Any
    sole: bool  # the only row of its table its request created (so "the second one" is clear)
    deleted_too: bool  # its request also deleted rows of that table (its id could be a reused one)


@dataclass
class _Said:
    """A value an earlier turn's request stated."""

    turn: int
    key: str
    value: Any


def _made_by(task: Task, turn: int, part: int, entities: dict[str, tuple[str, str, str]]) -> list[_Made]:
    inserts: dict[str, list[Any]] = {}
    deletes = {c.table for c in task.expected_diff if c.op == "delete"}
    for change in task.expected_diff:
        if change.op == "insert" and change.table in entities:
            inserts.setdefault(change.table, []).append(change)
    made = []
    for table, changes in inserts.items():
        column = entities[table][0]
        for change in changes:
            name = (change.new or {}).get(column)
            if isinstance(name, str) and name:
                ident = next(iter(change.key.values())) if len(change.key) == 1 else None
                made.append(_Made(turn, part, table, name, ident, len(changes) == 1, table in deletes))
    return made


def _created_ids(diff: Diff, schema: Any) -> set[int]:
    """The ids of the rows a diff inserts into tables whose key SQLite allocates."""
    out = set()
    for change in diff:
        key = schema.table(change.table).key
        if change.op == "insert" and len(key) == 1 and isinstance(change.key.get(key[0]), int):
            out.add(change.key[key[0]])
    return out


def _created_as_references(steps: list[Step], start: int, results: list[Any], created: set[int]) -> list[Step]:
    """The steps from `start` on with every id argument that an earlier step's call created (the
    first part of a chained turn; the argument named as the result's field) as a `$from` reference
    to that call's result, as a task's own solution holds them: the id a trial gets may differ."""
    producers: dict[int, tuple[int, str]] = {}
    for index, result in enumerate(results[:start]):
        if isinstance(result, dict):
            for field_name, value in result.items():
                if isinstance(value, int) and not isinstance(value, bool) and value in created and field_name.endswith("id"):
                    producers.setdefault(value, (index, field_name))
    out = list(steps[:start])
    for step in steps[start:]:
        args = {
            name: {"$from": producers[value][0], "path": producers[value][1]}
            if isinstance(value, int) and not isinstance(value, bool) and value in producers and producers[value][1] == name
            else value
            for name, value in step.args.items()
        }
        out.append(Step(step.tool, args))
    return out


def second_undoes_first(first: Diff, net: Diff, schema: Any) -> bool:
    """Whether a chained turn's second part undoes the first's work: an entity the first created
    (a row of a table with a one-column key) is gone from the net change, or its status moved (a
    new room dissolved by opening the next one, its invitations expired). The request would
    contradict itself; a careful assistant asks instead of acting, so such a pair is not a turn."""
    net_rows = {(c.table, repr(sorted(c.key.items()))): c for c in net}
    for change in first:
        if change.op != "insert" or len(schema.table(change.table).key) != 1:
            continue
        kept = net_rows.get((change.table, repr(sorted(change.key.items()))))
        if kept is None or kept.op != "insert":
            return True
        if "status" in (change.new or {}) and (kept.new or {}).get("status") != (change.new or {}).get("status"):
            return True
    return False


def _mentions_row(diff: Diff, schema: Any, table: str, ident: Any) -> bool:
    """Whether a diff names a row of `table` by its id: its own key, or a column that refers to it."""
    for change in diff:
        if change.table == table and ident in change.key.values():
            return True
        refs = {c.name for c in schema.table(change.table).columns if c.references == table}
        for cells in (change.key, change.old or {}, change.new or {}):
            if any(cells.get(name) == ident for name in refs):
                return True
    return False


class _Builder:
    def __init__(
        self,
        domain_name: str,
        sid: str,
        actor: int,
        drafts: list[PooledDraft],
        state: _State,
        rng: Random,
        values: dict[tuple[str, str], list[Any]],
    ) -> None:
        self.domain_name, self.sid, self.actor = domain_name, sid, actor
        self.schema = get_domain(domain_name).schema
        self.drafts = list(drafts)
        self.state = state
        self.rng = rng
        self.values = values
        self.entities: dict[str, tuple[str, str, str]] = _domain_data(domain_name, "SCENARIO_ENTITIES", {})
        self.used: set[str] = set()  # templates used by this scenario
        self.turns: list[Turn] = []
        self.made: list[_Made] = []
        self.said: list[_Said] = []

    # -- the kinds -------------------------------------------------------------------------

    def add(self, kind: str) -> bool:
        """Fill the next turn with a turn of `kind`; False (and the state as it was) when it cannot be."""
        applied, used = len(self.state.applied), set(self.used)
        turn = getattr(self, f"_{kind}")()
        self.state.back_to(applied)  # a part applied on the way (a compound's first) is applied again below, with the turn
        if turn is None:
            self.used = used
            return False
        self._commit(turn)
        return True

    def allowed(self, kind: str) -> bool:
        """Whether a turn of `kind` may come next (it may still fail to be filled)."""
        position = len(self.turns)
        if kind not in REPEATABLE and kind in [t.kind for t in self.turns]:
            return False
        if kind == "follow_up":
            return bool(self.turns) and self.turns[-1].kind in FOLLOWED
        if kind == "reference":
            return position >= 1
        if kind == "long_range":
            return position >= 2
        return True

    def _task(self) -> Turn | None:
        taken = self._take(lambda p: True)
        return None if taken is None else Turn(kind="task", message=taken[1].query, tasks=[taken[1]])

    def _clarify(self) -> Turn | None:
        taken = self._take(lambda p: ask_variant(self._draft_task(p), announce=False) is not None)
        if taken is None:
            return None
        variant = ask_variant(taken[1], announce=False)
        if variant is None:
            return None
        variant.generator = {k: v for k, v in variant.generator.items() if k not in ("original", "variant")}
        return Turn(kind="clarify", message=variant.query, tasks=[variant])

    def _chat(self) -> Turn:
        return Turn(kind="chat", message=self._chat_line())

    def _follow_up(self) -> Turn | None:
        before = self.turns[-1].tasks[0]
        template = self._template(before)
        stated = before.generator.get("stated")
        if template is None or not isinstance(stated, dict):
            return None
        described = before.generator.get("refers", {}).get("key")  # said by description: a change to it would not read
        for changes in self._changes(template, stated, before.query, with_names=True)[:12]:
            rewritten = _changed_query(before.query, changes)
            if rewritten is None or any(key == described for key, _, _ in changes):
                continue
            query, pairs = rewritten
            # A follow-up depends on the turn before by design (what it repeats is on that turn's state).
            task = self._variant(template, before.generator, {**stated, **{k: new for k, _, new in changes}}, query, independent=False)
            if task is None:
                continue
            again = self._public_run(template, self.state.path, stated)
            if again is None or not grade(task.expected_diff, again, self.schema).passed:  # the change matters on this state
                task.generator["changed"] = {k: old for k, old, _ in changes}
                return Turn(
                    kind="follow_up", message=_follow_up_message(pairs, before.query, self.rng), tasks=[task], refers_to=len(self.turns) - 1
                )
        return None

    def _switch(self) -> Turn | None:
        tries = 0
        for pooled in self._unused():
            if tries >= 6:
                break
            draft = pooled.draft
            try:
                first = run_public(pooled.template, self.domain_name, self.state.path, self.actor, draft.stated)
            except (Rejected, NotCertifiable, PublicSolverFailed, TypeError, KeyError, IndexError, ValueError, AttributeError):
                continue
            tries += 1
            for changes in self._changes(pooled.template, draft.stated, draft.query, with_names=False)[:4]:
                rewritten = _changed_query(draft.query, changes)
                if rewritten is None:
                    continue
                query, [pair] = rewritten
                generator = {"template": pooled.template.name, "attempt": pooled.attempt}
                task = self._variant(pooled.template, generator, {**draft.stated, **{k: new for k, _, new in changes}}, query)
                if task is None or grade(task.expected_diff, first.diff, self.schema).passed:
                    continue  # the switch must matter: acting on the first value ends elsewhere
                [(key, old, new)] = changes
                task.generator["switched"] = {key: [old, new]}
                self.used.add(pooled.template.name)
                return Turn(kind="switch", message=_switch_message(draft.query, pair, self.rng), tasks=[task])
        return None

    def _compound(self) -> Turn | None:
        a = self._take(lambda p: True)
        if a is None:
            return None
        self.state.apply([a[1]])  # the second is certified after the first
        b = self._take(lambda p: True)
        if b is None or _keys(a[1].expected_diff) & _keys(b[1].expected_diff):
            return None
        message = self.rng.choice(COMPOUNDS).format(a=a[1].query, b=b[1].query)
        return Turn(kind="compound", message=message, tasks=[a[1], b[1]])

    def _chained(self) -> Turn | None:
        """Two requests, the second using the first's result: an entity it created, named by
        description, or changes it made that move the second's answer (a few first parts tried)."""
        before = self.state.snapshot("before.db")
        start, used = len(self.state.applied), set(self.used)
        tried: set[str] = set()
        for _ in range(CHAIN_TRIES.get(self.domain_name, 3)):
            a = self._take(lambda p: p.template.name not in tried)
            if a is None:
                return None
            tried.add(a[0].template.name)
            turn = self._chained_after(a[1], before)
            if turn is not None:
                parts = turn.tasks[0].generator["parts"]
                self.used = used | {str(part.get("template")) for part in parts}
                return turn
            self.state.back_to(start)
            self.used = used | tried
        return None

    def _chained_after(self, first: Task, before: Path) -> Turn | None:
        made = [m for m in _made_by(first, len(self.turns), 0, self.entities) if m.sole]
        # The second part's answer without the first: one draft of each unused template.
        seconds: list[PooledDraft] = []
        for pooled in self._unused():
            if len(seconds) < 12 and all(p.template is not pooled.template for p in seconds):
                seconds.append(pooled)
        alone = {id(pooled): self._public_diff(pooled, before) for pooled in seconds}
        self.state.apply([first])
        for entity in made:
            noun = self.entities[entity.table][1]
            found = self._refer(entity.table, entity.name, self.rng.choice(THE_NEW).format(noun=noun), independent=False)
            if found is not None:
                turn = self._joined(first, *found, "entity", before)
                if turn is not None:
                    return turn
        for pooled in seconds:
            after = self._public_diff(pooled, self.state.path)
            if after is None or len(after) < MIN_ROWS:
                continue
            without = alone[id(pooled)]
            if without is not None and grade(after, without, self.schema).passed:
                continue  # the first part does not move the second's answer
            taken = self._certified(pooled, independent=False)
            turn = self._joined(first, taken, taken.query, "data", before) if taken is not None else None
            if turn is not None:
                return turn
        return None

    def _reference(self) -> Turn | None:
        return self._refers_back(near=True)

    def _long_range(self) -> Turn | None:
        return self._refers_back(near=False)

    def _refers_back(self, near: bool) -> Turn | None:
        """A request naming an earlier turn's result (an entity it made) or a value it stated by
        description: the previous turn's (`near`), or one two or more turns back."""
        position = len(self.turns)
        kind: Kind = "reference" if near else "long_range"
        made = [m for m in self.made if (m.turn == position - 1) == near]
        for entity in self.rng.sample(made, len(made)):
            description = self._entity_description(entity, position)
            if description is None:
                continue
            found = self._refer(entity.table, entity.name, description, independent=False, about=entity)
            if found is not None:
                task, message = found
                task.generator["refers"] = {"turn": entity.turn, "entity": entity.table, **task.generator["refers"]}
                return Turn(kind=kind, message=message, tasks=[task], refers_to=entity.turn)
        said = [s for s in self.said if (s.turn == position - 1) == near]
        for value in self.rng.sample(said, len(said)):
            where = _since(value.turn, position)
            alike = [s for s in self.said if _category(s) == _category(value)]
            if sum(s.turn == value.turn for s in alike) != 1 or (where == EARLIER and len(alike) != 1):
                continue  # "the same note as in my first request" must pick out one value
            if _category(value) == "date" and _dates_written(self.turns[value.turn].message) != 1:
                continue  # a date the template writes itself would make "the same date" two
            found = self._refer_value(value, where)
            if found is not None:
                task, message = found
                task.generator["refers"] = {"turn": value.turn, **task.generator["refers"]}
                return Turn(kind=kind, message=message, tasks=[task], refers_to=value.turn)
        return None

    # -- the parts ---------------------------------------------------------------------------

    def _unused(self) -> list[PooledDraft]:
        return [p for p in self.drafts if p.template.name not in self.used]

    def _template(self, task: Task) -> Template | None:
        name = task.generator.get("template")
        return next((p.template for p in self.drafts if p.template.name == name), None)

    def _take(self, accept: Callable[[PooledDraft], bool], tries: int = 6) -> tuple[PooledDraft, Task] | None:
        """The first draft that `accept`s and certifies on the state (at most `tries` certifications)."""
        for pooled in self.drafts:
            if tries <= 0:
                return None
            if pooled.template.name in self.used or not accept(pooled):
                continue
            tries -= 1
            task = self._certified(pooled)
            if task is not None:
                return pooled, task
        return None

    def _certified(self, pooled: PooledDraft, independent: bool = True) -> Task | None:
        """The draft as a task certified on the state (and, if `independent`, independent of it)."""
        draft, template = pooled.draft, pooled.template
        try:
            sql = run_steps(self.domain_name, draft.actor, draft.steps, world=self.state.path)
            if len(sql.diff) < MIN_ROWS:
                return None
            cert = certify(template, self.domain_name, self.state.path, draft, sql.diff)
            again = run_steps(self.domain_name, draft.actor, cert.reference, world=self.state.path)
            if independent:
                untouched = run_public(template, self.domain_name, self.state.world, draft.actor, draft.stated)
                if not grade(cert.diff, untouched.diff, self.schema).passed:
                    return None
        except (Rejected, ReferenceFailed, NotCertifiable, PublicSolverFailed):
            return None
        if not grade(cert.diff, again.diff, self.schema).passed:
            return None
        self.used.add(template.name)
        generator = {"template": template.name, "attempt": pooled.attempt, "stated": draft.stated, "bites": cert.bites}
        return certified_task("", self.domain_name, draft, cert, generator)

    def _variant(
        self, template: Template, origin: dict[str, Any], stated: dict[str, Any], query: str, independent: bool = True
    ) -> Task | None:
        """The template's request with other stated values, as a task certified on the state: the
        public solver's steps stand for the SQL generator's."""
        try:
            run = run_public(template, self.domain_name, self.state.path, self.actor, stated)
            if len(run.diff) < MIN_ROWS:
                return None
            draft = Draft(self.actor, query, run.steps, stated)
            cert = certify(template, self.domain_name, self.state.path, draft, run.diff)
            again = run_steps(self.domain_name, self.actor, cert.reference, world=self.state.path)
            if independent:
                untouched = run_public(template, self.domain_name, self.state.world, self.actor, stated)
                if not grade(cert.diff, untouched.diff, self.schema).passed:
                    return None
        except (Rejected, ReferenceFailed, NotCertifiable, PublicSolverFailed, TypeError, KeyError, IndexError, ValueError, AttributeError):
            return None
        if not grade(cert.diff, again.diff, self.schema).passed:
            return None
        generator = {"template": template.name, "attempt": origin.get("attempt"), "stated": stated, "bites": cert.bites}
        return certified_task("", self.domain_name, draft, cert, generator)

    def _described_bites(self, pooled: PooledDraft, task: Task) -> bool:
        """Whether the value a request describes matters: the draft with its own value instead (a
        wrong guess at what "the playlist you just made" is) ends elsewhere."""
        guessed = self._public_diff(pooled, self.state.path)
        return guessed is None or not grade(task.expected_diff, guessed, self.schema).passed

    def _public_diff(self, pooled: PooledDraft, world: Path) -> Diff | None:
        """The draft's public solver on `world`: its changes, or None when it cannot act there."""
        return self._public_run(pooled.template, world, pooled.draft.stated)

    def _public_run(self, template: Template, world: Path, stated: dict[str, Any]) -> Diff | None:
        """The template's public solver with `stated` on `world`: its changes, or None when it cannot act there."""
        try:
            return run_public(template, self.domain_name, world, self.actor, stated).diff
        except (NotCertifiable, PublicSolverFailed, TypeError, KeyError, IndexError, ValueError, AttributeError):
            return None

    def _changes(self, template: Template, stated: dict[str, Any], query: str, with_names: bool) -> list[list[tuple[str, Any, Any]]]:
        """Candidate value changes for a follow-up or a switch, in a seeded order: one stated value
        the task does not merely write (a condition, a target, a time) to another the template
        states elsewhere; with `with_names`, each also with a new name for what the request writes
        (a second playlist of the same name would be refused)."""
        clauses = template.clauses or {}
        names = [k for k in stated if clauses.get(k) == WRITTEN and k in FREE_VALUES and isinstance(stated[k], str)]
        keys = [k for k in stated if clauses.get(k) != WRITTEN and _swappable(stated[k]) and _written_once(query, stated[k]) is not None]
        self.rng.shuffle(keys)
        out: list[list[tuple[str, Any, Any]]] = []
        for key in keys:
            others = [v for v in self.values.get((template.name, key), []) if v != stated[key] and type(v) is type(stated[key])]
            for new in self.rng.sample(others, min(3, len(others))):
                change = [(key, stated[key], new)]
                out.append(change)
                if with_names and names:
                    renamed = self._new_name(template, names[0], {**stated, key: new})
                    if renamed is not None:
                        out.append([*change, (names[0], stated[names[0]], renamed)])
        return out

    def _new_name(self, template: Template, key: str, stated: dict[str, Any]) -> str | None:
        """Another name the template gives what it writes, fitting the changed request: one whose
        capitalised words naming other things of the request (a team, an artist) are all in it."""
        current = stated[key]
        bound = {w for (name, k), found in self.values.items() if name == template.name and k != key for v in found for w in _capitals(v)}
        words = {w for k, v in stated.items() if k != key for w in _capitals(v)}
        fresh = [
            v
            for v in self.values.get((template.name, key), [])
            if isinstance(v, str)
            and v != current
            and (_capitals(v) & bound) <= words
            and not any(_mentions(str(o), v) for o in stated.values())
        ]
        return self.rng.choice(fresh) if fresh else None

    def _refer(self, table: str, name: str, description: str, independent: bool, about: _Made | None = None) -> tuple[Task, str] | None:
        """A request of another template that names an entity of `table` (an existing one, in its
        draft), made to name this one instead, and said with `description` in place of its name."""
        column = self.entities[table][0]
        noun = self.entities[table][1]
        for pooled in self._unused():
            draft = pooled.draft
            keys = [
                k
                for k, v in draft.stated.items()
                if isinstance(v, str)
                and v != name
                and self.state.conn.execute(f"SELECT 1 FROM {table} WHERE {column} = ?", (v,)).fetchone()
            ]
            for key in keys:
                old = draft.stated[key]
                described = _describe_entity(draft.query, old, noun, description)
                if described is None or f"'{old}'" not in draft.query:
                    continue
                query = draft.query.replace(f"'{old}'", f"'{name}'")
                task = self._variant(pooled.template, {"attempt": pooled.attempt}, {**draft.stated, key: name}, query, independent)
                if task is None or not self._described_bites(pooled, task):
                    continue
                if (
                    about is not None
                    and (not about.sole or about.deleted_too)
                    and _mentions_row(task.expected_diff, self.schema, table, about.ident)
                ):
                    continue  # its id could differ in a correct trial: a later diff must not name it
                task.generator["refers"] = {"key": key, "draft_value": old}
                self.used.add(pooled.template.name)
                return task, described
        return None

    def _refer_value(self, said: _Said, where: str) -> tuple[Task, str] | None:
        """A request of another template stating the same key, made to take the earlier value, and
        said with "the same ... as in my first request" in its place."""
        for pooled in self._unused():
            draft = pooled.draft
            old = draft.stated.get(said.key)
            if old is None or old == said.value or type(old) is not type(said.value):
                continue
            noun = _category(said)
            same = f"the same {noun} {where}" if where == EARLIER else f"the same {noun} as {where}"
            described = _describe_value(draft.query, said.key, old, same)
            if described is None or _mentions(described, said.value):
                continue
            rewritten = _changed_query(draft.query, [(said.key, old, said.value)])
            if rewritten is None:
                continue
            task = self._variant(pooled.template, {"attempt": pooled.attempt}, {**draft.stated, said.key: said.value}, rewritten[0], False)
            if task is not None and self._described_bites(pooled, task):
                task.generator["refers"] = {"key": said.key, "draft_value": old}
                self.used.add(pooled.template.name)
                return task, described
        return None

    def _entity_description(self, entity: _Made, position: int) -> str | None:
        """How the user names an earlier turn's entity without its name: "the playlist you just
        made", "the playlist you made earlier", "the second of the two playlists you just made",
        "the first playlist you made today"; None when no such words pick it out."""
        _, noun, verb = self.entities[entity.table]
        same = [m for m in self.made if m.table == entity.table]
        if len(same) == 1:
            if entity.turn == position - 1:
                return f"the {noun} you just {verb}"
            return self.rng.choice((f"the {noun} you {verb} earlier", f"the {noun} you {verb} for me before"))
        if not all(m.sole for m in same):
            return None  # a request that made several: "the second one" would not be clear
        nth = ORDINALS[same.index(entity)] if same.index(entity) < len(ORDINALS) else None
        if nth is None:
            return None
        if entity.turn == position - 1 and all(m.turn == position - 1 for m in same):
            return f"the {nth} of the {len(same) if len(same) > 2 else 'two'} {noun}s you just {verb}"
        return f"the {nth} {noun} you {verb} today"

    def _joined(self, first: Task, second: Task, described: str, link: str, before: Path) -> Turn | None:
        """Two requests as one chained turn: one task whose steps are both parts' and whose
        expected diff is their net change from the turn's start; the second part done before the
        first (on the state without it) must end elsewhere."""
        offset = len(first.reference_solution)
        steps = [
            *first.reference_solution,
            *[Step(s.tool, remap_references(s.args, lambda i: i + offset)) for s in second.reference_solution],
        ]
        try:
            joined = run_steps(self.domain_name, self.actor, steps, world=before)
        except ReferenceFailed:
            return None
        if second_undoes_first(first.expected_diff, joined.diff, self.schema):
            return None  # a careful assistant would ask before undoing what the user just asked for
        steps = _created_as_references(steps, offset, joined.results, _created_ids(joined.diff, self.schema))
        stale = self._stale(second, before, first)
        if stale is not None and grade(joined.diff, stale, self.schema).passed:
            return None
        message = self.rng.choice(CHAINS).format(a=first.query, b=described)
        caps = set(first.capabilities) | set(second.capabilities) | ({"cross_step_dependency"} if link == "entity" else set())
        task = Task(
            id="",
            domain=self.domain_name,
            actor=self.actor,
            query=f"{first.query} Then: {second.query}",
            capabilities=[c for c in CAPABILITIES if c in caps],
            expected_diff=joined.diff,
            reference_solution=steps,
            generator={"link": link, "parts": [first.generator, second.generator]},
            stats=diff_stats(joined.diff),
            budget=TaskBudget(
                max_tool_calls=first.budget.get("max_tool_calls", 0) + second.budget.get("max_tool_calls", 0),
                max_turns=first.budget.get("max_turns", 0) + second.budget.get("max_turns", 0),
            ),
        )
        return Turn(kind="chained", message=message, tasks=[task])

    def _stale(self, second: Task, before: Path, first: Task) -> Diff | None:
        """The net change when the second part's answer is taken before the first part ran (its
        calls computed without the first's changes), then both are done: what an agent that does
        not wait for the first part's result ends with; None when that cannot be done at all."""
        template = self._template(second)
        stated = second.generator.get("stated")
        if template is None or not isinstance(stated, dict):
            return None
        try:
            early = run_public(template, self.domain_name, before, self.actor, stated)
            return run_steps(self.domain_name, self.actor, [*first.reference_solution, *early.steps], world=before).diff
        except (ReferenceFailed, NotCertifiable, PublicSolverFailed, TypeError, KeyError, IndexError, ValueError, AttributeError):
            return None

    def _chat_line(self) -> str:
        """A chat line: the domain's, filled with the actor's data; one about an earlier turn's
        entity; or a general one."""
        choice = self.rng.random()
        if self.made and choice < 0.2:
            entity = self.rng.choice(self.made)
            _, noun, verb = self.entities[entity.table]
            return self.rng.choice(ENTITY_CHATS).format(noun=noun, verb=verb)
        lines: tuple[tuple[str, tuple[str, ...]], ...] = _domain_data(self.domain_name, "SCENARIO_CHATS", ())
        if lines and choice < 0.75:
            sql, phrasings = self.rng.choice(lines)
            rows = [
                dict(zip([d[0] for d in cur.description], row))
                for cur in [self.state.conn.execute(sql, {"actor": self.actor})]
                for row in cur
            ]
            if rows:
                return self.rng.choice(phrasings).format(**self.rng.choice(rows))
        return self.rng.choice(CHATS)

    def _draft_task(self, pooled: PooledDraft) -> Task:
        """A draft as a task, enough for `ask_variant` to tell whether a value can be hidden (its
        expected diff is the SQL generator's, on the untouched world)."""
        draft = pooled.draft
        try:
            diff = run_steps(self.domain_name, draft.actor, draft.steps).diff
        except ReferenceFailed:
            diff = Diff([])
        return Task("draft", self.domain_name, draft.actor, draft.query, [], diff, draft.steps, {"stated": draft.stated})

    def _commit(self, turn: Turn) -> None:
        """Number the turn's tasks, apply them to the state, and record what they made and said."""
        position = len(self.turns)
        for task in turn.tasks:
            task.id = f"{self.sid}-t{sum(len(t.tasks) for t in self.turns) + turn.tasks.index(task) + 1}"
        self.state.apply(turn.tasks)
        for part, task in enumerate(turn.tasks):
            self.made.extend(_made_by(task, position, part, self.entities))
        for task in turn.tasks:
            parts = task.generator.get("parts")
            for generator in parts if isinstance(parts, list) else [task.generator]:
                stated = generator.get("stated")
                if isinstance(stated, dict):
                    self.said.extend(_Said(position, k, v) for k, v in stated.items() if _describable(k, v))
        self.turns.append(turn)


def _keys(diff: Diff) -> set[tuple[str, str]]:
    return {(c.table, repr(sorted(c.key.items()))) for c in diff}


def generate_scenarios(domain_name: str, count: int, seed: int, on_scenario: Callable[[Scenario], None] | None = None) -> list[Scenario]:
    """`count` scenarios of the domain (fewer when its actors run out)."""
    domain = get_domain(domain_name)
    world = ensure_world(domain)
    record = TaskWorld(seed=domain.default_seed, fingerprint=world_id(domain, domain.default_seed))
    inspect = scratch_copy(world)
    try:
        pool = draft_pool(domain_name, seed, inspect, ATTEMPTS.get(domain_name, 60))
    finally:
        inspect.close()
    values = stated_values(pool)
    actors = sorted(pool, key=lambda a: (-len({p.template.name for p in pool[a]}), a))
    made: list[Scenario] = []
    kinds: Counter[str] = Counter()
    patterns: Counter[tuple[str, ...]] = Counter()
    with tempfile.TemporaryDirectory(prefix="ebench-scenarios-") as folder:
        for actor in actors:
            if len(made) >= count:
                break
            number = len(made) + 1
            sid = f"{domain_name}-s{number:03d}"
            cap = max(1, number // PATTERN_SHARE)  # with 40 scenarios, no pattern more than 4 times
            scenario = _build(domain_name, seed, sid, actor, pool[actor], world, Path(folder), values, kinds, patterns, cap)
            if scenario is None:
                continue
            scenario.world = record.copy()
            scenario.generator = {"seed": seed, "pattern": scenario.kinds}
            for turn in scenario.turns:
                for task in turn.tasks:
                    task.world = record.copy()
            made.append(scenario)
            kinds.update(scenario.kinds)
            patterns[tuple(scenario.kinds)] += 1
            if on_scenario:
                on_scenario(scenario)
    return made


def _build(
    domain_name: str,
    seed: int,
    sid: str,
    actor: int,
    drafts: list[PooledDraft],
    world: Path,
    folder: Path,
    values: dict[tuple[str, str], list[Any]],
    kinds: Counter[str],
    patterns: Counter[tuple[str, ...]],
    cap: int,
) -> Scenario | None:
    """One scenario for `actor`: at each position, the kinds the domain has used least so far
    first (a seeded tie-break), the first that can be filled; None when a position cannot be."""
    state = _State(domain_name, actor, world, folder)
    rng = Random(f"{domain_name}:{seed}:scenario:{actor}:{sid}")
    shuffled = list(drafts)
    rng.shuffle(shuffled)
    builder = _Builder(domain_name, sid, actor, shuffled, state, rng, values)
    try:
        for position in range(TURNS):
            ties = {kind: rng.random() for kind in KINDS}
            so_far = tuple(t.kind for t in builder.turns)
            order = sorted(KINDS, key=lambda k: (k in so_far, kinds[k], ties[k]))  # a repeat only when nothing else fits
            for kind in order:
                if not builder.allowed(kind):
                    continue
                if position == TURNS - 1 and patterns[(*so_far, kind)] >= cap:
                    continue
                if builder.add(kind):
                    break
            else:
                return None
        return Scenario(id=sid, domain=domain_name, actor=actor, turns=builder.turns)
    finally:
        state.close()


def write_scenarios(scenarios: list[Scenario], out: Path) -> None:
    """Write each scenario to out/<domain>/<id>.json; a domain's older files there are replaced."""
    for name in {scenario.domain for scenario in scenarios}:
        for old in (out / name).glob("*.json"):
            old.unlink()
    for scenario in scenarios:
        path = out / scenario.domain / f"{scenario.id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scenario.to_json(), encoding="utf-8")
