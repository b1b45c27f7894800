"""`ebench sessions`: the record formats a trial and a run leave on disk."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from . import common

sessions_app = typer.Typer(help="The session record format (one JSON line per event of a trial).", no_args_is_help=True)


class RecordFormat(StrEnum):
    SESSION = "session"  # one event of a session file
    RESULTS = "results"  # one line of a run's results.jsonl
    MANIFEST = "manifest"  # a run's manifest.json


def record_schema(kind: RecordFormat) -> dict[str, Any]:
    if kind is RecordFormat.RESULTS:
        from ..sessions.results import results_json_schema

        return results_json_schema()
    if kind is RecordFormat.MANIFEST:
        from ..sessions.runs import manifest_json_schema

        return manifest_json_schema()
    from ..sessions.events import session_json_schema

    return session_json_schema()


@sessions_app.command("schema")
def sessions_schema(
    kind: RecordFormat = typer.Argument(RecordFormat.SESSION, help="session (an event), results (a results line) or manifest"),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Print the JSON Schema of a session event (ebench-session/2), a results line (ebench-results/1)
    or a run manifest (ebench-run/1), for editors and other tools (always JSON; --json is accepted
    like everywhere)."""
    common.print_json(record_schema(kind))
