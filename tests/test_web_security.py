"""`ebench play --web` is for its owner only (issue 28): a real server on 127.0.0.1, attacked as a
page from another site, a DNS-rebinding page and a visitor without the token would. Without its
token nothing is served; a foreign Origin or Host is refused; tabs beyond --max-tabs are refused
and start no app; /static/ lists nothing; the page connects to the address the browser used; a
non-loopback --host is warned about; a tab's attempts record that they came through the web."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import aiohttp
import pytest
from yarl import URL

from ebench.app.web import exposure_warning, host_allowed, origin_allowed, split_host_header
from ebench.sessions.attempts import TERMINAL, VIA_VARIABLE, WEB, attempt_via, human_trial, latest_attempts, recorded_trial
from ebench.sessions.record import read_session
from ebench.sessions.trial import AGENT_STOPPED
from ebench.tasks.suite import load_suite

# Only a hang reaches this, however loaded the machine: every wait below is for a condition.
SAFETY_SECONDS = 120.0
ANNOUNCED = re.compile(r"^ebench in the browser: http://(?P<host>\S+):(?P<port>\d+)/\?token=(?P<token>[A-Za-z0-9_-]+), ")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def read_line(stream: IO[str], deadline: float) -> str:
    """One line of a child's pipe; the deadline only catches a hang."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        assert selector.select(max(0.0, deadline - time.monotonic())), "the server printed nothing"
    return stream.readline()


@dataclass
class Served:
    process: subprocess.Popen[str]
    port: int
    token: str
    announced: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cookie(self) -> dict[str, str]:
        return {"Cookie": f"ebench-token-{self.port}={self.token}"}


@contextlib.contextmanager
def web_server(*options: str) -> Iterator[Served]:
    """`ebench play --web` in its own process group, yielded once it listens; Ctrl+C (SIGINT to the group) stops it."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "ebench", "play", "--web", "--port", str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        announced = read_line(process.stdout, time.monotonic() + SAFETY_SECONDS)  # printed once it listens
        found = ANNOUNCED.match(announced)
        assert found and int(found["port"]) == port, announced
        yield Served(process, port, found["token"], announced)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=SAFETY_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """One server for the module's attacks, capped at one tab."""
    with web_server("--max-tabs", "1") as server:
        yield server


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (read from /proc: the server's tabs' apps and their shells)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # ended meanwhile
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def environment(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


async def refused_websocket(http: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> tuple[int, str]:
    """The status and body of a websocket handshake the server refuses."""
    async with http.get(
        url,
        headers=headers
        | {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "x3JJHMbDL1EzLkh9GBhXDw=="},
    ) as response:
        return response.status, await response.text()


# --- the token ---------------------------------------------------------------------------------


async def test_nothing_is_served_without_the_token(served: Served) -> None:
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http:
        for path in ("/", "/ws", "/static/js/textual.js", "/download/anything", "/?token=not-the-token"):
            async with http.get(served.base + path) as response:
                assert response.status == 403, path
                assert response.content_type == "text/plain"
                assert "open the URL that `ebench play --web` printed" in await response.text()
        wrong_cookie = {"Cookie": f"ebench-token-{served.port}={served.token[:-1]}x"}
        async with http.get(served.base + "/", headers=wrong_cookie) as response:
            assert response.status == 403
        status, _ = await refused_websocket(http, served.base + "/ws", {})
        assert status == 403
    assert not descendants(served.process.pid)  # no app was started for any of them


async def test_the_token_sets_a_strict_cookie_and_leaves_the_url(served: Served) -> None:
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http:
        async with http.get(f"{served.base}/?token={served.token}&fontsize=12", allow_redirects=False) as response:
            assert response.status == 303
            assert response.headers["Location"] == "/?fontsize=12"  # the token leaves the address bar and the history
            set_cookie = response.headers["Set-Cookie"]
        assert set_cookie.startswith(f"ebench-token-{served.port}={served.token};")
        assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {part.strip() for part in set_cookie.split(";")}
        # The cookie alone opens the page from then on, and the page's files.
        async with http.get(served.base + "/", headers=served.cookie) as response:
            assert response.status == 200 and "data-session-websocket-url" in await response.text()
            assert response.headers["X-Frame-Options"] == "DENY"
        async with http.get(served.base + "/static/js/textual.js", headers=served.cookie) as response:
            assert response.status == 200
    # A browser-like client: opening the printed URL lands on the page, by the cookie.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
        async with browser.get(f"{served.base}/?token={served.token}") as response:
            assert response.status == 200 and response.url.query_string == ""
        async with browser.get(served.base + "/") as response:
            assert response.status == 200


def test_each_start_has_its_own_token(served: Served) -> None:
    with web_server() as other:
        assert other.token != served.token and len(other.token) >= 40


# --- Origin and Host ---------------------------------------------------------------------------

OPEN_A_WEBSOCKET = """
new Promise((resolve) => {
  const socket = new WebSocket(%s);
  socket.onopen = () => { resolve('opened'); socket.close(); };
  socket.onclose = () => resolve('refused');
})
"""


async def test_a_page_of_another_site_in_the_owners_browser_cannot_open_the_websocket(tmp_path: Path) -> None:
    """The attack itself: the owner has the app open (so the browser holds the cookie), and a page
    from another origin, in the same browser, opens the app's websocket. The cookie goes with it
    (another port of 127.0.0.1 is the same site for SameSite), and the Origin refuses it."""
    from aiohttp import web
    from test_app_web import headless_chromium, terminal_text

    async def elsewhere(request: web.Request) -> web.Response:
        return web.Response(text="<!doctype html><title>elsewhere</title>", content_type="text/html")

    attacker = web.Application()
    attacker.router.add_get("/", elsewhere)
    runner = web.AppRunner(attacker)
    await runner.setup()
    evil_port = free_port()
    await web.TCPSite(runner, "127.0.0.1", evil_port).start()
    try:
        with web_server() as server:
            async with asyncio.timeout(SAFETY_SECONDS), headless_chromium(tmp_path / "profile") as devtools:
                await terminal_text(
                    devtools, f"{server.base}/?token={server.token}", [task.id for task in load_suite().tasks]
                )  # the owner's tab shows the app
                apps = set(descendants(server.process.pid))
                socket_url = repr(f"ws://127.0.0.1:{server.port}/ws?width=80&height=24")
                for page, expected in ((f"http://127.0.0.1:{evil_port}/", "refused"), (f"{server.base}/static/css/xterm.css", "opened")):
                    target = await devtools.send("Target.createTarget", url="about:blank")
                    tab = (await devtools.send("Target.attachToTarget", targetId=target["targetId"], flatten=True))["sessionId"]
                    await devtools.send("Page.enable", tab)
                    await devtools.send("Page.navigate", tab, url=page)
                    await devtools.event("Page.loadEventFired")
                    outcome = await devtools.send("Runtime.evaluate", tab, expression=OPEN_A_WEBSOCKET % socket_url, awaitPromise=True)
                    assert outcome["result"]["value"] == expected, page
                    if expected == "refused":
                        assert set(descendants(server.process.pid)) == apps  # no app started for the other site
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1:{port}", "null", "http://localhost.evil.example:{port}"],
)
async def test_a_websocket_from_another_origin_is_refused(served: Served, origin: str) -> None:
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(served.base + "/ws", headers=served.cookie | {"Origin": origin.format(port=served.port)})
        assert refused.value.status == 403
        status, text = await refused_websocket(http, served.base + "/ws", served.cookie | {"Origin": origin.format(port=served.port)})
        assert status == 403 and "another site" in text
    assert not descendants(served.process.pid)


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "evil.example", "", "[::1:{port}", "127.0.0.1:x"])
async def test_a_request_for_another_host_is_refused(served: Served, host: str) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: its Host gives it away."""
    headers = served.cookie | {"Host": host.format(port=served.port)}
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http, http.get(served.base + "/", headers=headers) as response:
        assert response.status == 403
        assert "not reached at that name" in await response.text()


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
async def test_the_page_connects_to_the_address_the_browser_used(served: Served, host: str) -> None:
    asked = host.format(port=served.port)
    headers = served.cookie | {"Host": asked}
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http, http.get(served.base + "/", headers=headers) as response:
        assert response.status == 200
        page = await response.text()
    assert f'data-session-websocket-url="ws://{asked}/ws"' in page
    assert 'href="/static/css/xterm.css"' in page  # the page's own files, at the same address


# --- the static folder -------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/static/", "/static", "/static/js", "/static/js/", "/static/../server.py", "/static/%2e%2e/server.py"])
async def test_static_lists_no_folder_and_serves_nothing_outside_it(served: Served, path: str) -> None:
    url = URL(served.base + path, encoded=True)  # sent as written: no client-side clean-up of the dots
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http, http.get(url, headers=served.cookie) as response:
        assert response.status == 404, path
        text = await response.text()
    assert "textual.js" not in text and "Index of" not in text


# --- the cap on tabs, and their attempts -------------------------------------------------------


async def test_a_tab_beyond_max_tabs_is_refused_and_starts_no_app(served: Served) -> None:
    async with asyncio.timeout(SAFETY_SECONDS), aiohttp.ClientSession() as http:
        async with http.ws_connect(served.base + "/ws?width=80&height=24", headers=served.cookie) as first:
            await first.receive()  # the app drew: its process runs
            apps = descendants(served.process.pid)
            assert apps
            # The tab's app knows it is served through the web (its attempts record via "web").
            assert any(f"{VIA_VARIABLE}={WEB}".encode() in environment(pid) for pid in apps)
            status, text = await refused_websocket(http, served.base + "/ws", served.cookie)
            assert status == 503 and "--max-tabs 1" in text
            assert descendants(served.process.pid) == apps  # no process for the refused tab
        # Closed, the tab's app quits and frees its place.
        while descendants(served.process.pid):
            await asyncio.sleep(0.05)
        while True:
            try:
                async with http.ws_connect(served.base + "/ws", headers=served.cookie) as again:
                    await again.receive()
                    break
            except aiohttp.WSServerHandshakeError as exc:
                assert exc.status == 503  # the place is freed just after the app ended
                await asyncio.sleep(0.05)
        while descendants(served.process.pid):  # the other tests count the server's processes
            await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def task(request: pytest.FixtureRequest):
    task = load_suite().tasks[0]
    request.getfixturevalue(f"{task.domain}_world")
    return task


def test_an_attempt_in_a_web_tab_records_via_web(tmp_path: Path, task, monkeypatch: pytest.MonkeyPatch) -> None:
    assert attempt_via({}) == TERMINAL and attempt_via({"EBENCH_VIA": "web"}) == WEB and attempt_via({"EBENCH_VIA": "x"}) == TERMINAL
    monkeypatch.setenv("EBENCH_VIA", "web")  # as `ebench play --web` runs each tab's app
    trial = human_trial(task, blind=True, folder=tmp_path / "web")
    trial.finish(AGENT_STOPPED)
    assert read_session(trial.writer.path).start.solver.to_dict() == {"name": "human", "label": "human", "blind": True, "via": "web"}
    assert latest_attempts(tmp_path / "web")[task.id].via == WEB
    monkeypatch.delenv("EBENCH_VIA")
    trial = human_trial(task, blind=True, folder=tmp_path / "terminal")
    trial.finish(AGENT_STOPPED)
    assert latest_attempts(tmp_path / "terminal")[task.id].via == TERMINAL
    # An attempt recorded before `via` existed still loads, with no channel claimed.
    old = recorded_trial(task, "human", {"name": "human", "label": "human", "blind": True}, folder=tmp_path / "old")
    old.finish(AGENT_STOPPED)
    [(task_id, attempt)] = latest_attempts(tmp_path / "old").items()
    assert task_id == task.id and attempt.via is None and attempt.ended


# --- beyond loopback ---------------------------------------------------------------------------


def test_only_a_loopback_host_goes_unwarned() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert exposure_warning(host, 8000) is None, host
    for host in ("0.0.0.0", "::", "192.0.2.1"):
        warning = exposure_warning(host, 8000)
        assert warning is not None and "\n" not in warning
        assert warning.startswith(f"warning: --host {host} is not a loopback address")
        assert "has the token" in warning and "exec_code" in warning


def test_which_hosts_a_server_beyond_loopback_answers() -> None:
    """Bound to 0.0.0.0: a loopback name, the --host given, this machine's name, or the very address
    the connection arrived at; never another name (rebinding) nor another port."""

    def allowed(header: str, local: str = "192.0.2.7", bound: str = "0.0.0.0") -> bool:
        return host_allowed(header, bound_host=bound, port=8000, local_address=local)

    assert allowed("192.0.2.7:8000") and allowed("192.0.2.7:8000", local="::ffff:192.0.2.7")
    assert allowed("localhost:8000") and allowed("0.0.0.0:8000") and allowed(f"{socket.gethostname()}:8000")
    assert not allowed("192.0.2.8:8000") and not allowed("evil.example:8000") and not allowed("192.0.2.7:8001")
    assert not allowed("192.0.2.7") and not allowed("")
    assert allowed("[2001:db8::7]:8000", local="2001:db8::7") and not allowed("[2001:db8::7]:8000", local="2001:db8::8")
    # A loopback server answers loopback names only, whatever the connection.
    assert not allowed("192.0.2.7:8000", bound="127.0.0.1") and not allowed(f"{socket.gethostname()}:8000", bound="127.0.0.1")
    assert allowed("[::1]:8000", bound="127.0.0.1")
    assert split_host_header("[::1]") == ("::1", 80) and split_host_header("a:b") is None


def test_an_origin_is_the_served_one_or_refused() -> None:
    assert origin_allowed(None, scheme="http", host_header="localhost:8000")  # a navigation, a program
    assert origin_allowed("http://localhost:8000", scheme="http", host_header="LocalHost:8000")
    assert origin_allowed("http://[::1]:8000", scheme="http", host_header="[::1]:8000")
    for origin in ("http://localhost:8001", "https://localhost:8000", "http://evil.example:8000", "null", "", "http://[::1"):
        assert not origin_allowed(origin, scheme="http", host_header="localhost:8000"), origin


def test_a_server_beyond_loopback_warns_in_one_line_and_still_needs_its_token() -> None:
    # Listening on every interface for the moment of the test only, and behind its token.
    with web_server("--host", "0.0.0.0") as server:
        assert server.process.stderr is not None
        warned = read_line(server.process.stderr, time.monotonic() + SAFETY_SECONDS)  # written before the announcement
        assert server.announced.startswith(f"ebench in the browser: http://0.0.0.0:{server.port}/?token=")
        with socket.create_connection(("127.0.0.1", server.port)) as client:
            client.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 403")
    assert warned == (
        f"warning: --host 0.0.0.0 is not a loopback address: anyone who can reach port {server.port} and has the token "
        "controls the app, and exec_code runs their Python on this machine\n"
    )


def test_max_tabs_is_documented_and_applies_to_web_only() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ebench", "play", "--help"],
        capture_output=True,
        text=True,
        timeout=SAFETY_SECONDS,
        env=os.environ | {"COLUMNS": "200"},
    )
    assert done.returncode == 0 and "--max-tabs" in done.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ebench", "play", "--max-tabs", "2"], capture_output=True, text=True, timeout=SAFETY_SECONDS
    )
    assert done.returncode == 2 and done.stderr.strip().splitlines() == ["error: --max-tabs applies to --web"]
    done = subprocess.run(
        [sys.executable, "-m", "ebench", "play", "--web", "--max-tabs", "0"], capture_output=True, text=True, timeout=SAFETY_SECONDS
    )
    assert done.returncode == 2
