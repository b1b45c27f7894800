"""The paper's analyses across runs: the cost-accuracy frontier, code vs tools on paired runs, code
usage groups, correlations of Avg^k with effort, and effort per domain.

Pure functions over scored runs (`RunReport` in report.py); nothing here prints or reads files.
Conventions:

- Avg^k is a scope's `avg` (the mean over tasks of passes / scored trials, metrics.py).
- "Per task" figures are means over scored trials, one attempt at one task (`efficiency` in
  metrics.py): cost, total calls, turns, tokens (in + out). Calls are counted two ways: as the
  model issued them (top-level calls, an exec_code block one call: E-Bench-Code's "calls per task",
  which drop in code mode) and as executed (each block replaced by the calls made inside it).
- Correlations are given pooled over every (run, domain) pair, per mode (the paper's tools-mode and
  code-mode r have opposite signs: pooled, they cancel) and per domain (across runs).
- A run's mode is its configuration's `code` (true: code mode, false: tools mode); a run without
  it (a sessions folder) has no mode and is never paired.
- Two runs pair when they are of the same model (or solver, without one) and the same task ids,
  one in each mode.
- A number that cannot be computed (no trial, a division by zero, fewer than two points) is None.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from .metrics import Efficiency, ScopeScore, efficiency, score_tasks
from .run_report import RunReport

# The frontier's x axes: what a run spends per task (less is better); Avg^k is the y axis.
FRONTIER_AXES = {"cost": "cost / task ($)", "calls": "total calls / task", "tokens": "tokens / task"}
USAGE_GROUPS = ("all", "some", "none")  # trials of a task that ran exec_code: all, some, none of them
EFFORTS = ("calls_issued", "calls", "turns", "tokens")  # what Avg^k is correlated with


def tokens(eff: Efficiency) -> float | None:
    return None if eff.tokens_in is None or eff.tokens_out is None else eff.tokens_in + eff.tokens_out


def spent(eff: Efficiency, axis: str) -> float | None:
    """A run's (or scope's) mean per task on one frontier axis; None when unknown (an unpriced trial)."""
    if axis == "cost":
        return None if eff.cost_unknown else eff.cost_mean
    if axis == "calls":
        return eff.total_calls
    return tokens(eff)


def code_mode(report: RunReport) -> bool | None:
    code = report.config("code")
    return code if isinstance(code, bool) else None


def mode_name(report: RunReport) -> str | None:
    """ "code", "tools", or None for a run without a mode (a sessions folder)."""
    code = code_mode(report)
    return None if code is None else ("code" if code else "tools")


# --- the frontier -----------------------------------------------------------------------------------


@dataclass
class FrontierPoint:
    label: str
    x: float
    avg: float
    on_frontier: bool = False


@dataclass
class Frontier:
    """Runs as points (x = spent per task, y = Avg^k); the frontier runs are those no other run beats
    or equals on both with one strictly better. Runs with x or Avg^k unknown are listed apart."""

    axis: str
    points: list[FrontierPoint]  # in the order of the runs
    unknown: list[str] = field(default_factory=list)  # run labels

    def frontier(self) -> list[FrontierPoint]:
        """The frontier's points from the cheapest to the dearest (the polyline to draw)."""
        return sorted((p for p in self.points if p.on_frontier), key=lambda p: (p.x, p.avg))

    def to_dict(self) -> dict[str, Any]:
        return {"axis": self.axis, "points": [asdict(p) for p in self.points], "unknown": self.unknown}


def frontier(reports: list[RunReport], axis: str = "cost") -> Frontier:
    points, unknown = [], []
    for r in reports:
        x, avg = spent(r.metrics.efficiency, axis), r.metrics.overall.avg
        if x is None or avg is None:
            unknown.append(r.label)
        else:
            points.append(FrontierPoint(r.label, x, avg))
    for p in points:
        p.on_frontier = not any(q.x <= p.x and q.avg >= p.avg and (q.x < p.x or q.avg > p.avg) for q in points)
    return Frontier(axis, points, unknown)


# --- code vs tools ------------------------------------------------------------------------------------


@dataclass
class Gain:
    """Avg^k of one scope in both runs, and the code run's gain: absolute (points of 0..1) and relative
    to the tools run's Avg^k."""

    tools: float | None
    code: float | None
    absolute: float | None
    relative: float | None

    @classmethod
    def of(cls, tools: ScopeScore | None, code: ScopeScore | None) -> Gain:
        a, b = tools.avg if tools else None, code.avg if code else None
        absolute = None if a is None or b is None else b - a
        relative = None if absolute is None or not a else absolute / a
        return cls(a, b, absolute, relative)


@dataclass
class Pair:
    """A tools-mode run and a code-mode run of one model on the same tasks."""

    tools: str  # run labels
    code: str
    model: str
    overall: Gain
    domains: dict[str, Gain]
    capabilities: dict[str, Gain]  # the capabilities either run has tasks of
    calls: tuple[float | None, float | None]  # total calls (executed) per task: tools run, code run
    turns: tuple[float | None, float | None]
    calls_issued: tuple[float | None, float | None] = (None, None)  # top-level calls per task, as the model issued them

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools_run": self.tools,
            "code_run": self.code,
            "model": self.model,
            "overall": asdict(self.overall),
            "domains": {name: asdict(g) for name, g in self.domains.items()},
            "capabilities": {name: asdict(g) for name, g in self.capabilities.items()},
            "calls": {"tools": self.calls[0], "code": self.calls[1]},
            "calls_issued": {"tools": self.calls_issued[0], "code": self.calls_issued[1]},
            "turns": {"tools": self.turns[0], "code": self.turns[1]},
        }


def _task_ids(report: RunReport) -> frozenset[str]:
    tasks = report.manifest.tasks
    return frozenset(tasks.ids) if tasks is not None and "ids" in tasks.model_fields_set else frozenset(t.task for t in report.results)


def _who(report: RunReport) -> str:
    return str(report.model() or report.solver() or "")


def pairs(reports: list[RunReport]) -> list[tuple[RunReport, RunReport]]:
    """(tools run, code run) pairs: each code run with the first unpaired tools run of its model and tasks."""
    tools = [r for r in reports if code_mode(r) is False]
    out = []
    for code in (r for r in reports if code_mode(r) is True):
        match = next((t for t in tools if _who(t) == _who(code) and _task_ids(t) == _task_ids(code)), None)
        if match is not None:
            tools.remove(match)
            out.append((match, code))
    return out


def paired(tools: RunReport, code: RunReport) -> Pair:
    a, b = tools.metrics, code.metrics
    domains = sorted(set(a.domains) | set(b.domains))
    capabilities = [c for c in a.capabilities if a.capabilities[c].tasks or b.capabilities.get(c, ScopeScore()).tasks]
    return Pair(
        tools.label,
        code.label,
        _who(code),
        Gain.of(a.overall, b.overall),
        {d: Gain.of(a.domains.get(d), b.domains.get(d)) for d in domains},
        {c: Gain.of(a.capabilities.get(c), b.capabilities.get(c)) for c in capabilities},
        (a.efficiency.total_calls, b.efficiency.total_calls),
        (a.efficiency.turns, b.efficiency.turns),
        (a.efficiency.tool_calls, b.efficiency.tool_calls),
    )


# --- code usage groups --------------------------------------------------------------------------------


@dataclass
class UsageGroup:
    """The tasks of a code-mode run whose trials ran exec_code in all, some or none of them: Avg^k, calls
    and turns per task in the code run, and in its paired tools run on the same tasks (None without one)."""

    group: str
    tasks: list[str]
    avg: float | None
    calls: float | None
    turns: float | None
    tools_avg: float | None = None
    tools_calls: float | None = None
    tools_turns: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"tasks": len(self.tasks), "task_ids": self.tasks}


def _scored_by_task(report: RunReport) -> dict[str, list[Any]]:
    by_task: dict[str, list[Any]] = {}
    for t in report.results:
        if not t.infra_error:
            by_task.setdefault(t.task, []).append(t)
    return by_task


def _figures(report: RunReport, tasks: list[str]) -> tuple[float | None, float | None, float | None]:
    """Avg^k, total calls and turns per task of a run on some of its tasks."""
    by_task = _scored_by_task(report)
    chosen = [by_task[t] for t in tasks if t in by_task]
    eff = efficiency([trial for trials in chosen for trial in trials])
    return score_tasks((len(trials), sum(t.passed for t in trials)) for trials in chosen).avg, eff.total_calls, eff.turns


def usage_groups(code: RunReport, tools: RunReport | None = None) -> list[UsageGroup]:
    """The code run's tasks by how many of their scored trials ran exec_code (one group each, in USAGE_GROUPS order)."""
    tasks: dict[str, list[str]] = {g: [] for g in USAGE_GROUPS}
    for task, trials in sorted(_scored_by_task(code).items()):
        used = sum(t.exec_blocks > 0 for t in trials)
        tasks["all" if used == len(trials) else "none" if used == 0 else "some"].append(task)
    groups = []
    for name, chosen in tasks.items():
        group = UsageGroup(name, chosen, *_figures(code, chosen))
        if tools is not None:
            group.tools_avg, group.tools_calls, group.tools_turns = _figures(tools, chosen)
        groups.append(group)
    return groups


# --- effort per domain and correlations -----------------------------------------------------------------


@dataclass
class DomainEffort:
    run: str
    domain: str
    avg: float | None
    trials: int
    calls: float | None  # total calls (executed, inner included) per task
    turns: float | None
    tokens: float | None
    calls_issued: float | None = None  # top-level calls per task, as the model issued them
    mode: str | None = None  # the run's: code, tools or None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def effort(self, name: str) -> float | None:
        return cast(float | None, getattr(self, name))  # `name` is one of EFFORTS, each a float | None field


def domain_efforts(reports: list[RunReport]) -> list[DomainEffort]:
    """Calls, turns and tokens per task of each domain of each run, beside its Avg^k."""
    out = []
    for r in reports:
        for domain, score in r.metrics.domains.items():
            eff = efficiency([t for t in r.results if not t.infra_error and (t.domain or "unknown") == domain])
            out.append(
                DomainEffort(r.label, domain, score.avg, eff.trials, eff.total_calls, eff.turns, tokens(eff), eff.tool_calls, mode_name(r))
            )
    return out


def pearson(xs: list[float], ys: list[float]) -> float | None:
    """Pearson's r of two equally long samples; None with fewer than two points or no spread in either."""
    if len(xs) != len(ys):
        raise ValueError(f"samples of different lengths ({len(xs)} and {len(ys)})")
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # fewer than two points, or one sample constant
        return None


@dataclass
class Correlation:
    effort: str  # one of EFFORTS
    points: int  # (run, domain) pairs with both numbers
    r: float | None


def correlations(efforts: list[DomainEffort]) -> list[Correlation]:
    """Pearson's r between Avg^k and each effort across (run, domain) pairs."""
    out = []
    for name in EFFORTS:
        known = [(avg, effort) for e in efforts if (avg := e.avg) is not None and (effort := e.effort(name)) is not None]
        out.append(Correlation(name, len(known), pearson([avg for avg, _ in known], [effort for _, effort in known])))
    return out


def correlations_by(efforts: list[DomainEffort], key: str) -> dict[str, list[Correlation]]:
    """`correlations` within each value of `key` ("mode" or "domain"), in sorted order; runs without
    a mode are in no mode's group."""
    groups: dict[str, list[DomainEffort]] = {}
    for e in efforts:
        value = getattr(e, key)
        if value is not None:
            groups.setdefault(value, []).append(e)
    return {value: correlations(groups[value]) for value in sorted(groups)}


def correlations_dict(found: list[Correlation]) -> dict[str, Any]:
    return {c.effort: {"points": c.points, "r": c.r} for c in found}


# --- all of them ----------------------------------------------------------------------------------------


@dataclass
class Analyses:
    frontiers: dict[str, Frontier]  # axis -> frontier
    pairs: list[Pair]
    usage: dict[str, list[UsageGroup]]  # code run label -> its groups
    efforts: list[DomainEffort]
    correlations: list[Correlation]  # pooled over every (run, domain) pair
    by_mode: dict[str, list[Correlation]] = field(default_factory=dict)  # code / tools -> within that mode's runs
    by_domain: dict[str, list[Correlation]] = field(default_factory=dict)  # domain -> across runs

    def to_dict(self) -> dict[str, Any]:
        return {
            "frontier": {axis: f.to_dict() for axis, f in self.frontiers.items()},
            "code_vs_tools": [p.to_dict() for p in self.pairs],
            "code_usage": {label: [g.to_dict() for g in groups] for label, groups in self.usage.items()},
            "domain_efficiency": [e.to_dict() for e in self.efforts],
            "correlations": correlations_dict(self.correlations),
            "correlations_by_mode": {mode: correlations_dict(found) for mode, found in self.by_mode.items()},
            "correlations_by_domain": {domain: correlations_dict(found) for domain, found in self.by_domain.items()},
        }


def analyses(reports: list[RunReport]) -> Analyses:
    matched = pairs(reports)
    partner = {code.label: tools for tools, code in matched}
    efforts = domain_efforts(reports)
    return Analyses(
        {axis: frontier(reports, axis) for axis in FRONTIER_AXES},
        [paired(tools, code) for tools, code in matched],
        {r.label: usage_groups(r, partner.get(r.label)) for r in reports if code_mode(r) is True},
        efforts,
        correlations(efforts),
        correlations_by(efforts, "mode"),
        correlations_by(efforts, "domain"),
    )
