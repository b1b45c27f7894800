"""The model client: how ebench reaches a model, for every caller (the model solver, the simulated
user, the task generator and its verifiers, the paraphraser): `acompletion`.

Two paths. openai/ models (an OpenAI-compatible endpoint, with or without api_base) go by default
through the lean client (openai_lean.py: the request litellm would send, over aiohttp, without
importing litellm); everything else, and any request with an argument the lean client does not
know, through litellm. `client` in LLMConfig ("auto", "lean", "litellm") or EBENCH_LITELLM=1 in
the environment (every request through litellm) chooses otherwise.

litellm is imported here only (`load_litellm`), with its network lookups and telemetry off. Here
too: a model's settings (`LLMConfig`), prices for models litellm does not price, and how a failed
request is classified (transient: retry; context; fatal: configuration every request would hit;
unreadable: the model's own output) and described in one line, whichever path it took.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .record import redact_config

if TYPE_CHECKING:
    from .openai_lean import EncodedMessages

_litellm: Any = None


def load_litellm() -> Any:
    """Import litellm with its cost-map fetch and telemetry off (no network beyond the model's API)."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
            logging.getLogger(name).setLevel(logging.CRITICAL)  # errors are recorded in the session
        _litellm = litellm
    return _litellm


class PricesError(InputError, ValueError):
    pass


def load_prices(path: Path) -> dict[str, dict[str, float]]:
    """A prices file: {"model": {"input": USD per million tokens, "output": USD per million}}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise PricesError(f"{path}: unreadable prices file: {exc}") from None
    if not isinstance(data, dict):
        raise PricesError(f"{path}: expected an object of model -> {{input, output}}")
    prices: dict[str, dict[str, float]] = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), (int, float)) for k in ("input", "output")):
            raise PricesError(f'{path}: {model}: expected {{"input": number, "output": number}} (USD per million tokens)')
        prices[model] = {"input": float(entry["input"]), "output": float(entry["output"])}
    return prices


@dataclass
class LLMConfig:
    model: str
    api_base: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    price_in: float | None = None  # USD per million input tokens, for models litellm does not price
    price_out: float | None = None
    retries: int = 6  # transient API errors retried this many times per turn
    backoff: float = 1.0  # first retry delay, doubled each time (with jitter)
    max_backoff: float = 60.0
    request_timeout: float = 300.0  # one model request
    client: str = "auto"  # auto: the lean client for openai/ models; lean; litellm (CLIENTS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "api_base": self.api_base,
            "model_args": redact_config(self.model_args),
            "price_in": self.price_in,
            "price_out": self.price_out,
        }


class TransientError(Exception):
    pass


CLIENTS = ("auto", "lean", "litellm")


class ClientError(InputError, ValueError):
    pass


def uses_lean(model: str, model_args: dict[str, Any] | None = None, client: str = "auto") -> bool:
    """Whether a request goes through the lean client (see the module's docstring)."""
    from .openai_lean import handles

    if client not in CLIENTS:
        raise ClientError(f"model client {client!r}: expected one of {', '.join(CLIENTS)}")
    if client == "litellm" or os.environ.get("EBENCH_LITELLM", "").strip() not in ("", "0"):
        return False
    lean = handles(model, model_args or {})
    if client == "lean" and not lean:
        raise ClientError(
            f"model {model!r}: the lean client sends openai/ models only, with the arguments "
            "litellm passes through unchanged; use client 'auto' or 'litellm'"
        )
    return lean


async def acompletion(
    model: str,
    messages: Sequence[Any],
    tools: Sequence[Any] | None = None,
    *,
    api_base: str | None = None,
    model_args: dict[str, Any] | None = None,
    timeout: float = 300.0,
    client: str = "auto",
    encoded: EncodedMessages | None = None,
    max_retries: int | None = 0,
) -> Any:
    """One request to the model, no retry (callers retry): a response with litellm's shape
    (choices[0].message.content / tool_calls, usage, _hidden_params["response_cost"]), or
    litellm's exception for the failure. `encoded` keeps a conversation's messages encoded
    between its requests (lean path); `max_retries` None leaves the provider client's default
    (litellm path)."""
    args = model_args or {}
    if uses_lean(model, args, client):
        from . import openai_lean

        return await openai_lean.acompletion(model, messages, tools, api_base=api_base, model_args=args, timeout=timeout, encoded=encoded)
    litellm = load_litellm()
    kwargs: dict[str, Any] = {"model": model, "messages": messages, "tools": tools, "timeout": timeout, "num_retries": 0}
    if max_retries is not None:
        kwargs["max_retries"] = max_retries
    if api_base:
        kwargs["api_base"] = api_base
    kwargs.update(args)
    return await litellm.acompletion(**kwargs)


def routable(model: str, api_base: str | None, model_args: dict[str, Any] | None = None, client: str = "auto") -> bool:
    """Whether the client can tell which provider serves the model (the lean path: openai/)."""
    if uses_lean(model, model_args, client):
        return True
    try:
        load_litellm().get_llm_provider(model=model, api_base=api_base)
    except Exception:  # litellm's own message is a paragraph of advice
        return False
    return True


def model_prices(model: str) -> tuple[float, float] | None:
    """USD per million (prompt, completion) tokens in litellm's local price map, or None. An openai/
    model is read from the map's file, without importing litellm."""
    if uses_lean(model, {}):
        from .cost_map import openai_prices

        found = openai_prices(model)
        return None if found is None else (found[0] * 1e6, found[1] * 1e6)
    try:
        info = load_litellm().get_model_info(model)
    except Exception:  # litellm raises for a model it has no entry for
        return None
    price_in, price_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if not isinstance(price_in, (int, float)) or not isinstance(price_out, (int, float)):
        return None
    return price_in * 1e6, price_out * 1e6


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


# litellm's words when the API answered but the response (the model's output) cannot be read,
# e.g. tool-call arguments holding a number of thousands of digits.
_UNREADABLE = re.compile(r"invalid response object", re.IGNORECASE)


def classify(exc: BaseException) -> str:
    """transient (retry), context (the conversation is too long), fatal (configuration),
    unreadable (the model's own output cannot be read: retried, then the model's failure), other.
    litellm's exceptions and the lean client's (which bear the same names) alike."""
    if isinstance(exc, RecordedApiError):  # a replayed failure is what the original was
        return exc.kind
    from . import openai_lean as lean

    # an exception of litellm's exists only once litellm is imported: a lean run never imports it
    litellm = load_litellm() if "litellm" in sys.modules else None
    if isinstance(exc, lean.ContextWindowExceededError) or (litellm is not None and isinstance(exc, litellm.ContextWindowExceededError)):
        return "context"
    if _UNREADABLE.search(str(exc)):
        return "unreadable"
    status = status_of(exc)
    fatal: tuple[type[BaseException], ...] = lean.FATAL
    transient: tuple[type[BaseException], ...] = (*lean.TRANSIENT, asyncio.TimeoutError)
    if litellm is not None:
        fatal += (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError, litellm.LiteLLMUnknownProvider)
        transient += (
            litellm.RateLimitError,
            litellm.APIConnectionError,
            litellm.Timeout,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
        )
    # a rejected key (401) or a forbidden model (403; litellm names it APIError) is configuration
    if isinstance(exc, fatal) or status in (401, 403) or missing_credentials(exc) or client_refused(exc):
        return "fatal"
    if isinstance(exc, transient):
        return "transient"
    if status is not None and (status >= 500 or status in (408, 409, 429)):
        return "transient"
    return "other"


# How providers' clients say there is no key (litellm wraps them as a 500 or a connection error):
# openai "Missing credentials. Please pass an `api_key`..." (older: "The api_key client option must
# be set"), "Missing Anthropic API Key", "Missing Gemini API key".
_NO_KEY = re.compile(r"missing credentials|missing [\w ]{0,40}api[ _-]?key|api_key client option must be set", re.IGNORECASE)


def missing_credentials(exc: BaseException) -> bool:
    """The client refused to send the request for want of an API key."""
    return bool(_NO_KEY.search(str(exc)))


def client_refused(exc: BaseException) -> bool:
    """A bare openai.OpenAIError in the cause chain: the openai client raises it (not one of its
    APIError subclasses, which carry a request or a response) for its own configuration only
    (credentials, endpoint), before anything is sent; litellm reports it as a 500."""
    openai = sys.modules.get("openai")
    if openai is None:  # never imported (a lean run): none of its exceptions exists
        return False
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if type(cause) is openai.OpenAIError:
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def describe(exc: BaseException, with_type: bool = True) -> str:
    if isinstance(exc, RecordedApiError):
        return str(exc)  # described when it was recorded
    text = str(exc).replace("\n", " ").strip()
    text = text.split(" Traceback (most recent call last):")[0]  # some providers' messages carry one
    prefixes = ("litellm.", "LiteLLM ", f"{type(exc).__name__}: ")
    while text.startswith(prefixes):  # litellm repeats the type, sometimes twice
        for prefix in prefixes:
            text = text.removeprefix(prefix)
    if not with_type:
        return text[:300] or type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


# A surrogate code point in a str is a lone one (JSON decoding joins the pairs): UTF-8 cannot
# encode it, so a request holding one fails in the client before it is sent.
SURROGATE = re.compile("[\ud800-\udfff]")


def sendable_json(text: str) -> str:
    """JSON text with its lone surrogates written as \\uXXXX escapes: the same values, in UTF-8."""
    if text.isascii():  # most results: nothing to look for (a surrogate is not ASCII), no regex pass
        return text
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class RecordedApiError(Exception):
    """A request that failed for good in the recording, failing again the same way: `kind` is what
    `classify` made of the original (transient, context, unreadable, fatal, other)."""

    def __init__(self, kind: str, message: str, status: int | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status_code = status
