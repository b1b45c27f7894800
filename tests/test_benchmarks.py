"""The benchmark scripts run and report their figures (a smoke test: timings are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize(
    ("script", "args", "key"),
    [
        ("build_worlds.py", ["--repeat", "1"], "domains"),
        ("tool_calls.py", ["--repeat", "2", "--rounds", "1"], "domains"),
        ("cli_startup.py", ["--repeat", "1"], "heavy_modules_imported"),
        ("trial_overhead.py", ["--repeat", "1", "--rounds", "1", "--tasks", "2", "--fresh", "1"], "results"),
        ("grading_growth.py", ["--domain", "music", "--sizes", "3,30", "--repeat", "1"], "domains"),
        ("exec_code.py", ["--trials", "1", "--blocks", "3", "--calls", "20"], "isolation"),
        pytest.param(
            "batch_throughput.py",
            # memory sampled often: a smoke leg's workers live well under the default quarter second
            ["--delay", "0.01", "--levels", "1,4", "--sweep-waves", "1", "--waves", "1", "--c1-trials", "2", "--oracle-trials", "1"]
            + ["--sample", "0.02"],
            "sweep",
            marks=pytest.mark.slow,
        ),
        ("live_diff.py", ["--repeat", "1"], "results"),
        ("model_client.py", ["--requests", "8", "--concurrency", "4"], "per_domain"),
        ("model_start.py", ["--runs", "1"], "lean"),
        ("app_startup.py", ["--repeat", "1"], "results"),
        ("synthesis_overhead.py", ["--count", "2"], "harness_ms_per_accepted"),
        pytest.param("faults.py", ["--tasks", "2", "--trials", "1"], "faults", marks=pytest.mark.slow),
        ("compose.py", ["--domain", "music", "--count", "6", "--seeds", "1,2"], "domains"),
    ],
)
def test_benchmark_prints_json_figures(script, args, key, music_world):
    from ebench.engine.domain_registry import domain_names, get_domain

    out = subprocess.run([sys.executable, str(BENCHMARKS / script), *args, "--json"], capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    check_readme_rows(data)
    if script == "tool_calls.py":
        # Every tool of every domain is measured, through a trial and through the registry.
        assert [d["domain"] for d in data[key]] == domain_names()
        for report in data[key]:
            assert {r["tool"].split("(")[0] for r in report["tools"]} == set(get_domain(report["domain"]).tools.names)
            assert all(r["median_us"] > 0 and r["trial_median_us"] > 0 for r in report["tools"])
        # No checkout given: no anchor is measured and no ratio printed, and the row says so.
        assert data["anchor"]["tool"] == {} and data["anchor"]["given"] == {"tau-bench": None, "tau2": None}
        check_no_anchor(data["readme"])
    elif script == "cli_startup.py":
        assert data[key] == []
    elif script == "model_client.py":
        # every domain's first turn went through the lean client and through litellm, and came back with a call
        for rows in (data[key], data["litellm_per_domain"]):
            assert sorted(r["domain"] for r in rows) == sorted(domain_names())
            assert all(r["requests"] == 8 and r["cpu_ms_per_request"] > 0 and r["tools"] > 0 for r in rows)
    elif script == "exec_code.py":
        assert data[key]["audit_hook"] and data["block_start_warm_ms"] > 0 and data["proxied_call_ms"] > 0
        assert data["first_block_cold_ms"] > 0 and data["first_block_after_turn_ms"] > 0 and data["trial_call_ms"] > 0
    elif script == "trial_overhead.py":
        worlds = [r["domain"] for r in data[key]]
        assert worlds == [w for name in domain_names() for w in (name, f"{name} x10")]
        by = {r["domain"]: r for r in data[key]}
        for name in domain_names():
            assert by[f"{name} x10"]["rows"] >= 9 * by[name]["rows"]  # the inflated world really is bigger
        # whole trials through Trial, every domain's tasks run and passed (run_trial checks it)
        assert [r["domain"] for r in data["whole_trials"]] == domain_names()
        assert all(r["trials"] == 2 and r["total_ms"] >= r["start_ms"] > 0 for r in data["whole_trials"])
        assert data["largest_task"]["grade_ms"] > 0 and data["fresh_process"]["peak_mb"] > 0
        assert data["start"]["open_trial_ms"] > 0
        # No checkout given: no anchor is measured (no constant from an earlier session either).
        assert data["anchor"]["trial"] == {} and data["anchor"]["first"] == {}
        check_no_anchor(data["readme"])
    elif script == "grading_growth.py":
        [music] = data[key]
        assert [r["rows"] for r in music["sizes"]] == [3, 30]
        for r in music["sizes"]:  # every figure measured; the failing trials found their wrong rows
            assert r["grade_pass_us_per_row"] > 0 and r["explain_us_per_row"] > 0 and r["wrong_values"] >= 1
            assert r["all_wrong_values"] >= r["wrong_values"]
        assert set(music["growth"]) == {
            "grade_pass_us_per_row",
            "grade_fail_us_per_row",
            "grade_all_wrong_us_per_row",
            "explain_us_per_row",
        }
    elif script == "batch_throughput.py":
        # every leg is the real CLI in its own process, the model legs through litellm against the fake server
        assert [leg["concurrency"] for leg in data[key]] == [1, 4]
        # the fake model's CPU is measured beside ebench's (clock ticks: a smoke run's may round to 0)
        assert all(leg["server_cpu_ms_per_trial"] >= 0 for leg in data[key])
        for leg in [*data[key], *data["legs"].values()]:
            assert leg["passed"] == leg["trials"] > 0
        assert data["legs"]["workers_1"]["workers"] == 1 and data["legs"]["workers_2"]["workers"] == 2
        assert data["legs"]["ray"]["executor"] == "ray"  # the test extra installs Ray
        # memory summed over each run's process tree: the CLI and its two workers; Ray's processes
        assert data["legs"]["workers_2"]["memory"]["processes"] >= 3
        assert data["legs"]["ray"]["memory"]["processes"] > data["legs"]["workers_1"]["memory"]["processes"]
        for leg in [*data[key], *data["legs"].values()]:
            assert leg["memory"]["peak_rss_mb"] >= leg["memory"]["peak_pss_mb"] > 0 and leg["memory"]["samples"] >= 1
        # the suite's mix of reference lengths, not the shortest tasks; wall time beside batch time
        assert data[key][1]["mix"]["tasks"] == 4 and all(leg["process_seconds"] > leg["batch_seconds"] for leg in data[key])
        assert data["memory"]["peak_mb"] >= data["memory"]["start_mb"] > 0
        assert data["legs"]["oracle_workers_1"]["trials"] == data["legs"]["oracle_workers_1"]["passed"] > 0
        # workers forked after the worlds are loaded: each answers, and runs its first trial
        start = data["worker_start"]
        assert start["method"] == "fork" and start["ready_ms"] > 0 and start["first_trial_ms"] > 0
    elif script == "live_diff.py":
        for result in data[key]:  # tasks with about 200 changed rows, all explained and painted
            assert result["expected_rows"] >= 150 and result["lines"] >= 150 and result["refresh_ms"] > result["diff_ms"] > 0
    elif script == "faults.py":
        from ebench.testing.fake_openai import FAULTS

        rows = {r["fault"]: r for r in data[key]}
        assert set(FAULTS) | {"(none)", "missing_key"} <= set(rows)
        assert data["all_ok"], [r for r in data[key] if not r["ok"]]
        assert rows["500"]["infra_errors"] == rows["500"]["affected"] == 1 and rows["500"]["scores_equal"]
        assert rows["missing_key"]["stopped"] and rows["missing_key"]["requests"] == 0
        assert rows["unknown_tool"]["tool_errors"] == {"unknown_tool": 1} and rows["unknown_tool"]["infra_errors"] == 0
        import importlib.util

        spec = importlib.util.spec_from_file_location("boundaries", BENCHMARKS / "boundaries.py")
        assert spec is not None and spec.loader is not None
        boundaries = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(boundaries)
        assert [r["attack"] for r in data["boundaries"]] == [attack for _, attack, _ in boundaries.ATTACKS]  # every attack ran
        assert all(r["held"] for r in data["boundaries"]), [r for r in data["boundaries"] if not r["held"]]
    elif script == "synthesis_overhead.py":
        assert data["accepted"] == data["drafts"] == 2 and data[key] > 0  # every scripted draft was verified and kept
        assert data["fresh_process_accepted"] == 2 and data["fresh_process_wall_s"] > 0  # and again from a fresh process
    elif script == "app_startup.py":
        assert [r["screen"] for r in data[key]] == ["browser", "solve"]
        for result in data[key]:  # the real app painted, then showed its data, in a pseudo-terminal
            assert result["missed"] == 0 and 0 < result["first_paint_median_s"] <= result["loaded_median_s"]
        assert data["heavy_modules_imported"] == []
    elif script == "model_start.py":  # a fresh model command reached the fake server, both ways
        assert 0 < data[key]["first_request_s"] <= data[key]["command_s"]
        assert 0 < data["litellm"]["first_request_s"] <= data["litellm"]["command_s"]
        assert data["lean_imports_litellm"] is False
    elif script == "compose.py":  # both seeds composed every task asked for, each its own structure
        [music] = data[key]
        assert [r["written"] for r in music["runs"]] == [6, 6] and music["distinct_structures"] == 6
        assert 0 <= music["seed_overlap"] <= 1 and music["suite_overlap"] == 0
    else:
        assert [d["domain"] for d in data[key]] == domain_names()
        assert all(d["rows"] > 18_000 for d in data[key])
        assert data["total_rows"] >= 76_000 and data["goal_all_s"] == 10.0
        assert data["cli"]["median_s"] > 0  # `ebench domains build` from a fresh process


def check_readme_rows(data: dict) -> None:
    """The rows run_all.py turns into the README's table: what, the figure, the goal, met or not,
    and for a comparison with tau-bench / tau2 whether it had a same-run anchor."""
    assert data["readme"]
    for row in data["readme"]:
        assert set(row) - {"anchor"} == {"figure", "value", "goal", "met"} and row.get("anchor", "none") in ("same run", "none")
        assert all(isinstance(row[k], str) and row[k] for k in ("figure", "value", "goal")) and row["met"] in (True, False, None)


def check_no_anchor(rows: list[dict]) -> None:
    """Without checkouts, the comparison rows say "no anchor", print no ratio and judge nothing."""
    compared = [r for r in rows if "anchor" in r]
    assert compared and all(r["anchor"] == "none" and r["met"] is None for r in compared)
    assert any(r["value"].startswith("no anchor: tau-bench: no checkout given") for r in compared)
    assert not any("x (" in r["value"] or "tau-bench retail" in r["value"] for r in compared)


@pytest.mark.slow
def test_run_all_collects_every_script_and_writes_the_table_between_the_markers(tmp_path, music_world):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import run_all
    finally:
        sys.path.remove(str(BENCHMARKS))

    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run_all.py"), "--quick", "--no-write", "--json"], capture_output=True, text=True, check=True
    ).stdout
    data = json.loads(out)
    assert [r["script"] for r in data["scripts"]] == [s[0] for s in run_all.SCRIPTS]
    assert data["machine"]["cores"] >= 1 and data["machine"]["python"] and data["quick"]
    for report in data["scripts"]:
        assert report["ok"], report["error"]
        check_readme_rows(report)

    # A failed script is a row saying so, not a crash.
    failed = run_all.run_script("no_such_script.py", [], 60)
    assert not failed["ok"] and failed["readme"][0]["met"] is False and failed["readme"][0]["value"].startswith("exit ")

    # Rendered into a copy of the README: every row between the markers, the rest untouched.
    readme = tmp_path / "README.md"
    original = (BENCHMARKS.parent / "README.md").read_text(encoding="utf-8")
    readme.write_text(original, encoding="utf-8")
    reports = [*data["scripts"], failed]
    run_all.write_table(readme, run_all.render(reports, data["machine"], quick=True))
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(run_all.START), text.index(run_all.END)
    inside = text[start:end]
    assert text[:start] == original[: original.index(run_all.START)]
    assert text[end:] == original[original.index(run_all.END) :]
    assert f"{data['machine']['cores']} cores" in inside and data["machine"]["date"] in inside
    assert f"suite version {data['machine']['suite']}" in inside and data["machine"]["suite"] not in ("?", None)
    for report in reports:
        for row in report["readme"]:
            assert run_all._cell(row["figure"]) in inside and run_all._cell(row["value"]) in inside
    table_rows = [line for line in inside.splitlines() if line.startswith("| ") and not line.startswith("| script")]
    assert len(table_rows) == sum(len(r["readme"]) for r in reports)
    # No checkout was given: the comparisons with tau-bench / tau2 are marked as having no anchor.
    assert "No tau-bench / tau2 checkout was given" in inside
    assert (
        sum(line.endswith("| no anchor |") for line in table_rows)
        == sum(r.get("anchor") == "none" for rep in reports for r in rep["readme"])
        > 0
    )


def test_run_all_marks_which_figures_came_from_a_same_run_anchor():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import run_all
    finally:
        sys.path.remove(str(BENCHMARKS))

    rows = [
        {"figure": "harness per trial against tau-bench", "value": "120x", "goal": ">= 100x", "met": True, "anchor": "same run"},
        {
            "figure": "a lookup against tau-bench's",
            "value": "no anchor: tau2: no checkout given",
            "goal": "<=",
            "met": None,
            "anchor": "none",
        },
        {"figure": "whole trial", "value": "4 ms", "goal": "< 6 ms", "met": True},
    ]
    host = {"date": "2026-12-01", "cores": 2, "cpu": "test", "python": "3.11"}
    table = run_all.render([{"script": "trial_overhead.py", "readme": rows}], host, anchors=["tau-bench"])
    lines = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| script")]
    assert [line.rsplit("|", 2)[1].strip() for line in lines] == ["same run", "no anchor", ""]
    assert "tau-bench measured in the same run" in table
