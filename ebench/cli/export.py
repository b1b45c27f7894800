"""`ebench export trajectories RUN...`: recorded model conversations as fine-tuning data."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

import typer

from ..errors import os_error_exit_code
from . import common

export_app = typer.Typer(help="Export what runs recorded, for use elsewhere.", no_args_is_help=True)


class TrajectoryFormat(StrEnum):  # the names of ebench.sessions.export.FORMATS (imported when the command runs)
    OPENAI_CHAT = "openai-chat"
    SHAREGPT = "sharegpt"


@export_app.command("trajectories")
def export_trajectories(
    runs: list[Path] = typer.Argument(
        ...,
        metavar="RUN...",
        help="Run directories (each with manifest.json and results.jsonl), or a folder of sessions.",
        show_default=False,
    ),
    fmt: TrajectoryFormat = typer.Option(
        TrajectoryFormat.OPENAI_CHAT,
        "--format",
        help="openai-chat (OpenAI's chat fine-tuning format: messages with tool_calls and tool results) "
        "or sharegpt (LLaMA-Factory's ShareGPT tool-calling convention).",
    ),
    passed_only: bool = typer.Option(False, "--passed-only", help="Only the trials that passed."),
    metadata: bool = typer.Option(
        False,
        "--metadata",
        help="Add a `metadata` key to each line (task, trial, grade, model, session). Off by default: "
        "OpenAI's fine-tuning format has no such key.",
    ),
    out: Path | None = typer.Option(None, "--out", metavar="FILE", help="Write the JSON lines to FILE instead of stdout."),
    as_json: bool = typer.Option(False, "--json", help="Give the summary ({written, skipped: {reason: count}}) as JSON."),
) -> None:
    """Write the recorded conversations of chosen trials as JSON lines, one trial a line: the
    system prompt, the user's request, the model's turns with their tool calls, each call's
    result and the tools the model was offered (as perturbed, in a --perturb interface run);
    with --metadata also the task, trial, grade, model and session in `metadata`.
    Trials without a model conversation (people's attempts, the oracle, MCP clients),
    infrastructure errors, damaged sessions and turns cut short by a limit are skipped and
    counted by reason. The summary goes to stderr when the lines go to stdout, else to stdout."""
    from ..sessions.export import ExportSummary, export_lines
    from ..sessions.record import secret_values
    from ..terminal import printable_json

    loaded = common.runs(runs)
    summary = ExportSummary()
    exported = export_lines(loaded, fmt.value, summary, passed_only=passed_only, metadata=metadata, secrets=secret_values())
    # The same values, written so that a terminal showing them (stdout, or `cat FILE`) obeys none
    # of their characters: the same lines whichever the destination.
    lines = (printable_json(line) for line in exported)
    if out is None:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
        sys.stderr.write((_json_line(summary.to_dict()) if as_json else summary.describe()) + "\n")
        return
    _write(out, lines)
    if as_json:
        common.print_json(summary.to_dict())
    else:
        common.console().print(f"{summary.describe()} to {out}", markup=False)


def _write(out: Path, lines: Iterable[str]) -> None:
    """All the lines, or nothing: written beside FILE, then moved over it."""
    partial = out.with_name(f".{out.name}.partial")
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line + "\n")
        os.replace(partial, out)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        common.fail(f"cannot write {out}: {exc.strerror or exc}", os_error_exit_code(exc))  # 74: the disk; 2: the path
    except BaseException:  # Ctrl-C: no half-written file is left behind
        partial.unlink(missing_ok=True)
        raise


def _json_line(data: object) -> str:
    import json

    return json.dumps(data, ensure_ascii=False)
