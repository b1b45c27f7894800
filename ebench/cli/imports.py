"""`ebench import inspect LOG --out DIR`: what another harness recorded, as an ebench run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from . import common

import_app = typer.Typer(help="Make run directories of what other harnesses recorded.", no_args_is_help=True)


@import_app.command("inspect")
def import_inspect(
    log: Path = typer.Argument(
        ..., metavar="LOG", help="An Inspect AI log (.eval or .json) of `inspect eval ebench/ebench`.", show_default=False
    ),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="The run directory to write (new, or an empty folder).", show_default=False),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Convert an Inspect AI log of ebench's eval into a run directory: each sample's session (the
    log keeps it), its results line and a manifest naming the model, the mode and the log. `ebench
    report DIR` scores it like any run, and the app's replay opens its sessions."""
    try:
        from ..integrations.inspect import import_log
    except ImportError:  # the optional extra is not installed
        common.fail("ebench import inspect needs Inspect AI: pip install 'ebench[inspect]'", 2)
    done = import_log(log, out)
    if as_json:
        common.print_json(done.to_dict())
        return
    rate = f" ({done.passed}/{done.trials - done.infra_errors} passed)" if done.trials > done.infra_errors else ""
    infra = f", {done.infra_errors} infrastructure error(s) left out of the scores" if done.infra_errors else ""
    common.console().print(f"imported {done.trials} trial(s){rate}{infra} into {out}", markup=False, soft_wrap=True)
