"""`ebench export trajectories RUN...`: recorded model conversations as fine-tuning data; `ebench export
dataset --out DIR`: the shipped task sets as a dataset `datasets.load_dataset` reads."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path

import typer

from ..errors import os_error_exit_code
from . import common

export_app = typer.Typer(help="Export what runs recorded, or the task sets, for use elsewhere.", no_args_is_help=True)


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


class DatasetSplit(StrEnum):  # ebench.integrations.dataset.SPLIT_CHOICES
    SUITE = "suite"
    ASK = "ask"
    COMPOSED = "composed"
    ALL = "all"


class DatasetFormat(StrEnum):  # ebench.integrations.dataset.FORMATS
    JSONL = "jsonl"
    PARQUET = "parquet"


@export_app.command("dataset")
def export_dataset(
    out: Path = typer.Option(
        ..., "--out", metavar="DIR", help="The dataset's folder (created; refused if it holds anything, but with --force)."
    ),
    split: DatasetSplit = typer.Option(
        DatasetSplit.ALL, "--split", help="The task set: suite, ask, composed, or all (each its own split of the dataset)."
    ),
    fmt: DatasetFormat = typer.Option(
        DatasetFormat.JSONL, "--format", help="jsonl, or parquet (needs pyarrow: pip install 'ebench\\[datasets]')."
    ),
    force: bool = typer.Option(False, "--force", help="Write into a folder that is not empty (the dataset's own files are replaced)."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Write the shipped task sets as a dataset: one row per task (the task file, its structured
    fields as JSON text), a file per split and domain under DIR/data, and a dataset card (README.md:
    license, configs per domain and per domain and split, the columns, how grading works, the
    citation) that `datasets.load_dataset(DIR)` and `load_dataset(DIR, "music-suite")` read as it
    is. Worlds are named by seed and fingerprint (`ebench domains build --seed` makes them); rows
    written back as JSON lines run with `ebench run --tasks-dir FILE.jsonl`."""
    from ..integrations.dataset import export_dataset as write_dataset

    try:
        made = write_dataset(out, split.value, fmt.value, force=force)
    except OSError as exc:
        common.fail_os(exc, f" (writing the dataset to {out})")
    if as_json:
        common.print_json(made.to_dict())
    else:
        common.console().print(
            f"Wrote {made.rows} tasks in {len(made.files)} {made.format} files and a dataset card to {out}", markup=False
        )


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
