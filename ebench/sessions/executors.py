"""Where a batch's trials run: in this process (one event loop), in N processes on this machine
(`--workers`), or as Ray tasks on a cluster (`--executor ray`).

Whatever runs them, one process writes the run: the batch's own (`Batch.record`), which appends
each finished trial's line to results.jsonl as it arrives. A model batch is bound by the CPU of
its model client (litellm) in one event loop; worker processes each run an event loop over a
share of the trials, so it scales with cores.

- **Processes** (`WorkerPool`, `run_in_processes`): a standard `ProcessPoolExecutor`, forked
  before any other thread starts (else spawned), with one job per worker: a round-robin share of the trials,
  run at `concurrency / workers` at once. Before the fork this process prepares the worlds the
  trials use (`preload_worlds`) and freezes what it has loaded, so a worker starts with both
  shared copy-on-write; a process running MANY_COPIES trials at once keeps one idle copy a world
  (`idle_copies`): its copies are most of its memory, and it runs its trials in rounds over the
  tasks (`interleaved`), so that many trials of one long task do not peak together. Workers write their sessions into the run directory
  (the same machine) and send each summary back through a queue. They ignore SIGINT: ctrl+c
  reaches this process, which tells them to stop; each cancels its trials (sessions without an
  end, run again on resume) and says it is done. A worker whose parent died stops by itself.
- **Ray** (`run_on_ray`): the trials are cut into chunks of `concurrency / (2 x CPUs)`, one Ray
  task each, two to a CPU; a task checks that its node builds the worlds of the run's fingerprints, runs its chunk
  into a scratch folder and returns each trial's summary with its session file's bytes, which
  this process writes into the run directory. Nothing is written for a task before it returns, so
  a task Ray retries after losing its node (its `max_retries`) leaves no duplicate.

A fatal solver error (a rejected key) stops every worker and propagates as FatalSolverError, as
it does in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import os
import queue as queues
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import EBenchError
from ..tasks.spec import Task
from .events import InternalErrorEvent
from .perturb import Perturbation
from .record import trial_session_file
from .results import TrialSummary
from .runs import SESSIONS
from .solvers.base import FatalSolverError, Solver
from .trial import INFRA_ERROR, MANY_COPIES, TrialLimits, drop_idle_copies, keep_idle_copies, map_large_blocks, open_trial, trial_copy
from .users import UserSettings

EXECUTORS = ("local", "ray")
MIN_TRIALS_PER_WORKER = 32  # the default --workers keeps a smaller batch in one process, where it is simplest to follow
STOP_POLL = 0.1  # seconds between a worker's looks at the stop flag and its parent


class ExecutorError(EBenchError, RuntimeError):
    """The trials could not be run where asked (a worker died, Ray is missing or refused the job)."""


def freeze_imports() -> None:
    """Move everything imported so far out of the garbage collector's sight: a batch process
    allocates many short-lived objects, and each full collection would walk every module again."""
    gc.freeze()


def default_workers(trials: int) -> int:
    """The machine's cores, but one process for a small batch (MIN_TRIALS_PER_WORKER a worker at least)."""
    return max(1, min(os.cpu_count() or 1, trials // MIN_TRIALS_PER_WORKER))


@dataclass(frozen=True)
class TrialRunner:
    """What runs trials of a batch, in any process: sessions go under `out`."""

    out: Path
    solver: Solver
    code: bool
    limits: TrialLimits
    secrets: list[str]
    user: UserSettings = UserSettings()  # who answers a task's questions (its user profile)
    perturb: Perturbation = Perturbation()  # what the solver meets perturbed (perturb.py)

    async def run_trial(self, task: Task, number: int) -> TrialSummary:
        path = trial_session_file(self.out / SESSIONS, task.id, number)
        session = str(path.relative_to(self.out))
        try:
            trial = open_trial(
                task,
                path,
                secrets=self.secrets,
                solver=self.solver.config(),
                code=self.code,
                trial_number=number,
                session_name=session,
                user=self.user.for_task(task),
                perturb=self.perturb or None,
            )
        except Exception as exc:  # the task cannot start (its actor is unknown to the world): reported apart
            return TrialSummary.not_started(task, number, session, f"the trial could not start: {exc}")
        limits = self.limits.for_task(task)
        try:
            outcome = await self.solver.solve(trial, limits)
        except (asyncio.CancelledError, FatalSolverError, KeyboardInterrupt):
            trial.close()  # the session stays without its end: the trial runs again on resume
            raise
        except Exception as exc:  # a harness fault: recorded, and not counted against the solver
            trial.record(InternalErrorEvent(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()))
            summary = trial.finish(INFRA_ERROR, f"internal error: {type(exc).__name__}: {exc}")
        else:
            summary = trial.finish(outcome.termination, outcome.error)
        summary.limits = {"max_turns": limits.max_turns, "max_tool_calls": limits.max_tool_calls}
        return summary

    async def run_all(
        self,
        todo: Sequence[tuple[Task, int]],
        concurrency: int,
        on_summary: Callable[[TrialSummary], None],
        stop: Callable[[], bool] | None = None,
    ) -> None:
        """Run `todo`, `concurrency` at once, handing each summary to `on_summary` as it ends.
        When `stop()` turns true the trials still running are cancelled (their sessions stay
        without an end) and no other starts. A FatalSolverError stops everything and propagates."""
        stopping = asyncio.Event()  # a fatal error: trials still queued are not started
        if concurrency >= MANY_COPIES:
            map_large_blocks()
        idle_copies(1 if concurrency >= MANY_COPIES else None)
        queued = iter(interleaved(todo) if concurrency >= MANY_COPIES else todo)

        async def lane() -> None:
            # `concurrency` lanes take the next trial as each ends: the tasks alive are the
            # trials running, not every trial of the batch waiting its turn (a task, a coroutine
            # and a waiter each, held to the end of a long batch)
            for task, number in queued:
                if stopping.is_set() or (stop is not None and stop()):  # a solver that never awaits gives the watcher no turn
                    return
                try:
                    summary = await self.run_trial(task, number)
                except FatalSolverError:
                    stopping.set()
                    raise
                on_summary(summary)

        jobs = [asyncio.create_task(lane()) for _ in range(min(max(1, concurrency), len(todo)))]
        watcher = asyncio.create_task(_watch(stop, jobs)) if stop is not None else None
        try:
            await asyncio.gather(*jobs)
        except asyncio.CancelledError:
            if watcher is None or not watcher.done():
                raise  # cancelled from outside, not stopped by `stop`
        finally:
            for job in jobs:
                job.cancel()
            await asyncio.gather(*jobs, return_exceptions=True)
            if watcher is not None:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
            drop_idle_copies()  # the batch is over: its copies' memory goes back
            idle_copies(None)


def interleaved(todo: Sequence[tuple[Task, int]]) -> list[tuple[Task, int]]:
    """`todo` in rounds: each task's first trial, then each one's second, and so on (a task's
    trials keep their order). A batch lists a task's trials together; run in that order, many
    trials at once are the same few tasks', and the longest tasks' conversations and copies
    peak together: the more trials a task, the higher (256 at once, 2 workers: 1.50 GB over
    16 trials a task, 1.62 GB over 48). In rounds, the trials running are the suite's mix."""
    rounds: dict[str, int] = {}
    ranked: list[tuple[int, int]] = []  # (round, position in todo)
    for position, (task, _) in enumerate(todo):
        rank = rounds.get(task.id, 0)
        rounds[task.id] = rank + 1
        ranked.append((rank, position))
    return [todo[position] for _, position in sorted(ranked)]


def idle_copies(keep: int | None) -> None:
    """How many copies of a world finished trials leave for the next (None: the default, KEEP).
    With MANY_COPIES trials open at once, one: the copies are most of the process's memory, a
    trial of another world finishing leaves one more idle copy while a new one is made for the
    next, and 256 at once peaked 110 MB higher keeping 8 a world (two workers; 1.59 GB against
    1.48 GB), to save 2-3 ms of CPU only when several trials of a world end together."""
    keep_idle_copies(keep)


async def _watch(stop: Callable[[], bool], jobs: list[asyncio.Task[None]]) -> None:
    while not stop():
        await asyncio.sleep(STOP_POLL)
    # A trial cancelled between litellm making its request coroutine and awaiting it leaves that
    # coroutine unawaited: nothing was sent, so nothing is lost, and the warning (one per trial in
    # flight, from each worker) is not the one line a stopped batch prints.
    warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
    for job in jobs:
        job.cancel()


# -- worker processes on this machine ---------------------------------------------------------
_queue: Any = None  # set in each worker by _start_worker
_stop: Any = None
_parent = 0


def _start_worker(messages: Any, stop: Any, parent: int, inherited: tuple[int, ...]) -> None:
    global _queue, _stop, _parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent hears ctrl+c and tells the workers
    for fd in inherited:  # a forked worker must not hold the run's lock after its parent is gone
        with contextlib.suppress(OSError):
            os.close(fd)
    _queue, _stop, _parent = messages, stop, parent
    threading.Thread(target=_exit_with_parent, name="ebench-parent-watch", daemon=True).start()


def _exit_with_parent() -> None:
    """A worker whose parent was killed would wait for its next job forever: it ends itself (its
    trials in flight keep sessions without an end, run again on resume)."""
    while os.getppid() == _parent:
        time.sleep(STOP_POLL)
    os._exit(1)


def _stopped() -> bool:
    return bool(_stop.is_set())


def _run_share(runner: TrialRunner, share: list[tuple[Task, int]], concurrency: int, index: int) -> None:
    """One worker's job: its share of the trials, each summary sent back as it ends."""
    freeze_imports()
    try:
        asyncio.run(runner.run_all(share, concurrency, lambda summary: _queue.put(("summary", summary)), stop=_stopped))
    except FatalSolverError as exc:
        _queue.put(("fatal", str(exc)))
    finally:
        _queue.put(("done", index))  # after its summaries: one queue keeps a process's messages in order


def _ready() -> int:
    return os.getpid()


def preload_worlds(tasks: Iterable[Task]) -> None:
    """Ready in this process what the trials of `tasks` start from: each world they use, checked
    and prepared once (its image: `trial_copy`). Done before the workers fork, every worker finds
    it already made, shared copy-on-write instead of each making its own (30-40 ms and a few MB a
    world, per worker)."""
    from ..engine.domain_registry import get_domain
    from ..tasks.worlds import check_world, task_seed

    first = {(task.domain, task_seed(task)): task for task in reversed(list(tasks))}
    for (name, seed), task in sorted(first.items()):
        # A world that cannot be made here is not an error yet: each of its trials reports it.
        with contextlib.suppress(Exception):
            trial_copy(get_domain(name), seed).close()
            check_world(task)  # the fingerprints it compares, cached (a task made on another world is its trial's error)


class WorkerPool:
    """`workers` processes, started now. They are forked when this process has no other thread
    (a worker then starts in milliseconds, with the modules and worlds already loaded: a spawned
    one imports litellm again, seconds), else spawned (a fork would copy another thread's locks
    mid-use). Start it before any thread (a progress bar's) and before any event loop."""

    def __init__(self, workers: int, inherited: tuple[int, ...] = (), preload: Callable[[], None] | None = None) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.method = "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"
        if self.method == "fork":
            if preload is not None:
                preload()  # the worlds (and what loading them imports), made once here and shared
            # What is loaded now is never collected again, here nor in a worker: a collection
            # walking it would write to every object's header, copying each page it shares.
            freeze_imports()
        self.context = multiprocessing.get_context(self.method)
        self.messages = self.context.Queue()
        self.stop = self.context.Event()
        self.pool = ProcessPoolExecutor(
            workers, mp_context=self.context, initializer=_start_worker, initargs=(self.messages, self.stop, os.getpid(), inherited)
        )
        # Forked or spawned with SIGINT ignored (kept across exec), a worker cannot be killed by a
        # ctrl+c while it starts: this process hears it and tells the workers to stop.
        with _sigint_ignored():
            self.pool.submit(_ready).result()  # a fork pool forks every worker at its first job
            self.pool.submit(_ready)  # a spawn pool starts one per job waiting: the rest start now too
            for _ in range(workers - 2):
                self.pool.submit(_ready)

    def kill(self) -> None:
        for process in list((getattr(self.pool, "_processes", None) or {}).values()):
            process.kill()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_in_processes(
    pool: WorkerPool,
    runner: TrialRunner,
    todo: Sequence[tuple[Task, int]],
    concurrency: int,
    record: Callable[[TrialSummary], None],
) -> None:
    """Run `todo` on `pool`'s workers, `record`ing each summary here as it arrives."""
    workers = pool.workers
    shares = [share for share in (list(todo[i::workers]) for i in range(workers)) if share]
    if not shares:
        return
    per_worker = math.ceil(concurrency / len(shares))
    fatal: str | None = None
    interrupted = False
    messages, stop = pool.messages, pool.stop
    jobs = [pool.pool.submit(_run_share, runner, share, per_worker, index) for index, share in enumerate(shares)]
    waiting = set(range(len(shares)))
    try:
        while waiting:
            try:
                try:
                    kind, payload = messages.get(timeout=STOP_POLL)
                except queues.Empty:
                    for index in [i for i in waiting if jobs[i].done() and jobs[i].exception() is not None]:
                        waiting.discard(index)  # died without saying it was done (killed, out of memory)
                        stop.set()
                    continue
                if kind == "summary":
                    record(payload)
                elif kind == "fatal":
                    fatal = fatal or payload
                    stop.set()
                elif kind == "done":
                    waiting.discard(payload)
            except KeyboardInterrupt:
                if interrupted:  # a second ctrl+c: the workers are not waited for
                    raise
                interrupted = True
                stop.set()
    except BaseException:
        pool.kill()
        raise
    errors = [job.exception() for job in jobs if job.done() and job.exception() is not None]
    if interrupted:
        raise KeyboardInterrupt
    if fatal is not None:
        raise FatalSolverError(fatal)
    if errors:
        raise ExecutorError(f"a worker process failed: {type(errors[0]).__name__}: {errors[0]}")


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may change signal handlers (and hears ctrl+c)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


# -- Ray ----------------------------------------------------------------------------------------
RAY_RETRIES = 3  # a task whose node or worker process died is run again this many times
CHUNKS_PER_CPU = 2


def load_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs Ray: pip install 'ebench[ray]'") from None
    return ray


def connect_ray(address: str | None = None) -> Any:
    """Ray, connected to the cluster at `address` (default: RAY_ADDRESS, else a local one started
    here); a process that has already connected keeps its connection."""
    ray = load_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except Exception as exc:  # no cluster at the address, a version mismatch
            raise ExecutorError(f"cannot connect to Ray{f' at {address}' if address else ''}: {type(exc).__name__}: {exc}") from None
    return ray


def _warm(runner: TrialRunner, worlds: dict[str, str]) -> int:
    """A Ray task that loads what the trials need (the solver's modules and client, the worlds) into
    the worker that runs it."""
    check = getattr(runner.solver, "check", None)
    if callable(check):
        check()  # the model solver's imports litellm
    _check_worlds(worlds)
    return os.getpid()


def warm_ray(runner: TrialRunner, worlds: dict[str, str]) -> None:
    """Ready the workers of the cluster (two a CPU), as a long-lived cluster's are after their first batch."""
    ray = load_ray()
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    task = ray.remote(num_cpus=1 / CHUNKS_PER_CPU, max_retries=RAY_RETRIES)(_warm)
    try:
        ray.get([task.remote(runner, worlds) for _ in range(CHUNKS_PER_CPU * cpus)])
    except ray.exceptions.RayError as exc:
        raise ExecutorError(f"the Ray workers could not start: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None


def _check_worlds(worlds: dict[str, str]) -> None:
    from ..tasks.worlds import world_fingerprint

    for key, expected in worlds.items():  # built here on first use, from the same seed: it must be the driver's world
        domain, seed = key.rsplit(":", 1)
        found = world_fingerprint(domain, int(seed))
        if found != expected:
            raise ExecutorError(f"the {key} world on this node has fingerprint {found}, the run's is {expected}: another ebench version?")


def _ray_chunk(
    runner: TrialRunner, chunk: list[tuple[Task, int]], concurrency: int, worlds: dict[str, str]
) -> list[tuple[TrialSummary, bytes | None]]:
    """A Ray task: its chunk of trials on this node, with each session file's bytes."""
    freeze_imports()
    _check_worlds(worlds)
    scratch = Path(tempfile.mkdtemp(prefix="ebench-ray-"))
    try:
        here = replace(runner, out=scratch)
        summaries: list[TrialSummary] = []
        asyncio.run(here.run_all(chunk, concurrency, summaries.append))
        return [(s, _read(scratch / s.session) if s.session else None) for s in summaries]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def run_on_ray(
    runner: TrialRunner,
    todo: Sequence[tuple[Task, int]],
    concurrency: int,
    worlds: dict[str, str],
    record: Callable[[TrialSummary], None],
    address: str | None = None,
) -> None:
    """Run `todo` as Ray tasks (on the cluster at `address`, or a local one started here), writing
    each returned session into the run directory and `record`ing its summary."""
    ray = connect_ray(address)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    # Two chunks share a CPU, each with half its share of the concurrency: while one drains its
    # last slow trials, the other keeps the CPU busy (one chunk a CPU would leave it idle then).
    size = max(1, math.ceil(concurrency / (CHUNKS_PER_CPU * cpus)))
    chunks = [list(todo[i : i + size]) for i in range(0, len(todo), size)]
    task = ray.remote(num_cpus=1 / CHUNKS_PER_CPU, max_retries=RAY_RETRIES, retry_exceptions=False)(_ray_chunk)
    pending = [task.remote(runner, chunk, size, worlds) for chunk in chunks]
    try:
        while pending:
            # A bounded wait: ctrl+c is heard between two waits, never held up by one in Ray's C++.
            done, pending = ray.wait(pending, num_returns=1, timeout=STOP_POLL)
            if not done:
                continue
            try:
                results = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, FatalSolverError):
                    raise FatalSolverError(str(cause)) from None
                raise ExecutorError(f"a Ray task failed: {type(cause or exc).__name__}: {cause or exc}") from None
            except ray.exceptions.RayError as exc:  # its retries ran out (nodes lost), or the cluster went away
                raise ExecutorError(f"a Ray task was lost: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
            for summary, session in results:
                if session is not None:
                    path = runner.out / summary.session
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(session)
                record(summary)
    finally:
        for ref in pending:  # ctrl+c or a failure: the others are not waited for (their trials run again on resume)
            ray.cancel(ref, force=True)
