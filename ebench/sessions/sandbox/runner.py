"""ExecCode: runs exec_code blocks for one trial, one fresh worker process per block.

The parent side of the sandbox. Workers are forked by a zygote (zygote.py: confined and
preloaded once, shared by the process's runners), and each runner keeps one spare worker warming
up (forked, its limits set, tool functions built, audit hook installed) so that a block starts in
a few milliseconds, also right after the last one. A worker runs one block and exits: no
variables persist between blocks. Tool calls are executed here, in the parent, with `call_tool`;
the worker only sees their results.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import EBenchError
from .isolation import LAYERS
from .limits import Limits, output_marker, time_message, tool_calls_message
from .process import ProtocolError, Timeout, WorkerDied, WorkerProcess
from .protocol import clean_text
from .result import CallRecord, ExecResult
from .specs import tool_specs
from .zygote import acquire, release

CallTool = Callable[[str, dict[str, Any]], Any]  # -> ToolResult (ok, value, error_code, error_message, payload())
OnCall = Callable[[CallRecord], None]


class SandboxError(EBenchError, RuntimeError):
    """The sandbox cannot start a worker at all (not a block's failure)."""


class _Spare:
    """A worker being started in a background thread: spawn, send init, wait for ready."""

    def __init__(self, runner: ExecCode) -> None:
        self.worker: WorkerProcess | None = None
        self.ready: dict[str, Any] | None = None
        self.error: str | None = None
        self.discarded = False
        self._guard = threading.Lock()  # between `discard` and the thread publishing its worker
        self.thread = threading.Thread(target=self._start, args=(runner,), daemon=True, name="exec_code-spare")
        self.thread.start()

    def _start(self, runner: ExecCode) -> None:
        limits = runner.limits
        if self.discarded:  # closed before the thread ran
            return
        try:
            worker = WorkerProcess(limits, runner.zygote)
        except OSError as exc:
            self.error = f"cannot start a worker: {exc}"
            return
        with self._guard:
            self.worker = worker
            discarded = self.discarded
        if discarded:  # closed while the process was being spawned: `discard` kills it
            return
        deadline = time.monotonic() + limits.startup_seconds
        try:
            worker.send({"t": "init", "tools": runner.specs, "limits": {"output_chars": limits.output_chars}}, deadline)
            msg = worker.receive(deadline)
            if msg["t"] != "ready":
                raise ProtocolError(f"expected ready, got {msg['t']}")
            self.ready = msg
        except (Timeout, WorkerDied, ProtocolError) as exc:
            detail = worker.exit_description() if isinstance(exc, WorkerDied) else str(exc) or type(exc).__name__
            worker.kill()
            self.error = f"the sandbox worker did not start ({detail})"

    def take(self) -> tuple[WorkerProcess, dict[str, Any]]:
        self.thread.join()
        if self.error or self.worker is None or self.ready is None:
            raise SandboxError(self.error or "the sandbox worker did not start")
        return self.worker, self.ready

    def discard(self) -> None:
        """Stop the worker, also one still starting: killed now, so that closing a trial right
        after it opened does not wait out the worker's start (its thread then ends at once)."""
        with self._guard:
            self.discarded = True
            worker = self.worker
        if worker is not None and self.thread.is_alive():
            worker.signal_kill()
        self.thread.join()
        if self.worker is not None:
            self.worker.kill()


class ExecCode:
    """Runs exec_code blocks for one trial. Thread-safe: blocks run one at a time."""

    def __init__(
        self,
        call_tool: CallTool,
        tools: Iterable[Any],
        limits: Limits | None = None,
        layers: Iterable[str] = LAYERS,
        require: Iterable[str] = (),
    ) -> None:
        self.call_tool = call_tool
        self.specs = tool_specs(tools)
        self.tool_names = {s["name"] for s in self.specs}
        self.limits = limits or Limits()
        self.layers = tuple(layers)
        self.require = tuple(require)
        self._lock = threading.Lock()
        self._isolation: dict[str, bool] | None = None
        self._closed = False
        self.zygote = acquire(self.layers, self.require)  # started by the first spare, shared with other runners
        self._spare: _Spare | None = _Spare(self)

    # -- public ----------------------------------------------------------------------------
    @property
    def isolation(self) -> dict[str, bool]:
        """The layers applied to this trial's workers, e.g. {"audit_hook": True, "rlimits": True,
        "netns": True, "landlock": True, "seccomp": True, "no_new_privs": True}."""
        with self._lock:
            if self._isolation is None:
                self._ensure_spare()
                assert self._spare is not None
                _, ready = self._spare.take()
                self._isolation = dict(ready["isolation"])
            return dict(self._isolation)

    def wait_ready(self) -> None:
        """Block until the spare worker is ready (a block started then pays no start-up)."""
        with self._lock:
            self._ensure_spare()
            assert self._spare is not None
            self._spare.thread.join()

    def tool_schema(self) -> dict[str, Any]:
        """The exec_code tool's schema for these tools and limits."""
        from .schema import exec_code_tool

        return exec_code_tool(self.specs, self.limits)

    def run(self, code: str, on_call: OnCall | None = None) -> ExecResult:
        """Run one block; blocks until it ends. Never raises for the block's own failures."""
        with self._lock:
            if self._closed:
                raise SandboxError("this ExecCode is closed")
            return self._run(code, on_call)

    def close(self) -> None:
        with self._lock:
            if self._spare is not None:
                self._spare.discard()
                self._spare = None
            if not self._closed:
                self._closed = True
                release(self.zygote)

    def __enter__(self) -> ExecCode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            if not self._closed and self._spare is not None:
                self._spare.discard()
        except Exception:
            pass

    # -- one block -------------------------------------------------------------------------
    def _ensure_spare(self) -> None:
        if self._spare is None:
            self._spare = _Spare(self)

    def _run(self, code: str, on_call: OnCall | None) -> ExecResult:
        started = time.perf_counter()
        limits = self.limits
        if not isinstance(code, str):
            return ExecResult(False, error="exec_code needs the code as a string.", limit="code_size")
        if len(code) > limits.code_chars:
            return ExecResult(
                False,
                error=f"The code is {len(code)} characters long; a block may have at most {limits.code_chars}.",
                limit="code_size",
                seconds=time.perf_counter() - started,
            )
        self._ensure_spare()
        assert self._spare is not None
        spare, self._spare = self._spare, None
        try:
            worker, ready = spare.take()
        except SandboxError:
            # One retry with a fresh worker: a spare can die of old age or an OOM killer.
            worker, ready = _Spare(self).take()
        if self._isolation is None:
            self._isolation = dict(ready["isolation"])
        self._spare = _Spare(self)  # warms up while this block runs
        block = _Block(worker, limits, self.call_tool, self.tool_names, on_call)
        try:
            result = block.execute(code)
        finally:
            worker.kill()
        result.seconds = time.perf_counter() - started
        return result


class _Block:
    """The conversation with one worker for one block."""

    def __init__(self, worker: WorkerProcess, limits: Limits, call_tool: CallTool, names: set[str], on_call: OnCall | None) -> None:
        self.worker = worker
        self.limits = limits
        self.call_tool = call_tool
        self.names = names
        self.on_call = on_call
        self.calls: list[CallRecord] = []
        self.requested = 0  # calls asked for, refused ones included
        self.stdout: list[str] = []
        self.stdout_chars = 0
        self.printed = 0
        self.limit: str | None = None

    def execute(self, code: str) -> ExecResult:
        limits = self.limits
        deadline = time.monotonic() + limits.wall_seconds
        try:
            self.worker.send({"t": "run", "code": code}, deadline)
            while True:
                msg = self.worker.receive(deadline)
                kind = msg["t"]
                if kind == "out":
                    self._out(msg["data"])
                elif kind == "call":
                    self._call(msg, deadline)
                elif kind == "done":
                    result = self._done(msg)
                    # The worker exits right after its end message; the allowance only matters
                    # when the block's own time is already spent.
                    self.worker.expect_end(max(deadline, time.monotonic() + limits.startup_seconds))
                    self.worker.finish()
                    return result
                else:
                    raise ProtocolError(f"unexpected {kind} message during a block")
        except Timeout:
            self.worker.kill()
            return self._failed(time_message(limits), "time")
        except WorkerDied:
            how = self.worker.exit_description()
            if "SIGXCPU" in how:
                return self._failed(time_message(limits), "time")
            if self.limit == "output":
                return self._failed(self._output_message(), "output")
            return self._failed(
                f"The block's worker process died before finishing ({how}). Tool calls made before that "
                "took effect; nothing else is kept. Run the block again or change it.",
                "crash",
            )
        except ProtocolError as exc:
            self.worker.kill()
            return self._failed(f"The block broke the sandbox's protocol ({exc}) and was stopped.", "protocol")

    # -- messages --------------------------------------------------------------------------
    def _out(self, data: str) -> None:
        self.printed += len(data)
        room = self.limits.output_chars - self.stdout_chars
        if room > 0:
            piece = data[:room]
            self.stdout.append(clean_text(piece))
            self.stdout_chars += len(piece)
        if self.printed > self.limits.output_chars:
            self.limit = "output"
        if self.printed > 2 * self.limits.output_chars + 65536:
            # The worker enforces the limit itself; one that keeps printing is not cooperating.
            self.worker.kill()
            raise WorkerDied()

    def _call(self, msg: dict[str, Any], deadline: float) -> None:
        self.requested += 1
        if msg["id"] != self.requested:
            raise ProtocolError(f"call id {msg['id']} out of sequence")
        if len(self.calls) >= self.limits.tool_calls:
            self.limit = "tool_calls"
            reply = {
                "t": "result",
                "ok": False,
                "limit": "tool_calls",
                "error": {"code": "limit", "message": tool_calls_message(self.limits)},
            }
            self.worker.send(reply, deadline)
            return
        tool, args = msg["tool"], msg["args"]
        started = time.perf_counter()
        try:
            result = self.call_tool(tool, args)
            ok, payload = bool(result.ok), result.payload()
            code = None if ok else result.error_code
            value = result.value if ok else None
            error = None if ok else {"code": result.error_code, "message": result.error_message}
        except Exception as exc:  # the caller's function failed: the block gets an error result
            ok, code, value = False, "internal_error", None
            error = {"code": code, "message": f"{type(exc).__name__}: {exc}"}
            payload = {"error": error}
        record = CallRecord(len(self.calls) + 1, tool, args, ok, payload, time.perf_counter() - started, code)
        self.calls.append(record)
        if self.on_call is not None:
            self.on_call(record)
        self.worker.send({"t": "result", "id": record.index, "ok": ok, "value": value, "error": error}, deadline)

    def _done(self, msg: dict[str, Any]) -> ExecResult:
        if msg["limit"] == "output":
            self.limit = self.limit or "output"
        limit = self.limit or msg["limit"]
        if limit not in (None, "output", "tool_calls", "memory", "forbidden"):
            limit = None
        value = msg["value"]
        if value is not None and len(value) > self.limits.output_chars + 200:
            value = value[: self.limits.output_chars] + "... [value truncated]"
        value = None if value is None else clean_text(value)
        error = None if msg["error"] is None else clean_text(msg["error"])
        if self.limit == "tool_calls":
            error = tool_calls_message(self.limits)
        elif self.limit == "output" and not error:
            error = self._output_message()
        if error is not None and len(error) > 20_000:
            error = error[:20_000] + "... [truncated]"
        ok = msg["ok"] and self.limit is None
        return ExecResult(ok, self._stdout(), value if ok or value else None, error, limit, self.calls)

    def _failed(self, error: str, limit: str) -> ExecResult:
        return ExecResult(False, self._stdout(), None, error, limit, self.calls)

    def _stdout(self) -> str:
        text = "".join(self.stdout)
        if self.printed > self.limits.output_chars or self.limit == "output":
            text += output_marker(self.limits)
        return text

    def _output_message(self) -> str:
        return (
            f"Output limit reached: the block printed more than {self.limits.output_chars} characters "
            "and was stopped. Print less (aggregate, slice, count)."
        )
