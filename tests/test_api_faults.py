"""Faults of the model's API and of the model, injected by the fake OpenAI-compatible server on
127.0.0.1 into real batches (the real litellm client, real worlds): a fault the model did not cause
is an infrastructure error, left out of the scores, or stops the run when every trial would hit it;
a fault the model did cause is recorded in its session and scored like any other trial."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.batch import Batch
from ebench.sessions.events import SessionEvent
from ebench.sessions.metrics import run_metrics
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.base import FatalSolverError
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.trial import TrialLimits
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FAULTS, FakeOpenAI, Faulty, ReferencePlayer, hang, on_turn

FAULTED = "moba-0023"  # create a room, then invitations that need its id (3 calls)
CLEAN = "moba-0024"  # the other task of the batch, never faulted (4 calls)
KEY = "sk-test-fault-suite-0123456789"
# How long a request waits for a hanging API. Answers that come take milliseconds on loopback; the
# other tests leave the default (300 s), so that no load can turn an answer into a timeout.
HANG_TIMEOUT = 1.5


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_suite(ids=[FAULTED, CLEAN]).tasks}


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def run_batch(
    out: Path, tasks, server: FakeOpenAI, *, concurrency: int = 4, limits: TrialLimits | None = None, **config
) -> list[TrialSummary]:
    settings = {"retries": 2, "backoff": 0.01, **config}
    solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, **settings))
    batch = Batch(out, list(tasks), solver, 1, limits=limits or TrialLimits())
    batch.prepare()
    status = "failed"
    try:
        asyncio.run(batch.run(concurrency=concurrency))
        status = "finished"
    finally:
        batch.finish(status)  # as the command does: the run directory is free again
    return sorted(load_run(out).results, key=lambda r: r.task)


def by_task(results: list[TrialSummary]) -> dict[str, TrialSummary]:
    return {r.task: r for r in results}


def only(player: ReferencePlayer, task_id: str):
    """A `when`: the requests of one task's conversation, from its second turn (some work done)."""
    return lambda body: (task := player.task_for(body)) is not None and task.id == task_id and on_turn(2)(body)


def events(run_dir: Path, result: TrialSummary, kind: str) -> list[SessionEvent]:
    return [e for e in read_session(run_dir / result.session).events if e.event == kind]


def test_the_fault_list_is_the_issues():
    assert set(FAULTS) == {"hang", "500", "401", "truncated", "dropped", "huge_content", "surrogates", "unknown_tool", "wrong_types"}
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        Faulty(lambda body: None, "nope")


# -- faults of the API: never scored ---------------------------------------------------------

API_FAULTS = [pytest.param("hang", marks=pytest.mark.slow), "500", "truncated", "dropped"]


def timeouts(fault: str) -> dict:
    return {"request_timeout": HANG_TIMEOUT} if fault == "hang" else {}


@pytest.mark.parametrize("fault", API_FAULTS)
def test_an_api_fault_that_persists_is_an_infrastructure_error(tmp_path, tasks, fault):
    player = ReferencePlayer(tasks.values())
    responder = Faulty(player, fault, when=only(player, FAULTED))
    # A limit shorter than a hanging API's timeouts: waiting on the API is not the trial's time.
    limits = TrialLimits(timeout=1.0)
    with FakeOpenAI(responder) as server:
        results = by_task(run_batch(tmp_path, tasks.values(), server, limits=limits, **timeouts(fault)))
    assert server.handlers == 0  # every answer ended, hanging ones included, when the server stopped
    faulted, clean = results[FAULTED], results[CLEAN]
    assert faulted.termination == "infra_error" and faulted.infra_error and faulted.grade is None
    assert not faulted.passed and faulted.turns == 1  # the first call was made, then the API failed
    assert clean.passed and not clean.infra_error
    attempts = [e for e in events(tmp_path, faulted, "api_error") if e.turn == 2]
    assert responder.affected == len(attempts) == 3  # the first try and two retries, all transient
    assert [a.kind for a in attempts] == ["transient"] * 3 and attempts[-1].retry_in is None
    if fault == "hang":
        assert "Timeout" in faulted.error and faulted.seconds > limits.timeout
    end = events(tmp_path, faulted, "end")[0]
    assert end.termination == "infra_error" and end.grade is None and len(end.diff) >= 1
    overall = run_metrics(load_run(tmp_path).results).to_dict()["overall"]
    assert (overall["trials"], overall["infra_errors"], overall["passes"]) == (1, 1, 1)


@pytest.mark.parametrize("fault", API_FAULTS)
def test_an_api_fault_that_passes_is_retried_and_changes_nothing(tmp_path, tasks, fault):
    player = ReferencePlayer(tasks.values())
    responder = Faulty(player, fault, when=only(player, FAULTED), times=1)
    with FakeOpenAI(responder) as server:
        results = by_task(run_batch(tmp_path, tasks.values(), server, **timeouts(fault)))
    assert responder.affected == 1
    assert all(r.passed and r.termination == "agent_stopped" for r in results.values())
    [attempt] = [e for e in events(tmp_path, results[FAULTED], "api_error") if e.turn == 2]
    assert attempt.kind == "transient" and attempt.retry_in is not None


@pytest.mark.slow
def test_an_infrastructure_error_after_the_api_hung_runs_again_on_resume(tmp_path, tasks):
    player = ReferencePlayer(tasks.values())
    with FakeOpenAI(Faulty(player, "hang", when=only(player, FAULTED))) as server:
        first = by_task(run_batch(tmp_path, tasks.values(), server, retries=0, request_timeout=HANG_TIMEOUT))
        assert first[FAULTED].infra_error and first[CLEAN].passed
        server.responder = player  # the API answers again
        again = by_task(run_batch(tmp_path, tasks.values(), server, retries=0))
    assert again[FAULTED].passed and again[CLEAN].passed


def test_a_hanging_answer_ends_when_the_server_stops_even_if_the_client_waits_forever():
    server = FakeOpenAI(lambda body: hang()).start()
    outcome: list[object] = []

    def client() -> None:
        request = urllib.request.Request(
            server.base_url + "/chat/completions", data=b"{}", method="POST", headers={"content-type": "application/json"}
        )
        try:
            urllib.request.urlopen(request, timeout=120)
        except Exception as exc:  # the connection is closed without an answer
            outcome.append(exc)

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    for _ in range(6000):  # until the request arrived (its answer hangs), at most a minute
        if server.requests:
            break
        thread.join(0.01)
    assert server.requests and server.handlers == 1
    server.stop()
    thread.join(60)
    assert not thread.is_alive() and server.handlers == 0
    assert isinstance(outcome[0], (urllib.error.URLError, ConnectionError, OSError))


# -- faults of the configuration: the run stops at once ---------------------------------------


def test_missing_credentials_stop_the_batch_at_once(tmp_path, tasks, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI(ReferencePlayer(tasks.values())) as server, pytest.raises(FatalSolverError, match="missing credentials") as raised:
        run_batch(tmp_path, tasks.values(), server, concurrency=1)
    assert "OPENAI_API_KEY" in str(raised.value) and "InternalServerError" not in str(raised.value)
    assert server.requests == []  # the client refused to send anything
    assert load_run(tmp_path).results == []  # nothing counted: the run resumes once a key is set
    sessions = [read_session(path) for path in (tmp_path / "sessions").rglob("*.jsonl")]
    [attempt] = [e for s in sessions for e in s.events if e.event == "api_error"]  # one try, no retry
    assert attempt.kind == "fatal" and attempt.retry_in is None
    assert not any(s.finished for s in sessions)  # left without an end: run again on resume


@pytest.mark.parametrize("model", ["anthropic/claude-3-5-haiku-20241022", "gemini/gemini-1.5-flash"])
def test_missing_credentials_of_other_providers_are_fatal_too(tmp_path, tasks, monkeypatch, model):
    # each provider's client says it its own way (a 401, a connection error); nothing is sent
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    solver = LLMSolver(LLMConfig(model=model, api_base="http://127.0.0.1:9", retries=2, backoff=0.01))
    batch = Batch(tmp_path, [tasks[FAULTED]], solver, 1)
    batch.prepare()
    try:
        with pytest.raises(FatalSolverError, match="missing credentials") as raised:
            asyncio.run(batch.run(concurrency=1))
    finally:
        batch.finish("failed")
    assert "\n" not in str(raised.value) and "Traceback" not in str(raised.value)


def test_a_rejected_key_stops_the_batch_at_once(tmp_path, tasks):
    with (
        FakeOpenAI(ReferencePlayer(tasks.values()), api_key="sk-the-right-key-42") as server,
        pytest.raises(FatalSolverError, match="AuthenticationError"),
    ):
        run_batch(tmp_path, tasks.values(), server, concurrency=1)
    assert len(server.requests) == 1 and server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert load_run(tmp_path).results == []


def cli_batch(server: FakeOpenAI, out: Path, *extra: str):
    args = [
        "run",
        "--batch",
        "--model",
        "openai/fake",
        "--api-base",
        server.base_url,
        "--task",
        FAULTED,
        "--task",
        CLEAN,
        "--concurrency",
        "1",
        "--retries",
        "2",
        "--backoff",
        "0.01",
        "--out",
        str(out),
        *extra,
    ]
    return CliRunner().invoke(app, args)


def assert_one_error_line(outcome, *words: str) -> None:
    assert outcome.exit_code == 1, outcome.output
    lines = outcome.stderr.strip().splitlines()
    [error] = [n for n, line in enumerate(lines) if line.startswith("error: ")]
    assert all(w in lines[error] for w in words), lines[error]
    assert len(lines) - error <= 2 and "Traceback" not in outcome.output  # the error, then how to resume


def test_cli_without_a_key_exits_non_zero_with_one_line(tmp_path, tasks, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with FakeOpenAI(ReferencePlayer(tasks.values())) as server:
        outcome = cli_batch(server, tmp_path / "run")
    assert_one_error_line(outcome, "missing credentials", "OPENAI_API_KEY")
    assert server.requests == []
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "failed"


def test_cli_key_revoked_mid_run_stops_it_and_keeps_what_finished(tmp_path, tasks):
    player = ReferencePlayer(tasks.values())
    responder = Faulty(player, "401", when=lambda body: player.task_for(body).id == CLEAN)
    with FakeOpenAI(responder) as server:
        outcome = cli_batch(server, tmp_path / "run")
    assert_one_error_line(outcome, "AuthenticationError")
    assert responder.affected == 1  # not retried
    [kept] = load_run(tmp_path / "run").results
    assert kept.task == FAULTED and kept.passed


# -- faults of the model: recorded and scored ---------------------------------------------------


@pytest.mark.parametrize("fault", ["huge_content", "surrogates", "unknown_tool", "wrong_types"])
def test_a_fault_of_the_model_is_recorded_and_scored(tmp_path, tasks, fault):
    player = ReferencePlayer(tasks.values())
    responder = Faulty(player, fault, when=only(player, FAULTED))
    with FakeOpenAI(responder) as server:
        results = by_task(run_batch(tmp_path, tasks.values(), server))
    faulted = results[FAULTED]
    assert responder.affected == 1
    assert faulted.termination == "agent_stopped" and not faulted.infra_error and faulted.grade is not None
    assert faulted.passed  # the model carried on and did the task: it is scored like any trial
    assert results[CLEAN].passed and results[CLEAN].tool_errors == {}
    assistant = [m for m in events(tmp_path, faulted, "message") if m.role == "assistant"]
    calls = events(tmp_path, faulted, "tool_call")
    if fault in ("unknown_tool", "wrong_types"):
        code = "unknown_tool" if fault == "unknown_tool" else "invalid_arguments"
        assert faulted.tool_errors == {code: 1} and faulted.tool_calls == 3 + 1
        [bad] = [c for c in calls if not c.ok]
        assert bad.error_code == code and bad.turn == 2
        # the model was told, in the next request
        reply = [m for body in server.requests for m in body["messages"] if m.get("tool_call_id") == bad.id][0]
        assert json.loads(reply["content"])["error"]["code"] == code
    elif fault == "huge_content":
        # recorded within the caps (payload_caps.py): its length and hash, not its 2 MB
        assert assistant[1].capped == ["content"] and assistant[1].content["bytes"] >= 2_000_000 and faulted.tool_errors == {}
    else:  # recorded as sent; sent back to the API as UTF-8 can carry it (else every later request fails)
        assert assistant[1].content.endswith("\ud800 lone \udfff surrogates \udc00")
        assert assistant[1].repaired == ["content"] and faulted.tool_errors == {}
        later = [m["content"] for body in server.requests for m in body["messages"] if m["role"] == "assistant" and m.get("content")]
        assert later and all(text.endswith("\ufffd lone \ufffd surrogates \ufffd") for text in later)
        assert not events(tmp_path, faulted, "api_error")
    overall = run_metrics(load_run(tmp_path).results).to_dict()["overall"]
    assert (overall["trials"], overall["infra_errors"]) == (2, 0)


# -- tasks that share a request text ------------------------------------------------------------


def test_tasks_that_share_a_request_text_each_get_their_own_solution(tmp_path, tasks):
    original = tasks[FAULTED]
    # Another player asks for the same thing; their solution here is only the first step.
    twin = original.model_copy(
        update={"id": "moba-9023", "actor": tasks[CLEAN].actor, "reference_solution": original.reference_solution[:1]}
    )
    player = ReferencePlayer([original, twin])
    with FakeOpenAI(player) as server:
        results = by_task(run_batch(tmp_path, [original, twin], server))
    assert results[FAULTED].passed and results[FAULTED].tool_calls == 3
    assert results["moba-9023"].tool_calls == 1
    assert [c.tool for c in events(tmp_path, results["moba-9023"], "tool_call")] == [original.reference_solution[0].tool]
    assert {player.task_for(body).id for body in server.requests} == {FAULTED, "moba-9023"}


def test_tasks_that_cannot_be_told_apart_get_no_one_elses_solution(tmp_path, tasks):
    original = tasks[FAULTED]
    twin = original.model_copy(update={"id": "moba-9023", "reference_solution": original.reference_solution[:1]})
    with FakeOpenAI(ReferencePlayer([original, twin])) as server:
        results = by_task(run_batch(tmp_path, [original, twin], server))
    assert all(r.tool_calls == 0 and r.termination == "agent_stopped" for r in results.values())
    said = [m.content for r in results.values() for m in events(tmp_path, r, "message") if m.role == "assistant"]
    assert len(said) == 2 and all("cannot tell" in text for text in said)


def test_a_response_litellm_cannot_read_is_the_models_failure_not_infrastructure(tmp_path, tasks):
    """Tool-call arguments holding a number of 5,000 digits: the API answered, but the model's output
    cannot be read. Retried like a transient error, then scored against the model (agent_error)."""
    from ebench.testing.fake_openai import completion

    garbage = '{"name": "x", "max_players": 1' + "0" * 5000 + "}"
    with FakeOpenAI(lambda body: completion(tool_calls=[("create_room", garbage)])) as server:
        [result] = run_batch(tmp_path / "run", [tasks[FAULTED]], server, retries=1)
    assert result.termination == "agent_error" and not result.infra_error and result.grade is not None
    assert "could not be read" in result.error
    errors = events(tmp_path / "run", result, "api_error")
    assert [e.kind for e in errors] == ["unreadable", "unreadable"]  # one retry, then the model's failure
