"""What model code makes the harness record is bounded (payload_caps.py), and each payload is
stored once: an exec_code block flooding its calls with megabytes, a model reply with megabytes
of arguments, a budget spent and the calls after it; and a capped session still replays,
regrades, exports (skipped, with its reason) and resumes. Real trials, real sandbox workers, the
real litellm client against the local fake OpenAI server."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ebench.engine.tools import ToolResult
from ebench.sessions.batch import Batch
from ebench.sessions.describe import describe
from ebench.sessions.events import CHILD, ToolCallEvent
from ebench.sessions.export import TRUNCATED, ExportSummary, export_lines
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.payload_caps import (
    ALWAYS_KEPT,
    BLOCK_CAP,
    HEAD_CHARS,
    TRIAL_CAP,
    VALUE_CAP,
    RecordingBudget,
    RecordingCaps,
    marker,
    matches_marker,
    payload_text,
    with_note,
)
from ebench.sessions.perturb import PerturbedResult
from ebench.sessions.record import SessionWriter, read_session
from ebench.sessions.regrade import regrade_run
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.solvers.recorded import RecordedResponses, ReplayDiverged
from ebench.sessions.timeline import Timeline
from ebench.sessions.trial import ResumeError, Trial, TrialLimits, open_trial
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply, Script, completion

MUSIC = "music-0001"
MOBA = "moba-0024"  # create a room, then invitations that need its id
FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_suite(ids=[MUSIC, MOBA]).tasks}


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def capped(event: Any, name: str) -> bool:
    return name in (getattr(event, "capped", None) or [])


# -- the caps themselves ---------------------------------------------------------------------
def test_a_marker_holds_the_length_and_hash_of_the_whole_text():
    text = "é" * 1000 + "\ud800"  # not ASCII, and a lone surrogate a solver may send
    found = marker(text)
    data = text.encode("utf-8", "surrogatepass")
    assert found == {"truncated": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "head": text[:HEAD_CHARS]}
    value = {"query": "x" * 10, "page": [1, 2]}
    assert marker(value, head=False) == {
        "truncated": True,
        "bytes": len(compact(value)),
        "sha256": hashlib.sha256(compact(value)).hexdigest(),
    }
    assert matches_marker(marker(value), {"query": "x" * 10, "page": [1, 2]}) and not matches_marker(marker(value), {"query": "y"})
    # the defaults are far above what real trials record (payload_caps.py says by how much)
    assert ALWAYS_KEPT < VALUE_CAP < BLOCK_CAP < TRIAL_CAP


def test_a_budget_once_spent_records_every_later_value_as_a_marker():
    budget = RecordingBudget(RecordingCaps(value=1000, block=2500, trial=4000))
    big, small = "b" * 900, "s" * ALWAYS_KEPT
    assert budget.keep("v" * 1001) == (marker("v" * 1001), True)  # over the value cap: spends nothing
    assert budget.spent == HEAD_CHARS and not budget.trial_spent
    budget.begin_block()
    kept = [budget.keep(big, in_block=True)[1] for _ in range(4)]
    assert kept == [False, False, True, True]  # the third does not fit the block: the block is spent
    assert budget.keep("c" * 10 + big[10:], in_block=True)[1] and budget.keep(small, in_block=True) == (small, False)
    assert budget.end_block() == 3
    assert budget.keep(big) == (big, False)  # outside the block, the trial still has room
    spent = budget.keep(big)
    assert spent[1] and budget.trial_spent and "head" not in spent[0]  # the trial's budget is spent now
    assert budget.keep("d" * 300)[1] and budget.keep(small) == (small, False)  # small values are always kept
    assert budget.spent <= 4000


def test_the_note_keeps_the_results_own_kind_and_fields():
    perturbed = PerturbedResult("get_song", True, {"a": 1}, shown={"b": 2}, latency=0.5)
    noted = with_note(perturbed, "cut")
    assert isinstance(noted, PerturbedResult) and noted.latency == 0.5 and noted.payload() == {"b": 2}
    assert noted.for_solver() == {"b": 2, "recording": "cut"} and perturbed.for_solver() == {"b": 2}
    assert with_note(ToolResult("get_song", True, [1, 2]), "cut").for_solver() == {"result": [1, 2], "recording": "cut"}


# -- an exec_code block ------------------------------------------------------------------------
FLOOD = """big = 'x' * 3_900_000
for _ in range(40):
    try:
        search_songs(query=big)
    except ToolError:
        pass
'done'"""


def test_a_block_of_40_calls_of_4_mb_records_markers_and_tells_the_solver(tmp_path, tasks):
    path = tmp_path / "s.jsonl"
    trial = Trial(tasks[MUSIC], writer=SessionWriter(path), code=True)
    handed = trial.exec_code(FLOOD).for_solver()
    children_in_memory = [c for c in trial.history if c.parent]
    summary = trial.finish("agent_stopped")
    # the block ran whole: every call reached its tool, which refused the text as too long
    assert handed["ok"] and handed["tool_calls"] == 40 and handed["value"] == "'done'"
    assert summary.inner_calls == 40 and summary.tool_errors == {"invalid_arguments": 40}
    # ...and the solver is told its record is cut
    assert "recorded truncated" in handed["recording"] and "whole" in handed["recording"]
    # 156 MB of arguments went through the block; the session holds markers of them
    assert path.stat().st_size < 64 * 1024
    sent = compact({"query": "x" * 3_900_000})
    session = read_session(path)
    children = [c for c in session.tool_calls() if c.role == CHILD]
    assert len(children) == 40 and not session.warnings and session.truncated
    for child in children:
        assert child.capped == ["args"] and child.error_code == "invalid_arguments" and child.tool == "search_songs"
        assert child.args == {
            "truncated": True,
            "bytes": len(sent),
            "sha256": hashlib.sha256(sent).hexdigest(),
            "head": sent[:HEAD_CHARS].decode(),
        }
        assert "too long" in child.result["error"]["message"]  # the tool's answer is small: kept whole
    [block] = [c for c in session.tool_calls(leaves=False) if c.tool == "exec_code"]
    assert block.capped == ["children"] and block.code == FLOOD and "recording" not in block.result
    # what the trial keeps in memory is what it recorded, not 156 MB
    assert all(c.args["truncated"] for c in children_in_memory)
    timeline = Timeline(session, tasks[MUSIC])
    try:
        assert timeline.check() is None  # the refused calls changed nothing: skipping them rebuilds the state
        assert timeline.final_state().diff.to_list() == session.end.diff == []
    finally:
        timeline.close()


BROWSE = "for p in range(1, 11):\n    search_songs(page=p)\n"


def test_block_and_trial_budgets_bound_the_session_and_the_calls_after_still_replay(tmp_path, tasks):
    caps = RecordingCaps(value=8 * 1024, block=20_000, trial=50_000)
    path = tmp_path / "s.jsonl"
    task = tasks[MUSIC]
    trial = Trial(task, writer=SessionWriter(path), code=True, recording=caps)
    notes = [trial.exec_code(BROWSE).for_solver().get("recording") for _ in range(4)]
    made = trial.call("create_playlist", {"name": "After the flood"})
    trial.finish("agent_stopped")
    assert all(notes) and made.ok and "recording" not in made.for_solver()  # its values are small: kept whatever the budget
    session = read_session(path)
    blocks = [c for c in session.tool_calls(leaves=False) if c.tool == "exec_code"]
    assert len(blocks) == 4 and all(b.capped == ["children"] for b in blocks)
    for block in blocks:
        children = [c for c in session.tool_calls() if c.parent == block.id]
        assert len(children) == 10 and all(c.ok for c in children)
        whole = [len(payload_text(c.result).encode()) for c in children if not capped(c, "result")]
        assert sum(whole) <= caps.block
        flags = [capped(c, "result") for c in children]
        assert flags == sorted(flags) and flags[-1]  # once spent, every later page of the block is a marker
    assert trial.recording.trial_spent and trial.recording.spent <= caps.trial
    last = [c for c in session.tool_calls() if c.parent == blocks[-1].id]
    assert all(capped(c, "result") and "head" not in c.result for c in last)
    # what the trial recorded is bounded by the trial's cap plus each event's own fields (the end
    # event is the harness's: the diff and the grade, here of a task it did not do)
    recorded = [line for line in path.read_bytes().splitlines() if not line.startswith(b'{"event":"end"')]
    assert sum(map(len, recorded)) <= caps.trial + 600 * len(recorded)
    # the call made after the flood ran and is in the graded diff; the replay rebuilds it
    [call] = [c for c in session.tool_calls(leaves=False) if c.tool == "create_playlist"]
    assert call.args == {"name": "After the flood"} and call.capped is None and call.result["name"] == "After the flood"
    assert any(change["table"] == "playlists" and change["op"] == "insert" for change in session.end.diff)
    timeline = Timeline(session, task)
    try:
        assert timeline.check() is None  # results recorded as markers compare by length and hash
        assert timeline.final_state().diff.to_list() == session.end.diff
        assert all(step.label for step in timeline.steps) and all(describe(step.event).parts for step in timeline.steps)
    finally:
        timeline.close()


def test_a_forged_marker_is_an_ordinary_value(tmp_path, tasks):
    path = tmp_path / "s.jsonl"
    trial = Trial(tasks[MUSIC], writer=SessionWriter(path))
    forged = {"truncated": True, "bytes": 1, "sha256": "0" * 64}
    result = trial.call("get_song", forged)
    trial.finish("agent_stopped")
    assert "recording" not in result.for_solver()
    [call] = read_session(path).tool_calls()
    assert call.args == forged and call.capped is None  # recorded as sent, run again on replay
    timeline = Timeline.open(path, tasks[MUSIC])
    try:
        assert timeline.check() is None
    finally:
        timeline.close()


def test_an_attempt_resumes_over_capped_calls_unless_a_successful_one_lost_its_arguments(tmp_path, tasks):
    task = tasks[MUSIC]
    path = tmp_path / "s.jsonl"
    trial = Trial(task, writer=SessionWriter(path), recording=RecordingCaps(value=2000, block=4000, trial=6000))
    trial.call("search_songs", {"query": "y" * 50_000})  # refused, recorded as a marker
    for page in (1, 2, 3):
        assert trial.call("search_songs", {"page": page}).ok  # pages over the value cap: markers
    trial.close()  # left unfinished
    events = read_session(path).events
    assert sum(capped(e, "result") for e in events) >= 2
    resumed = Trial(task, writer=SessionWriter(path, resume_at=events[-1].t), resumed=events[1:])
    assert resumed.tool_calls == 4 and resumed.tool_errors == {"invalid_arguments": 1}
    resumed.close()

    other = tmp_path / "ok.jsonl"
    trial = Trial(task, writer=SessionWriter(other), recording=RecordingCaps(value=300, block=300, trial=300))
    assert trial.call("search_songs", {"query": "z" * 400}).ok  # valid arguments over the value cap
    trial.close()
    events = read_session(other).events
    with pytest.raises(ResumeError, match="recorded with its arguments truncated"):
        Trial(task, resumed=events[1:])


# -- a model: each payload stored once ------------------------------------------------------
def solve(task, responder, tmp_path: Path, *, code: bool = False) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "s.jsonl"
    with FakeOpenAI(responder) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        trial = open_trial(task, path, solver=solver.config(), code=code)
        outcome = asyncio.run(solver.solve(trial, TrialLimits()))
        trial.finish(outcome.termination, outcome.error)
        return path, server.requests


def test_a_model_reply_with_300_kb_of_arguments_is_stored_once(tmp_path, tasks):
    arguments = json.dumps({"padding": "p" * 300_000})
    script = Script([completion(None, [("get_my_profile", arguments)]), completion("Done.")])
    path, _ = solve(tasks[MOBA], script, tmp_path)
    assert path.stat().st_size < 1.2 * len(arguments)  # was twice the arguments: the message and the call
    [line] = [e for e in raw_lines(path) if e["event"] == "tool_call"]
    assert line["args_in"] == "message" and "args" not in line and "capped" not in line
    session = read_session(path)
    [call] = session.tool_calls()
    [asked] = [e for e in session.events if e.event == "message" and e.tool_calls]
    assert call.args == arguments == asked.tool_calls[0]["function"]["arguments"]  # read back where it is stored
    assert call.error_code == "invalid_arguments" and not session.truncated


def test_a_model_reply_with_5_mb_of_arguments_is_recorded_as_markers_and_the_model_is_told(tmp_path, tasks):
    arguments = json.dumps({"padding": "p" * 5_000_000})
    script = Script([completion(None, [("get_my_profile", arguments)]), completion("Done.")])
    path, requests = solve(tasks[MOBA], script, tmp_path)
    assert path.stat().st_size < 64 * 1024
    session = read_session(path)
    [asked] = [e for e in session.events if e.event == "message" and e.tool_calls]
    [call] = session.tool_calls()
    assert asked.capped == ["tool_calls[0].arguments"] and call.capped == ["args"] and call.args_in is None
    assert call.args == asked.tool_calls[0]["function"]["arguments"] == marker(arguments)
    told = json.loads([m for m in requests[1]["messages"] if m["role"] == "tool"][0]["content"])
    assert told["error"]["code"] == "invalid_arguments" and "recorded truncated" in told["recording"]
    # a recorded model that cannot be played back refuses, rather than replaying something else
    with pytest.raises(ReplayDiverged, match="recorded truncated"):
        RecordedResponses(tmp_path).answer(path.name, 1)


def test_an_exec_code_block_stores_its_code_once(tmp_path, tasks):
    code = "# " + "c" * 150_000 + "\nget_my_profile()['nickname']"
    script = Script([completion(None, [("exec_code", {"code": code})]), completion("Done.")])
    path, requests = solve(tasks[MOBA], script, tmp_path, code=True)
    assert path.stat().st_size < 1.2 * len(code)
    [line] = [e for e in raw_lines(path) if e["event"] == "tool_call" and e["tool"] == "exec_code"]
    assert line["args_in"] == "message" and "args" not in line
    session = read_session(path)
    [block] = [c for c in session.tool_calls(leaves=False) if c.tool == "exec_code"]
    assert block.args == {"code": code} and block.code == code and block.ok
    assert "recording" not in json.loads([m for m in requests[1]["messages"] if m["role"] == "tool"][0]["content"])


# -- a capped run: replay, regrade, export ----------------------------------------------------
class FloodFirst:
    """A model that first answers with megabytes (text, and one call's arguments, which its tool
    refuses), then plays `inner` as if that exchange had not happened."""

    def __init__(self, inner: Any, size: int) -> None:
        self.inner = inner
        self.size = size

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if not any(m["role"] == "assistant" for m in messages):
            return completion("x" * self.size, [("get_my_profile", {"padding": "p" * self.size})])
        return self.inner({**body, "messages": messages[:2] + messages[4:]})


def test_a_capped_run_replays_regrades_and_exports(tmp_path, tasks):
    task = tasks[MOBA]
    out = tmp_path / "run"
    with FakeOpenAI(FloodFirst(ReferencePlayer([task], parallel=True), VALUE_CAP + 1)) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        batch = Batch(out, [task], solver, 1)
        batch.prepare()
        try:
            asyncio.run(batch.run(concurrency=1))
        finally:
            batch.finish("finished")
    [result] = load_run(out).results
    assert result.passed  # the flood was recorded truncated; the trial went on and is graded by its diff
    session = read_session(out / result.session)
    flooded = next(e for e in session.events if e.event == "message" and e.role == "assistant")
    assert flooded.capped == ["content", "tool_calls[0].arguments"] and session.truncated
    assert any(isinstance(e, ToolCallEvent) and e.capped == ["args"] for e in session.events)
    assert all(e.args_in == "message" for e in session.tool_calls() if not e.capped)  # each payload stored once
    timeline = Timeline(session, task)
    try:
        assert timeline.check() is None
        final = timeline.final_state()
        assert final.passed and final.diff.to_list() == session.end.diff == timeline.recorded_diff().to_list()
    finally:
        timeline.close()
    report = regrade_run(out)
    assert (report["regraded"], report["changed"], report["problems"]) == (1, 0, [])
    summary = ExportSummary()
    assert list(export_lines([load_run(out)], "openai-chat", summary)) == []
    assert summary.to_dict() == {"written": 0, "skipped": {TRUNCATED: 1}}


def test_an_old_format_session_still_loads_with_its_arguments_in_both_places():
    path = FORMATS / "run-llm" / "sessions" / "music-0001" / "1.jsonl"
    session = read_session(path)
    assert session.start.format == "ebench-session/1" and not session.warnings and not session.truncated
    asked = {c["id"]: c["function"]["arguments"] for e in session.events if e.event == "message" for c in e.tool_calls or []}
    calls = list(session.tool_calls())
    assert calls and all(c.args == asked[c.id] and c.args_in is None for c in calls)
    assert [e.to_dict() for e in session.events] == raw_lines(path)
