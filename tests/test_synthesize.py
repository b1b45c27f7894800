"""`ebench tasks synthesize` end to end: the real CLI and litellm client against a local
OpenAI-compatible server that plays the generator (good, leaky and empty drafts) and the verifiers
(agreeing, disagreeing, failing), showing each rejection reason and the k-of-n vote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.record import read_session
from ebench.sessions.timeline import Timeline
from ebench.tasks.generation import SeenTasks
from ebench.tasks.spec import Task
from ebench.tasks.synthesis import GeneratorWorkspace, Rejection, vet_draft
from ebench.tasks.task_check import check_task
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, completion, turn_of
from ebench.testing.synthesis_script import ACTOR, INVITEES, QUERY, ROOM, by_model, verifier_players
from ebench.testing.synthesis_script import room_generator as generator


def task_of(query: str = QUERY, room: dict = ROOM) -> Task:
    """The task a good generator's draft becomes, for the verifier that agrees."""
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        made = workspace.call("create_room", room)
        for player in INVITEES:
            workspace.call("invite_to_room", {"room_id": made.value["room_id"], "player_id": player})
        draft = workspace.draft(query, "cross_step_dependency")
    return vet_draft(draft, SeenTasks(), task_id="moba-expected")


@pytest.fixture(scope="module")
def expected() -> Task:
    return task_of()


@pytest.fixture
def server(expected):
    agree = ReferencePlayer([expected])
    players = {
        "gen": generator(QUERY),
        "gen-leaky": generator(QUERY.replace("each clanmate", "the 3 clanmates")),
        "gen-empty": generator(None),
        **verifier_players(agree),
        "agree-2": agree,  # another model that solves it: a second opinion (the same model listed twice is one)
    }
    with FakeOpenAI(by_model(players)) as fake:
        yield fake


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def synthesize(server, out: Path, verifiers: list[str], *extra: str, generator_model: str = "gen", count: int = 1):
    args = ["tasks", "synthesize", "--domain", "moba", "--generator-model", f"openai/{generator_model}"]
    for model in verifiers:
        args += ["--verifier-model", f"openai/{model}"]
    args += ["--count", str(count), "--out", str(out), "--actor", str(ACTOR), "--api-base", server.base_url]
    args += ["--retries", "0", "--backoff", "0", "--capability", "dependency", "--json", *extra]
    result = CliRunner().invoke(app, args)
    summary = json.loads(result.stdout) if result.stdout.strip() else None
    return result, summary


def log_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "synthesis.jsonl").read_text().splitlines()]


def test_two_of_three_verifiers_accept_a_draft_that_validates_and_replays(server, tmp_path):
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "agree-2", "disagree"])
    assert result.exit_code == 0, result.output
    assert summary["accepted"] == 1 and summary["tasks"] == ["moba-s0001"] and summary["rejected"] == {}
    [line] = log_lines(out)
    assert line["outcome"] == "accepted" and line["votes"] == "2/3" and line["capability"] == "cross_step_dependency"
    assert line["actor"] == ACTOR and line["query"] == QUERY

    task_file = out / "moba" / "moba-s0001.json"
    from ebench.tasks.spec import parse_task

    task = parse_task(json.loads(task_file.read_text()))
    assert task.query == QUERY and [s.tool for s in task.reference_solution] == ["create_room", *["invite_to_room"] * 3]
    record = task.generator
    assert record["kind"] == "model" and record["votes"] == "2/3" and record["capability"] == "cross_step_dependency"
    assert record["generator"]["model"] == "openai/gen"
    assert [(v["model"], v["passed"], v["configuration"]) for v in record["verifiers"]] == [
        ("openai/agree", True, 1),
        ("openai/agree-2", True, 2),
        ("openai/disagree", False, 3),
    ]
    assert record["distinct_verifiers"] == 3 and summary["distinct_verifiers"] == 3 and summary["votes_needed"] == 2
    assert check_task(task).ok
    validated = CliRunner().invoke(app, ["tasks", "validate", "--dir", str(out), "--json"])
    assert validated.exit_code == 0, validated.output

    # every model exchange is a session the replay debugger steps through faithfully
    sessions = sorted(p.relative_to(out).as_posix() for p in (out / "sessions").glob("*.jsonl"))
    assert sessions == ["sessions/generator-0001.jsonl", *[f"sessions/verifier-0001-{k}.jsonl" for k in (1, 2, 3)]]
    generator_events = read_session(out / "sessions/generator-0001.jsonl").events
    privileged = [e for e in generator_events if e.event == "privileged_call"]
    assert [e.tool for e in privileged] == ["query_sql", "submit_task"] and privileged[0].result["rows"][0][0] > 100
    for name in sessions:
        timeline = Timeline.open(out / name)
        try:
            assert timeline.check() is None, name
        finally:
            timeline.close()
    assert "sk-test-do-not-record" not in "".join(p.read_text() for p in (out / "sessions").glob("*.jsonl"))


def test_one_of_three_is_rejected_as_disagreement(server, tmp_path):
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "disagree", "disagree"], "--max-drafts", "1")
    assert result.exit_code == 1 and "only 0 of 1 tasks were accepted" in result.stderr
    # the model that declines, listed twice, is one opinion: one vote of two distinct verifiers
    assert summary["rejected"] == {"verifiers disagree (1/2)": 1} and summary["status"] == "drafts"
    assert summary["verifiers"] == 3 and summary["distinct_verifiers"] == 2
    assert not list((out / "moba").glob("*.json"))


def test_min_votes_raises_the_bar(server, tmp_path):
    result, summary = synthesize(server, tmp_path / "synth", ["agree", "agree-2", "disagree"], "--min-votes", "3", "--max-drafts", "1")
    assert result.exit_code == 1 and summary["rejected"] == {"verifiers disagree (2/3)": 1}


@pytest.mark.parametrize(
    ("model", "reason"),
    [("gen-leaky", Rejection.LEAKS_COUNT), ("gen-empty", Rejection.NO_CHANGE)],
)
def test_a_bad_draft_is_rejected_before_any_verifier_runs(server, tmp_path, model, reason):
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "agree-2"], "--max-drafts", "1", generator_model=model)
    assert result.exit_code == 1
    assert summary["rejected"] == {str(reason): 1}
    [line] = log_lines(out)
    assert line["outcome"] == "rejected" and line["reason"] == str(reason)
    assert line["sessions"] == ["sessions/generator-0001.jsonl"]  # no verifier was asked


def test_a_verifier_whose_api_fails_is_no_vote_against(server, tmp_path):
    # agree + API failure: one pass, and the failure could have been the second: unverified, not rejected
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "broken", "disagree"], "--max-drafts", "1")
    assert result.exit_code == 1 and summary["unverified"] == 1 and summary["rejected"] == {}
    [line] = log_lines(out)
    assert line["outcome"] == "unverified" and line["votes"] == "1/3"
    # two passes are enough, whatever the third verifier's API does
    result, summary = synthesize(server, tmp_path / "again", ["agree", "broken", "agree-2"])
    assert result.exit_code == 0 and summary["accepted"] == 1


def test_the_budget_stops_between_drafts(server, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({m: {"input": 1000.0, "output": 1000.0} for m in ("openai/gen", "openai/agree", "openai/agree-2")}))
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "agree-2"], "--prices", str(prices), "--budget", "0.5", count=3)
    assert result.exit_code == 1 and "the budget was spent" in result.stderr
    assert summary["status"] == "budget" and summary["drafts"] == 1 and summary["accepted"] == 1
    assert summary["cost"] >= 0.5 and summary["cost_unknown"] == 0
    assert log_lines(out)[0]["cost"] == pytest.approx(summary["cost"])


def test_drafts_running_at_once_never_accept_the_same_task_twice(server, tmp_path):
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "agree-2"], "--concurrency", "2", "--max-drafts", "2", count=2)
    assert result.exit_code == 1
    assert summary["drafts"] == 2 and summary["accepted"] == 1 and summary["rejected"] == {str(Rejection.DUPLICATE): 1}
    assert sorted(line["draft"] for line in log_lines(out)) == [1, 2]


def test_capabilities_go_to_what_the_mix_lacks(tmp_path):
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.synthesize import Synthesis, SynthesisConfig, SynthesisError
    from ebench.tasks.spec import CAPABILITIES

    config = SynthesisConfig(
        "moba", LLMConfig("openai/gen"), [LLMConfig("openai/a"), LLMConfig("openai/b")], count=12, out=tmp_path, seed=7
    )
    synthesis = Synthesis(config)
    planned = []
    for number in range(1, 7):
        actor, capability = synthesis.plan(number)
        planned.append(capability)
        synthesis.in_flight[capability] += 1  # as the run counts a draft in progress
    assert planned == list(CAPABILITIES)  # one of each before any repeats
    synthesis.summary.accepted_by_capability.update(CAPABILITIES[1:])  # all but the first were accepted
    assert synthesis.plan(7)[1] == CAPABILITIES[0]
    assert synthesis.plan(3) == synthesis.plan(3) and Synthesis(config).plan(3)[0] == synthesis.plan(3)[0]  # the seed decides the user
    with pytest.raises(SynthesisError, match="--min-votes 3"):
        Synthesis(SynthesisConfig("moba", LLMConfig("openai/gen"), config.verifiers, count=1, out=tmp_path, min_votes=3))


def test_privileged_verifiers_may_query_the_database(expected, tmp_path):
    player = ReferencePlayer([expected])

    def sql_first(body):
        """Looks with query_sql first, then plays the reference (its SQL turn left out of the replay)."""
        if turn_of(body) == 1:
            return completion(None, [("query_sql", {"sql": "SELECT id FROM players WHERE id = 16"})])
        messages = body["messages"]
        return player({**body, "messages": messages[:2] + messages[4:]})

    players = {"gen": generator(QUERY), "sql": sql_first, "sql-2": sql_first}
    out = tmp_path / "synth"
    with FakeOpenAI(by_model(players)) as server:
        result, summary = synthesize(server, out, ["sql", "sql-2"], "--verifier-tools", "privileged")
        verifier_tools = {t["function"]["name"] for t in server.requests[-1]["tools"]}
    assert {"query_sql", "exec_code"} <= verifier_tools  # the generator's tool set
    assert result.exit_code == 0 and summary["accepted"] == 1, result.output
    task = json.loads((out / "moba" / "moba-s0001.json").read_text())
    assert task["generator"]["verifier_tools"] == "privileged" and task["generator"]["votes"] == "2/2"
    session = out / "sessions" / "verifier-0001-1.jsonl"
    noted = [e for e in read_session(session).events if e.event == "privileged_call"]
    assert noted and noted[0].result["rows"] == [[16]]
    timeline = Timeline.open(session)
    try:
        assert timeline.check() is None
    finally:
        timeline.close()


def test_a_draft_verified_after_enough_were_accepted_is_surplus(tmp_path):
    """Two different drafts at once for one task: both pass, the second to finish is not written."""
    day = {**ROOM, "name": "Synth Day"}
    day_query = QUERY.replace("Synth Night", "Synth Day")
    night, cascade = generator(QUERY), generator(day_query, day)

    def by_capability(body):
        return (cascade if "cascade" in body["messages"][0]["content"] else night)(body)

    agree = ReferencePlayer([task_of(), task_of(day_query, day)])
    players = {"gen": by_capability, "agree": agree, "agree-2": agree}
    out = tmp_path / "synth"
    with FakeOpenAI(by_model(players)) as server:
        result, summary = synthesize(server, out, ["agree", "agree-2"], "--capability", "cascade", "--concurrency", "2")
    assert result.exit_code == 0, result.output
    assert summary["drafts"] == 2 and summary["accepted"] == 1 and summary["surplus"] == 1 and summary["status"] == "finished"
    assert sorted(line["outcome"] for line in log_lines(out)) == ["accepted", "surplus"]
    assert [p.name for p in (out / "moba").glob("*.json")] == ["moba-s0001.json"]


def test_a_draft_a_weak_model_solves_is_rejected_before_the_verifiers(server, tmp_path):
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree", "agree-2"], "--weak-model", "openai/agree", "--max-drafts", "1")
    assert result.exit_code == 1 and summary["rejected"] == {str(Rejection.WEAK_MODEL): 1}
    [line] = log_lines(out)
    assert line["detail"] == "openai/agree"
    assert [Path(s).name for s in line["sessions"]] == ["generator-0001.jsonl", "weak-0001.jsonl"]  # no verifier ran
    passed = synthesize(server, tmp_path / "synth2", ["agree", "agree-2"], "--weak-model", "openai/disagree")[1]
    assert passed["accepted"] == 1  # a weak model that fails lets the draft through to the vote
    [task] = (tmp_path / "synth2" / "moba").glob("*.json")
    record = json.loads(task.read_text())["generator"]
    assert record["weak_model"]["passed"] is False and record["verifier_tools"] == "privileged"  # the paper's default


def test_writes_the_generator_makes_in_exec_code_are_reference_steps(expected, tmp_path):
    code = (
        f"room = create_room(**{ROOM!r})['room_id']\n"
        f"for player in {list(INVITEES)!r}:\n    invite_to_room(room_id=room, player_id=player)\n"
    )

    def coder(body):
        if turn_of(body) == 1:
            return completion(None, [("exec_code", {"code": code})])
        return completion(None, [("submit_task", {"request": QUERY, "summary": "a room and its invitations"})])

    players = {"coder": coder, "agree": ReferencePlayer([expected])}
    with FakeOpenAI(by_model(players)) as fake:
        result, summary = synthesize(fake, tmp_path / "synth", ["agree"], generator_model="coder")
        offered = {t["function"]["name"] for t in fake.requests[0]["tools"]}
    assert result.exit_code == 0, result.output
    assert {"exec_code", "query_sql", "submit_task"} <= offered
    [path] = (tmp_path / "synth" / "moba").glob("*.json")
    task = json.loads(path.read_text())
    assert [s["tool"] for s in task["reference_solution"]] == ["create_room", *["invite_to_room"] * 3]
    assert task["reference_solution"][1]["args"]["room_id"] == {"$from": 0, "path": "room_id"}


@pytest.mark.parametrize(
    ("limits", "ended", "requests"),
    [
        # query_sql is a call like any other: a generator that only queries stops at the call limit
        ({"max_tool_calls": 5}, "max_tool_calls", 6),
        # the wall-time limit (waits on the API not counted): none left, no request is made
        ({"timeout": 0.0}, "time_limit", 0),
    ],
)
def test_the_generators_limits_count_its_privileged_calls_and_its_time(limits, ended, requests):
    import asyncio

    from ebench.engine.domain_registry import get_domain
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.synthesize import GeneratorSolver
    from ebench.sessions.trial import Trial, TrialLimits

    def querier(body):
        return completion(None, [("query_sql", {"sql": "SELECT COUNT(*) FROM players"})])

    with FakeOpenAI(querier) as fake:
        generator_solver = GeneratorSolver(LLMConfig(model="openai/q", api_base=fake.base_url, retries=0))
        trial = Trial(None, domain=get_domain("moba"), actor=ACTOR, code=True)
        try:
            made = asyncio.run(generator_solver.generate(trial, TrialLimits(**limits), "cross_step_dependency"))
        finally:
            trial.close()
        assert made.request is None and str(made.outcome.termination) == ended
        assert len(fake.requests) == requests


def test_drafts_are_made_on_the_world_of_the_seed_given(server, tmp_path):
    from ebench.engine.domain_registry import get_domain

    seed = get_domain("moba").default_seed + 1
    out = tmp_path / "synth"
    result, summary = synthesize(server, out, ["agree"], "--world-seed", str(seed), "--max-drafts", "1")
    assert summary is not None and summary["drafts"] == 1, result.output
    start = read_session(out / "sessions" / "generator-0001.jsonl").start
    assert start.world_seed == seed
    for path in (out / "moba").glob("*.json"):  # a task made there names that world
        assert json.loads(path.read_text())["world"]["seed"] == seed
    again = synthesize(server, out, ["agree"], "--max-drafts", "2")[0]  # resuming on another world is refused
    assert again.exit_code == 2 and "world_seed" in again.stderr
