"""Batch runs: the oracle and no-op solvers over the whole suite, resume after Ctrl-C, refusing a
changed configuration, regrade, replay, and single-trial `ebench run`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.batch import Batch
from ebench.sessions.record import read_session
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers import NoopSolver, OracleSolver, ReplaySolver
from ebench.tasks.suite import SUITE_DIR, load_suite, tasks_root

runner = CliRunner()


@pytest.fixture(scope="module")
def suite():
    return load_suite().tasks


@pytest.fixture(scope="module")
def worlds(music_world, meeting_world, moba_world):
    return True


def batch_run(out: Path, tasks, solver, trials: int = 1, concurrency: int = 8) -> list[TrialSummary]:
    batch = Batch(out, list(tasks), solver, trials)
    batch.prepare()
    asyncio.run(batch.run(concurrency))
    return load_run(out).results


def test_the_oracle_passes_every_shipped_task_and_noop_none(tmp_path, worlds):
    shipped = load_suite(SUITE_DIR).tasks
    counts = json.loads((SUITE_DIR / "suite.json").read_text())["counts"]
    oracle = batch_run(tmp_path / "oracle", shipped, OracleSolver())
    assert len(oracle) == len(shipped) == sum(counts.values()) >= 323
    failed = [r["task"] for r in oracle if not r.passed]
    assert failed == []  # within the run's default limits, raised by each task's budget
    assert all(r.tool_calls == r.reference_calls for r in oracle)
    noop = batch_run(tmp_path / "noop", shipped, NoopSolver())
    assert len(noop) == len(shipped) and not any(r.passed for r in noop)
    assert all(r.grade.actual_rows == 0 and r.grade.missing == r.grade.expected_rows for r in noop)


def _comparable(results: list[TrialSummary]) -> list[tuple]:
    return sorted(
        (r.task, r.trial, r.passed, r.termination, r.tool_calls, json.dumps(r.grade and r.grade.model_dump(), sort_keys=True))
        for r in results
    )


def _cli(*args: str, home: Path) -> subprocess.Popen:
    env = {**os.environ, "EBENCH_HOME": str(home), "LITELLM_OFFLINE_MODE": "true"}
    return subprocess.Popen([sys.executable, "-m", "ebench", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_ctrl_c_keeps_finished_trials_and_resuming_gives_the_uninterrupted_results(tmp_path, ebench_home, worlds):
    # the shipped moba suite: enough trials (2 x 110) to interrupt half-way
    args = [
        "run",
        "--batch",
        "--solver",
        "oracle",
        "--domain",
        "moba",
        "--trials",
        "2",
        "--concurrency",
        "4",
        "--tasks-dir",
        str(SUITE_DIR),
    ]
    total = 2 * len(load_suite(SUITE_DIR, domain="moba").tasks)
    whole = tmp_path / "whole"
    done = _cli(*args, "--out", str(whole), "--json", home=ebench_home)
    assert done.wait(timeout=300) == 0, done.stderr.read()

    cut = tmp_path / "cut"
    process = _cli(*args, "--out", str(cut), home=ebench_home)
    results = cut / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not results.exists() or len(results.read_text().splitlines()) < 20):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert "run the same command again" in out
    kept = load_run(cut)
    assert 20 <= len(kept.results) < total and kept.manifest.status == "interrupted"

    resumed = _cli(*args, "--out", str(cut), "--json", home=ebench_home)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    summary = json.loads(out)
    assert summary["trials_kept"] == len(kept.results) and summary["trials_run"] == total - len(kept.results)
    assert _comparable(load_run(cut).results) == _comparable(load_run(whole).results)
    assert load_run(cut).manifest.status == "finished"


def test_a_changed_configuration_is_refused_unless_forced(tmp_path, worlds):
    out = tmp_path / "run"
    common = ["run", "--batch", "--task", "music-0005", "--out", str(out)]
    assert runner.invoke(app, [*common, "--solver", "oracle"]).exit_code == 0
    refused = runner.invoke(app, [*common, "--solver", "noop"])
    assert refused.exit_code == 2 and "another configuration" in refused.output and "--force" in refused.output
    assert "Traceback" not in refused.output
    more = runner.invoke(app, [*common, "--solver", "oracle", "--trials", "3", "--json"])
    assert more.exit_code == 0 and json.loads(more.stdout)["trials_run"] == 2  # trials 2 and 3 only
    forced = runner.invoke(app, [*common, "--solver", "noop", "--force", "--json"])
    assert forced.exit_code == 0 and json.loads(forced.stdout)["trials_run"] == 0  # all three were finished


def test_regrade_uses_the_current_task_files(tmp_path, worlds):
    tasks_dir = tmp_path / "tasks"
    shutil.copytree(tasks_root() / "music", tasks_dir / "music")
    out = tmp_path / "run"
    ok = runner.invoke(
        app,
        [
            "run",
            "--batch",
            "--solver",
            "oracle",
            "--tasks-dir",
            str(tasks_dir),
            "--task",
            "music-0005",
            "--task",
            "music-0007",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert all(r.passed for r in load_run(out).results)
    # a "grader fix" lands in the task file: its expected diff loses a change
    path = tasks_dir / "music" / "music-0007.json"
    data = json.loads(path.read_text())
    data["expected_diff"] = data["expected_diff"][:-1]
    data.pop("stats")
    path.write_text(json.dumps(data))
    regraded = runner.invoke(app, ["regrade", str(out), "--json"])
    assert regraded.exit_code == 0, regraded.output
    report = json.loads(regraded.stdout)
    assert report["regraded"] == 2 and report["changes"] == [{"task": "music-0007", "trial": 1, "was": True, "now": False}]
    results = {r.task: r for r in load_run(out).results}
    assert results["music-0005"].passed and not results["music-0007"].passed
    assert results["music-0007"].grade.unexpected == 1


def test_a_task_whose_actor_does_not_exist_is_reported_apart_and_the_batch_goes_on(tmp_path, worlds):
    tasks_dir = tmp_path / "tasks" / "music"
    tasks_dir.mkdir(parents=True)
    for task_id in ("music-0005", "music-0007"):
        shutil.copy(tasks_root() / "music" / f"{task_id}.json", tasks_dir)
    broken = json.loads((tasks_dir / "music-0007.json").read_text())
    broken["actor"] = 999_999
    (tasks_dir / "music-0007.json").write_text(json.dumps(broken))
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["run", "--batch", "--solver", "oracle", "--tasks-dir", str(tmp_path / "tasks"), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["passed"], summary["scored"], summary["infra_errors"]) == (1, 1, 1)
    bad = next(r for r in load_run(out).results if r.task == "music-0007")
    assert bad.infra_error and "could not start" in bad.error and "999999" in bad.error


def test_replay_reproduces_recorded_sessions(tmp_path, suite, worlds):
    chosen = [t for t in suite if t.id in ("meeting-0003", "moba-0010", "music-0020")]
    source = tmp_path / "oracle"
    batch_run(source, chosen, OracleSolver())
    replay = ReplaySolver(source)
    replayed = batch_run(tmp_path / "replay", chosen, replay)
    assert sorted(r.task for r in replayed if r.passed) == ["meeting-0003", "moba-0010", "music-0020"]
    original = {r.task: r.tool_calls for r in load_run(source).results}
    assert {r.task: r.tool_calls for r in replayed} == original
    # the replayed session records the same calls with the same results
    first = read_session(source / "sessions" / "music-0020" / "1.jsonl")
    again = read_session(tmp_path / "replay" / "sessions" / "music-0020" / "1.jsonl")
    strip = [(e.tool, e.args, e.result) for e in first.tool_calls()]
    assert strip == [(e.tool, e.args, e.result) for e in again.tool_calls()]


def test_a_session_is_written_as_the_trial_goes_and_survives_a_torn_line(tmp_path, suite, worlds):
    task = next(t for t in suite if t.id == "music-0020")
    batch_run(tmp_path, [task], OracleSolver())
    path = tmp_path / "sessions" / "music-0020" / "1.jsonl"
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["event"] == "start" and json.loads(lines[-1])["event"] == "end"
    assert len(lines) == 2 + len(task.reference_solution)
    # a crash in the middle of writing the last event: what was written before is still readable
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25])
    session = read_session(path)
    assert len(session.events) == 3 and not session.finished


def test_ebench_run_of_one_task_prints_the_trace_and_records_a_session(ebench_home, worlds):
    result = runner.invoke(app, ["run", "--solver", "oracle", "--task", "music-0005"])
    assert result.exit_code == 0, result.output
    assert "PASS music-0005" in result.output and "create_playlist" in result.output
    [session] = (ebench_home / "sessions").glob("*-music-0005-oracle.jsonl")
    assert read_session(session).end.summary.passed


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--batch", "--solver", "psychic"], "unknown solver"),
        (["run", "--batch"], "needs --model"),
        (["run", "--batch", "--solver", "oracle", "--task", "music-9999"], "unknown task id"),
        (["run", "--batch", "--solver", "oracle", "--capability", "telepathy"], "unknown capability"),
        (["run", "--solver", "oracle", "--domain", "music"], "one trial of one task"),
        (["run", "--batch", "--solver", "replay"], "needs --replay-from"),
        (["run", "--batch", "--solver", "llm", "--model", "m", "--model-arg", "temperature"], "expected key=value"),
        (
            ["run", "--batch", "--model", "nonsense-model", "--task", "music-0005"],
            "model 'nonsense-model': litellm cannot tell which provider serves it; write provider/model",
        ),
        (["report", "/nonexistent/run"], "no such file or folder"),
        (["regrade", "/nonexistent/run"], "no such file or folder"),
    ],
)
def test_bad_invocations_are_one_line_errors(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
