"""An unfinished human attempt goes on where it was left: its session is continued, its calls are
re-executed on a fresh copy, and the finished attempt grades as if it had never been interrupted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ebench.sessions.attempts import human_trial, resume_trial, unfinished_attempt
from ebench.sessions.events import EndEvent, StartEvent, ToolCallEvent
from ebench.sessions.record import read_session
from ebench.sessions.timeline import Timeline
from ebench.sessions.trial import AGENT_STOPPED, ResumeError
from ebench.tasks.reference import resolve_args
from ebench.tasks.suite import load_suite

TASK = "moba-0024"  # create a room, then three invitations that need its id


@pytest.fixture(scope="module")
def task():
    return load_suite(ids=[TASK]).tasks[0]


def play(trial, steps, results: list) -> None:
    for step in steps:
        result = trial.call(step.tool, resolve_args(step.args, results))
        assert result.ok, result.error_message
        results.append(result.value)


def test_an_attempt_left_half_done_resumes_and_passes(tmp_path: Path, task):
    trial = human_trial(task, blind=True, folder=tmp_path)
    results: list = []
    play(trial, task.reference_solution[:2], results)
    before = trial.diff().to_list()
    trial.close()  # the person left (the app quit): no end event, the file stays

    left = unfinished_attempt(task, tmp_path)
    assert left is not None and left.session == trial.writer.path
    assert (left.calls, left.code, left.blind) == (2, False, True)

    resumed = resume_trial(task, left.session)
    assert resumed.diff().to_list() == before  # the world as it was left
    assert resumed.tool_calls == 2 and [c.id for c in resumed.history] == ["call-1", "call-2"]
    play(resumed, task.reference_solution[2:], results)
    summary = resumed.finish(AGENT_STOPPED)
    assert summary.passed and summary.tool_calls == len(task.reference_solution)
    assert summary.solver == "human"

    session = read_session(left.session)
    assert not session.warnings
    kinds = [type(e) for e in session.events]
    assert kinds.count(StartEvent) == 1 and kinds.count(EndEvent) == 1
    ids = [e.id for e in session.events if isinstance(e, ToolCallEvent)]
    assert ids == [f"call-{i}" for i in range(1, len(task.reference_solution) + 1)]  # no id used twice
    times = [e.t for e in session.events]
    assert times == sorted(times)  # the clock goes on from where it stopped
    timeline = Timeline.open(left.session, task)  # the continued session replays like any other
    try:
        assert timeline.faithful and timeline.final_state().grade.passed
    finally:
        timeline.close()
    assert unfinished_attempt(task, tmp_path) is None  # submitted: nothing left to resume


def test_a_submitted_or_foreign_session_is_refused(tmp_path: Path, task):
    trial = human_trial(task, folder=tmp_path)
    trial.finish(AGENT_STOPPED)
    with pytest.raises(ResumeError, match="already submitted"):
        resume_trial(task, trial.writer.path)
    other = load_suite(ids=["music-0001"]).tasks
    if other:
        with pytest.raises(ResumeError, match="another task"):
            resume_trial(other[0], trial.writer.path)


def test_a_torn_last_line_is_cut_before_the_attempt_goes_on(tmp_path: Path, task):
    trial = human_trial(task, folder=tmp_path)
    results: list = []
    play(trial, task.reference_solution[:1], results)
    trial.close()
    path = trial.writer.path
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"event": "tool_call", "id": "call-2", "to')  # killed while writing
    resumed = resume_trial(task, path)
    assert resumed.tool_calls == 1
    step = task.reference_solution[0]
    assert resumed.call(step.tool, step.args).ok
    resumed.close()
    session = read_session(path)
    assert not session.warnings
    assert [e.id for e in session.events if isinstance(e, ToolCallEvent)] == ["call-1", "call-2"]


def test_a_call_that_now_gives_another_result_refuses_to_resume(tmp_path: Path, task):
    trial = human_trial(task, folder=tmp_path)
    play(trial, task.reference_solution[:1], [])
    trial.close()
    path = trial.writer.path
    lines = path.read_text(encoding="utf-8").splitlines()
    call = json.loads(lines[-1])
    call["result"] = {"forged": 1}
    lines[-1] = json.dumps(call)
    forged = "\n".join(lines) + "\n"
    path.write_text(forged, encoding="utf-8")
    with pytest.raises(ResumeError, match="another result"):
        resume_trial(task, path)
    assert path.read_text(encoding="utf-8") == forged  # left as it was


def test_an_exec_code_block_is_resumed_through_its_calls(tmp_path: Path, task):
    trial = human_trial(task, code=True, folder=tmp_path)
    step = task.reference_solution[0]
    block = trial.exec_code(f"r = {step.tool}(**{step.args!r})\nprint(sorted(r))")
    assert block.ok, block.value
    before = trial.diff().to_list()
    counts = (trial.tool_calls, trial.inner_calls, trial.exec_blocks)
    trial.close()

    left = unfinished_attempt(task, tmp_path)
    assert left is not None and left.code and left.calls == 1  # the block is one call; its child is inside it
    resumed = resume_trial(task, left.session)
    try:
        assert resumed.code and resumed.diff().to_list() == before
        assert (resumed.tool_calls, resumed.inner_calls, resumed.exec_blocks) == counts
    finally:
        resumed.close()
