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
    ],
)
def test_benchmark_prints_json_figures(script, args, key, music_world):
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args, "--json"], capture_output=True, text=True, check=True
    ).stdout
    data = json.loads(out)
    if script == "tool_calls.py":
        assert {r["tool"].split("(")[0] for r in data} >= {"get_song", "search_songs", "create_playlist"}
        assert all(r["median_us"] > 0 for r in data)
    elif script == "cli_startup.py":
        assert data[key] == []
    else:
        assert data[key][0]["rows"] > 18_000
