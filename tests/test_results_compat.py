"""Files written before the formats were models still load, and read back as they were written.

The fixtures in tests/fixtures/formats are today's files (run directories, sessions, task files);
they are read through the models, reported, regraded and round-tripped here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from pydantic import TypeAdapter
from typer.testing import CliRunner

from ebench.cli.report import report_command
from ebench.sessions.results import GradeCounts, ResultsLineError, TrialSummary, results_json_schema
from ebench.sessions.runs import RunManifest, load_run, manifest_json_schema, read_manifest, read_results
from ebench.sessions.terminations import Termination
from ebench.tasks.diff import Diff, RowChange
from ebench.tasks.grading import Grade, WrongValue
from ebench.tasks.spec import Task, parse_task, task_json_schema

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
RUNS = sorted(p for p in FORMATS.glob("run-*") if p.is_dir())
SESSIONS = sorted(p for p in FORMATS.rglob("*.jsonl") if p.name != "results.jsonl")

app = typer.Typer()
app.command()(report_command)
runner = CliRunner()


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_a_results_line_reads_as_a_model_and_writes_back_byte_for_byte(run):
    results = read_results(run / "results.jsonl")
    assert results and all(isinstance(r, TrialSummary) for r in results)
    written = sorted(json.dumps(r.to_dict(), ensure_ascii=False) for r in results)
    assert written == sorted(_lines(run / "results.jsonl"))
    for result in results:
        assert isinstance(result.termination, Termination) and isinstance(result.grade, GradeCounts)


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_a_manifest_reads_as_a_model_and_keeps_every_key(run):
    raw = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest = read_manifest(run / "manifest.json")
    assert isinstance(manifest, RunManifest)
    assert manifest.to_dict() == raw and list(manifest.to_dict()) == list(raw)
    loaded = load_run(run)
    assert loaded.manifest == manifest and loaded.warnings == [] and loaded.label == raw["label"]


@pytest.mark.parametrize("session", SESSIONS, ids=[str(p.relative_to(FORMATS)) for p in SESSIONS])
def test_a_sessions_grade_and_diff_read_as_records_and_dump_as_written(session):
    ends = [e for e in map(json.loads, _lines(session)) if e.get("event") == "end"]
    assert len(ends) == 1
    end = ends[0]
    assert Grade.model_validate(end["grade"]).model_dump() == end["grade"]
    diff = Diff.from_list(end["diff"])
    assert diff.to_list() == end["diff"] and TypeAdapter(Diff).dump_python(diff) == end["diff"]
    assert TrialSummary.read(end["summary"]).to_dict() == end["summary"]


def test_report_of_the_fixture_runs_gives_todays_numbers():
    result = runner.invoke(app, [str(FORMATS / "run-llm"), str(FORMATS / "run-oracle"), "--json"])
    assert result.exit_code == 0, result.output
    runs = {r["label"]: r for r in json.loads(result.stdout)["runs"]}
    llm, oracle = runs["openai/fake"], runs["oracle"]
    assert llm["metrics"]["overall"] == {
        "tasks": 2,
        "trials": 2,
        "passes": 2,
        "infra_errors": 0,
        "avg": 1.0,
        "by_k": {"1": {"tasks": 2, "pass_at": 1.0, "pass_hat": 1.0}},
    }
    assert oracle["metrics"]["overall"]["by_k"]["2"] == {"tasks": 1, "pass_at": 1.0, "pass_hat": 1.0}
    assert (llm["metrics"]["efficiency"]["tool_calls"], oracle["metrics"]["efficiency"]["tool_calls"]) == (39.0, 6.0)
    assert (llm["tasks_planned"], llm["suite_version"], llm["config_hash"]) == (2, "2", "41a3d7b4cab299a3")
    assert llm["limits"] == {"max_turns": 30, "max_tool_calls": 100, "timeout": 600.0} and llm["limits_raised_for_tasks"] == 2
    code = runner.invoke(app, [str(FORMATS / "run-code")])
    assert code.exit_code == 0, code.output


def test_regrade_of_a_fixture_run_keeps_every_line_and_key(tmp_path, monkeypatch):
    from ebench.sessions.regrade import regrade_run

    monkeypatch.delenv("EBENCH_TASKS", raising=False)
    run = tmp_path / "run"
    shutil.copytree(FORMATS / "run-oracle", run)
    # The run was made on the shipped suite of version 2, which version 3 replaced: regrading it
    # against today's suite is refused (tests/test_task_worlds.py), so it names the folder of its own tasks.
    raw = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    raw["config"]["tasks"]["dir"] = str(FORMATS / "suite-v2")
    (run / "manifest.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    report = regrade_run(run)
    assert (report["regraded"], report["changed"], report["problems"]) == (2, 0, [])
    before = [json.loads(line) for line in _lines(FORMATS / "run-oracle" / "results.jsonl")]
    after = [json.loads(line) for line in _lines(run / "results.jsonl")]
    assert [dict(a, regraded=None) for a in after] == [dict(b, regraded=None) for b in before]
    assert all(list(a)[-1] == "regraded" for a in after)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in manifest.items() if k != "regraded"} == raw and set(manifest["regraded"]) == {"at", "ebench_version"}
    assert load_run(run).results[0].regraded == manifest["regraded"]["ebench_version"]


@pytest.mark.parametrize("name", ["task-v1", "task-v2"])
def test_task_files_of_both_versions_load_and_write_back_unchanged(name):
    path = FORMATS / f"{name}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    Task.model_validate(raw)
    task = parse_task(raw, str(path))
    assert task.to_dict() == raw and task.to_json() == path.read_text(encoding="utf-8")
    assert bool(task.world) == (name == "task-v2")


def test_a_line_written_now_reads_back_equal(tmp_path):
    line = TrialSummary(
        task="music-0001",
        trial=3,
        domain="music",
        capabilities=["aggregation_computation"],
        passed=False,
        termination="max_turns",
        error=None,
        session="sessions/music-0001/3.jsonl",
        tool_calls=7,
        cost=0.123456789,
        seconds=1.234567,
        reference_calls=5,
        grade=GradeCounts(expected_rows=2, actual_rows=1, matched_rows=1, missing=1, precision=1.0, recall=0.5),
        tool_errors={"not_found": 2},
        solver="llm",
        limits={"max_turns": 30, "max_tool_calls": 100},
    )
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(line.to_dict()) + "\n", encoding="utf-8")
    (read,) = read_results(path)
    assert read.to_dict() == line.to_dict() and read.cost == 0.12345679 and read.seconds == 1.2346
    assert read.termination is Termination.MAX_TURNS and not read.infra_error


def test_a_wrong_value_keeps_old_for_updates_only():
    update = {"table": "songs", "op": "update", "key": {"id": 1}, "column": "title", "expected": "a", "actual": "b", "old": None}
    insert = {"table": "songs", "op": "insert", "key": {"id": 2}, "column": "title", "expected": "a", "actual": "b"}
    assert WrongValue.model_validate(update).model_dump() == update
    assert WrongValue.model_validate(insert).model_dump() == insert
    assert RowChange.from_dict({"table": "t", "op": "delete", "key": {"id": 1}, "old": {"id": 1}}).to_dict() == {
        "table": "t",
        "op": "delete",
        "key": {"id": 1},
        "old": {"id": 1},
    }


def test_an_unscorable_line_names_the_trial_and_the_field(tmp_path):
    with pytest.raises(ResultsLineError, match=r"result music-1/2: tool_calls must be a number, not '7'"):
        TrialSummary.read({"task": "music-1", "trial": 2, "passed": True, "tool_calls": "7"})
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"task": "music-1", "trial": 1, "passed": True, "tokens_in": "lots"}) + "\n", encoding="utf-8")
    from ebench.sessions.runs import RunError

    with pytest.raises(RunError, match=r"results.jsonl:1: result music-1/1: tokens_in must be a number"):
        read_results(path)


def test_the_schemas_are_versioned():
    assert results_json_schema()["title"] == "ebench results line (ebench-results/1)"
    assert set(results_json_schema()["required"]) == {"task", "trial", "passed"}
    assert manifest_json_schema()["$id"] == "urn:ebench-run:1"
    task = task_json_schema()
    assert task["$id"] == "urn:ebench-task:1" and "ebench-task/1" in task["title"]
    assert task["properties"]["expected_diff"]["items"]["properties"]["op"]["enum"] == ["insert", "update", "delete"]
