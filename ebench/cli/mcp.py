"""`ebench mcp`: put a domain behind MCP so that any MCP client can be the solver."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from . import common

if TYPE_CHECKING:
    from ..sessions.results import TrialSummary
    from ..sessions.trial import Trial

mcp_app = typer.Typer(help="Serve a domain's tools over MCP (stdio).", no_args_is_help=True)


@mcp_app.command("serve")
def mcp_serve(
    domain: str | None = typer.Option(None, "--domain", "-d", help="The domain (optional with --task: the task's domain)."),
    actor: int | None = typer.Option(None, "--actor", "-a", help="Id of the user the tools act for (with --task: the task's actor)."),
    task_id: str | None = typer.Option(
        None,
        "--task",
        "-t",
        help="Run this task as a trial: its request becomes a prompt and a resource, and the trial is graded when the "
        "client disconnects or the server gets SIGTERM/SIGINT; a connection that made no tool call is recorded "
        "as abandoned and not scored.",
    ),
    code: bool = typer.Option(False, "--code", help="Also offer exec_code: Python that calls the tools as functions."),
) -> None:
    """Serve over stdio: the domain's tools on a private copy of the world, the domain description as a
    prompt and a resource (and the task's request, with --task). Nothing but the protocol is written
    to stdout; messages go to stderr."""
    import logging
    import sys

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="ebench mcp: %(message)s")
    task = None
    if task_id is not None:
        task = common.task(task_id)
        if task.scenario is not None:
            common.fail(f"{task_id} is a scenario: an MCP client has no way to end its turns; run it with `ebench run --scenarios`", 2)
        if domain is not None and domain != task.domain:
            common.fail(f"task {task.id} belongs to the {task.domain} domain, not {domain}", 2)
        if actor is not None and actor != task.actor:
            common.fail(f"task {task.id} is solved as actor {task.actor}; leave out --actor", 2)
        domain = task.domain
    if domain is None:
        common.fail("give --domain (or --task)", 2)
    if task is None and actor is None:
        common.fail("give --actor: the id of the user the tools act for", 2)
    d = common.domain(domain)
    common.world(d, quiet=True)  # build before serving, never printing to stdout

    from ..engine.tools import ToolError
    from ..sessions.mcp_server import serve
    from ..terminal import printable

    def finished(trial: Trial, summary: TrialSummary | None) -> None:
        assert trial.task is not None  # end_trial calls this for --task trials only
        if summary is None:  # no tool call: recorded as abandoned, not a trial of any solver
            line = f"task {trial.task.id}: abandoned (no tool call; not scored); session: {trial.session_name}"
        else:
            verdict = trial.final_grade.summary() if trial.final_grade else summary.termination
            line = f"task {summary.task}: {verdict} ({summary.tool_calls} tool calls); session: {summary.session}"
        print(f"ebench mcp: {printable(line)}", file=sys.stderr)  # the task file's and the grade's words

    try:
        serve(d.name, actor, task, code=code, on_finish=finished)
    except ToolError as exc:
        common.fail(exc.message, 2)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
