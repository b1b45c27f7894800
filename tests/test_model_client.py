"""The model client's two paths side by side: the lean client (openai/ models, aiohttp, no litellm)
and litellm, against the local fake OpenAI-compatible server on 127.0.0.1. The same request
body, the same answer read into the same shapes, the same failures classified alike, the same
cost, the same session results; and a lean model run (the real CLI in its own process) never
imports litellm."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ebench.sessions import cost_map, openai_lean
from ebench.sessions.batch import Batch
from ebench.sessions.model_client import ClientError, LLMConfig, acompletion, classify, describe, load_litellm, status_of, uses_lean
from ebench.sessions.record import read_session
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.trial import TrialLimits
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, Faulty, ReferencePlayer, Reply, Script, completion, dropped, error, hang, truncated

# litellm's own pydantic models warn when they serialize the odd answers below; the lean client has no such models
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

TASK = "moba-0024"  # create a room, then three invitations that need its id
KEY = "sk-test-model-client-0123456789"
TOOLS = [
    {
        "type": "function",
        "function": {"name": "find", "description": "Find.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    }
]
MESSAGES = [{"role": "system", "content": "You help. é ✓"}, {"role": "user", "content": "Find the thing."}]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("EBENCH_LITELLM", raising=False)
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_ORGANIZATION", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)


def ask(server: FakeOpenAI, client: str, model: str = "openai/fake", timeout: float = 60.0, **options: Any) -> Any:
    """One request through the model client's `client` path; the answer, or the exception raised."""

    async def call() -> Any:
        return await acompletion(
            model, MESSAGES, options.pop("tools", TOOLS), api_base=server.base_url, timeout=timeout, client=client, **options
        )

    try:
        return asyncio.run(call())
    except Exception as exc:  # compared between the paths
        return exc


# -- which path ---------------------------------------------------------------------------------


def test_openai_models_take_the_lean_path_unless_told_otherwise(monkeypatch):
    assert uses_lean("openai/gpt-4o-mini") and uses_lean("openai/fake", {"temperature": 0, "api_key": "k", "timeout": 5})
    assert not uses_lean("anthropic/claude-3-5-haiku-20241022") and not uses_lean("gpt-4o-mini") and not uses_lean("openai/")
    assert not uses_lean("openai/fake", {"top_k": 3})  # an argument the lean client does not know: litellm sends it
    assert not uses_lean("openai/fake", client="litellm")
    monkeypatch.setenv("EBENCH_LITELLM", "1")
    assert not uses_lean("openai/fake") and not uses_lean("openai/fake", client="lean")
    monkeypatch.setenv("EBENCH_LITELLM", "0")
    assert uses_lean("openai/fake")
    with pytest.raises(ClientError, match="lean client sends openai/ models only"):
        uses_lean("anthropic/claude-3-5-haiku-20241022", client="lean")
    with pytest.raises(ClientError, match="expected one of auto, lean, litellm"):
        uses_lean("openai/fake", client="fast")


def test_a_lean_model_run_never_imports_litellm_and_a_forced_one_does(tmp_path):
    """The real CLI in a fresh process, through a transient failure and its retry: the lean path
    sends, classifies and retries without litellm (or the openai SDK); EBENCH_LITELLM=1 goes through it."""
    [task] = load_suite(ids=[TASK]).tasks
    probe = (
        "import sys\nfrom ebench.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
        "print('EXIT', code, 'LITELLM', 'litellm' in sys.modules, 'OPENAI', 'openai' in sys.modules)\n"
    )
    player = Faulty(ReferencePlayer([task]), "500", times=1)
    seen = {}
    with FakeOpenAI(player) as server:
        for forced in (False, True):
            env = {**os.environ, "OPENAI_API_KEY": KEY, "LITELLM_OFFLINE_MODE": "true"}
            env.pop("EBENCH_LITELLM", None)
            if forced:
                env["EBENCH_LITELLM"] = "1"
            out = tmp_path / f"run-{forced}"
            args = ["run", "--batch", "--model", "openai/fake", "--api-base", server.base_url, "--task", TASK, "--out", str(out)]
            args += ["--workers", "1", "--backoff", "0.01", "--json"]
            done = subprocess.run([sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
            seen[forced] = done.stdout.strip().splitlines()[-1]
            [result] = load_run(out).results
            assert result.passed and not result.infra_error
    assert player.affected == 1  # the lean run met the 500 and retried it
    assert seen[False] == "EXIT 0 LITELLM False OPENAI False"
    assert seen[True].startswith("EXIT 0 LITELLM True")


def test_run_help_does_not_import_litellm():
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ebench", "run", "--help"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "ebench.cli" in imported and not [m for m in imported if m.split(".")[0] in ("litellm", "openai", "httpx", "aiohttp")]


# -- the same request ---------------------------------------------------------------------------

ARGUMENTS = [
    {},
    {"temperature": 0.2, "top_p": 0.9, "max_tokens": 100, "stop": ["x"], "seed": 2},
    {"max_completion_tokens": 5, "n": 1, "presence_penalty": 0.1, "frequency_penalty": 0.2, "logit_bias": {"1": 2}},
    {"tool_choice": "auto", "parallel_tool_calls": False, "response_format": {"type": "json_object"}, "reasoning_effort": "low"},
    {"logprobs": True, "top_logprobs": 2, "service_tier": "auto", "store": False, "temperature": None},
    {"api_key": "sk-given-as-argument-42", "extra_headers": {"X-Trace": "t1"}, "extra_body": {"top_k": 3}},
    {"timeout": 30},
]


@pytest.mark.parametrize("arguments", ARGUMENTS, ids=lambda a: ",".join(a) or "none")
@pytest.mark.parametrize("tools", [TOOLS, None], ids=["tools", "no-tools"])
def test_both_paths_send_the_same_request(arguments, tools):
    sent = {}
    with FakeOpenAI(Script([completion("ok")])) as server:
        for client in ("lean", "litellm"):
            answer = ask(server, client, tools=tools, model_args=dict(arguments))
            assert not isinstance(answer, Exception), answer
            headers = server.headers[-1]
            sent[client] = (
                server.requests[-1],
                {k: v for k, v in headers.items() if k in ("authorization", "content-type", "accept", "x-trace")},
            )
    assert sent["lean"] == sent["litellm"]
    assert sent["lean"][1]["authorization"] == f"Bearer {arguments.get('api_key', KEY)}"


def test_the_base_url_organization_and_project_come_from_the_environment_as_litellms(monkeypatch):
    with FakeOpenAI(Script([completion("ok")])) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_ORGANIZATION", "org-42")
        monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-7")
        for client in ("lean", "litellm"):
            answer = asyncio.run(acompletion("openai/fake", MESSAGES, TOOLS, client=client))
            assert answer.choices[0].message.content == "ok"
        lean, through = server.headers[-2:]
    for name in ("authorization", "openai-organization", "openai-project"):
        assert lean[name] == through[name]
    assert lean["openai-organization"] == "org-42" and lean["openai-project"] == "proj-7"


def test_a_growing_conversation_is_encoded_once_per_message():
    encoded = openai_lean.EncodedMessages()
    messages: list[dict[str, Any]] = [{"role": "user", "content": "a"}]
    assert json.loads(encoded.encode(messages)) == messages
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    messages.append({"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'})
    first = encoded.parts[0]
    sent = json.loads(encoded.encode(messages))
    assert encoded.parts[0] is first  # only the new ones encoded
    assert sent == [messages[0], {k: v for k, v in messages[1].items() if k != "content"}, messages[2]]  # None values left out, as litellm
    other = [{"role": "user", "content": "b"}]
    assert json.loads(encoded.encode(other)) == other  # another list: encoded from its start
    assert json.loads(openai_lean.dumps({"big": 2**70, "text": "\ud800"})) == {"big": 2**70, "text": "\ud800"}  # what orjson refuses
    assert openai_lean.encoded_tools(TOOLS) is openai_lean.encoded_tools(TOOLS)


def test_a_loop_s_requests_share_one_session_closed_when_its_run_ends():
    """Requests at once on one event loop share its aiohttp session, and asyncio.run closes it when
    the run ends (a session left open would warn when collected); the next run makes its own."""
    sessions: list[Any] = []

    async def many(base: str, count: int) -> list[Any]:
        async def one() -> Any:
            answer = await acompletion("openai/fake", MESSAGES, TOOLS, api_base=base, timeout=30.0, client="lean")
            sessions.append(await openai_lean._loop_session())
            return answer

        return await asyncio.gather(*(one() for _ in range(count)))

    with FakeOpenAI(Script([completion("ok")] * 13), delay=0.3) as server:
        answers = asyncio.run(many(server.base_url, 10))
        assert len({id(s) for s in sessions}) == 1 and sessions[0].closed and not openai_lean._sessions
        asyncio.run(many(server.base_url, 3))
    assert [a.choices[0].message.content for a in answers] == ["ok"] * 10
    assert len({id(s) for s in sessions}) == 2 and all(s.closed for s in sessions) and not openai_lean._sessions


def test_no_unclosed_session_warning_at_exit(tmp_path):
    """A process that made lean requests ends without aiohttp's 'Unclosed client session' or
    'Unclosed connector' on stderr, with every warning shown."""
    with FakeOpenAI(Script([completion("ok")] * 2)) as server:
        probe = (
            "import asyncio, gc, sys\n"
            "from ebench.sessions.model_client import acompletion\n"
            "async def go():\n"
            f"    return await acompletion('openai/fake', [{{'role': 'user', 'content': 'hi'}}], None, api_base={server.base_url!r}, client='lean')\n"
            "print(asyncio.run(go()).choices[0].message.content)\n"
            "gc.collect()\n"
        )
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "LITELLM_OFFLINE_MODE": "true"}
        done = subprocess.run(
            [sys.executable, "-W", "always", "-X", "dev", "-c", probe], env=env, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert "Unclosed" not in done.stderr, done.stderr


def test_proxies_come_from_the_environment_as_httpx_takes_them(monkeypatch):
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert openai_lean._proxy("https://api.openai.com/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "proxy.example:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain.example:8080")
    assert openai_lean._proxy("https://api.openai.com/v1/chat/completions") == "http://proxy.example:3128"
    assert openai_lean._proxy("http://models.local:8000/v1/chat/completions") == "http://plain.example:8080"
    monkeypatch.setenv("NO_PROXY", "models.local,127.0.0.1")
    assert openai_lean._proxy("http://models.local:8000/v1/chat/completions") is None
    assert openai_lean._proxy("http://127.0.0.1:9/v1/chat/completions") is None
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.setenv("ALL_PROXY", "http://every.example:1")
    assert openai_lean._proxy("https://api.openai.com/v1/chat/completions") == "http://every.example:1"


def test_https_is_checked_against_certifi_or_the_environment_s_certificates(monkeypatch, tmp_path):
    import certifi

    monkeypatch.setattr(openai_lean, "_SSL", None)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    assert openai_lean._ssl_context("http://127.0.0.1:1/v1") is True  # plain http: aiohttp's default
    context = openai_lean._ssl_context("https://api.openai.com/v1")
    assert context.verify_mode.name == "CERT_REQUIRED" and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 50  # certifi's bundle
    assert openai_lean._ssl_context("https://other.example/v1") is context  # made once
    one = tmp_path / "one.pem"
    one.write_text(Path(certifi.where()).read_text().split("-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n")
    monkeypatch.setattr(openai_lean, "_SSL", None)
    monkeypatch.setenv("SSL_CERT_FILE", str(one))
    assert openai_lean._ssl_context("https://api.openai.com/v1").cert_store_stats()["x509_ca"] == 1


# -- the same answer ----------------------------------------------------------------------------


def shape(response: Any) -> dict[str, Any]:
    """What the callers read from an answer (the solver, the simulated user, the generator)."""
    choices = []
    for choice in response.choices:
        message = choice.message
        calls = [(c.id, c.type, c.function.name, c.function.arguments) for c in message.tool_calls or []]
        choices.append((message.content, message.role, getattr(message, "reasoning_content", None), calls, choice.finish_reason))
    usage = response.usage
    return {
        "choices": choices,
        "usage": (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens),
        "cost": response._hidden_params.get("response_cost"),
    }


def with_body(reply: Reply, change: Any) -> Reply:
    change(reply.body)
    return reply


ANSWERS = {
    "text": completion("Done."),
    "tool-calls": completion(None, [("find", {"q": "a"}), ("find", '{"q": ')]),
    "object-arguments": with_body(
        completion(None, [("find", {})]), lambda b: b["choices"][0]["message"]["tool_calls"][0]["function"].update(arguments={"q": 1})
    ),
    "no-call-id": with_body(completion(None, [("find", {})]), lambda b: b["choices"][0]["message"]["tool_calls"][0].pop("id")),
    "reasoning": with_body(completion("Hi."), lambda b: b["choices"][0]["message"].update(reasoning_content="thought")),
    "think-tags": completion("<think>plan</think>The answer."),
    "parallel-pseudo-call": completion(
        None,
        [
            (
                "multi_tool_use.parallel",
                {
                    "tool_uses": [
                        {"recipient_name": "functions.find", "parameters": {"q": "x"}},
                        {"recipient_name": "find", "parameters": {}},
                    ]
                },
            )
        ],
    ),
    "no-finish-reason": with_body(completion(None, [("find", {})]), lambda b: b["choices"][0].pop("finish_reason")),
    "no-usage": with_body(completion("ok"), lambda b: b.pop("usage")),
    "no-choices-list-empty": Reply(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []}),
    "priced-answer": completion("ok", model="gpt-4o"),
    "cached-tokens": with_body(
        completion("ok", tokens=(1000, 100), model="gpt-4o-mini"),
        lambda b: b["usage"].update(prompt_tokens_details={"cached_tokens": 400}, completion_tokens_details={"reasoning_tokens": 50}),
    ),
}


@pytest.mark.parametrize("name", list(ANSWERS))
@pytest.mark.parametrize("model", ["openai/fake", "openai/gpt-4o-mini"])
def test_both_paths_read_an_answer_into_the_same_shapes(name, model):
    read = {}
    with FakeOpenAI(Script([ANSWERS[name]])) as server:
        for client in ("lean", "litellm"):
            answer = ask(server, client, model=model)
            assert not isinstance(answer, Exception), answer
            read[client] = shape(answer)
    lean, through = read["lean"], read["litellm"]
    if name == "no-call-id":  # both make one up (a uuid)
        for made in (lean, through):
            assert len(made["choices"][0][3][0][0]) == 36
            made["choices"][0] = (*made["choices"][0][:3], [("id", *c[1:]) for c in made["choices"][0][3]], made["choices"][0][4])
    assert lean["cost"] == pytest.approx(through["cost"]) and (lean["cost"] is None) == (through["cost"] is None)
    lean.pop("cost"), through.pop("cost")
    assert lean == through


# -- the same failures --------------------------------------------------------------------------

CONTEXT = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens."
FAILURES = {
    "400": (error(400, "bad param"), "other"),
    "400-context": (error(400, CONTEXT), "context"),
    "401": (error(401, "Incorrect API key"), "fatal"),
    "403": (error(403, "forbidden model"), "fatal"),
    "404": (error(404, "The model `fake` does not exist"), "fatal"),
    "408": (error(408), "transient"),
    "409": (error(409), "transient"),
    "413": (error(413, "too large"), "other"),
    "418": (error(418), "other"),
    "422": (error(422, "unprocessable"), "other"),
    "429": (error(429, "slow down"), "transient"),
    "500": (error(500, "boom"), "transient"),
    "502": (error(502, "bad gateway"), "transient"),
    "503": (error(503), "transient"),
    "504": (error(504), "transient"),
    "not-json": (Reply(200, "just a string"), "transient"),
    "dropped": (dropped(), "transient"),
    "truncated": (truncated(completion("hi")), "transient"),
    "huge-number-arguments": (completion(None, [("find", '{"q": 1' + "0" * 5000 + "}")]), "unreadable"),
    "message-missing": (Reply(200, {"id": "x", "choices": [{"index": 0}]}), "unreadable"),
    "arguments-not-a-string": (
        with_body(completion(None, [("find", {})]), lambda b: b["choices"][0]["message"]["tool_calls"][0]["function"].update(arguments=7)),
        "unreadable",
    ),
    "no-choices": (Reply(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake"}), "transient"),
    "choices-not-a-list": (Reply(200, {"id": "x", "choices": None}), "transient"),
    "error-in-200": (Reply(200, {"error": {"message": "oops", "code": 500}}), "transient"),
    "error-in-200-no-code": (Reply(200, {"error": {"message": "oops in 200", "code": None, "type": "x"}}), "other"),
}
# The lean client says what failed to read; litellm lists a body's keys in another order.
LOOSE = {
    "huge-number-arguments": "Invalid response object",
    "message-missing": "Invalid response object",
    "arguments-not-a-string": "Invalid response object",
    "no-choices": "Raw keys",
}


@pytest.mark.parametrize("name", list(FAILURES))
def test_both_paths_fail_alike(name):
    reply, kind = FAILURES[name]
    raised = {}
    with FakeOpenAI(Script([reply])) as server:
        for client in ("lean", "litellm"):
            raised[client] = ask(server, client)
    lean, through = raised["lean"], raised["litellm"]
    assert isinstance(lean, Exception) and isinstance(through, Exception), raised
    assert classify(lean) == classify(through) == kind
    assert (type(lean).__name__, status_of(lean)) == (type(through).__name__, status_of(through))
    if name in LOOSE:
        words = LOOSE[name]
        assert words in describe(lean) and describe(lean).split(words)[0] == describe(through).split(words)[0]
    else:
        assert describe(lean) == describe(through)


def test_missing_key_hang_and_refused_connection_fail_alike(monkeypatch):
    with FakeOpenAI(Script([hang()])) as server:
        hung = {client: ask(server, client, timeout=0.5) for client in ("lean", "litellm")}
    for exc in hung.values():
        assert type(exc).__name__ == "Timeout" and classify(exc) == "transient" and status_of(exc) == 408
        assert describe(exc).startswith("Timeout: APITimeoutError - Request timed out. Error_str: Request timed out. - timeout value=0.5")
    refused = {client: asyncio.run(_refused(client)) for client in ("lean", "litellm")}
    assert describe(refused["lean"]) == describe(refused["litellm"]) == "InternalServerError: OpenAIException - Connection error."
    assert classify(refused["lean"]) == classify(refused["litellm"]) == "transient"
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI(Script([completion("ok")])) as server:
        missing = {client: ask(server, client) for client in ("lean", "litellm")}
        assert server.requests == []  # neither sent anything
    assert describe(missing["lean"]) == describe(missing["litellm"]) and "OPENAI_API_KEY" in describe(missing["lean"])
    assert classify(missing["lean"]) == classify(missing["litellm"]) == "fatal"


async def _refused(client: str) -> Exception:
    try:
        await acompletion("openai/fake", MESSAGES, TOOLS, api_base="http://127.0.0.1:9/v1", timeout=5, client=client)
    except Exception as exc:  # compared between the paths
        return exc
    raise AssertionError("a request to a closed port was answered")


# -- the same cost ------------------------------------------------------------------------------


def test_the_lean_cost_is_litellms_for_every_openai_model_in_its_map():
    litellm = load_litellm()
    usages = [
        {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
        {
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "total_tokens": 1100,
            "prompt_tokens_details": {"cached_tokens": 400},
            "completion_tokens_details": {"reasoning_tokens": 50},
        },
        {"prompt_tokens": 300_000, "completion_tokens": 100, "total_tokens": 300_100},  # past the price tiers
    ]
    models = [
        k
        for k, v in cost_map.cost_map().items()
        if v.get("litellm_provider") == "openai" and v.get("mode") == "chat" and "input_cost_per_token" in v
    ]
    assert len(models) > 50
    for model in models:
        for usage in usages:
            answer = litellm.ModelResponse(model=model, usage=litellm.Usage(**usage))
            expected = litellm.completion_cost(completion_response=answer, model=f"openai/{model}", custom_llm_provider="openai")
            assert cost_map.response_cost(f"openai/{model}", model, usage) == pytest.approx(expected, rel=1e-9, abs=1e-15), (model, usage)
        info = litellm.get_model_info(f"openai/{model}")
        assert cost_map.openai_prices(f"openai/{model}") == (info["input_cost_per_token"], info["output_cost_per_token"])
    assert cost_map.response_cost("openai/fake", "fake", usages[0]) is None


# -- the same session results -------------------------------------------------------------------


def run_batch(out: Path, client: str, server: FakeOpenAI, model: str) -> Any:
    [task] = load_suite(ids=[TASK]).tasks
    solver = LLMSolver(LLMConfig(model=model, api_base=server.base_url, retries=2, backoff=0.01, client=client))
    solver.check()
    batch = Batch(out, [task], solver, 1, limits=TrialLimits())
    batch.prepare()
    try:
        asyncio.run(batch.run(concurrency=1))
    finally:
        batch.finish("finished")
    [result] = load_run(out).results
    return result


def normalized(events: list[Any]) -> list[dict[str, Any]]:
    """A session's events without what differs from run to run: times, the backoff's jitter, the
    summary (paths, seconds), and the fake server's call ids (numbered in order of appearance)."""
    text = json.dumps([e.to_dict() for e in events], sort_keys=True)
    ids: dict[str, str] = {}
    for call_id in re.findall(r"call_\d+", text):
        ids.setdefault(call_id, f"call-{len(ids)}")
    kept = json.loads(re.sub(r"call_\d+", lambda m: ids[m.group()], text))
    for data in kept:
        for key in ("t", "seconds", "retry_in", "summary"):
            data.pop(key, None)
    return kept


def test_both_paths_give_the_same_session_results(tmp_path):
    [task] = load_suite(ids=[TASK]).tasks
    # a priced model, a transient failure retried on the second turn, parallel calls
    results, sessions, bodies = {}, {}, {}
    for client in ("lean", "litellm"):
        player = Faulty(ReferencePlayer([task], parallel=True), "500", when=lambda body: len(body["messages"]) > 2, times=1)
        with FakeOpenAI(player) as server:
            result = run_batch(tmp_path / client, client, server, "openai/gpt-4o-mini")
        assert player.affected == 1
        results[client] = result
        events = read_session(tmp_path / client / result.session).events
        sessions[client] = normalized([e for e in events if e.event in ("message", "tool_call", "api_error", "end")])
        bodies[client] = normalized_bodies(server.requests)
    lean, through = results["lean"], results["litellm"]
    assert lean.passed and through.passed
    fields = ("passed", "termination", "turns", "tool_calls", "tokens_in", "tokens_out", "tool_errors", "infra_error", "error")
    assert {f: getattr(lean, f) for f in fields} == {f: getattr(through, f) for f in fields}
    assert lean.cost == pytest.approx(through.cost) and lean.cost > 0
    assert bodies["lean"] == bodies["litellm"] and len(bodies["lean"]) == lean.turns + 1  # every request, the failed one too
    assert sessions["lean"] == sessions["litellm"]


def normalized_bodies(requests: list[dict[str, Any]]) -> list[Any]:
    text = json.dumps(requests)
    ids: dict[str, str] = {}
    for call_id in re.findall(r"call_\d+", text):
        ids.setdefault(call_id, f"call-{len(ids)}")
    return json.loads(re.sub(r"call_\d+", lambda m: ids[m.group()], text))
