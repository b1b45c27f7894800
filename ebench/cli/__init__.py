"""The `ebench` command line.

Only typer, the standard library, ebench.errors and the solver registry (its names, for `ebench
run --help`) are imported at module level: each command imports what it needs when it runs, so
`ebench --help` stays fast (no litellm, no mcp, no textual, no Faker).
Expected errors (an unknown domain, tool or actor, a malformed argument: every EBenchError, and
an OSError) are printed as one line on stderr with their exit code, never as a traceback, by the
root command (`common.OneLineErrors`).
"""

from __future__ import annotations

import typer

from . import common
from .domains import domains_app
from .export import export_app
from .imports import import_app
from .mcp import mcp_app
from .play import play_command, replay_command
from .report import report_command
from .run import regrade_command, run_command
from .sessions import sessions_app
from .tasks import tasks_app
from .tools import tools_app

app = typer.Typer(
    name="ebench",
    help="E-Bench: synthetic product worlds, multi-step tool-use tasks graded by database diff.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    cls=common.OneLineErrors,
)


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"ebench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print ebench's version and exit."),
) -> None:
    """E-Bench: synthetic product worlds, multi-step tool-use tasks graded by database diff."""


app.add_typer(domains_app, name="domains")
app.add_typer(tools_app, name="tools")
app.add_typer(tasks_app, name="tasks")
app.add_typer(mcp_app, name="mcp")
app.add_typer(sessions_app, name="sessions")
app.add_typer(export_app, name="export")
app.add_typer(import_app, name="import")
app.command("play")(play_command)
app.command("replay")(replay_command)
app.command("run")(run_command)
app.command("regrade")(regrade_command)
app.command("report")(report_command)


def main() -> None:
    import sys

    # A solver's text may hold lone surrogates (recorded escaped); echoing one must not crash.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    app(prog_name="ebench")  # the same name in messages whether run as `ebench` or `python -m ebench`


if __name__ == "__main__":
    main()
