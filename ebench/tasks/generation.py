"""Task generation: inspect -> decide -> modify -> summarise, with programs instead of a model.

A `Template` has two halves. Its SQL generator (`draft`) looks at the world with SQL
(privileged: only generators may), picks an actor and targets with a seeded RNG, writes the
expected writes with the ids it found, and phrases the request. Its public solver (`solve`, see
public.py) gets only what the query states and reaches the answer through the public tools.

`generate` keeps a draft only when it is certified (certify.py): both halves reach the same end
state, every stated condition bites, no reading the wording allows changes the answer, the
public solution (reads and writes) replays on another fresh copy, and the lazy solvers of
`ebench tasks audit` (the reference without its last write, or as another actor) fail. It also
rejects drafts that change fewer than 3 rows, state a hidden value, or repeat an accepted (or
shipped) task's query, diff, solution, phrasing skeleton (more than twice) or target (more than
twice per template). Every rejection is counted by reason.

Everything is seeded: the same domain, seed and count give the same tasks, byte for byte.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any, TypeGuard

from ..engine.domain_registry import get_domain
from ..engine.world import ensure_world, scratch_copy, world_id
from .certify import Certificate, Rejected, certify
from .diff import Diff
from .grading import grade, signature
from .reference import DEFAULT_LIMITS, ReferenceFailed, run_steps
from .shortcuts import reference_shortcuts
from .skeletons import skeleton_paraphrases
from .spec import Step, Task, TaskBudget, TaskWorld, diff_stats
from .template_api import DATES_AND_TIMES, NUMBER, Draft, GenContext, NoTarget, Template, leaked, query_key, templates_for
from .vocabulary import open_terms

MIN_CHANGED_ROWS = 3
MAX_PER_TEMPLATE = 6  # tasks per template in one generated set
MAX_PER_SKELETON = 2  # tasks per phrasing skeleton
MAX_PER_TARGET = 2  # tasks per (template, target entity)
BUDGET_FACTOR = 3  # a task's budget: at least 3x its public solution's length


@dataclass
class GenerationReport:
    tasks: list[Task]
    rejected: Counter[str] = field(default_factory=Counter)
    attempts: int = 0


def computed_from_answer(query: str, diff: Diff, reference: list[Step]) -> list[float]:
    """Numbers the query states that the expected answer computes (a balance left after the
    purchases, a total of the changed values): stating one gives the answer away, like a leaked
    id. A number the task itself writes (a capacity the user sets) is the user's, not computed."""
    stated = {float(n) for n in NUMBER.findall(DATES_AND_TIMES.sub(" ", query))}
    written = {float(v) for step in reference for v in _numbers_in(step.args)}
    computed: set[float] = set()
    sums: dict[tuple[str, str], float] = {}
    for change in diff:
        for column, new in (change.new or {}).items():
            if not _is_number(new):
                continue
            if change.op == "update":
                computed.add(float(new))
                old = (change.old or {}).get(column)
                if _is_number(old):
                    computed.add(abs(float(old) - float(new)))
            elif change.op == "insert":
                sums[(change.table, column)] = sums.get((change.table, column), 0) + new
    computed.update(float(v) for v in sums.values())
    return sorted(n for n in stated & computed if abs(n) >= 20 and n not in written)


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers_in(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _numbers_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _numbers_in(item)
    elif _is_number(value):
        yield value


def budget_for(reference: list[Step]) -> TaskBudget:
    """Limits a correct solver can finish within: 3x the public solution, never below the defaults."""
    calls = BUDGET_FACTOR * len(reference)
    return TaskBudget(max_tool_calls=max(DEFAULT_LIMITS["max_tool_calls"], calls), max_turns=max(DEFAULT_LIMITS["max_turns"], calls))


def solution_signature(steps: list[Step]) -> str:
    return json.dumps([s.to_dict() for s in steps], sort_keys=True)


@dataclass
class SeenTasks:
    """What accepted (and shipped) tasks already use."""

    queries: set[str] = field(default_factory=set)
    diffs: set[str] = field(default_factory=set)
    solutions: set[str] = field(default_factory=set)
    skeletons: Counter[tuple[str, int | None]] = field(default_factory=Counter)  # (template, phrasing)
    targets: Counter[tuple[str, Any]] = field(default_factory=Counter)  # (template, hashable target)
    per_template: Counter[str] = field(default_factory=Counter)

    def add(self, task: Task, schema: Any) -> None:
        self.queries.add(query_key(task.query))
        self.diffs.add(signature(task.expected_diff, schema))
        self.solutions.add(solution_signature(task.reference_solution))


def generate(
    domain_name: str,
    count: int,
    seed: int,
    *,
    templates: list[Template] | None = None,
    id_prefix: str | None = None,
    max_attempts_per_task: int = 40,
    max_per_template: int = MAX_PER_TEMPLATE,
    avoid: Iterable[Task] = (),
    world_seed: int | None = None,
    on_task: Callable[[Task], None] | None = None,
    accept: Callable[[Task], str | None] | None = None,
) -> GenerationReport:
    """Generate `count` certified tasks. Templates take turns, each up to `max_per_template` tasks.
    `avoid`: tasks (the shipped suite) whose queries, diffs and solutions must not be repeated.
    `accept`: a last check of a certified task (its difficulty, say): a reason refuses it, counted."""
    domain = get_domain(domain_name)
    templates = templates if templates is not None else templates_for(domain_name)
    if not templates:
        raise ValueError(f"no task templates for the {domain_name} domain")
    world_seed = domain.default_seed if world_seed is None else world_seed
    world = ensure_world(domain, world_seed)
    world_record = TaskWorld(seed=world_seed, fingerprint=world_id(domain, world_seed))
    inspect = scratch_copy(world)  # the generator's privileged view; never written
    report = GenerationReport([])
    seen = SeenTasks()
    for task in avoid:
        seen.add(task, domain.schema)
    prefix = id_prefix or domain_name
    try:
        while len(report.tasks) < count and report.attempts < count * max_attempts_per_task:
            open_templates = [t for t in templates if seen.per_template[t.name] < max_per_template]
            if not open_templates:
                break
            template = open_templates[report.attempts % len(open_templates)]
            rng = Random(f"{domain_name}:{seed}:{template.name}:{report.attempts}")
            report.attempts += 1
            used_up = [i for i in range(len(template.phrasings)) if seen.skeletons[(template.name, i)] >= MAX_PER_SKELETON]
            ctx = GenContext(domain_name, inspect, rng, used_up)
            try:
                draft = template.draft(ctx)
                cert = _vet(domain_name, world, template, draft, seen)
            except NoTarget:
                report.rejected["no target"] += 1
                continue
            except Rejected as exc:
                report.rejected[str(exc)] += 1
                continue
            generator = {
                "template": template.name,
                "seed": seed,
                "attempt": report.attempts - 1,
                "phrasing": ctx.phrasing,
                "stated": draft.stated,
                "bites": cert.bites,
                "targets": [_jsonable(t) for t in draft.targets],
            }
            task = certified_task(f"{prefix}-{len(report.tasks) + 1:04d}", domain_name, draft, cert, generator, world_record)
            refused = accept(task) if accept is not None else None
            if refused:
                report.rejected[refused] += 1
                continue
            task.paraphrases = skeleton_paraphrases(task, template, inspect)  # stored for --perturb intent:paraphrase
            seen.add(task, domain.schema)
            seen.skeletons[(template.name, ctx.phrasing)] += 1
            for target in draft.targets:
                seen.targets[(template.name, _hashable(target))] += 1
            seen.per_template[template.name] += 1
            report.tasks.append(task)
            if on_task:
                on_task(task)
    finally:
        inspect.close()
    return report


def certified_task(
    task_id: str, domain_name: str, draft: Draft, cert: Certificate, generator: dict[str, Any], world: TaskWorld | None = None
) -> Task:
    """A certified draft as a task: the certificate's changes, solution and capabilities, and a
    budget a correct solver finishes within."""
    return Task(
        id=task_id,
        domain=domain_name,
        actor=draft.actor,
        query=draft.query,
        capabilities=cert.capabilities,
        expected_diff=cert.diff,
        reference_solution=cert.reference,
        generator=generator,
        stats=diff_stats(cert.diff),
        world=TaskWorld(**world) if world else TaskWorld(),
        budget=budget_for(cert.reference),
    )


def _jsonable(value: Any) -> Any:
    return [_jsonable(v) for v in value] if isinstance(value, (list, tuple)) else value


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, (list, tuple)) else value


def _vet(domain_name: str, world: Path, template: Template, draft: Draft, seen: SeenTasks) -> Certificate:
    """The rejection rules, cheapest first; raises Rejected with the counted reason."""
    schema = get_domain(domain_name).schema
    if leaked(draft.query, draft.hidden):
        raise Rejected("query leaks a hidden value")
    undecided = open_terms(domain_name, draft.query, world)
    if undecided:
        raise Rejected(f"query leaves a term open: {undecided[0]}")
    if query_key(draft.query) in seen.queries:
        raise Rejected("duplicate query")
    if any(seen.targets[(template.name, _hashable(t))] >= MAX_PER_TARGET for t in draft.targets):
        raise Rejected("target used by two tasks of this template")
    try:
        sql = run_steps(domain_name, draft.actor, draft.steps, world=world)
    except ReferenceFailed:
        raise Rejected("SQL generator's writes refused") from None
    if len(sql.diff) == 0:
        raise Rejected("no change")
    if len(sql.diff) < MIN_CHANGED_ROWS:
        raise Rejected(f"fewer than {MIN_CHANGED_ROWS} changed rows")
    if signature(sql.diff, schema) in seen.diffs:
        raise Rejected("duplicate diff")
    cert = certify(template, domain_name, world, draft, sql.diff)
    if computed_from_answer(draft.query, cert.diff, cert.reference):
        raise Rejected("query states a number computed from the answer")
    if solution_signature(cert.reference) in seen.solutions:
        raise Rejected("duplicate reference solution")
    try:
        again = run_steps(domain_name, draft.actor, cert.reference, world=world)
    except ReferenceFailed:
        raise Rejected("public solution does not replay") from None
    if not grade(cert.diff, again.diff, schema).passed:
        raise Rejected("public solution does not reproduce its diff")
    for family, _, diff in reference_shortcuts(domain_name, world, draft.actor, cert.reference):
        if grade(cert.diff, diff, schema).passed:
            raise Rejected(f"a shortcut passes: {family}")
    return cert
