"""`ebench play --web`: a real headless browser (Debian's chromium) opens the served page and its
terminal shows the task browser; Ctrl+C stops the server cleanly; the help documents the option;
a port in use is a one-line error."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ebench.tasks.suite import load_suite

# Only a hang reaches this, however loaded the machine: every wait below is for a condition.
SAFETY_SECONDS = 120.0

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # The page links a web font: every name but the loopback resolves to nothing, so no test reaches the network.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--window-size=1280,800",
    "--remote-debugging-port=0",
]

# Runs in the page, on every object there (CDP's queryObjects): textual-serve keeps its xterm.js
# terminal in a closure, and its renderer draws on a canvas, so the text is read from the
# terminal's buffer. Resolves once the screen shows the browser's title and one of `ids`.
SHOWS_THE_TASK_BROWSER = """
function (ids) {
  const isTerminal = (o) => { try { return typeof o.onWriteParsed === 'function' && typeof o.buffer.active.getLine === 'function'; } catch (e) { return false; } };
  const terminal = this.find(isTerminal);
  if (!terminal) return Promise.reject(new Error('no xterm.js terminal on the page'));
  const screen = () => {
    const buffer = terminal.buffer.active, rows = [];
    for (let y = 0; y < terminal.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
    return rows.join('\\n');
  };
  return new Promise((resolve) => {
    const check = () => { const text = screen(); if (text.includes('Tasks') && ids.some((id) => text.includes(id))) resolve(text); };
    terminal.onWriteParsed(check);
    check();
  });
}
"""


def chromium() -> str:
    found = shutil.which("chromium")
    # Not a skip: CI runs this test (.ci/run installs chromium on a machine without it).
    assert found, "chromium is not installed: apt-get install chromium (Debian's package), as .ci/run does"
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ebench(*args: str) -> list[str]:
    return [sys.executable, "-m", "ebench", *args]


class DevTools:
    """A minimal Chrome DevTools Protocol client over one websocket: commands and their answers, and
    the events, in order."""

    def __init__(self, websocket: aiohttp.ClientWebSocketResponse) -> None:
        self.websocket = websocket
        self.ids = itertools.count(1)
        self.answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def read(self) -> None:
        async for message in self.websocket:
            data = json.loads(message.data)
            if "id" in data:
                self.answers.pop(data["id"]).set_result(data)
            else:
                self.events.put_nowait(data)

    async def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        number = next(self.ids)
        self.answers[number] = asyncio.get_running_loop().create_future()
        await self.websocket.send_json({"id": number, "method": method, "params": params} | ({"sessionId": session} if session else {}))
        answer = await self.answers[number]
        assert "error" not in answer, f"{method}: {answer['error']}"
        return answer["result"]

    async def event(self, method: str) -> dict[str, Any]:
        while (event := await self.events.get())["method"] != method:
            pass
        return event


@contextlib.asynccontextmanager
async def headless_chromium(profile: Path) -> AsyncIterator[DevTools]:
    browser = await asyncio.create_subprocess_exec(
        chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank", stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        assert browser.stderr is not None
        while not (listening := re.search(rb"DevTools listening on (ws://\S+)", line := await browser.stderr.readline())):
            assert line, "chromium ended before it listened for DevTools"
        async with aiohttp.ClientSession() as http, http.ws_connect(listening[1].decode(), max_msg_size=0) as websocket:
            devtools = DevTools(websocket)
            reader = asyncio.create_task(devtools.read())
            try:
                yield devtools
            finally:
                reader.cancel()
    finally:
        os.killpg(browser.pid, signal.SIGTERM)  # the browser and its helper processes
        await browser.wait()


async def terminal_text(devtools: DevTools, url: str, task_ids: list[str]) -> str:
    """Open `url` in a new tab; the text of its terminal once it shows the task browser."""
    target = await devtools.send("Target.createTarget", url="about:blank")
    tab = (await devtools.send("Target.attachToTarget", targetId=target["targetId"], flatten=True))["sessionId"]
    await devtools.send("Page.enable", tab)
    await devtools.send("Page.navigate", tab, url=url)
    await devtools.event("Page.loadEventFired")  # the page's onload has made the terminal and is connecting
    prototype = (await devtools.send("Runtime.evaluate", tab, expression="Object.prototype"))["result"]["objectId"]
    objects = (await devtools.send("Runtime.queryObjects", tab, prototypeObjectId=prototype))["objects"]["objectId"]
    shown = await devtools.send(
        "Runtime.callFunctionOn",
        tab,
        objectId=objects,
        functionDeclaration=SHOWS_THE_TASK_BROWSER,
        arguments=[{"value": task_ids}],
        awaitPromise=True,
        returnByValue=True,
    )
    assert "exceptionDetails" not in shown, shown["exceptionDetails"]
    return shown["result"]["value"]


@pytest.mark.parametrize(
    "interrupt",
    [
        pytest.param(lambda pid: os.killpg(pid, signal.SIGINT), id="ctrl-c-in-its-terminal"),  # the server and the tab's app
        pytest.param(lambda pid: os.kill(pid, signal.SIGINT), id="sigint-to-the-server-alone"),  # the server closes the tab
    ],
)
async def test_a_browser_shows_the_task_browser_and_ctrl_c_stops_the_server(tmp_path: Path, interrupt: Callable[[int], None]) -> None:
    task_ids = [task.id for task in load_suite().tasks]
    port = free_port()
    async with asyncio.timeout(SAFETY_SECONDS):
        server = await asyncio.create_subprocess_exec(
            *ebench("play", "--web", "--port", str(port)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        try:
            assert server.stdout is not None
            announced = (await server.stdout.readline()).decode()
            # The URL with its token, as printed: the browser swaps it for the cookie the websocket then carries.
            url = re.search(rf"http://127\.0\.0\.1:{port}/\?token=[\w-]+", announced)
            assert url, announced
            async with headless_chromium(tmp_path / "profile") as devtools:
                text = await terminal_text(devtools, url[0], task_ids)
                interrupt(server.pid)  # with the tab still open
                out, err = await server.communicate()
        finally:
            if server.returncode is None:
                os.killpg(server.pid, signal.SIGKILL)
                await server.wait()
    assert "Tasks" in text and any(task_id in text for task_id in task_ids)
    assert server.returncode == 0, err.decode()
    assert b"Traceback" not in out + err and err == b""


def test_the_help_documents_web() -> None:
    done = subprocess.run(
        ebench("play", "--help"), capture_output=True, text=True, timeout=SAFETY_SECONDS, env=os.environ | {"COLUMNS": "200"}
    )
    assert done.returncode == 0
    for option in ("--web", "--host", "--port", "--max-tabs"):
        assert option in done.stdout
    assert "web page" in done.stdout


def test_a_port_in_use_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(ebench("play", "--web", "--port", str(port)), capture_output=True, text=True, timeout=SAFETY_SECONDS)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"error: cannot serve on 127.0.0.1:{port}: Address already in use; choose another --port"]


def test_host_and_port_without_web_are_a_usage_error() -> None:
    done = subprocess.run(ebench("play", "--port", "9000"), capture_output=True, text=True, timeout=SAFETY_SECONDS)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --host and --port apply to --web"]


async def test_each_tab_runs_ebench_play_with_the_same_options_but_web(request: pytest.FixtureRequest) -> None:
    task = load_suite().tasks[0]
    request.getfixturevalue(f"{task.domain}_world")  # built here, not by the server before it listens
    port = free_port()
    args = ["--task", task.id, "--code", "--theme", "ebench-light", "--tasks-dir", "fixtures/tasks"]
    async with asyncio.timeout(SAFETY_SECONDS):
        server = await asyncio.create_subprocess_exec(
            *ebench("play", "--web", "--port", str(port), *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            cwd=Path(__file__).parent,
        )
        assert server.stdout is not None
        announced = (await server.stdout.readline()).decode()
        os.killpg(server.pid, signal.SIGINT)
        await server.communicate()
    tasks_dir = Path(__file__).parent / "fixtures" / "tasks"
    served = f"ebench play --task {task.id} --tasks-dir {tasks_dir} --theme ebench-light --code"
    assert re.fullmatch(
        rf"ebench in the browser: http://127\.0\.0\.1:{port}/\?token=[\w-]+, each tab running {re.escape(served)} \(Ctrl\+C stops\)",
        announced.strip(),
    ), announced
    assert server.returncode == 0
