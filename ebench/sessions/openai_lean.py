"""The lean client: one chat-completions request to an OpenAI-compatible endpoint over aiohttp, the
request litellm itself would send for an openai/ model, without importing litellm (seconds of
start-up) or spending its per-request CPU (logging and callback hooks, parameter mapping, pydantic
response objects).

The same request: POST {api_base}/chat/completions with the body litellm sends (model without its
openai/ prefix, messages without their None-valued keys, tools when there are any, the OpenAI
parameters given, None values left out, tool_choice only with tools), the same key (the api_key argument, else OPENAI_API_KEY), organization and project headers,
extra_headers, extra_body and timeout; the base is api_base, else OPENAI_BASE_URL, OPENAI_API_BASE,
https://api.openai.com/v1. (The OpenAI SDK's own user-agent and x-stainless-* telemetry headers are
not copied.) The same answer: objects with the attributes the callers read from litellm's
(choices[i].message.content / tool_calls / reasoning_content, finish_reason, usage,
_hidden_params["response_cost"]). The same failures: exceptions named as litellm's, with its
messages and status codes, so that `model_client.classify` and `describe` treat both alike.

CPU per request: the tool schemas are encoded once per set of schemas (`encoded_tools`), a conversation's
messages once each (`EncodedMessages`, append-only), with orjson; one aiohttp session per event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson

from . import cost_map

# The model_args the lean path sends as litellm does (body parameters, passed through when not
# None) or uses itself (client parameters). Any other argument goes through litellm.
BODY_ARGS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "seed",
        "n",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "reasoning_effort",
        "logprobs",
        "top_logprobs",
        "service_tier",
        "store",
        "prediction",
        "modalities",
    }
)
CLIENT_ARGS = frozenset({"api_key", "extra_headers", "extra_body", "timeout"})
DEFAULT_BASE = "https://api.openai.com/v1"
MISSING_KEY = (
    "Missing credentials. Please pass an `api_key`, `workload_identity`, `admin_api_key`, or set the `OPENAI_API_KEY` "
    "or `OPENAI_ADMIN_KEY` environment variable."
)


def handles(model: str, model_args: dict[str, Any]) -> bool:
    """Whether the lean path sends this request as litellm would: an openai/ model, arguments it knows."""
    return model.startswith("openai/") and len(model) > len("openai/") and all(k in BODY_ARGS or k in CLIENT_ARGS for k in model_args)


# -- errors: litellm's names, messages and status codes ----------------------------------------


class APIError(Exception):
    """A failed request, as litellm reports it for the openai provider ("OpenAIException - ...")."""

    def __init__(self, message: str, status_code: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


class BadRequestError(APIError):
    pass


class ContextWindowExceededError(BadRequestError):
    pass


class AuthenticationError(APIError):
    pass


class PermissionDeniedError(APIError):
    pass


class NotFoundError(APIError):
    pass


class RateLimitError(APIError):
    pass


class InternalServerError(APIError):
    pass


class BadGatewayError(APIError):
    pass


class ServiceUnavailableError(APIError):
    pass


class APIConnectionError(APIError):
    pass


class Timeout(APIConnectionError):
    pass


FATAL = (AuthenticationError, PermissionDeniedError, NotFoundError)
TRANSIENT = (RateLimitError, APIConnectionError, Timeout, InternalServerError, ServiceUnavailableError, BadGatewayError)

# litellm's exception_mapping_utils: the words of a context-window error, lower-case.
_CONTEXT = (
    "exceed context limit",
    "this model's maximum context length is",
    "requested token count exceeds the model's maximum context length",
    "string too long. expected a string with maximum length",
    "model's maximum context limit",
    "is longer than the model's context length",
    "input tokens exceed the configured limit",
    "`inputs` tokens + `max_new_tokens` must be",
    "exceeds the available context size",
    "exceeds the maximum number of tokens allowed",
    '"code": "context_length_exceeded"',
    "prompt is too long",
)


def _context_error(text: str) -> bool:
    lower = text.lower()
    if "string_above_max_length" in lower or ("invalid 'user'" in lower and "string too long" in lower):
        return False
    if any(words in lower for words in _CONTEXT):
        return True
    return ("current length is" in lower and "while limit is" in lower) or ("maximum input length is" in lower and "tokens" in lower)


def status_error(status: int, message: str) -> APIError:
    """The exception litellm raises for an HTTP error status of the openai provider."""
    text = f"OpenAIException - {message}"
    if status == 400 and _context_error(message):
        return ContextWindowExceededError(f"litellm.BadRequestError: ContextWindowExceededError: {text}", status)
    if status in (400, 422):
        return BadRequestError(text, status)
    if status == 401:
        return AuthenticationError(text, status)
    if status == 404:
        return NotFoundError(text, status)
    if status == 429:
        return RateLimitError(text, status)
    if status == 500:
        return InternalServerError(text, status)
    if status == 502:
        return BadGatewayError(text, status)
    if status == 503:
        return ServiceUnavailableError(text, status)
    if status in (408, 504):
        return Timeout(f"Timeout Error: {text}", status)
    return APIError(text, status)  # 403, 409, 413 and the rest: litellm's APIError with the status


def _error_message(status: int, raw: bytes) -> str:
    """The API's own words: error.message of a JSON error body, else the body's text."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return text or f"Error code: {status}"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        message = error["message"]
        return message if isinstance(message, str) else json.dumps(message)
    return text or f"Error code: {status}"


# -- encoding -----------------------------------------------------------------------------------


def dumps(value: Any) -> bytes:
    """JSON bytes: orjson, else the standard library for what orjson refuses (lone surrogates,
    integers beyond 64 bits, non-string keys), as the OpenAI SDK would send them."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode()


class EncodedMessages:
    """A conversation's messages as JSON, each message encoded once: the conversation only grows
    (messages are appended, never changed), so each request encodes only the new ones. A list that
    is not the one seen before, or shorter, is encoded again from its start."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self._source = 0
        self._last: Any = None

    def encode(self, messages: Sequence[Any]) -> bytes:
        done = len(self.parts)
        if id(messages) != self._source or len(messages) < done or (done and messages[done - 1] is not self._last):
            self.parts.clear()
            self._source, done = id(messages), 0
        self.parts.extend(dumps(_sent(m)) for m in messages[done:])
        self._last = messages[-1] if messages else None
        return b"[" + b",".join(self.parts) + b"]"


def _sent(message: Any) -> Any:
    """A message as litellm sends it: its keys whose value is None left out (content of an
    assistant turn that only calls tools, a name not given)."""
    if isinstance(message, dict) and any(v is None for v in message.values()):
        return {k: v for k, v in message.items() if v is not None}
    return message


_tools: dict[tuple[int, ...], tuple[tuple[Any, ...], bytes]] = {}
_TOOLS_KEPT = 32  # lists of schemas kept encoded: each domain's shared ones, code mode's; a perturbed trial's are its own


def encoded_tools(tools: Sequence[Any]) -> bytes:
    """The tool schemas as JSON, encoded once per sequence of the same schema objects (kept with
    them, so their ids are not reused). Each trial offers a new list of its domain's shared
    schemas: keyed by the list, every trial was encoded again and kept (512 lists, 16 MB a process)."""
    key = tuple(map(id, tools))
    hit = _tools.get(key)
    if hit is not None and all(kept is given for kept, given in zip(hit[0], tools)):
        return hit[1]
    data = dumps(list(tools))
    if len(_tools) >= _TOOLS_KEPT:
        _tools.clear()
    _tools[key] = (tuple(tools), data)
    return data


# -- the answer: what callers read from litellm's ModelResponse ----------------------------------


class Function:
    __slots__ = ("name", "arguments")

    def __init__(self, name: Any, arguments: Any) -> None:
        self.name = name
        self.arguments = arguments


class ToolCall:
    __slots__ = ("id", "type", "function")

    def __init__(self, call_id: Any, kind: Any, function: Function) -> None:
        self.id = call_id
        self.type = kind
        self.function = function


class Message:
    __slots__ = ("content", "role", "tool_calls", "reasoning_content")

    def __init__(self, content: Any, role: str, tool_calls: list[ToolCall] | None, reasoning_content: Any) -> None:
        self.content = content
        self.role = role
        self.tool_calls = tool_calls
        self.reasoning_content = reasoning_content


class Choice:
    __slots__ = ("index", "message", "finish_reason")

    def __init__(self, index: int, message: Message, finish_reason: Any) -> None:
        self.index = index
        self.message = message
        self.finish_reason = finish_reason


class Usage:
    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens")

    def __init__(self, usage: dict[str, Any]) -> None:
        self.prompt_tokens = _count(usage.get("prompt_tokens"))
        self.completion_tokens = _count(usage.get("completion_tokens"))
        self.total_tokens = _count(usage.get("total_tokens"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class Response:
    """One answer. Its cost (litellm's response_cost) is looked up when first read: a run with
    its own prices never reads litellm's price map."""

    def __init__(self, requested: str, body: dict[str, Any], choices: list[Choice]) -> None:
        self.id = body.get("id")
        self.model = body.get("model")
        self.choices = choices
        raw_usage = body.get("usage")
        self.raw_usage = raw_usage if isinstance(raw_usage, dict) else {}
        self.usage = Usage(self.raw_usage)
        self.requested = requested
        self._hidden: dict[str, Any] | None = None

    @property
    def _hidden_params(self) -> dict[str, Any]:
        if self._hidden is None:
            self._hidden = {"response_cost": cost_map.response_cost(self.requested, self.model, self.raw_usage)}
        return self._hidden

    def __repr__(self) -> str:
        return f"Response(id={self.id!r}, model={self.model!r}, choices={len(self.choices)})"


_THINK = re.compile(r"<(?:think|thinking|budget:thinking)>(.*?)</(?:think|thinking|budget:thinking)>(.*)", re.DOTALL)


def _reasoning(message: dict[str, Any]) -> tuple[Any, Any]:
    """(reasoning, content) as litellm's extract_reasoning_content splits them."""
    content = message.get("content")
    if "reasoning_content" in message:
        return message["reasoning_content"], content
    if "reasoning" in message:
        return message["reasoning"], content
    if isinstance(content, str) and content:
        match = _THINK.match(content)
        if match:
            return match.group(1), match.group(2)
    return None, content


def _tool_calls(raw: list[Any]) -> list[ToolCall]:
    """The calls as litellm reads them: a call without an id gets one, arguments given as an object
    are encoded; the arguments are decoded once as JSON (a decoding error keeps them as sent; any
    other failure, e.g. a number of thousands of digits, makes the answer unreadable), and OpenAI's
    pseudo-call multi_tool_use.parallel is split into the calls it holds. What litellm's types
    refuse (a call without a function object, arguments or a name that is not a string) raises."""
    calls: list[ToolCall] = []
    for call in raw:
        function = call["function"]
        if not isinstance(function, dict):
            raise TypeError(f"a tool call's function is not an object: {function!r}"[:200])
        arguments, name = function.get("arguments"), function.get("name")
        if arguments is None:
            parameters = function.get("parameters")
            arguments = json.dumps(parameters) if isinstance(parameters, dict) else ""
        elif isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if not isinstance(arguments, str) or not (name is None or isinstance(name, str)):
            raise TypeError("a tool call's arguments and name must be strings")
        call_id = call.get("id")
        made = ToolCall(call_id if call_id is not None else str(uuid.uuid4()), call.get("type") or "function", Function(name, arguments))
        try:
            decoded = json.loads(arguments)
        except json.JSONDecodeError:
            calls.append(made)
            continue
        if name == "multi_tool_use.parallel":
            for index, use in enumerate(decoded["tool_uses"]):
                split = Function(str(use["recipient_name"]).removeprefix("functions."), json.dumps(use["parameters"]))
                calls.append(ToolCall(f"{made.id}_{index}", "function", split))
        else:
            calls.append(made)
    return calls


def _meaningful(error: Any) -> bool:
    """An error object in a 200 answer that says something (litellm ignores empty ones)."""
    if isinstance(error, dict):
        return bool(error.get("message")) or error.get("code") is not None
    return bool(error)


def read_answer(requested: str, body: Any, raw: bytes) -> Response:
    """The answer litellm would return, or the exception it would raise."""
    if not isinstance(body, dict):
        shown = body if body is not None else raw.decode("utf-8", "replace")[:200]
        raise InternalServerError(
            f"OpenAIException - Empty or invalid response from LLM endpoint. Received: {shown!r}. "
            "Check the reverse proxy or model server configuration.",
            500,
        )
    error = body.get("error")
    if _meaningful(error):  # some providers answer 200 with an error object (an empty one means nothing)
        status = error.get("code") if isinstance(error, dict) else None
        message = error if isinstance(error, str) else "Error in response object"
        if isinstance(error, dict) and "message" in error:
            message = error["message"] if isinstance(error["message"], str) else json.dumps(error["message"])
        if isinstance(status, int) and not isinstance(status, bool):
            raise status_error(status, message)
        raise APIError(f"OpenAIException - {message}", None)
    if "choices" not in body:
        raise InternalServerError(
            f"OpenAIException - litellm.APIError: LiteLLM: provider returned a response with no 'choices'. Raw keys: {list(body)}", 500
        )
    if not isinstance(body["choices"], list):
        kind = type(body["choices"]).__name__
        raise InternalServerError(
            f"OpenAIException - litellm.APIError: LiteLLM: provider returned 'choices' that is not a list ({kind}). Raw keys: {list(body)}",
            500,
        )
    try:
        choices: list[Choice] = []
        for index, choice in enumerate(body["choices"]):
            message = choice["message"]
            raw_calls = message.get("tool_calls")
            calls = _tool_calls(raw_calls) if raw_calls is not None else None
            reasoning, content = _reasoning(message)
            finish = choice.get("finish_reason") or choice.get("finish_details") or "stop"
            if finish == "stop" and calls:
                finish = "tool_calls"
            choices.append(Choice(index, Message(content, message.get("role") or "assistant", calls or None, reasoning), finish))
        return Response(requested, body, choices)
    except Exception as exc:  # as litellm: the API answered, its answer cannot be read
        raise InternalServerError(f"OpenAIException - Invalid response object {type(exc).__name__}: {exc}", 500) from exc


# -- the request --------------------------------------------------------------------------------

# One aiohttp session per event loop (its connections belong to that loop). aiohttp rather than
# httpx, which litellm and the OpenAI SDK use: httpx spends 0.7 ms of CPU on one request alone and
# more with every request in flight beside it (6 ms each at 64 at once, its pool scanning every
# connection), aiohttp 0.1-0.2 ms (benchmarks/model_client.py). The session is closed when the
# loop's run ends: asyncio.run finalizes the loop's async generators, and `_owner` is one.
_sessions: dict[asyncio.AbstractEventLoop, Any] = {}


async def _owner(loop: asyncio.AbstractEventLoop, session: Any) -> AsyncIterator[None]:
    """Holds `loop`'s session until the loop's async generators are finalized, then closes it (a
    session left open warns when it is collected)."""
    try:
        yield
    finally:
        _sessions.pop(loop, None)
        await session.close()


async def _loop_session() -> Any:
    """This event loop's session, made on its first request."""
    loop = asyncio.get_running_loop()
    entry = _sessions.get(loop)
    if entry is None:
        import aiohttp

        # The OpenAI SDK's connection limit. Not trust_env: it would look for a .netrc on every
        # request, in a thread; proxies are taken from the environment by `_proxy`.
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))
        owner = _owner(loop, session)
        await owner.__anext__()  # started: the loop now finalizes it when its run ends
        entry = _sessions[loop] = (session, owner)  # the generator is held here (the loop only keeps it weakly)
    return entry[0]


def _ssl_context(url: str) -> Any:
    """The certificates an https request is checked against, as httpx finds them: SSL_CERT_FILE or
    SSL_CERT_DIR, else certifi's; True (aiohttp's default) for http."""
    if not url.startswith("https:"):
        return True
    global _SSL
    if _SSL is None:
        import ssl

        cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
        if not cafile and not capath:
            import certifi

            cafile = certifi.where()
        _SSL = ssl.create_default_context(cafile=cafile or None, capath=capath or None)
    return _SSL


_SSL: Any = None


def _proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, with NO_PROXY),
    as httpx takes it; None for none."""
    # Most runs name no proxy: a look at the two variables that could apply (each in either case)
    # instead of the standard library's two passes over the whole environment (60 us a request).
    names = ("https_proxy" if url.startswith("https:") else "http_proxy", "all_proxy")
    if not any(os.environ.get(name) or os.environ.get(name.upper()) for name in names):
        return None
    from urllib.parse import urlsplit
    from urllib.request import getproxies_environment, proxy_bypass

    proxies = getproxies_environment()
    if not proxies:
        return None
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or proxy_bypass(parts.hostname or ""):  # NO_PROXY
        return None
    return proxy if "://" in proxy else "http://" + proxy


def request_parts(
    model: str, model_args: dict[str, Any], api_base: str | None, timeout: float
) -> tuple[str, dict[str, str], dict[str, Any], float]:
    """(url, headers, body parameters besides model/messages/tools, timeout) of a request, or
    the missing-credentials error litellm raises before sending anything."""
    key = model_args.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise InternalServerError(f"OpenAIException - {MISSING_KEY}", 500)
    base = api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or DEFAULT_BASE
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json", "accept": "application/json"}
    organization = os.environ.get("OPENAI_ORGANIZATION") or os.environ.get("OPENAI_ORG_ID")
    if organization:
        headers["openai-organization"] = organization
    project = os.environ.get("OPENAI_PROJECT_ID")
    if project:
        headers["openai-project"] = project
    for name, value in (model_args.get("extra_headers") or {}).items():
        headers[str(name).lower()] = str(value)
    params = {k: v for k, v in model_args.items() if k in BODY_ARGS and v is not None}
    params.update(model_args.get("extra_body") or {})
    given = model_args.get("timeout")
    return base.rstrip("/") + "/chat/completions", headers, params, float(given) if isinstance(given, (int, float)) else timeout


async def acompletion(
    model: str,
    messages: Sequence[Any],
    tools: Sequence[Any] | None = None,
    *,
    api_base: str | None = None,
    model_args: dict[str, Any] | None = None,
    timeout: float = 300.0,
    encoded: EncodedMessages | None = None,
) -> Response:
    """One request, as litellm.acompletion(model, messages, tools, api_base, timeout, max_retries=0,
    **model_args) sends it for an openai/ model; its answer or litellm's exception for the failure."""
    import aiohttp

    url, headers, params, timeout = request_parts(model, model_args or {}, api_base, timeout)
    body = b'{"model":' + dumps(model.removeprefix("openai/")) + b',"messages":' + (encoded or EncodedMessages()).encode(messages)
    if tools:
        body += b',"tools":' + encoded_tools(tools)
    elif "tool_choice" in params:  # as litellm: no tools, no choice among them
        params = {k: v for k, v in params.items() if k != "tool_choice"}
    if params:
        body += b"," + dumps(params)[1:-1]
    body += b"}"
    started = time.monotonic()
    session = await _loop_session()
    try:
        async with session.post(
            url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout), ssl=_ssl_context(url), proxy=_proxy(url)
        ) as answer:
            status, raw = answer.status, await answer.read()
    except TimeoutError:  # aiohttp's timeouts are TimeoutErrors
        taken = time.monotonic() - started
        raise Timeout(
            "litellm.Timeout: APITimeoutError - Request timed out. Error_str: Request timed out. "
            f"- timeout value={timeout}, time taken={taken:.2f} seconds",
            408,
        ) from None
    except aiohttp.ClientError:
        raise InternalServerError("OpenAIException - Connection error.", 500) from None
    if status >= 300:
        raise status_error(status, _error_message(status, raw))
    try:
        decoded: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:  # what orjson refuses (lone surrogates, huge numbers): the standard library
        try:
            decoded = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            decoded = None
    return read_answer(model, decoded, raw)
