"""What a long batch holds at once: the trials running, not every trial waiting its turn, and the
trials running a mix of the batch's tasks rather than many trials of one (whose copies and
conversations peak together); the results are those of one trial at a time."""

from __future__ import annotations

import asyncio
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from ebench.sessions.batch import Batch
from ebench.sessions.executors import interleaved
from ebench.sessions.solvers.simple import OracleSolver
from ebench.sessions.trial import MANY_COPIES
from ebench.tasks.suite import SUITE_DIR, load_suite

TASKS = 6
TRIALS = 24  # a task's trials: more than MANY_COPIES / TASKS, as in a long batch


class _Watcher(OracleSolver):
    """The oracle, noting the event loop's tasks and each task's trials running while it solves."""

    def __init__(self) -> None:
        self.running: Counter[str] = Counter()
        self.most_of_one_task = 0
        self.most_loop_tasks = 0

    async def solve(self, trial, limits, *, step=None):
        task = trial.task.id
        self.running[task] += 1
        self.most_of_one_task = max(self.most_of_one_task, self.running[task])
        self.most_loop_tasks = max(self.most_loop_tasks, len(asyncio.all_tasks()))
        try:
            for _ in range(3):  # every trial the same length in turns of the loop: the trials running overlap alike
                await asyncio.sleep(0)
            return await super().solve(trial, limits, step=step)
        finally:
            self.running[task] -= 1


def _comparable(out: Path) -> list[dict]:
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for line in lines:
        line.pop("seconds")
    return sorted(lines, key=lambda line: (line["task"], line["trial"]))


def _sessions(out: Path) -> dict[str, list[dict]]:
    found = {}
    for path in sorted((out / "sessions").rglob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text().splitlines()]
        for event in events:  # times and durations are the run's, not its results
            for key in ("t", "started", "seconds"):
                event.pop(key, None)
            if isinstance(event.get("summary"), dict):
                event["summary"].pop("seconds", None)
        found[str(path.relative_to(out))] = events
    return found


@pytest.fixture(scope="module")
def tasks(moba_world):
    return load_suite(SUITE_DIR, domain="moba").tasks[:TASKS]


def _run(out: Path, tasks, concurrency: int) -> _Watcher:
    solver = _Watcher()
    batch = Batch(out, tasks, solver, TRIALS)
    batch.prepare()
    asyncio.run(batch.run(concurrency))
    batch.finish("finished")
    assert len(batch.summaries) == TASKS * TRIALS
    return solver


def test_a_long_batch_holds_its_running_trials_only_a_mix_of_its_tasks_and_gives_the_same_results(tmp_path, tasks):
    many = _run(tmp_path / "many", tasks, MANY_COPIES)
    # One task (and coroutine) a trial running, not one a trial of the batch: those waiting their
    # turn held memory to the batch's end, more the longer it is (144 here).
    assert many.most_loop_tasks <= MANY_COPIES + 1  # the lanes and the batch's own
    # The trials running are a mix of the tasks (the batch lists a task's trials together: in that
    # order, 24 of one task ran at once), so that the longest tasks' trials do not peak together.
    assert many.most_of_one_task <= math.ceil(MANY_COPIES / TASKS) + 1
    one = _run(tmp_path / "one", tasks, 1)
    assert one.most_of_one_task == 1
    assert _comparable(tmp_path / "many") == _comparable(tmp_path / "one")
    assert _sessions(tmp_path / "many") == _sessions(tmp_path / "one")
    assert all(line["passed"] for line in _comparable(tmp_path / "one"))


def test_interleaved_takes_each_tasks_trials_in_rounds_in_their_order(tasks):
    a, b, c = tasks[:3]
    todo = [(a, 1), (a, 2), (a, 3), (b, 1), (c, 2), (c, 3)]
    assert interleaved(todo) == [(a, 1), (b, 1), (c, 2), (a, 2), (c, 3), (a, 3)]
    assert interleaved([]) == []


def test_a_batch_that_counts_its_trials_as_they_end_keeps_no_summary(tmp_path, tasks):
    seen = []
    batch = Batch(tmp_path / "run", tasks[:2], OracleSolver(), 10)
    batch.keep_summaries = False
    batch.prepare()
    batch.execute(4, seen.append)
    batch.finish("finished")
    assert batch.summaries == []  # the CLI's way: a summary a trial was kept to the batch's end, more the longer it is
    assert len(seen) == 20 and all(summary.passed for summary in seen)
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 20


def test_every_trials_list_of_its_domains_schemas_is_encoded_once_and_the_kept_lists_are_bounded(moba_world):
    from ebench.engine.domain_registry import get_domain
    from ebench.sessions import openai_lean as lean

    shared = get_domain("moba").tools.openai_schemas()
    lean._tools.clear()
    first = lean.encoded_tools(list(shared))
    assert first == lean.dumps(list(shared))
    for _ in range(100):  # each trial's own list of the same schemas (Trial.tool_schemas): one entry, not one a trial
        assert lean.encoded_tools(list(shared)) is first
    assert len(lean._tools) == 1
    for number in range(100):  # schemas of a trial's own (perturbed): encoded each time, the lists kept bounded
        own = [{**schema, "n": number} for schema in shared]
        assert lean.encoded_tools(own) == lean.dumps(own)
    assert len(lean._tools) <= lean._TOOLS_KEPT
