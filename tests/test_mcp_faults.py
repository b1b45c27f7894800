"""MCP edge cases (issue 14, part 6): an unknown tool, a connection that makes no call, a stop signal.

The official MCP client (`ClientSession`) speaks to a server process the test starts itself, so
the test can signal it and wait for it to exit. Each test gives the server its own data directory
(sharing the built worlds), so that `ebench report` over its sessions folder sees only its trials.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.world import scratch_copy
from ebench.sessions.record import read_session
from ebench.tasks.spec import load_task, resolve_args
from ebench.tasks.suite import find_task

WAIT = 120  # seconds: a generous bound on waiting for an event, never a measure of speed


@pytest.fixture
def home(tmp_path: Path, ebench_home: Path, music_world: Path) -> Path:
    """A data directory of its own, with the session's built worlds."""
    private = tmp_path / "home"
    private.mkdir()
    (private / "worlds").symlink_to(ebench_home / "worlds", target_is_directory=True)
    return private


class Server:
    """`ebench mcp serve` as a subprocess of the test, and the official client session to it."""

    def __init__(self, process: anyio.abc.Process, session: ClientSession, stderr: Path) -> None:
        self.process = process
        self.session = session
        self.stderr = stderr

    async def disconnect(self) -> int:
        """Close the server's stdin, as a client leaving does, and wait for the server to exit."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        return await self.process.wait()

    async def stop(self, signum: int) -> int:
        """Send a signal (stdin still open) and wait for the server to exit."""
        self.process.send_signal(signum)
        return await self.process.wait()


@asynccontextmanager
async def served(args: list[str], home: Path, stderr: Path) -> AsyncIterator[Server]:
    env = {
        "EBENCH_HOME": str(home),
        "LITELLM_OFFLINE_MODE": "true",
        "EBENCH_TASKS": os.environ["EBENCH_TASKS"],
        "PATH": os.environ.get("PATH", ""),
    }
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    with stderr.open("w", encoding="utf-8") as err:
        process = await anyio.open_process([sys.executable, "-m", "ebench", "mcp", "serve", *args], env=env, stderr=err)

    async def read() -> None:  # newline-delimited JSON-RPC, as the SDK's stdio transport frames it
        assert process.stdout is not None
        async with to_client:
            pending = b""
            async for chunk in process.stdout:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    await to_client.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)))

    async def write() -> None:
        assert process.stdin is not None
        async with from_client:
            async for message in from_client:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await process.stdin.send(data.encode())
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the test closed stdin, or the server is gone

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            async with ClientSession(from_server, to_server) as session:
                await session.initialize()
                yield Server(process, session, stderr)
            tasks.cancel_scope.cancel()
    finally:
        if process.returncode is None:  # a failed test: never leave a server behind
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()


def run(script) -> object:
    async def main():
        with anyio.fail_after(WAIT):
            return await script()

    return anyio.run(main)


def sessions(home: Path) -> list:
    return [read_session(p) for p in sorted((home / "sessions").glob("*.jsonl"))]


def report(home: Path) -> dict:
    result = CliRunner().invoke(app, ["report", str(home / "sessions"), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def payload(result) -> object:
    return json.loads(result.content[0].text)


async def solve(server: Server, steps) -> None:
    results: list = []
    for step in steps:
        result = await server.session.call_tool(step.tool, resolve_args(step.args, results))
        assert not result.is_error, result
        results.append(payload(result))


# -- an unknown tool -------------------------------------------------------------------------------


def test_an_unknown_tool_gets_the_registrys_structured_error_and_is_recorded(home, music, music_world, tmp_path):
    task = load_task(find_task("music-0013"))
    conn = scratch_copy(music_world)
    env = music.env(conn, task.actor)
    expected = {name: music.tools.call(env, name, {}).payload() for name in ("drop_everything", "get_sogn")}
    conn.close()

    async def script():
        async with served(["--task", task.id], home, tmp_path / "err.log") as server:
            calls = {name: await server.session.call_tool(name, {}) for name in ("drop_everything", "get_sogn", "exec_code")}
            invalid = await server.session.call_tool("get_song", {"song_id": "one"})
            await server.disconnect()
            return calls, invalid

    calls, invalid = run(script)
    for name, result in calls.items():
        # the same shape as every other tool error: isError, the payload once, as JSON text
        assert result.is_error and result.structured_content is None and len(result.content) == 1, result
        assert set(payload(result)["error"]) == set(payload(invalid)["error"]) == {"code", "message"}
        assert payload(result)["error"]["code"] == "unknown_tool"
        if name in expected:
            assert payload(result) == expected[name]  # exactly the registry's answer
    assert "get_song" in payload(calls["get_sogn"])["error"]["message"]  # close names are suggested
    assert "code mode" in payload(calls["exec_code"])["error"]["message"]  # not served without --code
    assert invalid.is_error and payload(invalid)["error"]["code"] == "invalid_arguments"

    [session] = sessions(home)
    recorded = list(session.tool_calls(leaves=False))
    assert [(c.tool, c.error_code) for c in recorded] == [
        ("drop_everything", "unknown_tool"),
        ("get_sogn", "unknown_tool"),
        ("exec_code", "unknown_tool"),
        ("get_song", "invalid_arguments"),
    ]
    assert [c.result for c in recorded[:3]] == [payload(calls[name]) for name in calls]
    summary = session.end.summary
    assert summary is not None and summary.tool_calls == 4 and summary.tool_errors == {"invalid_arguments": 1, "unknown_tool": 3}
    [scored] = report(home)["runs"]
    assert scored["metrics"]["failures"]["unknown_tool"] == 1  # the failure breakdown names it


def test_an_unknown_tool_without_a_task_is_structured_too(home, tmp_path):
    async def script():
        async with served(["--domain", "music", "--actor", "1"], home, tmp_path / "err.log") as server:
            result = await server.session.call_tool("drop_everything", {"x": 1})
            await server.disconnect()
            return result

    result = run(script)
    assert result.is_error and payload(result)["error"]["code"] == "unknown_tool"
    assert not (home / "sessions").exists() or not list((home / "sessions").iterdir())  # no task, no session


# -- a connection that makes no tool call ----------------------------------------------------------


def test_a_connection_that_made_no_tool_call_is_abandoned_and_left_out_of_scores(home, tmp_path):
    task = load_task(find_task("music-0013"))

    async def look_and_leave():
        async with served(["--task", task.id], home, tmp_path / "looked.log") as server:
            await server.session.list_tools()
            await server.session.get_prompt("task")
            await server.session.read_resource(f"ebench://task/{task.id}")
            return await server.disconnect()

    async def solve_it():
        async with served(["--task", task.id], home, tmp_path / "solved.log") as server:
            await solve(server, task.reference_solution)
            return await server.disconnect()

    assert run(look_and_leave) == 0
    assert run(solve_it) == 0
    assert f"task {task.id}: abandoned" in (tmp_path / "looked.log").read_text()
    assert f"task {task.id}: PASS" in (tmp_path / "solved.log").read_text()

    abandoned, solved = sessions(home)  # in the order they were made
    assert abandoned.finished and abandoned.end.termination == "abandoned"
    assert abandoned.end.summary is None and abandoned.end.grade is None and abandoned.end.diff == []
    assert not list(abandoned.tool_calls())
    assert solved.end.summary.passed
    # the report over the folder holds the solved trial only: the abandoned connection is no trial of any solver
    [scored] = report(home)["runs"]
    assert scored["label"] == "mcp:mcp"
    overall = scored["metrics"]["overall"]
    assert (overall["trials"], overall["passes"], overall["infra_errors"]) == (1, 1, 0)


# -- stop signals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signum", "solved"),
    [
        (signal.SIGTERM, True),
        (signal.SIGINT, True),
        (signal.SIGTERM, False),
        (signal.SIGINT, False),
    ],
    ids=["SIGTERM-solved", "SIGINT-solved", "SIGTERM-no-call", "SIGINT-no-call"],
)
def test_a_stop_signal_grades_the_trial_and_writes_its_end_event(signum, solved, home, tmp_path):
    task = load_task(find_task("music-0013"))

    async def script():
        async with served(["--task", task.id], home, tmp_path / "err.log") as server:
            if solved:
                await solve(server, task.reference_solution)
            else:
                await server.session.list_tools()
            return await server.stop(signum)

    assert run(script) == -signum  # the server ends by the signal, after recording
    [session] = sessions(home)
    assert [e.event for e in session.events[-2:]] == ["signal", "end"]
    assert session.events[-2].signal == signal.Signals(signum).name
    log = (tmp_path / "err.log").read_text()
    assert "Traceback" not in log
    if solved:
        assert session.end.termination == "agent_stopped" and session.end.grade.passed
        assert session.end.summary.tool_calls == len(task.reference_solution)
        assert f"task {task.id}: PASS" in log
        assert report(home)["runs"][0]["metrics"]["overall"]["passes"] == 1
    else:
        assert session.end.termination == "abandoned" and session.end.summary is None
        assert f"task {task.id}: abandoned" in log


def test_a_call_in_flight_when_the_signal_comes_is_finished_and_recorded_first(home, tmp_path):
    """SIGTERM while an exec_code block runs: the block completes, its calls and its own event are
    recorded, its last write is in the graded diff, and the end event is the session's last line."""
    task = load_task(find_task("music-0013"))
    reads = 900  # many calls: the signal most likely comes mid-block (the assertions hold either way)
    code = f"for i in range({reads}):\n    get_my_profile()\ncreate_playlist(name='Made after the signal')['name']"

    async def script():
        async with served(["--task", task.id, "--code"], home, tmp_path / "err.log") as server:

            async def block() -> None:
                with suppress(MCPError):  # the server may end before it answers: what counts is the session
                    await server.session.call_tool("exec_code", {"code": code})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(block)
                [path] = await wait_for_files(home / "sessions")
                while '"parent":"call-1"' not in path.read_text(encoding="utf-8"):  # the block is running
                    await anyio.sleep(0.01)
                status = await server.stop(signal.SIGTERM)
                tasks.cancel_scope.cancel()
            return status

    assert run(script) == -signal.SIGTERM
    [session] = sessions(home)
    assert session.events[-1].event == "end"
    [top] = list(session.tool_calls(leaves=False))
    assert top.tool == "exec_code" and top.ok, top
    children = list(session.tool_calls(leaves=True))
    assert len(children) == reads + 1 == top.result["tool_calls"]
    assert any(row["table"] == "playlists" and row["op"] == "insert" for row in session.end.diff)
    assert session.end.summary.exec_blocks == 1 and session.end.summary.inner_calls == reads + 1


async def wait_for_files(folder: Path) -> list[Path]:
    while not (found := sorted(folder.glob("*.jsonl"))):
        await anyio.sleep(0.01)
    return found
