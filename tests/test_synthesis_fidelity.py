"""`ebench tasks synthesize` as E-Bench describes it, against scripted models with real models'
habits (issue 29, section 1): votes counted per distinct verifier configuration, verifiers with
the generator's tool set, capability labels derived from the accepted task, a generator loop that
survives text before its calls, parallel and malformed calls, a DELETE through query_sql, writes
and submit_task in one message and a polite question before submitting, models whose API fails
never counted as rejections, the weak model priced by --dry-run, and the template-free checks.

The real CLI and litellm client against FakeOpenAI on 127.0.0.1, real worlds and real SQLite."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.results import TrialSummary
from ebench.sessions.synthesize import AFTER_SUBMIT, GENERATOR_GUIDANCE, INFRA_STOP, NUDGE, Tally, verifier_configurations
from ebench.sessions.terminations import Termination
from ebench.tasks.audit import audit_task
from ebench.tasks.generation import SeenTasks
from ebench.tasks.spec import parse_task
from ebench.tasks.synthesis import DraftRejected, GeneratorWorkspace, Rejection, vet_draft
from ebench.tasks.worlds import task_world
from ebench.testing.fake_openai import FakeOpenAI, Reply, completion, error, turn_of
from ebench.testing.synthesis_script import ACTOR, INVITEES, QUERY, ROOM, by_model, room_solver

SUMMARY = "a password-protected room and invitations for the clanmates who are free"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def result_of(body: dict[str, Any], tool: str) -> Any:
    """The result the conversation holds for the first call of `tool` (as sent back to the model)."""
    ids = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or [] if c["function"]["name"] == tool]
    answer = next(m["content"] for m in body["messages"] if m.get("role") == "tool" and m.get("tool_call_id") == ids[0])
    return json.loads(answer)


def habitual_generator(body: dict[str, Any]) -> Reply:
    """A generator as real models behave: it talks before its calls, sends two query_sql calls at
    once, tries a DELETE through query_sql, sends one call cut off mid-arguments, asks a polite
    question instead of acting, then (reminded) sends every invitation and submit_task in one message."""
    turn = turn_of(body)
    if turn == 1:
        return completion(
            "Let me look at the data first.",
            [
                ("query_sql", {"sql": "SELECT COUNT(*) FROM players"}),
                ("query_sql", {"sql": "SELECT id, nickname FROM players WHERE id IN (33, 124, 162)"}),
            ],
        )
    if turn == 2:
        return completion(
            "I'll clear old invitations first, then check the rooms.",
            [("query_sql", {"sql": "DELETE FROM room_invitations"}), ("query_sql", '{"sql": "SELECT id FROM rooms WHERE owner')],
        )
    if turn == 3:
        return completion("Now I'll create the room.", [("create_room", ROOM)])
    if turn == 4:
        return completion("The room is ready. Shall I invite the clanmates who are not in a match and submit the task?")
    if body["messages"][-1] != {"role": "user", "content": NUDGE}:
        return completion("I was not reminded, so I stop here.")
    room = result_of(body, "create_room")["room_id"]
    invitations = [("invite_to_room", {"room_id": room, "player_id": p}) for p in INVITEES]
    return completion("Inviting them and handing in the task.", [*invitations, ("submit_task", {"request": QUERY, "summary": SUMMARY})])


def submits_too_early(body: dict[str, Any]) -> Reply:
    """Creates the room, then sends submit_task before its invitations in one message."""
    if turn_of(body) == 1:
        return completion(None, [("create_room", ROOM)])
    room = result_of(body, "create_room")["room_id"]
    invitations = [("invite_to_room", {"room_id": room, "player_id": p}) for p in INVITEES]
    return completion("Submitting, then inviting.", [("submit_task", {"request": QUERY, "summary": SUMMARY}), *invitations])


def exec_code_verifier(body: dict[str, Any]) -> Reply:
    """A verifier that solves the room request with one exec_code block (code mode, as the generator may)."""
    if turn_of(body) == 1:
        code = (
            f"room = create_room(**{ROOM!r})['room_id']\n"
            f"for player in {list(INVITEES)!r}:\n    invite_to_room(room_id=room, player_id=player)\n"
        )
        return completion("I'll do it in one block.", [("exec_code", {"code": code})])
    return completion("Done: the room is open and the three clanmates are invited. Anything else?")


def synthesize(server: FakeOpenAI, out: Path, verifiers: list[str], *extra: str, generator: str = "gen") -> tuple[Any, Any]:
    args = ["tasks", "synthesize", "--domain", "moba", "--generator-model", f"openai/{generator}", "--count", "1"]
    for listing in verifiers:
        args += ["--verifier-model", f"openai/{listing}"]
    args += ["--out", str(out), "--actor", str(ACTOR), "--api-base", server.base_url, "--retries", "0", "--backoff", "0"]
    args += ["--capability", "dependency", "--json", *extra]
    result = CliRunner().invoke(app, args)
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def replayed(source: Path, out: Path) -> list[str]:
    """What `synthesize-replay` (no API) finds different from `source`; exits 0 only when nothing."""
    result = CliRunner().invoke(app, ["tasks", "synthesize-replay", str(source), "--out", str(out), "--json"])
    assert result.stdout.strip(), result.output
    differences = json.loads(result.stdout)["differences"]
    assert result.exit_code == (1 if differences else 0), result.output
    return differences


def log_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "synthesis.jsonl").read_text().splitlines()]


def verifier_requests(server: FakeOpenAI, model: str) -> list[dict]:
    return [body for body in server.requests if body["model"] == model]


# -- 1. independent votes --------------------------------------------------------------------


def test_one_verifier_model_listed_three_times_does_not_reach_a_quorum_on_its_own(tmp_path):
    players = {"gen": habitual_generator, "agree": room_solver()}
    with FakeOpenAI(by_model(players)) as server:
        result, summary = synthesize(server, tmp_path / "same", ["agree"] * 3)
        assert result.exit_code == 2 and summary is None and server.requests == []  # refused before any model call
        assert result.stderr.count("\n") == 1 and "3 --verifier-model listings are 1 distinct configuration(s)" in result.stderr

        # --allow-same-verifier: it runs, says so, and the one configuration is one vote
        out = tmp_path / "allowed"
        result, summary = synthesize(server, out, ["agree"] * 3, "--allow-same-verifier", "--verifier-tools", "public")
        assert result.exit_code == 0, result.output
        assert "warning: --allow-same-verifier: 3 verifier listings are 1 distinct configuration(s)" in result.stderr
        assert (summary["verifiers"], summary["distinct_verifiers"], summary["votes_needed"]) == (3, 1, 1)
        assert [line["votes"] for line in log_lines(out)] == ["1/1"]
        assert json.loads((out / "synthesis.json").read_text())["verifier_configurations"] == [1, 1, 1]
        # --verifier-tools public: the strict test, no query_sql and no exec_code for the verifiers
        offered = {t["function"]["name"] for body in verifier_requests(server, "agree") for t in body["tools"]}
        assert summary["verifier_tools"] == ["public"] and not offered & {"query_sql", "exec_code"}

        # a sampling seed stated per listing makes three configurations, three votes
        server.requests.clear()
        out = tmp_path / "seeded"
        result, summary = synthesize(server, out, ["agree seed=1", "agree seed=2", "agree seed=3"])
        assert result.exit_code == 0, result.output
        assert summary["distinct_verifiers"] == 3 and log_lines(out)[0]["votes"] == "3/3"
        assert {body.get("seed") for body in verifier_requests(server, "agree")} == {1, 2, 3}
        task = json.loads((out / "moba" / "moba-s0001.json").read_text())
        assert [v["configuration"] for v in task["generator"]["verifiers"]] == [1, 2, 3]


def test_a_configuration_listed_more_than_once_is_one_vote_decided_by_most_of_its_trials():
    same = [LLMConfig("openai/a"), LLMConfig("openai/a", model_args={"timeout": 9}), LLMConfig("openai/a", api_base="http://x/")]
    seeded = [LLMConfig("openai/a", model_args={"seed": 1}), LLMConfig("openai/a", model_args={"seed": 2}), LLMConfig("openai/b")]
    assert verifier_configurations(same) == [1, 1, 2]  # a timeout is no other opinion; another API base is
    assert verifier_configurations(seeded) == [1, 2, 3]

    def trial(passed: bool, infra: bool = False) -> TrialSummary:
        termination = Termination.INFRA_ERROR if infra else Termination.AGENT_STOPPED
        return TrialSummary(task="t", trial=1, passed=passed, termination=termination)

    yes, no, down = trial(True), trial(False), trial(False, infra=True)
    assert Tally.of([yes, yes, yes], 2, [1, 1, 1]) == Tally("rejected", "1/1", "verifiers disagree (1/1)")
    assert Tally.of([yes, no, yes], 1, [1, 1, 1]).verdict == "passed"  # most of its trials pass
    assert Tally.of([yes, no], 1, [1, 1]).verdict == "rejected"  # a tie is no majority
    assert Tally.of([yes, down], 1, [1, 1]).verdict == "unverified"  # the failed one could have made it
    assert Tally.of([yes, yes, no], 2).votes == "2/3"  # without configurations: each its own vote (paraphrase)


# -- 2. the verifiers' tools, 3. labels, 4. the loop, 7. the checks ---------------------------


def test_a_generator_with_real_models_habits_makes_a_task_the_verifiers_solve_with_its_tools(tmp_path):
    players = {"gen": habitual_generator, "agree": room_solver(), "coder": exec_code_verifier}
    out = tmp_path / "synth"
    with FakeOpenAI(by_model(players)) as server:
        result, summary = synthesize(server, out, ["agree", "coder"])
        generator_requests = verifier_requests(server, "gen")
        offered = {t["function"]["name"] for t in verifier_requests(server, "coder")[0]["tools"]}
    assert result.exit_code == 0, result.output
    assert summary["accepted"] == 1 and summary["rejected"] == {} and summary["verifier_tools"] == ["public", "query_sql", "exec_code"]
    [line] = log_lines(out)
    assert line["votes"] == "2/2" and "refused_after_submit" not in line

    # the prompt says how the loop treats a reply without a tool call, and the reminder came once
    assert "one reminder" in GENERATOR_GUIDANCE and "one reminder" in generator_requests[0]["messages"][0]["content"]
    assert len(generator_requests) == 5 and generator_requests[4]["messages"][-1] == {"role": "user", "content": NUDGE}
    events = read_session(out / "sessions" / "generator-0001.jsonl").events
    sql = [e for e in events if e.event == "privileged_call" and e.tool == "query_sql"]
    assert len(sql) == 4 and sql[0].result["rows"][0][0] > 100 and len(sql[1].result["rows"]) == 3  # the two sent at once
    assert sql[2].result["error"]["code"] == "sql_error" and "error" in sql[3].result  # the DELETE, the cut-off call
    assert [e.tool for e in events if e.event == "privileged_call"][-1] == "submit_task"

    # the writes sent with submit_task ran first; the labels are derived from the task, as a template's
    task = parse_task(json.loads((out / "moba" / "moba-s0001.json").read_text()))
    assert [s.tool for s in task.reference_solution] == ["create_room", *["invite_to_room"] * 3]
    assert task.capabilities == ["cross_step_dependency", "cross_entity_cascade"]
    assert task.generator["derived_capabilities"] == task.capabilities and task.generator["capability"] == "cross_step_dependency"
    assert task.generator["verifier_tool_set"] == ["public", "query_sql", "exec_code"]

    # the verifiers had the generator's tool set, and one solved the task in exec_code
    assert {"query_sql", "exec_code"} <= offered
    coder = read_session(out / "sessions" / "verifier-0001-2.jsonl").events
    assert {e.tool for e in coder if e.event == "tool_call"} == {"exec_code", "create_room", "invite_to_room"}
    assert [(v["model"], v["passed"]) for v in task.generator["verifiers"]] == [("openai/agree", True), ("openai/coder", True)]

    # the template-free checks it passed are the ones `ebench tasks audit` runs on it
    audited = audit_task(task, task_world(task))
    assert audited.passed == {} and audited.careful_failed == {}
    assert set(audited.tried) == {"no_last_write", "wrong_actor", "no_op"}
    assert {"writes_reordered", "reads_repeated", "extra_reads"} <= set(audited.careful_tried)

    # the reminder and the calls sent together replay from the sessions alone: the same draft and task
    assert replayed(out, tmp_path / "again") == []


def test_calls_after_submit_task_are_refused_visibly_and_two_silent_turns_end_the_draft(tmp_path):
    players = {
        "early": submits_too_early,
        "polite": lambda body: completion("I have a task in mind. Would you like me to go ahead?"),
        "agree": room_solver(),
    }
    with FakeOpenAI(by_model(players)) as server:
        early = tmp_path / "early"
        result, summary = synthesize(server, early, ["agree"], "--max-drafts", "1", generator="early")
        polite = tmp_path / "polite"
        result2, summary2 = synthesize(server, polite, ["agree"], "--max-drafts", "1", generator="polite")
        asked_polite = verifier_requests(server, "polite")
    assert result.exit_code == 1 and summary["accepted"] == 0
    [line] = log_lines(early)
    assert line["outcome"] == "rejected" and line["refused_after_submit"] == ["invite_to_room"] * 3
    assert "3 call(s) after submit_task not run" in line["detail"]
    refused = [e for e in read_session(early / "sessions" / "generator-0001.jsonl").events if e.event == "refused_call"]
    assert [e.tool for e in refused] == ["invite_to_room"] * 3 and refused[0].result["error"]["message"] == AFTER_SUBMIT

    # a reply without a tool call is reminded once; a second one in a row ends the draft, the model's doing
    assert result2.exit_code == 1 and summary2["rejected"] == {"no task submitted": 1} and summary2["infra_errors"] == 0
    assert len(asked_polite) == 2 and asked_polite[1]["messages"][-1]["content"] == NUDGE


# -- 3. a draft that misses the capability it was asked for -----------------------------------


def friend_requests() -> tuple[list[int], str]:
    """Three players the actor may send a friend request to, and a request naming them."""
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        chosen = [p for p in range(40, 200) if workspace.call("send_friend_request", {"player_id": p}).ok][:3]
        names = [workspace.conn.execute("SELECT nickname FROM players WHERE id = ?", (p,)).fetchone()[0] for p in chosen]
    return chosen, f"Send a friend request to {names[0]}, {names[1]} and {names[2]}."


def test_a_draft_that_misses_its_asked_capability_is_a_counted_rejection(tmp_path):
    chosen, request = friend_requests()

    def befriender(body: dict[str, Any]) -> Reply:
        if turn_of(body) == 1:
            return completion("Sending the requests.", [("send_friend_request", {"player_id": p}) for p in chosen])
        return completion(None, [("submit_task", {"request": request, "summary": "three friend requests"})])

    with FakeOpenAI(by_model({"gen": befriender, "agree": room_solver()})) as server:
        result, summary = synthesize(server, tmp_path / "synth", ["agree"], "--max-drafts", "1")
    assert result.exit_code == 1 and summary["rejected"] == {str(Rejection.MISSES_CAPABILITY): 1}
    [line] = log_lines(tmp_path / "synth")
    assert line["detail"] == "asked cross_step_dependency; shows none" and len(line["sessions"]) == 1  # no verifier asked

    # a capability no template-free check can show is kept as asked (unchecked), beside what is derived
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        for player in chosen:
            workspace.call("send_friend_request", {"player_id": player})
        task = vet_draft(workspace.draft(request, "multi_condition_filtering"), SeenTasks(), task_id="moba-x")
    assert task.capabilities == ["multi_condition_filtering"] and task.generator["derived_capabilities"] == []


def test_a_draft_a_careful_solver_would_fail_is_rejected(monkeypatch):
    """The careful variants themselves are tested in tests/test_careful.py; here: one that ends
    elsewhere (a grader that would fail correct work done in another order) rejects the draft."""
    from ebench.tasks import synthesis
    from ebench.tasks.careful import CarefulRun
    from ebench.tasks.diff import Diff

    monkeypatch.setattr(synthesis, "reference_variants", lambda *args: [CarefulRun("writes_reordered", "writes_reordered", Diff())])
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        room = workspace.call("create_room", ROOM).value["room_id"]
        for player in INVITEES:
            workspace.call("invite_to_room", {"room_id": room, "player_id": player})
        draft = workspace.draft(QUERY, "cross_step_dependency")
    with pytest.raises(DraftRejected) as caught:
        vet_draft(draft, SeenTasks(), task_id="moba-x")
    assert caught.value.reason == Rejection.CAREFUL_FAILS and caught.value.detail == "writes_reordered"


# -- 5. a model whose API fails is no rejection ------------------------------------------------


def test_a_model_whose_api_fails_is_never_counted_as_a_rejection(tmp_path):
    players: dict[str, Any] = {
        "gen": lambda body: error(503, "the generator's API is down"),
        "agree": room_solver(),
        "agree-2": room_solver(),
        "broken": lambda body: error(500, "the weak model's API is down"),
        "revoked": lambda body: error(401, "invalid api key"),
    }
    out = tmp_path / "synth"
    with FakeOpenAI(by_model(players)) as server:
        result, summary = synthesize(server, out, ["agree", "agree-2"], "--max-drafts", "6")
        assert result.exit_code == 1 and "the generator's API failed for several drafts in a row" in result.stderr
        assert summary["status"] == "api" and summary["drafts"] == INFRA_STOP == summary["infra_errors"]
        assert summary["rejected"] == {} and {line["outcome"] for line in log_lines(out)} == {"infra_error"}

        players["gen"] = habitual_generator  # the API is back: the run goes on where it stopped
        result, summary = synthesize(server, out, ["agree", "agree-2"], "--max-drafts", "6")
        assert result.exit_code == 0, result.output
        assert (summary["resumed"], summary["drafts"], summary["infra_errors"], summary["accepted"]) == (INFRA_STOP, 4, 3, 1)
        assert [line["draft"] for line in log_lines(out)] == [1, 2, 3, 4]
        assert replayed(out, tmp_path / "again") == []  # no API: the failed requests replay as failures, the same lines

        # the weak model's API down: the filter did not run, so the draft is unverified (no verifier asked)
        weak = tmp_path / "weak"
        result, summary = synthesize(server, weak, ["agree", "agree-2"], "--weak-model", "openai/broken", "--max-drafts", "1")
        assert result.exit_code == 1 and summary["unverified"] == 1 and summary["rejected"] == {}
        [line] = log_lines(weak)
        assert line["reason"] == "the weak model's API failed" and [Path(s).name for s in line["sessions"]] == [
            "generator-0001.jsonl",
            "weak-0001.jsonl",
        ]

        # a rejected key stops the run at once, as it stops a solver's run
        result, summary = synthesize(server, tmp_path / "revoked", ["agree", "agree-2"], generator="revoked")
        assert result.exit_code == 1 and summary is None and "the synthesis stopped" in result.stderr
        assert not (tmp_path / "revoked" / "synthesis.jsonl").read_text()


# -- 6. --dry-run prices the weak model ---------------------------------------------------------


def test_a_dry_run_prices_the_weak_model_too(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({f"openai/{m}": {"input": 1.0, "output": 4.0} for m in ("gen", "weak", "agree", "agree-2")}))
    with FakeOpenAI(by_model({})) as server:
        result, plan = synthesize(
            server, tmp_path / "synth", ["agree", "agree-2"], "--dry-run", "--weak-model", "openai/weak", "--prices", str(prices)
        )
        assert result.exit_code == 0 and server.requests == []
    roles = [(m["role"], m["model"], m["trials"]) for m in plan["models"]]
    drafts = plan["drafts"]
    assert roles == [
        ("generator", "openai/gen", drafts),
        ("weak", "openai/weak", drafts),
        *[("verifier", f"openai/{v}", drafts) for v in ("agree", "agree-2")],
    ]
    per_model = drafts * 12 * (3000 * 1.0 + 300 * 4.0) / 1e6
    assert plan["cost"] == pytest.approx(4 * per_model, abs=1e-3) and plan["distinct_verifiers"] == 2
