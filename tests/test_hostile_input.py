"""Nothing a solver sends crashes the harness (issue 14, part 2).

Tool names, arguments, model messages and exec_code output holding lone surrogates, NUL
characters, JSON nested thousands deep or megabytes of text are answered as the solver's errors
and recorded: the engine refuses them as invalid_arguments (never internal_error, never an
exception), the session file stays valid UTF-8 JSON lines that read back as what was sent, and a
block that forges the sandbox's protocol frames gets an error for that block while the parent
carries on. Each fault is injected for real: every tool of every domain, a real Trial with its
session writer, real exec_code workers, and the real litellm client against the fake server.
"""

from __future__ import annotations

import asyncio
import json
import types
import typing
from pathlib import Path

import pytest
from fuzzing import HOSTILE_JSON, HOSTILE_TEXTS, HOSTILE_VALUES, KNOWN_ERRORS, LONGEST_TEXTS, nested

from ebench.engine.domain_registry import domain_names
from ebench.engine.tools import MAX_DEPTH, MAX_TEXT
from ebench.sessions.payload_caps import RecordingCaps
from ebench.sessions.record import SessionWriter, read_session
from ebench.sessions.timeline import Timeline
from ebench.sessions.trial import Trial

DOMAINS = domain_names()


def session_events(path: Path) -> list[dict]:
    """The session's events, checking that the file is what every reader can take: valid UTF-8,
    one JSON object per "\\n"-terminated line, no other line break anywhere (str.splitlines
    agrees), and read_session reads it whole."""
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # strict: a lone surrogate written raw would fail here
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    assert text.splitlines() == lines, "a line holds a raw line separator (U+2028, U+0085...)"
    events = [json.loads(line) for line in lines]
    assert all(isinstance(e, dict) and "event" in e for e in events)
    assert [e.to_dict() for e in read_session(path).events] == events
    return events


def one_clear_line(message: str) -> None:
    """An error message a solver (and a person) can read: one short line of valid text."""
    assert message and "\n" not in message and "\x00" not in message and len(message) < 300, message
    message.encode("utf-8")


# -- the engine: every tool, every argument ------------------------------------------------


def _plausible(annotation: typing.Any) -> typing.Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if annotation is int:
        return 2
    if annotation is str:
        return "x"
    if annotation is bool:
        return True
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is list:
        return [_plausible(typing.get_args(annotation)[0])]
    raise AssertionError(annotation)


@pytest.fixture(params=DOMAINS)
def domain_env(request):
    domain = request.getfixturevalue(request.param)
    conn = request.getfixturevalue(f"{request.param}_conn")
    yield domain, domain.env(conn, 1), conn


def test_every_argument_of_every_tool_refuses_hostile_values(domain_env):
    domain, env, conn = domain_env
    before = conn.total_changes
    calls = 0
    for tool in domain.tools:
        for param in tool.params:
            for value in HOSTILE_TEXTS + HOSTILE_VALUES:
                args = {p.name: _plausible(p.annotation) for p in tool.params if p.required}
                args[param.name] = value
                result = domain.tools.call(env, tool.name, args)
                calls += 1
                assert result.error_code == "invalid_arguments", (tool.name, param.name, result.error_message)
                one_clear_line(result.error_message)
    assert calls > 1000 and conn.total_changes == before


def test_hostile_json_text_and_argument_names_are_invalid_arguments(domain_env):
    domain, env, conn = domain_env
    names = [{"\ud800": 1}, {"a\x00": 1}, {"k" * 100_000: 1}, {str(i): i for i in range(5000)}]
    for tool in domain.tools:
        for args in HOSTILE_JSON + names:
            result = domain.tools.call(env, tool.name, args)
            assert result.error_code == "invalid_arguments", (tool.name, result.error_message)
            one_clear_line(result.error_message)


def test_each_fault_has_its_own_message(music, music_conn):
    env = music.env(music_conn, 1)

    def message(args):
        result = music.tools.call(env, "search_songs", args)
        assert result.error_code == "invalid_arguments"
        return result.error_message

    assert "NUL" in message({"query": "rock\x00"}) and "'query'" in message({"query": "rock\x00"})
    assert "lone surrogate (U+D800)" in message({"query": "a\ud800"})
    assert "lone surrogate (U+DFFF)" in message('{"query": "\\udfff"}')  # escaped, as a model sends it
    assert f"at most {MAX_TEXT}" in message({"query": "x" * 1_000_000})
    assert f"at most {MAX_DEPTH} levels" in message({"query": nested(MAX_DEPTH)})
    assert f"at most {MAX_DEPTH} levels" in message("[" * 100_000)
    assert "too many digits" in message('{"page": ' + "9" * 5000 + "}")
    assert "not a finite number" in message('{"page": NaN}')
    assert "5000 items; at most 1000" in message({"query": list(range(5000))})
    many = message({f"extra{i}": 1 for i in range(50)})
    assert "and 45 more" in many and "it takes:" in many


def test_hostile_tool_names_are_unknown_tools_with_a_short_message(music, music_conn):
    env = music.env(music_conn, 1)
    for name in ["\x00", "search_songs\x00", "\ud800", "x" * 1_000_000, nested(5000), {"a": [1]}, None, 12]:
        result = music.tools.call(env, name, {})
        assert result.error_code == "unknown_tool"
        one_clear_line(result.error_message)
    assert "search_songs" in music.tools.call(env, "search_song", {}).error_message  # suggestions still work


def test_the_longest_allowed_texts_are_answered_never_an_internal_error(domain_env):
    """At MAX_TEXT characters of LIKE wildcards or 4-byte characters, every text argument still
    reaches SQLite under its limits (a LIKE pattern of at most 50,000 bytes)."""
    from ebench.engine.search import LIKE_PATTERN_LIMIT, like_pattern
    from ebench.engine.tools import ToolError

    assert all(len(like_pattern(text).encode()) <= LIKE_PATTERN_LIMIT for text in LONGEST_TEXTS)
    with pytest.raises(ToolError) as refused:  # a tool's own text past the engine's bound: refused, not SQLite's error
        like_pattern("%" * 30_000)
    assert refused.value.code == "invalid_arguments"
    domain, env, conn = domain_env
    for tool in domain.tools:
        for param in tool.params:
            if str not in (param.annotation, *typing.get_args(param.annotation)):
                continue
            for text in LONGEST_TEXTS:
                args = {p.name: _plausible(p.annotation) for p in tool.params if p.required}
                args[param.name] = text
                conn.execute("SAVEPOINT probe")
                try:
                    result = domain.tools.call(env, tool.name, args)
                finally:
                    conn.execute("ROLLBACK TO probe")
                    conn.execute("RELEASE probe")
                assert result.ok or result.error_code in KNOWN_ERRORS, (tool.name, param.name, result.error_message)


# -- the session writer --------------------------------------------------------------------


def test_the_session_writer_records_anything_and_every_line_reads_back(tmp_path):
    from ebench.sessions.record import SESSION_FORMAT

    cycle: list = []
    cycle.append(cycle)
    exact = ["\ud800", "\\\udfff", "a\x00b", "x\u2028y\x85z\u2029", "🎵", {"\udc80": ["\ud83c"]}, "w" * 3_000_000]
    cut = [nested(100_000), nested(100_000, "dict"), 10**5000, cycle, {(1, 2): object()}]
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, secrets=["sk-secret-\ud800-value"])
    writer.write("start", format=SESSION_FORMAT, task={"id": "t"})
    for value in exact + cut:
        writer.write("message", content=value)
    writer.write("message", content="key sk-secret-\ud800-value")
    writer.close()
    events = session_events(path)[1:]
    assert [e["content"] for e in events[: len(exact)]] == exact
    assert "not recorded" in json.dumps(events[len(exact)]["content"])
    assert "too long to record" in events[len(exact) + 2]["content"]
    assert events[-1]["content"] == "key [redacted]"


# -- a real trial and its session ----------------------------------------------------------

# (name, arguments as sent, expected error code)
HOSTILE_CALLS = [
    ("\ud800", {}, "unknown_tool"),
    ("search_songs\x00", {}, "unknown_tool"),
    ("x" * 1_000_000, {}, "unknown_tool"),
    (["search_songs"], {}, "unknown_tool"),
    ({"name": "search_songs"}, {}, "unknown_tool"),
    ("search_songs", {"query": "\ud800"}, "invalid_arguments"),
    ("search_songs", '{"query": "love \\udfff"}', "invalid_arguments"),
    ("search_songs", {"query": "rock\x00"}, "invalid_arguments"),
    ("search_songs", {"query": "x" * 1_000_000}, "invalid_arguments"),
    ("search_songs", '{"query": "' + "y" * 2_000_000 + '"}', "invalid_arguments"),
    ("search_songs", "[" * 100_000, "invalid_arguments"),
    ("search_songs", {"query": nested(5000)}, "invalid_arguments"),
    ("search_songs", '{"page": ' + "9" * 5000 + "}", "invalid_arguments"),
    ("search_songs", {"\udc80": 1}, "invalid_arguments"),
    ("create_playlist", {"name": "mix\x00"}, "invalid_arguments"),  # SQLite's length() stops at NUL
    ("create_playlist", {"name": "\ud83c"}, "invalid_arguments"),
    ("search_songs", {"query": "line\u2028separator\x85"}, None),  # valid text: answered
]


@pytest.fixture(scope="module")
def music_task():
    from ebench.tasks.suite import load_suite

    [task] = load_suite(ids=["music-0001"]).tasks
    return task


def test_hostile_calls_and_messages_through_a_trial_are_recorded_errors(music_task, tmp_path):
    path = tmp_path / "session.jsonl"
    # caps out of the way: what is written whole must read back exactly (tests/test_record_caps.py tests the caps)
    trial = Trial(music_task, writer=SessionWriter(path), recording=RecordingCaps(value=2**30, block=2**30, trial=2**30))
    results = [trial.call(name, args) for name, args, _ in HOSTILE_CALLS]
    assert [r.error_code for r in results] == [code for _, _, code in HOSTILE_CALLS]
    for result in results[:-1]:
        one_clear_line(result.error_message)
        json.loads(result.to_json())
    content = "thinking \ud800 about \x00 and \u2028 " + "w" * 3_000_000
    trial.message(
        "assistant",
        content,
        reasoning=nested(5000),
        tool_calls=[{"id": "\udc00", "function": {"name": "\ud800", "arguments": "[" * 100_000}}],
    )
    summary = trial.finish("agent_stopped")
    assert summary.termination == "agent_stopped" and summary.error is None
    assert summary.tool_errors == {"invalid_arguments": 11, "unknown_tool": 5}
    assert not summary.passed and trial.final_diff is not None and trial.final_diff.to_list() == []

    events = session_events(path)
    calls = [e for e in events if e["event"] == "tool_call"]
    assert [c["error_code"] for c in calls] == [code for _, _, code in HOSTILE_CALLS]
    # recorded as sent: text reads back exactly (lone surrogates included), the messages too
    assert calls[0]["tool"] == "\ud800" and calls[5]["args"] == {"query": "\ud800"}
    assert calls[2]["tool"] == "x" * 1_000_000 and calls[9]["args"].startswith('{"query": "yyy')
    assert calls[7]["args"] == {"query": "rock\x00"} and calls[13]["args"] == {"\udc80": 1}
    assert calls[-1]["ok"] and calls[-1]["args"] == {"query": "line\u2028separator\x85"}
    assert [c["result"] for c in calls] == json.loads(json.dumps([r.payload() for r in results]))
    message = next(e for e in events if e["event"] == "message")
    assert message["content"] == content and message["tool_calls"][0]["id"] == "\udc00"
    # what json cannot write whole is cut with a note, the rest of the event kept
    assert "not recorded" in json.dumps(calls[11]["args"]) and "not recorded" in json.dumps(message["reasoning"])
    assert events[-1]["event"] == "end" and events[-1]["termination"] == "agent_stopped"
    # the recording is faithful: replaying every call gives the recorded results
    timeline = Timeline(read_session(path))
    try:
        assert timeline.check() is None
    finally:
        timeline.close()


def test_a_tool_name_nested_thousands_deep_is_an_unknown_tool(music_task, tmp_path):
    path = tmp_path / "session.jsonl"
    trial = Trial(music_task, writer=SessionWriter(path))
    result = trial.call(nested(100_000), nested(100_000, "dict"))
    assert result.error_code == "unknown_tool" and "nested more than" in result.error_message
    trial.finish("agent_stopped")
    [call] = [e for e in session_events(path) if e["event"] == "tool_call"]
    assert call["error_code"] == "unknown_tool" and "not recorded" in json.dumps(call["tool"])


# -- a real exec_code block ----------------------------------------------------------------

FORGE = (
    "import os, json\n"
    "def forge(frame):\n"
    "    for fd in range(3, 64):  # the pipe to the parent is one of them\n"
    "        try:\n"
    "            os.write(fd, len(frame).to_bytes(4, 'big') + frame)\n"
    "        except OSError:\n"
    "            pass\n"
)


def test_hostile_blocks_through_a_code_mode_trial_are_recorded_errors(music_task, tmp_path):
    path = tmp_path / "session.jsonl"
    trial = Trial(music_task, writer=SessionWriter(path), code=True)

    def block(code):
        result = trial.exec_code(code)  # never raises
        json.loads(result.to_json())  # the solver's payload is valid JSON, and valid UTF-8 text:
        result.to_json().encode("utf-8")
        return result

    printed = block("print('a\\ud800b', 'nul\\x00', 'sep\\u2028')\n'\\udfff'")
    assert printed.ok and printed.value["stdout"] == "a\\ud800b nul\x00 sep\u2028\n"
    assert printed.value["value"] == "'\\udfff'"
    raised = block("raise ValueError('bad \\udc00 text')")
    assert raised.error_code == "code_error" and "ValueError: bad \\udc00 text" in raised.value["error"]
    huge = block("print('x' * 5_000_000)")
    assert huge.error_code == "limit_output" and len(huge.value["stdout"]) < 70_000
    assert block("x = 1\x00").error_code == "code_error"
    assert block("x = '\ud800'").error_code == "code_error"

    calls = block(
        "codes = []\n"
        "for v in ['\\x00', '\\ud800', 'x' * 1_000_000, [[[[1]]]]]:\n"
        "    try:\n"
        "        search_songs(query=v)\n"
        "    except ToolError as e:\n"
        "        codes.append(e.code)\n"
        "deep = 1\n"
        "for _ in range(40):\n"
        "    deep = [deep]\n"
        "try:\n"
        "    search_songs(query=deep)\n"
        "except ToolError as e:\n"
        "    codes.append(e.message)\n"
        "codes"
    )
    assert calls.ok and calls.value["tool_calls"] == 5, calls.value
    assert calls.value["value"].startswith(
        "['invalid_arguments', 'invalid_arguments', 'invalid_arguments', 'invalid_arguments', 'Arguments are nested too deeply"
    )
    # deeper than the pipe carries: refused inside the block, nothing sent
    deeper = block("v = 1\nfor _ in range(500):\n    v = [v]\nsearch_songs(query=v)")
    assert deeper.error_code == "code_error" and "nested more than 100 levels" in deeper.value["error"]

    # forged frames: each stops that block with a protocol error
    deep_frame = block(FORGE + "forge(b'[' * 3_000_000)\nimport time\ntime.sleep(5)")
    assert deep_frame.error_code == "limit_protocol" and "nested too deeply" in deep_frame.value["error"]
    deep_call = block(
        FORGE + 'forge(b\'{"t": "call", "id": 1, "tool": "search_songs", "args": {"q": \''
        " + b'[' * 100_000 + b']' * 100_000 + b'}}')\nimport time\ntime.sleep(5)"
    )
    assert deep_call.error_code == "limit_protocol" and deep_call.value["tool_calls"] == 0
    forged_done = block(
        FORGE + "forge(json.dumps({'t': 'done', 'ok': True, 'value': \"'forged'\", 'error': None, "
        "'limit': None}).encode())\nimport time\ntime.sleep(0.5)\n'real'"
    )
    assert forged_done.error_code == "limit_protocol" and "end message" in forged_done.value["error"]
    assert forged_done.value["value"] is None
    forged_out = block(FORGE + "forge(json.dumps({'t': 'out', 'data': '\\ud800' * 3}).encode())\n1")
    assert forged_out.ok and forged_out.value["stdout"] == "\\ud800" * 3

    assert block("1 + 1").value["value"] == "2"  # the sandbox carries on
    summary = trial.finish("agent_stopped")
    assert summary.termination == "agent_stopped"

    events = session_events(path)
    blocks = [e for e in events if e["event"] == "tool_call" and e["tool"] == "exec_code"]
    assert len(blocks) == 12 and all(isinstance(b["result"], dict) for b in blocks)
    assert [b["error_code"] for b in blocks[-5:]] == ["limit_protocol"] * 3 + [None, None]
    assert blocks[4]["args"] == {"code": "x = '\ud800'"}  # the code as sent
    children = [e for e in events if e["event"] == "tool_call" and e["parent"] is not None]
    assert [c["error_code"] for c in children] == ["invalid_arguments"] * 5
    assert children[1]["args"] == {"query": "\ud800"}
    timeline = Timeline(read_session(path))
    try:
        assert timeline.check() is None
    finally:
        timeline.close()


# -- the model, through the real litellm client --------------------------------------------


@pytest.mark.parametrize("code", [False, True], ids=["tools", "code"])
def test_a_model_sending_hostile_calls_is_answered_and_scored_not_an_infra_error(tmp_path, monkeypatch, code):
    from ebench.sessions.batch import Batch
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.runs import load_run
    from ebench.sessions.solvers.llm import LLMSolver
    from ebench.sessions.trial import TrialLimits
    from ebench.tasks.suite import load_suite
    from ebench.testing.fake_openai import FakeOpenAI, Script, completion

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")
    [task] = load_suite(ids=["moba-0024"]).tasks
    # litellm parses the reply's arguments itself (json.loads): arguments nested thousands deep or
    # a number of 5,000 digits fail inside litellm, before ebench sees the reply; a Trial meets
    # them in the tests above.
    deep = "[" * 100 + "]" * 100
    calls = [
        ("\ud800", {}),
        ("search_heroes\x00", {}),
        ("x" * 1_000_000, {}),
        ("search_heroes", '{"query": "\\ud800"}'),
        ("search_heroes", '{"query": "a\\u0000"}'),
        ("search_heroes", deep),
        ("search_heroes", '{"query": ' + deep + "}"),
        ("search_heroes", {"query": "y" * 2_000_000}),
    ]
    if code:
        calls = [
            ("exec_code", {"code": "print('\\ud800 \\x00 \\u2028')\nsearch_heroes(query='\\ud800')"}),
            ("exec_code", {"code": FORGE + "forge(b'[' * 3_000_000)\nimport time\ntime.sleep(5)"}),
        ]
    script = Script([completion("thinking \ud800 \x00 \u2028 " + "w" * 1_000_000, calls), completion("done")])
    with FakeOpenAI(script) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=1, backoff=0.01))
        batch = Batch(tmp_path, [task], solver, 1, code=code, limits=TrialLimits())
        batch.prepare()
        asyncio.run(batch.run(concurrency=1))
    [result] = load_run(tmp_path).results
    assert result.termination == "agent_stopped" and not result.infra_error and result.error is None
    assert result.tool_calls == len(calls) and result.turns == 2
    events = session_events(tmp_path / result.session)
    recorded = [e for e in events if e["event"] == "tool_call" and e["parent"] is None]
    assert len(recorded) == len(calls) and not any(e["event"] == "api_error" for e in events)
    if code:
        assert [e["error_code"] for e in recorded] == ["code_error", "limit_protocol"]
        assert recorded[0]["result"]["stdout"] == "\\ud800 \x00 \u2028\n"
    else:
        assert all(e["error_code"] in ("unknown_tool", "invalid_arguments") for e in recorded)
    # every result went back to the model in the next request, as valid JSON
    answers = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert len(answers) == len(calls) and all(json.loads(m["content"]) for m in answers)
    assert set(result.tool_errors) <= {"unknown_tool", "invalid_arguments", "code_error", "limit_protocol"}
