"""The command line keeps its promises: one-line usage errors that name the real cause, --json on
every reporting command with only JSON on stdout, short capability names, --version, and call
arguments shown decoded."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import ebench
from ebench.sessions.timeline import shown_args

REPO = Path(ebench.__file__).resolve().parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ebench", *args], capture_output=True, text=True, timeout=300)


def one_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["tools", "call", "--domain", "music"], ["Missing argument", "ebench tools call --help"]),
        (["--nope"], ["No such option: --nope"]),
        (["tools", "list", "--domain", "nope"], ["unknown domain 'nope'", "music, meeting, moba"]),
        (["report", "/nonexistent/run"], ["/nonexistent/run: no such file or folder"]),
        (["play", "--theme", "nope"], ["unknown theme 'nope'", "ebench-dark", "ebench-contrast"]),
        (["replay", "/nonexistent", "--theme", "nope"], ["unknown theme 'nope'"]),
        (["tools", "describe", "-d", "music", "search_song"], ["search_songs"]),
        (["tasks", "list", "--capability", "magic"], ["unknown capability 'magic'", "aggregation (aggregation_computation)"]),
        (["run", "--batch", "--solver", "oracle", "--max-turns", "zero"], ["Invalid value for '--max-turns'", "ebench run --help"]),
        # Malformed arguments are a usage mistake (exit 2, one line), not a tool's error (exit 1, JSON).
        (["tools", "call", "-d", "music", "-a", "1", "get_song", "{oops"], ["Arguments are not valid JSON", "position 1"]),
        (["tools", "call", "-d", "music", "-a", "1", "get_song", "[1]"], ["must be a JSON object, got array"]),
        # A model string litellm cannot route is refused before any trial: short, naming the fix.
        (["run", "--batch", "--model", "notaprovider/xyz"], ["'notaprovider/xyz'", "provider/model", "openai/gpt-4o-mini"]),
        (["tasks", "generate", "--seed", "-3", "--out", "/tmp/never"], ["--seed", "greater than or equal to 0"]),
        (["tasks", "scenarios", "--seed", "-1", "--out", "/tmp/never"], ["--seed", "greater than or equal to 0"]),
        (["domains", "build", "--seed", "-1"], ["--seed", "greater than or equal to 0"]),
    ],
)
def test_usage_and_input_errors_are_one_line_naming_the_cause(args, words, music_world):
    result = cli(*args)
    assert result.returncode == 2
    line = one_line(result)
    for word in words:
        assert word in line, line


def test_version_and_license():
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"ebench {ebench.__version__}"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


def test_every_reporting_command_takes_json_and_prints_only_json(music_world, tmp_path):
    for args in (
        ["tools", "call", "--domain", "music", "--actor", "1", "get_my_profile", "{}"],
        ["tasks", "schema"],
        ["domains", "list"],
        ["tasks", "list", "--domain", "music"],
        ["tools", "list", "--domain", "music"],
    ):
        result = cli(*args, "--json")
        assert result.returncode == 0, (args, result.stderr)
        json.loads(result.stdout)


def test_short_capability_names_are_accepted(music_world):
    short = json.loads(cli("tasks", "list", "--capability", "aggregation", "--json").stdout)
    full = json.loads(cli("tasks", "list", "--capability", "aggregation_computation", "--json").stdout)
    assert short == full and short


def test_call_arguments_are_shown_decoded():
    assert shown_args('{"album_id": 483}') == {"album_id": 483}
    assert shown_args("not json") == "not json" and shown_args("[1, 2]") == "[1, 2]"
    assert shown_args({"album_id": 483}) == {"album_id": 483}
