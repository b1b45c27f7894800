# ruff: noqa: SIM105
"""One worker process: forked by the zygote (zygote.py), talked to over two pipes, killed at will."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from .limits import Limits
from .protocol import FrameReader, ProtocolError, encode
from .zygote import ForkedProcess, ZygoteShare


class WorkerDied(Exception):
    """The worker's end of the pipe closed (it exited, crashed or was killed)."""


class Timeout(Exception):
    """No message arrived before the deadline."""


class WorkerProcess:
    def __init__(self, limits: Limits, zygote: ZygoteShare) -> None:
        self.limits = limits
        self.reader = FrameReader(limits.max_message_bytes)
        self.queue: list[dict[str, Any]] = []
        deadline = time.monotonic() + limits.startup_seconds
        server = zygote.get(limits.startup_seconds)
        to_worker_r, self.to_worker = os.pipe()
        self.from_worker, from_worker_w = os.pipe()
        worker_limits = {"memory_bytes": limits.memory_mb * 1024 * 1024, "cpu_seconds": limits.cpu_seconds, "max_files": limits.max_files}
        try:
            pid = server.fork(worker_limits, [to_worker_r, from_worker_w], deadline)
        except BaseException:
            os.close(self.to_worker)
            os.close(self.from_worker)
            raise
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self.proc = ForkedProcess(server, pid)
        os.set_blocking(self.to_worker, False)
        os.set_blocking(self.from_worker, False)
        self.closed = False

    # -- talking ---------------------------------------------------------------------------
    def send(self, msg: dict[str, Any], deadline: float) -> None:
        data = memoryview(encode(msg))
        while data:
            try:
                n = os.write(self.to_worker, data)
                data = data[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, OSError):
                raise WorkerDied() from None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Timeout()
            _wait(self.to_worker, select.POLLOUT, remaining)

    def receive(self, deadline: float) -> dict[str, Any]:
        """The next message; raises Timeout, WorkerDied or ProtocolError."""
        while not self.queue:
            data = self._read(deadline, 1 << 20, Timeout)
            if not data:
                raise WorkerDied()
            self.queue.extend(self.reader.feed(data))
        return self.queue.pop(0)

    def expect_end(self, deadline: float) -> None:
        """After `done`: nothing more may come, and the pipe closes (the worker exits right after
        sending it). More, or a worker that goes on running, means the block forged the end
        message (it can reach the pipe): a ProtocolError."""
        if self.queue or self.reader.buffer:
            raise ProtocolError("a message came after the block's end message")
        still_running = partial(ProtocolError, "the block went on running after its end message")
        if self._read(deadline, 1 << 16, still_running, failure_is_close=True):
            raise ProtocolError("a message came after the block's end message")

    def _read(self, deadline: float, size: int, too_late: Callable[[], Exception], failure_is_close: bool = False) -> bytes:
        """Up to `size` bytes from the worker, b"" once its end closed (or, with `failure_is_close`, the
        read failed); raises what `too_late` makes when nothing came before the deadline."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise too_late()
            if not _wait(self.from_worker, select.POLLIN, remaining):
                continue
            try:
                return os.read(self.from_worker, size)
            except BlockingIOError:
                continue
            except OSError:
                if failure_is_close:
                    return b""
                raise

    # -- ending ----------------------------------------------------------------------------
    def exit_description(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
            return "it stopped responding and was killed"
        if isinstance(code, str):
            return "its exit status is unknown"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"it was killed by {name}"
        return f"it exited with status {code}"

    def signal_kill(self) -> None:
        """SIGKILL only, safe from another thread than the one talking to the worker (which
        then sees the pipe close, and reaps and closes with `kill`)."""
        self.proc.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            pass
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for fd in (self.to_worker, self.from_worker):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def finish(self) -> None:
        """After `done`: the worker exits by itself; make sure of it."""
        try:
            self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _wait(fd: int, events: int, seconds: float) -> bool:
    poller = select.poll()
    poller.register(fd, events | select.POLLHUP | select.POLLERR)
    return bool(poller.poll(max(1, int(seconds * 1000))))


__all__ = ["ProtocolError", "Timeout", "WorkerDied", "WorkerProcess"]
