"""The shipped task suite: its size and mix (the paper's), its validity, and its reproducibility."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.domains import domain_names
from ebench.tasks.generation import generate
from ebench.tasks.spec import CAPABILITIES
from ebench.tasks.suite import SUITE_DIR, load_suite, suite_stats, task_files

RECIPE = json.loads((SUITE_DIR / "suite.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def suite():
    report = load_suite()
    assert report.errors == []
    return report.tasks


def test_size_and_mix(suite):
    stats = suite_stats(suite)
    assert stats["tasks"] >= 323
    assert set(stats["domains"]) == set(domain_names())
    for name, domain in stats["domains"].items():
        assert domain["tasks"] >= 100, name
        for cap in CAPABILITIES:
            assert domain["capabilities"][cap]["share"] >= 0.08, (name, cap)
        assert set(domain["changes"]) == {"insert", "update", "delete"}, name
    rows = stats["changed_rows"]
    assert rows["min"] >= 3 and 15 <= rows["mean"] <= 40 and rows["max"] >= 100
    assert len({t.id for t in suite}) == len(suite)


def test_every_shipped_task_validates(ebench_home):
    result = CliRunner().invoke(app, ["tasks", "validate", "--json"])
    report = json.loads(result.output)
    assert report["problems"] == {} and result.exit_code == 0
    assert report["checked"] == report["passed"] == sum(RECIPE["counts"].values())


@pytest.mark.parametrize("domain", sorted(RECIPE["counts"]))
def test_the_suite_regenerates_byte_for_byte(domain, ebench_home):
    """Same seed, same tasks: the recipe in suite.json rebuilds every shipped file exactly."""
    report = generate(domain, RECIPE["counts"][domain], RECIPE["seed"])
    shipped = {p.stem: p.read_text(encoding="utf-8") for p in task_files(domain=domain)}
    regenerated = {t.id: t.to_json() for t in report.tasks}
    assert sorted(regenerated) == sorted(shipped)
    differing = [tid for tid in shipped if shipped[tid] != regenerated[tid]]
    assert differing == [], f"regenerate the suite (see suite.json): {differing[:5]}"
