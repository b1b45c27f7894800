"""A user who holds information: tasks with a user profile, the scripted and LLM users, the rule
that acting before asking fails, and the shipped ask split.

End to end, the real litellm client talks to local OpenAI-compatible servers: one plays the agent
(the reference solution, asking first or not), another the LLM user."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.batch import Batch
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.regrade import regrade_run
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers import NoopSolver, OracleSolver
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.users import (
    DONT_KNOW,
    MAX_SMALL_TALK,
    STOP_WORD,
    ScriptedUser,
    UserSettings,
    facts_asked,
    question_for,
)
from ebench.tasks.asking import SPLIT_DIR, ask_variant
from ebench.tasks.spec import TaskFileError, UserFact, parse_task
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply, Script, completion

NAME = UserFact("name", ("name", "call", "title"), "Call it 'Autumn Walks'.")
NOTE = UserFact("note", ("note",), "The note is 'clean win'.")


@pytest.fixture(scope="module")
def ask_tasks():
    return load_suite(SPLIT_DIR).tasks


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-users-0123456789")


# -- the scripted user ---------------------------------------------------------------------


def test_the_scripted_user_answers_what_is_asked_and_nothing_else():
    user = ScriptedUser([NAME, NOTE])
    assert user.answer("What should the playlist be called?").text == "Call it 'Autumn Walks'."
    assert user.answer("What should the playlist be called?").revealed == ["name"]
    both = user.answer("Which NAME and which note do you want?")
    assert both.text == "Call it 'Autumn Walks'. The note is 'clean win'." and both.revealed == ["name", "note"]
    assert ScriptedUser([NAME, NOTE]).answer("Which genre?").text == DONT_KNOW  # facts still held
    assert ScriptedUser([NAME, NOTE]).answer("Which genre?").revealed == []
    # Once every fact is given, a question that asks for none (a polite "Anything else?") gets no
    # reply: the user has nothing more to say, which ends the turn.
    assert ScriptedUser([NAME]).answer("Anything else I can help you with?").text == DONT_KNOW
    done = ScriptedUser([NAME])
    done.answer("What should it be called?")
    assert done.answer("Anything else I can help you with?").text is None
    assert ScriptedUser([]).answer("Anything else I can help you with?").text is None
    # A message that asks nothing (a report, a guess stated as fact) gets no reply: the talk is over.
    assert user.answer("I named it 'Mix' and added the songs.").text is None
    assert [f.about for f in facts_asked([NAME, NOTE], "any notes?")] == ["note"]
    assert question_for([NAME, NOTE]) == "Before I start, could you tell me the name and note?"


# -- the task format -----------------------------------------------------------------------


def test_a_user_profile_round_trips_and_a_bad_one_is_named(ask_tasks):
    task = ask_tasks[0]
    data = json.loads(task.to_json())
    assert parse_task(data).user_profile == task.user_profile
    old = {k: v for k, v in data.items() if k != "user_profile"}
    assert "user_profile" not in json.loads(parse_task(old).to_json())  # a task without one is written as before
    for bad, where in (
        ([{"about": "name"}], "user_profile[0]"),
        ([{"about": "name", "asked_by": [], "answer": "x"}], "user_profile[0].asked_by"),
        ([{"about": "name", "asked_by": ["name"], "answer": " "}], "user_profile[0].answer"),
        ("name", "user_profile"),
    ):
        with pytest.raises(TaskFileError) as caught:
            parse_task({**data, "user_profile": bad})
        assert caught.value.field == where


# -- the ask split -------------------------------------------------------------------------


def test_the_shipped_ask_split_is_its_regeneration_byte_for_byte(tmp_path):
    done = CliRunner().invoke(app, ["tasks", "ask-split", "--dir", str(SUITE_DIR), "--out", str(tmp_path), "--json"])
    assert done.exit_code == 0, done.output
    made = json.loads(done.stdout)
    shipped = sorted(p.relative_to(SPLIT_DIR) for p in SPLIT_DIR.rglob("*.json"))
    assert shipped == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    for path in shipped:
        assert (SPLIT_DIR / path).read_bytes() == (tmp_path / path).read_bytes(), path
    counts = json.loads((SPLIT_DIR / "suite.json").read_text())["counts"]
    assert all(counts[d] >= 30 for d in ("music", "meeting", "moba")) and sum(counts.values()) == made["tasks"] == 180


def test_a_hidden_value_leaves_the_request_and_is_what_the_task_writes(ask_tasks):
    originals = {t.id: t for t in load_suite(SUITE_DIR).tasks}
    for task in ask_tasks:
        original = originals[task.generator["original"]]
        assert (task.expected_diff, task.reference_solution, task.actor) == (
            original.expected_diff,
            original.reference_solution,
            original.actor,
        )
        for key in task.generator["hidden"]:
            value = original.generator["stated"][key]
            assert value.casefold() not in task.query.casefold(), task.id
            assert not any(value.casefold() in p.casefold() for p in task.paraphrases), task.id  # nor in other words
            assert any(cell == value for change in task.expected_diff for cell in (change.new or {}).values()), task.id
        assert "I'll give you" in task.query
        for fact in task.user_profile:  # the oracle's question reaches every fact
            assert fact in facts_asked(task.user_profile, question_for(task.user_profile))
    music = originals["music-0003"]
    assert ask_variant(music).query.startswith("Make a playlist with a name I'll give you with every song I played between")
    # a scenario's clarify turn lacks the value without announcing the gap
    assert ask_variant(music, announce=False).query.startswith("Make a playlist with every song I played between")
    assert ask_variant(music.model_copy(update={"generator": {}})) is None  # nothing stated: nothing to hide


# -- batches -------------------------------------------------------------------------------


def batch(out: Path, tasks, solver, user: UserSettings | None = None) -> list[TrialSummary]:
    run = Batch(out, list(tasks), solver, 1, user=user or UserSettings())
    run.prepare()
    try:
        asyncio.run(run.run(concurrency=4))
    finally:
        run.finish("finished")
    return sorted(load_run(out).results, key=lambda r: r.task)


def test_the_oracle_asks_first_and_passes_every_ask_task_and_noop_passes_none(tmp_path, ask_tasks):
    oracle = batch(tmp_path / "oracle", ask_tasks, OracleSolver())
    assert len(oracle) == len(ask_tasks) and all(r.passed and r.asked_first for r in oracle)
    noop = batch(tmp_path / "noop", ask_tasks, NoopSolver())
    assert not any(r.passed for r in noop)
    session = read_session(tmp_path / "oracle" / oracle[0].session)
    said = [(e.role, e.content, getattr(e, "user", None)) for e in session.events if e.event == "message" and e.role != "system"]
    assert said[0][0] == "assistant" and said[0][1].startswith("Before I start")
    assert said[1][0] == "user" and said[1][2] == "scripted" and "'" in said[1][1]


CHOSEN = ["music-0003-ask", "moba-0001-ask", "meeting-0014-ask"]  # one hidden value, one, two


def test_a_model_that_asks_passes_and_one_that_acts_first_fails_with_the_right_diff(tmp_path, ask_tasks):
    tasks = [t for t in ask_tasks if t.id in CHOSEN]
    with FakeOpenAI(ReferencePlayer(tasks)) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        asked = batch(tmp_path / "asked", tasks, solver)
    assert [r.passed for r in asked] == [True] * 3 and all(r.asked_first for r in asked)
    session = read_session(tmp_path / "asked" / asked[0].session)
    system = next(e for e in session.events if e.event == "message" and e.role == "system").content
    assert "ask the user" in system
    replies = [e for e in session.events if e.event == "message" and e.role == "user" and e.user]
    assert len(replies) == 1 and replies[0].revealed

    with FakeOpenAI(ReferencePlayer(tasks, asks=False)) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        guessed = batch(tmp_path / "guessed", tasks, solver)
    assert not any(r.passed for r in guessed) and not any(r.asked_first for r in guessed)
    assert all(r.grade and r.grade.matched_rows == r.grade.expected_rows for r in guessed)  # the end state was right
    end = read_session(tmp_path / "guessed" / guessed[0].session).end
    assert end.grade.note.startswith("acted before asking the user for:")

    # Regrading applies the same rule from the session's events.
    report = regrade_run(tmp_path / "guessed")
    assert report["changed"] == 0
    assert not any(r.passed for r in load_run(tmp_path / "guessed").results)


def test_an_llm_user_answers_from_its_model_and_is_recorded(tmp_path, ask_tasks):
    task = next(t for t in ask_tasks if t.id == "music-0003-ask")
    user_model = Script([completion("Oh, call it 'Old Flames' please."), completion(STOP_WORD)])
    with FakeOpenAI(ReferencePlayer([task])) as agent, FakeOpenAI(user_model) as user_server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=agent.base_url, retries=0))
        settings = UserSettings(kind="llm", model="openai/fake-user", api_base=user_server.base_url)
        results = batch(tmp_path, [task], solver, settings)
        seen = user_server.requests
    assert results[0].passed and results[0].asked_first
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["config"]["user"]["model"] == "openai/fake-user"
    session = read_session(tmp_path / results[0].session)
    reply = next(e for e in session.events if e.event == "message" and e.role == "user" and e.user)
    assert (reply.user, reply.content, reply.revealed) == ("llm", "Oh, call it 'Old Flames' please.", ["name"])
    # The user's model was told the request and the profile, and asked the agent's question.
    first = seen[0]["messages"]
    assert "Old Flames" in first[0]["content"] and task.query in first[0]["content"]
    assert first[-1] == {"role": "user", "content": question_for(task.user_profile)}


def test_a_dead_user_model_is_an_infrastructure_error_not_the_agents(tmp_path, ask_tasks):
    task = next(t for t in ask_tasks if t.id == "music-0003-ask")
    with FakeOpenAI(ReferencePlayer([task])) as agent, FakeOpenAI(Script([Reply(503, {"error": {"message": "down"}})])) as user_server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=agent.base_url, retries=0))
        settings = UserSettings(kind="llm", model="openai/fake-user", api_base=user_server.base_url, retries=0)
        results = batch(tmp_path, [task], solver, settings)
    assert results[0].infra_error and "simulated user" in (results[0].error or "")


def test_a_user_model_with_an_empty_response_is_named_as_the_cause(tmp_path, ask_tasks):
    task = next(t for t in ask_tasks if t.id == "music-0003-ask")
    empty = Reply(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []})
    with FakeOpenAI(ReferencePlayer([task])) as agent, FakeOpenAI(Script([empty])) as user_server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=agent.base_url, retries=0))
        settings = UserSettings(kind="llm", model="openai/fake-user", api_base=user_server.base_url, retries=1)
        results = batch(tmp_path, [task], solver, settings)
        asked = len(user_server.requests)
    error = results[0].error or ""
    assert results[0].infra_error and "empty response" in error and "IndexError" not in error
    assert asked == 2  # asked again once (retries=1) before giving up


def test_a_model_that_asks_forever_is_stopped(tmp_path, ask_tasks):
    task = next(t for t in ask_tasks if t.id == "music-0003-ask")
    with FakeOpenAI(Script([completion("What genre do you like?")])) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        results = batch(tmp_path, [task], solver)
    assert not results[0].passed and results[0].termination == "agent_stopped"
    # "I don't know." to each: small talk, which ends the turn after MAX_SMALL_TALK replies
    assert results[0].turns == MAX_SMALL_TALK + 1


def test_the_command_line_takes_a_user_and_refuses_a_half_one(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(app, ["run", "--batch", "--solver", "oracle", "--user", "llm", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--user llm needs --user-model" in bad.output and "Traceback" not in bad.output
    ok = runner.invoke(
        app,
        [
            "run",
            "--batch",
            "--solver",
            "oracle",
            "--tasks-dir",
            str(SPLIT_DIR),
            "--task",
            "music-0003-ask",
            "--out",
            str(tmp_path / "r"),
            "--json",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["passed"] == 1
