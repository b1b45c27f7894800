"""Scenarios: conversations of several user turns over one world copy (WildToolBench-style).

A scenario is one actor's conversation: an ordered list of turns, each one of

- `task`: a request, graded like any task (its expected diff);
- `follow_up`: a request whose meaning depends on the turn before ("now the same for Rock
  instead of Jazz"); its task holds the full request it stands for;
- `compound`: one message holding two independent requests; the turn's expected diff is both
  tasks' (which touch different rows, so it is their union);
- `chained`: one message holding two requests, the second using the first's result (an entity
  it creates, named by description, or changes that move the second's answer); one task whose
  expected diff is the net change of both;
- `reference` / `long_range`: a request that names an earlier turn's result or value by
  description ("the playlist you just made", "the same note as in my first request"): the turn
  before's (`reference`) or one two or more turns back (`long_range`); `refers_to` says which;
- `switch`: a request whose user changes a value mid-request ("... actually, make that Blues");
  graded on the new value;
- `clarify`: a request that leaves a value out (asking.py), silently: the user holds it in the
  turn's user profile and gives it when asked; acting before asking fails the turn;
- `chat`: a message that needs no change to the world; the turn passes when nothing changed
  (reads are allowed: an agent may look up the account it answers about).

Each task-bearing turn embeds its tasks (certified by scenario_generation.py on the world as the
earlier turns' expected changes leave it). Grading: after each turn, the changes made since the
previous turn ended are compared with the turn's expected diff; a failed turn does not stop the
scenario; the scenario passes (session accuracy) when every turn passed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .diff import Diff
from .grading import Grade, grade
from .spec import Step, Task, TaskFileError, UserFact, parse_task, remap_references

SCENARIO_FORMAT = "ebench-scenario/1"
SCENARIOS_VERSION = "scenarios-3"
KINDS = ("task", "follow_up", "compound", "chained", "reference", "long_range", "switch", "clarify", "chat")
TASK_COUNT = {"task": 1, "follow_up": 1, "compound": 2, "chained": 1, "reference": 1, "long_range": 1, "switch": 1, "clarify": 1, "chat": 0}
REFERRING = ("follow_up", "reference", "long_range")  # kinds whose turn names the earlier turn it depends on
SCENARIOS_DIR = Path(__file__).resolve().parent / "splits" / "scenarios"
_ID = re.compile(r"^[a-z][a-z0-9_-]{2,80}$")


@dataclass
class Turn:
    kind: str
    message: str  # what the user says
    tasks: list[Task] = field(default_factory=list)
    refers_to: int | None = None  # the earlier turn (0-based) a follow-up or reference depends on

    @property
    def expected_diff(self) -> Diff:
        return Diff([change for task in self.tasks for change in task.expected_diff])

    @property
    def user_profile(self) -> list[UserFact]:
        return [fact for task in self.tasks for fact in task.user_profile]

    def reference_steps(self, offset: int = 0) -> list[Step]:
        """The turn's tasks' reference solutions one after the other, each `$from` reference moved
        to its step's place in that list (plus `offset`: where the list starts in a longer one)."""
        steps: list[Step] = []
        for task in self.tasks:
            shift = offset + len(steps)

            def moved(index: int, by: int = shift) -> int:
                return index + by

            steps.extend(Step(step.tool, remap_references(step.args, moved)) for step in task.reference_solution)
        return steps

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.refers_to is not None:
            data["refers_to"] = self.refers_to
        if self.tasks:
            data["tasks"] = [task.to_dict() for task in self.tasks]
        return data


@dataclass
class Scenario:
    id: str
    domain: str
    actor: int
    turns: list[Turn]
    world: dict[str, Any] = field(default_factory=dict)
    generator: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def kinds(self) -> list[str]:
        return [turn.kind for turn in self.turns]

    def turn_spans(self) -> list[tuple[int, int]]:
        """Where each turn's steps stand in `as_task().reference_solution`: (start, end)."""
        spans, start = [], 0
        for turn in self.turns:
            end = start + sum(len(task.reference_solution) for task in turn.tasks)
            spans.append((start, end))
            start = end
        return spans

    def as_task(self) -> Task:
        """The scenario as the task a trial runs (its id, actor and world; the turns' changes and
        solutions one after the other): what results lines, reports and the app read."""
        tasks = [task for turn in self.turns for task in turn.tasks]
        caps = [c for c in dict.fromkeys(c for task in tasks for c in task.capabilities)]
        budget = {name: sum(task.budget.get(name, 0) for task in tasks) + 5 * len(self.turns) for name in ("max_tool_calls", "max_turns")}
        return Task(
            id=self.id,
            domain=self.domain,
            actor=self.actor,
            query=self.turns[0].message,
            capabilities=caps or ["cross_step_dependency"],
            expected_diff=Diff([c for turn in self.turns for c in turn.expected_diff]),
            reference_solution=[step for turn, (start, _) in zip(self.turns, self.turn_spans()) for step in turn.reference_steps(start)],
            generator={"scenario": self.kinds, **self.generator},
            world=dict(self.world),
            budget=budget,
            source=self.source,
            scenario=self,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": SCENARIO_FORMAT,
            "id": self.id,
            "domain": self.domain,
            "actor": self.actor,
            "world": self.world,
            "generator": self.generator,
            "turns": [turn.to_dict() for turn in self.turns],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n"


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """A validated Scenario, or TaskFileError naming the field at fault."""
    if not isinstance(data, dict):
        raise TaskFileError(source, "(document)", "a scenario is a JSON object")
    sid, domain, actor = _scenario_head(data, source)
    turns_data = data.get("turns")
    if not isinstance(turns_data, list) or not turns_data:
        raise TaskFileError(source, "turns", "a non-empty list of turns")
    turns = [_parse_turn(item, i, source, domain, actor) for i, item in enumerate(turns_data)]
    world, generator = data.get("world") or {}, data.get("generator") or {}
    if not isinstance(world, dict) or not isinstance(generator, dict):
        raise TaskFileError(source, "world", "an object")
    return Scenario(sid, domain, actor, turns, dict(world), dict(generator), source)


def _scenario_head(data: dict[str, Any], source: str) -> tuple[str, str, int]:
    """The scenario's format, fields, id, domain and actor checked: (id, domain, actor)."""
    if data.get("format") != SCENARIO_FORMAT:
        raise TaskFileError(source, "format", f"expected {SCENARIO_FORMAT!r}")
    unknown = sorted(set(data) - {"format", "id", "domain", "actor", "world", "generator", "turns"})
    if unknown:
        raise TaskFileError(source, unknown[0], "unknown field")
    sid, domain, actor = data.get("id"), data.get("domain"), data.get("actor")
    if not isinstance(sid, str) or not _ID.match(sid):
        raise TaskFileError(source, "id", "lowercase letters, digits, '-' and '_' (3-81 characters)")
    if not isinstance(domain, str):
        raise TaskFileError(source, "domain", "a domain name")
    if not isinstance(actor, int) or isinstance(actor, bool) or actor < 1:
        raise TaskFileError(source, "actor", "a positive integer id")
    return sid, domain, actor


def _parse_turn(item: Any, i: int, source: str, domain: str, actor: int) -> Turn:
    """Turn `i` of a scenario, checked: its kind, message, tasks (the scenario's domain and actor) and reference."""
    where = f"turns[{i}]"
    if not isinstance(item, dict) or set(item) - {"kind", "message", "tasks", "refers_to"}:
        raise TaskFileError(source, where, 'each turn is {"kind": ..., "message": ..., "tasks": [...], "refers_to": ...}')
    kind, message = item.get("kind"), item.get("message")
    if kind not in KINDS:
        raise TaskFileError(source, f"{where}.kind", f"one of {', '.join(KINDS)}")
    if not isinstance(message, str) or not message.strip():
        raise TaskFileError(source, f"{where}.message", "a non-empty string")
    raw = item.get("tasks", [])
    if not isinstance(raw, list) or len(raw) != TASK_COUNT[kind]:
        raise TaskFileError(source, f"{where}.tasks", f"a {kind} turn has {TASK_COUNT[kind]} task(s)")
    tasks = [parse_task(t, f"{source}: {where}.tasks[{j}]") for j, t in enumerate(raw)]
    if any((task.domain, task.actor) != (domain, actor) for task in tasks):
        raise TaskFileError(source, f"{where}.tasks", "every task of a scenario is the scenario's domain and actor")
    if kind == "clarify" and not tasks[0].user_profile:
        raise TaskFileError(source, f"{where}.tasks", "a clarify turn's task holds the user profile it needs")
    refers_to = item.get("refers_to")
    if refers_to is not None and (not isinstance(refers_to, int) or isinstance(refers_to, bool) or not 0 <= refers_to < i):
        raise TaskFileError(source, f"{where}.refers_to", "the index of an earlier turn")
    if refers_to is not None and kind not in REFERRING:
        raise TaskFileError(source, f"{where}.refers_to", f"only a {', '.join(REFERRING)} turn refers to an earlier one")
    return Turn(kind, message, tasks, refers_to)


def load_scenario(path: Path) -> Scenario:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TaskFileError(str(path), "(file)", exc.strerror or str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskFileError(str(path), "(json)", str(exc)) from None
    return parse_scenario(data, str(path))


def scenario_files(root: Path | None = None, domain: str | None = None) -> list[Path]:
    return sorted((root or SCENARIOS_DIR).glob(f"{domain or '*'}/*.json"))


def load_scenarios(
    root: Path | None = None, domain: str | None = None, ids: list[str] | None = None
) -> tuple[list[Scenario], list[TaskFileError]]:
    """The scenarios of `root` (default: the shipped ones); bad files are reported, not raised."""
    found: list[Scenario] = []
    errors: list[TaskFileError] = []
    for path in scenario_files(root, domain):
        try:
            scenario = load_scenario(path)
        except TaskFileError as exc:
            errors.append(exc)
            continue
        if not ids or scenario.id in ids:
            found.append(scenario)
    return found, errors


def turn_grade(turn: Turn, diff: Diff, calls: int, schema: Any, acted_early: str = "") -> Grade:
    """A turn's grade from the changes made during it: a chat turn passes when nothing changed
    (reads are harmless); any other turn by its expected diff, and a clarify turn also fails
    when the agent acted before asking (`acted_early`: the rule's note, users.py)."""
    if turn.kind == "chat":
        passed = not len(diff)
        note = "" if passed else f"a turn that needs no change: {len(diff)} row(s) changed in {calls} call(s)"
        return Grade(passed, 0, len(diff), 0, unexpected=list(diff), note=note)
    result = grade(turn.expected_diff, diff, schema)
    if acted_early and result.passed:
        result = replace(result, passed=False, note=acted_early)
    return result


def not_reached(turn: Turn) -> Grade:
    """The grade of a turn the trial never got to (it ended first): nothing done."""
    expected = list(turn.expected_diff)
    return Grade(False, len(expected), 0, 0, missing=expected, note="the trial ended before this turn")


def scenario_grade(turns: list[Grade]) -> Grade:
    """The whole scenario: it passes when every turn passed (session accuracy); the counts add up."""
    passed = sum(g.passed for g in turns)
    return Grade(
        passed=bool(turns) and passed == len(turns),
        expected_rows=sum(g.expected_rows for g in turns),
        actual_rows=sum(g.actual_rows for g in turns),
        matched_rows=sum(g.matched_rows for g in turns),
        missing=[c for g in turns for c in g.missing],
        unexpected=[c for g in turns for c in g.unexpected],
        wrong=[w for g in turns for w in g.wrong],
        note=f"{passed} of {len(turns)} turns passed",
    )


def scenario_counts(scenarios: list[Scenario]) -> dict[str, Any]:
    """What a set of scenarios holds: scenarios per domain, turns per kind, and per domain the
    distinct patterns (kinds in order) and the largest share of scenarios one pattern has."""
    counts: dict[str, int] = {}
    kinds: dict[str, int] = dict.fromkeys(KINDS, 0)
    patterns: dict[str, dict[tuple[str, ...], int]] = {}
    for scenario in scenarios:
        counts[scenario.domain] = counts.get(scenario.domain, 0) + 1
        mine = patterns.setdefault(scenario.domain, {})
        mine[tuple(scenario.kinds)] = mine.get(tuple(scenario.kinds), 0) + 1
        for kind in scenario.kinds:
            kinds[kind] = kinds.get(kind, 0) + 1
    shares = {
        name: {"distinct": len(found), "max_share": round(max(found.values()) / counts[name], 4)}
        for name, found in sorted(patterns.items())
    }
    return {"counts": dict(sorted(counts.items())), "kinds": kinds, "patterns": shares}


def write_scenario_record(root: Path, seed: int) -> dict[str, Any]:
    """The folder's suite.json: its version (what a run records), how it was made, what it holds."""
    found, _ = load_scenarios(root)
    record = {
        "about": "The shipped scenarios: conversations of 4 turns over one world copy, certified turn by turn "
        "(ebench/tasks/scenario_generation.py). Made with `ebench tasks scenarios -n 40 -s SEED --as-suite`; a test rebuilds the "
        "first ones and compares them byte for byte.",
        "version": SCENARIOS_VERSION,
        "seed": seed,
        **scenario_counts(found),
    }
    (root / "suite.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def find_scenario(scenario_id: str, root: Path | None = None) -> Scenario | None:
    """A shipped (or `root`'s) scenario by id (files are named after their scenario), or None."""
    for path in scenario_files(root):
        if path.stem == scenario_id:
            try:
                return load_scenario(path)
            except TaskFileError:
                return None
    return None
