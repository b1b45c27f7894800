"""Headless batch scoring: tasks x trials by one solver configuration, into a run directory.

Trials run as asyncio tasks under a concurrency limit (model calls overlap; tool calls are fast
local SQLite work), in this process or spread over worker processes or a Ray cluster
(executors.py). Each finished trial appends one line to results.jsonl, so an interrupted run
(Ctrl-C, a crash) keeps what it finished and resumes where it stopped; a trial that ended in an
infrastructure error is run again on resume. Resuming with another configuration is refused
unless forced.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..tasks.spec import Task
from .executors import TrialRunner, WorkerPool, freeze_imports, preload_worlds, run_in_processes, run_on_ray
from .perturb import Perturbation
from .record import secret_values
from .results import TrialSummary
from .runs import (
    LOCK,
    MANIFEST,
    RESULTS,
    RUN_FORMAT,
    RunError,
    RunLock,
    RunManifest,
    read_manifest,
    read_results,
    repair_results,
    write_json_atomic,
)
from .solvers.base import Solver
from .trial import TrialLimits
from .users import UserSettings


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
    user: UserSettings = field(default_factory=UserSettings)
    perturb: Perturbation = field(default_factory=Perturbation)  # perturb.py; recorded only when set
    # The summaries of the trials this session runs are kept in `summaries` (what `run` returns);
    # a caller that counts them as they end (the CLI's progress) sets this false and keeps none:
    # 7 KB a trial, 22 MB over 3,072 trials, growing with the batch (results.jsonl has them all).
    keep_summaries = True  # not a field: set on the batch, not given to it

    def __post_init__(self) -> None:
        self.config = {"solver": self.solver.config(), "code": self.code, "limits": self.limits.to_dict(), "tasks": self.selection}
        if self.user.config():  # the default user is not recorded: a run made before users resumes
            self.config["user"] = self.user.config()
        if self.perturb:  # a clean run's configuration (and hash) is what it was before perturbations
            self.config["perturb"] = self.perturb.to_dict()
        self.secrets = secret_values(self.config)
        self.todo: list[tuple[Task, int]] = []
        self.kept = 0
        self.lock = RunLock(self.out)
        self.warnings: list[str] = []  # damaged results lines skipped, a torn line repaired
        self.summaries: list[TrialSummary] = []  # the trials this session ran, as they ended

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
    @property
    def runner(self) -> TrialRunner:
        return TrialRunner(self.out, self.solver, self.code, self.limits, self.secrets, self.user, self.perturb)

    async def run(self, concurrency: int, on_trial: Callable[[TrialSummary], None] | None = None) -> list[TrialSummary]:
        """Run the remaining trials in this process; a FatalSolverError stops everything (and propagates)."""
        with self._recorder(on_trial) as record:
            await self.runner.run_all(self.todo, concurrency, record)
        return self.summaries

    def execute(
        self,
        concurrency: int,
        on_trial: Callable[[TrialSummary], None] | None = None,
        *,
        workers: int = 1,
        pool: WorkerPool | None = None,
        executor: str = "local",
        ray_address: str | None = None,
    ) -> list[TrialSummary]:
        """Run the remaining trials here (`workers` 1), in `workers` processes (on `pool`, else on
        a pool started here), or on Ray; the results file is written by this process only,
        whichever runs them."""
        freeze_imports()
        if executor == "ray":
            with self._recorder(on_trial) as record:
                run_on_ray(self.runner, self.todo, concurrency, self.manifest["suite"]["worlds"], record, ray_address)
        elif pool is not None:
            with self._recorder(on_trial) as record:
                run_in_processes(pool, self.runner, self.todo, concurrency, record)
        elif workers > 1 and len(self.todo) > 1:
            with self.worker_pool(workers) as started:
                self.execute(concurrency, on_trial, pool=started)
        else:
            asyncio.run(self.run(concurrency, on_trial))
        return self.summaries

    def worker_pool(self, workers: int) -> WorkerPool:
        """Worker processes for this batch, started now (before any progress bar's thread, so
        they can be forked); they do not keep the run's lock."""
        todo = self.todo
        return WorkerPool(min(workers, len(todo)), inherited=self.lock.fds, preload=lambda: preload_worlds(task for task, _ in todo))

    @contextmanager
    def _recorder(self, on_trial: Callable[[TrialSummary], None] | None) -> Iterator[Callable[[TrialSummary], None]]:
        """The one writer of results.jsonl: each summary's line, appended as it arrives."""
        self.summaries = []
        with (self.out / RESULTS).open("a", encoding="utf-8") as results:

            def record(summary: TrialSummary) -> None:
                results.write(json.dumps(summary.to_dict(), ensure_ascii=False) + "\n")
                results.flush()
                if self.keep_summaries:
                    self.summaries.append(summary)
                if on_trial:
                    on_trial(summary)

            yield record


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
