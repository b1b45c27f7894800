"""`ebench report` on hand-written run directories: the tables hold the numbers, --json and --csv
carry the metrics, runs sit side by side, the paper layout appears for 3 trials, bad runs are one-line errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ebench.cli.report import report_command
from ebench.sessions.metrics import run_metrics
from ebench.sessions.report import build_reports, csv_rows
from ebench.sessions.runs import load_run

app = typer.Typer()
app.command()(report_command)
runner = CliRunner()
wide = CliRunner(env={"COLUMNS": "1000"})  # rich wraps a long error at 80 columns; one message must be one line


def trial(task: str, n: int, passed: bool, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task": task,
        "trial": n,
        "domain": task.split("-")[0],
        "capabilities": ["multi_condition_filtering"],
        "passed": passed,
        "termination": "agent_stopped",
        "infra_error": False,
        "error": None,
        "session": f"sessions/{task}/{n}.jsonl",
        "tool_calls": 4,
        "inner_calls": 0,
        "exec_blocks": 0,
        "turns": 3,
        "tokens_in": 1000,
        "tokens_out": 100,
        "cost": 0.01,
        "seconds": 10.0,
        "reference_calls": 2,
        "grade": {
            "expected_rows": 3,
            "actual_rows": 3 if passed else 0,
            "matched_rows": 3 if passed else 0,
            "missing": 0 if passed else 3,
            "unexpected": 0,
            "wrong": 0,
            "precision": 1.0,
            "recall": 1.0 if passed else 0.0,
        },
        "tool_errors": {},
    }
    record.update(fields)
    return record


def write_run(root: Path, name: str, results: list[dict[str, Any]], label: str | None = None, trials: int = 3) -> Path:
    run = root / name
    run.mkdir()
    manifest: dict[str, Any] = {
        "format": "ebench-run/1",
        "ebench_version": "0.1.0",
        "config": {"solver": "llm", "model": f"openai/{name}", "code": False, "trials": trials},
        "config_hash": "h",
        "tasks": {"count": len({r["task"] for r in results}), "ids": sorted({r["task"] for r in results})},
        "started": "2026-11-29T10:00:00Z",
        "ended": None,
    }
    if label:
        manifest["label"] = label
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    return run


def outcomes(task: str, passes: list[bool], **fields: Any) -> list[dict[str, Any]]:
    return [trial(task, i + 1, ok, **fields) for i, ok in enumerate(passes)]


# music-1: 1 of 3, meeting-1: 3 of 3 -> Avg 66.7%, Pass@2 (2/3 + 1)/2 = 83.3%, Pass^2 (0 + 1)/2 = 50.0%,
# Pass@3 100.0%, Pass^3 50.0%.
RUN_A = outcomes("music-1", [True, False, False]) + outcomes("meeting-1", [True, True, True], capabilities=["cross_entity_cascade"])
# music-1: 0 of 3, meeting-1: 2 of 3 (one exec_code block with 5 calls inside) -> Avg 33.3%.
RUN_B = (
    outcomes("music-1", [False, False, False], termination="max_turns")
    + outcomes("meeting-1", [True, True, False], capabilities=["cross_entity_cascade"])[:2]
    + [trial("meeting-1", 3, False, capabilities=["cross_entity_cascade"], tool_calls=3, inner_calls=5, exec_blocks=1)]
)


@pytest.fixture
def run_a(tmp_path: Path) -> Path:
    return write_run(tmp_path, "a", RUN_A, label="gpt-x")


@pytest.fixture
def run_b(tmp_path: Path) -> Path:
    return write_run(tmp_path, "b", RUN_B, label="claude-y")


def invoke(*args: str | Path, via: CliRunner = runner):
    return via.invoke(app, [str(a) for a in args])


def ok(*args: str | Path) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def section(output: str, title: str) -> str:
    """The text of one table: from its title to the next table's title (or the end)."""
    start = output.index(title)
    titles = ("Summary", "Paper layout", "Per domain", "Per capability", "Efficiency", "Failures")
    ends = [i for t in titles if (i := output.find("\n" + t, start + 1)) != -1]
    return output[start : min(ends, default=len(output))]


def row(table: str, label: str) -> list[str]:
    """The cells of the first row whose label cell (or one of the label cells) is `label`."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")] if "│" in line else []
        if label in cells[:2]:
            return cells[cells.index(label) + 1 :]
    raise AssertionError(f"no row {label!r} in:\n{table}")


def test_summary_table_holds_the_hand_computed_numbers(run_a):
    summary = section(ok(run_a), "Summary")
    assert row(summary, "tasks scored") == ["2"]
    assert row(summary, "scored trials") == ["6"]
    assert row(summary, "passed trials") == ["4"]
    assert row(summary, "infra errors") == ["0"]
    assert row(summary, "Avg") == ["66.7%"]
    assert row(summary, "Pass@1") == ["66.7%"]
    assert row(summary, "Pass@2") == ["83.3%"]
    assert row(summary, "Pass^2") == ["50.0%"]
    assert row(summary, "Pass@3") == ["100.0%"]
    assert row(summary, "Pass^3") == ["50.0%"]
    assert row(summary, "model") == ["openai/a"]


def test_domain_and_capability_tables(run_a):
    out = ok(run_a)
    domains = section(out, "Per domain")
    assert row(domains, "music") == ["tasks", "1"]
    meeting, music = domains[domains.index("meeting") : domains.index("music")], domains[domains.index("music") :]
    assert row(music, "Avg") == ["33.3%"] and row(music, "Pass@2") == ["66.7%"] and row(music, "Pass^3") == ["0.0%"]
    assert row(meeting, "Avg") == ["100.0%"] and row(meeting, "Pass^3") == ["100.0%"]
    caps = section(out, "Per capability")
    assert "Multi-condition filtering" in caps and "Cross-entity cascade" in caps
    assert "Cross-step dependency" not in caps  # no task has it: no block of dashes
    cascade = caps[caps.index("Cross-entity cascade") :]
    assert row(cascade, "Avg") == ["100.0%"]


def test_two_runs_side_by_side(run_a, run_b):
    out = ok(run_a, run_b)
    summary = section(out, "Summary")
    header = next(line for line in summary.splitlines() if "gpt-x" in line)
    assert header.index("gpt-x") < header.index("claude-y")
    assert row(summary, "Avg") == ["66.7%", "33.3%"]
    assert row(summary, "Pass@3") == ["100.0%", "50.0%"]
    efficiency = section(out, "Efficiency")
    # B: calls 4,4,4, 4,4, and 3 - 1 + 5 = 7 -> 27/6 = 4.5; reference 2 each -> 2.25; exec_code in 1 of 6
    assert row(efficiency, "total calls / trial") == ["4.0", "4.5"]
    assert row(efficiency, "total calls / reference") == ["2.00", "2.25"]
    assert row(efficiency, "exec_code used") == ["0.0%", "16.7%"]
    assert row(efficiency, "cost (total)") == ["$0.0600", "$0.0600"]
    failures = section(out, "Failures")
    assert row(failures, "failed trials") == ["2 of 6", "4 of 6"]
    assert row(failures, "no state change") == ["2 (100%)", "4 (100%)"]
    assert row(failures, "ended by max_turns") == ["0 (0%)", "3 (75%)"]


def test_paper_layout_for_three_trials(run_a, run_b):
    paper = section(ok(run_a, run_b), "Paper layout")
    # columns: meeting, music, overall x (Avg3, Pass@3, Pass^3)
    assert row(paper, "gpt-x") == ["100.0%", "100.0%", "100.0%", "33.3%", "100.0%", "0.0%", "66.7%", "100.0%", "50.0%"]
    assert row(paper, "claude-y") == ["66.7%", "100.0%", "0.0%", "0.0%", "0.0%", "0.0%", "33.3%", "50.0%", "0.0%"]


def test_no_paper_layout_without_three_trials(tmp_path, run_a):
    two = write_run(tmp_path, "two", outcomes("music-1", [True, False]), label="two-trials", trials=2)
    out = ok(run_a, two)
    assert "Paper layout" not in out
    assert row(section(out, "Summary"), "Pass@3") == ["100.0%", "-"]


def test_uneven_trials_say_how_many_tasks_each_k_covers(tmp_path):
    run = write_run(tmp_path, "u", outcomes("music-1", [True, False, False]) + outcomes("music-2", [True, True]))
    summary = section(ok(run), "Summary")
    assert row(summary, "Pass^3") == ["0.0%"]  # music-2 (n=2) is not in it
    assert row(summary, "tasks with ≥3 trials") == ["1"]


def test_json_is_the_metrics_and_nothing_else(run_a, run_b):
    result = invoke(run_a, run_b, "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert [r["label"] for r in doc["runs"]] == ["gpt-x", "claude-y"]
    assert doc["runs"][0]["metrics"] == json.loads(json.dumps(run_metrics(RUN_A).to_dict()))
    assert doc["runs"][1]["metrics"]["overall"]["avg"] == pytest.approx(1 / 3)
    assert doc["runs"][0]["model"] == "openai/a" and doc["runs"][0]["tasks_planned"] == 2


def test_csv_file_is_written(tmp_path, run_a, run_b):
    target = tmp_path / "out.csv"
    out = ok(run_a, run_b, "--csv", target)
    assert f"to {target}" in out.replace("\n", "")
    with target.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["run", "path", "scope", "metric", "value"]
    values = {(r["run"], r["scope"], r["metric"]): r["value"] for r in rows}
    assert float(values["gpt-x", "overall", "avg"]) == pytest.approx(2 / 3)
    assert float(values["claude-y", "domain:meeting", "pass^2"]) == pytest.approx(1 / 3)
    assert values["gpt-x", "overall", "tasks@3"] == "2"
    assert values["gpt-x", "capability:cross_step_dependency", "avg"] == ""  # no task: empty, not 0
    assert float(values["claude-y", "efficiency", "calls_vs_reference"]) == pytest.approx(2.25)
    assert values["claude-y", "failures", "ended_by:max_turns"] == "3"
    assert len(rows) == len(csv_rows(build_reports([load_run(run_a), load_run(run_b)])))


def test_csv_with_json_keeps_stdout_pure_json(tmp_path, run_a):
    target = tmp_path / "out.csv"
    result = invoke(run_a, "--json", "--csv", target)
    assert result.exit_code == 0 and target.is_file()
    json.loads(result.stdout)


def test_infra_errors_are_reported_apart_and_a_run_without_scores_shows_dashes(tmp_path):
    down = write_run(
        tmp_path,
        "down",
        [
            trial("music-1", 1, False, infra_error=True, termination="infra_error", error="provider unreachable", grade=None),
            trial("music-1", 2, False, infra_error=True, termination="infra_error", error="provider unreachable", grade=None),
        ],
        label="down",
    )
    out = ok(down)
    summary = section(out, "Summary")
    assert row(summary, "infra errors") == ["2"] and row(summary, "tasks scored") == ["0"]
    assert row(summary, "Avg") == ["-"]
    assert row(section(out, "Efficiency"), "tool calls / trial") == ["-"]
    failures = section(out, "Failures")
    assert row(failures, "infra errors (not scored)") == ["2"]
    assert row(failures, "provider unreachable") == ["2"]


def test_manifest_as_batch_runs_write_it(tmp_path):
    # `ebench run --batch` nests the model in the solver's config and keeps trials beside the config.
    run = write_run(tmp_path, "batch", outcomes("music-1", [True, False, True]), label="nested")
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["config"] = {"solver": {"name": "llm", "model": "openai/gpt-z", "api_base": None}, "code": False}
    manifest["trials"] = 3
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    doc = json.loads(ok(run, "--json"))["runs"][0]
    assert (doc["solver"], doc["model"], doc["trials"]) == ("llm", "openai/gpt-z", 3)
    summary = section(ok(run), "Summary")
    assert row(summary, "solver") == ["llm"] and row(summary, "model") == ["openai/gpt-z"]


def test_same_label_twice_is_told_apart(tmp_path):
    first = write_run(tmp_path, "x1", outcomes("music-1", [True]), label="same")
    second = write_run(tmp_path, "x2", outcomes("music-1", [False]), label="same")
    doc = json.loads(ok(first, second, "--json"))
    assert [r["label"] for r in doc["runs"]] == [f"same ({first})", f"same ({second})"]


def _one_line_error(result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def test_unknown_run_directory_is_a_one_line_error(tmp_path, run_a):
    assert "no such file or folder" in _one_line_error(invoke(run_a, tmp_path / "missing", via=wide))


def test_malformed_manifest_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text("{not json", encoding="utf-8")
    assert "unreadable manifest" in _one_line_error(invoke(bad, via=wide))
    (bad / "manifest.json").write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    assert "not an ebench-run/1 manifest" in _one_line_error(invoke(bad, via=wide))


def test_malformed_result_is_a_one_line_error(tmp_path):
    run = write_run(tmp_path, "r", [trial("music-1", 1, True, tokens_in="lots")])
    assert "music-1/1: tokens_in must be a number" in _one_line_error(invoke(run, via=wide))


def test_unwritable_csv_is_a_one_line_error(tmp_path, run_a):
    # a folder that does not exist is bad input (2), not the environment (74: the disk, a folder's permissions)
    assert "cannot write" in _one_line_error(invoke(run_a, "--csv", tmp_path / "no" / "such" / "dir.csv", via=wide), exit_code=2)
