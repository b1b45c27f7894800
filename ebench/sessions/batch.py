"""Headless batch scoring: tasks x trials by one solver configuration, into a run directory.

Trials run as asyncio tasks under a concurrency limit (model calls overlap; tool calls are fast
local SQLite work). Each finished trial appends one line to results.jsonl, so an interrupted run
(Ctrl-C, a crash) keeps what it finished and resumes where it stopped; a trial that ended in an
infrastructure error is run again on resume. Resuming with another configuration is refused
unless forced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..tasks.spec import Task
from .events import InternalErrorEvent
from .record import secret_values, trial_session_file
from .runs import (
    LOCK,
    MANIFEST,
    RESULTS,
    RUN_FORMAT,
    SESSIONS,
    RunError,
    RunLock,
    RunManifest,
    read_manifest,
    read_results,
    repair_results,
    write_json_atomic,
)
from .solvers.base import FatalSolverError, Solver
from .trial import INFRA_ERROR, TrialLimits, TrialSummary, open_trial


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class Progress:
    """What the progress bar shows, updated as trials end."""

    total: int
    done: int = 0
    passed: int = 0
    scored: int = 0
    infra: int = 0
    tokens: int = 0
    cost: float = 0.0
    cost_unknown: int = 0

    def add(self, summary: TrialSummary) -> None:
        self.done += 1
        if summary.infra_error:
            self.infra += 1
        else:
            self.scored += 1
            self.passed += summary.passed
        self.tokens += summary.tokens_in + summary.tokens_out
        if summary.cost is None:
            self.cost_unknown += 1
        else:
            self.cost += summary.cost

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.scored if self.scored else None


@dataclass
class Batch:
    out: Path
    tasks: list[Task]
    solver: Solver
    trials: int
    code: bool = False
    limits: TrialLimits = field(default_factory=TrialLimits)
    selection: dict[str, Any] = field(default_factory=dict)  # how the tasks were chosen (recorded)
    label: str = ""
    force: bool = False

    def __post_init__(self) -> None:
        self.config = {"solver": self.solver.config(), "code": self.code, "limits": self.limits.to_dict(), "tasks": self.selection}
        self.secrets = secret_values(self.config)
        self.todo: list[tuple[Task, int]] = []
        self.kept = 0
        self.lock = RunLock(self.out)
        self.warnings: list[str] = []  # damaged results lines skipped, a torn line repaired

    # -- the run directory -----------------------------------------------------------------
    def prepare(self) -> None:
        """Create the run directory, or check that an existing one has the same configuration;
        take its lock (one writer per run); list the trials still to run."""
        if self.out.exists() and not self.out.is_dir():
            raise RunError(f"--out {self.out} is a file, not a folder")
        manifest_path = self.out / MANIFEST
        if self.out.is_dir() and not manifest_path.exists() and any(p.name != LOCK for p in self.out.iterdir()):
            raise RunError(f"--out {self.out} is a folder with other things in it, not a run directory; use an empty or new folder")
        self.out.mkdir(parents=True, exist_ok=True)
        self.lock.acquire()
        try:
            self._prepare(manifest_path)
        except BaseException:
            self.lock.release()
            raise

    def _prepare(self, manifest_path: Path) -> None:
        digest = config_hash(self.config)
        ids = [t.id for t in self.tasks]
        if manifest_path.exists():
            try:
                manifest = read_manifest(manifest_path).to_dict()
            except RunError as exc:
                raise RunError(f"{exc}; use another --out") from None
            if manifest.get("config_hash") != digest and not self.force:
                raise RunError(
                    f"{self.out} was run with another configuration ({_changed(manifest.get('config', {}), self.config)}); "
                    "use another --out, or --force to continue it with the new one"
                )
            manifest.update(
                config=self.config,
                config_hash=digest,
                trials=max(self.trials, int(manifest.get("trials", 0))),
                tasks={"count": len(ids), "ids": ids},
                ended=None,
                status="running",
                resumed=_now(),
            )
        else:
            manifest = {
                "format": RUN_FORMAT,
                "label": self.label,
                "ebench_version": __version__,
                "config": self.config,
                "config_hash": digest,
                "trials": self.trials,
                "tasks": {"count": len(ids), "ids": ids},
                "started": _now(),
                "ended": None,
                "status": "running",
            }
        manifest["ebench_version"] = __version__
        suite = self.suite_record()
        if manifest.get("suite") and manifest["suite"].get("version") != suite["version"] and not self.force:
            raise RunError(
                f"{self.out} was run on suite version {manifest['suite'].get('version')}, these tasks are version "
                f"{suite['version']}; use another --out, or --force to mix them"
            )
        manifest["suite"] = suite
        self.manifest = manifest
        write_json_atomic(manifest_path, RunManifest.model_validate(manifest).to_dict())
        repaired = repair_results(self.out / RESULTS)
        if repaired:
            self.warnings.append(repaired)
        finished = {(r.task, r.trial) for r in read_results(self.out / RESULTS, self.warnings) if not r.infra_error}
        self.todo = [(task, k) for task in self.tasks for k in range(1, self.trials + 1) if (task.id, k) not in finished]
        self.kept = len(self.tasks) * self.trials - len(self.todo)

    def suite_record(self) -> dict[str, Any]:
        """The suite version of the tasks (from the folder's suite.json) and each world's fingerprint."""
        from ..tasks.suite import suite_version
        from ..tasks.worlds import task_seed, world_fingerprint

        folder = self.selection.get("dir")
        worlds = {}
        for task in self.tasks:
            seed = task_seed(task)
            worlds[f"{task.domain}:{seed}"] = world_fingerprint(task.domain, seed)
        return {"version": suite_version(Path(folder) if folder else None), "worlds": dict(sorted(worlds.items()))}

    def finish(self, status: str) -> None:
        try:
            self.manifest.update(status=status, ended=_now() if status == "finished" else None)
            write_json_atomic(self.out / MANIFEST, self.manifest)
        finally:
            self.lock.release()

    # -- running ---------------------------------------------------------------------------
    async def run(self, concurrency: int, on_trial: Callable[[TrialSummary], None] | None = None) -> list[TrialSummary]:
        """Run the remaining trials; a FatalSolverError stops everything (and propagates)."""
        semaphore = asyncio.Semaphore(max(1, concurrency))
        results_path = self.out / RESULTS
        summaries: list[TrialSummary] = []
        with results_path.open("a", encoding="utf-8") as results:
            stopping = asyncio.Event()  # a fatal error: trials still queued are not started

            async def one(task: Task, number: int) -> None:
                async with semaphore:
                    if stopping.is_set():
                        return
                    try:
                        summary = await self.run_trial(task, number)
                    except FatalSolverError:
                        stopping.set()
                        raise
                results.write(json.dumps(summary.to_dict(), ensure_ascii=False) + "\n")
                results.flush()
                summaries.append(summary)
                if on_trial:
                    on_trial(summary)

            jobs = [asyncio.create_task(one(task, number)) for task, number in self.todo]
            try:
                await asyncio.gather(*jobs)
            finally:
                for job in jobs:
                    job.cancel()
                await asyncio.gather(*jobs, return_exceptions=True)
        return summaries

    async def run_trial(self, task: Task, number: int) -> TrialSummary:
        path = trial_session_file(self.out / SESSIONS, task.id, number)
        session = str(path.relative_to(self.out))
        try:
            trial = open_trial(
                task, path, secrets=self.secrets, solver=self.solver.config(), code=self.code, trial_number=number, session_name=session
            )
        except Exception as exc:  # the task cannot start (its actor is unknown to the world): reported apart
            return TrialSummary.not_started(task, number, session, f"the trial could not start: {exc}")
        limits = self.limits.for_task(task)
        try:
            outcome = await self.solver.solve(trial, limits)
        except (asyncio.CancelledError, FatalSolverError, KeyboardInterrupt):
            trial.close()  # the session stays without its end: the trial runs again on resume
            raise
        except Exception as exc:  # a harness fault: recorded, and not counted against the solver
            trial.record(InternalErrorEvent(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()))
            summary = trial.finish(INFRA_ERROR, f"internal error: {type(exc).__name__}: {exc}")
        else:
            summary = trial.finish(outcome.termination, outcome.error)
        summary.limits = {"max_turns": limits.max_turns, "max_tool_calls": limits.max_tool_calls}
        return summary


def _changed(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> str:
    """The first differing configuration keys, for the refusal message."""
    keys = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            keys.append(_changed(a, b, f"{prefix}{key}."))
        else:
            keys.append(f"{prefix}{key}: {json.dumps(a)} -> {json.dumps(b)}")
    return "; ".join(k for k in keys if k)[:400] or "unknown difference"
