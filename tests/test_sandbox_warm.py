"""The warm sandbox: exec_code workers forked by a confined, preloaded zygote (sandbox/zygote.py).

Each block still runs in a worker of its own; the zygote is shared by the runners of a process,
lingers a while after the last one closes, and leaves no process behind."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from ebench.sessions.sandbox import ExecCode, Limits, zygote
from tests import processes


@pytest.fixture
def no_linger(monkeypatch):
    monkeypatch.setattr(zygote, "LINGER_SECONDS", 0)
    zygote.shutdown()


def _runner(music, env, **limits) -> ExecCode:
    return ExecCode(lambda n, a: music.tools.call(env, n, a), music.tools, limits=Limits(**limits) if limits else None)


@processes.needs_proc
def test_each_block_runs_in_a_fresh_worker_forked_by_the_zygote(music, music_conn, no_linger):
    with _runner(music, music.env(music_conn, 1)) as runner:
        pids = [eval(runner.run("import os\nos.getpid(), os.getppid()").value) for _ in range(4)]
        (server,) = zygote.zygote_pids()
        assert len({pid for pid, _ in pids}) == 4  # one worker per block
        assert {parent for _, parent in pids} == {server}  # every one forked by the zygote
        assert runner.run("x = 1").ok and runner.run("x").error.endswith("NameError: name 'x' is not defined")


def test_a_worker_has_only_the_preloaded_modules(music, music_conn):
    # the zygote's own modules (its control socket, the limits it sets) are gone from the worker
    with _runner(music, music.env(music_conn, 1)) as runner:
        result = runner.run(
            "import sys\nsorted(m for m in ('socket', '_socket', 'selectors', 'resource', 'ctypes', '_ctypes') if m in sys.modules)"
        )
        assert result.value == "[]"
        assert runner.run("import resource").limit == "forbidden"
        assert runner.run("import socket").limit == "forbidden"


@processes.needs_proc
def test_the_block_limits_hold_in_a_forked_worker(music, music_conn):
    """Read from /proc while the worker is inside a tool call: its own limits, set after the fork."""
    seen: dict[str, str] = {}

    def call(name, args):
        (server,) = [p for p in zygote.zygote_pids() if p in processes.descendants()]
        for pid in processes.children_of(server):
            seen[str(pid)] = Path(f"/proc/{pid}/limits").read_text()
        return music.tools.call(env, name, args)

    env = music.env(music_conn, 1)
    with ExecCode(call, music.tools, limits=Limits(memory_mb=300, max_files=40)) as runner:
        result = runner.run("import os\nget_my_profile()\nos.getpid()")
        assert result.ok, result.error
    limits = {line[:26].strip(): line[26:].split()[:2] for line in seen[result.value].splitlines()[1:]}
    assert limits["Max address space"] == [str(300 * 1024 * 1024)] * 2
    assert limits["Max open files"] == ["40", "40"]
    assert limits["Max processes"] == ["0", "0"]
    assert limits["Max file size"] == ["0", "0"]


@processes.needs_proc
def test_a_worker_forked_as_root_runs_as_a_user_of_its_own(music, music_conn):
    """Root ignores RLIMIT_NPROC, so a worker forked by a root zygote drops to a uid of its own
    (the base plus its pid) when any user can read the standard library: the limit of 0 processes
    then holds in the kernel, and no two workers share a uid. Otherwise the worker keeps ours."""
    from ebench.sessions.sandbox.isolation import stdlib_roots
    from ebench.sessions.sandbox.worker import WORKER_UID_BASE, readable_by_anyone

    drops = os.geteuid() == 0 and readable_by_anyone(stdlib_roots())

    statuses: dict[str, str] = {}

    def call(name, args):
        (server,) = [p for p in zygote.zygote_pids() if p in processes.descendants()]
        for pid in processes.children_of(server):
            statuses[str(pid)] = Path(f"/proc/{pid}/status").read_text()
        return music.tools.call(env, name, args)

    env = music.env(music_conn, 1)
    with ExecCode(call, music.tools) as runner:
        pids = []
        for _ in range(2):
            result = runner.run("import os\nget_my_profile()\nos.getpid()")
            assert result.ok, result.error
            pids.append(result.value)
    uids = []
    for pid in pids:
        fields = dict(line.split(":", 1) for line in statuses[pid].splitlines())
        uid_set, gid_set = fields["Uid"].split(), fields["Gid"].split()
        expected = WORKER_UID_BASE + int(pid) if drops else os.geteuid()
        assert uid_set == [str(expected)] * 4
        if drops:
            assert gid_set == [str(expected)] * 4 and fields["Groups"].split() == []
        uids.append(uid_set[0])
    assert len(set(uids)) == (2 if drops else 1)


def test_only_a_standard_library_anyone_can_read_lets_a_root_worker_drop_its_user():
    import shutil
    import tempfile

    from ebench.sessions.sandbox.worker import readable_by_anyone

    top = Path(tempfile.mkdtemp(dir="/tmp"))  # not pytest's tmp_path: it sits below a private directory
    try:
        shared, private = top / "shared" / "lib", top / "private" / "lib"
        shared.mkdir(parents=True)
        private.mkdir(parents=True)
        for path in (top, shared.parent, shared, private):
            os.chmod(path, 0o755)
        os.chmod(private.parent, 0o700)
        assert readable_by_anyone([str(shared)]) is True  # "/" and "/tmp" let anyone in
        assert readable_by_anyone([str(shared), str(private)]) is False  # one private parent is enough
        assert readable_by_anyone([str(top / "missing")]) is False
    finally:
        shutil.rmtree(top)


@processes.needs_proc
def test_closing_the_last_runner_stops_the_zygote_and_its_workers(music, music_conn, no_linger):
    before = processes.descendants()
    env = music.env(music_conn, 1)
    first, second = _runner(music, env), _runner(music, env)
    assert first.run("1").ok and second.run("2").ok
    (server,) = zygote.zygote_pids()  # one zygote for both
    first.close()
    assert zygote.zygote_pids() == {server}  # still used by the second
    second.close()
    assert zygote.zygote_pids() == set() and processes.descendants() == before


@processes.needs_proc
def test_an_idle_zygote_lingers_for_the_next_trial_then_stops(music, music_conn, monkeypatch):
    monkeypatch.setattr(zygote, "LINGER_SECONDS", 60)
    zygote.shutdown()
    before = processes.descendants()
    env = music.env(music_conn, 1)
    with _runner(music, env) as runner:
        assert runner.run("1").ok
        (server,) = zygote.zygote_pids()
    assert zygote.zygote_pids() == {server} and processes.children_of(server) == set()  # no worker left, the zygote waits
    with _runner(music, env) as runner:
        assert runner.run("2").ok and zygote.zygote_pids() == {server}  # reused
    zygote.shutdown()
    assert processes.descendants() == before


@processes.needs_proc
def test_a_block_over_its_time_is_killed_and_reaped(music, music_conn, no_linger):
    before = processes.descendants()
    with _runner(music, music.env(music_conn, 1), wall_seconds=1) as runner:
        result = runner.run("while True:\n    pass")
        assert result.limit == "time"
        (server,) = zygote.zygote_pids()
        assert len(processes.children_of(server)) <= 1  # the spare alone: the killed worker is reaped, no zombie
        assert runner.run("'next'").value == "'next'"
    assert processes.descendants() == before


@processes.needs_proc
def test_a_dead_zygote_is_replaced(music, music_conn, no_linger):
    before = processes.descendants()
    with _runner(music, music.env(music_conn, 1)) as runner:
        assert runner.run("1").ok
        (server,) = zygote.zygote_pids()
        os.kill(server, signal.SIGKILL)
        values = [runner.run(f"{i} * 2").value for i in range(3)]
        assert values == ["0", "2", "4"]
        assert zygote.zygote_pids() - {server}
    assert processes.descendants() == before


@processes.needs_proc
def test_runners_in_threads_share_the_zygote(music, music_conn, no_linger):
    before = processes.descendants()
    env = music.env(music_conn, 1)
    results: dict[int, list[str | None]] = {}

    def play(n: int) -> None:
        with _runner(music, env) as runner:
            results[n] = [runner.run(f"{n} * 10 + {i}").value for i in range(4)]

    threads = [threading.Thread(target=play, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {n: [str(n * 10 + i) for i in range(4)] for n in range(4)}
    assert processes.descendants() == before


def test_a_forked_copy_of_this_process_does_not_use_its_parents_zygote(music, music_conn):
    with _runner(music, music.env(music_conn, 1)) as runner:
        assert runner.run("1").ok
        assert zygote.zygote_pids()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through the pipe
            os.write(write, b"1" if not zygote.zygote_pids() else b"0")
            os._exit(0)
        os.close(write)
        answer = os.read(read, 1)
        os.close(read)
        os.waitpid(pid, 0)
        assert answer == b"1"
        assert runner.run("2").ok  # the parent's zygote still serves
