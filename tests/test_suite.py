"""The shipped task suite: its size and shape (the paper's), certification, no duplicates, no
shortcut that passes, and its reproducibility."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.domain_registry import domain_names, get_domain
from ebench.engine.tools import WRITE
from ebench.tasks.generation import MAX_PER_SKELETON, MAX_PER_TARGET, MAX_PER_TEMPLATE, computed_from_answer, generate, solution_signature
from ebench.tasks.grading import signature
from ebench.tasks.public import biting_conditions
from ebench.tasks.spec import CAPABILITIES
from ebench.tasks.suite import SUITE_DIR, load_suite, suite_stats, task_files
from ebench.tasks.worlds import world_fingerprint

RECIPE = json.loads((SUITE_DIR / "suite.json").read_text(encoding="utf-8"))
PAPER_COUNTS = {"music": 104, "meeting": 109, "moba": 110}


@pytest.fixture(scope="module")
def suite():
    report = load_suite(SUITE_DIR)
    assert report.errors == []
    return report.tasks


def by_domain(suite):
    out: dict[str, list] = {}
    for task in suite:
        out.setdefault(task.domain, []).append(task)
    return out


def test_size_and_shape_close_to_the_papers(suite):
    stats = suite_stats(suite)
    assert set(stats["domains"]) == set(domain_names())
    for name, domain in stats["domains"].items():
        assert domain["tasks"] >= PAPER_COUNTS[name], name
        for cap in CAPABILITIES:
            assert domain["capabilities"][cap]["share"] >= 0.08, (name, cap)
        assert set(domain["changes"]) == {"insert", "update", "delete"}, name
        rows = domain["changed_rows"]
        assert rows["min"] >= 3 and 15 <= rows["mean"] <= 40 and rows["max"] >= 150, (name, rows)
        assert domain["certified"] == domain["tasks"], name


def test_long_work_and_many_templates(suite):
    for name, tasks in by_domain(suite).items():
        lengths = [len(t.reference_solution) for t in tasks]
        assert sum(lengths) / len(lengths) >= 15, name
        assert sum(n >= 40 for n in lengths) >= 0.10 * len(tasks), name
        per_template = Counter(t.generator["template"] for t in tasks)
        assert len(per_template) >= 25 and max(per_template.values()) <= MAX_PER_TEMPLATE, (name, per_template)
        writes = {n for n in get_domain(name).tools.names if get_domain(name).tools.get(n).kind == WRITE}
        assert writes <= {s.tool for t in tasks for s in t.reference_solution}, name


def test_no_trivial_task_and_no_number_from_the_answer(suite):
    """Every task has two stated conditions that bite, or a cross-step dependency; no request
    states a number the answer computes; `tasks stats` counts tasks by biting conditions."""
    trivial = [t.id for t in suite if biting_conditions(t.generator["bites"]) < 2 and "cross_step_dependency" not in t.capabilities]
    assert trivial == []
    assert [t.id for t in suite if computed_from_answer(t.query, t.expected_diff, t.reference_solution)] == []
    stats = suite_stats(suite)
    for name, domain in stats["domains"].items():
        assert sum(domain["biting_conditions"].values()) == domain["tasks"], name
    assert not any(re.search(r"\bexactly [\d:.,]+ (counts|included|is fine|stays)", t.query) for t in suite)


def test_no_duplicates_and_no_monoculture(suite):
    queries = Counter(" ".join(t.query.lower().split()) for t in suite)
    assert max(queries.values()) == 1
    schemas = {name: get_domain(name).schema for name in domain_names()}
    diffs = Counter((t.domain, signature(t.expected_diff, schemas[t.domain])) for t in suite)
    assert max(diffs.values()) == 1
    solutions = Counter((t.domain, solution_signature(t.reference_solution)) for t in suite)
    assert max(solutions.values()) == 1
    skeletons = Counter((t.domain, t.generator["template"], t.generator["phrasing"]) for t in suite)
    assert max(skeletons.values()) <= MAX_PER_SKELETON
    targets = Counter((t.domain, t.generator["template"], json.dumps(target)) for t in suite for target in t.generator["targets"])
    assert not targets or max(targets.values()) <= MAX_PER_TARGET


def test_every_task_records_its_world_and_a_budget_it_fits(suite):
    for task in suite:
        assert task.world["fingerprint"] == world_fingerprint(task.domain, task.world["seed"]), task.id
        assert task.budget["max_tool_calls"] >= max(100, 3 * len(task.reference_solution)), task.id
        assert task.budget["max_turns"] >= max(30, 3 * len(task.reference_solution)), task.id


def test_the_wording_rules_hold(suite):
    """The mechanical parts of docs/wording.md."""
    for task in suite:
        query = task.query
        assert not re.search(r"\b1 (likes|songs|plays|matches|wins|people|players)\b", query), task.id  # rule 5
        # rule 3: "ordered by name" for people (first name or surname?); teams and rooms may sort by name
        assert not re.search(r"order(ed)? by (their )?name\b", query, re.I), task.id
        assert "most practised" not in query.lower(), task.id  # rule 6
        assert not re.search(r"'[^']*\"[^']*'", query), task.id  # rule 8: no nested quotes


def test_every_shipped_task_validates(ebench_home):
    result = CliRunner().invoke(app, ["tasks", "validate", "--dir", str(SUITE_DIR), "--json"])
    report = json.loads(result.output)
    assert report["problems"] == {} and result.exit_code == 0
    assert report["checked"] == report["passed"] == report["public_solutions"] == sum(RECIPE["counts"].values())


@pytest.mark.parametrize("domain", sorted(PAPER_COUNTS))
def test_no_shortcut_passes_any_shipped_task(domain, ebench_home):
    result = CliRunner().invoke(app, ["tasks", "audit", "--dir", str(SUITE_DIR), "--domain", domain, "--json"])
    summary = json.loads(result.output)
    passed = {name: f["passed_ids"] for name, f in summary["shortcuts"].items() if f["passed"]}
    assert passed == {} and summary["uncertified"] == [] and result.exit_code == 0
    assert summary["tasks"] == RECIPE["counts"][domain]
    # ... and every correct way passes: each careful variant, on every task it applies to
    failed = {name: f["failed_ids"] for name, f in summary["careful"].items() if f["passed"] < f["tried"]}
    assert failed == {} and summary["careful_rate"] == 1.0
    assert summary["careful"]["reads_repeated"]["tried"] == summary["careful"]["extra_reads"]["tried"] == summary["tasks"]
    assert summary["clauses_without_bite"] == {} and summary["clauses_undeclared"] == [] and summary["open_terms"] == {}
    # the recorded audit (what `tasks stats` shows) says the same
    assert RECIPE["audit"]["clean"] and not any(RECIPE["audit"]["passed"].values())
    assert RECIPE["audit"]["careful_clean"] and all(f["passed"] == f["tried"] for f in RECIPE["audit"]["careful"].values())


@pytest.mark.parametrize("domain", sorted(RECIPE["counts"]))
def test_the_suite_regenerates_byte_for_byte(domain, ebench_home):
    """Same seed, same tasks: the recipe in suite.json rebuilds every shipped file exactly."""
    report = generate(domain, RECIPE["counts"][domain], RECIPE["seed"])
    shipped = {p.stem: p.read_text(encoding="utf-8") for p in task_files(SUITE_DIR, domain=domain)}
    regenerated = {t.id: t.to_json() for t in report.tasks}
    assert sorted(regenerated) == sorted(shipped)
    differing = [tid for tid in shipped if shipped[tid] != regenerated[tid]]
    assert differing == [], f"regenerate the suite (see suite.json): {differing[:5]}"
