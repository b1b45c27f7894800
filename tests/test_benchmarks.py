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
        ("tool_calls.py", ["--repeat", "2", "--rounds", "1"], None),
        ("cli_startup.py", ["--repeat", "1"], "heavy_modules_imported"),
        ("trial_overhead.py", ["--repeat", "1"], "results"),
        ("exec_code.py", ["--blocks", "3", "--calls", "20"], "isolation"),
        ("batch_throughput.py", ["--trials", "3", "--delay", "0.01", "--oracle-tasks", "4"], "speed_up"),
        ("live_diff.py", ["--repeat", "1"], "results"),
        ("app_startup.py", ["--repeat", "1"], "results"),
        ("synthesis_overhead.py", ["--count", "2"], "harness_ms_per_accepted"),
        pytest.param("faults.py", ["--tasks", "2", "--trials", "1"], "faults", marks=pytest.mark.slow),
    ],
)
def test_benchmark_prints_json_figures(script, args, key, music_world):
    from ebench.domains import domain_names, get_domain

    out = subprocess.run([sys.executable, str(BENCHMARKS / script), *args, "--json"], capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    if script == "tool_calls.py":
        # Every tool of every domain is measured.
        assert [d["domain"] for d in data] == domain_names()
        for report in data:
            assert {r["tool"].split("(")[0] for r in report["tools"]} == set(get_domain(report["domain"]).tools.names)
            assert all(r["median_us"] > 0 for r in report["tools"])
    elif script == "cli_startup.py":
        assert data[key] == []
    elif script == "exec_code.py":
        assert data[key]["audit_hook"] and data["block_start_warm_ms"] > 0 and data["proxied_call_ms"] > 0
    elif script == "trial_overhead.py":
        worlds = [r["domain"] for r in data[key]]
        assert worlds == [w for name in domain_names() for w in (name, f"{name} x10")]
        by = {r["domain"]: r for r in data[key]}
        for name in domain_names():
            assert by[f"{name} x10"]["rows"] >= 9 * by[name]["rows"]  # the inflated world really is bigger
    elif script == "batch_throughput.py":
        assert data["oracle"]["passed"] == data["oracle"]["trials"] == 12
        for leg in ("model_concurrency_1", "model_concurrency_64"):
            assert data[leg]["passed"] == data[leg]["trials"] == 3  # the fake model solved them through litellm
        assert data[key] > 0 and data["harness_ms_per_trial"] > 0
    elif script == "live_diff.py":
        for result in data[key]:  # tasks with about 200 changed rows, all explained and painted
            assert result["expected_rows"] >= 150 and result["lines"] >= 150 and result["total_ms"] > 0
    elif script == "faults.py":
        from ebench.testing.fake_openai import FAULTS

        rows = {r["fault"]: r for r in data[key]}
        assert set(FAULTS) | {"(none)", "missing_key"} <= set(rows)
        assert data["all_ok"], [r for r in data[key] if not r["ok"]]
        assert rows["500"]["infra_errors"] == rows["500"]["affected"] == 1 and rows["500"]["scores_equal"]
        assert rows["missing_key"]["stopped"] and rows["missing_key"]["requests"] == 0
        assert rows["unknown_tool"]["tool_errors"] == {"unknown_tool": 1} and rows["unknown_tool"]["infra_errors"] == 0
    elif script == "synthesis_overhead.py":
        assert data["accepted"] == data["drafts"] == 2 and data[key] > 0  # every scripted draft was verified and kept
    elif script == "app_startup.py":
        assert [r["screen"] for r in data[key]] == ["browser", "solve"]
        for result in data[key]:  # the real app painted, then showed its data, in a pseudo-terminal
            assert result["missed"] == 0 and 0 < result["first_paint_median_s"] <= result["loaded_median_s"]
        assert data["heavy_modules_imported"] == []
    else:
        assert [d["domain"] for d in data[key]] == domain_names()
        assert all(d["rows"] > 18_000 for d in data[key])
        assert data["total_rows"] >= 76_000 and data["goal_all_s"] == 10.0
