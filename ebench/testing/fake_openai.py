"""A local OpenAI-compatible chat-completions server, for tests and benchmarks (127.0.0.1 only).

The real litellm client talks to it over HTTP like to any OpenAI-compatible API. What it answers
is decided by a responder, a function of the request body:

- `Script`: a fixed list of replies, one per request (an error status, a text, tool calls);
- `ReferencePlayer`: plays each task's reference solution as tool calls, one step per turn or
  every independent step at once (parallel calls), reading earlier results from the conversation;
- `Faulty`: another responder with a fault injected into the requests a test chooses (an API that
  hangs, fails, rejects the key, cuts or drops its answer; a model that answers with megabytes,
  lone surrogates, an unknown tool or wrong-typed arguments). See FAULTS.

    with FakeOpenAI(ReferencePlayer(tasks), delay=0.2) as server:
        ... litellm model "openai/fake", api_base=server.base_url, api_key="fake" ...

`FakeOpenAI(..., api_key="sk-...")` checks the key like the real API: a request without one, or
with another, gets a 401. (A client with no key at all never reaches the server: litellm refuses
before sending, which is the "missing key" fault: run the client without OPENAI_API_KEY.)

`python -m ebench.testing.fake_openai --delay 0.2` serves a ReferencePlayer over the shipped
suite in its own process and prints its base URL (benchmarks/batch_throughput.py uses it);
`--fault hang` (or any of FAULTS) injects a fault from each conversation's second turn, to try
the command line against it by hand. benchmarks/faults.py runs every fault over a small batch.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
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
    """An answer, and how it is sent: `json` (the status and body), `hang` (nothing, until the
    server stops), `truncated` (the head and half the body, then the connection is closed),
    `dropped` (the connection is closed without an answer)."""

    status: int
    body: Any = None
    send: str = "json"


def hang() -> Reply:
    return Reply(0, None, "hang")


def dropped() -> Reply:
    return Reply(0, None, "dropped")


def truncated(reply: Reply) -> Reply:
    return Reply(reply.status, reply.body, "truncated")


def completion(
    content: str | None = None, tool_calls: Iterable[tuple[str, Any]] = (), tokens: tuple[int, int] = (100, 20), model: str = "fake"
) -> Reply:
    """A 200 reply: an assistant message with text and/or tool calls (name, arguments as a dict or a raw string)."""
    calls = []
    for name, args in tool_calls:
        calls.append(
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return Reply(
        200,
        {
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion",
            "created": 1767225600,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1], "total_tokens": sum(tokens)},
        },
    )


def error(status: int, message: str = "fake error") -> Reply:
    kinds = {429: "rate_limit_exceeded", 401: "invalid_api_key", 400: "invalid_request_error"}
    return Reply(status, {"error": {"message": message, "type": kinds.get(status, "server_error"), "code": None}})


def turn_of(body: dict[str, Any]) -> int:
    """Which model turn a request asks for: 1 + the assistant messages already in the conversation."""
    return 1 + sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")


def on_turn(number: int) -> Callable[[dict[str, Any]], bool]:
    """A `when` for Faulty: the request for that turn of each conversation."""
    return lambda body: turn_of(body) == number


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
    results in the messages. `parallel` sends the next steps up to the first that needs a pending
    result in one turn; `optimal` sends each level of the dependency graph in one turn, the
    fewest turns there are (ebench.tasks.paths); `skip_last` leaves out the last N steps (a trial
    that stops short). A task with a user profile is first asked about (the question the oracle
    asks), unless `asks` is false: then it acts at once, as an agent that guessed.

    Tasks that share a request text are told apart by what else the request carries: the system
    prompt names the product (the domain) and the current user (the task's actor, by the label the
    harness shows). Tasks that still look the same (same request, domain and actor label) get an
    answer saying so, never another task's solution."""

    def __init__(
        self, tasks: Iterable[Any], parallel: bool = False, skip_last: int = 0, *, optimal: bool = False, asks: bool = True
    ) -> None:
        self.by_query: dict[str, list[Any]] = {}
        for task in tasks:
            self.by_query.setdefault(task.query, []).append(task)
        self.parallel = parallel
        self.optimal = optimal
        self.skip_last = skip_last
        self.asks = asks
        self._contexts: dict[int, str] = {}  # id(task) -> the system prompt's product, user and time
        self._wholes: dict[int, Any] = {}  # id(scenario) -> scenario.as_task()
        self._lock = threading.Lock()

    def task_for(self, body: dict[str, Any]) -> Any:
        """The task a request is about, or None (unknown, or ambiguous)."""
        messages = body.get("messages") or []
        query = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        candidates = self.by_query.get(query, []) if isinstance(query, str) else []
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        system = next((m.get("content") for m in messages if m.get("role") == "system"), None) or ""
        matching = [task for task in candidates if self._who(task) in system]
        return matching[0] if len(matching) == 1 else None

    def _who(self, task: Any) -> str:
        """The part of the system prompt that names the domain's product, the task's actor and the
        time (the actor's label read from the task's world once; only for tasks that share their
        request text)."""
        with self._lock:
            if id(task) not in self._contexts:
                from ..engine.domain_registry import get_domain
                from ..engine.world import open_world_readonly
                from ..sessions.prompts import solver_context
                from ..tasks.worlds import task_world

                domain = get_domain(task.domain)
                conn = open_world_readonly(task_world(task))
                try:
                    label = domain.actor_label(conn, task.actor)
                finally:
                    conn.close()
                self._contexts[id(task)] = solver_context(domain, label)
            return self._contexts[id(task)]

    def __call__(self, body: dict[str, Any]) -> Reply:
        from ..tasks.spec import references, resolve_args

        messages = body.get("messages") or []
        task = self.task_for(body)
        if task is None:
            return completion(
                "I do not know this task."
                if not self._shared(messages)
                else "I cannot tell which of several tasks with this request this is."
            )
        if getattr(task, "scenario", None) is not None:
            return self._scenario_turn(task.scenario, messages)
        steps = task.reference_solution[: len(task.reference_solution) - self.skip_last]
        results = []
        for message in messages:
            if message.get("role") == "tool":
                try:
                    results.append(json.loads(message.get("content") or "null"))
                except json.JSONDecodeError:
                    results.append(None)
        done = len(results)
        if self.asks and getattr(task, "user_profile", None) and not done and sum(m.get("role") == "user" for m in messages) < 2:
            from ..sessions.users import question_for

            return completion(question_for(task.user_profile))
        if done >= len(steps):
            return completion("Done.")
        if self.optimal:
            return self._next_level(task, steps, results)
        batch = [steps[done]]
        if self.parallel:
            for step in steps[done + 1 :]:
                if any(done <= int(ref) < done + len(batch) for ref in references(step.args)):  # needs a pending result
                    break
                batch.append(step)
        calls = [(step.tool, resolve_args(step.args, results)) for step in batch]
        return completion(None, calls)

    def _scenario_turn(self, scenario: Any, messages: list[dict[str, Any]]) -> Reply:
        """A scenario, one turn at a time: the turn is the last scenario message the conversation
        holds; its tasks' steps are played one a turn (each level of the turn's dependency graph
        at once with `optimal`), after asking first on a clarify turn; a chat turn gets an
        answer, no call."""
        from ..sessions.users import question_for
        from ..tasks.paths import reference_levels
        from ..tasks.spec import resolve_args

        opened, index = 0, -1
        for position, message in enumerate(messages):
            nxt = index + 1
            if message.get("role") == "user" and nxt < len(scenario.turns) and message.get("content") == scenario.turns[nxt].message:
                opened, index = position, nxt
        turn = scenario.turns[index]
        since = messages[opened + 1 :]
        if turn.kind == "chat":
            return completion("You're welcome." if not turn.message.endswith("?") else "Let me answer from what I know: see above.")
        results = [json.loads(m.get("content") or "null") for m in since if m.get("role") == "tool"]
        replies = sum(m.get("role") == "user" for m in since)
        if self.asks and turn.user_profile and not results and not replies:
            return completion(question_for(turn.user_profile))
        whole = self._as_task(scenario)
        start, end = scenario.turn_spans()[index]
        last = end - (len(turn.tasks[-1].reference_solution) and self.skip_last)
        order = list(range(start, last))
        if self.optimal:
            levels = reference_levels(whole)
            order.sort(key=lambda i: (levels[i], i))
        if len(results) >= len(order):
            return completion("Done.")
        by_step: list[Any] = [None] * len(whole.reference_solution)
        for position, result in enumerate(results):
            by_step[order[position]] = result
        batch = [order[len(results)]]
        if self.optimal:
            batch = [i for i in order[len(results) :] if levels[i] == levels[batch[0]]]
        steps = whole.reference_solution
        return completion(None, [(steps[i].tool, resolve_args(steps[i].args, by_step)) for i in batch])

    def _as_task(self, scenario: Any) -> Any:
        """The scenario as one task (its steps' `$from` references made global), once."""
        with self._lock:
            if id(scenario) not in self._wholes:
                self._wholes[id(scenario)] = scenario.as_task()
            return self._wholes[id(scenario)]

    def _next_level(self, task: Any, steps: list[Any], results: list[Any]) -> Reply:
        """The steps of the next level of the dependency graph; results arrive level by level."""
        from ..tasks.paths import reference_levels
        from ..tasks.spec import resolve_args

        levels = reference_levels(task)[: len(steps)]
        order = sorted(range(len(steps)), key=lambda i: (levels[i], i))
        by_step: list[Any] = [None] * len(steps)
        for position, result in enumerate(results):
            by_step[order[position]] = result
        level = levels[order[len(results)]]
        batch = [i for i in order[len(results) :] if levels[i] == level]
        return completion(None, [(steps[i].tool, resolve_args(steps[i].args, by_step)) for i in batch])

    def _shared(self, messages: list[dict[str, Any]]) -> bool:
        query = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        return isinstance(query, str) and len(self.by_query.get(query, [])) > 1


class PerturbedPlayer:
    """The reference solutions played through a perturbation (ebench.sessions.perturb), for
    perturbed runs: it knows the task and trial by the request and the tools it is offered (it
    computes each (task, trial)'s layer, as the harness does), calls the offered names, retries a
    transient or rate-limited call, reads a canonical page from the smaller pages that make it
    (stopping at a short one), and resolves `$from` references with the noise fields taken out.
    One call per turn. A ReferencePlayer's behaviour is untouched: this is another responder."""

    def __init__(self, tasks: Iterable[Any], perturbation: Any, trials: int = 1) -> None:
        from ..engine.domain_registry import get_domain
        from ..sessions.perturb import Layer

        self.layers: dict[str, list[tuple[Any, Any]]] = {}  # request -> [(task, layer)]
        for task in tasks:
            for number in range(1, trials + 1):
                layer = Layer(perturbation, task, get_domain(task.domain).tools, number)
                self.layers.setdefault(layer.request, []).append((task, layer))

    def __call__(self, body: dict[str, Any]) -> Reply:
        from ..engine.tools import PAGE_SIZE
        from ..sessions.perturb import RETRYABLE
        from ..tasks.spec import resolve_args

        messages = body.get("messages") or []
        query = next((m.get("content") for m in messages if m.get("role") == "user"), None)
        offered = [t["function"]["name"] for t in body.get("tools") or []]
        known = self.layers.get(query, []) if isinstance(query, str) else []
        found = [(t, layer) for t, layer in known if [s["function"]["name"] for s in layer.schemas] == offered]
        if not found:
            return completion("I do not know this task.")
        task, layer = found[0]
        answers = [_tool_answer(message) for message in messages if message.get("role") == "tool"]
        position = 0
        results: list[Any] = []
        for step in task.reference_solution:
            name, sent = layer.present(step.tool, resolve_args(step.args, results))
            page_name = layer.param_names.get(step.tool, {}).get("page")
            parts = PAGE_SIZE // layer.page_size if page_name is not None else 1
            pieces: list[Any] = []
            for part in range(parts):
                call = dict(sent)
                if part:
                    call[page_name] = sent[page_name] + part
                position = _past_retryable(answers, position, RETRYABLE)
                if position >= len(answers):
                    return completion(None, [(name, call)])
                answer = answers[position]
                position += 1
                pieces.append(_without(answer, layer.noise_fields))
                items = answer.get("items") if isinstance(answer, dict) else None
                if not isinstance(items, list) or len(items) < layer.page_size:
                    break
            results.append(_merged(pieces, PAGE_SIZE))
        return completion("Done.")


def _tool_answer(message: dict[str, Any]) -> Any:
    """A tool message's payload (None when it is not JSON)."""
    try:
        return json.loads(message.get("content") or "null")
    except json.JSONDecodeError:
        return None


def _past_retryable(answers: list[Any], position: int, retryable: Any) -> int:
    """The position of the first answer from `position` on that is not a retryable error (the
    player asked again after each): the answer the call finally got, or the end."""
    while position < len(answers):
        answer = answers[position]
        error = answer.get("error") if isinstance(answer, dict) else None
        if not (isinstance(error, dict) and error.get("code") in retryable):
            return position
        position += 1
    return position


def _without(value: Any, names: tuple[str, ...]) -> Any:
    """A result with the noise fields taken out (at every depth)."""
    if isinstance(value, list):
        return [_without(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _without(v, names) for k, v in value.items() if k not in names}
    return value


def _merged(pieces: list[Any], page_size: int) -> Any:
    """The canonical page made of smaller ones (or the one result of a call that is no page)."""
    first = pieces[0]
    if len(pieces) == 1 and not (isinstance(first, dict) and isinstance(first.get("items"), list) and "page_size" in first):
        return first
    merged = dict(first)
    merged["items"] = [item for piece in pieces for item in piece.get("items", [])]
    total = merged.get("total")
    if isinstance(total, int):
        merged["total_pages"] = max(1, -(-total // page_size))
    merged["page_size"] = page_size
    merged["page"] = (int(first.get("page", 1)) - 1) * first.get("page_size", page_size) // page_size + 1
    return merged


# What each fault does; the first five are the API's (the model did not cause them), the others
# the model's (odd answers the harness must record and score like any other).
FAULTS = {
    "hang": "the API never answers (the request waits until the server stops)",
    "500": "the API answers 500 Internal Server Error",
    "401": "the API rejects the key (401)",
    "truncated": "the answer is cut short: half the body, then the connection is closed",
    "dropped": "the connection is closed without an answer",
    "huge_content": "the model's message carries megabytes of text besides its tool calls",
    "surrogates": "the model's text holds lone surrogates (\\ud800), which UTF-8 cannot encode",
    "unknown_tool": "the model calls a tool that does not exist (one extra turn)",
    "wrong_types": "the model calls a real tool with arguments of the wrong types (one extra turn)",
}
API_FAULTS = ("hang", "500", "401", "truncated", "dropped")
MODEL_FAULTS = ("huge_content", "surrogates", "unknown_tool", "wrong_types")
_EXTRA_TURN = ("unknown_tool", "wrong_types")


class Faulty:
    """`inner` with one of FAULTS injected into the requests `when` selects (default: all).

    The API's faults replace the answer to each selected request. huge_content and surrogates add
    text to the answer `inner` gives to each selected request (its tool calls kept). unknown_tool
    and wrong_types answer the first selected request of a conversation with one bad call instead,
    and that extra exchange is taken out of the conversation `inner` sees next, so a
    ReferencePlayer carries on with its solution as if it had not happened.

    A fault that passes (the retry gets the real answer): `times` stops injecting after that many
    faults in all; `each_once` injects once per conversation, told apart by the id of their first
    tool call (so from the second turn on; first requests are told apart by their text only).
    `affected` counts the requests a fault was injected into."""

    def __init__(
        self,
        inner: Callable[[dict[str, Any]], Reply],
        fault: str,
        when: Callable[[dict[str, Any]], bool] | None = None,
        times: int | None = None,
        each_once: bool = False,
        huge: int = 2_000_000,
    ) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; choose one of: {', '.join(FAULTS)}")
        self.inner = inner
        self.fault = fault
        self.when = when or (lambda body: True)
        self.times = times
        self.each_once = each_once
        self.huge = huge
        self._seen: set[str] = set()  # conversations already given the fault (each_once)
        self.affected = 0
        self._injected: set[str] = set()  # ids of the bad calls of extra turns
        self._lock = threading.Lock()

    def _take(self, body: dict[str, Any]) -> bool:
        """Whether this request gets the fault (counted)."""
        if not self.when(body):
            return False
        with self._lock:
            if self.times is not None and self.affected >= self.times:
                return False
            if self.each_once:
                key = _conversation(body)
                if key in self._seen:
                    return False
                self._seen.add(key)
            self.affected += 1
            return True

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.fault in _EXTRA_TURN:
            return self._extra_turn(body)
        if not self._take(body):
            return self.inner(body)
        if self.fault == "hang":
            return hang()
        if self.fault == "500":
            return error(500, "The server had an error while processing your request.")
        if self.fault == "401":
            return error(
                401, "Incorrect API key provided: sk-fake***. You can find your API key at https://platform.openai.com/account/api-keys."
            )
        if self.fault == "dropped":
            return dropped()
        reply = self.inner(body)
        if self.fault == "truncated":
            return truncated(reply)
        if reply.status != 200 or reply.send != "json":
            return reply
        body = copy.deepcopy(reply.body)  # a Script repeats its replies: never change them
        message = body["choices"][0]["message"]
        text = "\ud800 lone \udfff surrogates \udc00" if self.fault == "surrogates" else "x" * self.huge
        message["content"] = (message.get("content") or "") + text
        return Reply(200, body)

    def _extra_turn(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        clean = [m for m in messages if not self._was_injected(m)]  # the conversation without the extra exchanges
        body = {**body, "messages": clean}
        if len(clean) < len(messages) or not self._take(body):
            return self.inner(body)  # once per conversation
        answer = self.inner(body)
        calls: list[dict[str, Any]] = []
        if answer.status == 200 and answer.send == "json":
            calls = answer.body["choices"][0]["message"].get("tool_calls") or []
        bad = self._bad_call(body, calls)
        with self._lock:
            self._injected.update(c["id"] for c in bad.body["choices"][0]["message"]["tool_calls"])
        return bad

    def _was_injected(self, message: dict[str, Any]) -> bool:
        """A message of an extra exchange this fault made (its call, or the tool's answer to it)."""
        calls = message.get("tool_calls") or []
        if message.get("role") == "assistant" and calls and all(c.get("id") in self._injected for c in calls):
            return True
        return message.get("role") == "tool" and message.get("tool_call_id") in self._injected

    def _bad_call(self, body: dict[str, Any], calls: list[dict[str, Any]]) -> Reply:
        """The malformed call this fault sends instead of the model's answer."""
        if self.fault == "unknown_tool":
            return completion(None, [("teleport_to_headquarters", {"urgent": True})])
        if calls and isinstance(args := json.loads(calls[0]["function"]["arguments"] or "{}"), dict) and args:
            return completion(None, [(calls[0]["function"]["name"], {k: _wrong_type(v) for k, v in args.items()})])
        # a tool without arguments: the arguments are an array, not an object
        tools = [t["function"]["name"] for t in body.get("tools") or []]
        name = calls[0]["function"]["name"] if calls else (tools[0] if tools else "search")
        return completion(None, [(name, "[1, 2, 3]")])


def _conversation(body: dict[str, Any]) -> str:
    """What tells one conversation from another: the id of its first tool call (ids are unique),
    or before any call, its system prompt and request."""
    messages = body.get("messages") or []
    for message in messages:
        for call in message.get("tool_calls") or []:
            return str(call.get("id"))
    return json.dumps([m.get("content") for m in messages[:2]])


def _wrong_type(value: Any) -> Any:
    """A value no tool parameter of that value's type accepts."""
    return ["not", "an", "object"] if isinstance(value, dict) else {"not": "a " + type(value).__name__}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # many trials connect at once

    def __init__(self, *args: Any) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(*args)

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().server_bind()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a batch stopping, a connection closed at shutdown)
        is no error of the server's: socketserver would print its traceback to the test's stderr."""
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """End the kept-alive connections: their handler threads stop waiting for a next request."""
        with self.connections_lock:
            for connection in list(self.connections):
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class FakeOpenAI:
    """The server; `requests` keeps every request body received, `headers` their headers (lower-case
    names), `arrivals` when each arrived (time.time(), once its body was read: benchmarks/model_start.py
    compares the first with a client process's start). With `api_key`, a request must carry it
    (`Authorization: Bearer <key>`) or get a 401."""

    def __init__(self, responder: Callable[[dict[str, Any]], Reply], delay: float = 0.0, port: int = 0, api_key: str | None = None) -> None:
        self.responder = responder
        self.delay = delay
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []
        self.stopping = threading.Event()  # hanging answers end when it is set
        self.handlers = 0  # handler threads still running (a connection open, an answer under way or hanging)
        self._idle = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: stdout may be a protocol
                pass

            def handle(self) -> None:
                with owner._idle:
                    owner.handlers += 1
                try:
                    super().handle()
                finally:
                    with owner._idle:
                        owner.handlers -= 1
                        owner._idle.notify_all()

            def do_POST(self) -> None:
                try:
                    self._answer()
                except OSError:  # the client gave up (its timeout): nobody to answer
                    self.close_connection = True

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                arrived = time.time()
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(error(400, "request body is not JSON"))
                    return
                owner.requests.append(body)
                owner.arrivals.append(arrived)
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.headers.append(headers)
                refusal = owner._check_key(headers.get("authorization"))
                if refusal is not None:
                    self._send(refusal)
                    return
                if owner.delay:
                    time.sleep(owner.delay)
                try:
                    reply = owner.responder(body)
                except Exception as exc:  # a responder bug shows as a 500 the test can see
                    reply = error(500, f"responder failed: {type(exc).__name__}: {exc}")
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.send in ("hang", "dropped"):
                    if reply.send == "hang":
                        owner.stopping.wait()
                    self.close_connection = True  # closed without a byte of answer
                    return
                data = json.dumps(reply.body).encode()
                head = (f"HTTP/1.1 {reply.status} X\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n").encode()
                if reply.send == "truncated":
                    data = data[: len(data) // 2]
                    self.close_connection = True
                self.wfile.write(head + data)  # one write: no Nagle/delayed-ACK stall
                self.wfile.flush()

        self.server = _Server(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _check_key(self, authorization: str | None) -> Reply | None:
        if self.api_key is None:
            return None
        given = (authorization or "").removeprefix("Bearer ").strip()
        if not given:
            return error(
                401,
                "You didn't provide an API key. You need to provide your API key in an Authorization header "
                "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        if given != self.api_key:
            return error(401, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.")
        return None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def stop(self, wait: float = 30.0) -> None:
        """Stop serving: hanging answers end, open connections are closed, and their handler
        threads are waited for (up to `wait` seconds; `handlers` tells whether they all ended)."""
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.server.close_connections()
        with self._idle:
            self._idle.wait_for(lambda: self.handlers == 0, timeout=wait)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible server playing reference solutions.")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument("--parallel", action="store_true", help="send independent steps as parallel calls")
    parser.add_argument("--optimal", action="store_true", help="send each level of the dependency graph in one turn")
    parser.add_argument("--skip-last", type=int, default=0, help="leave out the last N steps (trials that fail)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fault", choices=list(FAULTS), help="inject this fault, from each conversation's second turn")
    parser.add_argument("--once", action="store_true", help="with --fault: once per conversation (a retry gets the answer)")
    parser.add_argument("--api-key", help="answer 401 to requests without this key")
    parser.add_argument("--tasks-dir", help="play the tasks of this folder (default: the shipped suite)")
    parser.add_argument("--no-ask", action="store_true", help="never ask the user first (tasks with a user profile)")
    parser.add_argument("--scenarios", action="store_true", help="play the scenarios (of --tasks-dir, or the shipped ones)")
    args = parser.parse_args(argv)
    from pathlib import Path

    from ..tasks.suite import load_suite

    folder = Path(args.tasks_dir) if args.tasks_dir else None
    if args.scenarios:
        from ..tasks.scenarios import load_scenarios

        tasks = [scenario.as_task() for scenario in load_scenarios(folder)[0]]
    else:
        tasks = load_suite(folder).tasks
    responder: Callable[[dict[str, Any]], Reply] = ReferencePlayer(
        tasks, parallel=args.parallel, skip_last=args.skip_last, optimal=args.optimal, asks=not args.no_ask
    )
    if args.fault:
        responder = Faulty(responder, args.fault, when=on_turn(2), each_once=args.once)
    server = FakeOpenAI(responder, delay=args.delay, port=args.port, api_key=args.api_key)
    print(server.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.server.serve_forever()
    server.stopping.set()  # hanging answers end


if __name__ == "__main__":
    main(sys.argv[1:])
