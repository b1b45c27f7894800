"""Issue 33: the command line's help reads as written prose at any width: no line broken where the
source wraps, no `<bool>` after a flag as if it took a value, no option name cut at 80 columns."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from ebench.cli import app
from ebench.cli.common import first_sentence, range_words, unwrapped

runner = CliRunner()


def every_command() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = [()]

    def walk(group, prefix: tuple[str, ...]) -> None:
        for name, command in getattr(group, "commands", {}).items():
            found.append((*prefix, name))
            walk(command, (*prefix, name))

    walk(get_command(app), ())
    return found


COMMANDS = every_command()


def help_text(path: tuple[str, ...], width: int) -> str:
    """The help as printed in a terminal of `width` columns (the runner's output is 80 wide; another
    width takes a process of its own, which reads COLUMNS)."""
    if width == 80:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, result.output
        return result.output
    done = subprocess.run(
        [sys.executable, "-m", "ebench", *path, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | {"COLUMNS": str(width)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_prose_helpers():
    assert unwrapped("One sentence\n    wrapped in the source.\n\n    Second paragraph\n    also wrapped.") == (
        "One sentence wrapped in the source.\n\nSecond paragraph also wrapped."
    )
    assert unwrapped("A list:\n\n- one\n- two") == "A list:\n\n- one\n- two"  # a list keeps its lines
    assert first_sentence("Score runs: Avg and more.\nThen the rest. And more.") == "Score runs: Avg and more."
    assert first_sentence("No period at the end") == "No period at the end"
    assert range_words("x>=1") == "at least 1" and range_words("1<=x<=65535") == "1 to 65535" and range_words("x<10") == "less than 10"


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) or "ebench" for p in COMMANDS])
def test_no_flag_is_typed_and_no_option_name_is_cut_at_80_columns(path):
    text = help_text(path, 80)
    assert "<bool>" not in text
    cut = re.findall(r"(--[a-z][a-z0-9-]*…)", text)
    assert not cut, cut


def description(text: str) -> list[list[str]]:
    """The help's description paragraphs (between the usage line and the first panel), as lines."""
    body = text.split("Usage:", 1)[1].split("╭", 1)[0].splitlines()[1:]
    paragraphs: list[list[str]] = [[]]
    for line in body:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return [p for p in paragraphs if p]


@pytest.mark.parametrize(
    "path", [("report",), ("tasks", "synthesize"), ("play",), ()], ids=["report", "tasks synthesize", "play", "ebench"]
)
def test_a_description_is_wrapped_at_the_terminals_width_not_the_sources(path):
    width = 160
    for paragraph in description(help_text(path, width)):
        for line in paragraph[:-1]:  # every line but a paragraph's last runs to the width
            assert len(line) > width - 30, (line, paragraph)


def test_the_command_list_gives_each_command_its_first_sentence():
    text = help_text((), 200)
    rows = [line for line in text.splitlines() if line.startswith("│ report")]
    assert rows, text
    entry = text.split("│ report", 1)[1].split("│ domains", 1)[0]
    words = " ".join(part.strip(" │") for part in entry.splitlines())
    assert words.strip().startswith("Score runs:") and words.strip().endswith("per task).")  # one sentence, whole
    assert "Trials that hit" not in words  # the rest of the description is the command's own help
