"""The domains behind MCP: any MCP client can be the solver (`ebench mcp serve`).

Built on the SDK's `MCPServer`. Each domain tool is served with the registry's own JSON schema
and description; a call goes straight to the registry (its strict validation and structured
errors, not the SDK's argument coercion) on a private scratch copy of the world, acting as the
chosen actor at the world's frozen time. The world file itself is never written.

The domain description is an MCP prompt and a resource; with a task, so is the task's request
(never its expected diff). With a task the server runs a trial: every call is recorded in a
session (in the data directory's sessions folder, the solver named after the MCP client), and
when the client disconnects the trial is graded, so it shows in `ebench report` like any other.

Nothing here writes to stdout: stdout is the protocol. Logging goes to stderr.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources.types import TextResource
from mcp.server.mcpserver.tools.base import Tool as MCPTool
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp.types import CallToolResult, TextContent

from .. import __version__
from ..domains import get_domain
from ..paths import sessions_dir
from ..tasks.spec import Task
from .prompts import solver_context
from .record import SessionWriter, new_session_file, secret_values
from .trial import AGENT_STOPPED, Trial, TrialSummary

log = logging.getLogger("ebench.mcp")


def _no_arguments():  # no return annotation: no output schema for clients to enforce
    """Placeholder: registry tools validate their own arguments."""


_PLACEHOLDER = func_metadata(_no_arguments, structured_output=False)


class RegistryTool(MCPTool):
    """An MCP tool whose call is handled by `fn(arguments)` with the raw arguments: the registry
    validates them (strictly, with its own error codes) instead of the SDK's pydantic model."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        return await self.fn(arguments, context)


def registry_tool(fn: Callable[[dict[str, Any], Any], Any], name: str, description: str, parameters: dict[str, Any]) -> RegistryTool:
    return RegistryTool(fn=fn, name=name, title=None, description=description, parameters=parameters,
                        fn_metadata=_PLACEHOLDER, is_async=True, context_kwarg=None, annotations=None)


def _result(payload: Any, is_error: bool) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    structured = payload if isinstance(payload, dict) else {"result": payload}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, is_error=is_error)


def build_server(trial: Trial, code: bool = False) -> MCPServer:
    """An MCPServer exposing the trial's tools, prompts and resources."""
    domain = trial.domain
    label = domain.actor_label(trial.conn, trial.actor)
    context = solver_context(domain, label)
    tools: list[MCPTool] = []

    def handler(name: str) -> Callable[[dict[str, Any], Any], Any]:
        async def handle(arguments: dict[str, Any], request: Any) -> CallToolResult:
            note_client(trial, request)
            result = await anyio.to_thread.run_sync(trial.call, name, arguments)
            return _result(result.payload(), not result.ok)
        return handle

    for tool in domain.tools:
        tools.append(registry_tool(handler(tool.name), tool.name, tool.description, tool.parameters))
    if code:
        tools.append(_exec_code_tool(trial))

    server: MCPServer = MCPServer(
        name=f"ebench-{domain.name}", title=f"ebench: {domain.title}", instructions=context, tools=tools,
        version=__version__,
    )
    server.add_resource(TextResource(
        uri=f"ebench://{domain.name}/description", name="domain_description", title=f"The {domain.name} product",
        description="What the product is, what the assistant can do, and its rules.", mime_type="text/markdown",
        text=context,
    ))

    def describe_domain() -> str:
        return context

    server.add_prompt(Prompt.from_function(describe_domain, name="domain_description",
                                           description="The product, the current user and the current time."))
    if trial.task is not None:
        task = trial.task
        request = f"{context}\n\nThe user's request:\n{task.query}"
        server.add_resource(TextResource(
            uri=f"ebench://task/{task.id}", name="task", title=f"Task {task.id}",
            description="The request to carry out with the tools.", mime_type="text/plain", text=task.query,
        ))

        def solve_task() -> str:
            return request

        server.add_prompt(Prompt.from_function(solve_task, name="task",
                                               description=f"Task {task.id}: the request, with the product context."))
    return server


def _exec_code_tool(trial: Trial) -> MCPTool:
    async def handle(arguments: dict[str, Any], request: Any) -> CallToolResult:
        note_client(trial, request)
        code = arguments.get("code") if isinstance(arguments, dict) and set(arguments) == {"code"} else None
        result = await anyio.to_thread.run_sync(trial.exec_code, code)
        return _result(result.value if result.value is not None else result.payload(), not result.ok)

    spec = trial.sandbox().tool_schema()["function"]  # lists the tool functions with their signatures
    return registry_tool(handle, spec["name"], spec["description"], spec["parameters"])


def note_client(trial: Trial, request: Any) -> None:
    """Record, once, which MCP client is the solver (its name labels the trial in reports)."""
    if trial.solver.get("client") is not None:
        return
    info = None
    try:
        params = request.session.client_params
        info = params.client_info if params is not None else None
    except (AttributeError, ValueError):  # no request context (a direct call)
        pass
    name = getattr(info, "name", None) or "unknown client"
    version = getattr(info, "version", None) or ""
    trial.solver.update(client={"name": name, "version": version}, label=f"mcp:{name}")
    trial.note("client", name=name, version=version)


def serve(domain_name: str, actor: int | None, task: Task | None = None, code: bool = False,
          on_finish: Callable[[Trial, TrialSummary], None] | None = None) -> None:
    """Serve over stdio until the client disconnects. With a task, the trial is recorded as a
    session in the data directory's sessions folder, and graded at the end."""
    domain = get_domain(domain_name)
    writer = None
    if task is not None:
        writer = SessionWriter(new_session_file(sessions_dir(), task.id, "mcp"), secret_values())
    try:
        trial = Trial(task, domain=domain, actor=actor, writer=writer, solver={"name": "mcp"}, code=code,
                      session_name=str(writer.path) if writer else "")
    except BaseException:  # an unknown actor: no trial, so no session file either
        if writer is not None:
            writer.close()
            writer.path.unlink(missing_ok=True)
        raise
    try:
        server = build_server(trial, code=code)
        server.run("stdio")
        if task is not None:
            summary = trial.finish(AGENT_STOPPED)
            if on_finish:
                on_finish(trial, summary)
    finally:
        trial.close()
