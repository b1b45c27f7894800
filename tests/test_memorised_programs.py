"""Composed tasks are a new test, not the suite with new values (issue 30): fixed programs learned
from the shipped suite (tests/memorised.py: one per template, recognising its phrasings and reading
the values back, then running its public solver) solve most of the suite, and at most 20% of a
composed private split, whose careful public solvers all pass."""

from __future__ import annotations

import pytest
from memorised import learn_programs, solved_by_a_program

from ebench.engine.domain_registry import get_domain
from ebench.tasks.certify import run_public
from ebench.tasks.composition import compose
from ebench.tasks.grading import grade
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.tasks.template_catalog import template_named
from ebench.tasks.worlds import task_world

DOMAINS = ("music", "meeting", "moba")
PRIVATE_TASKS = 15  # per domain: enough for a 20% bound to mean 3 tasks, quick to compose


@pytest.fixture(scope="module")
def suite():
    return load_suite(SUITE_DIR).tasks


@pytest.fixture(scope="module")
def programs(suite):
    return {domain: learn_programs(domain, suite) for domain in DOMAINS}


def test_the_programs_memorise_the_suite(suite, programs):
    """The control: the programs are real memorisers, solving most of the suite they learned from."""
    solved = [t for t in suite if solved_by_a_program(t, programs[t.domain])]
    assert len(solved) >= 0.75 * len(suite), f"{len(solved)} of {len(suite)}"
    assert {t.domain for t in solved} == set(DOMAINS)


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_composed_private_split_is_beyond_the_programs_and_within_the_public_solvers(domain, programs):
    tasks = compose(domain, PRIVATE_TASKS, seed=30, split="private").tasks
    assert len(tasks) == PRIVATE_TASKS
    by_programs = [t.id for t in tasks if solved_by_a_program(t, programs[domain])]
    assert len(by_programs) <= 0.2 * len(tasks), by_programs
    schema = get_domain(domain).schema
    for task in tasks:  # the careful way: the composed structure's own public solver, from the request's values
        template = template_named(domain, task.generator["template"])
        assert template is not None, task.generator["template"]
        run = run_public(template, domain, task_world(task), task.actor, task.generator["stated"])
        assert grade(task.expected_diff, run.diff, schema).passed, task.id
