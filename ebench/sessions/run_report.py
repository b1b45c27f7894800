"""One run as a report reads it: its manifest, its trials and their metrics, and the settings a
report shows (solver, model, limits). report.py builds them and lays them out; analyses.py pairs
and compares them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .metrics import RunMetrics
from .results import TrialSummary
from .runs import RunManifest

NO_VALUE = "-"  # a number that does not exist (no scored trial, a setting the run did not record)


@dataclass
class RunReport:
    label: str  # unique among the runs of one report
    path: str
    manifest: RunManifest
    metrics: RunMetrics
    raised: int = 0  # tasks whose budget raised the run's limits
    results: list[TrialSummary] = field(default_factory=list, repr=False)  # the run's trials (the baseline compares them)

    def suite_version(self) -> str | None:
        return self.manifest.suite.version if self.manifest.suite else None

    def limits(self) -> str:
        """The run's limits, and how many tasks their budget raised them for."""
        limits = self.manifest.config.limits if self.manifest.config else None
        if limits is None:
            return NO_VALUE
        shown = limits.to_dict()  # the limits as recorded: one not recorded shows as "-"
        text = f"{shown.get('max_turns', NO_VALUE)} turns / {shown.get('max_tool_calls', NO_VALUE)} calls"
        return text + (f"; raised for {self.raised} task(s) by their budget" if self.raised else "")

    def config(self, key: str) -> Any:
        return self.manifest.setting(key)

    # The solver is a name or, as batch runs write it, an object {name, model, ...}; trials sit in the
    # config or beside it. Both shapes are read.
    def solver(self) -> str | None:
        return self.manifest.config.solver_name if self.manifest.config else None

    def model(self) -> str | None:
        return self.config("model") or (self.manifest.config.solver_model if self.manifest.config else None)

    def trials(self) -> int | None:
        return self.config("trials") or self.manifest.trials

    def tasks_planned(self) -> int | None:
        return self.manifest.tasks.count if self.manifest.tasks else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "path": self.path,
            "solver": self.solver(),
            "model": self.model(),
            "trials": self.trials(),
            "config_hash": self.manifest.config_hash,
            "ebench_version": self.manifest.ebench_version,
            "tasks_planned": self.tasks_planned(),
            "started": self.manifest.started,
            "ended": self.manifest.ended,
            "suite_version": self.suite_version(),
            "limits": self.config("limits"),
            "limits_raised_for_tasks": self.raised,
            "metrics": self.metrics.to_dict(),
        }
