"""The model solver end to end: the real litellm client against a local OpenAI-compatible server
(started by each test on 127.0.0.1), through a real batch into a run directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.batch import Batch
from ebench.sessions.events import SessionEvent
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.base import FatalSolverError
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.trial import TrialLimits
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply, Script, completion, error

TASK = "moba-0024"  # create a room, then three invitations that need its id
OTHER = "moba-0023"


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_suite(ids=[TASK, OTHER]).tasks}


def run_batch(
    out: Path, tasks, server: FakeOpenAI, *, trials: int = 1, limits: TrialLimits | None = None, code: bool = False, **config
) -> list[TrialSummary]:
    settings = {"retries": 2, "backoff": 0.01, **config}
    solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, **settings))
    batch = Batch(out, list(tasks), solver, trials, code=code, limits=limits or TrialLimits())
    batch.prepare()
    status = "failed"
    try:
        asyncio.run(batch.run(concurrency=4))
        status = "finished"
    finally:
        batch.finish(status)  # as the command does: the run directory is free again
    return sorted(load_run(out).results, key=lambda r: (r.task, r.trial))


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def events(run_dir: Path, result: TrialSummary, kind: str | None = None) -> list[SessionEvent]:
    session = read_session(run_dir / result.session)
    return [e for e in session.events if kind is None or e.event == kind]


def test_sequential_tool_calls_solve_the_task(tmp_path, tasks):
    with FakeOpenAI(ReferencePlayer(tasks.values())) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert result.passed and result.termination == "agent_stopped"
    assert result.tool_calls == 4 and result.turns == 5  # one call per turn, then the answer
    assert (result.tokens_in, result.tokens_out) == (500, 100)
    # the model saw its tool results: the second request carries the room's id in a tool message
    second = server.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "room_id" in json.loads(second[-1]["content"])
    assert second[0]["role"] == "system" and "current time is" in second[0]["content"]
    calls = events(tmp_path, result, "tool_call")
    assert [c.tool for c in calls] == ["create_room"] + ["invite_to_room"] * 3
    assert all(c.ok for c in calls)
    end = events(tmp_path, result, "end")[0]
    assert end.grade.passed and len(end.diff) == len(tasks[TASK].expected_diff)


def test_parallel_tool_calls_are_all_executed(tmp_path, tasks):
    with FakeOpenAI(ReferencePlayer(tasks.values(), parallel=True)) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert result.passed
    assert result.turns == 3 and result.tool_calls == 4  # create; three invitations at once; answer
    assert len(server.requests[2]["messages"]) == 2 + 2 + 4  # system, user, (call, result), (3 calls, 3 results)
    messages = events(tmp_path, result, "message")
    assert [len(m.tool_calls) for m in messages if m.role == "assistant"] == [1, 3, 0]


def test_stopping_one_call_short_fails_with_the_missing_change(tmp_path, tasks):
    with FakeOpenAI(ReferencePlayer(tasks.values(), skip_last=1)) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert not result.passed and result.termination == "agent_stopped"
    assert result.grade.missing >= 1 and result.grade.unexpected == 0
    grade = events(tmp_path, result, "end")[0].grade
    missing = grade.missing
    assert missing and all(change.table == "room_invitations" for change in missing)


def test_unknown_tool_and_malformed_arguments_go_back_to_the_model(tmp_path, tasks):
    script = Script(
        [
            completion(None, [("teleport_player", {"to": "base"}), ("create_room", '{"mode": ')]),
            completion(None, [("get_player", {"player_id": "seven"})]),
            completion("I could not do it."),
        ]
    )
    with FakeOpenAI(script) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert result.termination == "agent_stopped" and result.turns == 3 and not result.passed
    assert result.tool_errors.get("unknown_tool") == 1
    assert result.tool_errors.get("invalid_arguments", 0) >= 2
    replies = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert [json.loads(r["content"])["error"]["code"] for r in replies] == ["unknown_tool", "invalid_arguments"]
    assert "teleport_player" in json.loads(replies[0]["content"])["error"]["message"]
    assert result.grade.actual_rows == 0  # nothing reached the world copy


def test_rate_limit_is_retried(tmp_path, tasks):
    with FakeOpenAI(Script([error(429, "slow down"), completion("Nothing to do.")])) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert len(server.requests) == 2  # our retry, not the client's own
    assert result.termination == "agent_stopped" and not result.infra_error
    [api_error] = events(tmp_path, result, "api_error")
    assert api_error.kind == "transient" and api_error.status == 429 and api_error.retry_in is not None


def test_persistent_server_errors_are_an_infrastructure_error_left_out_of_scores(tmp_path, tasks):
    from ebench.sessions.metrics import run_metrics

    responder = Script([error(500, "boom")])
    with FakeOpenAI(responder) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server, retries=2)
    assert len(server.requests) == 3
    assert result.infra_error and result.termination == "infra_error" and result.grade is None
    assert "InternalServerError" in result.error
    metrics = run_metrics(load_run(tmp_path).results).to_dict()
    assert metrics["overall"]["trials"] == 0 and metrics["overall"]["infra_errors"] == 1


def test_an_infrastructure_error_is_run_again_on_resume(tmp_path, tasks):
    with FakeOpenAI(Script([error(503)])) as server:
        [first] = run_batch(tmp_path, [tasks[TASK]], server, retries=0)
        assert first.infra_error
        server.responder = ReferencePlayer(tasks.values())  # the API is back
        [result] = run_batch(tmp_path, [tasks[TASK]], server, retries=0)
    assert result.passed and not result.infra_error


def test_a_rejected_key_stops_the_batch(tmp_path, tasks):
    rejected = Script([error(401, "Incorrect API key")])
    with FakeOpenAI(rejected) as server, pytest.raises(FatalSolverError, match="AuthenticationError"):
        run_batch(tmp_path, [tasks[TASK], tasks[OTHER]], server)
    assert load_run(tmp_path).results == []  # nothing counted: the run resumes once the key is fixed


def test_a_context_overflow_ends_the_trial_as_context_limit(tmp_path, tasks):
    message = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens."
    with FakeOpenAI(Script([error(400, message)])) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert result.termination == "context_limit" and not result.infra_error and not result.passed


def test_a_response_without_a_message_is_an_agent_error(tmp_path, tasks):
    with FakeOpenAI(Script([Reply(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []})])) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert result.termination == "agent_error" and "no message" in result.error


def test_turn_and_tool_call_limits(tmp_path, tasks):
    looping = Script([completion(None, [("get_my_profile", {})])])
    with FakeOpenAI(looping) as server:
        [result] = run_batch(tmp_path / "turns", [tasks[TASK]], server, limits=TrialLimits(max_turns=3))
    assert result.termination == "max_turns" and result.turns == 3 and result.tool_calls == 3

    burst = Script([completion(None, [("get_my_profile", {})] * 5)])
    with FakeOpenAI(burst) as server:
        [result] = run_batch(tmp_path / "calls", [tasks[TASK]], server, limits=TrialLimits(max_tool_calls=3))
    assert result.termination == "max_tool_calls" and result.tool_calls == 3


def test_the_time_limit_counts_the_trials_own_time(tmp_path, tasks):
    # the block sleeps past the limit: at the next turn the trial is out of time
    block = "import time\ntime.sleep(1.0)"
    script = Script([completion(None, [("exec_code", {"code": block})]), completion("late")])
    with FakeOpenAI(script) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server, code=True, limits=TrialLimits(timeout=0.5))
    assert result.termination == "time_limit" and result.turns == 1 and not result.infra_error
    assert len(server.requests) == 1


def test_waiting_on_the_api_does_not_count_against_the_time_limit(tmp_path, tasks):
    # each answer takes twice the trial's limit; the one tool call between them is local work
    script = Script([completion(None, [("get_my_profile", {})]), completion("Done.")])
    with FakeOpenAI(script, delay=1.0) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server, limits=TrialLimits(timeout=0.5))
    assert result.termination == "agent_stopped" and result.turns == 2 and result.seconds >= 2.0


def test_cost_from_given_prices(tmp_path, tasks):
    with FakeOpenAI(ReferencePlayer(tasks.values())) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server, price_in=1.0, price_out=2.0)
    assert result.cost == pytest.approx((500 * 1.0 + 100 * 2.0) / 1e6)


def test_cost_from_litellms_offline_price_list(tmp_path, tasks):
    with FakeOpenAI(Script([completion("ok", tokens=(1_000_000, 0))])) as server:
        solver = LLMSolver(LLMConfig(model="openai/gpt-4o-mini", api_base=server.base_url))
        batch = Batch(tmp_path, [tasks[TASK]], solver, 1)
        batch.prepare()
        asyncio.run(batch.run(1))
    [result] = load_run(tmp_path).results
    assert result.cost == pytest.approx(0.15)  # USD per million input tokens in litellm's bundled price list


def test_a_prices_file_prices_models_litellm_does_not_know(tmp_path, tasks):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/fake": {"input": 3.0, "output": 15.0}}))
    with FakeOpenAI(ReferencePlayer(tasks.values())) as server:
        outcome = CliRunner().invoke(
            app,
            [
                "run",
                "--batch",
                "--model",
                "openai/fake",
                "--api-base",
                server.base_url,
                "--task",
                TASK,
                "--prices",
                str(prices),
                "--out",
                str(tmp_path / "run"),
                "--json",
            ],
        )
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout)["cost"] == pytest.approx((500 * 3.0 + 100 * 15.0) / 1e6)
    prices.write_text('{"openai/fake": {"input": "cheap"}}')
    bad = CliRunner().invoke(app, ["run", "--batch", "--model", "openai/fake", "--task", TASK, "--prices", str(prices)])
    assert bad.exit_code == 2 and "USD per million tokens" in bad.output


def test_unknown_price_leaves_the_cost_unknown(tmp_path, tasks):
    with FakeOpenAI(Script([completion("ok")])) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server)
    assert result.cost is None


def test_api_keys_never_reach_the_records(tmp_path, tasks):
    with FakeOpenAI(ReferencePlayer(tasks.values())) as server:
        run_batch(tmp_path, [tasks[TASK]], server, model_args={"api_key": "sk-passed-as-arg-987654321", "temperature": 0})
    assert server.headers[0]["authorization"] == "Bearer sk-passed-as-arg-987654321"  # it was used
    assert server.requests[0]["temperature"] == 0
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert "sk-passed-as-arg-987654321" not in written and "sk-test-do-not-record" not in written
    assert '"temperature": 0' in (tmp_path / "manifest.json").read_text()


def test_code_mode_records_block_calls_as_children(tmp_path, tasks):
    code = "me = get_my_profile()\nrooms = list_rooms()\nprint(me['nickname'])\nrooms['total']"
    script = Script([completion(None, [("exec_code", {"code": code})]), completion("Looked.")])
    with FakeOpenAI(script) as server:
        [result] = run_batch(tmp_path, [tasks[TASK]], server, code=True)
    assert result.exec_blocks == 1 and result.inner_calls == 2 and result.tool_calls == 1
    calls = events(tmp_path, result, "tool_call")
    block = calls[-1]
    assert block.tool == "exec_code" and block.parent is None and block.ok
    assert [(c.tool, c.parent) for c in calls[:-1]] == [("get_my_profile", block.id), ("list_rooms", block.id)]
    assert "exec_code" in [t["function"]["name"] for t in server.requests[0]["tools"]]
    reply = json.loads([m for m in server.requests[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert reply["ok"] and reply["tool_calls"] == 2 and reply["value"].isdigit()


def test_cli_batch_with_a_model_and_report(tmp_path, tasks):
    out = tmp_path / "run"
    with FakeOpenAI(ReferencePlayer(tasks.values(), parallel=True)) as server:
        args = [
            "run",
            "--batch",
            "--solver",
            "llm",
            "--model",
            "openai/fake",
            "--api-base",
            server.base_url,
            "--task",
            TASK,
            "--task",
            OTHER,
            "--trials",
            "2",
            "--concurrency",
            "4",
            "--out",
            str(out),
            "--json",
            "--model-arg",
            "temperature=0.2",
        ]
        outcome = CliRunner().invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    summary = json.loads(outcome.stdout)
    assert (summary["passed"], summary["scored"], summary["infra_errors"]) == (4, 4, 0)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["solver"]["model_args"] == {"temperature": 0.2}
    assert manifest["status"] == "finished" and manifest["ended"]
