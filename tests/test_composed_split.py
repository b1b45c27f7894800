"""The shipped composed split (issue 30): 100 certified tasks per domain, each its own structure,
none a structure of the paper-shaped suite, rebuilt byte for byte by the command its record
names, and run by `ebench run --batch --split composed`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.tasks.composition import COMPOSED_DIR, COMPOSED_VERSION, compose
from ebench.tasks.structures import overlap, task_structure
from ebench.tasks.suite import SPLITS, SUITE_DIR, load_suite, suite_info

DOMAINS = ("meeting", "moba", "music")


@pytest.fixture(scope="module")
def composed():
    report = load_suite(COMPOSED_DIR)
    assert not report.errors
    return report.tasks


def test_the_split_holds_100_tasks_a_domain_each_its_own_structure_and_none_of_the_suite(composed):
    assert SPLITS["composed"] == COMPOSED_DIR
    record = suite_info(COMPOSED_DIR)
    assert record["version"] == COMPOSED_VERSION and sorted(record["domains"]) == list(DOMAINS)
    for domain in DOMAINS:
        mine = [t for t in composed if t.domain == domain]
        assert len(mine) == record["domains"][domain]["count"] == 100
        assert len({task_structure(t) for t in mine}) == 100
        assert all(t.id.startswith(f"{domain}-c-") and t.generator["split"] == "public" for t in mine)
    assert overlap(load_suite(SUITE_DIR).tasks, composed)["structure_overlap"] == 0


def test_the_record_names_the_command_that_rebuilds_a_domain_byte_for_byte(composed):
    domain = "moba"  # the quickest to compose; the others are made the same way
    entry = suite_info(COMPOSED_DIR)["domains"][domain]
    shipped = load_suite(SUITE_DIR, domain=domain).tasks
    again = compose(domain, entry["count"], entry["seed"], id_prefix=f"{domain}-c", avoid=shipped).tasks
    files = sorted((COMPOSED_DIR / domain).glob("*.json"))
    assert [t.id for t in again] == [p.stem for p in files]
    assert all(t.to_json() == p.read_text(encoding="utf-8") for t, p in zip(again, files))


def test_run_split_composed_scores_the_composed_tasks(tmp_path, composed):
    chosen = [t.id for t in composed if t.domain == "meeting"][:5]
    out = tmp_path / "run"
    args = ["run", "--batch", "--solver", "oracle", "--split", "composed", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, *[part for task in chosen for part in ("--task", task)]])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task"] for r in lines) == sorted(chosen) and all(r["passed"] for r in lines)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suite"]["version"] == COMPOSED_VERSION
