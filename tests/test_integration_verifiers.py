"""The verifiers RL environment's tests (tests/rl/) run in their own environment, .venv-rl: verifiers
0.4 pins openai below 3, which Inspect AI's providers (in .venv, the `test` extra) refuse, so the
two cannot share one. The README's test command makes .venv-rl (scripts/rl-venv); this test runs
the RL tests there, and fails when they fail or cannot run."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RL_PYTHON = ROOT / ".venv-rl" / "bin" / "python"


def test_the_verifiers_environment_passes_its_tests_in_its_own_environment():
    assert RL_PYTHON.exists(), "no .venv-rl: make it with scripts/rl-venv (the README's test command does)"
    out = subprocess.run(
        [str(RL_PYTHON), "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-q", "tests/rl"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "LITELLM_OFFLINE_MODE": "true"},
        timeout=1800,
    )
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert re.search(r"\b5 passed\b", out.stdout), out.stdout[-2000:]


def test_the_main_environment_leaves_verifiers_out():
    """Inspect AI and verifiers pin incompatible openai releases: .venv holds the first only."""
    assert importlib.util.find_spec("inspect_ai") is not None
    assert importlib.util.find_spec("verifiers") is None
