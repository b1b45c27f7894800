"""Order-insensitive grading on the real suite: every shipped task's reference solution, with its
runs of independent calls shuffled, still passes when the product accepts that order.

A run is a stretch of consecutive calls to the same tool whose results no later step uses (a
batch of invitations, favourites, purchases); shuffling it changes the order of the writes and
the ids new rows get, never what the user asked for. An order the product refuses (a room that
would be over capacity midway) is not a valid order and is skipped, and counted.
"""

from __future__ import annotations

import random

import pytest

from ebench.engine.domain_registry import get_domain
from ebench.tasks.grading import grade
from ebench.tasks.reference import ReferenceFailed, run_steps
from ebench.tasks.suite import SUITE_DIR, load_suite

TASKS = load_suite(SUITE_DIR).tasks  # every shipped task


def _references(args, out: set[int]) -> None:
    if isinstance(args, dict):
        if "$from" in args:
            out.add(args["$from"])
        for value in args.values():
            _references(value, out)
    elif isinstance(args, list):
        for value in args:
            _references(value, out)


def shuffled(steps, seed: str):
    """The steps with each run of independent same-tool calls shuffled (None if nothing can move)."""
    used: set[int] = set()
    for step in steps:
        _references(step.args, used)
    rng = random.Random(seed)
    order = list(range(len(steps)))
    start = 0
    while start < len(steps):
        end = start
        while end + 1 < len(steps) and steps[end + 1].tool == steps[start].tool:
            end += 1
        run = list(range(start, end + 1))
        if len(run) > 1 and not used & set(run):
            moved = run[:]
            rng.shuffle(moved)
            order[start : end + 1] = moved
        start = end + 1
    if order == list(range(len(steps))):
        return None
    return [steps[i] for i in order]


@pytest.fixture(scope="module")
def outcomes(music_world, meeting_world, moba_world):
    results = {"passed": 0, "refused": 0, "unchanged": 0, "failed": []}
    for task in TASKS:
        steps = shuffled(task.reference_solution, task.id)
        if steps is None:
            results["unchanged"] += 1
            continue
        try:
            run = run_steps(task.domain, task.actor, steps)
        except ReferenceFailed:
            results["refused"] += 1
            continue
        verdict = grade(task.expected_diff, run.diff, get_domain(task.domain).schema)
        if verdict.passed:
            results["passed"] += 1
        else:
            results["failed"].append((task.id, verdict.summary()))
    return results


def test_shuffled_reference_solutions_still_pass(outcomes):
    assert outcomes["failed"] == []


def test_the_shuffle_reaches_most_of_the_suite_in_every_domain(outcomes):
    """Guard against a vacuous pass: most tasks really ran in another order."""
    assert outcomes["passed"] >= 150, outcomes
    moved = {t.domain for t in TASKS if shuffled(t.reference_solution, t.id) is not None}
    assert moved == {"music", "meeting", "moba"}
