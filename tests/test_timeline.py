"""The replay timeline: real sessions recorded by real trials, rebuilt step by step."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest

from ebench.sessions.batch import Batch
from ebench.sessions.record import SessionWriter, read_session
from ebench.sessions.runs import load_runs
from ebench.sessions.solvers import NoopSolver, OracleSolver
from ebench.sessions.timeline import BLOCK, CALL, CHILD, Timeline, filter_rows, trial_rows
from ebench.sessions.trial import Trial
from ebench.tasks.spec import resolve_args
from ebench.tasks.suite import load_suite

TASK_ID = "music-0020"  # favourite seven songs: one insert and one counter update per song
WRONG_SONG = 391  # a song the task does not ask for


@pytest.fixture(scope="module")
def task(music_world):
    [found] = load_suite(ids=[TASK_ID]).tasks
    return found


def record(path: Path, task, calls, *, code: bool = False, blocks=()) -> Path:
    """A session made by a real trial: `calls` are (tool, args) pairs, `blocks` exec_code sources."""
    trial = Trial(task, writer=SessionWriter(path), solver={"name": "test"}, code=code)
    for tool, args in calls:
        trial.call(tool, args)
    for block in blocks:
        trial.exec_code(block)
    trial.finish("agent_stopped")
    return path


def reference_calls(task, count: int | None = None) -> list[tuple[str, dict]]:
    results: list = []
    calls = []
    for step in task.reference_solution[:count]:
        calls.append((step.tool, resolve_args(step.args, results)))
        results.append(None)
    return calls


def world_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_last_step_rebuilds_the_recorded_end_diff(tmp_path, task, music_world):
    before = world_hash(music_world)
    path = record(tmp_path / "s.jsonl", task, [("favourite_song", {"song_id": WRONG_SONG})] + reference_calls(task))
    timeline = Timeline.open(path)
    assert timeline.task is not None and timeline.task.id == TASK_ID  # found in the shipped suite
    final = timeline.state_at(timeline.last)
    assert final.diff.to_list() == read_session(path).end.diff == timeline.recorded_diff().to_list()
    assert final.grade is not None and not final.grade.passed
    assert final.grade.to_dict() == read_session(path).end.grade.to_dict() | {"note": final.grade.note}
    assert timeline.faithful and timeline.check() is None
    assert [s.kind for s in timeline.steps] == ["start"] + ["tool_call"] * 8 + ["end"]
    assert all(s.role == CALL and s.is_leaf for s in timeline.steps[1:-1])
    timeline.close()
    assert world_hash(music_world) == before


def test_the_state_at_k_is_the_diff_of_a_trial_stopped_after_k_calls(tmp_path, task):
    calls = [("favourite_song", {"song_id": WRONG_SONG}), ("get_song", {"song_id": 388})] + reference_calls(task, 4)
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, calls), checkpoint_every=2)
    for k in range(len(calls) + 1):
        stopped = Trial(task)
        for tool, args in calls[:k]:
            stopped.call(tool, args)
        expected = stopped.diff().to_list()
        stopped.close()
        # Step k+... : the k-th call is step k (step 0 is the start event).
        state = timeline.state_at(k)
        assert state.calls == k and state.diff.to_list() == expected, k
    assert timeline.state_at(0).counts["changes"] == 0
    assert timeline.state_at(10_000).step == timeline.last  # clamped


def test_stepping_back_and_forth_gives_identical_states(tmp_path, task):
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, reference_calls(task)), checkpoint_every=3)
    forward = [timeline.state_at(k) for k in range(len(timeline.steps))]
    order = [5, 1, 7, 2, 2, 8, 0, 6, 3, 4, 8, 1]
    for k in order:
        again = timeline.state_at(k)
        assert again.diff.to_list() == forward[k].diff.to_list()
        assert again.counts == forward[k].counts
    assert forward[-1].passed and timeline.point_of_no_return() is None
    assert set(timeline._checkpoints) == {0, 3, 6}  # a checkpoint every 3 calls, taken once
    # A fresh timeline jumping straight back and forth agrees with the forward walk.
    other = Timeline.open(timeline.session.path, checkpoint_every=3)
    for k in reversed(order):
        assert other.diff_at(k).to_list() == forward[k].diff.to_list()
        assert other.grade_at(k).to_dict() == forward[k].grade.to_dict()


def test_exec_code_children_are_replayed(tmp_path, task):
    block = "for song in (388, 389, 390):\n    favourite_song(song_id=song)\nprint('done')"
    path = record(tmp_path / "code.jsonl", task, [("favourite_song", {"song_id": 392})], code=True, blocks=[block])
    timeline = Timeline.open(path)
    roles = [s.role for s in timeline.steps if s.kind == "tool_call"]
    assert roles == [CALL, CHILD, CHILD, CHILD, BLOCK]
    assert [s.calls for s in timeline.steps] == [0, 1, 2, 3, 4, 4, 4]
    block_step = next(s for s in timeline.steps if s.role == BLOCK)
    assert timeline.state_at(block_step.index).diff.to_list() == read_session(path).end.diff
    assert timeline.state_at(block_step.index - 1).counts["changes"] == 8  # 4 songs, 2 changes each
    assert timeline.state_at(2).counts["changes"] == 4
    assert timeline.faithful
    assert [c.id for c in timeline.calls_until(block_step.index)] == ["call-1", "call-2.1", "call-2.2", "call-2.3", "call-2"]


def test_point_of_no_return_a_wrong_write_early_then_correct_work(tmp_path, task):
    calls = [("get_my_profile", {}), ("favourite_song", {"song_id": WRONG_SONG})] + reference_calls(task)
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, calls))
    point = timeline.point_of_no_return()
    assert point == 2 and timeline.steps[point].event.args == {"song_id": WRONG_SONG}
    assert not timeline.final_state().passed


def test_point_of_no_return_a_trial_that_stops_early_is_the_end(tmp_path, task):
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, reference_calls(task, 3)))
    final = timeline.final_state().grade
    assert final is not None and final.missing and not final.unexpected and not final.wrong
    assert timeline.point_of_no_return() == timeline.end_step == timeline.last
    assert timeline.steps[timeline.end_step].kind == "end"


def test_point_of_no_return_a_repaired_mistake_does_not_count(tmp_path, task):
    wrong, undo = ("favourite_song", {"song_id": WRONG_SONG}), ("unfavourite_song", {"song_id": WRONG_SONG})
    # Repaired, then the work is left unfinished: the end.
    repaired = Timeline.open(record(tmp_path / "a.jsonl", task, [wrong, undo] + reference_calls(task, 5)))
    assert repaired.state_at(1).grade.unexpected and not repaired.state_at(2).grade.unexpected
    assert repaired.point_of_no_return() == repaired.end_step
    # Repaired, then another mistake that stays: the later mistake.
    later = [wrong, undo] + reference_calls(task, 3) + [("favourite_song", {"song_id": 1})] + reference_calls(task)[3:]
    timeline = Timeline.open(record(tmp_path / "b.jsonl", task, later))
    assert timeline.point_of_no_return() == 6 and timeline.steps[6].event.args == {"song_id": 1}
    # Repaired and completed: it passes, no point of no return.
    done = Timeline.open(record(tmp_path / "c.jsonl", task, [wrong, undo] + reference_calls(task)))
    assert done.final_state().passed and done.point_of_no_return() is None


def test_point_of_no_return_inside_an_exec_code_block(tmp_path, task):
    block = f"favourite_song(song_id=388)\nfavourite_song(song_id={WRONG_SONG})"
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, [], code=True, blocks=[block]))
    point = timeline.point_of_no_return()
    assert timeline.steps[point].role == CHILD and timeline.steps[point].event.args == {"song_id": WRONG_SONG}


def test_reference_steps_run_the_solution_step_by_step(tmp_path, task):
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, []))
    steps = timeline.reference_steps()
    assert [s.tool for s in steps] == [s.tool for s in task.reference_solution]
    assert all(s.ok and s.error is None for s in steps)
    assert [len(s.diff) for s in steps] == [2 * (i + 1) for i in range(len(steps))]
    assert steps[-1].grade.passed and not steps[-2].grade.passed
    assert steps[0].label.startswith("✓ favourite_song")
    assert timeline.reference_steps() is steps  # computed once


def test_a_tampered_session_is_unfaithful(tmp_path, task, music_world):
    before = world_hash(music_world)
    path = record(tmp_path / "s.jsonl", task, [("get_song", {"song_id": 388})] + reference_calls(task, 2))
    lines = path.read_text(encoding="utf-8").splitlines()
    event = json.loads(lines[1])
    assert event["tool"] == "get_song"
    event["result"]["title"] = "Not the recorded title"
    lines[1] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    timeline = Timeline.open(path)
    mismatch = timeline.check()
    assert not timeline.faithful and mismatch is not None
    assert mismatch.step == 1 and mismatch.tool == "get_song" and mismatch.call_id == "call-1"
    assert mismatch.recorded["title"] == "Not the recorded title" != mismatch.replayed["title"]
    assert "get_song" in mismatch.describe()
    # The state is still rebuilt from the calls (the write calls were not tampered with).
    assert timeline.final_state().diff.to_list() == read_session(path).end.diff
    timeline.close()
    assert world_hash(music_world) == before


def test_a_session_whose_task_is_unknown_steps_without_grades(tmp_path, task):
    path = record(tmp_path / "s.jsonl", task, reference_calls(task, 2))
    text = path.read_text(encoding="utf-8")
    assert f'"id":"{TASK_ID}"' in text  # the start event's task (session lines are compact JSON)
    path.write_text(text.replace(f'"id":"{TASK_ID}"', '"id":"music-gone"', 1), encoding="utf-8")
    timeline = Timeline.open(path)
    assert timeline.task is None
    assert timeline.state_at(timeline.last).grade is None and timeline.state_at(timeline.last).counts["changes"] == 4
    assert timeline.point_of_no_return() is None and timeline.reference_steps() == []


def test_trial_rows_of_a_batch_run_and_a_sessions_folder(tmp_path, task):
    [other] = load_suite(ids=["music-0001"]).tasks
    for solver, name in ((OracleSolver(), "oracle"), (NoopSolver(), "noop")):
        batch = Batch(tmp_path / name, [task, other], solver, 1)
        batch.prepare()
        asyncio.run(batch.run(2))
    runs = load_runs(tmp_path / "oracle") + load_runs(tmp_path / "noop")
    rows = trial_rows(runs)
    assert len(rows) == 4 and all(r.session.is_file() for r in rows)
    assert {r.solver for r in rows} == {"oracle", "noop"}
    assert [r.passed for r in filter_rows(rows, solver="oracle")] == [True, True]
    assert {(r.solver, r.task) for r in filter_rows(rows, failed=True)} == {("noop", TASK_ID), ("noop", "music-0001")}
    assert [r.task for r in filter_rows(rows, search="noop 0020")] == [TASK_ID]
    assert filter_rows(rows, domain="meeting") == []
    capability = task.capabilities[0]
    assert {r.task for r in filter_rows(rows, capability=capability)} >= {TASK_ID}
    # A sessions folder (no manifest): pseudo-runs grouped by solver, absolute session paths.
    folder = load_runs(tmp_path / "oracle" / "sessions")
    assert [r.session for r in trial_rows(folder)] == sorted(r.session for r in rows if r.solver == "oracle")
    # Every listed session opens and rebuilds its recorded end.
    for row in rows:
        timeline = Timeline.open(row.session)
        assert timeline.final_state().passed == row.passed and timeline.faithful


def test_a_closed_timeline_refuses_to_rebuild(tmp_path, task):
    timeline = Timeline.open(record(tmp_path / "s.jsonl", task, reference_calls(task, 2)))
    assert timeline.state_at(2).counts["changes"] == 4
    timeline.close()
    with pytest.raises(RuntimeError, match="closed"):
        timeline.state_at(1)
