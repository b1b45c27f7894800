"""The realistic-agent corpus (ebench.testing.agents) over every shipped task and scenario, through
the real litellm client and the model solver against the local OpenAI-compatible server: every
careful agent passes 100%, every sloppy one fails. Both error rates of the suite, measured."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ebench.sessions.batch import Batch
from ebench.sessions.metrics import paths
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.users import UserSettings
from ebench.tasks.scenarios import SCENARIOS_DIR, load_scenarios
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.testing.agents import CAREFUL, POLITE_CLOSE, SLOPPY, realistic_agent, sloppy_agent
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, completion

DOMAINS = ("music", "meeting", "moba")


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-realistic-0123456789")


@pytest.fixture(scope="module")
def suite():
    report = load_suite(SUITE_DIR)  # named: the other tests run on fixed fixture tasks
    assert report.errors == [] and len(report.tasks) >= 300
    return report.tasks


@pytest.fixture(scope="module")
def scenarios():
    found, errors = load_scenarios(SCENARIOS_DIR)
    assert errors == [] and len(found) >= 120
    return found


def run(out: Path, tasks, responder, *, scenarios: bool = False, user: UserSettings | None = None) -> list[TrialSummary]:
    with FakeOpenAI(responder) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        selection = {"scenarios": True, "dir": str(SCENARIOS_DIR)} if scenarios else {}
        batch = Batch(out, list(tasks), solver, 1, selection=selection, user=user or UserSettings())
        batch.prepare()
        try:
            asyncio.run(batch.run(concurrency=16))
        finally:
            batch.finish("finished")
    return load_run(out).results


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(CAREFUL))
@pytest.mark.parametrize("domain", DOMAINS)
def test_every_careful_agent_passes_every_shipped_task(tmp_path, suite, agent, domain):
    tasks = [t for t in suite if t.domain == domain]
    results = run(tmp_path, tasks, realistic_agent(tasks, CAREFUL[agent]))
    assert len(results) == len(tasks)
    failed = sorted(r.task for r in results if not r.passed)
    assert failed == [], f"{agent} fails {len(failed)} of {len(tasks)}: {failed[:10]}"


@pytest.mark.slow
@pytest.mark.parametrize("sloppy", sorted(SLOPPY))
def test_every_sloppy_agent_fails_every_task_it_applies_to(tmp_path, suite, sloppy):
    responder, chosen = sloppy_agent(suite, SLOPPY[sloppy])
    assert len(chosen) >= 30
    results = run(tmp_path, chosen, responder)
    assert len(results) == len(chosen)
    passed = sorted(r.task for r in results if r.passed)
    assert passed == [], f"{sloppy} passes {passed[:10]}"


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["optimal", "chatty", "extra-reads"])
def test_a_polite_careful_agent_passes_every_shipped_scenario(tmp_path, scenarios, agent):
    """Every careful agent passes every scenario; the reference played level by level (the
    oracle's optimal path) takes each turn in its own fewest model turns, so the optimal path
    rate is 100%: a scenario's target is the sum of its turns' own fewest."""
    tasks = [s.as_task() for s in scenarios]
    responder = ReferencePlayer(tasks, optimal=True) if agent == "optimal" else realistic_agent(tasks, CAREFUL[agent])
    results = run(tmp_path, tasks, responder, scenarios=True)
    failed = sorted((r.task, tuple(t.passed for t in r.scenario_turns or [])) for r in results if not r.passed)
    assert len(results) == len(tasks) and failed == []
    if agent == "optimal":
        assert paths(results).optimal_path_rate == 1.0
        assert all(r.call_turns == r.optimal_turns for r in results)


def test_an_llm_user_that_never_says_stop_does_not_starve_a_polite_agent(tmp_path, scenarios):
    """The simulated user chats back to every polite close ("Happy to help anytime!") and never
    sends the stop word: its small talk ends each turn after a few replies, and the turns after
    still get their answers."""
    scenario = next(s for s in scenarios if s.domain == "music" and s.kinds.index("clarify") >= 2)
    task = scenario.as_task()
    clarify = scenario.turns[scenario.kinds.index("clarify")]
    fact = clarify.user_profile[0]

    def user(body):
        asked = body["messages"][-1]["content"]
        if any(key in asked.lower() for key in fact.asked_by):
            return completion(fact.answer)
        return completion("Happy to help anytime!")

    with FakeOpenAI(user) as user_server:
        settings = UserSettings(kind="llm", model="openai/fake-user", api_base=user_server.base_url, retries=0)
        [result] = run(tmp_path, [task], realistic_agent([task], CAREFUL["chatty"]), scenarios=True, user=settings)
    assert result.passed, result.scenario_turns


def test_the_polite_close_is_sent_and_a_plain_player_passes_as_well(tmp_path, scenarios):
    scenario = next(s for s in scenarios if s.domain == "moba" and "chat" in s.kinds)
    task = scenario.as_task()
    server_seen: list = []
    agent = realistic_agent([task], CAREFUL["chatty"])

    def recording(body):
        reply = agent(body)
        server_seen.append(reply.body["choices"][0]["message"].get("content") or "")
        return reply

    [polite] = run(tmp_path / "polite", [task], recording, scenarios=True)
    [plain] = run(tmp_path / "plain", [task], ReferencePlayer([task]), scenarios=True)
    assert polite.passed and plain.passed
    assert any(text.endswith(POLITE_CLOSE) for text in server_seen)


def test_a_malformed_call_is_answered_and_the_retry_passes(tmp_path, suite):
    task = next(t for t in suite if t.domain == "music")
    sent: list = []
    agent = realistic_agent([task], CAREFUL["chatty"])

    def recording(body):
        sent.append(body["messages"])
        return agent(body)

    [result] = run(tmp_path, [task], recording)
    assert result.passed and result.tool_errors
    # the harness told the model its call was broken, and the model's next request carried that
    answer = next(m for m in sent[1] if m["role"] == "tool")
    assert "json" in answer["content"].lower() or "argument" in answer["content"].lower()
