"""The domains behind MCP: any MCP client can be the solver (`ebench mcp serve`).

Built on the SDK's `MCPServer`. Each domain tool is served with the registry's own JSON schema
and description; a call goes straight to the registry (its strict validation and structured
errors, not the SDK's argument coercion) on a private scratch copy of the world, acting as the
chosen actor at the world's frozen time. The world file itself is never written.

The domain description is an MCP prompt and a resource; with a task, so is the task's request
(never its expected diff), and when the client disconnects the trial is graded.

Nothing here writes to stdout: stdout is the protocol. Logging goes to stderr.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
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
from ..domains.engine.domain import Domain
from ..domains.engine.tools import ToolResult
from ..domains.engine.world import ensure_world, scratch_copy
from ..tasks.diff import ChangeTracker
from ..tasks.grading import Grade, grade
from ..tasks.spec import Task

log = logging.getLogger("ebench.mcp")


def _no_arguments():  # no return annotation: no output schema for clients to enforce
    """Placeholder: registry tools validate their own arguments."""


_PLACEHOLDER = func_metadata(_no_arguments, structured_output=False)


class RegistryTool(MCPTool):
    """An MCP tool whose call is handled by `fn(arguments)` with the raw arguments: the registry
    validates them (strictly, with its own error codes) instead of the SDK's pydantic model."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        return await self.fn(arguments)


def registry_tool(fn: Callable[[dict[str, Any]], Any], name: str, description: str, parameters: dict[str, Any]) -> RegistryTool:
    return RegistryTool(fn=fn, name=name, title=None, description=description, parameters=parameters,
                        fn_metadata=_PLACEHOLDER, is_async=True, context_kwarg=None, annotations=None)


def _result(payload: Any, is_error: bool) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False)
    structured = payload if isinstance(payload, dict) else {"result": payload}
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured, is_error=is_error)


def solver_context(domain: Domain, actor_label: str) -> str:
    """What a solver is told about the product, the user and the time (also the server's instructions)."""
    return (f"{domain.description}\n\nThe current {domain.actor_noun} is {actor_label}. "
            f"The current time is {domain.now}.")


@dataclass
class Trial:
    """A private copy of the world bound to one actor; every tool call is counted, none touches the world."""

    domain: Domain
    actor: int
    task: Task | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.conn = scratch_copy(ensure_world(self.domain))
        self.tracker = ChangeTracker(self.conn, self.domain.schema)
        self.env = self.domain.env(self.conn, self.actor)  # ToolError for an unknown actor
        self.lock = threading.Lock()  # one tool (or exec_code block) at a time on the copy

    def call(self, name: str, args: Any) -> ToolResult:
        with self.lock:
            result = self.domain.tools.call(self.env, name, args)
        self.calls.append({"tool": name, "ok": result.ok, "error_code": result.error_code})
        return result

    def grade(self) -> Grade | None:
        if self.task is None:
            return None
        return grade(self.task.expected_diff, self.tracker.diff(), self.domain.schema)

    def close(self) -> None:
        self.conn.close()


def build_server(trial: Trial, code: bool = False) -> MCPServer:
    """An MCPServer exposing the trial's tools, prompts and resources."""
    domain = trial.domain
    label = domain.actor_label(trial.conn, trial.actor)
    context = solver_context(domain, label)
    tools: list[MCPTool] = []

    def handler(name: str) -> Callable[[dict[str, Any]], Any]:
        async def handle(arguments: dict[str, Any]) -> CallToolResult:
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
    from .sandbox import ExecCode

    runner = ExecCode(trial.call, trial.domain.tools)
    trial_close = trial.close

    def close() -> None:
        runner.close()
        trial_close()

    trial.close = close  # type: ignore[method-assign]

    async def handle(arguments: dict[str, Any]) -> CallToolResult:
        code = arguments.get("code") if isinstance(arguments, dict) else None
        if not isinstance(code, str) or set(arguments) != {"code"}:
            return _result({"error": {"code": "invalid_arguments", "message": "exec_code takes one argument, 'code' (a string)."}}, True)
        result = await anyio.to_thread.run_sync(runner.run, code)
        return _result(result.to_payload(), not result.ok)

    spec = runner.tool_schema()["function"]  # lists the tool functions with their signatures
    return registry_tool(handle, spec["name"], spec["description"], spec["parameters"])


def serve(domain_name: str, actor: int | None, task: Task | None = None, code: bool = False,
          on_finish: Callable[[Trial, Grade | None], None] | None = None) -> None:
    """Serve over stdio until the client disconnects; then grade the trial if there is a task."""
    domain = get_domain(domain_name)
    trial = Trial(domain, task.actor if task else actor, task)  # type: ignore[arg-type]
    try:
        server = build_server(trial, code=code)
        server.run("stdio")
        result = trial.grade()
        if on_finish:
            on_finish(trial, result)
    finally:
        trial.close()
