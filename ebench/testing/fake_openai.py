"""A local OpenAI-compatible chat-completions server, for tests and benchmarks (127.0.0.1 only).

The real litellm client talks to it over HTTP like to any OpenAI-compatible API. What it answers
is decided by a responder, a function of the request body:

- `Script`: a fixed list of replies, one per request (an error status, a text, tool calls);
- `ReferencePlayer`: plays each task's reference solution as tool calls, one step per turn or
  every independent step at once (parallel calls), reading earlier results from the conversation.

    with FakeOpenAI(ReferencePlayer(tasks), delay=0.2) as server:
        ... litellm model "openai/fake", api_base=server.base_url, api_key="fake" ...

`python -m ebench.testing.fake_openai --delay 0.2` serves a ReferencePlayer over the shipped
suite in its own process and prints its base URL (benchmarks/batch_throughput.py uses it).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int
    body: dict[str, Any]


def completion(content: str | None = None, tool_calls: Iterable[tuple[str, Any]] = (), tokens: tuple[int, int] = (100, 20),
               model: str = "fake") -> Reply:
    """A 200 reply: an assistant message with text and/or tool calls (name, arguments as a dict or a raw string)."""
    calls = []
    for name, args in tool_calls:
        calls.append({"id": f"call_{next(_ids)}", "type": "function",
                      "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}})
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return Reply(200, {
        "id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": 1767225600, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)},
    })


def error(status: int, message: str = "fake error") -> Reply:
    kinds = {429: "rate_limit_exceeded", 401: "invalid_api_key", 400: "invalid_request_error"}
    return Reply(status, {"error": {"message": message, "type": kinds.get(status, "server_error"), "code": None}})


_ids = itertools.count(1)


class Script:
    """Replies in order, one per request; the last one repeats when the script runs out."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.lock = threading.Lock()
        self.index = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            reply = self.replies[min(self.index, len(self.replies) - 1)]
            self.index += 1
            return reply


class ReferencePlayer:
    """A 'model' that solves each task with its reference solution, through the conversation alone:
    it recognises the task by the user's request and resolves `$from` references from the tool
    results in the messages. `parallel` sends every step whose inputs are known in one turn;
    `skip_last` leaves out the last N steps (a trial that stops short)."""

    def __init__(self, tasks: Iterable[Any], parallel: bool = False, skip_last: int = 0) -> None:
        self.by_query = {task.query: task for task in tasks}
        self.parallel = parallel
        self.skip_last = skip_last

    def __call__(self, body: dict[str, Any]) -> Reply:
        from ..tasks.spec import resolve_args

        messages = body.get("messages") or []
        query = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        task = self.by_query.get(query)
        if task is None:
            return completion("I do not know this task.")
        steps = task.reference_solution[:len(task.reference_solution) - self.skip_last]
        results = []
        for message in messages:
            if message.get("role") == "tool":
                try:
                    results.append(json.loads(message.get("content") or "null"))
                except json.JSONDecodeError:
                    results.append(None)
        done = len(results)
        if done >= len(steps):
            return completion("Done.")
        batch = [steps[done]]
        if self.parallel:
            for step in steps[done + 1:]:
                if _depends_on_pending(step.args, done + len(batch) - 1, done):
                    break
                batch.append(step)
        calls = [(step.tool, resolve_args(step.args, results)) for step in batch]
        return completion(None, calls)


def _depends_on_pending(args: Any, last_pending: int, first_pending: int) -> bool:
    if isinstance(args, dict):
        if "$from" in args:
            return first_pending <= int(args["$from"]) <= last_pending
        return any(_depends_on_pending(v, last_pending, first_pending) for v in args.values())
    if isinstance(args, list):
        return any(_depends_on_pending(v, last_pending, first_pending) for v in args)
    return False


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # many trials connect at once

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().server_bind()


class FakeOpenAI:
    """The server; `requests` keeps every request body received, `headers` their headers (lower-case names)."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply], delay: float = 0.0, port: int = 0) -> None:
        self.responder = responder
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: stdout may be a protocol
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(error(400, "request body is not JSON"))
                    return
                owner.requests.append(body)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                if owner.delay:
                    time.sleep(owner.delay)
                try:
                    reply = owner.responder(body)
                except Exception as exc:  # a responder bug shows as a 500 the test can see
                    reply = error(500, f"responder failed: {type(exc).__name__}: {exc}")
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                data = json.dumps(reply.body).encode()
                head = (f"HTTP/1.1 {reply.status} X\r\ncontent-type: application/json\r\n"
                        f"content-length: {len(data)}\r\n\r\n").encode()
                self.wfile.write(head + data)  # one write: no Nagle/delayed-ACK stall
                self.wfile.flush()

        self.server = _Server(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server playing reference solutions.")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument("--parallel", action="store_true", help="send independent steps as parallel calls")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    from ..tasks.suite import load_suite

    server = FakeOpenAI(ReferencePlayer(load_suite().tasks, parallel=args.parallel), delay=args.delay, port=args.port)
    print(server.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
