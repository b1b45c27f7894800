"""Scenarios: conversations of 4 turns on one world copy (task, follow-up, compound, chained,
reference, long-range, switch, clarify, chat), graded turn by turn; session accuracy counts
scenarios whose every turn passed (the new kinds one by one: test_scenario_kinds.py).

The shipped scenarios are checked whole (the oracle passes every one, no-op and a lazy model pass
none); the turn kinds are checked one by one on real scenarios with the real litellm client
against a local server that plays each turn (asking first or not, calling a tool on a chat turn,
stopping a step short)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.batch import Batch
from ebench.sessions.metrics import run_metrics
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers import NoopSolver, OracleSolver, ReplaySolver
from ebench.sessions.solvers.base import Outcome
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.terminations import Termination
from ebench.sessions.timeline import Timeline
from ebench.tasks.scenarios import KINDS, SCENARIOS_DIR, load_scenarios, parse_scenario, scenario_json_schema
from ebench.tasks.spec import TaskFileError
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, completion


@pytest.fixture(scope="module")
def shipped():
    scenarios, errors = load_scenarios()
    assert not errors
    return scenarios


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scenarios-0123456789")


def run_batch(out: Path, scenarios, solver) -> list[TrialSummary]:
    batch = Batch(out, [s.as_task() for s in scenarios], solver, 1, selection={"scenarios": True, "dir": str(SCENARIOS_DIR)})
    batch.prepare()
    try:
        asyncio.run(batch.run(concurrency=4))
    finally:
        batch.finish("finished")
    return sorted(load_run(out).results, key=lambda r: r.task)


def kinds_of(result: TrialSummary) -> list[tuple[str, bool]]:
    return [(turn.kind, turn.passed) for turn in result.scenario_turns or []]


# -- the shipped scenarios -----------------------------------------------------------------


def test_at_least_40_scenarios_of_4_turns_per_domain_with_every_kind(shipped):
    per_domain = Counter(s.domain for s in shipped)
    assert all(per_domain[d] >= 40 for d in ("music", "meeting", "moba")), per_domain
    assert all(len(s.turns) == 4 for s in shipped)
    kinds = Counter(kind for s in shipped for kind in s.kinds)
    assert set(kinds) == set(KINDS) and min(kinds.values()) >= 10, kinds
    for scenario in shipped:
        for index, (before, turn) in enumerate(zip(scenario.turns, scenario.turns[1:]), 1):
            if turn.kind == "follow_up":  # it refers to the turn before, a request of the same template
                assert before.kind in ("task", "switch", "follow_up", "reference", "long_range") and turn.refers_to == index - 1
                assert before.tasks[0].generator["template"] == turn.tasks[0].generator["template"]
                assert " instead of " in turn.message
        for turn in scenario.turns:
            if turn.kind == "clarify":
                # the request simply lacks the value: it does not announce the gap
                assert turn.user_profile and "I'll give you" not in turn.message
                for task in turn.tasks:
                    for key in task.generator["hidden"]:
                        assert str(task.generator["stated"][key]).casefold() not in turn.message.casefold()
            if turn.kind == "compound":
                first, second = turn.tasks
                assert first.query in turn.message and second.query in turn.message


def test_the_first_scenarios_regenerate_byte_for_byte(tmp_path):
    seed = json.loads((SCENARIOS_DIR / "suite.json").read_text())["seed"]
    made = CliRunner().invoke(app, ["tasks", "scenarios", "-d", "music", "-n", "2", "-s", str(seed), "--out", str(tmp_path), "--json"])
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["scenarios"] == {"music": 2}
    for path in sorted((tmp_path / "music").glob("*.json")):
        assert path.read_bytes() == (SCENARIOS_DIR / "music" / path.name).read_bytes(), path.name
    assert len(list((tmp_path / "music").glob("*.json"))) == 2


def test_a_bad_scenario_file_is_named_by_its_field(shipped):
    good = shipped[0].to_dict()
    for change, where in (
        ({"turns": []}, "turns"),
        ({"turns": [{**good["turns"][0], "kind": "gossip"}]}, "turns[0].kind"),
        ({"turns": [{"kind": "compound", "message": "x", "tasks": good["turns"][0].get("tasks", [])[:1]}]}, "turns[0].tasks"),
        ({"actor": 0}, "actor"),
        ({"extra": 1}, "extra"),
    ):
        with pytest.raises(TaskFileError) as caught:
            parse_scenario({**good, **change})
        assert caught.value.field == where


def test_each_field_of_a_scenario_file_has_its_one_line_message(shipped):
    """The model's checks (pydantic) read as the hand-written ones did: the file, the field, what it holds."""
    good = shipped[0].to_dict()
    first = good["turns"][0]
    task = first["tasks"][0]
    for change, where, says in (
        ({"format": "ebench-scenario/0"}, "format", "expected 'ebench-scenario/1'"),
        ({"id": "Bad Id"}, "id", "lowercase letters"),
        ({"actor": True}, "actor", "a positive integer id"),
        ({"world": []}, "world", "an object"),
        ({"turns": [3]}, "turns[0]", "each turn is"),
        ({"turns": [{**first, "message": " "}]}, "turns[0].message", "a non-empty string"),
        ({"turns": [{**first, "mood": "glad"}]}, "turns[0].mood", "unknown field"),
        ({"turns": [{**first, "refers_to": 0}]}, "turns[0].refers_to", "only a follow_up, reference, long_range turn"),
        ({"turns": [{**first, "tasks": [{**task, "actor": good["actor"] + 1}] * len(first["tasks"])}]}, "turns[0].tasks", "the scenario's"),
        (
            {"turns": [first, {"kind": "reference", "message": "that one", "tasks": [task], "refers_to": 1}]},
            "turns[1].refers_to",
            "an earlier turn",
        ),
    ):
        with pytest.raises(TaskFileError) as caught:
            parse_scenario({**good, **change}, "s.json")
        assert (caught.value.source, caught.value.field) == ("s.json", where), change
        assert says in caught.value.reason and "\n" not in str(caught.value)
    # An embedded task's own message, placed in the scenario.
    with pytest.raises(TaskFileError) as caught:
        parse_scenario({**good, "turns": [{**first, "tasks": [{**task, "query": " "}] * len(first["tasks"])}]}, "s.json")
    assert str(caught.value) == "s.json: turns[0].tasks[0]: query: empty"
    missing = {k: v for k, v in good.items() if k != "format"}
    with pytest.raises(TaskFileError, match="format"):
        parse_scenario(missing)


def test_a_scenario_read_keeps_its_source_and_writes_back_the_same_bytes(shipped):
    path = SCENARIOS_DIR / shipped[0].domain / f"{shipped[0].id}.json"
    assert shipped[0].source == str(path)
    assert shipped[0].to_json() == path.read_text(encoding="utf-8")
    chat = next(turn for scenario in shipped for turn in scenario.turns if turn.kind == "chat")
    assert set(chat.to_dict()) == {"kind", "message"}  # no empty tasks, no refers_to: as the files hold it


def test_tasks_schema_prints_the_scenario_files_schema():
    printed = CliRunner().invoke(app, ["tasks", "schema", "--scenario"])
    assert printed.exit_code == 0, printed.output
    schema = json.loads(printed.stdout)
    assert schema == scenario_json_schema() and schema["$id"] == "urn:ebench-scenario:1"
    assert schema["$defs"]["Turn"]["properties"]["kind"]["enum"] == list(KINDS)


def test_the_oracle_passes_every_scenario_and_noop_passes_none(tmp_path, shipped):
    oracle = run_batch(tmp_path / "oracle", shipped, OracleSolver())
    assert len(oracle) == len(shipped) and all(r.passed for r in oracle)
    noop = run_batch(tmp_path / "noop", shipped, NoopSolver())
    assert not any(r.passed for r in noop)
    # A chat turn needs nothing: no-op passes those turns only.
    assert all(passed == (kind == "chat") for r in noop for kind, passed in kinds_of(r))
    metrics = run_metrics(noop).conversations
    assert metrics.scenarios == len(shipped) and metrics.session_accuracy == 0.0
    assert metrics.by_kind["chat"]["passed"] == metrics.by_kind["chat"]["turns"] > 0


# -- a model, turn by turn ----------------------------------------------------------------


def pick(shipped, *kinds: str, domain: str = "music"):
    """A scenario of `domain` holding every kind asked for."""
    return next(s for s in shipped if s.domain == domain and all(k in s.kinds for k in kinds))


def model_batch(out: Path, scenarios, player) -> list[TrialSummary]:
    with FakeOpenAI(player) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        return run_batch(out, scenarios, solver)


def test_a_model_plays_every_kind_of_turn_and_each_turn_is_graded_on_its_own(tmp_path, shipped):
    chosen = [pick(shipped, "follow_up", "clarify"), pick(shipped, "compound", "chat", "clarify")]
    results = model_batch(tmp_path, chosen, ReferencePlayer([s.as_task() for s in chosen]))
    assert all(r.passed for r in results), [kinds_of(r) for r in results]
    session = read_session(tmp_path / results[0].session)
    ends = [e for e in session.events if e.event == "turn_end"]
    assert [e.kind for e in ends] == chosen[0].kinds and all(e.passed for e in ends)
    opened = [e.content for e in session.events if e.event == "message" and e.role == "user" and e.scenario_turn is not None]
    assert opened == [turn.message for turn in chosen[0].turns[1:]]  # each next turn's message, once its turn began
    # Each turn is graded on its own changes: the turn's recorded diff is its expected one.
    for event, turn in zip(ends, chosen[0].turns):
        assert len(event.diff) == len(turn.expected_diff)


def test_acting_before_asking_fails_the_clarify_turn_only(tmp_path, shipped):
    scenario = pick(shipped, "clarify", "task")
    [result] = model_batch(tmp_path, [scenario], ReferencePlayer([scenario.as_task()], asks=False))
    assert not result.passed
    assert [(k, p) for k, p in kinds_of(result)] == [(k, k != "clarify") for k in scenario.kinds]
    end = next(e for e in read_session(tmp_path / result.session).events if e.event == "turn_end" and e.kind == "clarify")
    assert end.grade.note.startswith("acted before asking the user for:")
    assert end.grade.matched_rows == end.grade.expected_rows  # the right changes, made too early


def test_a_chat_turn_allows_reads_and_fails_on_a_write(tmp_path, shipped):
    scenario = pick(shipped, "chat")
    chat = scenario.kinds.index("chat")
    player = ReferencePlayer([scenario.as_task()])

    def chat_turn_calls(call):  # the reference player, but a chat turn gets `call` first
        def respond(body):
            messages = body["messages"]
            last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
            if messages[last_user]["content"] == scenario.turns[chat].message and last_user == len(messages) - 1:
                return completion("Let me check your account.", [call])
            return player(body)

        return respond

    # A harmless read (the account it answers about) is what real assistants do: the turn passes.
    [looked] = model_batch(tmp_path / "read", [scenario], chat_turn_calls(("get_my_profile", {})))
    assert looked.passed and kinds_of(looked)[chat] == ("chat", True)
    # A write on a turn that asked for no change fails that turn, and only it.
    [wrote] = model_batch(tmp_path / "write", [scenario], chat_turn_calls(("create_playlist", {"name": "Chatty"})))
    assert kinds_of(wrote)[chat] == ("chat", False)
    assert [p for i, (_, p) in enumerate(kinds_of(wrote)) if i != chat] == [True] * 3
    run = run_metrics([wrote]).conversations
    assert run.session_accuracy == 0.0 and run.turn_accuracy == 0.75


def test_a_failed_turn_does_not_stop_the_scenario(tmp_path, shipped):
    scenario = pick(shipped, "task", "compound", "chat")
    [result] = model_batch(tmp_path, [scenario], ReferencePlayer([scenario.as_task()], skip_last=1))
    verdicts = kinds_of(result)
    assert len(verdicts) == 4 and not result.passed
    assert any(not p for k, p in verdicts if k in ("task", "clarify", "follow_up"))
    assert ("chat", True) in verdicts  # later turns were still played and graded


class GivesUp:
    """A solver that hits a limit in the first turn without ending it."""

    name = "gives-up"

    def config(self):
        return {"name": self.name}

    async def solve(self, trial, limits, *, step=None):
        return Outcome(Termination.MAX_TURNS)


def test_a_trial_cut_short_fails_the_turns_it_never_reached(tmp_path, shipped):
    scenario = pick(shipped, "chat")
    [result] = run_batch(tmp_path, [scenario], GivesUp())
    assert result.termination == "max_turns" and not result.passed
    ends = [e for e in read_session(tmp_path / result.session).events if e.event == "turn_end"]
    assert [e.reached for e in ends] == [True, False, False, False]
    assert not any(e.passed for e in ends[1:])
    assert ends[1].grade.note == "the trial ended before this turn"


def test_replay_and_the_debuggers_chapters(tmp_path, shipped):
    scenario = pick(shipped, "follow_up")
    [first] = run_batch(tmp_path / "oracle", [scenario], OracleSolver())
    [again] = run_batch(tmp_path / "replay", [scenario], ReplaySolver(tmp_path / "oracle"))
    assert again.passed and kinds_of(again) == kinds_of(first)
    timeline = Timeline.open(tmp_path / "oracle" / first.session)
    assert timeline.task is not None and timeline.task.scenario is not None
    assert len(timeline.chapters) == 4 and timeline.chapter_of(timeline.last) == 4 and timeline.chapter_of(0) == 1
    opening = timeline.steps[timeline.chapters[1]].event
    assert opening.content == scenario.turns[1].message


def test_the_command_line_runs_scenarios_and_the_report_shows_them(tmp_path, shipped):
    runner = CliRunner()
    chosen = [s.id for s in shipped if s.domain == "moba"][:2]
    args = ["run", "--batch", "--solver", "oracle", "--scenarios", "--out", str(tmp_path / "r"), "--json"]
    done = runner.invoke(app, [*args, *[part for sid in chosen for part in ("--task", sid)]])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["passed"] == 2
    report = runner.invoke(app, ["report", str(tmp_path / "r"), "--json"])
    talk = json.loads(report.stdout)["runs"][0]["metrics"]["conversations"]
    assert talk["scenarios"] == 2 and talk["session_accuracy"] == 1.0 and talk["turns"] == 8
    text = runner.invoke(app, ["report", str(tmp_path / "r")], env={"COLUMNS": "160"})
    assert "session accuracy" in text.output and "100.0%" in text.output
    unknown = runner.invoke(
        app, ["run", "--batch", "--solver", "oracle", "--scenarios", "--task", "nope-s999", "--out", str(tmp_path / "x")]
    )
    assert unknown.exit_code == 2 and "unknown scenario id(s): nope-s999" in unknown.output and "Traceback" not in unknown.output


async def test_the_replay_screen_jumps_between_turns(tmp_path, shipped):
    from appcheck import until_settled

    from ebench.app.app import EBenchApp
    from ebench.app.screens.replay import ReplayScreen, TrialView

    scenario = pick(shipped, "clarify", "chat")
    [result] = await asyncio.to_thread(run_batch, tmp_path, [scenario], OracleSolver())
    app = EBenchApp(lambda: ReplayScreen(tmp_path / result.session), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.screen.query_one(TrialView)
        await until_settled(pilot, lambda: view.timeline is not None and view.analysed)
        chapters = view.timeline.chapters
        assert len(chapters) == 4
        for chapter in chapters[1:]:
            await pilot.press("right_square_bracket")
            await until_settled(pilot, lambda c=chapter: view.current == c)
            assert "turn" in str(app.screen.query_one("#replay-position").render())
        await pilot.press("left_square_bracket")
        await until_settled(pilot, lambda: view.current == chapters[2])
        clarify = scenario.kinds.index("clarify")
        reply = next(s.index for s in view.timeline.steps if s.kind == "message" and getattr(s.event, "user", None))
        view.goto(reply)
        await until_settled(pilot, lambda: view.current == reply)
        detail = str(app.screen.query_one("#replay-detail-body").render())
        assert "scripted" in detail and "revealed" in detail
        assert view.timeline.chapter_of(reply) == clarify + 1
