"""The model solver: function calling through the model client (model_client.py: the lean client
for openai/ models, litellm for the rest), one trial at a time per coroutine.

The loop: system prompt (product, actor, time) and the task's request; each model turn may ask for
tool calls, all of which are executed in order (parallel calls included) and answered with their
results, errors included; the trial ends when the model answers without a tool call or a limit is
hit. litellm is imported only when a request goes through it (model_client.load_litellm).

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
import random
import time
from typing import TYPE_CHECKING, Any

from ...errors import InputError
from ..events import ApiErrorEvent, BadResponseEvent, code_argument
from ..model_client import (
    SURROGATE,
    LLMConfig,
    PricesError,
    RecordedApiError,
    acompletion,
    classify,
    client_refused,
    describe,
    load_prices,
    missing_credentials,
    routable,
    sendable_json,
    status_of,
    uses_lean,
)
from ..prompts import system_prompt
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
from .recorded import RecordedResponses

if TYPE_CHECKING:
    from ..openai_lean import EncodedMessages


def _fatal_message(model: str, exc: BaseException) -> str:
    # litellm calls the client's refusals an InternalServerError: they are not the server's
    if missing_credentials(exc):
        return f"model {model!r}: missing credentials (no API key): {describe(exc, with_type=False)}"
    if client_refused(exc):
        return f"model {model!r}: the client refused to send the request: {describe(exc, with_type=False)}"
    return f"model {model!r}: {describe(exc)}"


def failed_request(exc: BaseException) -> Outcome:
    """How a trial ends when a model request failed for good (after its retries): the context was
    too long, the model's answer was garbage (the model's fault), or the API failed (not the model's)."""
    kind = classify(exc)
    if kind == "context":
        return Outcome(CONTEXT_LIMIT, describe(exc))
    if kind == "unreadable":  # garbage from the model, not a fault of the API or the harness
        return Outcome(AGENT_ERROR, f"the model's response could not be read: {describe(exc)}")
    return Outcome(INFRA_ERROR, describe(exc))


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
        """Refuse a model string no client can route (no provider) before any trial runs: every
        trial would fail the same way. An openai/ model on the lean path needs no litellm."""
        cfg = self.settings
        try:
            ok = routable(cfg.model, cfg.api_base, cfg.model_args, cfg.client)
        except InputError as exc:  # a lean client asked for a model it does not send
            raise FatalSolverError(str(exc)) from None
        if not ok:
            raise FatalSolverError(
                f"model {cfg.model!r}: litellm cannot tell which provider serves it; "
                "write provider/model, e.g. openai/gpt-4o-mini (providers: https://docs.litellm.ai/docs/providers)"
            )
        if uses_lean(cfg.model, cfg.model_args, cfg.client):
            import aiohttp  # noqa: F401 - loaded before workers fork (and by a Ray worker's warm-up), as litellm is on its path

    def conversation(self) -> EncodedMessages | None:
        """What keeps one conversation's messages encoded between its requests (lean path only)."""
        cfg = self.settings
        if self.recorded is not None or not uses_lean(cfg.model, cfg.model_args, cfg.client):
            return None
        from ..openai_lean import EncodedMessages

        return EncodedMessages()

    # -- one request, with retries ---------------------------------------------------------
    async def _complete(
        self, trial: Trial, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, encoded: EncodedMessages | None = None
    ) -> Any:
        cfg = self.settings
        timeout = cfg.model_args.get("timeout", cfg.request_timeout)  # a model argument wins, as litellm's kwargs did
        # The client's own timeout may not cover every provider's path: a request that outlives it
        # by far is given up here too (a TimeoutError, transient like the client's).
        backstop = timeout * 1.5 + 5 if isinstance(timeout, (int, float)) else None
        args = {k: v for k, v in cfg.model_args.items() if k != "timeout"}
        attempt = 0
        while True:
            started = time.perf_counter()
            try:
                if self.recorded is not None:
                    return self.recorded.answer(trial.session_name, trial.turns + 1)
                request = acompletion(
                    cfg.model, messages, tools, api_base=cfg.api_base, model_args=args, timeout=timeout, client=cfg.client, encoded=encoded
                )
                return await asyncio.wait_for(request, backstop)
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
                        error=describe(exc),
                        status=status_of(exc),
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
        # Both clients price every response of a model in litellm's (local, offline) cost map; None
        # means it does not know the model. Asking completion_cost again would cost ~4 ms per turn.
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
        # The lean client keeps a list of schemas encoded (the shared one: encoded once per domain);
        # litellm is given a new list, the schemas being shared by every trial.
        encoded = self.conversation()
        tools = schemas if encoded is not None and not extra else [*schemas, *extra]
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
                response = await self._complete(trial, messages, tools, encoded)
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
                    {"role": "tool", "tool_call_id": sent_call["id"], "content": sendable_json(json.dumps(payload, ensure_ascii=False))}
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
            if isinstance(value, str) and SURROGATE.search(value):
                repaired.append(where)
                return sendable_json(value) if json_text else SURROGATE.sub("\ufffd", value)
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
