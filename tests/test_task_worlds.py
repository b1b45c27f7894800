"""A task runs only on the world it was made on, within limits it can be solved in."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.solvers.simple import OracleSolver
from ebench.sessions.trial import MAX_TOOL_CALLS, Trial, TrialLimits
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.tasks.task_check import check_task
from ebench.tasks.worlds import WorldMismatch, check_world, task_seed, world_fingerprint


@pytest.fixture(scope="module")
def task(music_world):
    return load_suite(SUITE_DIR, domain="music").tasks[0]


def _elsewhere(task):
    """The task as if made on a world this ebench does not build."""
    return task.model_copy(update={"world": {"seed": task_seed(task), "fingerprint": "0123456789abcdef01234567"}})


def test_a_task_on_another_world_is_refused_everywhere(task, tmp_path):
    moved = _elsewhere(task)
    with pytest.raises(WorldMismatch, match="regenerate the task"):
        check_world(moved)
    with pytest.raises(WorldMismatch):
        Trial(moved)
    check = check_task(moved)
    assert not check.ok and check.problems[0].startswith("world: task")
    # the command line says it in one line, before any trial starts
    folder = tmp_path / "tasks" / "music"
    folder.mkdir(parents=True)
    (folder / f"{task.id}.json").write_text(moved.to_json(), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["run", "--batch", "--solver", "oracle", "--tasks-dir", str(tmp_path / "tasks"), "--out", str(tmp_path / "run")]
    )
    assert result.exit_code == 2
    assert "was made on the music world 0123456789abcdef01234567" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def test_a_task_without_a_world_record_runs_on_the_default_world(task, music):
    older = task.model_copy(update={"world": {}})
    check_world(older)
    assert task_seed(older) == music.default_seed


def test_the_fingerprint_recorded_is_the_one_this_ebench_builds(task):
    if task.world:  # the shipped suite records its world
        assert task.world["fingerprint"] == world_fingerprint("music", task.world["seed"])


def test_a_task_budget_raises_the_limits_never_lowers_them(task):
    limits = TrialLimits(max_turns=30, max_tool_calls=100)
    assert limits.for_task(task.model_copy(update={"budget": {}})) is limits
    raised = limits.for_task(task.model_copy(update={"budget": {"max_tool_calls": 150, "max_turns": 12}}))
    assert (raised.max_tool_calls, raised.max_turns) == (150, 30)


def test_the_oracle_runs_under_the_same_limits_as_any_solver(task):
    trial = Trial(task.model_copy(update={"budget": {}}))
    outcome = asyncio.run(OracleSolver().solve(trial, TrialLimits(max_tool_calls=2)))
    assert outcome.termination == MAX_TOOL_CALLS and trial.tool_calls == 2
    trial.close()


def test_the_run_manifest_records_the_suite_and_its_worlds(task, tmp_path):
    result = CliRunner().invoke(app, ["run", "--batch", "--solver", "noop", "--task", task.id, "--out", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    seed = task_seed(task)
    assert manifest["suite"]["worlds"] == {f"music:{seed}": world_fingerprint("music", seed)}
    assert "version" in manifest["suite"]
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert results[0]["limits"]["max_tool_calls"] >= 100


def test_a_run_made_on_the_first_suite_still_reports_and_replays_on_the_new_one(tmp_path, monkeypatch, music_world):
    from ebench.sessions.timeline import Timeline

    out = tmp_path / "run"
    made = CliRunner().invoke(app, ["run", "--batch", "--solver", "oracle", "--task", "music-0020", "--out", str(out), "--json"])
    assert made.exit_code == 0, made.output
    assert json.loads((out / "manifest.json").read_text())["suite"]["version"] == "1"  # the fixture tasks are the first suite
    monkeypatch.setenv("EBENCH_TASKS", str(SUITE_DIR))  # the shipped suite (version 3) is the default from now on
    report = CliRunner().invoke(app, ["report", str(out), "--json"])
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["runs"][0]["suite_version"] == "1"
    timeline = Timeline.open(out / "sessions" / "music-0020" / "1.jsonl")
    try:
        assert timeline.task is None  # version 3's music-0020 is another task: its expected diff is not shown
        assert len(timeline.diff_at(timeline.last)) == 14  # the recorded calls still rebuild the state
    finally:
        timeline.close()
    regrade = CliRunner().invoke(app, ["regrade", str(out)])
    assert regrade.exit_code == 2 and "suite version 1" in regrade.stderr and "now version 3" in regrade.stderr
