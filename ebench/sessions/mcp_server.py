"""The domains behind MCP: any MCP client can be the solver (`ebench mcp serve`).

Built on the SDK's `MCPServer`. Each domain tool is served with the registry's own JSON schema
and description; a call goes straight to the registry (its strict validation and structured
errors, not the SDK's argument coercion) on a private scratch copy of the world, acting as the
chosen actor at the world's frozen time. The world file itself is never written.

The domain description is an MCP prompt and a resource; with a task, so is the task's request
(never its expected diff). With a task the server runs a trial: every call is recorded in a
session (in the data directory's sessions folder, the solver named after the MCP client), and
when the client disconnects, or the server gets SIGTERM or SIGINT, the trial is graded, so it
shows in `ebench report` like any other. A connection that made no tool call was no attempt:
its session ends "abandoned", without a result, and no score counts it.

Nothing here writes to stdout: stdout is the protocol. Logging goes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources.types import TextResource
from mcp.server.mcpserver.tools.base import Tool as MCPTool
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp.types import CallToolResult, TextContent

from .. import __version__
from ..engine.domain_registry import get_domain
from ..engine.tools import ToolResult
from ..paths import sessions_dir
from ..tasks.spec import Task
from .events import ClientEvent, EndEvent, SignalEvent
from .prompts import solver_context
from .record import new_session_file, secret_values
from .results import TrialSummary
from .trial import AGENT_STOPPED, Trial, open_trial
from .users import UserSettings

log = logging.getLogger("ebench.mcp")

# The end of a --task connection that made no tool call. Its end event has no summary (the
# results line), so it is no trial of any solver: `ebench report` leaves it out.
ABANDONED = "abandoned"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _no_arguments():  # type: ignore[no-untyped-def]  # no return annotation: no output schema for clients to enforce
    """Placeholder: registry tools validate their own arguments."""


_PLACEHOLDER = func_metadata(_no_arguments, structured_output=False)


class RegistryTool(MCPTool):
    """An MCP tool whose call is handled by `fn(arguments)` with the raw arguments: the registry
    validates them (strictly, with its own error codes) instead of the SDK's pydantic model."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        return await self.fn(arguments, context)


# A tool's handler: the call's arguments and the MCP request, answered with the tool's result.
Handler = Callable[[dict[str, Any], Any], Awaitable[CallToolResult]]


def registry_tool(fn: Callable[[dict[str, Any], Any], Any], name: str, description: str, parameters: dict[str, Any]) -> RegistryTool:
    return RegistryTool(
        fn=fn,
        name=name,
        title=None,
        description=description,
        parameters=parameters,
        fn_metadata=_PLACEHOLDER,
        is_async=True,
        context_kwarg=None,
        annotations=None,
    )


def _result(payload: Any, is_error: bool) -> CallToolResult:
    """The payload sent once, as JSON text. Every client reads a result's text content (the spec
    asks for it beside any structured content, for the clients that read only the text), while
    structured content is optional for a tool without an output schema, and a host may hand both
    to the model. Sending both made every result 1.7-1.8x as long on the wire."""
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))], is_error=is_error)


class Calls:
    """Runs the solver's top-level calls one at a time, and none once the trial is finished, so
    the end event stays the session's last line whatever the client sends meanwhile; ending the
    trial takes the same lock, so a call in flight is finished and recorded first."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial
        self.lock = threading.Lock()

    def run(self, request: Any, act: Callable[[], ToolResult]) -> ToolResult:
        with self.lock:
            if self.trial.finished:
                return ToolResult("", False, None, "internal_error", "The trial is over: the server is stopping.")
            note_client(self.trial, request)
            return act()


class TrialServer(MCPServer):
    """An MCPServer that hands a call to a tool it does not serve to the registry too: the solver
    gets the same structured error as for every other mistake (`unknown_tool`, with close names),
    and the call is recorded, instead of the SDK's plain-text "Unknown tool"."""

    def __init__(self, *args: Any, unknown: Callable[[str, dict[str, Any], Any], Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unknown = unknown
        self._served = {tool.name for tool in kwargs.get("tools") or ()}

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if name not in self._served:
            return await self._unknown(name, arguments, context)
        return await super().call_tool(name, arguments, context)


def build_server(trial: Trial, code: bool = False, calls: Calls | None = None) -> MCPServer:
    """An MCPServer exposing the trial's tools, prompts and resources."""
    domain = trial.domain
    label = domain.actor_label(trial.conn, trial.actor)
    context = solver_context(domain, label)
    calls = calls or Calls(trial)
    tools: list[MCPTool] = []

    def handler(name: str) -> Handler:
        async def handle(arguments: dict[str, Any], request: Any) -> CallToolResult:
            result = await anyio.to_thread.run_sync(calls.run, request, lambda: trial.call(name, arguments))
            return _result(result.for_solver(), not result.ok)

        return handle

    for tool in domain.tools:
        tools.append(registry_tool(handler(tool.name), tool.name, tool.description, tool.parameters))
    exec_code = _exec_code_handler(trial, calls)
    if code:
        spec = trial.sandbox().tool_schema()["function"]  # lists the tool functions with their signatures
        tools.append(registry_tool(exec_code, spec["name"], spec["description"], spec["parameters"]))

    if trial.user is not None:  # the task's user holds facts (users.py): the client asks through a tool
        tools.append(registry_tool(_ask_user_handler(trial), "ask_user", ASK_USER_DESCRIPTION, ASK_USER_PARAMETERS))

    async def unknown(name: str, arguments: dict[str, Any], request: Any) -> CallToolResult:
        # exec_code outside code mode says so; any other name gets the registry's unknown_tool.
        return await (exec_code if name == "exec_code" else handler(name))(arguments, request)

    server: MCPServer = TrialServer(
        name=f"ebench-{domain.name}",
        title=f"ebench: {domain.title}",
        instructions=context,
        tools=tools,
        version=__version__,
        unknown=unknown,
    )
    about = "What the product is, what the assistant can do, and its rules."
    _add_text(
        server, f"ebench://{domain.name}/description", "domain_description", f"The {domain.name} product", about, context, "text/markdown"
    )

    def describe_domain() -> str:
        return context

    server.add_prompt(
        Prompt.from_function(describe_domain, name="domain_description", description="The product, the current user and the current time.")
    )
    if trial.task is not None:
        task = trial.task
        request = f"{context}\n\nThe user's request:\n{task.query}"
        _add_text(server, f"ebench://task/{task.id}", "task", f"Task {task.id}", "The request to carry out with the tools.", task.query)

        def solve_task() -> str:
            return request

        server.add_prompt(
            Prompt.from_function(solve_task, name="task", description=f"Task {task.id}: the request, with the product context.")
        )
    return server


def _add_text(server: MCPServer, uri: str, name: str, title: str, description: str, text: str, mime_type: str = "text/plain") -> None:
    """Serve `text` as a read-only resource."""
    server.add_resource(TextResource(uri=uri, name=name, title=title, description=description, mime_type=mime_type, text=text))


def _exec_code_handler(trial: Trial, calls: Calls) -> Handler:
    async def handle(arguments: dict[str, Any], request: Any) -> CallToolResult:
        code = arguments.get("code") if isinstance(arguments, dict) and set(arguments) == {"code"} else None
        result = await anyio.to_thread.run_sync(calls.run, request, lambda: trial.exec_code(code))
        return _result(result.for_solver(), not result.ok)

    return handle


ASK_USER_DESCRIPTION = (
    "Ask the user a question (end it with '?'): the request may leave out something only the user knows. Ask before you change anything."
)
ASK_USER_PARAMETERS = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}


def _ask_user_handler(trial: Trial) -> Handler:
    async def handle(arguments: dict[str, Any], request: Any) -> CallToolResult:
        question = arguments.get("question") if isinstance(arguments, dict) else None
        if not isinstance(question, str) or not question.strip():
            return _result({"error": {"code": "invalid_arguments", "message": "ask_user takes one argument, 'question' (a string)."}}, True)
        trial.message("assistant", question)
        answer = await trial.ask_user(question)
        return _result({"answer": answer if answer is not None else "(the user says nothing: ask a question, ending with '?')"}, False)

    return handle


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
    trial.record(ClientEvent(name=str(name), version=str(version)))


class StopSignals:
    """SIGTERM and SIGINT while serving: the first is noted and wakes the serving loop, so that the
    trial is graded and recorded before the process ends; a second one ends the process at once.
    Noting is all a handler does: a Python-level handler can interrupt the main thread anywhere,
    even inside the session writer's lock, so the recording is done elsewhere."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.wake: Callable[[], None] | None = None
        self.active = threading.current_thread() is threading.main_thread()  # signal handlers work only there
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if self.active:
            self._previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
            self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def install(self) -> None:
        """Python-level handlers: outside the serving loop (before it, and while the trial ends)."""
        if self.active:
            for sig in STOP_SIGNALS:
                signal.signal(sig, self._handler)

    def _handler(self, signum: int, frame: Any) -> None:
        self.note(signum)

    def note(self, signum: int) -> None:
        if self.signum is not None:
            die(signum)
        self.signum = signum
        if self.wake is not None:
            self.wake()


def die(signum: int) -> None:
    """End the process by `signum` itself, as without a handler: the parent sees the signal."""
    sys.stderr.flush()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # not reached: the default action of both signals ends the process


async def _serve_stdio(server: MCPServer, stop: StopSignals, on_stop: Callable[[], None]) -> None:
    """Serve until the client disconnects. On a stop signal, `on_stop()` and then the process
    ends by that signal, from inside the loop: leaving the loop would wait for the stdin reader,
    a thread blocked until the client writes or closes the pipe."""
    stopped = anyio.Event()
    loop = asyncio.get_running_loop()  # MCPServer.run uses anyio's asyncio backend too
    if stop.active:
        # The loop's own handlers: they wake it whichever thread the kernel hands the signal to.
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, stop.note, sig)
    stop.wake = stopped.set  # called from the loop's signal callbacks only
    try:
        async with anyio.create_task_group() as tasks:

            async def until_disconnect() -> None:
                await server.run_stdio_async()
                tasks.cancel_scope.cancel()

            tasks.start_soon(until_disconnect)
            if stop.signum is None:  # a signal noted before the loop watched is seen here
                await stopped.wait()
            assert stop.signum is not None
            try:
                await anyio.to_thread.run_sync(on_stop)
            except Exception:  # the process must end all the same
                log.exception("could not record the end of the trial")
            finally:
                die(stop.signum)
    finally:
        stop.wake = None
        if stop.active:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
            stop.install()


def serve(
    domain_name: str,
    actor: int | None,
    task: Task | None = None,
    code: bool = False,
    on_finish: Callable[[Trial, TrialSummary | None], None] | None = None,
) -> None:
    """Serve over stdio until the client disconnects or the server gets SIGTERM or SIGINT (then
    the process ends by that signal). With a task, the trial is recorded as a session in the data
    directory's sessions folder and graded at the end; `on_finish` gets its summary, or None when
    the client made no tool call (the session ends "abandoned", without a result)."""
    domain = get_domain(domain_name)
    with StopSignals() as stop:
        if task is not None:  # recorded (a trial that cannot start leaves no session file)
            path = new_session_file(sessions_dir(), task.id, "mcp")
            trial = open_trial(
                task,
                path,
                secrets=secret_values(),
                domain=domain,
                solver={"name": "mcp"},
                code=code,
                session_name=str(path),
                user=UserSettings().for_task(task),
            )
        else:
            trial = Trial(None, domain=domain, actor=actor, solver={"name": "mcp"}, code=code)
        calls = Calls(trial)

        def end() -> None:
            end_trial(trial, calls, stop.signum, on_finish)

        try:
            server = build_server(trial, code=code, calls=calls)
            if stop.signum is None:
                anyio.run(_serve_stdio, server, stop, end)
                stop.install()  # closing the loop may have reset them
            end()  # the client disconnected (or a signal came before serving began)
        finally:
            trial.close()
        if stop.signum is not None:  # a signal while the trial was being ended: it is recorded, now obey
            die(stop.signum)


def end_trial(trial: Trial, calls: Calls, signum: int | None, on_finish: Callable[[Trial, TrialSummary | None], None] | None) -> None:
    """Grade and record the end of a --task trial, once: after the call in flight, before any other."""
    with calls.lock:
        if trial.task is None or trial.finished:
            return
        if signum is not None:
            trial.record(SignalEvent(signal=signal.Signals(signum).name))
        summary = None
        if trial.tool_calls == 0:
            # No call, no attempt: nothing to grade (the copy is untouched) and no result to score.
            trial.record(EndEvent(termination=ABANDONED, error="the client made no tool call", diff=[], grade=None, summary=None))
            trial.finished = True
            trial.close()
        else:
            summary = trial.finish(AGENT_STOPPED)
    if on_finish:
        on_finish(trial, summary)
