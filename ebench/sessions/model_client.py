"""The model client: how ebench reaches a model through litellm, for every caller (the model
solver, the simulated user, the task generator and its verifiers, the paraphraser).

litellm is imported here only (`load_litellm`), with its network lookups and telemetry off. Here
too: a model's settings (`LLMConfig`), prices for models litellm does not price, and how a failed
request is classified (transient: retry; context; fatal: configuration every request would hit;
unreadable: the model's own output) and described in one line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .record import redact_config

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


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


# litellm's words when the API answered but the response (the model's output) cannot be read,
# e.g. tool-call arguments holding a number of thousands of digits.
_UNREADABLE = re.compile(r"invalid response object", re.IGNORECASE)


def classify(exc: BaseException) -> str:
    """transient (retry), context (the conversation is too long), fatal (configuration),
    unreadable (the model's own output cannot be read: retried, then the model's failure), other."""
    if isinstance(exc, RecordedApiError):  # a replayed failure is what the original was
        return exc.kind
    litellm = load_litellm()
    if isinstance(exc, litellm.ContextWindowExceededError):
        return "context"
    if _UNREADABLE.search(str(exc)):
        return "unreadable"
    if (
        isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError, litellm.LiteLLMUnknownProvider))
        or missing_credentials(exc)
        or client_refused(exc)
    ):
        return "fatal"
    if isinstance(
        exc,
        (
            litellm.RateLimitError,
            litellm.APIConnectionError,
            litellm.Timeout,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            asyncio.TimeoutError,
        ),
    ):
        return "transient"
    status = status_of(exc)
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
    try:
        import openai
    except ImportError:  # pragma: no cover - litellm depends on it
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
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class RecordedApiError(Exception):
    """A request that failed for good in the recording, failing again the same way: `kind` is what
    `classify` made of the original (transient, context, unreadable, fatal, other)."""

    def __init__(self, kind: str, message: str, status: int | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status_code = status
