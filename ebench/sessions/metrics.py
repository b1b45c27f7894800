"""Scores of one run: Avg, Pass@k and Pass^k per scope, efficiency, and why trials failed.

Pure functions over the lines of `results.jsonl` (`TrialSummary` in results.py, read by `load_run` in
runs.py); nothing here prints or reads files. Conventions:

- A trial with `infra_error` (or termination "infra_error") is left out of every score and counted apart.
- A task's n is its number of scored trials, c its passes. Avg is the mean of c/n over tasks; Pass@k and
  Pass^k are averaged over the tasks with n >= k only (`by_k[k].tasks` says how many), so a task with
  uneven trials never enters an estimator it has too few trials for. Pass@1 = Pass^1 = Avg.
- A task counts once in its domain and once in each of its capabilities.
- No scored trial means no score: averages and means are None (shown as "-"), counts are 0; nothing
  is ever divided by zero.
- "Total calls" are the domain tool calls made, wherever made: top-level calls, with each exec_code block
  replaced by the calls made inside it (tool_calls - exec_blocks + inner_calls). The same count is what
  is compared with the reference solution's length.
- Paths (WildToolBench's figures): a model trial's path is its model turns that made calls, against
  the fewest a perfect agent needs (`optimal_turns`, from the reference solution's dependency graph,
  ebench.tasks.paths). The optimal path rate is the share of passed trials that took no more; the
  progress rate is the mean recall of the expected changes in the failed trials that were graded.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from ..tasks.spec import CAPABILITIES
from .results import ResultsLineError, TrialSummary

# tool_errors codes the failure breakdown names; every other code counts as "other".
NAMED_TOOL_ERRORS = ("unknown_tool", "invalid_arguments")


# A result record that cannot be scored (a field of the wrong type); the message says which.
MetricsError = ResultsLineError


def _check(n: int, c: int, k: int) -> None:
    if n < 1 or k < 1:
        raise ValueError(f"n and k must be at least 1 (n={n}, k={k})")
    if not 0 <= c <= n:
        raise ValueError(f"c must be between 0 and n (n={n}, c={c})")
    if k > n:
        raise ValueError(f"k={k} is larger than the number of trials n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k trials drawn from n (c passed) passes: 1 - C(n-c,k)/C(n,k)."""
    _check(n, c, k)
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all k trials drawn from n (c passed) pass: C(c,k)/C(n,k) (tau-bench's pass^k)."""
    _check(n, c, k)
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


@dataclass
class KScore:
    tasks: int  # tasks with at least k scored trials: the ones this k is averaged over
    pass_at: float
    pass_hat: float


@dataclass
class ScopeScore:
    """Scores of a set of tasks (the whole run, one domain or one capability)."""

    tasks: int = 0  # tasks with at least one scored trial
    trials: int = 0  # scored trials
    passes: int = 0
    infra_errors: int = 0
    avg: float | None = None
    by_k: dict[int, KScore] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["by_k"] = {str(k): asdict(v) for k, v in self.by_k.items()}
        return data


@dataclass
class Efficiency:
    """Per-trial cost of the scored trials: means (None without trials) and totals."""

    trials: int = 0
    tool_calls: float | None = None
    inner_calls: float | None = None
    exec_blocks: float | None = None
    total_calls: float | None = None
    turns: float | None = None
    tokens_in: float | None = None
    tokens_out: float | None = None
    seconds: float | None = None
    totals: dict[str, float] = field(default_factory=dict)  # the same keys, summed
    exec_share: float | None = None  # share of trials that ran at least one exec_code block
    cost_total: float | None = None  # None when no trial or any trial's price is unknown
    cost_mean: float | None = None
    cost_unknown: int = 0  # trials with cost null
    calls_vs_reference: float | None = None  # mean of total_calls / reference_calls
    reference_trials: int = 0  # trials that ratio is averaged over (reference_calls > 0)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Failures:
    """What went wrong in the failed scored trials; each count is of trials, not of rows or calls."""

    failed: int = 0
    missing: int = 0  # an expected change was not made
    unexpected: int = 0  # a change that was not asked for
    wrong: int = 0  # the right row with a wrong value
    no_change: int = 0  # the database was left as it was
    ungraded: int = 0  # no grade recorded
    unknown_tool: int = 0
    invalid_arguments: int = 0
    other_tool_errors: int = 0
    terminations: dict[str, int] = field(default_factory=dict)  # reason -> failed trials that ended so

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TaskPath:
    """One task's path figures over its measured trials."""

    optimal_turns: int
    trials: int = 0
    call_turns: float | None = None  # mean over the trials
    turns_over_optimal: float | None = None  # mean of call_turns / optimal_turns


@dataclass
class Paths:
    """How direct the agent's paths were, and how far the failed trials got (see the module docstring)."""

    measured: int = 0  # scored trials with a path (a model's, on a task with an optimal path)
    passed: int = 0  # of them, the passed ones
    optimal: int = 0  # passed in no more turns with calls than the optimal
    optimal_path_rate: float | None = None  # optimal / passed
    turns_over_optimal: float | None = None  # mean call_turns / optimal_turns over the passed measured trials
    progress_trials: int = 0  # failed scored trials with a grade
    progress_rate: float | None = None  # their mean recall of the expected changes
    tasks: dict[str, TaskPath] = field(default_factory=dict)  # task -> its figures (sorted by id)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paths(trials: list[TrialSummary]) -> Paths:
    """The path and progress figures of the scored trials."""
    out = Paths()
    ratios: list[float] = []
    by_task: dict[str, list[TrialSummary]] = defaultdict(list)
    recalls: list[float] = []
    for r in trials:
        if not r.passed and r.grade is not None and r.grade.recall is not None:
            recalls.append(r.grade.recall)
        if r.call_turns is None or r.optimal_turns <= 0:
            continue
        out.measured += 1
        by_task[r.task].append(r)
        if r.passed:
            out.passed += 1
            out.optimal += r.call_turns <= r.optimal_turns
            ratios.append(r.call_turns / r.optimal_turns)
    if out.passed:
        out.optimal_path_rate = out.optimal / out.passed
    out.turns_over_optimal = _mean(ratios)
    out.progress_trials = len(recalls)
    out.progress_rate = _mean(recalls)
    for task in sorted(by_task):
        records = by_task[task]
        optimal = records[0].optimal_turns
        turns = [float(r.call_turns or 0) for r in records]
        out.tasks[task] = TaskPath(
            optimal_turns=optimal, trials=len(records), call_turns=_mean(turns), turns_over_optimal=_mean([t / optimal for t in turns])
        )
    return out


# WildToolBench's instruction categories: a session's transitions are the changes between them
# from one turn to the next (a clarify turn after a task, a chat after a clarify...).
_CATEGORY = {"clarify": "clarify", "chat": "chat"}  # every other kind is a task to act on


def instruction_transitions(kinds: Iterable[str]) -> int:
    """How often a session's turns change category (task, clarify, chat) from one to the next."""
    categories = [_CATEGORY.get(kind, "task") for kind in kinds]
    return sum(a != b for a, b in zip(categories, categories[1:]))


@dataclass
class Conversations:
    """Scenarios (several turns on one world copy) and tasks whose user holds facts: session
    accuracy (scenarios whose every turn passed), turn accuracy and its share per kind of turn and
    per position in the session (turn 1, 2, ...), session accuracy by the number of instruction
    switches (turns whose user changes a value mid-request) and of instruction transitions (task,
    clarify and chat turns following one another), and how often the agent asked before it acted."""

    scenarios: int = 0  # scored scenario trials
    session_passed: int = 0
    session_accuracy: float | None = None
    turns: int = 0
    turns_passed: int = 0
    turn_accuracy: float | None = None
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> {turns, passed}
    by_position: dict[str, dict[str, int]] = field(default_factory=dict)  # "1".. -> {turns, passed}
    by_switches: dict[str, dict[str, int]] = field(default_factory=dict)  # switch turns -> {scenarios, passed}
    by_transitions: dict[str, dict[str, int]] = field(default_factory=dict)  # transitions -> {scenarios, passed}
    asking: int = 0  # scored trials of tasks with a user profile
    asked_first: int = 0  # of them, those that asked before their first write (or never wrote)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def any(self) -> bool:
        return bool(self.scenarios or self.asking)


def conversations(trials: list[TrialSummary]) -> Conversations:
    out = Conversations()
    kinds: dict[str, dict[str, int]] = defaultdict(lambda: {"turns": 0, "passed": 0})
    positions: dict[int, dict[str, int]] = defaultdict(lambda: {"turns": 0, "passed": 0})
    switches: dict[int, dict[str, int]] = defaultdict(lambda: {"scenarios": 0, "passed": 0})
    transitions: dict[int, dict[str, int]] = defaultdict(lambda: {"scenarios": 0, "passed": 0})
    for r in trials:
        if r.asked_first is not None:
            out.asking += 1
            out.asked_first += r.asked_first
        if r.scenario_turns is None:
            continue
        out.scenarios += 1
        out.session_passed += r.passed
        for position, turn in enumerate(r.scenario_turns, 1):
            passed = turn.passed
            out.turns += 1
            out.turns_passed += passed
            for group in (kinds[turn.kind], positions[position]):
                group["turns"] += 1
                group["passed"] += passed
        session_kinds = [turn.kind for turn in r.scenario_turns]
        for groups, count in ((switches, session_kinds.count("switch")), (transitions, instruction_transitions(session_kinds))):
            groups[count]["scenarios"] += 1
            groups[count]["passed"] += r.passed
    if out.scenarios:
        out.session_accuracy = out.session_passed / out.scenarios
    if out.turns:
        out.turn_accuracy = out.turns_passed / out.turns
    out.by_kind = {kind: kinds[kind] for kind in sorted(kinds)}
    out.by_position = {str(n): positions[n] for n in sorted(positions)}
    out.by_switches = {str(n): switches[n] for n in sorted(switches)}
    out.by_transitions = {str(n): transitions[n] for n in sorted(transitions)}
    return out


@dataclass
class InfraErrors:
    count: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)  # error message -> trials
    trials: list[dict[str, Any]] = field(default_factory=list)  # {task, trial, error}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunMetrics:
    overall: ScopeScore
    domains: dict[str, ScopeScore]  # sorted by name
    capabilities: dict[str, ScopeScore]  # every capability, in CAPABILITIES order (empty ones too)
    efficiency: Efficiency
    failures: Failures
    paths: Paths
    conversations: Conversations
    infra: InfraErrors
    max_trials: int  # the largest n: Pass@k is defined up to this k
    trial_counts: dict[int, int]  # n -> tasks with n scored trials
    terminations: dict[str, int]  # reason -> scored trials that ended so

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "domains": {name: s.to_dict() for name, s in self.domains.items()},
            "capabilities": {name: s.to_dict() for name, s in self.capabilities.items()},
            "efficiency": self.efficiency.to_dict(),
            "failures": self.failures.to_dict(),
            "paths": self.paths.to_dict(),
            "conversations": self.conversations.to_dict(),
            "infra": self.infra.to_dict(),
            "max_trials": self.max_trials,
            "trial_counts": {str(n): count for n, count in self.trial_counts.items()},
            "terminations": self.terminations,
        }


def is_infra(record: TrialSummary) -> bool:
    return record.infra_error


def score_tasks(outcomes: Iterable[tuple[int, int]], infra_errors: int = 0) -> ScopeScore:
    """Avg, Pass@k and Pass^k over tasks given as (n scored trials, c passes); tasks with n = 0 are ignored."""
    tasks = [(n, c) for n, c in outcomes if n > 0]
    score = ScopeScore(tasks=len(tasks), trials=sum(n for n, _ in tasks), passes=sum(c for _, c in tasks), infra_errors=infra_errors)
    if not tasks:
        return score
    score.avg = _mean([c / n for n, c in tasks])
    for k in range(1, max(n for n, _ in tasks) + 1):
        eligible = [(n, c) for n, c in tasks if n >= k]
        score.by_k[k] = KScore(
            tasks=len(eligible),
            pass_at=math.fsum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible),
            pass_hat=math.fsum(pass_hat_k(n, c, k) for n, c in eligible) / len(eligible),
        )
    return score


def total_calls(record: TrialSummary) -> int:
    """The domain tool calls a trial made, wherever made (see the module docstring)."""
    return record.tool_calls - record.exec_blocks + record.inner_calls


def efficiency(trials: list[TrialSummary]) -> Efficiency:
    """Means and totals over scored trials (see the module docstring for total calls)."""
    eff = Efficiency(trials=len(trials))
    columns: dict[str, list[float]] = defaultdict(list)
    ratios: list[float] = []
    costs: list[float] = []
    for r in trials:
        total = total_calls(r)
        values = {
            "tool_calls": r.tool_calls,
            "inner_calls": r.inner_calls,
            "exec_blocks": r.exec_blocks,
            "total_calls": total,
            "turns": r.turns,
            "tokens_in": r.tokens_in,
            "tokens_out": r.tokens_out,
            "seconds": r.seconds,
        }
        for key, value in values.items():
            columns[key].append(value)
        if r.reference_calls:
            ratios.append(total / r.reference_calls)
        if r.cost is None:
            eff.cost_unknown += 1
        else:
            costs.append(r.cost)
    if not trials:
        return eff
    for key, column in columns.items():
        setattr(eff, key, _mean(column))
        eff.totals[key] = math.fsum(column)
    eff.exec_share = sum(1 for b in columns["exec_blocks"] if b > 0) / len(trials)
    if not eff.cost_unknown:
        eff.cost_total = math.fsum(costs)
        eff.cost_mean = eff.cost_total / len(trials)
    eff.calls_vs_reference = _mean(ratios)
    eff.reference_trials = len(ratios)
    return eff


def _ended(record: TrialSummary) -> str:
    return str(record.termination or "unknown")


def failures(trials: list[TrialSummary]) -> Failures:
    """The failure breakdown of the scored trials that did not pass."""
    out = Failures()
    ends: Counter[str] = Counter()
    for r in trials:
        if r.passed:
            continue
        out.failed += 1
        ends[_ended(r)] += 1
        grade = r.grade
        if grade is None:
            out.ungraded += 1
        else:
            out.missing += grade.missing > 0
            out.unexpected += grade.unexpected > 0
            out.wrong += grade.wrong > 0
            out.no_change += grade.actual_rows == 0
        errors = r.tool_errors
        out.unknown_tool += errors.get("unknown_tool", 0) > 0
        out.invalid_arguments += errors.get("invalid_arguments", 0) > 0
        out.other_tool_errors += any(n > 0 for code, n in errors.items() if code not in NAMED_TOOL_ERRORS)
    out.terminations = dict(ends.most_common())
    return out


def run_metrics(results: Iterable[TrialSummary | dict[str, Any]]) -> RunMetrics:
    """Every score of one run, from its result records (one per finished trial; a JSON object is
    read as one, and a field of the wrong type is a MetricsError naming the trial)."""
    per_task: dict[str, list[int]] = {}  # task -> [n, c]
    task_domain: dict[str, str] = {}
    task_caps: dict[str, list[str]] = {}
    infra_by_task: Counter[str] = Counter()
    scored: list[TrialSummary] = []
    infra = InfraErrors()
    reasons: Counter[str] = Counter()
    for r in map(TrialSummary.read, results):
        task = r.task
        # A task's domain and capabilities come from its first record: they are the task's, not the trial's.
        task_domain.setdefault(task, r.domain or "unknown")
        task_caps.setdefault(task, r.capabilities)
        counts = per_task.setdefault(task, [0, 0])
        if r.infra_error:
            infra.count += 1
            infra_by_task[task] += 1
            reasons[r.error or "no message"] += 1
            infra.trials.append({"task": task, "trial": r.trial, "error": r.error})
            continue
        scored.append(r)
        counts[0] += 1
        counts[1] += r.passed
    infra.by_reason = dict(reasons.most_common())
    infra.trials.sort(key=lambda t: (t["task"], str(t["trial"])))

    def scope(tasks: Iterable[str]) -> ScopeScore:
        chosen = list(tasks)
        return score_tasks([(per_task[t][0], per_task[t][1]) for t in chosen], sum(infra_by_task[t] for t in chosen))

    domains = {d: scope(t for t in per_task if task_domain[t] == d) for d in sorted(set(task_domain.values()))}
    capabilities = {cap: scope(t for t in per_task if cap in task_caps[t]) for cap in CAPABILITIES}
    ns = Counter(n for n, _ in per_task.values() if n > 0)
    return RunMetrics(
        overall=scope(per_task),
        domains=domains,
        capabilities=capabilities,
        efficiency=efficiency(scored),
        failures=failures(scored),
        paths=paths(scored),
        conversations=conversations(scored),
        infra=infra,
        max_trials=max(ns, default=0),
        trial_counts=dict(sorted(ns.items())),
        terminations=dict(Counter(_ended(r) for r in scored).most_common()),
    )


# -- perturbed runs (perturb.py) -------------------------------------------------------------------

FAILURE_STAGES = ("wrong_tool", "schema_error", "wrong_value", "mishandled_output")


def failure_stages(trials: Iterable[TrialSummary]) -> dict[str, int]:
    """Failed calls by stage, summed over scored trials. A perturbed trial counts its own
    (`failure_stages`, perturb.py); a clean one what its tool errors tell: unknown_tool as a wrong
    tool, invalid_arguments as a schema error (a clean trial has no noise or injected error, and
    its wrong values are not attributed)."""
    out: Counter[str] = Counter()
    for record in trials:
        if record.infra_error:
            continue
        if record.failure_stages is not None:
            out.update({k: v for k, v in record.failure_stages.items() if k in FAILURE_STAGES})
        else:
            out["wrong_tool"] += record.tool_errors.get("unknown_tool", 0)
            out["schema_error"] += record.tool_errors.get("invalid_arguments", 0)
    return {stage: out[stage] for stage in FAILURE_STAGES}
