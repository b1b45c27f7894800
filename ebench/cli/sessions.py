"""`ebench sessions`: the session record format."""

from __future__ import annotations

import typer

from . import common

sessions_app = typer.Typer(help="The session record format (one JSON line per event of a trial).", no_args_is_help=True)


@sessions_app.command("schema")
def sessions_schema(as_json: bool = common.JSON_OPTION) -> None:
    """Print the JSON Schema of one session event (ebench-session/1), for editors and other tools
    (always JSON; --json is accepted like everywhere)."""
    from ..sessions.events import session_json_schema

    common.print_json(session_json_schema())
