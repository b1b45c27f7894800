"""WildToolBench's kinds of turn in the shipped scenarios (issue 29): hidden intent, compound turns
whose parts depend on each other, requests that name earlier results by description (across
several turns too), instruction switches mid-request, varied chat; and the report by position in
the session and by number of switches.

Each kind is checked two ways: over every shipped turn of that kind, the sloppy way of doing it
(computed with the template's public solver on the state the turn starts from) ends elsewhere than
the turn's expected diff; and end to end, with a scripted model that behaves like a real one (a
sentence before its calls, every independent call at once, a polite closing question) through the
real litellm client against the local server: the careful way passes, the sloppy way fails that
turn and only it."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.domain_registry import get_domain
from ebench.engine.world import scratch_copy
from ebench.sessions.batch import Batch
from ebench.sessions.metrics import conversations, instruction_transitions
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.llm import LLMSolver
from ebench.tasks.certify import run_public
from ebench.tasks.diff import Diff, RowChange
from ebench.tasks.grading import grade
from ebench.tasks.public import NotCertifiable, PublicSolverFailed
from ebench.tasks.reference import ReferenceFailed, run_steps
from ebench.tasks.scenario_generation import second_undoes_first
from ebench.tasks.scenarios import KINDS, SCENARIOS_DIR, Scenario, load_scenarios
from ebench.tasks.spec import Step
from ebench.tasks.template_catalog import template_named
from ebench.tasks.template_helpers import pretty_day
from ebench.tasks.worlds import task_world
from ebench.testing.agents import POLITE_CLOSE
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply

DOMAINS = ("music", "meeting", "moba")
CHATTER = "Sure, let me take care of that."


@pytest.fixture(scope="module")
def shipped() -> list[Scenario]:
    found, errors = load_scenarios()
    assert not errors
    return found


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scenario-kinds-0123456789")


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    """The world as a scenario's earlier turns leave it, as a file (made once per turn asked for)."""
    folder = tmp_path_factory.mktemp("states")
    made: dict[tuple[str, int], Path] = {}

    def before(scenario: Scenario, index: int) -> Path:
        if (scenario.id, index) not in made:
            conn = scratch_copy(task_world(scenario.as_task()))
            try:
                for number, turn in enumerate(scenario.turns):  # every turn's state at once: one replay
                    path = folder / f"{scenario.id}-{number}.db"
                    target = sqlite3.connect(path)
                    conn.backup(target)
                    target.close()
                    made[(scenario.id, number)] = path
                    run_steps(scenario.domain, scenario.actor, turn.reference_steps(), conn)
            finally:
                conn.close()
        return made[(scenario.id, index)]

    return before


def turns_of(shipped: list[Scenario], kind: str) -> list[tuple[Scenario, int]]:
    return [(s, i) for s in shipped for i, turn in enumerate(s.turns) if turn.kind == kind]


def public_diff(task_domain: str, template: str, world: Path, actor: int, stated: dict[str, Any]):
    """The template's public solver with these stated values, on `world`: its changes and its calls
    (None when it cannot act there: that sloppy way ends nowhere near the expected state either)."""
    found = template_named(task_domain, template)
    assert found is not None
    try:
        return run_public(found, task_domain, world, actor, stated)
    except (NotCertifiable, PublicSolverFailed, KeyError, IndexError, TypeError, ValueError):
        return None


def ends_elsewhere(scenario: Scenario, index: int, diff) -> bool:
    return diff is None or not grade(scenario.turns[index].expected_diff, diff, get_domain(scenario.domain).schema).passed


# -- the shipped set -----------------------------------------------------------------------------


def test_every_domain_has_every_kind_and_no_pattern_dominates(shipped):
    for domain in DOMAINS:
        mine = [s for s in shipped if s.domain == domain]
        assert len(mine) == 40
        kinds = Counter(kind for s in mine for kind in s.kinds)
        assert set(kinds) == set(KINDS), (domain, kinds)
        # Moba's chained turns are few: most of its writes move the player to a new room, which
        # dissolves a room the first part opened (second_undoes_first); its pairs are purchases.
        rare = {"chained": 2} if domain == "moba" else {}
        assert all(count >= rare.get(kind, 5) for kind, count in kinds.items()), (domain, kinds)
        patterns = Counter(tuple(s.kinds) for s in mine)
        assert len(patterns) >= 10 and max(patterns.values()) <= len(mine) // 10, (domain, patterns.most_common(3))
        record = json.loads((SCENARIOS_DIR / "suite.json").read_text())
        assert record["version"] == "scenarios-3"
        assert record["patterns"][domain] == {"distinct": len(patterns), "max_share": round(max(patterns.values()) / len(mine), 4)}


def test_chat_turns_are_varied_and_about_the_domain(shipped):
    for domain in DOMAINS:
        chats = [t.message for s in shipped if s.domain == domain for t in s.turns if t.kind == "chat"]
        assert len(set(chats)) >= 0.75 * len(chats) and len(set(chats)) >= 10, (domain, Counter(chats).most_common(3))
    # Lines filled with the world's data: names of its songs, colleagues, heroes... appear.
    everything = " ".join(t.message for s in shipped for t in s.turns if t.kind == "chat")
    assert everything.count("'") >= 10


def test_compound_messages_are_phrased_more_than_one_way(shipped):
    openings = Counter(t.message.split(":")[0][:20] for s in shipped for t in s.turns if t.kind == "compound")
    assert openings.most_common(1)[0][1] <= 0.5 * sum(openings.values())


def test_hidden_intent_turns_lack_the_value_and_the_value_bites(shipped):
    clarify = turns_of(shipped, "clarify")
    assert {s.domain for s, _ in clarify} == set(DOMAINS)
    for scenario, index in clarify:
        turn = scenario.turns[index]
        [task] = turn.tasks
        assert turn.user_profile and "I'll give you" not in turn.message and turn.message == task.query
        written = [cell for change in task.expected_diff for cell in (change.new or {}).values()]
        for key in task.generator["hidden"]:
            value = task.generator["stated"][key]
            assert str(value).casefold() not in turn.message.casefold()
            assert any(isinstance(cell, str) and value in cell for cell in written)  # inventing it cannot pass


def test_a_switch_is_graded_on_the_new_value(shipped, states):
    switches = turns_of(shipped, "switch")
    assert {s.domain for s, _ in switches} == set(DOMAINS)
    for scenario, index in switches:
        [task] = scenario.turns[index].tasks
        [(key, (old, new))] = task.generator["switched"].items()
        assert task.generator["stated"][key] == new
        message = scenario.turns[index].message
        said = [pretty_day(v) if isinstance(v, str) and v[:4].isdigit() and v[4:5] == "-" else str(v) for v in (old, new)]
        assert all(text in message for text in said) and not re.search(rf"(?<![\w:.]){re.escape(said[0])}(?![\w:])", task.query)
        first = public_diff(
            scenario.domain, task.generator["template"], states(scenario, index), scenario.actor, {**task.generator["stated"], key: old}
        )
        assert first is not None and ends_elsewhere(scenario, index, first.diff), (scenario.id, index)


def test_references_name_earlier_results_by_description_and_a_wrong_guess_fails(shipped, states):
    found = turns_of(shipped, "reference") + turns_of(shipped, "long_range")
    assert {s.domain for s, _ in found} == set(DOMAINS)
    distances = Counter()
    for scenario, index in found:
        turn = scenario.turns[index]
        [task] = turn.tasks
        refers = task.generator["refers"]
        assert turn.refers_to == refers["turn"]
        assert (index - turn.refers_to == 1) == (turn.kind == "reference"), (scenario.id, index)
        distances[index - turn.refers_to] += 1
        value = task.generator["stated"][refers["key"]]
        assert f"'{value}'" not in turn.message and value not in turn.message  # described, not said
        # and said once: "the chat you just created", not "the chat you just created group chat"
        assert not re.search(
            r"\b(?:made|created|set up|opened)(?: today| earlier| before)? (?:\w+ )?(?:playlist|chat|meeting|room)\b", turn.message
        )
        guess = public_diff(
            scenario.domain,
            task.generator["template"],
            states(scenario, index),
            scenario.actor,
            {**task.generator["stated"], refers["key"]: refers["draft_value"]},
        )
        assert ends_elsewhere(scenario, index, guess and guess.diff), (scenario.id, index)
    assert distances[2] and distances[3], distances  # long-range: turn 3 or 4 names turn 1's result
    entity = [t for s, i in found for t in s.turns[i].tasks if "entity" in t.generator["refers"]]
    assert entity, "some references name an entity an earlier turn made"


def test_a_chained_turns_second_part_needs_the_first(shipped, states):
    chained = turns_of(shipped, "chained")
    assert {s.domain for s, _ in chained} == set(DOMAINS)
    links = Counter()
    for scenario, index in chained:
        [task] = scenario.turns[index].tasks
        first, second = task.generator["parts"]
        links[task.generator["link"]] += 1
        before = states(scenario, index)
        alone = public_diff(scenario.domain, first["template"], before, scenario.actor, first["stated"])
        assert alone is not None and ends_elsewhere(scenario, index, alone.diff)  # only the first part: not done
        # The second part never undoes the first (a room just opened, dissolved by the next).
        assert not second_undoes_first(alone.diff, task.expected_diff, get_domain(scenario.domain).schema), (scenario.id, index)
        # Both at once, the second part's answer taken before the first part's writes: ends elsewhere.
        early = public_diff(scenario.domain, second["template"], before, scenario.actor, second["stated"])
        if early is not None:
            try:
                stale = run_steps(scenario.domain, scenario.actor, [*alone.steps, *early.steps], world=before).diff
            except ReferenceFailed:
                continue
            assert ends_elsewhere(scenario, index, stale), (scenario.id, index)
    assert set(links) == {"entity", "data"}, links


def test_a_pair_whose_second_part_undoes_the_first_is_not_a_chained_turn():
    schema = get_domain("moba").schema
    room = {"id": 72, "name": "Rank Push", "owner_id": 24, "mode": "custom", "status": "open"}
    first = Diff([RowChange("rooms", "insert", {"id": 72}, new=room)])
    dissolved = Diff([RowChange("rooms", "insert", {"id": 72}, new={**room, "status": "closed"})])
    kept = Diff([*first, RowChange("rooms", "insert", {"id": 73}, new={**room, "id": 73, "name": "Team Drills"})])
    assert second_undoes_first(first, dissolved, schema)
    assert second_undoes_first(first, Diff([]), schema)  # the new room is gone altogether
    assert not second_undoes_first(first, kept, schema)


def test_follow_ups_change_the_turn_before(shipped, states):
    follow_ups = turns_of(shipped, "follow_up")
    assert {s.domain for s, _ in follow_ups} == set(DOMAINS)
    for scenario, index in follow_ups:
        turn, before = scenario.turns[index], scenario.turns[index - 1]
        [task] = turn.tasks
        assert turn.refers_to == index - 1 and before.kind in ("task", "switch", "follow_up", "reference", "long_range")
        assert task.generator["template"] == before.tasks[0].generator["template"]
        assert " instead of " in turn.message
        again = public_diff(
            scenario.domain, task.generator["template"], states(scenario, index), scenario.actor, before.tasks[0].generator["stated"]
        )
        assert ends_elsewhere(scenario, index, again and again.diff)  # doing the turn before again is not it


# -- end to end, with a model that behaves like a real one ---------------------------------------


class LikeARealModel:
    """A responder's answers with a real model's habits: a sentence before its tool calls, a polite
    closing question after its text answers (the ReferencePlayer sends independent calls at once)."""

    def __init__(self, inner: ReferencePlayer) -> None:
        self.inner = inner

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = self.inner(body)
        message = reply.body["choices"][0]["message"]
        if message.get("tool_calls"):
            message["content"] = CHATTER
        elif not (message.get("content") or "").rstrip().endswith("?"):
            message["content"] = f"{message.get('content') or ''} {POLITE_CLOSE}".strip()
        return reply


def with_plan(scenario: Scenario, index: int, steps: list[Step]) -> Scenario:
    """The scenario with one turn played another way (its expected diff unchanged)."""
    turns = list(scenario.turns)
    [task] = turns[index].tasks
    turns[index] = turns[index].model_copy(update={"tasks": [task.model_copy(update={"reference_solution": steps})]})
    return scenario.model_copy(update={"turns": turns})


def play(out: Path, scenario: Scenario, *, asks: bool = True) -> TrialSummary:
    task = scenario.as_task()
    with FakeOpenAI(LikeARealModel(ReferencePlayer([task], optimal=True, asks=asks))) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        batch = Batch(out, [task], solver, 1, selection={"scenarios": True, "dir": str(SCENARIOS_DIR)})
        batch.prepare()
        try:
            asyncio.run(batch.run(concurrency=1))
        finally:
            batch.finish("finished")
    [result] = load_run(out).results
    return result


def verdicts(result: TrialSummary) -> list[bool]:
    return [turn.passed for turn in result.scenario_turns or []]


def only_fails(result: TrialSummary, index: int) -> bool:
    return verdicts(result) == [i != index for i in range(len(verdicts(result)))]


def first_of(shipped: list[Scenario], kind: str, domain: str, accept=lambda s, i: True) -> tuple[Scenario, int]:
    return next((s, i) for s, i in turns_of(shipped, kind) if s.domain == domain and accept(s, i))


def test_a_real_model_passes_a_switch_and_fails_it_acting_on_the_first_value(tmp_path, shipped, states):
    scenario, index = first_of(shipped, "switch", "music")
    assert all(verdicts(play(tmp_path / "right", scenario)))
    [task] = scenario.turns[index].tasks
    [(key, (old, _))] = task.generator["switched"].items()
    first = public_diff(
        scenario.domain, task.generator["template"], states(scenario, index), scenario.actor, {**task.generator["stated"], key: old}
    )
    assert first is not None
    assert only_fails(play(tmp_path / "first-value", with_plan(scenario, index, first.steps)), index)


def test_a_real_model_passes_a_long_range_reference_and_fails_it_with_a_wrong_guess(tmp_path, shipped, states):
    scenario, index = first_of(shipped, "long_range", "moba", lambda s, i: s.turns[i].refers_to == 0)
    assert all(verdicts(play(tmp_path / "right", scenario)))
    [task] = scenario.turns[index].tasks
    refers = task.generator["refers"]
    guess = public_diff(
        scenario.domain,
        task.generator["template"],
        states(scenario, index),
        scenario.actor,
        {**task.generator["stated"], refers["key"]: refers["draft_value"]},
    )
    assert guess is not None
    assert only_fails(play(tmp_path / "guess", with_plan(scenario, index, guess.steps)), index)


def test_a_real_model_passes_a_chained_turn_and_fails_it_not_waiting_for_the_first_part(tmp_path, shipped, states):
    def stale_plan(scenario: Scenario, index: int) -> list[Step] | None:
        first, second = scenario.turns[index].tasks[0].generator["parts"]
        before = states(scenario, index)
        alone = public_diff(scenario.domain, first["template"], before, scenario.actor, first["stated"])
        early = public_diff(scenario.domain, second["template"], before, scenario.actor, second["stated"])
        return [*alone.steps, *early.steps] if alone and early else None

    scenario, index = next(
        (s, i) for s, i in turns_of(shipped, "chained") if s.turns[i].tasks[0].generator["link"] == "data" and stale_plan(s, i) is not None
    )
    assert all(verdicts(play(tmp_path / "right", scenario)))
    stale = stale_plan(scenario, index)
    assert stale is not None
    assert only_fails(play(tmp_path / "stale", with_plan(scenario, index, stale)), index)


def test_a_real_model_passes_follow_ups_and_references_to_the_turn_before(tmp_path, shipped):
    chosen = {first_of(shipped, "follow_up", "moba")[0].id, first_of(shipped, "reference", "meeting")[0].id}
    for sid in sorted(chosen):
        scenario = next(s for s in shipped if s.id == sid)
        assert all(verdicts(play(tmp_path / sid, scenario))), sid


def test_a_real_model_passes_hidden_intent_by_asking_and_fails_it_acting_first(tmp_path, shipped):
    scenario, index = first_of(shipped, "clarify", "meeting", lambda s, i: i > 0)
    asked = play(tmp_path / "asks", scenario)
    assert all(verdicts(asked))
    acted = play(tmp_path / "acts", scenario, asks=False)
    assert only_fails(acted, index)


# -- the report: by position and by switches ----------------------------------------------------


def summary(kinds: list[str], passed: list[bool]) -> TrialSummary:
    turns = [{"kind": k, "passed": p} for k, p in zip(kinds, passed)]
    return TrialSummary(task="s", trial=1, passed=all(passed), scenario_turns=turns)


def test_accuracy_by_position_switches_and_transitions():
    found = conversations(
        [
            summary(["task", "switch", "chat", "switch"], [True, False, True, True]),
            summary(["clarify", "task", "reference", "chat"], [True, True, True, True]),
            summary(["chat", "chained", "long_range", "task"], [True, True, False, True]),
        ]
    )
    assert found.by_position == {
        "1": {"turns": 3, "passed": 3},
        "2": {"turns": 3, "passed": 2},
        "3": {"turns": 3, "passed": 2},
        "4": {"turns": 3, "passed": 3},
    }
    assert found.by_switches == {"0": {"scenarios": 2, "passed": 1}, "2": {"scenarios": 1, "passed": 0}}
    assert instruction_transitions(["task", "switch", "chat", "switch"]) == 2
    assert instruction_transitions(["clarify", "task", "reference", "chat"]) == 2
    assert instruction_transitions(["chat", "chained", "long_range", "task"]) == 1
    assert found.by_transitions == {"1": {"scenarios": 1, "passed": 0}, "2": {"scenarios": 2, "passed": 1}}


def test_the_report_shows_the_session_table_by_position_and_switches(tmp_path, shipped):
    runner = CliRunner()
    chosen = [s.id for s in shipped if "switch" in s.kinds][:2] + [s.id for s in shipped if "switch" not in s.kinds][:1]
    args = ["run", "--batch", "--solver", "oracle", "--scenarios", "--out", str(tmp_path / "r"), "--json"]
    done = runner.invoke(app, [*args, *[part for sid in chosen for part in ("--task", sid)]])
    assert done.exit_code == 0, done.output
    report = runner.invoke(app, ["report", str(tmp_path / "r"), "--json"])
    talk = json.loads(report.stdout)["runs"][0]["metrics"]["conversations"]
    assert talk["by_position"] == {str(n): {"turns": 3, "passed": 3} for n in range(1, 5)}
    assert talk["by_switches"] == {"0": {"scenarios": 1, "passed": 1}, "1": {"scenarios": 2, "passed": 2}}
    assert sum(g["scenarios"] for g in talk["by_transitions"].values()) == 3
    text = runner.invoke(app, ["report", str(tmp_path / "r")], env={"COLUMNS": "200"})
    assert "turn 4" in text.output and "sessions, 1 switch" in text.output and "sessions, 0 switches" in text.output
    assert runner.invoke(app, ["report", str(tmp_path / "r"), "--csv", str(tmp_path / "r.csv")]).exit_code == 0
    rows = {(row["scope"], row["metric"]): row["value"] for row in csv.DictReader((tmp_path / "r.csv").open())}
    assert rows[("turn_position:4", "passed")] == "3" and rows[("switches:1", "scenarios")] == "2"
    assert ("transitions:" + next(iter(talk["by_transitions"])), "scenarios") in rows


def test_every_kind_round_trips_through_its_file(shipped):
    from ebench.tasks.scenarios import parse_scenario

    for scenario in shipped[:10]:
        again = parse_scenario(json.loads(scenario.to_json()))
        assert again.to_json() == scenario.to_json()
    bad = shipped[0].to_dict()
    bad["turns"][0]["refers_to"] = 0
    with pytest.raises(Exception) as caught:
        parse_scenario(bad)
    assert "refers_to" in str(caught.value)
