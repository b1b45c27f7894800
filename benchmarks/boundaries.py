"""Trust boundaries, attacked: each place where untrusted input enters ebench (issue 28), tried
the way an attacker would, with whether it held. `benchmarks/faults.py` prints these rows after the
API faults; `python benchmarks/boundaries.py [--json]` runs them alone.

Each attack returns (held, detail). Nothing here needs a model or the network: the command-line
attacks run `python -m ebench` in a subprocess, the web view's run a real server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark")  # the fake servers take any key

Attack = Callable[[Path], tuple[bool, str]]


def cli(*args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ebench", *args], input=stdin, capture_output=True, text=True, timeout=timeout)


def one_line(result: subprocess.CompletedProcess, code: int) -> tuple[bool, str]:
    """The README's error contract: exit `code`, one line on stderr, nothing on stdout, no traceback."""
    err = result.stderr.strip()
    held = result.returncode == code and err.count("\n") == 0 and err.startswith("error:") and not result.stdout.strip()
    return held, f"exit {result.returncode}: {err[:100]}"


# -- query_sql: the generator's privileged tool ---------------------------------------------------


def _world_copy() -> sqlite3.Connection:
    from ebench.engine.domain_registry import get_domain
    from ebench.engine.world import ensure_world, scratch_copy

    conn = scratch_copy(ensure_world(get_domain("music")))
    conn.execute("BEGIN")  # as a trial holds it: one transaction from start to end
    return conn


def _sql(conn: sqlite3.Connection, sql: str) -> dict:
    from ebench.tasks.synthesis import query_sql

    return query_sql(conn, sql)


def attach_a_secret(tmp: Path) -> tuple[bool, str]:
    secret = tmp / "secret.sqlite"
    with sqlite3.connect(secret) as db:
        db.execute("CREATE TABLE secrets (value TEXT)")
        db.execute("INSERT INTO secrets VALUES ('hunter2')")
    db.close()
    conn = _world_copy()
    answer = _sql(conn, f"ATTACH '{secret}' AS s")
    read = _sql(conn, "SELECT * FROM s.secrets")
    message = answer.get("error", {}).get("message", "")
    return "hunter2" not in json.dumps([answer, read]) and "ATTACH" in message, message[:100]


def create_files(tmp: Path) -> tuple[bool, str]:
    conn = _world_copy()
    before = sorted(os.listdir(tmp))
    answers = [
        _sql(conn, f"ATTACH '{tmp / 'new.sqlite'}' AS n"),
        _sql(conn, f"VACUUM INTO '{tmp / 'copy.sqlite'}'"),
        _sql(conn, "PRAGMA journal_mode=WAL"),
    ]
    created = sorted(set(os.listdir(tmp)) - set(before))
    refused = all("error" in a for a in answers)
    return refused and not created, f"files created: {created or 'none'}; refused: {refused}"


def runaway_query(tmp: Path) -> tuple[bool, str]:
    conn = _world_copy()
    started = time.perf_counter()
    answer = _sql(conn, "SELECT count(*) FROM songs a, songs b, songs c")
    seconds = time.perf_counter() - started
    message = answer.get("error", {}).get("message", "")
    return "budget" in message, f"stopped after {seconds:.1f} s: {message[:80]}"


def blob_and_huge_values(tmp: Path) -> tuple[bool, str]:
    conn = _world_copy()
    blob = _sql(conn, "SELECT X'00ff' AS b")
    started = time.perf_counter()
    huge = _sql(conn, "SELECT zeroblob(900000000)")
    seconds = time.perf_counter() - started
    json.dumps(blob)  # raises if a BLOB came back raw
    held = blob.get("rows") == [[{"blob_hex": "00ff", "bytes": 2}]] and "error" in huge
    return held, f"X'00ff' -> {blob.get('rows')}; zeroblob(9e8) refused in {seconds:.2f} s"


def state_left_behind(tmp: Path) -> tuple[bool, str]:
    conn = _world_copy()
    conn.execute("UPDATE songs SET title = 'mine' WHERE id = 1")  # an uncommitted change of the trial
    for sql in ("PRAGMA writable_schema=ON", f"ATTACH '{tmp / 'x.sqlite'}' AS x", "PRAGMA query_only=ON"):
        _sql(conn, sql)
    databases = [row[1] for row in conn.execute("PRAGMA database_list")]
    writable = conn.execute("PRAGMA writable_schema").fetchone()[0]
    query_only = conn.execute("PRAGMA query_only").fetchone()[0]
    seen = _sql(conn, "SELECT title FROM songs WHERE id = 1").get("rows")
    held = databases == ["main"] and not writable and not query_only and seen == [["mine"]]
    return (
        held,
        f"databases {databases}, writable_schema {writable}, query_only {query_only}, sees the trial's change: {seen == [['mine']]}",
    )


# -- recorded payloads -------------------------------------------------------------------------------

FLOOD = """big = 'x' * 3_900_000
for _ in range(40):
    try:
        search_songs(query=big)
    except ToolError:
        pass
'done'"""


def payload_flood(tmp: Path) -> tuple[bool, str]:
    from ebench.sessions.record import SessionWriter, read_session
    from ebench.sessions.trial import Trial
    from ebench.tasks.suite import load_suite

    (task,) = load_suite(ids=["music-0001"]).tasks
    path = tmp / "session.jsonl"
    trial = Trial(task, writer=SessionWriter(path), code=True)
    handed = trial.exec_code(FLOOD).for_solver()
    trial.finish("agent_stopped")
    size = path.stat().st_size
    told = "recorded truncated" in str(handed.get("recording", ""))
    held = handed.get("tool_calls") == 40 and size < 1024 * 1024 and told and read_session(path).truncated
    return held, f"156 MB of arguments from one block -> a {size / 1024:.0f} KiB session; the solver told: {told}"


# -- terminals ---------------------------------------------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[H\x9b31mall 323 tasks passed"


def terminal_escapes(tmp: Path) -> tuple[bool, str]:
    block = tmp / "block.py"
    block.write_text(f"print({HOSTILE!r})\n", encoding="utf-8")
    result = cli("tools", "exec", "--domain", "music", "--actor", "5", str(block))
    shown = result.stdout + result.stderr
    raw = [c for c in ("\x1b", "\x07", "\x9b") if c in shown]
    return result.returncode == 0 and not raw and "\\x1b" in shown, f"raw controls on the terminal: {raw or 'none'}"


# -- the command line's error contract ---------------------------------------------------------------


def malformed_tool_arguments(tmp: Path) -> tuple[bool, str]:
    return one_line(cli("tools", "call", "--domain", "music", "--actor", "5", "get_song", "{oops"), 2)


def unroutable_model(tmp: Path) -> tuple[bool, str]:
    held, detail = one_line(cli("run", "--batch", "--model", "notaprovider/xyz", "--task", "music-0001", "--out", str(tmp / "run")), 2)
    return held and len(detail) < 200, detail


def negative_seed(tmp: Path) -> tuple[bool, str]:
    result = cli("tasks", "generate", "--seed", "-3", "--out", str(tmp / "tasks"))
    return result.returncode == 2 and "Traceback" not in result.stderr and not (tmp / "tasks").exists(), f"exit {result.returncode}"


def full_disk_manifest(tmp: Path) -> tuple[bool, str]:
    import errno

    from ebench.sessions import runs

    path = tmp / "manifest.json"
    runs.write_json_atomic(path, {"old": True})
    real = Path.write_text

    def full(self: Path, text: str, *args, **kwargs) -> int:
        real(self, text[:3], *args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device")

    Path.write_text = full  # type: ignore[method-assign]
    try:
        runs.write_json_atomic(path, {"new": True})
    except OSError:
        pass
    finally:
        Path.write_text = real  # type: ignore[method-assign]
    left = sorted(p.name for p in tmp.iterdir())
    return left == ["manifest.json"] and json.loads(path.read_text()) == {"old": True}, f"files left: {left}"


def ctrl_c_with_workers(tmp: Path) -> tuple[bool, str]:
    from ebench.tasks.suite import load_suite
    from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

    tasks = load_suite().tasks[:24]
    with FakeOpenAI(ReferencePlayer(tasks), delay=0.3) as server:
        ids = [a for t in tasks for a in ("--task", t.id)]
        args = ["run", "--batch", "--model", "openai/fake", "--api-base", server.base_url, *ids, "--workers", "2", "--concurrency", "8"]
        process = subprocess.Popen(
            [sys.executable, "-m", "ebench", *args, "--out", str(tmp / "run")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENAI_API_KEY": "sk-fake"},
            start_new_session=True,
        )
        results = tmp / "run" / "results.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (not results.exists() or not results.read_text().strip()):
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's ctrl+c does: the whole group
        _, err = process.communicate(timeout=120)
    noise = [line for line in err.splitlines() if "Warning" in line or "Traceback" in line]
    return process.returncode == 130 and not noise, f"exit {process.returncode}; warnings or tracebacks: {len(noise)}"


def empty_user_reply(tmp: Path) -> tuple[bool, str]:
    from ebench.sessions.batch import Batch
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.runs import load_run
    from ebench.sessions.solvers.llm import LLMSolver
    from ebench.sessions.users import UserSettings
    from ebench.tasks.asking import SPLIT_DIR
    from ebench.tasks.suite import load_suite
    from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply, Script

    task = load_suite(SPLIT_DIR).tasks[0]
    empty = Reply(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []})
    import asyncio

    with FakeOpenAI(ReferencePlayer([task])) as agent, FakeOpenAI(Script([empty])) as user:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=agent.base_url, retries=0))
        settings = UserSettings(kind="llm", model="openai/fake-user", api_base=user.base_url, retries=0)
        batch = Batch(tmp / "run", [task], solver, 1, user=settings)
        batch.prepare()
        asyncio.run(batch.run(1))
        batch.finish("finished")
    (result,) = load_run(tmp / "run").results
    error = result.error or ""
    return result.infra_error and "empty response" in error and "IndexError" not in error, error[:100]


# -- the web view ------------------------------------------------------------------------------------


def _web_server(options: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int, str]:
    """`ebench play --web` on a free port, once it listens: (process, port, token)."""
    import re
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "ebench", "play", "--web", "--port", str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    announced = process.stdout.readline()  # printed once it listens
    found = re.search(r"\?token=([A-Za-z0-9_-]+)", announced)
    if not found:
        process.kill()
        raise RuntimeError(f"no URL with a token announced: {announced!r}")
    return process, port, found.group(1)


def _stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


def _status(port: int, path: str, headers: dict[str, str]) -> int:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


WEBSOCKET = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


def web_view(tmp: Path) -> tuple[bool, str]:
    process, port, token = _web_server(("--max-tabs", "1"))
    cookie = {"Cookie": f"ebench-token-{port}={token}"}
    try:
        statuses = {
            "no token": _status(port, "/", {}),
            "a wrong token": _status(port, "/?token=guess", {}),
            "the token": _status(port, f"/?token={token}", {}),
            "a foreign Origin's websocket": _status(port, "/ws", cookie | WEBSOCKET | {"Origin": "http://evil.example"}),
            "a rebinding Host": _status(port, "/", cookie | {"Host": f"evil.example:{port}"}),
            "/static/ listed": _status(port, "/static/", cookie),
        }
    finally:
        _stop(process)
    expected = {"no token": 403, "a wrong token": 403, "the token": 303, "a foreign Origin's websocket": 403, "a rebinding Host": 403}
    held = all(statuses[k] == v for k, v in expected.items()) and statuses["/static/ listed"] in (403, 404)
    return held, ", ".join(f"{k} {v}" for k, v in statuses.items())


ATTACKS: list[tuple[str, str, Attack]] = [
    ("query_sql", "ATTACH a secret database and read it", attach_a_secret),
    ("query_sql", "ATTACH / VACUUM INTO / journal_mode=WAL create files", create_files),
    ("query_sql", "a three-way cartesian join over songs", runaway_query),
    ("query_sql", "a BLOB result; zeroblob(9e8)", blob_and_huge_values),
    ("query_sql", "writable_schema, ATTACH, query_only left on the trial", state_left_behind),
    ("recorded payloads", "an exec_code block sends 40 calls of 3.9 MB", payload_flood),
    ("terminal", "a block prints ESC/OSC/C1 sequences (tools exec)", terminal_escapes),
    ("web view", "no token, a wrong one, a foreign Origin, a rebinding Host, /static/", web_view),
    ("command line", "malformed JSON to tools call", malformed_tool_arguments),
    ("command line", "a model string no provider serves", unroutable_model),
    ("command line", "a negative --seed", negative_seed),
    ("run files", "a full disk while writing manifest.json", full_disk_manifest),
    ("run", "ctrl+c during a batch with --workers 2", ctrl_c_with_workers),
    ("simulated user", "its model answers with no choices", empty_user_reply),
]


def run_attacks() -> list[dict]:
    rows = []
    for boundary, attack, probe in ATTACKS:
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            try:
                held, detail = probe(Path(tmp))
            except Exception as exc:  # an attack that breaks the harness did not hold
                held, detail = False, f"{type(exc).__name__}: {exc}"[:160]
        rows.append(
            {"boundary": boundary, "attack": attack, "held": held, "detail": detail, "seconds": round(time.perf_counter() - started, 2)}
        )
    return rows


def print_rows(rows: list[dict]) -> None:
    width = max(len(r["attack"]) for r in rows)
    print(f"{'boundary':<18} {'attack':<{width}}  held  detail")
    print("-" * (width + 40))
    for r in rows:
        print(f"{r['boundary']:<18} {r['attack']:<{width}}  {'yes ' if r['held'] else 'NO  '}  {r['detail']}")
    print(f"\nevery boundary held: {'yes' if all(r['held'] for r in rows) else 'NO'}")


def main() -> None:
    rows = run_attacks()
    if "--json" in sys.argv:
        print(json.dumps({"boundaries": rows, "all_held": all(r["held"] for r in rows)}, indent=2))
    else:
        print_rows(rows)


if __name__ == "__main__":
    main()
