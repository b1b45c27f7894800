"""Building scenarios from the task templates, certified turn by turn (see scenarios.py).

1. Draft pool: every template drafts many times with seeded RNGs (cheap: SQL only); drafts that
   leak a hidden value are dropped. Drafts are grouped by actor: a scenario is one actor's.
2. For each actor, in a fixed order, the turn kinds of the next pattern are filled one by one on
   a private copy of the world that carries the expected changes of the turns before:
   - a task is certified (certify.py: the public solver agrees with the SQL generator, every
     condition bites, no reading changes the answer) on that state, and must not depend on it:
     its public solver on the untouched world reaches the same changes (so a failed earlier turn
     does not move a later turn's answer); its reference solution replays on the state;
   - a follow-up is a draft of the previous turn's template whose stated values differ in one
     value only, shown in both requests: "Now the same, but for Rock instead of Jazz.";
   - a compound turn joins two tasks of different templates that change different rows;
   - a clarify turn hides the request's freely chosen value (asking.py) in the user profile,
     silently: its request simply lacks the value (it does not announce the gap);
   - a chat turn is a message that needs no change to the world.
   An actor whose drafts cannot fill the pattern is passed over.

Everything is seeded: the same domain, seed and count give the same scenarios byte for byte, and
the first k scenarios of a larger count are those of count k.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from random import Random
from typing import Any

from ..domains import get_domain
from ..domains.engine.world import ensure_world, scratch_copy, world_id
from .asking import ask_variant
from .certify import Rejected, certify, run_public
from .diff import Diff
from .generation import Draft, GenContext, NoTarget, Template, certified_task, leaked, templates_for
from .grading import grade
from .public import NotCertifiable, PublicSolverFailed
from .reference import ReferenceFailed, run_steps
from .scenarios import Scenario, Turn
from .spec import Task
from .template_helpers import pretty_day

PATTERNS = (
    ("task", "follow_up", "compound", "clarify"),
    ("clarify", "task", "follow_up", "chat"),
    ("compound", "task", "follow_up", "clarify"),
    ("task", "chat", "clarify", "compound"),
    ("clarify", "compound", "chat", "task"),
)
ATTEMPTS = {"music": 100, "meeting": 160, "moba": 120}  # drafts per template in the pool
MIN_ROWS = 2
FOLLOW_UPS = (
    "Now do the same again, but with {changes}.",
    "Great. Same thing once more, this time with {changes}.",
    "Could you repeat that, with {changes}?",
)
CHATS = (
    "Thanks, that's all I needed for that one.",
    "Perfect, thank you!",
    "Which account am I signed in as right now?",
    "What's today's date, by the way?",
)
COMPOUND = "Two things. First: {a} Second: {b}"


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


class _State:
    """The world as the scenario's earlier turns leave it: a private copy, and a file of it that
    the certifier copies from."""

    def __init__(self, world: Path, folder: Path) -> None:
        self.world = world
        self.conn = scratch_copy(world)
        self.path = folder / "state.db"
        self._save()

    def _save(self) -> None:
        self.path.unlink(missing_ok=True)
        target = sqlite3.connect(self.path)
        try:
            self.conn.backup(target)
        finally:
            target.close()

    def apply(self, domain_name: str, actor: int, tasks: list[Task]) -> None:
        for task in tasks:
            run_steps(domain_name, actor, task.reference_solution, self.conn)
        self._save()

    def close(self) -> None:
        self.conn.close()


def _certified(domain_name: str, state: _State, pooled: PooledDraft, task_id: str) -> Task | None:
    """The draft as a task certified on the state (and independent of it), or None."""
    draft, template = pooled.draft, pooled.template
    schema = get_domain(domain_name).schema
    try:
        sql = run_steps(domain_name, draft.actor, draft.steps, world=state.path)
        if len(sql.diff) < MIN_ROWS:
            return None
        cert = certify(template, domain_name, state.path, draft, sql.diff)
        untouched = run_public(template, domain_name, state.world, draft.actor, draft.stated)
        again = run_steps(domain_name, draft.actor, cert.reference, world=state.path)
    except (Rejected, ReferenceFailed, NotCertifiable, PublicSolverFailed):
        return None
    if not grade(cert.diff, untouched.diff, schema).passed or not grade(cert.diff, again.diff, schema).passed:
        return None
    generator = {"template": template.name, "attempt": pooled.attempt, "stated": draft.stated, "bites": cert.bites}
    return certified_task(task_id, domain_name, draft, cert, generator)


def _keys(diff: Diff) -> set[tuple[str, str]]:
    return {(c.table, repr(sorted(c.key.items()))) for c in diff}


MAX_SWAPS = 2  # values a follow-up changes


_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _as_written(value: Any) -> tuple[Callable[[Any], str], ...]:
    """The ways a request writes a stated value: as it is, and a date as a person writes it (with
    its weekday when the request gives one, so a follow-up moves both)."""
    if isinstance(value, str) and _ISO_DAY.match(value):
        return (_weekday_day, pretty_day, str)
    return (str,)


def _weekday_day(value: str) -> str:
    return f"{datetime.strptime(value, '%Y-%m-%d'):%A}, {pretty_day(value)}"


def _swaps(before: dict[str, Any], after: dict[str, Any], query: str) -> list[tuple[str, str]] | None:
    """The stated values a follow-up changes (one or two), each as the earlier request writes it,
    once, and none inside another; None when the two drafts cannot be told apart that way."""
    if set(before) != set(after):
        return None
    changed = [k for k in before if before[k] != after[k]]
    if not 1 <= len(changed) <= MAX_SWAPS:
        return None
    pairs = []
    for key in changed:
        old, new = before[key], after[key]
        if not isinstance(old, (str, int)) or not isinstance(new, (str, int)) or isinstance(old, bool) or isinstance(new, bool):
            return None
        shown = next(((write(old), write(new)) for write in _as_written(old) if query.count(write(old)) == 1), None)
        if shown is None:
            return None
        pairs.append(shown)
    texts = [text for pair in pairs for text in pair]
    if any(a in b for i, a in enumerate(texts) for j, b in enumerate(texts) if i != j):
        return None
    return pairs


def _follow_up_message(pairs: list[tuple[str, str]], query: str, rng: Random) -> str:
    """ "Now the same, but with 'Rock' instead of 'Jazz'": a value quoted in the request is quoted here too."""
    changes = []
    for old, new in pairs:
        quote = "'" if "'" + old + "'" in query else ""
        changes.append(f"{quote}{new}{quote} instead of {quote}{old}{quote}")
    return rng.choice(FOLLOW_UPS).format(changes=" and ".join(changes))


class _Builder:
    def __init__(self, domain_name: str, sid: str, actor: int, drafts: list[PooledDraft], state: _State, rng: Random) -> None:
        self.domain_name, self.sid, self.actor = domain_name, sid, actor
        self.drafts = list(drafts)
        self.state = state
        self.rng = rng
        self.used: set[str] = set()  # templates used by this scenario
        self.count = 0
        self.turns: list[Turn] = []
        self.last: PooledDraft | None = None  # the last task turn's draft: a follow-up takes its template

    def _take(self, accept: Callable[[PooledDraft], bool], tries: int = 6) -> tuple[PooledDraft, Task] | None:
        """The first draft that `accept`s and certifies on the state (at most `tries` certifications)."""
        for pooled in self.drafts:
            if tries <= 0:
                return None
            if pooled.template.name in self.used or not accept(pooled):
                continue
            tries -= 1
            task = _certified(self.domain_name, self.state, pooled, f"{self.sid}-t{self.count + 1}")
            if task is not None:
                self.count += 1
                self.used.add(pooled.template.name)
                return pooled, task
        return None

    def _partnered(self, pooled: PooledDraft) -> bool:
        """Another draft of the same template that a follow-up to this one can be made of."""
        stated, query = pooled.draft.stated, pooled.draft.query
        return any(
            other is not pooled and other.template is pooled.template and _swaps(stated, other.draft.stated, query) is not None
            for other in self.drafts
        )

    def add(self, kind: str, next_kind: str | None = None) -> bool:
        if kind == "chat":
            self.turns.append(Turn("chat", self.rng.choice(CHATS)))
            return True
        if kind == "task":
            taken = self._take(self._partnered if next_kind == "follow_up" else lambda p: True)
            if taken is None:
                return False
            self._commit(Turn("task", taken[1].query, [taken[1]]))
            self.last = taken[0]
            return True
        if kind == "clarify":
            taken = self._take(lambda p: ask_variant(self._draft_task(p), announce=False) is not None)
            if taken is None:
                return False
            variant = ask_variant(taken[1], announce=False)
            if variant is None:
                return False
            variant.id = taken[1].id
            variant.generator = {k: v for k, v in variant.generator.items() if k not in ("original", "variant")}
            self._commit(Turn("clarify", variant.query, [variant]))
            return True
        if kind == "follow_up":
            before = self.last
            if before is None or not self.turns or self.turns[-1].kind != "task":
                return False
            first = self.turns[-1].tasks[0]
            stated = first.generator["stated"]
            self.used.discard(before.template.name)  # the same template, with one or two values changed
            taken = self._take(
                lambda p: p.template is before.template and _swaps(stated, p.draft.stated, first.query) is not None, tries=10
            )
            self.used.add(before.template.name)
            if taken is None:
                return False
            pairs = _swaps(stated, taken[0].draft.stated, first.query)
            assert pairs is not None
            self._commit(Turn("follow_up", _follow_up_message(pairs, first.query, self.rng), [taken[1]]))
            return True
        if kind == "compound":
            a = self._take(lambda p: True)
            if a is None:
                return False
            self.state.apply(self.domain_name, self.actor, [a[1]])  # the second is certified after the first
            b = self._take(lambda p: True)
            if b is None or _keys(a[1].expected_diff) & _keys(b[1].expected_diff):
                return False
            self.state.apply(self.domain_name, self.actor, [b[1]])
            self.turns.append(Turn("compound", COMPOUND.format(a=a[1].query, b=b[1].query), [a[1], b[1]]))
            return True
        raise ValueError(kind)

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
        self.state.apply(self.domain_name, self.actor, turn.tasks)
        self.turns.append(turn)


def generate_scenarios(domain_name: str, count: int, seed: int, on_scenario: Callable[[Scenario], None] | None = None) -> list[Scenario]:
    """`count` scenarios of the domain (fewer when its actors run out)."""
    domain = get_domain(domain_name)
    world = ensure_world(domain)
    record = {"seed": domain.default_seed, "fingerprint": world_id(domain, domain.default_seed)}
    inspect = scratch_copy(world)
    try:
        pool = draft_pool(domain_name, seed, inspect, ATTEMPTS.get(domain_name, 60))
    finally:
        inspect.close()
    actors = sorted(pool, key=lambda a: (-len({p.template.name for p in pool[a]}), a))
    made: list[Scenario] = []
    with tempfile.TemporaryDirectory(prefix="ebench-scenarios-") as folder:
        for actor in actors:
            if len(made) >= count:
                break
            number = len(made) + 1
            sid = f"{domain_name}-s{number:03d}"
            # The patterns take turns; an actor whose drafts cannot fill the next one tries the others.
            for shift in range(len(PATTERNS)):
                pattern = PATTERNS[(number - 1 + shift) % len(PATTERNS)]
                scenario = _build(domain_name, seed, sid, actor, pool[actor], pattern, world, Path(folder))
                if scenario is not None:
                    scenario.world = dict(record)
                    scenario.generator = {"seed": seed, "pattern": list(pattern)}
                    for turn in scenario.turns:
                        for task in turn.tasks:
                            task.world = dict(record)
                    made.append(scenario)
                    if on_scenario:
                        on_scenario(scenario)
                    break
    return made


def _build(
    domain_name: str, seed: int, sid: str, actor: int, drafts: list[PooledDraft], pattern: tuple[str, ...], world: Path, folder: Path
) -> Scenario | None:
    state = _State(world, folder)
    rng = Random(f"{domain_name}:{seed}:scenario:{actor}:{','.join(pattern)}")
    shuffled = list(drafts)
    rng.shuffle(shuffled)
    builder = _Builder(domain_name, sid, actor, shuffled, state, rng)
    try:
        for kind, next_kind in zip(pattern, [*pattern[1:], None]):
            if not builder.add(kind, next_kind):
                return None
        return Scenario(sid, domain_name, actor, builder.turns)
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
