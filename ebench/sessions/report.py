"""Several runs side by side: their metrics as tables of strings, one JSON document, or CSV rows.

The tables are plain data (`TableData`): the command line renders them with rich, and this module
stays free of any UI library. A number that does not exist (no scored trial, a k beyond a run's
trials, a domain a run did not touch) is shown as "-" and written as null (JSON) or empty (CSV).

The human baseline (`human_baseline`) sets people's blind attempts at the reported tasks, read
from a folder of sessions, beside the runs: pass rate, median time and mean calls.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..tasks.spec import CAPABILITIES, CAPABILITY_TITLES
from .analyses import EFFORTS, FRONTIER_AXES, Analyses, Correlation, Gain, Pair, UsageGroup, analyses
from .attempts import HUMAN
from .metrics import FAILURE_STAGES, Conversations, ScopeScore, failure_stages, run_metrics, total_calls
from .perturb import Perturbation
from .record import SessionFileError, read_session, session_files
from .results import TrialSummary
from .run_report import NO_VALUE, RunReport
from .runs import RunData

REPORT_FORMAT = "ebench-report/1"
PAPER_K = 3  # the paper's main table: Avg3, Pass@3, Pass^3
DASH = NO_VALUE
BASELINE_LABEL = "human baseline"  # the people's column: a sessions folder's runs include one labelled "human"
CSV_COLUMNS = ("run", "path", "scope", "metric", "value")


@dataclass
class TableData:
    title: str
    columns: list[str]  # the first `labels` columns name the rows, one more per run
    rows: list[list[str] | None]  # None: a section break
    labels: int = 1
    caption: str | None = None
    notes: list[str] = field(default_factory=list)


def build_reports(runs: list[RunData]) -> list[RunReport]:
    """Score each run (MetricsError propagates). Two runs with one label are told apart by their path."""
    labels = [run.label for run in runs]
    return [
        RunReport(
            label if labels.count(label) == 1 else f"{label} ({run.path})",
            str(run.path),
            run.manifest,
            run_metrics(run.results),
            _raised(run),
            run.results,
        )
        for run, label in zip(runs, labels)
    ]


def _raised(run: RunData) -> int:
    """Tasks whose trials ran under higher limits than the run's (their budget raised them)."""
    limits = run.manifest.config.limits if run.manifest.config else None
    if limits is None:
        return 0
    ran_under = {"max_turns": limits.max_turns, "max_tool_calls": limits.max_tool_calls}
    raised = set()
    for result in run.results:
        applied = result.limits or {}
        if any(k in applied and run_limit is not None and applied[k] > run_limit for k, run_limit in ran_under.items()):
            raised.add(result.task)
    return len(raised)


def report_document(reports: list[RunReport], baseline: Baseline | None = None) -> dict[str, Any]:
    """Every figure of every run; "baseline" is the human baseline, or null when there is none; "analyses"
    the frontier, code vs tools, code usage groups, effort per domain and correlations (analyses.py)."""
    return {
        "format": REPORT_FORMAT,
        "runs": [r.to_dict() for r in reports],
        "baseline": baseline.to_dict() if baseline else None,
        "analyses": analyses(reports).to_dict(),
        **({"perturbations": perturbation_document(reports)} if any(perturbation_of(r) for r in reports) else {}),
    }


# --- perturbed runs (perturb.py) ---------------------------------------------------------------------


def perturbation_of(report: RunReport) -> Perturbation:
    """The run's perturbation, from its configuration (clean when it has none)."""
    perturb = report.manifest.config.perturb if report.manifest.config else None
    return Perturbation.from_dict(perturb.to_dict() if perturb else None)


def clean_partner(report: RunReport, reports: list[RunReport]) -> RunReport | None:
    """The clean run a perturbed one is compared with: one with the same solver configuration and
    mode, else the first clean run."""
    clean = [r for r in reports if not perturbation_of(r)]
    same = [r for r in clean if r.config("solver") == report.config("solver") and r.config("code") == report.config("code")]
    chosen = same or clean
    return chosen[0] if chosen else None


def _without_paraphrase(report: RunReport) -> int:
    """Trials of the run whose task had no paraphrase to use (intent:paraphrase left them unchanged)."""
    return sum(1 for r in report.results if r.perturbation is not None and "no paraphrase" in (r.perturbation.notes or []))


def perturbation_document(reports: list[RunReport]) -> list[dict[str, Any]]:
    """Per run: its perturbation, its pass rate (Avg), the clean partner's, the drop, and the failed calls by stage."""
    out = []
    for report in reports:
        perturbation = perturbation_of(report)
        partner = clean_partner(report, reports) if perturbation else None
        score, clean = report.metrics.overall.avg, partner.metrics.overall.avg if partner else None
        out.append(
            {
                "run": report.label,
                "perturbation": perturbation.to_dict() if perturbation else None,
                "families": list(perturbation.families),
                "pass_rate": score,
                "clean_run": partner.label if partner else None,
                "clean_pass_rate": clean,
                "drop": None if score is None or clean is None else clean - score,
                "without_paraphrase": _without_paraphrase(report),
                "failure_stages": failure_stages(report.results),
            }
        )
    return out


def robustness_tables(reports: list[RunReport]) -> list[TableData]:
    """The perturbed runs beside their clean partners, and failed calls by stage (none when no run is perturbed)."""
    if not any(perturbation_of(r) for r in reports):
        return []
    found = perturbation_document(reports)
    rows: list[list[str] | None] = [
        ["perturbation", *[perturbation_of(r).label for r in reports]],
        ["pass rate (avg)", *[pct(f["pass_rate"]) for f in found]],
        ["clean run's", *[pct(f["clean_pass_rate"]) if f["perturbation"] else DASH for f in found]],
        ["drop", *[pct(f["drop"]) if f["perturbation"] else DASH for f in found]],
    ]
    notes = []
    if any(f["without_paraphrase"] for f in found):
        rows.append(["  trials without a paraphrase", *[str(f["without_paraphrase"]) for f in found]])
        notes.append("a task without stored paraphrases keeps its request under intent:paraphrase")
    robustness = TableData(
        "Robustness (perturbed runs against the clean run)",
        ["", *[r.label for r in reports]],
        rows,
        caption="drop: the clean run's pass rate less the perturbed run's (same solver); see the README's Perturbations",
        notes=notes,
    )
    titles = {
        "wrong_tool": "wrong tool",
        "schema_error": "schema error",
        "wrong_value": "wrong value bound",
        "mishandled_output": "mishandled output",
    }
    stages = TableData(
        "Failed calls by stage",
        ["", *[r.label for r in reports]],
        [[titles[stage], *[str(f["failure_stages"][stage]) for f in found]] for stage in FAILURE_STAGES],
        caption="clean runs: unknown tools and invalid arguments only (no layer to attribute the rest)",
    )
    return [robustness, stages]


# --- the human baseline ------------------------------------------------------------------------------


@dataclass
class Figures:
    """Pass rate, median time and mean calls over some scored trials (None: no trial)."""

    trials: int = 0
    passed: int = 0
    pass_rate: float | None = None
    median_seconds: float | None = None
    mean_calls: float | None = None

    @classmethod
    def of(cls, trials: list[TrialSummary]) -> Figures:
        if not trials:
            return cls()
        passed = sum(r.passed for r in trials)
        return cls(
            len(trials),
            passed,
            passed / len(trials),
            statistics.median(r.seconds for r in trials),
            statistics.fmean(total_calls(r) for r in trials),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "median_seconds": self.median_seconds,
            "mean_calls": self.mean_calls,
        }


@dataclass
class TaskBaseline:
    task: str
    human: Figures
    runs: dict[str, float | None]  # run label -> the run's pass rate on the task (None: no scored trial)


@dataclass
class Baseline:
    """People's blind attempts at the reported tasks, beside each run on the same tasks."""

    source: str  # the folder of sessions read
    human: Figures  # over every attempt at a reported task
    runs: dict[str, Figures]  # run label -> its trials of the tasks people attempted
    tasks: list[TaskBaseline]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "tasks": len(self.tasks),
            "human": self.human.to_dict(),
            "runs": {label: figures.to_dict() for label, figures in self.runs.items()},
            "per_task": [
                {"task": t.task, "human": t.human.to_dict(), "runs": {label: rate for label, rate in t.runs.items()}} for t in self.tasks
            ],
        }


def blind_attempts(folder: Path) -> dict[str, list[TrialSummary]]:
    """The finished blind attempts people made, by task, from a folder of sessions (the data
    directory's `sessions`). Attempts made with the expected diff in view ("human-assisted"),
    unfinished ones (no end event) and infrastructure errors are not a baseline; a file that is
    not a readable session is skipped."""
    found: dict[str, list[TrialSummary]] = {}
    for path in sorted(session_files(folder, HUMAN)):
        try:
            session = read_session(path)
        except SessionFileError:
            continue
        end = session.end
        if session.start.solver.label != HUMAN or end is None or not isinstance(end.summary, TrialSummary):
            continue  # not a blind attempt, unfinished, or its results line cannot be read
        summary = end.summary
        if summary.task and not summary.infra_error:
            found.setdefault(summary.task, []).append(summary)
    return found


def human_baseline(reports: list[RunReport], attempts: dict[str, list[TrialSummary]], source: str) -> Baseline:
    """The baseline over the reported tasks people attempted; `attempts` from `blind_attempts`."""
    scored = {r.label: [t for t in r.results if not t.infra_error] for r in reports}
    reported = {t.task for trials in scored.values() for t in trials}
    tasks = sorted(task for task in attempts if task in reported)
    per_task = []
    for task in tasks:
        rates = {}
        for label, trials in scored.items():
            rates[label] = Figures.of([t for t in trials if t.task == task]).pass_rate
        per_task.append(TaskBaseline(task, Figures.of(attempts[task]), rates))
    chosen = set(tasks)
    return Baseline(
        source,
        Figures.of([a for task in tasks for a in attempts[task]]),
        {label: Figures.of([t for t in trials if t.task in chosen]) for label, trials in scored.items()},
        per_task,
    )


# --- formatting -----------------------------------------------------------------------------------


def pct(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.1f}%"


def num(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def count_share(count: int, whole: int) -> str:
    return f"{count} ({count / whole:.0%})" if whole else str(count)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


def _cost(value: float | None, unknown: int, trials: int) -> str:
    if unknown:
        return f"unknown ({unknown} of {trials} unpriced)"
    return DASH if value is None else f"${value:,.4f}"


def _max_k(reports: list[RunReport]) -> int:
    return max((r.metrics.max_trials for r in reports), default=0)


def _k_rows(scores: list[ScopeScore | None], ks: range) -> list[list[str]]:
    """Pass@k then Pass^k rows for each k; "-" where a run's scope has no task with k trials."""
    rows = []
    for name, attr in (("Pass@", "pass_at"), ("Pass^", "pass_hat")):
        for k in ks:
            rows.append([f"{name}{k}", *[pct(getattr(s.by_k[k], attr)) if s and k in s.by_k else DASH for s in scores]])
    return rows


# --- tables -----------------------------------------------------------------------------------------


def summary_table(reports: list[RunReport]) -> TableData:
    ks = range(1, _max_k(reports) + 1)
    overall = [r.metrics.overall for r in reports]
    rows: list[list[str] | None] = [
        *_run_rows(reports),
        ["tasks scored", *[str(s.tasks) for s in overall]],
        ["scored trials", *[str(s.trials) for s in overall]],
        ["passed trials", *[str(s.passes) for s in overall]],
        ["infra errors", *[str(s.infra_errors) for s in overall]],
        ["suite version", *[r.suite_version() or DASH for r in reports]],
        ["limits", *[r.limits() for r in reports]],
        None,
        ["Avg", *[pct(s.avg) for s in overall]],
        *_k_rows(list(overall), ks),
    ]
    rows += _uneven_rows(overall, ks)
    return TableData("Summary", ["", *[r.label for r in reports]], rows, caption=_versions_caption(reports))


def _run_rows(reports: list[RunReport]) -> list[list[str] | None]:
    """Who ran: the solver, the model, the tasks planned."""
    return [
        ["solver", *[str(r.solver() or DASH) for r in reports]],
        ["model", *[str(r.model() or DASH) for r in reports]],
        ["tasks planned", *[str(r.tasks_planned() if r.tasks_planned() is not None else DASH) for r in reports]],
    ]


def _uneven_rows(overall: list[ScopeScore], ks: range) -> list[list[str] | None]:
    """Uneven trial counts: say over how many tasks each k is averaged (no rows when even)."""
    uneven = [k for k in ks if any(k in s.by_k and s.by_k[k].tasks < s.tasks for s in overall)]
    if not uneven:
        return []
    return [None, *[[f"tasks with ≥{k} trials", *[str(s.by_k[k].tasks if k in s.by_k else 0) for s in overall]] for k in uneven]]


def _versions_caption(reports: list[RunReport]) -> str | None:
    versions = sorted({r.suite_version() or "unknown" for r in reports})
    if len(versions) > 1:
        return f"Runs made on different suite versions ({', '.join(versions)}): their scores are not comparable."
    return None


def scope_table(reports: list[RunReport], kind: str) -> TableData:
    """Per domain (`kind` "domains") or per capability ("capabilities"): tasks, trials, Avg, Pass@k and Pass^k for k >= 2."""
    if kind == "domains":
        names = sorted({d for r in reports for d in r.metrics.domains})
        titles = {n: n for n in names}
    else:
        names = [c for c in CAPABILITIES if any(r.metrics.capabilities[c].tasks for r in reports)]
        titles = CAPABILITY_TITLES
    ks = range(2, _max_k(reports) + 1)
    rows: list[list[str] | None] = []
    for name in names:
        scores = [getattr(r.metrics, kind).get(name) for r in reports]
        block = [
            ["tasks", *[str(s.tasks) if s else DASH for s in scores]],
            ["trials", *[str(s.trials) if s else DASH for s in scores]],
            ["Avg", *[pct(s.avg) if s else DASH for s in scores]],
            *_k_rows(scores, ks),
        ]
        if rows:
            rows.append(None)
        rows += [[titles[name] if i == 0 else "", *row] for i, row in enumerate(block)]
    first = "domain" if kind == "domains" else "capability"
    return TableData(
        f"Per {first}", [first, "", *[r.label for r in reports]], rows, labels=2, caption="Pass@1 = Pass^1 = Avg" if ks else None
    )


def efficiency_table(reports: list[RunReport]) -> TableData:
    effs = [r.metrics.efficiency for r in reports]
    rows: list[list[str] | None] = [
        ["scored trials", *[str(e.trials) for e in effs]],
        ["tool calls / trial", *[num(e.tool_calls) for e in effs]],
        ["calls inside exec_code / trial", *[num(e.inner_calls) for e in effs]],
        ["total calls / trial", *[num(e.total_calls) for e in effs]],
        ["total calls / reference", *[num(e.calls_vs_reference, 2) for e in effs]],
        ["exec_code used", *[pct(e.exec_share) for e in effs]],
        ["turns / trial", *[num(e.turns) for e in effs]],
        None,
        ["tokens in / trial", *[num(e.tokens_in, 0) for e in effs]],
        ["tokens out / trial", *[num(e.tokens_out, 0) for e in effs]],
        ["tokens in (total)", *[num(e.totals.get("tokens_in"), 0) for e in effs]],
        ["tokens out (total)", *[num(e.totals.get("tokens_out"), 0) for e in effs]],
        ["cost (total)", *[_cost(e.cost_total, e.cost_unknown, e.trials) for e in effs]],
        ["cost / trial", *[_cost(e.cost_mean, e.cost_unknown, e.trials) for e in effs]],
        ["wall time / trial", *[duration(e.seconds) for e in effs]],
        ["wall time (total)", *[duration(e.totals.get("seconds")) for e in effs]],
    ]
    return TableData(
        "Efficiency (scored trials)",
        ["", *[r.label for r in reports]],
        rows,
        caption="total calls: top-level calls with each exec_code block counted as the calls made inside it",
    )


def paths_table(reports: list[RunReport]) -> TableData:
    found = [r.metrics.paths for r in reports]
    rows: list[list[str] | None] = [
        ["trials with a path", *[str(p.measured) for p in found]],
        ["optimal path rate", *[pct(p.optimal_path_rate) for p in found]],
        ["  passed in the fewest turns", *[f"{p.optimal} of {p.passed}" for p in found]],
        ["turns / fewest (passed)", *[num(p.turns_over_optimal, 2) for p in found]],
        None,
        ["progress rate (failed)", *[pct(p.progress_rate) for p in found]],
        ["  graded failed trials", *[str(p.progress_trials) for p in found]],
    ]
    return TableData(
        "Paths and progress (scored trials)",
        ["", *[r.label for r in reports]],
        rows,
        caption="path: model turns that made calls, against the fewest a perfect agent needs issuing independent calls at once;"
        " progress: share of the expected changes the failed trials made",
    )


def conversations_table(reports: list[RunReport]) -> TableData | None:
    """Scenarios and users who hold facts (None when no run has either)."""
    found = [r.metrics.conversations for r in reports]
    if not any(c.any for c in found):
        return None
    rows: list[list[str] | None] = [
        ["scenarios (scored)", *[str(c.scenarios) for c in found]],
        ["session accuracy", *[pct(c.session_accuracy) for c in found]],
        ["turn accuracy", *[pct(c.turn_accuracy) for c in found]],
    ]
    for kind in dict.fromkeys(k for c in found for k in c.by_kind):
        shares = [c.by_kind.get(kind) for c in found]
        rows.append([f"  {kind.replace('_', '-')} turns", *[_share(s, "turns") for s in shares]])
    rows += _position_rows(found)
    rows += _change_rows(found)
    rows += [None, ["asked before acting", *[f"{c.asked_first} of {c.asking}" if c.asking else DASH for c in found]]]
    return TableData(
        "Conversations",
        ["", *[r.label for r in reports]],
        rows,
        caption="session: a scenario whose every turn passed; turn N: turns passed at that position; switches: turns whose user"
        " changes a value mid-request; transitions: changes between task, clarify and chat turns from one turn to the next"
        " (sessions passed of sessions); asked before acting: tasks whose user holds facts (acting first fails the task)",
    )


def _position_rows(found: list[Conversations]) -> list[list[str] | None]:
    """Turns passed at each position (no rows when no run has scenarios of several turns)."""
    if not any(c.by_position for c in found):
        return []
    rows: list[list[str] | None] = [None]
    for position in dict.fromkeys(k for c in found for k in c.by_position):
        rows.append([f"turn {position}", *[_share(c.by_position.get(position), "turns") for c in found]])
    return rows


def _change_rows(found: list[Conversations]) -> list[list[str] | None]:
    """Sessions passed by how many switches, then by how many transitions, each block when any run has one."""
    rows: list[list[str] | None] = []
    for title, attr, noun in (("switch", "by_switches", "switches"), ("transition", "by_transitions", "transitions")):
        groups = [getattr(c, attr) for c in found]
        if any(groups):
            rows.append(None)
            for count in sorted(dict.fromkeys(k for g in groups for k in g), key=int):
                label = f"sessions, {count} {title if count == '1' else noun}"
                rows.append([label, *[_share(g.get(count), "scenarios") for g in groups]])
    return rows


def _share(group: dict[str, int] | None, total: str) -> str:
    """ "3 of 4": passed of the group's turns or scenarios."""
    return f"{group['passed']} of {group[total]}" if group else DASH


def failures_table(reports: list[RunReport]) -> TableData:
    fails = [r.metrics.failures for r in reports]
    rows: list[list[str] | None] = [["failed trials", *[f"{f.failed} of {r.metrics.overall.trials}" for f, r in zip(fails, reports)]]]
    for label, attr in (
        ("missing changes", "missing"),
        ("unexpected changes", "unexpected"),
        ("wrong values", "wrong"),
        ("no state change", "no_change"),
        ("ungraded", "ungraded"),
        ("unknown tool called", "unknown_tool"),
        ("invalid arguments", "invalid_arguments"),
        ("other tool errors", "other_tool_errors"),
    ):
        if attr == "ungraded" and not any(f.ungraded for f in fails):
            continue
        rows.append([label, *[count_share(getattr(f, attr), f.failed) for f in fails]])
    reasons = list(dict.fromkeys(reason for f in fails for reason in f.terminations))
    if reasons:
        rows.append(None)
        rows += [[f"ended by {reason}", *[count_share(f.terminations.get(reason, 0), f.failed) for f in fails]] for reason in reasons]
    rows.append(None)
    rows.append(["infra errors (not scored)", *[str(r.metrics.infra.count) for r in reports]])
    messages = list(dict.fromkeys(m for r in reports for m in r.metrics.infra.by_reason))
    rows += [[f"  {_short(m)}", *[str(r.metrics.infra.by_reason.get(m, 0)) for r in reports]] for m in messages]
    return TableData("Failures (failed scored trials; share of failed)", ["", *[r.label for r in reports]], rows)


def _short(text: str, width: int = 48) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def paper_table(reports: list[RunReport]) -> TableData | None:
    """The paper's main table (rows = runs; Avg3, Pass@3, Pass^3 per domain and overall), when every run
    has 3 trials per task; None otherwise."""
    if not reports or any(r.metrics.max_trials != PAPER_K for r in reports):
        return None
    domains = sorted({d for r in reports for d in r.metrics.domains})
    scopes = [(d, d) for d in domains] + [("overall", None)]
    columns = ["run"] + [f"{title}\n{m}" for title, _ in scopes for m in (f"Avg{PAPER_K}", f"Pass@{PAPER_K}", f"Pass^{PAPER_K}")]
    rows: list[list[str] | None] = []
    partial = False
    for r in reports:
        row = [r.label]
        for _, name in scopes:
            s = r.metrics.overall if name is None else r.metrics.domains.get(name)
            k = s.by_k.get(PAPER_K) if s else None
            partial = partial or bool(s and s.tasks and (k is None or k.tasks < s.tasks))
            row += [pct(s.avg) if s else DASH, pct(k.pass_at) if k else DASH, pct(k.pass_hat) if k else DASH]
        rows.append(row)
    caption = f"Pass@{PAPER_K} and Pass^{PAPER_K} over the tasks with {PAPER_K} scored trials" if partial else None
    return TableData(f"Paper layout (k = {PAPER_K})", columns, rows, caption=caption)


def baseline_tables(baseline: Baseline) -> list[TableData]:
    """The human baseline beside the runs: on the tasks people attempted, then task by task."""
    labels = list(baseline.runs)
    if not baseline.tasks:
        return [TableData("Human baseline", ["", BASELINE_LABEL], [["blind attempts at the reported tasks", "0"]])]
    columns = [baseline.human, *baseline.runs.values()]
    overall = TableData(
        "Human baseline",
        ["", BASELINE_LABEL, *labels],
        [
            ["trials", *[str(f.trials) for f in columns]],
            ["pass rate", *[pct(f.pass_rate) for f in columns]],
            ["median time", *[duration(f.median_seconds) for f in columns]],
            ["mean calls", *[num(f.mean_calls) for f in columns]],
        ],
        caption=f"runs: on the same {len(baseline.tasks)} task(s)",
    )
    rows: list[list[str] | None] = [
        [
            t.task,
            f"{t.human.passed}/{t.human.trials}",
            duration(t.human.median_seconds),
            num(t.human.mean_calls),
            *[pct(t.runs[label]) for label in labels],
        ]
        for t in baseline.tasks
    ]
    per_task = TableData(
        "Human baseline per task",
        ["task", "human passed", "human time", "human calls", *labels],
        rows,
        caption="time: median, calls: mean; a run: its pass rate",
    )
    return [overall, per_task]


def _gain(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:+.1f} pts"


def _relative(value: float | None) -> str:
    return DASH if value is None else f"{value:+.1%}"


def _change(tools: float | None, code: float | None) -> list[str]:
    """Cells for a per-task figure in both runs: tools, code, difference, relative difference."""
    diff = None if tools is None or code is None else code - tools
    return [
        num(tools),
        num(code),
        DASH if diff is None else f"{diff:+,.1f}",
        _relative(None if diff is None or not tools else diff / tools),
    ]


def frontier_table(found: Analyses) -> TableData:
    """One row per run: what it spends per task on each frontier axis and its Avg^k; * marks a frontier run."""
    axes = list(found.frontiers.values())
    labels = list(dict.fromkeys([p.label for f in axes for p in f.points] + [u for f in axes for u in f.unknown]))
    rows: list[list[str] | None] = []
    for label in labels:
        row, avg = [label], None
        for f in axes:
            point = next((p for p in f.points if p.label == label), None)
            row.append(
                DASH if point is None else num(point.x, {"cost": 4, "calls": 1}.get(f.axis, 0)) + (" *" if point.on_frontier else "")
            )
            avg = point.avg if point else avg
        rows.append([*row, pct(avg)])
    return TableData(
        "Cost-accuracy frontier",
        ["run", *[FRONTIER_AXES[f.axis] for f in axes], "Avg^k"],
        rows,
        caption="per task: mean over scored trials; * on the frontier (no run both spends less and scores higher); - unknown",
    )


def pair_table(pair: Pair) -> TableData:
    """Avg^k of a tools-mode run and a code-mode run of one model, overall, per domain and per capability, and the gain."""

    def line(name: str, gain: Gain) -> list[str]:
        return [name, pct(gain.tools), pct(gain.code), _gain(gain.absolute), _relative(gain.relative)]

    rows: list[list[str] | None] = [line("overall", pair.overall), None]
    rows += [line(name, gain) for name, gain in pair.domains.items()]
    rows.append(None)
    rows += [line(CAPABILITY_TITLES[name], gain) for name, gain in pair.capabilities.items()]
    rows += [
        None,
        ["calls issued / task", *_change(*pair.calls_issued)],
        ["total calls / task", *_change(*pair.calls)],
        ["turns / task", *_change(*pair.turns)],
    ]
    return TableData(
        f"Code vs tools: {pair.model}",
        ["", f"tools: {pair.tools}", f"code: {pair.code}", "gain", "relative"],
        rows,
        caption="Avg^k; gain: code minus tools (points), relative: of the tools run's figure; calls issued: top-level, "
        "an exec_code block one call; total calls: each block counted as the calls made inside it",
    )


USAGE_TITLES = {"all": "exec_code in every trial", "some": "exec_code in some trials", "none": "exec_code in no trial"}


def usage_table(label: str, groups: list[UsageGroup], paired_with: str | None) -> TableData:
    rows: list[list[str] | None] = [
        [
            USAGE_TITLES[g.group],
            str(len(g.tasks)),
            pct(g.avg),
            num(g.calls),
            num(g.turns),
            pct(g.tools_avg),
            num(g.tools_calls),
            num(g.tools_turns),
        ]
        for g in groups
    ]
    return TableData(
        f"Code usage: {label}",
        ["tasks whose trials used", "tasks", "Avg^k", "calls", "turns", "tools Avg^k", "tools calls", "tools turns"],
        rows,
        caption=f"calls, turns: per task; tools: the same tasks in {paired_with}" if paired_with else "no paired tools-mode run",
    )


def domain_efficiency_table(found: Analyses) -> TableData:
    rows: list[list[str] | None] = [
        [e.domain, e.run, e.mode or DASH, pct(e.avg), num(e.calls_issued), num(e.calls), num(e.turns), num(e.tokens, 0)]
        for e in sorted(found.efforts, key=lambda e: e.domain)
    ]
    return TableData(
        "Per-domain efficiency",
        ["domain", "run", "mode", "Avg^k", "calls issued / task", "total calls / task", "turns / task", "tokens / task"],
        rows,
        labels=3,
        caption="calls issued: top-level, an exec_code block one call; total calls: each block counted as the calls made inside it",
    )


EFFORT_TITLES = {"calls_issued": "calls issued", "calls": "total calls", "turns": "turns", "tokens": "tokens"}


def correlation_table(found: Analyses) -> TableData:
    """Pearson r of Avg^k with each effort: pooled, within each mode, within each domain."""

    def line(scope: str, found: list[Correlation]) -> list[str]:
        by_effort = {c.effort: c for c in found}
        cells = [DASH if by_effort[e].r is None else f"{by_effort[e].r:+.2f}" for e in EFFORTS]
        return [scope, str(max((c.points for c in found), default=0)), *cells]

    rows: list[list[str] | None] = [line("all runs", found.correlations)]
    if found.by_mode:
        rows += [None, *[line(f"{mode} mode", c) for mode, c in found.by_mode.items()]]
    if found.by_domain:
        rows += [None, *[line(domain, c) for domain, c in found.by_domain.items()]]
    return TableData(
        "Correlation of Avg^k with effort",
        ["runs", "points", *[EFFORT_TITLES[e] for e in EFFORTS]],
        rows,
        caption="Pearson r over (run, domain) pairs; within a mode, its runs only; within a domain, across runs; "
        f"{DASH}: fewer than two points or no spread",
    )


def analyses_tables(found: Analyses) -> list[TableData]:
    """The frontier, each code vs tools pair, each code run's usage groups, then effort per domain."""
    partner = {p.code: p.tools for p in found.pairs}
    return [
        frontier_table(found),
        *[pair_table(p) for p in found.pairs],
        *[usage_table(label, groups, partner.get(label)) for label, groups in found.usage.items()],
        domain_efficiency_table(found),
        correlation_table(found),
    ]


def tables(reports: list[RunReport], baseline: Baseline | None = None) -> list[TableData]:
    out = [summary_table(reports)]
    paper = paper_table(reports)
    if paper:
        out.append(paper)
    out += [
        scope_table(reports, "domains"),
        scope_table(reports, "capabilities"),
        efficiency_table(reports),
        paths_table(reports),
        *[table for table in [conversations_table(reports)] if table is not None],
        failures_table(reports),
    ]
    out += robustness_tables(reports)
    out += analyses_tables(analyses(reports))
    if baseline is not None:
        out += baseline_tables(baseline)
    return out


# --- CSV ----------------------------------------------------------------------------------------------


def _scope_rows(scope: str, s: ScopeScore) -> list[tuple[str, str, Any]]:
    rows: list[tuple[str, str, Any]] = [(scope, key, getattr(s, key)) for key in ("tasks", "trials", "passes", "infra_errors", "avg")]
    for k, ks in s.by_k.items():
        rows += [(scope, f"pass@{k}", ks.pass_at), (scope, f"pass^{k}", ks.pass_hat), (scope, f"tasks@{k}", ks.tasks)]
    return rows


# The conversations' groups in the long format: scope prefix, Conversations field.
_CONVERSATION_GROUPS = (
    ("turns", "by_kind"),
    ("turn_position", "by_position"),
    ("switches", "by_switches"),
    ("transitions", "by_transitions"),
)


def csv_rows(reports: list[RunReport], baseline: Baseline | None = None) -> list[dict[str, Any]]:
    """Long format: one row per (run, scope, metric). Scopes: overall, domain:NAME, capability:NAME,
    efficiency, paths, path:TASK, conversations, turns:KIND, turn_position:N, switches:N, transitions:N, failures, infra; the analyses' frontier:AXIS, code_vs_tools[:domain:NAME|:capability:NAME]
    (the code run's rows), code_usage:GROUP, domain_efficiency:NAME and correlation[:mode:MODE|:domain:NAME] (run empty);
    with a baseline, baseline and baseline:TASK (the people's figures as the run "human baseline").
    Rates are fractions (0..1); a missing value is empty."""
    out = []
    for r in reports:
        m = r.metrics
        rows = _scope_rows("overall", m.overall)
        for name, s in m.domains.items():
            rows += _scope_rows(f"domain:{name}", s)
        for name, s in m.capabilities.items():
            rows += _scope_rows(f"capability:{name}", s)
        eff = m.efficiency.to_dict()
        totals = eff.pop("totals")
        rows += [("efficiency", key, value) for key, value in eff.items()]
        rows += [("efficiency", f"{key}_total", value) for key, value in totals.items()]
        found = m.paths.to_dict()
        per_task = found.pop("tasks")
        rows += [("paths", key, value) for key, value in found.items()]
        rows += [(f"path:{task}", key, value) for task, figures in per_task.items() for key, value in figures.items()]
        talk = m.conversations.to_dict()
        groups = {scope: talk.pop(attr) for scope, attr in _CONVERSATION_GROUPS}
        rows += [("conversations", key, value) for key, value in talk.items()]
        for scope, by in groups.items():
            rows += [(f"{scope}:{name}", key, value) for name, figures in by.items() for key, value in figures.items()]
        fails = m.failures.to_dict()
        ends = fails.pop("terminations")
        rows += [("failures", key, value) for key, value in fails.items()]
        rows += [("failures", f"ended_by:{reason}", n) for reason, n in ends.items()]
        rows.append(("infra", "count", m.infra.count))
        rows += [("infra", f"reason:{reason}", n) for reason, n in m.infra.by_reason.items()]
        out += [
            {"run": r.label, "path": r.path, "scope": scope, "metric": metric, "value": "" if value is None else value}
            for scope, metric, value in rows
        ]
    return out + _analyses_rows(reports) + (_baseline_rows(reports, baseline) if baseline else [])


def _analyses_rows(reports: list[RunReport]) -> list[dict[str, Any]]:
    found = analyses(reports)
    rows: list[tuple[str, str, str, Any]] = []  # (run, scope, metric, value)
    for f in found.frontiers.values():
        for p in f.points:
            rows += [(p.label, f"frontier:{f.axis}", "x", p.x), (p.label, f"frontier:{f.axis}", "avg", p.avg)]
            rows.append((p.label, f"frontier:{f.axis}", "on_frontier", p.on_frontier))
        rows += [(label, f"frontier:{f.axis}", "x", None) for label in f.unknown]
    for pair in found.pairs:
        scopes = [("code_vs_tools", pair.overall)]
        scopes += [(f"code_vs_tools:domain:{name}", g) for name, g in pair.domains.items()]
        scopes += [(f"code_vs_tools:capability:{name}", g) for name, g in pair.capabilities.items()]
        for scope, gain in scopes:
            rows += [(pair.code, scope, metric, value) for metric, value in asdict(gain).items()]
        rows += [(pair.code, "code_vs_tools", "tools_run", pair.tools)]
        rows += [(pair.code, "code_vs_tools", "calls_tools", pair.calls[0]), (pair.code, "code_vs_tools", "calls_code", pair.calls[1])]
        rows += [(pair.code, "code_vs_tools", "turns_tools", pair.turns[0]), (pair.code, "code_vs_tools", "turns_code", pair.turns[1])]
        rows += [(pair.code, "code_vs_tools", "calls_issued_tools", pair.calls_issued[0])]
        rows += [(pair.code, "code_vs_tools", "calls_issued_code", pair.calls_issued[1])]
    for label, groups in found.usage.items():
        for g in groups:
            rows += [(label, f"code_usage:{g.group}", metric, value) for metric, value in g.to_dict().items() if metric != "task_ids"]
    for e in found.efforts:
        metrics = ("avg", "trials", "calls_issued", "calls", "turns", "tokens", "mode")
        rows += [(e.run, f"domain_efficiency:{e.domain}", m, getattr(e, m)) for m in metrics]
    scoped = [("correlation", found.correlations)]
    scoped += [(f"correlation:mode:{mode}", c) for mode, c in found.by_mode.items()]
    scoped += [(f"correlation:domain:{domain}", c) for domain, c in found.by_domain.items()]
    for scope, correlations in scoped:
        for c in correlations:
            rows += [("", scope, f"avg_vs_{c.effort}", c.r), ("", scope, f"points_{c.effort}", c.points)]
    paths = {r.label: r.path for r in reports}
    return [
        {"run": run, "path": paths.get(run, ""), "scope": scope, "metric": metric, "value": "" if value is None else value}
        for run, scope, metric, value in rows
    ]


def _baseline_rows(reports: list[RunReport], baseline: Baseline) -> list[dict[str, Any]]:
    """The baseline's figures: its own under BASELINE_LABEL (the sessions folder it was read from as
    the path), each run's on the same tasks under the run's label."""
    paths = {BASELINE_LABEL: baseline.source, **{r.label: r.path for r in reports}}
    rows: list[tuple[str, str, str, Any]] = []  # (run, scope, metric, value)
    for label, figures in [(BASELINE_LABEL, baseline.human), *baseline.runs.items()]:
        rows += [(label, "baseline", metric, value) for metric, value in figures.to_dict().items()]
    for task in baseline.tasks:
        rows += [(BASELINE_LABEL, f"baseline:{task.task}", metric, value) for metric, value in task.human.to_dict().items()]
        rows += [(label, f"baseline:{task.task}", "pass_rate", rate) for label, rate in task.runs.items()]
    return [
        {"run": run, "path": paths.get(run, ""), "scope": scope, "metric": metric, "value": "" if value is None else value}
        for run, scope, metric, value in rows
    ]


def write_csv(reports: list[RunReport], path: Path, baseline: Baseline | None = None) -> int:
    """Write `csv_rows` to `path`; returns the number of rows (OSError propagates)."""
    rows = csv_rows(reports, baseline)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)
