"""`ebench report` sets the human baseline beside the models: real blind attempts (recorded by
`human_trial`, made with real calls and `finish`) against real oracle and no-op runs, the numbers
checked against figures worked out here from the attempts' own summaries."""

from __future__ import annotations

import asyncio
import csv
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ebench.cli.report import report_command
from ebench.sessions.attempts import human_trial
from ebench.sessions.batch import Batch
from ebench.sessions.results import TrialSummary
from ebench.sessions.solvers import NoopSolver, OracleSolver
from ebench.sessions.trial import AGENT_STOPPED
from ebench.tasks.suite import load_suite

app = typer.Typer()
app.command()(report_command)
runner = CliRunner()
wide = CliRunner(env={"COLUMNS": "1000"})

REPORTED = ("music-0007", "music-0020")  # both runs cover these
ELSEWHERE = "music-0001"  # attempted by a person, in no reported run


@pytest.fixture(scope="module")
def tasks(music_world: Path) -> dict[str, Any]:
    return {t.id: t for t in load_suite(ids=[*REPORTED, ELSEWHERE]).tasks}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, tasks: dict[str, Any]) -> list[Path]:
    root = tmp_path_factory.mktemp("runs")
    paths = []
    for name, solver in (("oracle", OracleSolver()), ("noop", NoopSolver())):
        batch = Batch(root / name, [tasks[t] for t in REPORTED], solver, 1, label=name)
        batch.prepare()
        asyncio.run(batch.run(2))
        paths.append(root / name)
    return paths


def attempt(task: Any, folder: Path, calls: int, *, blind: bool = True, submit: bool = True) -> TrialSummary | None:
    """A person's attempt making the first `calls` calls of the reference solution."""
    trial = human_trial(task, blind=blind, folder=folder)
    for step in task.reference_solution[:calls]:
        assert trial.call(step.tool, step.args).ok
    if not submit:
        trial.close()  # left open: the session has no end event
        return None
    return trial.finish(AGENT_STOPPED)


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory, tasks: dict[str, Any]) -> tuple[Path, dict[str, list[TrialSummary]]]:
    """Blind attempts that count, and others that must not: assisted, unfinished, another task."""
    folder = tmp_path_factory.mktemp("sessions")
    tidy, favourites = tasks["music-0007"], tasks["music-0020"]
    counted = {
        "music-0007": [attempt(tidy, folder, len(tidy.reference_solution)), attempt(tidy, folder, 1)],
        "music-0020": [attempt(favourites, folder, 0)],
    }
    attempt(tidy, folder, len(tidy.reference_solution), blind=False)  # with the expected diff in view
    attempt(favourites, folder, 2, submit=False)
    attempt(tasks[ELSEWHERE], folder, 0)
    return folder, {task: [a for a in found if a is not None] for task, found in counted.items()}


def expected_figures(trials: list[dict[str, Any]]) -> dict[str, Any]:
    """Pass rate, median time and mean calls, from results lines as written."""
    passed = sum(t["passed"] for t in trials)
    return {
        "trials": len(trials),
        "passed": passed,
        "pass_rate": pytest.approx(passed / len(trials)),
        "median_seconds": pytest.approx(statistics.median(t["seconds"] for t in trials)),
        "mean_calls": pytest.approx(sum(t["tool_calls"] - t["exec_blocks"] + t["inner_calls"] for t in trials) / len(trials)),
    }


def report_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_report_holds_the_blind_baseline_beside_each_run(runs: list[Path], people: tuple[Path, dict[str, list[TrialSummary]]]):
    folder, counted = people
    assert [len(counted[t]) for t in REPORTED] == [2, 1] and counted["music-0007"][0].passed
    document = report_json(*map(str, runs), "--baseline", str(folder))
    assert [r["label"] for r in document["runs"]] == ["oracle", "noop"]  # the existing keys are unchanged
    baseline = document["baseline"]
    human = [a.to_dict() for task in REPORTED for a in counted[task]]
    assert baseline["source"] == str(folder) and baseline["tasks"] == 2
    # 3 attempts (assisted, unfinished and the other task's left out), 1 passed; calls 5, 1 and 0
    assert baseline["human"] == expected_figures(human)
    assert baseline["human"]["pass_rate"] == pytest.approx(1 / 3) and baseline["human"]["mean_calls"] == pytest.approx(2)
    assert baseline["runs"]["oracle"]["pass_rate"] == 1.0 and baseline["runs"]["noop"]["pass_rate"] == 0.0
    assert baseline["runs"]["oracle"]["mean_calls"] == pytest.approx((5 + 7) / 2)  # the reference solutions' lengths
    per_task = {t["task"]: t for t in baseline["per_task"]}
    assert list(per_task) == list(REPORTED)
    for task in REPORTED:
        assert per_task[task]["human"] == expected_figures([a.to_dict() for a in counted[task]])
        assert per_task[task]["runs"] == {"oracle": 1.0, "noop": 0.0}
    assert per_task["music-0007"]["human"]["pass_rate"] == 0.5


def test_the_csv_carries_the_baseline(runs: list[Path], people: tuple[Path, dict[str, list[TrialSummary]]], tmp_path: Path):
    folder, _ = people
    out = tmp_path / "report.csv"
    assert runner.invoke(app, [*map(str, runs), "--baseline", str(folder), "--csv", str(out), "--json"]).exit_code == 0
    with out.open(encoding="utf-8") as handle:
        rows = {(r["run"], r["scope"], r["metric"]): r for r in csv.DictReader(handle)}
    assert float(rows[("human baseline", "baseline", "pass_rate")]["value"]) == pytest.approx(1 / 3)
    assert rows[("human baseline", "baseline", "pass_rate")]["path"] == str(folder)
    assert rows[("human baseline", "baseline:music-0007", "passed")]["value"] == "1"
    assert rows[("noop", "baseline:music-0020", "pass_rate")]["value"] == "0.0"
    assert rows[("oracle", "overall", "avg")]["value"] == "1.0"  # the runs' own rows are still there


def test_the_text_report_shows_the_baseline_tables(runs: list[Path], people: tuple[Path, dict[str, list[TrialSummary]]]):
    folder, _ = people
    result = wide.invoke(app, [*map(str, runs), "--baseline", str(folder)])
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())  # captions wrap at their table's width
    assert (
        "Human baseline" in words
        and "human baseline" in words
        and "runs: on the same 2 task(s)" in words
        and "Human baseline per task" in words
    )
    row = next(line for line in result.output.splitlines() if "music-0007" in line)
    assert "1/2" in row and "100.0%" in row and "0.0%" in row
    assert "33.3%" in next(line for line in result.output.splitlines() if "pass rate" in line)


def test_the_data_directory_baseline_is_shown_only_when_people_attempted_a_reported_task(
    runs: list[Path], tasks: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    sessions = tmp_path / "home" / "sessions"
    attempt(tasks["music-0007"], sessions, 1, blind=False)
    attempt(tasks[ELSEWHERE], sessions, 0)
    monkeypatch.setenv("EBENCH_HOME", str(tmp_path / "home"))
    assert report_json(*map(str, runs))["baseline"] is None  # neither an assisted attempt nor another task's is a baseline
    assert "Human baseline" not in wide.invoke(app, list(map(str, runs))).output
    attempt(tasks["music-0020"], sessions, 0)
    baseline = report_json(*map(str, runs))["baseline"]
    assert baseline["source"] == str(sessions) and [t["task"] for t in baseline["per_task"]] == ["music-0020"]
    assert baseline["human"]["trials"] == 1 and baseline["runs"]["oracle"]["trials"] == 1
    assert report_json(*map(str, runs), "--no-baseline")["baseline"] is None


def test_an_explicit_baseline_folder_is_shown_even_when_empty_and_a_missing_one_is_an_error(runs: list[Path], tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    baseline = report_json(*map(str, runs), "--baseline", str(empty))["baseline"]
    assert baseline["tasks"] == 0 and baseline["human"]["pass_rate"] is None and baseline["per_task"] == []
    text = wide.invoke(app, [*map(str, runs), "--baseline", str(empty)])
    assert text.exit_code == 0 and "blind attempts at the reported tasks │ 0" in " ".join(text.output.split())
    for args, message in (
        (["--baseline", str(tmp_path / "nowhere")], "no such folder"),
        (["--baseline", str(empty), "--no-baseline"], "do not combine"),
    ):
        result = wide.invoke(app, [*map(str, runs), *args])
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
