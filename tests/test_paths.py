"""Path metrics: the fewest turns a perfect agent needs (the reference solution's dependency graph),
the agent's turns against it (optimal path rate), and the progress of failed trials.

The graph's rules are checked on hand-made solutions; on the whole suite, issuing each level of a
reference solution at once reproduces the task's expected diff (so the fewest turns are
reachable). End to end, the real litellm client against a local server plays the reference
solutions level by level (optimal), one step a turn (not optimal) and one step short (progress)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from appcheck import until_settled
from typer.testing import CliRunner

from ebench.app.app import EBenchApp
from ebench.app.screens.replay import ReplayScreen, ReplayTrialScreen, TrialView, path_line
from ebench.cli import app
from ebench.engine.domain_registry import get_domain
from ebench.sessions.batch import Batch
from ebench.sessions.metrics import run_metrics
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.results import TrialSummary
from ebench.sessions.runs import load_run
from ebench.sessions.solvers import OracleSolver
from ebench.sessions.solvers.llm import LLMSolver
from ebench.tasks.grading import grade
from ebench.tasks.paths import fewest_turns, optimal_turns, reference_levels, step_levels
from ebench.tasks.reference import run_steps
from ebench.tasks.spec import Step
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

WRITES = {"invite", "favourite"}


def steps(*pairs: tuple[str, dict]) -> list[Step]:
    return [Step(tool, args) for tool, args in pairs]


def test_calls_that_need_nothing_share_the_first_turn():
    solution = steps(("get_my_profile", {}), ("search", {"query": "jazz"}), ("favourite", {"song_id": 9}))
    assert step_levels(solution, [{"id": 1}, {"items": []}, {}], WRITES) == [0, 0, 0]
    assert fewest_turns(solution, [{"id": 1}, {"items": []}, {}], WRITES) == 1
    assert fewest_turns([], []) == 0


def test_an_id_is_needed_from_the_first_result_that_held_it():
    solution = steps(
        ("search", {"query": "x"}),  # reveals 7
        ("get_album", {"album_id": 3}),  # reveals 7 again, later: the first source counts
        ("get_song", {"song_id": 7}),
        ("get_artist", {"artist_id": 11}),  # 11 is in the song's nested result
    )
    results = [{"items": [{"song_id": 7}]}, {"songs": [{"id": 7}]}, {"song": {"artist": {"artist_id": 11}}}, {}]
    assert step_levels(solution, results) == [0, 0, 1, 2]


def test_references_and_later_pages():
    solution = steps(
        ("create_room", {"name": "x"}),
        ("invite", {"room_id": {"$from": 0, "path": "room_id"}, "player_id": 5}),
        ("list_history", {"page": 1, "player_id": 5}),
        ("list_history", {"page": 2, "player_id": 5}),
        ("list_history", {"page": 2, "player_id": 6}),  # another listing: its first page was never read
    )
    assert step_levels(solution, [{"room_id": 40}, {}, {"total_pages": 2}, {}, {}], WRITES) == [0, 1, 0, 1, 0]


def test_a_write_waits_for_the_reads_that_checked_what_it_changes():
    # Who is free is read per person (the id only in the read's arguments): the meeting waits for it.
    solution = steps(
        ("list_members", {"department_id": 2}),
        ("get_schedule", {"employee_id": 8}),
        ("favourite", {"song_id": 8}),  # a write acting on 8
        ("get_schedule", {"employee_id": 9}),  # a read: provenance only (9 came from the listing)
    )
    results = [{"items": [{"employee_id": 8}, {"employee_id": 9}]}, {"busy": []}, {}, {}]
    assert step_levels(solution, results, WRITES) == [0, 1, 2, 1]
    assert step_levels(solution, results) == [0, 1, 1, 1]  # as a read it would need the listing only


def renumbered(value, position: dict[int, int]):
    """`value` with its `$from` references renumbered for the steps' new order."""
    if isinstance(value, dict):
        if "$from" in value:
            return {**value, "$from": position[int(value["$from"])]}
        return {k: renumbered(v, position) for k, v in value.items()}
    return [renumbered(v, position) for v in value] if isinstance(value, list) else value


def test_every_reference_solution_passes_when_its_levels_are_issued_at_once():
    """The fewest turns are reachable: each level's calls, run in one turn (in order), still make
    the expected diff, for every task of the shipped suite."""
    suite = load_suite(SUITE_DIR).tasks
    deep = 0
    for task in suite:
        levels = reference_levels(task)
        order = sorted(range(len(levels)), key=lambda i: (levels[i], i))
        position = {step: new for new, step in enumerate(order)}
        reordered = [Step(task.reference_solution[i].tool, renumbered(task.reference_solution[i].args, position)) for i in order]
        run = run_steps(task.domain, task.actor, reordered)
        assert grade(task.expected_diff, run.diff, get_domain(task.domain).schema).passed, task.id
        assert 1 <= optimal_turns(task) <= len(task.reference_solution)
        deep += optimal_turns(task) >= 3
    assert deep > len(suite) // 2  # most tasks need lookups that need lookups: the figure is not trivially 1


IDS = ["meeting-0001", "moba-0023", "moba-0024", "music-0005"]  # each needs fewer turns than calls


@pytest.fixture(scope="module")
def chosen():
    return load_suite(ids=IDS).tasks


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-paths-0123456789")


def model_run(out: Path, tasks, player: ReferencePlayer) -> list[TrialSummary]:
    with FakeOpenAI(player) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        batch = Batch(out, list(tasks), solver, 1)
        batch.prepare()
        try:
            asyncio.run(batch.run(concurrency=4))
        finally:
            batch.finish("finished")
    return sorted(load_run(out).results, key=lambda r: r.task)


def test_a_perfect_agent_takes_the_fewest_turns(tmp_path, chosen):
    results = model_run(tmp_path, chosen, ReferencePlayer(chosen, optimal=True))
    assert all(r.passed for r in results)
    assert [r.call_turns for r in results] == [optimal_turns(t) for t in sorted(chosen, key=lambda t: t.id)]
    assert all(r.turns == r.call_turns + 1 for r in results)  # then the answer, without calls
    paths = run_metrics(results).paths
    assert (paths.measured, paths.passed, paths.optimal) == (4, 4, 4)
    assert paths.optimal_path_rate == 1.0 and paths.turns_over_optimal == 1.0
    assert paths.progress_rate is None and paths.progress_trials == 0  # nothing failed
    assert {task: figures.turns_over_optimal for task, figures in paths.tasks.items()} == {t: 1.0 for t in IDS}


def test_one_call_a_turn_is_not_the_optimal_path(tmp_path, chosen):
    results = model_run(tmp_path, chosen, ReferencePlayer(chosen))
    by_id = {t.id: t for t in chosen}
    assert all(r.passed for r in results)
    assert all(r.call_turns == len(by_id[r.task].reference_solution) for r in results)
    paths = run_metrics(results).paths
    assert paths.optimal == 0 and paths.optimal_path_rate == 0.0
    expected = sum(r.call_turns / r.optimal_turns for r in results) / 4
    assert paths.turns_over_optimal == pytest.approx(expected) and expected > 1


def test_the_progress_rate_is_the_recall_of_the_failed_trials(tmp_path, chosen):
    results = model_run(tmp_path, chosen, ReferencePlayer(chosen, skip_last=1))
    failed = [r for r in results if not r.passed]
    assert failed and all(r.grade is not None for r in failed)
    paths = run_metrics(results).paths
    assert paths.progress_trials == len(failed)
    assert paths.progress_rate == pytest.approx(sum(r.grade.recall for r in failed) / len(failed))
    assert 0 < paths.progress_rate < 1


def test_the_report_shows_paths_and_progress(tmp_path, chosen):
    model_run(tmp_path / "model", chosen, ReferencePlayer(chosen, optimal=True))
    runner = CliRunner()
    shown = runner.invoke(app, ["report", str(tmp_path / "model")])
    assert shown.exit_code == 0, shown.output
    assert "Paths and progress" in shown.output and "optimal path rate" in shown.output
    assert "100.0%" in shown.output.split("Paths and progress")[1].split("\n\n")[0]
    as_json = runner.invoke(app, ["report", str(tmp_path / "model"), "--json"])
    document = json.loads(as_json.output)
    paths = document["runs"][0]["metrics"]["paths"]
    assert paths["optimal_path_rate"] == 1.0 and set(paths["tasks"]) == set(IDS)


def test_trials_without_model_turns_have_no_path(tmp_path, chosen):
    """The oracle (like a person or an MCP client) takes no model turns: nothing to measure, and
    an older results line without the fields reads the same way."""
    batch = Batch(tmp_path / "oracle", chosen[:2], OracleSolver(), 1)
    batch.prepare()
    try:
        asyncio.run(batch.run(concurrency=2))
    finally:
        batch.finish("finished")
    results = load_run(tmp_path / "oracle").results
    assert all(r.passed and r.call_turns is None and r.optimal_turns == 0 for r in results)
    paths = run_metrics(results).paths
    assert paths.measured == 0 and paths.optimal_path_rate is None
    old = {k: v for k, v in results[0].to_dict().items() if k not in ("call_turns", "optimal_turns")}
    assert TrialSummary.read(old).call_turns is None


def test_path_line_words():
    def summary(call_turns: int | None, optimal_turns: int) -> TrialSummary:
        return TrialSummary.read({"task": "t", "trial": 1, "passed": True, "call_turns": call_turns, "optimal_turns": optimal_turns})

    assert path_line(summary(3, 3)) == "the model called tools in 3 turns, the fewest this task allows"
    assert path_line(summary(5, 2)) == "the model called tools in 5 turns; 2 would do (calls that need no earlier result can share a turn)"
    assert path_line(summary(None, 0)) is None and path_line(None) is None


async def test_the_replay_debugger_shows_a_model_trials_path(tmp_path, chosen):
    [task] = [t for t in chosen if t.id == "moba-0024"]
    [result] = await asyncio.to_thread(model_run, tmp_path, [task], ReferencePlayer([task]))  # one call a turn: 4 turns, 2 needed
    app = EBenchApp(lambda: ReplayScreen(tmp_path), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        await until_settled(pilot, lambda: len(screen.shown) == 1, what="the trials")
        screen.open_row(0)
        await until_settled(pilot, lambda: isinstance(app.screen, ReplayTrialScreen), what="the trial screen")
        view = app.screen.query_one(TrialView)
        await until_settled(pilot, lambda: view.analysed and view.state is not None, what="the trial view")
        grade_text = str(app.screen.query_one("#replay-grade-body").render())
    assert (result.call_turns, result.optimal_turns) == (4, 2)
    assert "turns: the model called tools in 4 turns; 2 would do" in grade_text


def test_a_trial_finds_the_same_fewest_turns_on_a_pooled_copy(chosen, monkeypatch):
    """A trial runs the reference on a copy from the pool (no new copy, no tracker install): the
    same figure as a run on a fresh copy of the world, and nothing of it stays in any copy."""
    from ebench.sessions.trial import Trial
    from ebench.tasks import paths

    for task in chosen:
        monkeypatch.setattr(paths, "_CACHE", {})
        fresh = optimal_turns(task)
        monkeypatch.setattr(paths, "_CACHE", {})
        trial = Trial(task)
        assert optimal_turns(task, trial._reference_results) == fresh
        assert len(trial.diff()) == 0
        trial.close()
        again = Trial(task)  # the copies it used went back rolled back
        assert len(again.diff()) == 0
        again.close()
