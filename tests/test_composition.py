"""Composed tasks (ebench/tasks/composition.py): a grammar of certified parts, compiled to templates.

On a small composed set of the music domain: the same seed gives the same bytes; every task is
certified both ways (the careful public solver reaches the expected state, no lazy variant does,
every careful variant does); structures are recorded, counted and compared; the private split
shares no structure with the public one; and the commands (`tasks compose`, `stats`, `overlap`,
`validate`, `audit`) work on composed output.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.domain_registry import get_domain
from ebench.tasks.audit import audit_task
from ebench.tasks.certify import lazy_variants, run_public
from ebench.tasks.composition import (
    PREFIX,
    Bounds,
    Depth,
    compose,
    grammar_for,
    is_private,
    parse_structure,
    sample_structures,
    structure_problem,
    template_class,
)
from ebench.tasks.grading import grade
from ebench.tasks.public import biting_conditions
from ebench.tasks.structures import overlap, structure_stats, task_skeleton, task_structure
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.tasks.template_catalog import template_named

runner = CliRunner()
COUNT = 8


@pytest.fixture(scope="module")
def composed(music_world):
    return compose("music", COUNT, 5)


@pytest.fixture(scope="module")
def composed_dir(tmp_path_factory, music_world):
    out = tmp_path_factory.mktemp("composed")
    result = runner.invoke(app, ["tasks", "compose", "-d", "music", "-n", "5", "-s", "3", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.output)


def test_the_same_seed_gives_the_same_tasks_byte_for_byte(composed):
    assert len(composed.tasks) == COUNT
    again = compose("music", COUNT, 5)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in composed.tasks]
    other = compose("music", 3, 6)
    assert {task_structure(t) for t in other.tasks} != {task_structure(t) for t in composed.tasks[:3]}


def test_every_composed_task_passes_the_careful_solver_and_fails_every_lazy_one(composed, music_world):
    schema = get_domain("music").schema
    for task in composed.tasks:
        template = template_named("music", task.generator["template"])
        assert template is not None and template.name.startswith(PREFIX)
        correct = run_public(template, "music", music_world, task.actor, task.generator["stated"])
        assert grade(task.expected_diff, correct.diff, schema).passed, task.id
        lazy = lazy_variants(template)
        assert lazy, task.id  # every composed task states conditions
        stated = task.generator["stated"]
        failed = [
            v.label
            for v in lazy
            if not grade(task.expected_diff, run_public(template, "music", music_world, task.actor, stated, v).diff, schema).passed
        ]
        # every way of getting a condition wrong ends elsewhere, but a boundary's inclusivity where no candidate is on it
        assert set(failed) >= {v.label for v in lazy if v.mode != "off_by_one" or v.label in task.generator["bites"]}, task.id
        audit = audit_task(task, music_world)
        assert audit.certified and not any(audit.passed.values()), (task.id, audit.passed)
        assert not audit.careful_failed and sum(audit.careful_tried.values()) >= 2, (task.id, audit.careful_failed)
        assert audit.clauses == [] and audit.open_terms == [], task.id


def test_a_composed_task_records_its_structure_and_skeleton(composed):
    grammar = grammar_for("music")
    assert grammar is not None
    for task in composed.tasks:
        tree = task.generator["structure"]
        structure = parse_structure("music", tree["id"])
        assert structure.canonical() == tree["id"] and structure.depth == tree["depth"]
        assert task.generator["template"] == structure.name and task.generator["kind"] == "composed"
        assert structure_problem(grammar, structure) is None
        skeleton = task.generator["skeleton"]
        assert "{}" in skeleton and skeleton == task_skeleton(task)
        # no stated value in the skeleton: it is the wording with the values abstracted
        assert not any(isinstance(v, str) and len(v) > 3 and v in skeleton for v in task.generator["stated"].values())
        assert len(template_class(grammar, structure).phrasings) >= 3


def test_structures_are_counted(composed):
    stats = structure_stats(composed.tasks)
    assert stats["tasks"] == COUNT and stats["composed"] == COUNT
    assert stats["distinct_structures"] == COUNT  # a structure gives one task of a set
    assert stats["largest_structure_share"] == pytest.approx(1 / COUNT, abs=1e-4)
    assert sum(stats["depth"]["counts"].values()) == COUNT and stats["depth"]["min"] >= 2
    assert stats["biting_conditions"]["min"] >= 1 and stats["reference_length"]["min"] >= 2
    shipped = load_suite(SUITE_DIR, domain="music").tasks
    shipped_stats = structure_stats(shipped)
    assert shipped_stats["composed"] == 0 and shipped_stats["distinct_structures"] < len(shipped)


def test_overlap_of_structures_and_skeletons(composed):
    same = overlap(composed.tasks, composed.tasks)
    assert same["structure_overlap"] == 1.0 and same["skeleton_overlap"] == 1.0
    shipped = load_suite(SUITE_DIR, domain="music").tasks
    against = overlap(shipped, composed.tasks)
    assert against["structure_overlap"] == 0.0 and against["b_tasks"] == COUNT
    half = overlap(composed.tasks[:4], composed.tasks)
    assert half["structure_overlap"] == 0.5 and half["same_structure"] == [t.id for t in composed.tasks[:4]]


def test_the_private_split_shares_no_structure_with_the_public_one(music_world):
    grammar = grammar_for("music")
    assert grammar is not None
    public = sample_structures(grammar, 1, 300)
    private = sample_structures(grammar, 1, 300, split="private")
    assert public and private
    assert not {s.canonical() for s in public} & {s.canonical() for s in private}
    assert all(is_private(s, grammar) for s in private) and not any(is_private(s, grammar) for s in public)
    private_parts = {p.key for p in grammar.parts() if p.private}
    assert private_parts and not private_parts & {k for s in public for k in s.part_keys()}
    report = compose("music", 2, 1, split="private")
    assert [t.id for t in report.tasks] == ["music-p1-0001", "music-p1-0002"]
    assert all(
        t.generator["split"] == "private" and is_private(parse_structure("music", t.generator["structure"]["id"]), grammar)
        for t in report.tasks
    )


def test_depth_is_a_parameter():
    assert Depth.parse("3") == Depth(3, 3) and Depth.parse("2-4") == Depth(2, 4)
    for bad in ("1", "5-3", "x", "2-9"):
        with pytest.raises(ValueError):
            Depth.parse(bad)
    grammar = grammar_for("music")
    assert grammar is not None
    assert {s.depth for s in sample_structures(grammar, 2, 40, depth=Depth(4, 4))} == {4}


def test_biting_conditions_and_reference_length_are_parameters(music_world):
    bounds = Bounds(conditions=(3, 4), calls=(10, 40))
    report = compose("music", 6, 3, bounds=bounds)
    assert len(report.tasks) == 6
    assert all(3 <= biting_conditions(t.generator["bites"]) <= 4 and 10 <= len(t.reference_solution) <= 40 for t in report.tasks)
    assert report.rejected["biting conditions out of --conditions"] + report.rejected["reference length out of --calls"] > 0
    assert Bounds.parse_range("--calls", "7") == (7, 7) and Bounds.parse_range("--calls", None) is None


def test_compose_writes_json_and_files(composed_dir):
    out, summary = composed_dir
    assert summary["written"] == 5 and summary["split"] == "public" and summary["distinct_structures"] == 5
    assert summary["domain"] == "music" and isinstance(summary["rejected"], dict)
    assert [p.stem for p in sorted((out / "music").glob("*.json"))] == [f"music-c3-{i:04d}" for i in range(1, 6)]
    again = runner.invoke(app, ["tasks", "compose", "-d", "music", "-n", "1", "-o", str(out)])
    assert again.exit_code == 2 and "--force" in again.output


def test_the_tasks_do_not_depend_on_how_many_processes_make_them(composed_dir):
    out, _ = composed_dir  # the command ran its shards in processes of their own (--workers defaults to the cores)
    shipped = load_suite(SUITE_DIR, domain="music").tasks
    in_process = compose("music", 5, 3, avoid=shipped, workers=1)
    assert [t.to_json() for t in in_process.tasks] == [p.read_text(encoding="utf-8") for p in sorted((out / "music").glob("*.json"))]


def test_validate_audit_stats_and_overlap_on_composed_output(composed_dir):
    out, _ = composed_dir
    validated = runner.invoke(app, ["tasks", "validate", "--dir", str(out), "--json"])
    assert validated.exit_code == 0, validated.output
    assert json.loads(validated.output)["public_solutions"] == 5
    audited = runner.invoke(app, ["tasks", "audit", "--dir", str(out), "--json"])
    assert audited.exit_code == 0, audited.output
    summary = json.loads(audited.output)
    assert summary["clean"] and summary["careful_clean"] and summary["uncertified"] == []
    stats = json.loads(runner.invoke(app, ["tasks", "stats", "--dir", str(out), "--json"]).output)
    assert stats["structure"]["distinct_structures"] == 5 and stats["domains"]["music"]["structure"]["composed"] == 5
    text = runner.invoke(app, ["tasks", "stats", "--dir", str(out)])
    assert text.exit_code == 0 and "5 distinct of 5 tasks" in text.output
    result = runner.invoke(app, ["tasks", "overlap", str(SUITE_DIR), str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["structure_overlap"] == 0.0
    self_overlap = runner.invoke(app, ["tasks", "overlap", str(out), str(out)])
    assert self_overlap.exit_code == 0 and "structure overlap: 100.0%" in self_overlap.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-d", "nowhere"], "unknown domain"),
        (["-d", "music", "--split", "secret"], "--split"),
        (["-d", "music", "--depth", "9"], "--depth"),
        (["-d", "music", "--conditions", "4-2"], "--conditions"),
        (["-d", "music", "--calls", "many"], "--calls"),
    ],
)
def test_compose_usage_errors_are_one_line(args, message, tmp_path):
    result = runner.invoke(app, ["tasks", "compose", "-n", "1", "-o", str(tmp_path), *args])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_overlap_of_a_missing_folder_is_a_usage_error(tmp_path):
    result = runner.invoke(app, ["tasks", "overlap", str(tmp_path / "nope"), str(SUITE_DIR)])
    assert result.exit_code == 2 and "no such folder" in result.output
