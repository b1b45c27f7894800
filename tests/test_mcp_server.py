"""`ebench mcp serve` with the real MCP client over stdio (a server process per test)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.domain_registry import get_domain
from ebench.engine.world import scratch_copy
from ebench.sessions.record import read_session
from ebench.tasks.spec import load_task, resolve_args
from ebench.tasks.suite import find_task


def _params(*args: str, home: Path) -> StdioServerParameters:
    env = {"EBENCH_HOME": str(home), "LITELLM_OFFLINE_MODE": "true", "EBENCH_TASKS": os.environ["EBENCH_TASKS"]}
    return StdioServerParameters(command=sys.executable, args=["-m", "ebench", "mcp", "serve", *args], env=env)


def run_client(args: list[str], home: Path, script, errlog: Path | None = None):
    """Start a server, run `script(session)` against it, and return what the script returns."""

    async def main():
        with open(errlog or os.devnull, "w", encoding="utf-8") as err:
            async with stdio_client(_params(*args, home=home), errlog=err) as streams, ClientSession(*streams) as session:
                init = await session.initialize()
                return await script(session, init)

    return anyio.run(main)


def _sessions(home: Path, task_id: str) -> set[Path]:
    """The MCP sessions recorded so far for a task (other tests may add theirs to the same folder)."""
    return set((home / "sessions").glob(f"*-{task_id}-mcp*.jsonl"))


def _payload(result) -> object:
    return json.loads(result.content[0].text)


@pytest.mark.parametrize("domain", ["music", "moba"])
def test_the_tool_list_matches_the_registry(domain, ebench_home, request):
    request.getfixturevalue(f"{domain}_world")
    actor = 1 if domain == "music" else 164

    async def script(session, init):
        return init, (await session.list_tools()).tools

    init, tools = run_client(["--domain", domain, "--actor", str(actor)], ebench_home, script)
    registry = get_domain(domain).tools
    assert [t.name for t in tools] == registry.names
    for served in tools:
        tool = registry.get(served.name)
        assert served.description == tool.description
        assert served.input_schema == tool.parameters
    assert init.server_info.name == f"ebench-{domain}"
    assert get_domain(domain).now in init.instructions  # the solver is told the frozen time


def test_calls_answer_like_the_registry_and_errors_are_structured(music, music_world, ebench_home):
    conn = scratch_copy(music_world)
    expected = music.tools.call(music.env(conn, 1), "search_songs", {"query": "rain", "sort_by": "most_played"}).payload()
    conn.close()

    async def script(session, init):
        ok = await session.call_tool("search_songs", {"query": "rain", "sort_by": "most_played"})
        wrong_type = await session.call_tool("search_songs", {"page": "two"})
        unknown_arg = await session.call_tool("get_song", {"song_id": 1, "colour": "red"})
        missing = await session.call_tool("get_song", {})
        refused = await session.call_tool("delete_playlist", {"playlist_id": 10**9})
        unknown_tool = await session.call_tool("drop_everything", {})
        return ok, wrong_type, unknown_arg, missing, refused, unknown_tool

    ok, wrong_type, unknown_arg, missing, refused, unknown_tool = run_client(["--domain", "music", "--actor", "1"], ebench_home, script)
    assert not ok.is_error and _payload(ok) == expected
    # every result is sent once, as JSON text (which every client reads): no structured copy
    assert all(len(r.content) == 1 and r.structured_content is None for r in (ok, wrong_type, refused, unknown_tool))
    for result, code in (
        (wrong_type, "invalid_arguments"),
        (unknown_arg, "invalid_arguments"),
        (missing, "invalid_arguments"),
        (refused, "not_found"),
    ):
        assert result.is_error and _payload(result)["error"]["code"] == code, result
    # an unknown tool is answered by the registry too: the same structured error, not the SDK's plain text
    assert unknown_tool.is_error and _payload(unknown_tool)["error"]["code"] == "unknown_tool"
    assert "drop_everything" in unknown_tool.content[0].text


def test_writes_stay_on_the_servers_private_copy(music, music_world, ebench_home):
    before = music_world.read_bytes()

    async def create(session, init):
        made = await session.call_tool("create_playlist", {"name": "Made over MCP"})
        again = await session.call_tool("create_playlist", {"name": "Made over MCP"})  # same server: a conflict
        return made, again

    made, again = run_client(["--domain", "music", "--actor", "1"], ebench_home, create)
    assert not made.is_error and _payload(made)["name"] == "Made over MCP"
    assert again.is_error and _payload(again)["error"]["code"] == "conflict"
    # A new server starts from the world again: the playlist is gone, and the file never changed.
    made_again, _ = run_client(["--domain", "music", "--actor", "1"], ebench_home, create)
    assert not made_again.is_error
    assert music_world.read_bytes() == before


def test_prompts_and_resources_describe_the_domain_and_the_task(ebench_home, meeting_world):
    task = load_task(find_task("meeting-0001"))

    async def script(session, init):
        prompts = (await session.list_prompts()).prompts
        resources = (await session.list_resources()).resources
        task_prompt = await session.get_prompt("task")
        task_resource = await session.read_resource(f"ebench://task/{task.id}")
        description = await session.read_resource("ebench://meeting/description")
        return prompts, resources, task_prompt, task_resource, description

    prompts, resources, task_prompt, task_resource, description = run_client(["--task", task.id], ebench_home, script)
    assert {p.name for p in prompts} == {"domain_description", "task"}
    assert {str(r.uri) for r in resources} == {"ebench://meeting/description", f"ebench://task/{task.id}"}
    prompt_text = task_prompt.messages[0].content.text
    assert task.query in prompt_text and "Tencent Meeting" in prompt_text
    assert task_resource.contents[0].text == task.query
    assert "Rules of the product" in description.contents[0].text
    everything = prompt_text + task_resource.contents[0].text + description.contents[0].text
    assert "expected_diff" not in everything and "reference_solution" not in everything


def _solve(task, steps_to_run):
    async def script(session, init):
        results = []
        for step in steps_to_run:
            result = await session.call_tool(step.tool, resolve_args(step.args, results))
            assert not result.is_error, result
            results.append(_payload(result))
        return len(results)

    return script


@pytest.mark.parametrize("task_id", ["moba-0001", "music-0005"])
def test_a_task_solved_through_mcp_passes_and_an_incomplete_one_fails(task_id, ebench_home, tmp_path, request):
    task = load_task(find_task(task_id))
    request.getfixturevalue(f"{task.domain}_world")
    solved_log, partial_log = tmp_path / "solved.log", tmp_path / "partial.log"
    before = _sessions(ebench_home, task.id)
    run_client(["--task", task.id], ebench_home, _solve(task, task.reference_solution), errlog=solved_log)
    run_client(["--task", task.id], ebench_home, _solve(task, task.reference_solution[:-1]), errlog=partial_log)
    assert f"task {task.id}: PASS" in solved_log.read_text()
    assert f"task {task.id}: FAIL" in partial_log.read_text()
    # both trials are recorded as sessions, the solver named after the MCP client
    sessions = [read_session(p) for p in sorted(_sessions(ebench_home, task.id) - before)]
    assert len(sessions) == 2 and all(s.finished for s in sessions)
    assert sorted(s.end.summary.passed for s in sessions) == [False, True]
    assert {s.end.summary.solver for s in sessions} == {"mcp:mcp"}  # the SDK client's default name
    calls = [len(list(s.tool_calls())) for s in sessions]
    assert sorted(calls) == [len(task.reference_solution) - 1, len(task.reference_solution)]
    # ... and they show in `ebench report`, like a run's trials
    report = CliRunner().invoke(app, ["report", str(ebench_home / "sessions"), "--json"])
    assert report.exit_code == 0, report.output
    [run] = [r for r in json.loads(report.stdout)["runs"] if r["label"] == "mcp:mcp"]
    assert run["metrics"]["domains"][task.domain]["trials"] >= 2


def test_a_fresh_data_directory_builds_the_world_without_touching_stdout(tmp_path):
    """The server builds a missing world first: if anything reached stdout the protocol would break."""

    async def script(session, init):
        return await session.call_tool("get_my_profile", {})

    profile = run_client(["--domain", "moba", "--actor", "3"], tmp_path / "home", script)
    assert not profile.is_error and _payload(profile)["player_id"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--domain", "music"], "give --actor"),
        ([], "give --domain"),
        (["--task", "music-9999"], "no task"),
        (["--task", "music-0001", "--domain", "moba"], "belongs to the music domain"),
        (["--domain", "cooking", "--actor", "1"], "unknown domain"),
        (["--domain", "music", "--actor", "999999"], "No listener with id 999999"),
    ],
)
def test_bad_invocations_are_one_line_errors(args, message, music_world):
    result = CliRunner().invoke(app, ["mcp", "serve", *args])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_code_mode_offers_exec_code_that_calls_the_tools_in_the_sandbox(music, music_world, ebench_home):
    async def script(session, init):
        names = [t.name for t in (await session.list_tools()).tools]
        block = await session.call_tool(
            "exec_code", {"code": ("made = create_playlist(name='From a block')\nprint(made['name'])\nlen(list_my_playlists()['items'])")}
        )
        again = await session.call_tool("create_playlist", {"name": "From a block"})  # the block's write is on this trial's copy
        escape = await session.call_tool("exec_code", {"code": f"open({str(music_world)!r}, 'rb').read(10)"})
        bad_args = await session.call_tool("exec_code", {"source": "1"})
        return names, block, again, escape, bad_args

    names, block, again, escape, bad_args = run_client(["--domain", "music", "--actor", "1", "--code"], ebench_home, script)
    assert names == [*music.tools.names, "exec_code"]
    payload = _payload(block)
    assert not block.is_error and payload["ok"] and payload["stdout"] == "From a block\n" and payload["tool_calls"] == 2
    assert again.is_error and _payload(again)["error"]["code"] == "conflict"
    assert escape.is_error and _payload(escape)["limit"] == "forbidden"
    assert bad_args.is_error and _payload(bad_args)["error"]["code"] == "invalid_arguments"


def test_a_code_mode_trial_records_block_calls_as_children_of_the_block(ebench_home, music_world):
    task = load_task(find_task("music-0020"))  # a task no other MCP test runs: their sessions share a folder

    async def script(session, init):
        steps = [{"tool": s.tool, "args": s.args} for s in task.reference_solution]
        code = (
            "import json\n"
            f"steps = json.loads({json.dumps(json.dumps(steps))})\n"
            "results = []\n"
            "def resolve(v):\n"
            "    if isinstance(v, dict) and '$from' in v:\n"
            "        out = results[v['$from']]\n"
            "        for part in (v.get('path') or '').split('.'):\n"
            "            out = out[part] if part else out\n"
            "        return out\n"
            "    return {k: resolve(x) for k, x in v.items()} if isinstance(v, dict) else v\n"
            "for s in steps:\n"
            "    results.append(globals()[s['tool']](**resolve(s['args'])))\n"
            "len(results)"
        )
        return await session.call_tool("exec_code", {"code": code})

    before = _sessions(ebench_home, task.id)
    block = run_client(["--task", task.id, "--code"], ebench_home, script)
    assert not block.is_error, _payload(block)
    [path] = _sessions(ebench_home, task.id) - before
    session = read_session(path)
    assert session.end.summary.passed and session.end.summary.exec_blocks == 1
    top = list(session.tool_calls(leaves=False))
    children = list(session.tool_calls(leaves=True))
    assert [c.tool for c in top] == ["exec_code"]
    assert [c.tool for c in children] == [s.tool for s in task.reference_solution]
    assert {c.parent for c in children} == {top[0].id}


def test_a_task_whose_user_holds_facts_offers_ask_user_and_acting_first_fails(ebench_home, tmp_path, music_world, monkeypatch):
    from ebench.tasks.asking import SPLIT_DIR

    monkeypatch.setenv("EBENCH_TASKS", str(SPLIT_DIR))
    task = load_task(SPLIT_DIR / "music" / "music-0003-ask.json")

    def solve(ask: bool):
        async def script(session, init):
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert "ask_user" in tools
            if ask:
                answer = _payload(await session.call_tool("ask_user", {"question": "What should the playlist be called?"}))
                assert answer == {"answer": "Call it 'Old Flames'."}
                bad = await session.call_tool("ask_user", {"question": 3})
                assert bad.is_error and _payload(bad)["error"]["code"] == "invalid_arguments"
            results = []
            for step in task.reference_solution:
                results.append(_payload(await session.call_tool(step.tool, resolve_args(step.args, results))))

        return script

    asked, guessed = tmp_path / "asked.log", tmp_path / "guessed.log"
    run_client(["--task", task.id], ebench_home, solve(True), errlog=asked)
    run_client(["--task", task.id], ebench_home, solve(False), errlog=guessed)
    assert f"task {task.id}: PASS" in asked.read_text()
    assert f"task {task.id}: FAIL" in guessed.read_text()
