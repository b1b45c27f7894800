"""The model solver: litellm function calling, one trial at a time per coroutine.

The loop: system prompt (product, actor, time) and the task's request; each model turn may ask for
tool calls, all of which are executed in order (parallel calls included) and answered with their
results, errors included; the trial ends when the model answers without a tool call or a limit is
hit. litellm is imported here only, with its network lookups turned off.

What is the model's doing and what is not (a failure the model did not cause is never scored):
- Transient API errors (rate limits, 5xx, timeouts, truncated or dropped answers) are retried with
  exponential backoff; when the retries run out the trial ends as an infrastructure error, which
  the scores leave out (and a resumed run runs again).
- An API that never answers: each request is given up after `request_timeout` seconds, which is a
  transient error like the others, so after the retries the trial is an infrastructure error.
- Time spent waiting on the API (requests, retries and their backoff) does not count against the
  trial's time limit: `time_limit` is the wall time of the trial less its API waits, i.e. the
  time its tool calls, code blocks and the harness took. The API's own waits are bounded by
  `request_timeout` x (retries + 1) plus the backoff, per turn.
- Configuration that every trial would hit is fatal (FatalSolverError: the batch stops at once):
  a rejected key (401/403), an unknown model or provider, and missing credentials (no API key:
  litellm reports the client's refusal as a 500 "Missing credentials", never sent anywhere).
- What the model sends is its own: an unknown tool, wrong-typed arguments, megabytes of text are
  executed as sent and answered like any tool error, and recorded as sent within the recording
  caps (payload_caps.py; beyond them, truncated, and the tool's answer says so). Text UTF-8
  cannot encode (lone surrogates) is recorded and executed as sent, and made encodable only in the
  conversation sent back to the API (which would otherwise refuse every later request: an
  infrastructure error the model caused).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InputError
from ..events import ApiErrorEvent, BadResponseEvent, code_argument
from ..prompts import system_prompt
from ..record import redact_config
from ..trial import (
    AGENT_ERROR,
    AGENT_STOPPED,
    CONTEXT_LIMIT,
    INFRA_ERROR,
    MAX_TOOL_CALLS,
    MAX_TURNS,
    TIME_LIMIT,
    Trial,
    TrialLimits,
)
from ..users import UserUnavailable
from .base import FatalSolverError, Outcome, SolverOptions, SolverOptionsError, StepHook
from .recorded import RecordedApiError, RecordedResponses

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


def _status(exc: BaseException) -> int | None:
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
        or _client_refused(exc)
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
    status = _status(exc)
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


def _client_refused(exc: BaseException) -> bool:
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


def _describe(exc: BaseException, with_type: bool = True) -> str:
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


def _fatal_message(model: str, exc: BaseException) -> str:
    # litellm calls the client's refusals an InternalServerError: they are not the server's
    if missing_credentials(exc):
        return f"model {model!r}: missing credentials (no API key): {_describe(exc, with_type=False)}"
    if _client_refused(exc):
        return f"model {model!r}: the client refused to send the request: {_describe(exc, with_type=False)}"
    return f"model {model!r}: {_describe(exc)}"


# A surrogate code point in a str is a lone one (JSON decoding joins the pairs): UTF-8 cannot
# encode it, so a request holding one fails in the client before it is sent.
_SURROGATE = re.compile("[\ud800-\udfff]")


def failed_request(exc: BaseException) -> Outcome:
    """How a trial ends when a model request failed for good (after its retries): the context was
    too long, the model's answer was garbage (the model's fault), or the API failed (not the model's)."""
    kind = classify(exc)
    if kind == "context":
        return Outcome(CONTEXT_LIMIT, _describe(exc))
    if kind == "unreadable":  # garbage from the model, not a fault of the API or the harness
        return Outcome(AGENT_ERROR, f"the model's response could not be read: {_describe(exc)}")
    return Outcome(INFRA_ERROR, _describe(exc))


def _sendable_json(text: str) -> str:
    """JSON text with its lone surrogates written as \\uXXXX escapes: the same values, in UTF-8."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class LLMSolver:
    name = "llm"

    def __init__(self, config: LLMConfig, prices: dict[str, dict[str, float]] | None = None) -> None:
        self.settings = config
        self.prices = prices or {}
        self.recorded: RecordedResponses | None = None  # answers played back instead of asking the API

    @classmethod
    def from_options(cls, options: SolverOptions) -> LLMSolver:
        """The model solver the options describe, its model string checked before any trial runs."""
        if not options.model:
            raise SolverOptionsError("--solver llm needs --model (any litellm model string, e.g. openai/gpt-4o-mini)")
        try:
            prices = load_prices(options.prices) if options.prices is not None else {}
        except PricesError as exc:
            raise SolverOptionsError(str(exc)) from None
        config = LLMConfig(
            model=options.model,
            api_base=options.api_base,
            model_args=dict(options.model_args),
            price_in=options.price_in,
            price_out=options.price_out,
            retries=options.retries,
            backoff=options.backoff,
        )
        solver = cls(config, prices)
        try:
            solver.check()
        except FatalSolverError as exc:
            raise SolverOptionsError(str(exc)) from None
        return solver

    def config(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings.to_dict()}

    def check(self) -> None:
        """Refuse a model string litellm cannot route (no provider) before any trial runs: every
        trial would fail the same way."""
        try:
            load_litellm().get_llm_provider(model=self.settings.model, api_base=self.settings.api_base)
        except Exception:  # litellm's own message is a paragraph of advice: the one line names the fix
            raise FatalSolverError(
                f"model {self.settings.model!r}: litellm cannot tell which provider serves it; "
                "write provider/model, e.g. openai/gpt-4o-mini (providers: https://docs.litellm.ai/docs/providers)"
            ) from None

    # -- one request, with retries ---------------------------------------------------------
    async def _complete(self, trial: Trial, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Any:
        litellm = load_litellm()
        cfg = self.settings
        kwargs: dict[str, Any] = {
            "model": cfg.model,
            "messages": messages,
            "tools": tools,
            "timeout": cfg.request_timeout,
            "max_retries": 0,
            "num_retries": 0,
        }
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        kwargs.update(cfg.model_args)
        # litellm's own timeout may not cover every provider's path: a request that outlives it by
        # far is given up here too (a TimeoutError, transient like litellm's).
        timeout = kwargs["timeout"]
        backstop = timeout * 1.5 + 5 if isinstance(timeout, (int, float)) else None
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                if self.recorded is not None:
                    return self.recorded.answer(trial.session_name, trial.turns + 1)
                return await asyncio.wait_for(litellm.acompletion(**kwargs), backstop)
            except FatalSolverError:  # a replay that went another way than its recording
                raise
            except Exception as exc:  # classified below; nothing escapes unrecorded
                kind = classify(exc)
                replayed = isinstance(exc, RecordedApiError)  # the recording keeps only a request's final failure
                final = replayed or kind not in ("transient", "unreadable") or attempt >= cfg.retries
                delay = 0.0 if final else min(cfg.max_backoff, cfg.backoff * 2**attempt) * random.uniform(0.75, 1.0)
                trial.record(
                    ApiErrorEvent(
                        turn=trial.turns + 1,
                        attempt=attempt + 1,
                        kind=kind,
                        error=_describe(exc),
                        status=_status(exc),
                        seconds=round(time.perf_counter() - started, 4),
                        retry_in=None if final else round(delay, 3),
                    )
                )
                if kind == "fatal":
                    raise FatalSolverError(_fatal_message(cfg.model, exc)) from None
                if final:
                    raise
                attempt += 1
                await asyncio.sleep(delay)

    def _cost(self, response: Any, tokens_in: int, tokens_out: int) -> float | None:
        cfg = self.settings
        price = self.prices.get(cfg.model)
        if cfg.price_in is not None or cfg.price_out is not None:
            return (tokens_in * (cfg.price_in or 0.0) + tokens_out * (cfg.price_out or 0.0)) / 1e6
        if price:
            return (tokens_in * price["input"] + tokens_out * price["output"]) / 1e6
        # litellm prices every response of a model in its (local, offline) cost map; None means
        # it does not know the model. Asking completion_cost again would cost ~4 ms per turn.
        hidden = getattr(response, "_hidden_params", None) or {}
        cost = hidden.get("response_cost")
        return float(cost) if isinstance(cost, (int, float)) else None

    # -- tools a subclass answers itself (not the domain's; recorded as it chooses) -------------
    def local_tools(self, trial: Trial) -> list[dict[str, Any]]:
        """Schemas of extra tools that `local_call` answers (none here)."""
        return []

    def local_call(self, trial: Trial, name: str, arguments: Any) -> Any:
        """The payload sent back for a call to one of `local_tools`."""
        raise NotImplementedError(name)

    # -- the loop --------------------------------------------------------------------------
    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        """The loop; a step is one model turn: `step` is awaited before each model request."""
        assert trial.task is not None
        domain = trial.domain
        label = domain.actor_label(trial.conn, trial.task.actor)
        system = system_prompt(domain, label, trial.code, asks=trial.user is not None)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": trial.request}]
        trial.message("system", system)
        trial.message("user", trial.request)
        schemas = trial.tool_schemas()  # perturbed under --perturb interface (perturb.py); code mode's with exec_code
        extra = self.local_tools(trial)
        tools = [*schemas, *extra]  # a new list: the schemas are shared by every trial
        local = {t["function"]["name"] for t in extra}
        # The time limit counts the trial's wall time less its waits on the API (and on a pause):
        # each wait moves the deadline. A dead API ends the turn by its own timeouts and retries.
        deadline = time.perf_counter() + limits.timeout
        while True:
            if trial.turns >= limits.max_turns:
                return Outcome(MAX_TURNS)
            if step is not None:
                paused = time.perf_counter()
                await step()
                deadline += time.perf_counter() - paused  # time spent paused is not the model's
            if deadline - time.perf_counter() <= 0:
                return Outcome(TIME_LIMIT)
            started = time.perf_counter()
            try:
                response = await self._complete(trial, messages, tools)
            except FatalSolverError:
                raise
            except Exception as exc:
                return failed_request(exc)
            finally:
                deadline += time.perf_counter() - started
            trial.turns += 1
            outcome, tool_calls = self._take_turn(trial, response, messages, time.perf_counter() - started)
            if outcome is not None and outcome.termination == AGENT_STOPPED and trial.user is not None:
                # The model talked to the user: a question is answered and the conversation goes on.
                asked = time.perf_counter()
                try:
                    answer = await trial.ask_user(_text(messages[-1].get("content")))
                except UserUnavailable as exc:
                    return Outcome(INFRA_ERROR, str(exc))
                finally:
                    deadline += time.perf_counter() - asked  # the user's time (a person typing) is not the model's
                if answer is None:
                    answer = trial.end_turn()  # a scenario's next turn, if any
                if answer is not None:
                    messages.append({"role": "user", "content": answer})
                    continue
            if outcome is not None:
                return outcome
            sent = messages[-1].get("tool_calls") or []
            for call, sent_call in zip(tool_calls, sent):  # executed as the model sent them
                if trial.tool_calls >= limits.max_tool_calls:
                    return Outcome(MAX_TOOL_CALLS)
                function = call["function"]
                if function["name"] in local:
                    payload = self.local_call(trial, function["name"], function["arguments"])
                elif function["name"] == "exec_code" and trial.code:
                    code = code_argument(function["arguments"])  # as events.block_args reads it back
                    payload = (await asyncio.to_thread(trial.exec_code, code, call_id=call["id"], turn=trial.turns)).for_solver()
                else:
                    payload = trial.call(function["name"], function["arguments"], call_id=call["id"], turn=trial.turns).for_solver()
                    await trial.wait_latency()  # runtime:latency (perturb.py), without blocking the loop
                messages.append(
                    {"role": "tool", "tool_call_id": sent_call["id"], "content": _sendable_json(json.dumps(payload, ensure_ascii=False))}
                )

    def _take_turn(
        self, trial: Trial, response: Any, messages: list[dict[str, Any]], seconds: float
    ) -> tuple[Outcome | None, list[dict[str, Any]]]:
        """Record the model's message and append it to the conversation: an Outcome ends the trial,
        else the tool calls to make, as the model sent them. The conversation gets them in a form
        the API can take back: text UTF-8 cannot encode (lone surrogates) becomes U+FFFD, and in
        JSON (the arguments) a \\uXXXX escape; the session keeps them as sent, and the message event
        names the fields that were changed (`repaired`)."""
        try:
            choice = response.choices[0]
            message = choice.message
        except (AttributeError, IndexError, TypeError):
            trial.record(BadResponseEvent(turn=trial.turns, response=str(response)[:2000]))
            return Outcome(AGENT_ERROR, "the model's response has no message"), []
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        cost = self._cost(response, tokens_in, tokens_out)
        trial.add_usage(tokens_in, tokens_out, cost)
        content = getattr(message, "content", None)
        reasoning = getattr(message, "reasoning_content", None)
        calls: list[dict[str, Any]] = []
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = getattr(call, "function", None)
            name = getattr(function, "name", None)
            arguments = getattr(function, "arguments", None)
            call_id = getattr(call, "id", None) or f"turn{trial.turns}-call{index + 1}"
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": name if isinstance(name, str) else str(name),
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    },
                }
            )
        repaired: list[str] = []

        def sendable(value: Any, where: str, json_text: bool = False) -> Any:
            if isinstance(value, str) and _SURROGATE.search(value):
                repaired.append(where)
                return _sendable_json(value) if json_text else _SURROGATE.sub("\ufffd", value)
            return value

        sent = [
            {
                "id": sendable(c["id"], f"tool_calls[{i}].id"),
                "type": "function",
                "function": {
                    "name": sendable(c["function"]["name"], f"tool_calls[{i}].name"),
                    "arguments": sendable(c["function"]["arguments"], f"tool_calls[{i}].arguments", True),
                },
            }
            for i, c in enumerate(calls)
        ]
        entry: dict[str, Any] = {"role": "assistant", "content": sendable(content, "content")}
        extra = {"repaired": repaired} if repaired else {}
        trial.message(
            "assistant",
            content,
            reasoning=reasoning,
            tool_calls=calls,
            finish_reason=getattr(choice, "finish_reason", None),
            turn=trial.turns,
            usage={"input": tokens_in, "output": tokens_out},
            cost=cost,
            seconds=round(seconds, 4),
            **extra,
        )
        if sent:
            entry["tool_calls"] = sent
        messages.append(entry)
        if not calls:
            return Outcome(AGENT_STOPPED), []
        return None, calls


def _text(content: Any) -> str:
    """A message's text, whatever the model sent as its content (None, a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)
