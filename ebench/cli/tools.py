"""`ebench tools`: list a domain's tools and call them on a scratch copy."""

from __future__ import annotations

import json

import typer

from . import common

tools_app = typer.Typer(help="List the tools of a domain and call them on a scratch copy.", no_args_is_help=True)


@tools_app.command("list")
def tools_list(
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """List a domain's tools: name, read/write, summary (and JSON schema with --json)."""
    d = common.domain(domain)
    if as_json:
        common.print_json(
            [
                {"name": t.name, "kind": t.kind, "summary": t.summary, "description": t.description, "parameters": t.parameters}
                for t in d.tools
            ]
        )
        return
    from rich.table import Table

    table = Table(title=f"{d.name} tools ({len(d.tools)})")
    table.add_column("tool", style="bold")
    table.add_column("kind")
    table.add_column("arguments")
    table.add_column("summary")
    for t in d.tools:
        args = ", ".join(p.name if p.required else f"[dim]{p.name}[/]" for p in t.params)
        table.add_row(t.name, "[yellow]write[/]" if t.kind == "write" else "read", args, t.summary)
    common.console().print(table)


@tools_app.command("describe")
def tools_describe(
    name: str = typer.Argument(..., help="The tool's name."),
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Show one tool in full: its description and every argument with type and default."""
    from ..engine.tools import ToolError

    d = common.domain(domain)
    try:
        tool = d.tools.get(name)
    except ToolError as exc:
        common.fail(exc.message, 2)
    if as_json:
        common.print_json(tool.openai_schema()["function"] | {"kind": tool.kind})
        return
    from rich.table import Table

    console = common.console()
    console.print(f"[bold]{tool.name}[/] ({tool.kind})\n")
    console.print(tool.description + "\n")
    table = Table(show_edge=False, caption="[bold]bold[/]: required", caption_justify="left")
    for col in ("argument", "type", "description"):
        table.add_column(col, overflow="fold")
    for p in tool.params:
        schema = tool.parameters["properties"][p.name]
        kind = schema.get("type", "") + (f"[{schema['items']['type']}]" if "items" in schema else "")
        if "enum" in schema:
            kind = "|".join(str(v) for v in schema["enum"])
        default = "" if p.required else f" [dim](default {json.dumps(p.default)})[/]"
        table.add_row(f"[bold]{p.name}[/]" if p.required else p.name, kind, p.description + default)
    console.print(table)


@tools_app.command("call")
def tools_call(
    name: str = typer.Argument(..., help="The tool's name."),
    args: str = typer.Argument("{}", help="The arguments as a JSON object, e.g. '{\"song_id\": 12}'."),
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    actor: int = typer.Option(..., "--actor", "-a", help="Id of the user the tool acts for."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Call one tool on a scratch copy of the world and print its result as JSON (always; --json
    is accepted like everywhere).

    The world itself is never modified. Exit code 1 when the tool returns an error; 2 when the
    arguments are not a JSON object (a usage mistake, said in one line on stderr).
    """
    from ..engine.tools import ToolError, parse_arguments

    d = common.domain(domain)
    try:
        arguments = parse_arguments(args)
    except ToolError as exc:
        common.fail(exc.message, 2)
    env = common.actor_env(d, actor)
    result = d.tools.call(env, name, arguments)
    common.print_json(result.payload())
    if not result.ok:
        raise typer.Exit(1)


@tools_app.command("exec")
def tools_exec(
    file: str = typer.Argument(..., help="A Python file to run as one exec_code block ('-' reads stdin)."),
    domain: str = typer.Option(..., "--domain", "-d", help="The domain."),
    actor: int = typer.Option(..., "--actor", "-a", help="Id of the user the tools act for."),
    as_json: bool = common.JSON_OPTION,
) -> None:
    """Run a file as one exec_code block on a scratch copy: the domain's tools are functions.

    Prints what the block printed, the last expression's value, the tool calls it made and its
    error. The world itself is never modified. Exit code 1 when the block fails.
    """
    import sys
    from pathlib import Path

    from ..sessions.sandbox import ExecCode, SandboxError

    if file == "-":
        code = sys.stdin.read()
    else:
        try:
            code = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            common.fail(f"cannot read {file}: {exc}", 2)
    d = common.domain(domain)
    env = common.actor_env(d, actor)
    try:
        with ExecCode(lambda name, args: d.tools.call(env, name, args), d.tools) as runner:
            result = runner.run(code)
    except SandboxError as exc:
        common.fail(str(exc))
    if as_json:
        common.print_json(result.to_dict())
    else:
        from ..terminal import markup_escaped, printable

        # Everything below is the block's: made printable, so it cannot drive the terminal.
        console = common.console()
        if result.stdout:
            shown = printable(result.stdout)
            sys.stdout.write(shown if shown.endswith("\n") else shown + "\n")
            sys.stdout.flush()
        if result.value is not None:
            console.print(f"[bold]value:[/] {markup_escaped(result.value)}")
        if result.calls:
            console.print(f"[bold]tool calls ({len(result.calls)}):[/]")
            for call in result.calls:
                status = "[green]ok[/]" if call.ok else f"[red]error {markup_escaped(call.error_code or '')}[/]"
                console.print(
                    f"  {call.index}. {markup_escaped(call.tool)}({markup_escaped(json.dumps(call.args, ensure_ascii=False))}) {status}"
                )
        if result.error:
            Console = type(console)
            Console(stderr=True, highlight=False, emoji=False).print(
                f"[bold red]error{' (' + result.limit + ')' if result.limit else ''}:[/]\n{markup_escaped(result.error)}"
            )
        console.print(f"[dim]{result.seconds:.2f} s[/]")
    if not result.ok:
        raise typer.Exit(1)
