"""Session records as typed events: files written before the models still read (the fixtures in
tests/fixtures/formats are today's files), a session written now reads back as the same models,
the schema `ebench sessions schema` prints describes every line, and the rules that live in one
place (the exec_code payload, opening a trial, naming session files) hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.tools import ToolResult
from ebench.sessions.describe import describe
from ebench.sessions.events import (
    SESSION_FORMAT,
    ApiErrorEvent,
    EndEvent,
    MessageEvent,
    OtherEvent,
    SessionEvent,
    StartEvent,
    TaskHeader,
    ToolCallEvent,
    event_from,
    session_json_schema,
)
from ebench.sessions.record import SessionWriter, new_session_file, read_session, trial_session_file
from ebench.sessions.timeline import BLOCK, CHILD, Timeline
from ebench.sessions.trial import Trial, open_trial
from ebench.tasks.suite import load_suite

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
SESSIONS = sorted(p for p in FORMATS.rglob("*.jsonl") if p.name != "results.jsonl")


@pytest.fixture(scope="module")
def worlds(music_world, meeting_world, moba_world):
    return None


def raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# The suite-version-2 tasks the fixture runs were recorded on (suite version 3 replaced them).
RECORDED_ON = FORMATS / "suite-v2"


def suite_task(task_id: str):
    [task] = load_suite(RECORDED_ON, ids=[task_id]).tasks
    return task


def test_the_fixtures_cover_every_kind_a_trial_writes():
    kinds = {line["event"] for path in SESSIONS for line in raw_lines(path)}
    assert {"start", "message", "tool_call", "api_error", "end"} <= kinds
    assert len(SESSIONS) >= 5


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(FORMATS)))
def test_old_sessions_read_as_typed_events_without_loss(path):
    session = read_session(path)
    lines = raw_lines(path)
    assert session.warnings == [] and len(session.events) == len(lines)
    assert not any(isinstance(e, OtherEvent) for e in session.events)  # every kind written today has its model
    start = session.start
    assert isinstance(start, StartEvent) and start.format == "ebench-session/1"  # the fixtures are format 1 files
    assert isinstance(start.task, TaskHeader) and start.task.id == session.task_id and start.task.query
    assert start.mode in ("tools", "code") and start.domain == start.task.domain and isinstance(start.world_seed, int)
    end = session.end
    assert isinstance(end, EndEvent) and end.termination == "agent_stopped" and isinstance(end.diff, list)
    assert end.passed == bool(end.grade and end.grade.passed) and end.summary is not None
    for event, line in zip(session.events, lines, strict=True):
        assert event.to_dict() == line  # the model is its line: same values...
        assert list(event.record()) == list(line)  # ...same keys in the same order when written again
    calls = list(session.tool_calls())
    assert calls and all(isinstance(c, ToolCallEvent) and c.role != BLOCK for c in calls)
    assert end.summary.tool_calls == len(list(session.tool_calls(leaves=False)))
    messages = [e for e in session.events if isinstance(e, MessageEvent)]
    assert all(m.role in ("system", "user", "assistant") for m in messages)  # the oracle sends none


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(FORMATS)))
def test_old_sessions_replay_faithfully(path, worlds):
    session = read_session(path)
    timeline = Timeline(session, suite_task(session.task_id))
    try:
        assert timeline.check() is None  # every recorded call re-executes to its recorded result
        final = timeline.final_state()
        assert final.diff.to_list() == session.end.diff == timeline.recorded_diff().to_list()
        assert final.passed == session.end.passed
        for step in timeline.steps:
            assert step.label and "\n" not in step.label
            assert describe(step.event).parts
    finally:
        timeline.close()


def test_an_exec_code_session_keeps_blocks_and_children(worlds):
    session = read_session(FORMATS / "session-exec-code.jsonl")
    blocks = [c for c in session.tool_calls(leaves=False) if c.role == BLOCK]
    children = [c for c in session.tool_calls() if c.role == CHILD]
    assert blocks and children and {c.parent for c in children} <= {b.id for b in blocks}
    assert all(b.code for b in blocks) and all(isinstance(b.result, dict) for b in blocks)
    failed = [b for b in blocks if not b.ok]
    assert all("error" in b.result and "stdout" in b.result for b in failed)  # the whole payload, also on error


@pytest.mark.parametrize("code", [False, True], ids=["tools", "code"])
def test_a_session_written_now_reads_back_as_the_same_models(tmp_path, worlds, code):
    task = suite_task("music-0001")
    path = tmp_path / "s.jsonl"
    trial = Trial(task, writer=SessionWriter(path), solver={"name": "test", "api_key": None}, code=code)
    recorded: list[SessionEvent] = []
    trial.listeners.append(lambda kind, event: recorded.append(event))
    trial.message("user", task.query)
    trial.record(ApiErrorEvent(turn=1, attempt=1, kind="transient", error="slow down", status=429, seconds=0.1, retry_in=1.5))
    trial.call("get_my_profile", {})
    trial.call("get_song", {"song_id": "x"})
    if code:
        trial.exec_code("print(len(search_songs(query='rain')['items']))")
        trial.exec_code("raise ValueError('no')")
    trial.finish("agent_stopped")
    session = read_session(path)
    assert session.warnings == []
    assert session.events[1:] == recorded  # the listeners were handed the very events the file holds
    assert [e.event for e in recorded] == ["message", "api_error", *["tool_call"] * len(trial.history), "end"]
    assert [e for e in session.events if isinstance(e, ToolCallEvent)] == trial.history
    for event, line in zip(session.events, raw_lines(path), strict=True):
        assert event.to_dict() == line
        assert type(event_from(line)[0]) is type(event)
    if code:
        failed = next(c for c in session.tool_calls(leaves=False) if c.role == BLOCK and not c.ok)
        assert failed.error_code == "code_error" and "ValueError: no" in failed.result["error"]


def test_unknown_kinds_keys_and_types_are_kept_not_refused(tmp_path):
    start = raw_lines(FORMATS / "session-exec-code.jsonl")[0]
    lines = [
        start,
        {"event": "tool_call", "t": 1, "id": "call-1", "tool": "x", "args": {}, "ok": False, "result": None, "from_the_future": [1]},
        {"event": "limit", "t": 2, "what": "max_turns", "value": 30},
        {"event": "message", "t": 3, "role": "assistant", "turn": "two"},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    session = read_session(path)
    call, other, odd = session.events[1:]
    assert isinstance(call, ToolCallEvent) and call.model_extra == {"from_the_future": [1]} and call.to_dict() == lines[1]
    assert isinstance(other, OtherEvent) and other.event == "limit" and other.data == {"what": "max_turns", "value": 30}
    assert describe(other).label.startswith("limit: ")
    assert isinstance(odd, MessageEvent) and odd.turn == "two" and odd.to_dict() == lines[3]  # kept as recorded...
    assert len(session.warnings) == 1 and "s.jsonl:4" in session.warnings[0]  # ...and said


def test_a_start_without_the_format_is_refused(tmp_path):
    from ebench.sessions.record import SessionFileError

    path = tmp_path / "s.jsonl"
    path.write_text('{"event": "start", "t": 0}\n', encoding="utf-8")
    with pytest.raises(SessionFileError, match=f"not an {SESSION_FORMAT} session"):
        read_session(path)


def test_the_schema_command_prints_a_versioned_schema_every_line_fits():
    import jsonschema  # installed with mcp

    result = CliRunner().invoke(app, ["sessions", "schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert schema == json.loads(json.dumps(session_json_schema()))
    assert schema["$id"] == "urn:ebench-session:2" and SESSION_FORMAT in schema["title"]
    assert CliRunner().invoke(app, ["sessions", "schema", "--json"]).stdout == result.stdout
    validator = jsonschema.Draft202012Validator(schema)
    for path in SESSIONS:
        for line in raw_lines(path):
            validator.validate(line)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"event": "tool_call", "ok": "yes"})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"t": 0.0})  # no kind


def test_the_solver_gets_the_whole_exec_code_payload_also_on_error():
    payload = {"ok": False, "stdout": "so far\n", "error": "Traceback ..."}
    assert ToolResult("exec_code", False, payload, "code_error", "boom").for_solver() == payload
    refused = ToolResult("exec_code", False, None, "unknown_tool", "exec_code is only available in code mode.")
    assert refused.for_solver() == refused.payload() == {"error": {"code": "unknown_tool", "message": refused.error_message}}
    failed = ToolResult("get_song", False, {"ignored": True}, "not_found", "No song 9.")
    assert failed.for_solver() == {"error": {"code": "not_found", "message": "No song 9."}}
    assert ToolResult("get_song", True, {"id": 9}).for_solver() == {"id": 9}


def test_a_trial_that_cannot_start_leaves_no_session_file(tmp_path, worlds):
    task = suite_task("music-0001").model_copy(update={"actor": 999_999})
    path = new_session_file(tmp_path, task.id, "test")
    assert path.exists() and path.parent == tmp_path and path.name.endswith(f"-{task.id}-test.jsonl")
    with pytest.raises(Exception, match="999999"):
        open_trial(task, path, solver={"name": "test"})
    assert not path.exists()
    assert trial_session_file(tmp_path / "sessions", "music-0001", 2) == tmp_path / "sessions" / "music-0001" / "2.jsonl"
    trial = open_trial(
        suite_task("music-0001"), trial_session_file(tmp_path, "music-0001", 1), secrets=["sk-secret-1"], solver={"name": "t"}
    )
    trial.message("user", "my key is sk-secret-1")
    trial.finish("agent_stopped")
    assert "sk-secret-1" not in (tmp_path / "music-0001" / "1.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("kind", "format_id", "files"), [("results", "ebench-results/1", "results.jsonl"), ("manifest", "ebench-run/1", "manifest.json")]
)
def test_the_schema_command_covers_results_lines_and_manifests(kind: str, format_id: str, files: str) -> None:
    import jsonschema

    result = CliRunner().invoke(app, ["sessions", "schema", kind])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert format_id in schema["title"] and schema["$id"] == "urn:" + format_id.replace("/", ":")
    validator = jsonschema.Draft202012Validator(schema)
    runs = sorted((Path(__file__).parent / "fixtures" / "formats").glob("run-*"))
    assert len(runs) == 3
    for run in runs:
        text = (run / files).read_text(encoding="utf-8")
        for document in [json.loads(line) for line in text.splitlines()] if files.endswith(".jsonl") else [json.loads(text)]:
            validator.validate(document)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"task": 7} if kind == "results" else {"format": 7})
    refused = CliRunner().invoke(app, ["sessions", "schema", "bogus"])
    assert refused.exit_code == 2


def test_a_session_line_reads_back_as_json_would_write_it():
    """Session lines are written by orjson (compact, fast) and fall back to json for what orjson
    refuses; either way a line reads back as the values json.dumps would have written."""
    from ebench.sessions.record import REDACTED, session_line

    values = {
        "event": "tool_call",
        "t": 0.1,
        "page": {"items": [{"id": 1, "title": "Café ☕", "score": 1e-05}], "total": 1},
        "keys": {1: "one", None: "none", False: "no"},  # keys that are not strings, as json writes them
        "tuple": (1, 2),
        "set": {3},
        "huge": 10**30,  # beyond 64 bits: orjson refuses, json writes it
        "surrogate": "a\ud800b",  # a lone surrogate: orjson refuses, escaped
        "separator": "line\u2028break",
    }
    line = session_line(values)
    assert "\n" not in line and "\u2028" not in line
    back = json.loads(line)
    assert back["page"] == values["page"] and back["keys"] == json.loads(json.dumps(values["keys"]))
    assert back["tuple"] == [1, 2] and back["set"] == [3] and back["huge"] == 10**30
    assert back["surrogate"] == "a\ud800b" and back["separator"] == "line\u2028break"
    assert json.loads(session_line({"event": "x", "nan": float("nan")}))["nan"] is None  # JSON has no NaN
    deep: list = []
    for _ in range(400):  # deeper than orjson goes
        deep = [deep]
    assert json.loads(session_line({"event": "x", "deep": deep}))["event"] == "x"
    assert json.loads(session_line({"event": "x", "key": "sk-secret-1234"}, ["sk-secret-1234"]))["key"] == REDACTED
