# ruff: noqa: SIM105
"""The zygote: one confined, preloaded process per set of layers that forks a worker per block.

Starting a confined interpreter and preloading what a block may import costs 70-150 ms; forking
the zygote, which has done both already, costs a few. The zygote is started (through confine.py)
by the first exec_code runner that needs it, shared by every runner of this process that asks for
the same layers, and stopped `LINGER_SECONDS` after the last of them closed, at exit, or when this
process forks (the copy never uses its parent's zygote). It also exits by itself when this
process dies (its control socket closes).

The control socket carries one request at a time (a lock), each answered at once: `fork` (with the
worker's two pipes as SCM_RIGHTS and its limits; answers its pid) and `reap` (a worker's exit
code). The zygote reaps a worker only when asked, so its pid cannot be reused while a runner may
still kill it; a runner waits for the exit through a pidfd where the kernel has them.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .isolation import CONFINE, WORKER, denied_roots, landlock_paths, python_executable, stdlib_roots

LINGER_SECONDS = 30.0  # an idle zygote waits this long for the next trial before it stops


class ZygoteError(OSError):
    """The zygote did not start, or is gone."""


class Zygote:
    """One zygote process and its control socket."""

    def __init__(self, layers: tuple[str, ...], require: tuple[str, ...], startup_seconds: float) -> None:
        self._lock = threading.Lock()
        self.closed = False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        read_paths, exec_paths = landlock_paths() if "landlock" in layers else ([], [])
        config = {
            "python": python_executable(),
            "worker": str(WORKER),
            "control": theirs.fileno(),
            "layers": list(layers),
            "require": list(require),
            "stdlib": list(stdlib_roots()),
            "denied": list(denied_roots()),
            "read_paths": read_paths,
            "exec_paths": exec_paths,
        }
        try:
            self.proc = subprocess.Popen(
                [python_executable(), "-I", "-S", "-B", str(CONFINE), json.dumps(config)],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None if os.environ.get("EBENCH_SANDBOX_DEBUG") else subprocess.DEVNULL,
                env={},
                cwd="/",
                start_new_session=True,  # Ctrl-C in a terminal stops this process, which then closes the zygote
            )
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()
        try:
            hello = self._receive(time.monotonic() + startup_seconds)
        except ZygoteError as exc:
            self.close()
            raise ZygoteError(f"{exc}; {self.exit_description()}") from None
        self.pid = int(hello["pid"])

    def fork(self, limits: dict[str, Any], fds: list[int], deadline: float) -> int:
        """A new worker holding `fds` (this process keeps its own copies), with `limits`."""
        with self._lock:
            self._check()
            try:
                socket.send_fds(self._sock, [json.dumps({"t": "fork", **limits}).encode()], fds)
            except OSError as exc:
                raise ZygoteError(f"the sandbox's zygote is gone ({exc})") from None
            return int(self._receive(deadline)["pid"])

    def reap(self, pid: int, wait: bool) -> int | str | None:
        """The exit code of worker `pid` (negative: killed by that signal), or None while it runs
        (with `wait` false); "unknown" when it cannot be read (the zygote is gone)."""
        with self._lock:
            if self.closed:
                return "unknown"
            try:
                self._sock.send(json.dumps({"t": "reap", "pid": pid, "wait": wait}).encode())
                code = self._receive(time.monotonic() + 30)["code"]
            except (OSError, ZygoteError):
                return "unknown"
            return code if code is None or isinstance(code, (int, str)) else "unknown"

    def close(self) -> None:
        """Stop the zygote (workers still running keep going until their runner kills them)."""
        self.closed = True
        try:
            self._sock.close()  # the zygote exits on its own once its end reads nothing
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def exit_description(self) -> str:
        code = self.proc.poll()
        return "the zygote is running" if code is None else f"the zygote exited with status {code}"

    def _check(self) -> None:
        if self.closed or self.proc.poll() is not None:
            self.closed = True
            raise ZygoteError("the sandbox's zygote is gone")

    def _receive(self, deadline: float) -> dict[str, Any]:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ZygoteError("the sandbox's zygote did not answer in time")
            if not select.select([self._sock], [], [], remaining)[0]:
                continue
            data = self._sock.recv(65536)
            if not data:
                self.closed = True
                raise ZygoteError("the sandbox's zygote is gone")
            return dict(json.loads(data))


class ForkedProcess:
    """A worker forked by the zygote, as much of subprocess.Popen as a runner uses."""

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote = zygote
        self.pid = pid
        self.returncode: int | str | None = None
        self._lock = threading.Lock()  # between a kill from another thread and the reaping
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):  # not Linux 5.3+: the zygote is asked until the worker exits
            self._pidfd = None

    def poll(self) -> int | str | None:
        return self._reap(0.0)

    def wait(self, timeout: float) -> int | str:
        code = self._reap(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"sandbox worker {self.pid}", timeout)
        return code

    def kill(self) -> None:
        """SIGKILL, until reaped (never after: the pid may belong to another process then)."""
        with self._lock:
            if self.returncode is None:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _reap(self, timeout: float) -> int | str | None:
        deadline = time.monotonic() + timeout
        while self.returncode is None:
            if self._pidfd is not None:
                exited = bool(select.select([self._pidfd], [], [], max(0.0, deadline - time.monotonic()))[0])
                if not exited:
                    return None
            with self._lock:
                if self.returncode is None:
                    code = self.zygote.reap(self.pid, wait=self._pidfd is not None)
                    if code is not None:
                        self.returncode = code
                        self._close_pidfd()
            if self.returncode is None:
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.005)  # pragma: no cover - only without pidfds
        return self.returncode

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self._close_pidfd()
        except Exception:
            pass


# -- the pool: one zygote per set of layers, shared by this process's runners ---------------------


@dataclass
class ZygoteShare:
    layers: tuple[str, ...]
    require: tuple[str, ...]
    users: int = 0
    zygote: Zygote | None = None
    timer: threading.Timer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # one start at a time

    def get(self, startup_seconds: float) -> Zygote:
        """The running zygote, started now if there is none (or it died)."""
        with self.lock:
            if self.zygote is None or self.zygote.closed or self.zygote.proc.poll() is not None:
                if self.zygote is not None:
                    self.zygote.close()
                self.zygote = Zygote(self.layers, self.require, startup_seconds)
            return self.zygote


_POOL: dict[tuple[tuple[str, ...], tuple[str, ...]], ZygoteShare] = {}
_POOL_LOCK = threading.Lock()


def acquire(layers: tuple[str, ...], require: tuple[str, ...]) -> ZygoteShare:
    """A runner's share of the zygote for `layers` (started on first use, by `ZygoteShare.get`)."""
    with _POOL_LOCK:
        entry = _POOL.setdefault((layers, require), ZygoteShare(layers, require))
        entry.users += 1
        if entry.timer is not None:
            entry.timer.cancel()
            entry.timer = None
        return entry


def release(entry: ZygoteShare) -> None:
    """A runner is done: the last one out leaves the zygote to linger, then stop."""
    with _POOL_LOCK:
        entry.users -= 1
        if entry.users > 0 or entry.zygote is None:
            return
        if LINGER_SECONDS <= 0:
            _stop(entry)
            return
        entry.timer = threading.Timer(LINGER_SECONDS, _expire, (entry,))
        entry.timer.daemon = True
        entry.timer.name = "exec_code-zygote-linger"
        entry.timer.start()


def _expire(entry: ZygoteShare) -> None:
    with _POOL_LOCK:
        if entry.users == 0:
            entry.timer = None
            _stop(entry)


def _stop(entry: ZygoteShare) -> None:
    with entry.lock:
        if entry.zygote is not None:
            entry.zygote.close()
            entry.zygote = None


def shutdown() -> None:
    """Stop every idle zygote now (at exit; tests). Runners still open keep theirs."""
    with _POOL_LOCK:
        for entry in _POOL.values():
            if entry.timer is not None:
                entry.timer.cancel()
                entry.timer = None
            if entry.users == 0:
                _stop(entry)


def zygote_pids() -> set[int]:
    """The pids of the zygotes running now (tests count processes with them)."""
    with _POOL_LOCK:
        return {e.zygote.proc.pid for e in _POOL.values() if e.zygote is not None and not e.zygote.closed}


def _forget_after_fork() -> None:
    """In a forked copy of this process: the parent's zygotes are not ours. Close our copies of
    their sockets (so each zygote still sees its owner's end close) and start afresh."""
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    for entry in _POOL.values():
        if entry.zygote is not None:
            try:
                entry.zygote._sock.close()
            except OSError:
                pass
    _POOL.clear()


def _at_exit() -> None:
    with _POOL_LOCK:
        entries = list(_POOL.values())
    for entry in entries:
        if entry.timer is not None:
            entry.timer.cancel()
        _stop(entry)


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_forget_after_fork)
