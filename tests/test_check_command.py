"""The one check command: CI runs exactly what the README tells a contributor to run, and the check
runs the format, the lint and the types before the tests."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", quick_start, flags=re.S)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert commands[1] == ci and ci.endswith("scripts/check --no-tests && .venv/bin/python -m pytest")


def test_the_check_runs_format_lint_and_types_before_the_tests() -> None:
    check = ROOT / "scripts" / "check"
    assert os.access(check, os.X_OK)
    steps = re.findall(r'^\s*step "([a-z]+)" "\$python" -m (.+)$', check.read_text(encoding="utf-8"), flags=re.M)
    assert steps == [
        ("format", "ruff format --check"),
        ("lint", "ruff check"),
        ("types", "mypy ebench"),
        ("tests", 'pytest "${pytest_args[@]}"'),
    ]


def test_an_unknown_option_is_one_line_and_exit_2() -> None:
    done = subprocess.run([ROOT / "scripts" / "check", "--bogus"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["check: unknown option --bogus (see scripts/check --help)"]
