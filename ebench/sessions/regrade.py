"""Re-grading a run from its records: after a grader fix, or for trials made by an older version.

Each finished session's recorded final diff is graded again against the task's current expected
diff; results.jsonl is rewritten (atomically) with the new verdicts. The sessions themselves are
append-only records of what happened and are not changed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..engine.domain_registry import get_domain
from ..errors import InputError
from ..tasks.diff import diff_from_list
from ..tasks.grading import grade
from ..tasks.spec import Task
from ..tasks.suite import FIRST_SUITE_VERSION, load_suite, suite_version
from .record import SessionFileError, read_session
from .results import TrialSummary, grade_counts
from .runs import MANIFEST, RESULTS, RegradeNote, RunData, RunError, RunLock, RunManifest, load_run, write_json_atomic, write_text_atomic
from .users import asked_first_of, with_asked_first


class RegradeError(InputError, ValueError):
    pass


def run_tasks(manifest: RunManifest) -> dict[str, Task]:
    """The tasks a run was made from (the shipped suite, or the folder it named)."""
    selection = manifest.config.tasks if manifest.config else None
    folder = selection.dir if selection else None
    root = Path(folder) if folder else None
    if root is not None and not root.exists():
        raise RegradeError(f"the run's tasks ({root}) are gone")
    recorded = manifest.suite.version if manifest.suite else None
    if recorded is None and root is None:
        recorded = FIRST_SUITE_VERSION  # runs made before suite versions were recorded used the first suite
    current = suite_version(root)
    if recorded is not None and current is not None and str(recorded) != current:
        raise RegradeError(
            f"the run was made on suite version {recorded} and the tasks are now version {current}: "
            "regrading would score it against other tasks"
        )
    if selection is not None and selection.scenarios:
        from ..tasks.scenarios import load_scenarios

        return {s.id: s.as_task() for s in load_scenarios(root)[0]}
    return {t.id: t for t in load_suite(root).tasks}


def regrade_run(path: str | Path) -> dict[str, Any]:
    try:
        run = load_run(path)
    except RunError as exc:
        raise RegradeError(str(exc)) from None
    lock = RunLock(run.path)
    try:
        lock.acquire()  # never under a batch that is writing the same run
    except RunError as exc:
        raise RegradeError(str(exc)) from None
    try:
        return _regrade(run)
    finally:
        lock.release()


def _regrade(run: RunData) -> dict[str, Any]:
    tasks = run_tasks(run.manifest)
    changes: list[dict[str, Any]] = []
    problems: list[str] = list(run.warnings)
    regraded = skipped = 0
    updated: list[TrialSummary] = []
    for result in sorted(run.results, key=lambda r: (r.task, r.trial)):
        updated.append(result)
        if result.infra_error:
            skipped += 1
            continue
        task = tasks.get(result.task)
        if task is None:
            problems.append(f"{result.task}: no such task any more")
            skipped += 1
            continue
        if task.scenario is not None:  # graded turn by turn as it ran; its turns' records are kept as they are
            problems.append(f"{result.task}: a scenario is not regraded (its turns were graded as they ended)")
            skipped += 1
            continue
        try:
            session = read_session(run.path / result.session)
        except SessionFileError as exc:
            problems.append(str(exc))
            skipped += 1
            continue
        problems.extend(session.warnings)
        end = session.end
        try:
            final = diff_from_list(end.diff) if end is not None and isinstance(end.diff, list) else None
        except (KeyError, TypeError, ValueError, AttributeError):
            final = None
        if final is None:
            problems.append(f"{result.session}: the session has no readable final diff")
            skipped += 1
            continue
        rule = asked_first_of(task, session.events)
        verdict = with_asked_first(grade(task.expected_diff, final, get_domain(task.domain).schema), rule)
        if rule is not None:
            result.asked_first = not rule.early
        regraded += 1
        if verdict.passed != result.passed:
            changes.append({"task": result.task, "trial": result.trial, "was": result.passed, "now": verdict.passed})
        result.passed, result.grade, result.regraded = verdict.passed, grade_counts(verdict), __version__
    write_text_atomic(run.path / RESULTS, "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in updated))
    run.manifest.regraded = RegradeNote(at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), ebench_version=__version__)
    write_json_atomic(run.path / MANIFEST, run.manifest.to_dict())
    return {
        "run": str(run.path),
        "regraded": regraded,
        "skipped": skipped,
        "changed": len(changes),
        "changes": changes,
        "problems": problems,
    }
