"""Where a batch's trials run: worker processes (`--workers`) and Ray (`--executor ray`) give the
results one process gives, with one writer; ctrl+c, a kill, a fatal model error and a lost worker
or node behave as they do in one process, and the run resumes to the same results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.batch import Batch
from ebench.sessions.executors import ExecutorError
from ebench.sessions.runs import load_run
from ebench.sessions.solvers.simple import OracleSolver
from ebench.sessions.trial import MANY_COPIES
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer
from ebench.testing.solvers import CrashOnceSolver, StallingSolver

runner = CliRunner()
MOBA = ["run", "--batch", "--solver", "oracle", "--domain", "moba", "--trials", "2", "--tasks-dir", str(SUITE_DIR)]


@pytest.fixture(scope="module")
def worlds(music_world, meeting_world, moba_world):
    return True


@pytest.fixture(scope="module")
def moba_tasks():
    return load_suite(SUITE_DIR, domain="moba").tasks


def comparable(out: Path) -> list[dict]:
    """Each results line without its wall time, in (task, trial) order: what a run's order and timing cannot change."""
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for line in lines:
        line.pop("seconds")
    return sorted(lines, key=lambda line: (line["task"], line["trial"]))


def session_events(out: Path) -> dict[str, list[str]]:
    return {
        str(p.relative_to(out)): [json.loads(line)["event"] for line in p.read_text().splitlines()]
        for p in sorted((out / "sessions").rglob("*.jsonl"))
    }


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, worlds) -> Path:
    out = tmp_path_factory.mktemp("one") / "run"
    result = runner.invoke(app, [*MOBA, "--workers", "1", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["workers"] == 1
    return out


def test_worker_processes_give_the_results_of_one_process(tmp_path, one_process):
    out = tmp_path / "run"
    result = runner.invoke(app, [*MOBA, "--workers", "2", "--concurrency", "4", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["workers"] == 2 and summary["trials_run"] == len(comparable(one_process)) == 220
    assert comparable(out) == comparable(one_process)  # no result lost or duplicated, and the same grades
    assert session_events(out) == session_events(one_process)
    reports = []
    for run in (out, one_process):
        metrics = json.loads(runner.invoke(app, ["report", str(run), "--json"]).stdout)["runs"][0]["metrics"]
        metrics["efficiency"].pop("seconds"), metrics["efficiency"]["totals"].pop("seconds")  # wall time
        reports.append(metrics)
    assert reports[0] == reports[1]
    assert load_run(out).manifest.status == "finished"


def test_the_default_keeps_a_small_batch_in_one_process(tmp_path, worlds):
    result = runner.invoke(app, ["run", "--batch", "--solver", "oracle", "--task", "music-0005", "--out", str(tmp_path / "r"), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["workers"] == 1


def _cli(*args: str, home: Path) -> subprocess.Popen:
    env = {**os.environ, "EBENCH_HOME": str(home), "LITELLM_OFFLINE_MODE": "true", "OPENAI_API_KEY": "sk-test-0123456789"}
    return subprocess.Popen([sys.executable, "-m", "ebench", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _wait_for_lines(path: Path, count: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while _lines(path) < count:
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"{path}: fewer than {count} lines after 120 s"
        time.sleep(0.05)


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(p) for p in (task / "children").read_text().split()}
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def short_tasks() -> list:
    """The 12 moba tasks with the shortest reference solutions."""
    return sorted(load_suite(SUITE_DIR, domain="moba").tasks, key=lambda t: (len(t.reference_solution), t.id))[:12]


def _wait_gone(pids: set[int]) -> None:
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"a child process outlived its parent by 60 s: {[p for p in pids if _alive(p)]}"
        time.sleep(0.05)


@pytest.fixture
def slow_model():
    """A model that plays each task's reference, 0.2 s a turn: a batch long enough to stop half-way."""
    with FakeOpenAI(ReferencePlayer(short_tasks(), parallel=True), delay=0.2) as server:
        yield server


def model_batch(server: FakeOpenAI, out: Path, *extra: str) -> list[str]:
    ids = [arg for task in short_tasks() for arg in ("--task", task.id)]
    args = ["run", "--batch", "--model", "openai/reference", "--api-base", server.base_url, "--tasks-dir", str(SUITE_DIR), *ids]
    return [*args, "--trials", "2", "--concurrency", "4", "--retries", "0", "--out", str(out), *extra]


@pytest.mark.slow
def test_ctrl_c_stops_every_worker_and_the_run_resumes(tmp_path, ebench_home, slow_model, worlds):
    out = tmp_path / "run"
    process = _cli(*model_batch(slow_model, out, "--workers", "2"), home=ebench_home)
    _wait_for_lines(out / "results.jsonl", 3, process)
    workers = _children(process.pid)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "run the same command again" in stdout
    assert "never awaited" not in stderr  # requests in flight were cancelled: the one line, not a warning per trial
    _wait_gone(workers)  # the workers, and multiprocessing's resource tracker, which ends when it reads its parent's exit
    kept = load_run(out)
    assert 3 <= len(kept.results) < 24 and kept.manifest.status == "interrupted"

    resumed = _cli(*model_batch(slow_model, out, "--workers", "2", "--json"), home=ebench_home)
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["trials_kept"] == len(kept.results) and summary["trials_run"] == 24 - len(kept.results)
    results = load_run(out).results
    assert sorted((r.task, r.trial) for r in results) == sorted({(r.task, r.trial) for r in results})  # none twice
    assert len(results) == 24 and all(r.passed for r in results)


@pytest.mark.slow
def test_a_killed_batch_leaves_no_worker_behind_and_resumes(tmp_path, ebench_home, slow_model, worlds):
    out = tmp_path / "run"
    process = _cli(*model_batch(slow_model, out, "--workers", "2"), home=ebench_home)
    _wait_for_lines(out / "results.jsonl", 2, process)
    workers = _children(process.pid)
    assert len(workers) >= 2
    process.kill()  # SIGKILL: the parent runs no clean-up; its workers notice it is gone
    process.communicate(timeout=60)  # their end of its stdout closes when the last of them exits
    _wait_gone(workers)
    resumed = _cli(*model_batch(slow_model, out, "--workers", "2", "--json"), home=ebench_home)
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    results = load_run(out).results
    assert len(results) == 24 and len({(r.task, r.trial) for r in results}) == 24 and all(r.passed for r in results)


def test_a_fatal_model_error_stops_every_worker(tmp_path, moba_tasks, worlds):
    with FakeOpenAI(ReferencePlayer(moba_tasks), api_key="sk-the-right-key") as server:  # every request: 401
        out = tmp_path / "run"
        args = ["run", "--batch", "--model", "openai/reference", "--api-base", server.base_url, "--domain", "moba"]
        result = runner.invoke(
            app, [*args, "--tasks-dir", str(SUITE_DIR), "--workers", "2", "--out", str(out), "--json"], env={"OPENAI_API_KEY": "sk-wrong"}
        )
    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1 and "run the same command again to resume" in result.stderr
    assert len(server.requests) <= 2 * 8  # each worker stopped at its first answers, not after 110 tasks
    assert load_run(out).manifest.status == "failed" and load_run(out).results == []


def test_a_worker_that_dies_is_an_error_of_the_run_not_of_the_solver(tmp_path, moba_tasks, worlds):
    marker = tmp_path / "crashed"
    out = tmp_path / "run"
    solver = CrashOnceSolver(marker, moba_tasks[5].id)
    batch = Batch(out, moba_tasks[:40], solver, 1)
    batch.prepare()
    with pytest.raises(ExecutorError, match="a worker process failed"):
        batch.execute(4, workers=2)
    batch.finish("failed")
    assert marker.exists()
    kept = load_run(out).results
    assert len(kept) < 40 and all(r.passed for r in kept)  # what came back before is kept, nothing scored against the solver
    again = Batch(out, moba_tasks[:40], solver, 1)
    again.prepare()
    again.execute(4, workers=2)
    again.finish("finished")
    results = load_run(out).results
    assert len(results) == 40 and len({r.task for r in results}) == 40 and all(r.passed for r in results)


# -- Ray ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def local_ray(worlds):
    ray = pytest.importorskip("ray")  # the test extra installs it: CI runs these
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_gives_the_results_of_one_process(tmp_path, local_ray, one_process):
    out = tmp_path / "run"
    result = runner.invoke(app, [*MOBA, "--executor", "ray", "--concurrency", "8", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["executor"] == "ray"
    assert comparable(out) == comparable(one_process)
    assert session_events(out) == session_events(one_process)  # every session streamed back into the run directory
    # resuming on Ray runs only what is missing
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:-5]))
    again = runner.invoke(app, [*MOBA, "--executor", "ray", "--out", str(out), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["trials_run"] == 5
    assert comparable(out) == comparable(one_process)


@pytest.mark.slow
def test_a_lost_ray_worker_is_retried(tmp_path, local_ray, moba_tasks):
    marker = tmp_path / "crashed"
    out = tmp_path / "run"
    batch = Batch(out, moba_tasks[:12], CrashOnceSolver(marker, moba_tasks[3].id), 1)
    batch.prepare()
    batch.execute(4, executor="ray")
    batch.finish("finished")
    assert marker.exists()  # the worker running that chunk died once
    results = load_run(out).results
    assert len(results) == 12 and len({r.task for r in results}) == 12 and all(r.passed for r in results)


@pytest.mark.slow
def test_ctrl_c_stops_a_ray_batch_at_once(tmp_path, local_ray, moba_tasks, send_ctrl_c):
    stall = 600.0  # each trial waits this long: only a stop that is heard ends the batch before it
    batch = Batch(tmp_path / "run", moba_tasks[:8], StallingSolver(stall), 1)
    batch.prepare()
    ctrl_c = threading.Timer(2.0, send_ctrl_c)
    started = time.monotonic()
    ctrl_c.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            batch.execute(4, executor="ray")
    finally:
        ctrl_c.cancel()
    assert time.monotonic() - started < stall  # heard while Ray was waiting, not after the trials
    assert load_run(tmp_path / "run").results == []


def test_the_executor_options_are_checked(tmp_path, worlds, monkeypatch):
    base = ["run", "--batch", "--solver", "oracle", "--task", "music-0005", "--out", str(tmp_path / "r")]
    for extra, said in [
        (["--executor", "spark"], "--executor 'spark': expected local or ray"),
        (["--ray-address", "ray://x:10001"], "--ray-address is for --executor ray"),
        (["--executor", "ray", "--workers", "2"], "--workers is for --executor local"),
    ]:
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 2 and said in result.stderr and result.stderr.count("\n") == 1
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    result = runner.invoke(app, [*base, "--executor", "ray"])
    assert result.exit_code == 2 and "pip install 'ebench[ray]'" in result.stderr


# -- forked workers start from what the parent loaded ---------------------------------------
FORKED = """
import gc, json, os, sys, threading
from pathlib import Path
from ebench.sessions import trial
from ebench.sessions.batch import Batch
from ebench.sessions.solvers.simple import OracleSolver
from ebench.tasks.suite import SUITE_DIR, load_suite

def state():
    return {"pid": os.getpid(), "parent": os.getppid(), "images": sorted(map(list, trial._IMAGES)), "frozen": gc.get_freeze_count()}

tasks = [t for d in ("moba", "music") for t in load_suite(SUITE_DIR, domain=d).tasks[:6]]
out = {}
for workers in (1, 2):
    batch = Batch(Path(sys.argv[1]) / str(workers), tasks, OracleSolver(), 2)
    batch.prepare()
    if workers == 1:
        batch.execute(4)
    else:
        threads = threading.active_count()
        with batch.worker_pool(workers) as pool:
            states = [pool.pool.submit(state).result() for _ in range(8)]
            batch.execute(4, pool=pool)
            pids = sorted({s["pid"] for s in states})
        out.update(method=pool.method, threads=threads, states=states, here=os.getpid(), parent_images=sorted(map(list, trial._IMAGES)))
        out["alive_after_close"] = [p for p in pids if os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
    batch.finish("finished")
print(json.dumps(out))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only (spawned elsewhere)")
def test_forked_workers_start_from_the_loaded_worlds_and_give_the_same_results(tmp_path, ebench_home, worlds):
    env = {**os.environ, "EBENCH_HOME": str(ebench_home), "LITELLM_OFFLINE_MODE": "true"}
    done = subprocess.run([sys.executable, "-c", FORKED, str(tmp_path)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["threads"] == 1 and found["method"] == "fork"
    worlds_used = sorted([[name, seed] for name, seed in found["parent_images"]])
    assert {name for name, _ in worlds_used} == {"moba", "music"}
    for state in found["states"]:
        assert state["parent"] == found["here"]  # a worker of this batch's process
        assert state["images"] == worlds_used  # the worlds came with the fork: no worker prepares its own
        assert state["frozen"] > 0  # what the parent loaded is out of the collector's sight
    assert found["alive_after_close"] == []  # every worker ended with its pool
    assert comparable(tmp_path / "2") == comparable(tmp_path / "1")
    assert session_events(tmp_path / "2") == session_events(tmp_path / "1")


class _KeepRecorder(OracleSolver):
    """The oracle, noting how many idle copies a world the process keeps while it solves."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    async def solve(self, trial, limits, *, step=None):
        from ebench.sessions import trial as trials

        self.seen.add(trials._COPIES.KEEP)
        return await super().solve(trial, limits, step=step)


@pytest.mark.parametrize(("concurrency", "kept"), [(4, None), (MANY_COPIES, 1)])
def test_a_process_holding_many_trials_keeps_one_idle_copy_a_world(tmp_path, moba_tasks, worlds, concurrency, kept):
    from ebench.sessions import trial as trials

    default = type(trials._COPIES).KEEP
    solver = _KeepRecorder()
    batch = Batch(tmp_path / "run", moba_tasks[:6], solver, 2)
    batch.prepare()
    batch.execute(concurrency)
    batch.finish("finished")
    assert solver.seen == {kept or default}  # copies are most of a busy process's memory: one idle a world
    assert default == trials._COPIES.KEEP  # and the default again once the batch is over
    assert all(r.passed for r in load_run(tmp_path / "run").results)
