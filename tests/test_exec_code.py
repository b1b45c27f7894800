"""exec_code: the domain tools as functions in a sandboxed worker, on a real world copy."""

from __future__ import annotations

import inspect
import json

import pytest
from typer.testing import CliRunner

from ebench.sessions.sandbox import EXEC_CODE_TOOL, ExecCode, ExecResult, Limits


@pytest.fixture
def music_env(music, music_conn):
    return music.env(music_conn, 1)


@pytest.fixture
def runner(music, music_env):
    with ExecCode(
        lambda n, a: music.tools.call(music_env, n, a),
        music.tools,
        limits=Limits(wall_seconds=10, tool_calls=40, output_chars=100_000, memory_mb=512),
    ) as ex:
        yield ex


def dump(conn) -> bytes:
    return conn.serialize()


def test_every_tool_is_a_function_with_the_tools_signature(music, runner):
    code = "import inspect, json\njson.dumps({n: str(inspect.signature(f)) for n, f in globals().items() if callable(f) and getattr(f, '__module__', '') == 'tools'})"
    result = runner.run(code)
    assert result.ok, result.error
    sigs = json.loads(eval(result.value))
    assert set(sigs) == set(music.tools.names)
    for tool in music.tools:
        expected = inspect.Signature(
            [
                inspect.Parameter(
                    p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=inspect.Parameter.empty if p.required else p.default
                )
                for p in tool.params
            ]
        )
        assert sigs[tool.name] == str(expected)


def test_results_equal_direct_registry_calls(music, music_env, runner):
    result = runner.run("a = search_songs(page=2)\nb = get_my_profile()\nimport json\njson.dumps([a, b])")
    assert result.ok, result.error
    a, b = json.loads(eval(result.value))
    assert a == json.loads(music.tools.call(music_env, "search_songs", {"page": 2}).to_json())
    assert b == json.loads(music.tools.call(music_env, "get_my_profile", {}).to_json())


def test_positional_arguments_bind_like_the_signature(music, music_env, runner):
    song = music.tools.call(music_env, "search_songs", {}).value["items"][0]
    result = runner.run(f"get_song({song['song_id']})['song_id']")
    assert result.ok and result.value == str(song["song_id"])
    assert result.calls[0].args == {"song_id": song["song_id"]}
    bad = runner.run("get_song(1, 2, 3)")
    assert not bad.ok and "TypeError" in bad.error and "get_song()" in bad.error and bad.calls == []


def test_tool_errors_raise_toolerror_with_the_code(runner):
    result = runner.run("try:\n    get_song(99999999)\nexcept ToolError as e:\n    print(e.code, '|', e.message)")
    assert result.ok and result.stdout.startswith("not_found | ")
    uncaught = runner.run("get_song(99999999)")
    assert not uncaught.ok and "ToolError: [not_found]" in uncaught.error
    assert uncaught.calls[0].ok is False and uncaught.calls[0].error_code == "not_found"


def test_help_shows_the_tool_description(music, runner):
    result = runner.run("help(search_songs)")
    assert result.ok and music.tools.get("search_songs").summary[:40] in " ".join(result.stdout.split())


def test_print_output_and_last_expression_value(runner):
    result = runner.run("print('hello')\nx = [1, 2]\nx + [3]")
    assert (result.ok, result.stdout, result.value) == (True, "hello\n", "[1, 2, 3]")
    assert runner.run("x = 1").value is None
    payload = runner.run("print(1)\n'a'").to_payload()
    assert payload == {"ok": True, "stdout": "1\n", "value": "'a'", "tool_calls": 0}


def test_no_state_between_blocks(runner):
    assert runner.run("secret = 41").ok
    result = runner.run("secret + 1")
    assert not result.ok and "NameError" in result.error


def test_syntax_errors_and_exceptions_have_a_trimmed_traceback(runner):
    result = runner.run("x = 1\ndef f(:\n    pass")
    assert not result.ok and "SyntaxError" in result.error and "line 2" in result.error
    result = runner.run("def inner():\n    return {}['k']\n\ninner()")
    assert not result.ok
    assert "line 4, in <module>" in result.error and "line 2, in inner" in result.error
    assert "KeyError: 'k'" in result.error
    assert "worker" not in result.error and ".py" not in result.error
    result = runner.run("import json\njson.loads('{')")
    assert "JSONDecodeError" in result.error and "json/" not in result.error


def test_time_limit_then_next_block_works(music, music_env):
    with ExecCode(lambda n, a: music.tools.call(music_env, n, a), music.tools, limits=Limits(wall_seconds=1.5)) as ex:
        result = ex.run("print('start')\nwhile True:\n    pass")
        assert (result.ok, result.limit) == (False, "time") and "Time limit" in result.error
        assert 1.4 < result.seconds < 5
        assert ex.run("1 + 1").value == "2"


def test_memory_limit_then_next_block_works(runner):
    for code in ("x = 'a' * 10**10", "x = []\nwhile True:\n    x.append(' ' * 10**6)"):
        result = runner.run(code)
        assert (result.ok, result.limit) == (False, "memory") and "Memory limit" in result.error
    assert runner.run("2 + 2").value == "4"


def test_output_limit_truncates_with_a_marker_then_next_block_works(music, music_env):
    with ExecCode(lambda n, a: music.tools.call(music_env, n, a), music.tools, limits=Limits(output_chars=5000)) as ex:
        _output_limit(ex)


def _output_limit(runner):
    result = runner.run("for i in range(10**6):\n    print('line', i)")
    assert (result.ok, result.limit) == (False, "output") and "Output limit" in result.error
    assert len(result.stdout) < 5200 and result.stdout.endswith("characters were printed]")
    big = runner.run("'x' * 100000")
    assert big.ok and big.value.endswith("characters in all]") and len(big.value) < 5200
    assert runner.run("print('ok')").stdout == "ok\n"


def test_tool_call_limit_then_next_block_works(runner):
    result = runner.run("for i in range(100):\n    get_my_profile()")
    assert (result.ok, result.limit) == (False, "tool_calls") and "at most 40" in result.error
    assert len(result.calls) == 40
    # catching the limit does not let the block go on calling
    result = runner.run(
        "n = 0\nfor i in range(100):\n    try:\n        get_my_profile(); n += 1\n    except BaseException:\n        pass\nprint(n)"
    )
    assert result.limit == "tool_calls" and len(result.calls) == 40
    assert runner.run("get_my_profile()['user_id']").ok


def test_calls_and_on_call_record_every_call_in_order(runner):
    seen = []
    result = runner.run("get_my_profile()\nsearch_songs(page=3)\ntry:\n    get_song(-5)\nexcept ToolError:\n    pass", on_call=seen.append)
    assert [c.tool for c in result.calls] == ["get_my_profile", "search_songs", "get_song"]
    assert seen == result.calls
    assert [c.index for c in result.calls] == [1, 2, 3]
    assert result.calls[1].args == {"page": 3} and result.calls[1].ok and result.calls[1].result["page"] == 3
    assert result.calls[2].ok is False and "error" in result.calls[2].result
    assert all(c.seconds >= 0 for c in result.calls)


def test_writes_through_tools_change_the_copy_like_direct_calls(music, music_conn, music_world):
    from ebench.engine.world import scratch_copy

    env = music.env(music_conn, 1)
    code = (
        "pl = create_playlist(name='Sandbox mix')\n"
        "songs = search_songs(page=1)['items'][:3]\n"
        "pid = pl.get('playlist_id') or pl.get('id') or pl['playlist']['playlist_id']\n"
        "for s in songs:\n    add_song_to_playlist(pid, s['song_id'])\n"
        "pl"
    )
    with ExecCode(lambda n, a: music.tools.call(env, n, a), music.tools) as ex:
        result = ex.run(code)
    assert result.ok, result.error
    assert len(result.calls) == 5 and all(c.ok for c in result.calls)
    direct_conn = scratch_copy(music_world)
    direct_env = music.env(direct_conn, 1)
    for call in result.calls:
        assert music.tools.call(direct_env, call.tool, call.args).ok == call.ok
    assert dump(music_conn) == dump(direct_conn)


def test_a_worker_that_dies_gives_a_clear_error(runner):
    result = runner.run("print('before')\nimport os\nos._exit(3)")
    assert (result.ok, result.limit) == (False, "crash") and "died" in result.error and "status 3" in result.error
    result = runner.run("import faulthandler\nfaulthandler._sigsegv()")
    assert not result.ok
    assert runner.run("'alive'").value == "'alive'"


def test_isolation_reports_the_layers(runner):
    layers = runner.isolation
    assert layers["audit_hook"] is True
    assert set(layers) >= {"audit_hook", "rlimits", "netns", "landlock", "seccomp", "no_new_privs"}


def test_audit_hook_alone_is_enough_for_the_basics(music, music_env):
    with ExecCode(lambda n, a: music.tools.call(music_env, n, a), music.tools, layers=()) as ex:
        # the resource limits are the block's limits, not a layer: they hold in every mode
        assert {k for k, v in ex.isolation.items() if v} == {"audit_hook", "rlimits"}
        assert ex.run("get_my_profile()['user_id']").ok
        assert ex.run("open('/etc/hostname').read()").limit == "forbidden"


def test_exec_code_tool_schema():
    fn = EXEC_CODE_TOOL["function"]
    assert fn["name"] == "exec_code" and fn["parameters"]["required"] == ["code"]
    assert "persist" in fn["description"] and "ToolError" in fn["description"]


def test_tool_schema_lists_the_functions(music, runner):
    description = runner.tool_schema()["function"]["description"]
    assert "search_songs(" in description and "get_song(song_id" in description


def test_code_size_limit(runner):
    result = runner.run("#" * 300_000)
    assert (result.ok, result.limit) == (False, "code_size")
    assert isinstance(result, ExecResult)


def test_cli_tools_exec(tmp_path, music_world):
    from ebench.cli import app

    cli = CliRunner()
    script = tmp_path / "block.py"
    script.write_text("print('profile', get_my_profile()['user_id'])\nlen(search_songs()['items'])\n")
    result = cli.invoke(app, ["tools", "exec", "--domain", "music", "--actor", "1", str(script)])
    assert result.exit_code == 0, result.output
    assert "profile 1" in result.output and "get_my_profile" in result.output and "value:" in result.output
    result = cli.invoke(app, ["tools", "exec", "-d", "music", "-a", "1", "-", "--json"], input="get_song(99999999)")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["calls"][0]["error_code"] == "not_found"


def test_the_protocol_refuses_frames_too_deep_for_json_and_escapes_lone_surrogates():
    from ebench.sessions.sandbox.protocol import FrameReader, ProtocolError, clean_text, decode

    for raw in (
        b"[" * 100_000,
        b'{"t": "out", "data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"t": "call", "id": ' + b"9" * 5000 + b', "tool": "x", "args": {}}',
        b"\xff\xfe",
    ):
        with pytest.raises(ProtocolError):
            decode(raw)
    with pytest.raises(ProtocolError, match="nested too deeply"):
        FrameReader(4_000_000).feed(len(b"[" * 100_000).to_bytes(4, "big") + b"[" * 100_000)
    # a lone surrogate arrives through the pipe (surrogatepass) and leaves as its escape
    frame = '{"t": "out", "data": "a\ud800"}'.encode("utf-8", "surrogatepass")  # as the worker sends it
    assert decode(frame)["data"] == "a\ud800"
    assert clean_text("a\ud800b\udfff") == "a\\ud800b\\udfff" and clean_text("🎵 ok") == "🎵 ok"
