"""The core behind the app's solve screen: recorded human attempts, watching a solver with pause
and step, and the always-explained live diff."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from ebench.sessions.attempts import discard, human_trial, latest_attempts
from ebench.sessions.events import ToolCallEvent
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.runs import load_sessions
from ebench.sessions.solvers import OracleSolver
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.trial import AGENT_STOPPED, TrialLimits, current_world
from ebench.sessions.watch import StepGate, watch
from ebench.tasks.grading import explain, grade
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

TASK = "moba-0024"  # create a room, then three invitations that need its id


@pytest.fixture(scope="module")
def task():
    return load_suite(ids=[TASK]).tasks[0]


def world_hash(task) -> str:
    from ebench.engine.domain_registry import get_domain

    return hashlib.sha256(current_world(get_domain(task.domain))[0].read_bytes()).hexdigest()


def test_a_submitted_attempt_is_a_human_session_that_report_and_browser_read(tmp_path: Path, task):
    before = world_hash(task)
    trial = human_trial(task, blind=True, folder=tmp_path)
    for step in task.reference_solution[:1]:
        assert trial.call(step.tool, step.args).ok
    summary = trial.finish(AGENT_STOPPED)
    assert not summary.passed and summary.solver == "human"
    session = read_session(trial.writer.path)
    assert session.start.solver.to_dict() == {"name": "human", "label": "human", "blind": True, "via": "terminal"}
    [run] = load_sessions(tmp_path)
    assert run.label == "human" and [r.task for r in run.results] == [TASK]
    latest = latest_attempts(tmp_path)
    assert latest[TASK].passed is False and latest[TASK].termination == AGENT_STOPPED
    assert world_hash(task) == before  # the world file is never written


def test_assisted_attempts_are_labelled_apart_from_blind_baselines(tmp_path: Path, task):
    trial = human_trial(task, blind=False, folder=tmp_path)
    trial.finish(AGENT_STOPPED)
    assert read_session(trial.writer.path).start.solver.label == "human-assisted"


def test_the_latest_attempt_wins_and_a_discarded_one_leaves_no_file(tmp_path: Path, task):
    first = human_trial(task, folder=tmp_path)
    first.finish(AGENT_STOPPED)
    second = human_trial(task, folder=tmp_path)  # same second: a distinct file
    assert second.writer.path != first.writer.path
    second.call("list_my_heroes", {})
    second.finish(AGENT_STOPPED)
    third = human_trial(task, folder=tmp_path)
    third.call("list_my_heroes", {})
    discard(third)
    assert not third.writer.path.exists()
    assert latest_attempts(tmp_path)[TASK].session == second.writer.path
    (tmp_path / "20990101-000000-x-human.jsonl").write_text("not json\n")  # never fatal
    assert set(latest_attempts(tmp_path)) == {TASK}


def test_listeners_see_every_event_in_order(tmp_path: Path, task):
    trial = human_trial(task, code=True, folder=tmp_path)
    seen: list[tuple[str, str | None]] = []
    trial.listeners.append(lambda event, data: seen.append((event, data.parent if isinstance(data, ToolCallEvent) else None)))
    trial.exec_code("list_my_heroes()\nlist_my_heroes()")
    trial.finish(AGENT_STOPPED)
    assert [e for e, _ in seen] == ["tool_call", "tool_call", "tool_call", "end"]
    assert seen[0][1] == seen[1][1] == "call-1" and seen[2][1] is None  # children first, then their block


def test_the_oracle_watched_step_by_step(tmp_path: Path, task):
    trial = human_trial(task, folder=tmp_path)
    gate, thread, result = watch_in_thread(trial, OracleSolver())
    for done in range(len(task.reference_solution)):
        gate.until_arrived(done + 1)
        assert trial.tool_calls == done  # held before its next call
        gate.step()
    finish(thread)
    assert result["summary"].passed and trial.tool_calls == len(task.reference_solution)


def test_a_model_watched_one_turn_at_a_time_then_resumed(tmp_path: Path, task, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    with FakeOpenAI(ReferencePlayer([task])) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        trial = human_trial(task, folder=tmp_path)
        gate, thread, result = watch_in_thread(trial, solver)
        gate.until_arrived(1)
        assert len(server.requests) == 0  # paused before the first request
        gate.step()
        gate.until_arrived(2)
        assert trial.turns == 1 and len(server.requests) == 1 and trial.tool_calls == 1  # one turn: one request, its call
        gate.resume()
        finish(thread)
    assert result["summary"].passed and result["summary"].turns == 5


def test_closing_the_gate_abandons_the_trial_unfinished(tmp_path: Path, task):
    trial = human_trial(task, folder=tmp_path)
    gate, thread, result = watch_in_thread(trial, OracleSolver())
    gate.until_arrived(1)
    gate.close()
    finish(thread)
    assert result["summary"] is None and not trial.finished and trial.tool_calls == 0


def test_explain_accounts_for_every_change_pass_or_fail(task):
    from ebench.tasks.reference import run_steps

    full = run_steps(task.domain, task.actor, task.reference_solution).diff
    from ebench.engine.domain_registry import get_domain

    schema = get_domain(task.domain).schema
    passed = explain(task.expected_diff, full, schema)
    assert passed.passed and len(passed.matched) == len(task.expected_diff) == passed.matched_rows
    assert not (passed.missing or passed.unexpected or passed.wrong)
    partial = run_steps(task.domain, task.actor, task.reference_solution[:2]).diff
    explained = explain(task.expected_diff, partial, schema)
    assert not explained.passed and explained.passed == grade(task.expected_diff, partial, schema).passed
    assert len(explained.matched) + len(explained.missing) == len(task.expected_diff)
    assert len(explained.matched) == len(partial) and explained.matched_rows == len(partial)


def test_a_wrong_update_reports_old_expected_and_actual():
    from ebench.engine.domain_registry import get_domain
    from ebench.tasks.diff import Diff, RowChange

    schema = get_domain("music").schema
    table = schema.tables[0]
    column = next(c for c in table.column_names if c not in table.key and c not in table.volatile_columns)
    key = {table.key[0]: 1}
    expected = Diff([RowChange(table.name, "update", key, {column: "a"}, {column: "b"})])
    actual = Diff([RowChange(table.name, "update", key, {column: "a"}, {column: "c"})])
    [wrong] = explain(expected, actual, schema).wrong
    assert (wrong.old, wrong.expected, wrong.actual) == ("a", "b", "c")
    assert wrong.to_dict()["old"] == "a"


# Only a hang reaches this, however loaded the machine: the tests wait on events, not on a clock.
SAFETY_SECONDS = 300.0


class ObservedGate(StepGate):
    """A step gate that tells the test each time the solver's thread brings a step to it."""

    def __init__(self) -> None:
        super().__init__(paused=True)
        self.arrived = 0
        self._arrivals = threading.Condition()

    def wait(self) -> None:
        with self._arrivals:
            self.arrived += 1
            self._arrivals.notify_all()
        super().wait()

    def until_arrived(self, count: int) -> None:
        """Block until the `count`th step has reached the gate (it is held there while paused)."""
        with self._arrivals:
            if not self._arrivals.wait_for(lambda: self.arrived >= count, SAFETY_SECONDS):
                raise AssertionError(f"step {count} never reached the gate")


def watch_in_thread(trial, solver) -> tuple[ObservedGate, threading.Thread, dict]:
    """Watch `solver` on `trial` from a thread, paused at the start; result["summary"] once done."""
    gate = ObservedGate()
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("summary", watch(trial, solver, TrialLimits(), gate)))
    thread.start()
    return gate, thread, result


def finish(thread: threading.Thread) -> None:
    thread.join(SAFETY_SECONDS)
    assert not thread.is_alive(), "the watched solver never finished"


def test_the_last_line_is_read_whole_however_long(tmp_path: Path):
    from ebench.sessions.attempts import _last_line

    path = tmp_path / "s.jsonl"
    long = '{"event": "end", "diff": "' + "x" * 200_000 + '"}'
    path.write_text('{"event": "start"}\n' + long + "\n")
    assert _last_line(path, chunk=1000) == long
    path.write_text(long)  # one line, no newline
    assert _last_line(path, chunk=1000) == long
    path.write_text("")
    assert _last_line(path) == ""


def test_closing_waits_for_a_diff_in_another_thread_and_later_diffs_fail_cleanly(tmp_path: Path, task):
    """The app computes diffs in a worker while the watched solver's thread may finish the trial:
    closing must not pull the connection from under a running diff (that crashed the process)."""
    trial = human_trial(task, folder=tmp_path)
    trial.call(task.reference_solution[0].tool, task.reference_solution[0].args)
    with trial.lock:  # a diff is running
        closer = threading.Thread(target=trial.close)
        closer.start()
        closer.join(0.2)
        assert closer.is_alive()  # close waits for it
    closer.join(SAFETY_SECONDS)
    assert not closer.is_alive()
    with pytest.raises(RuntimeError, match="closed"):  # its copy may be another trial's by now
        trial.diff()


def test_a_running_gate_paces_steps_at_the_chosen_rate():
    now = [0.0]
    gate = StepGate(rate=1.0, clock=lambda: now[0])
    gate.wait()  # the first step goes at once
    assert gate.delay() == 1.0  # the next one a second later
    gate.set_rate(2.0)
    assert gate.delay() == 0.5  # a faster speed re-times the step already waiting
    now[0] = 0.5
    assert gate.delay() == 0.0
    gate.wait()  # due: goes at once
    assert gate.delay() == 0.5
    gate.set_rate(None)
    assert gate.delay() == 0.0  # no limit
    gate.pause()
    gate.step()
    gate.wait()  # a step let through while paused ignores the rate
    assert gate.paused
