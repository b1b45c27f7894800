"""Batch throughput and memory, as a user running `ebench run --batch` waits for them.

Every leg is the real CLI in a fresh process (imports, world loading and the run directory
included), against a fake OpenAI-compatible server in its own process that answers after
`--delay` seconds (200 ms), playing each task's reference solution through the real litellm
client. The tasks are the suite's own mix: up to 64 tasks sampled by stratum of reference length
(the suite sorted by its reference solution's call count, cut into as many equal strata as tasks
wanted, the middle task of each: deterministic, and the mix of short and long trials is the
suite's), then run in the suite's order. Figures:

1. Concurrency sweep, default `--workers` (the machine's cores): trials per second at concurrency
   1, 16, 64 and 256, each with `--sweep-waves` (12) times as many trials as the concurrency (so the
   pool refills, as in a real batch, and the leg measures the steady state rather than its ramp
   and its longest trials' tail; concurrency 1 runs `--c1-trials`). The fake model's own CPU
   is measured beside ebench's: on one machine both share the cores, which bounds the legs. The speed-ups use the
   batch's own time (the CLI's `seconds`: from the first trial to the last); the process's wall
   time, process start included, is beside it.
2. Processes and Ray at concurrency 64: `--workers 1` and `--workers 2` against the default, and
   `--executor ray` on a local Ray the CLI starts (skipped when Ray is not installed). Each of these
   legs runs --leg-runs times (2): the fastest run counts, with the highest memory peak of them.
3. Memory of every leg summed over its whole process tree (the CLI, its workers, Ray's processes:
   every descendant), sampled from /proc every --sample seconds: the peak of the summed PSS
   (shared pages counted once, split between the processes sharing them) and of the summed RSS,
   and how many processes there were. The goal is on the default run at the top concurrency.
4. Memory in one process (`--workers 1`) at the top concurrency: RSS when the trials start, the
   peak, and once the trials have ended (what a long batch leaks).
5. Worker start: the default workers forked by a batch process that has loaded its worlds, the
   milliseconds until every one has answered, and a worker's first trial beside its second.
6. The oracle over the shipped suite x 3 (the harness alone, no model): trials per second, one
   process and the default workers.

    python benchmarks/batch_throughput.py [--delay 0.2] [--sweep-waves 12] [--waves 4] [--levels 1,16,64,256] [--json]
    python benchmarks/batch_throughput.py --quick    # delay 10 ms, levels 1,4, one wave, no Ray
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark")
MODEL = "openai/gpt-4o-mini"  # a priced model, as real runs use (the fake server answers any)
GOALS = {"c64_over_c1": 40.0, "c256_over_c64": 1.5, "ray_within": 0.2, "peak_mb": 1600.0, "after_mb": 300.0}
MIX_TASKS = 64  # distinct tasks in a leg at most (the suite's mix of them)
QUICK = [
    "--delay",
    "0.01",
    "--levels",
    "1,4",
    "--sweep-waves",
    "1",
    "--waves",
    "1",
    "--leg-runs",
    "1",
    "--c1-trials",
    "2",
    "--oracle-trials",
    "1",
    "--no-ray",
]


class TreeMemory:
    """The peak memory of a process and all its descendants, summed, sampled from /proc in a thread."""

    def __init__(self, pid: int, interval: float) -> None:
        self.pid, self.interval = pid, interval
        self.peak_pss_kb = self.peak_rss_kb = self.processes = self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def sample(self) -> None:
        pids = descendants(self.pid)
        pss = rss = 0
        for pid in pids:
            p, r = process_memory_kb(pid)
            pss, rss = pss + p, rss + r
        self.samples += 1
        # the processes the tree had, at most: not those of the peak's sample, since a worker's
        # shared pages count to its parent once it has ended (the sum can peak just after)
        self.processes = max(self.processes, len(pids))
        self.peak_pss_kb = max(self.peak_pss_kb, pss)
        self.peak_rss_kb = max(self.peak_rss_kb, rss)

    def figures(self) -> dict:
        return {
            "peak_pss_mb": round(self.peak_pss_kb / 1024),
            "peak_rss_mb": round(self.peak_rss_kb / 1024),
            "processes": self.processes,
            "samples": self.samples,
        }


def descendants(root: int) -> list[int]:
    """`root` and every process below it, from /proc/*/stat (a process gone meanwhile is skipped)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])  # the name may hold spaces and parentheses
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def process_memory_kb(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of one process in kB; (0, 0) once it has gone."""
    values = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("Pss", "Rss"):
                values[name] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return 0, 0
    return values.get("Pss", values.get("Rss", 0)), values.get("Rss", 0)


def ebench(*args: str, env: dict[str, str] | None = None, sample: float = 0.25) -> tuple[dict, float, dict]:
    """`ebench ARGS --json` in a fresh process: its JSON summary (with `cpu_seconds`, the CPU of the
    process and its workers, start-up included), the process's wall time and its tree's memory."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(
        [sys.executable, "-m", "ebench", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    with TreeMemory(process.pid, sample) as memory:
        stdout, stderr = process.communicate()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        raise SystemExit(f"ebench {' '.join(args)} failed ({process.returncode}): {stderr.strip()[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {**json.loads(stdout), "cpu_seconds": round(cpu, 2)}, wall, memory.figures()


def suite_mix(count: int) -> list[str]:
    """Ids of `count` tasks with the suite's own distribution of reference lengths: the suite sorted
    by reference call count, cut into `count` equal strata, the middle task of each (cycled when
    more are asked for than the suite holds), in the suite's order."""
    from ebench.tasks.suite import load_suite

    tasks = sorted(load_suite().tasks, key=lambda t: (len(t.reference_solution), t.id))
    distinct = min(count, len(tasks))
    picked = sorted(tasks[int((i + 0.5) * len(tasks) / distinct)].id for i in range(distinct))
    return [picked[i % len(picked)] for i in range(count)]


def mix_calls(ids: list[str]) -> dict:
    """The reference call counts of a mix beside the suite's (that the mix is the suite's shape)."""
    from ebench.tasks.suite import load_suite

    length = {t.id: len(t.reference_solution) for t in load_suite().tasks}
    mix, suite = sorted(length[i] for i in ids), sorted(length.values())
    return {
        "tasks": len(set(ids)),
        "mean_calls": round(statistics.mean(mix), 1),
        "median_calls": statistics.median(mix),
        "max_calls": mix[-1],
        "suite_mean_calls": round(statistics.mean(suite), 1),
        "suite_median_calls": statistics.median(suite),
    }


def best_leg(runs: int, run: Callable[[int], dict]) -> dict:
    """The fastest of `runs` runs of a leg, with the highest memory peak of them all: a leg of a few
    seconds, compared with another, is slowed by whatever else the shared machine runs meanwhile
    (Ray against --workers 2 measured 0.70x and 1.00x an hour apart)."""
    legs = [run(n) for n in range(max(1, runs))]
    best = dict(max(legs, key=lambda leg: leg["trials_per_second"]))
    best["memory"] = dict(max((leg["memory"] for leg in legs), key=lambda memory: memory["peak_pss_mb"]))
    best["memory"]["processes"] = max(leg["memory"]["processes"] for leg in legs)
    best["runs"] = [leg["trials_per_second"] for leg in legs]
    return best


def model_leg(base: str, out: Path, trials: int, concurrency: int, *extra: str, sample: float = 0.25) -> dict:
    ids = suite_mix(min(trials, MIX_TASKS))
    repeats = -(-trials // len(ids))  # tasks x trials reaches `trials`
    args = ["run", "--batch", "--model", MODEL, "--api-base", base, "--retries", "0", "--concurrency", str(concurrency)]
    args += [a for task in ids for a in ("--task", task)] + ["--trials", str(repeats), "--out", str(out), *extra]
    summary, wall, memory = ebench(*args, sample=sample)
    run = summary["trials_run"]
    # the same command again finds every trial done: its CPU is the start-up's (imports, run directory)
    startup = ebench(*args)[0]["cpu_seconds"]
    return {
        "memory": memory,
        "mix": mix_calls(ids),
        "concurrency": concurrency,
        "trials": run,
        "passed": summary["passed"],
        "workers": summary.get("workers"),
        "executor": summary.get("executor"),
        "batch_seconds": summary["seconds"],
        "process_seconds": round(wall, 2),
        "trials_per_second": round(run / summary["seconds"], 2),
        "cpu_ms_per_trial": round(1000 * max(0.0, summary["cpu_seconds"] - startup) / max(run, 1), 1),
        "startup_cpu_seconds": startup,
    }


def memory_probe(base: str, trials: int, concurrency: int) -> None:
    """In this process (run as a child): a model batch at `concurrency`, printing RSS figures in MB."""
    import asyncio
    import gc

    from ebench.sessions.batch import Batch
    from ebench.sessions.executors import freeze_imports
    from ebench.sessions.model_client import LLMConfig, load_litellm
    from ebench.sessions.solvers.llm import LLMSolver
    from ebench.sessions.trial import current_world
    from ebench.tasks.suite import load_suite

    by_id = {t.id: t for t in load_suite().tasks}
    ids = suite_mix(MIX_TASKS)
    tasks = [by_id[i] for i in ids]
    from ebench.engine.domain_registry import get_domain

    for name in sorted({t.domain for t in tasks}):
        current_world(get_domain(name))
    load_litellm()
    solver = LLMSolver(LLMConfig(model=MODEL, api_base=base, retries=0))
    with tempfile.TemporaryDirectory() as tmp:
        batch = Batch(Path(tmp) / "run", tasks, solver, -(-trials // len(tasks)))
        batch.prepare()
        freeze_imports()
        start = _rss_mb()
        asyncio.run(batch.run(concurrency))
        gc.collect()
        after = _rss_mb()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        batch.finish("finished")
        print(json.dumps({"trials": len(batch.summaries), "start_mb": round(start), "peak_mb": round(peak), "after_mb": round(after)}))


def worker_start_probe(workers: int) -> None:
    """In this process (run as a child, as `ebench run --batch` runs): the worlds of the suite's mix
    loaded, then `workers` workers forked and ready, and each one's first trial beside its second
    (oracle: the harness alone), printing milliseconds. A worker forked after the worlds are
    loaded finds the imports and the prepared worlds already there."""
    from ebench.sessions.batch import Batch
    from ebench.sessions.executors import preload_worlds
    from ebench.sessions.solvers.simple import OracleSolver
    from ebench.tasks.suite import load_suite

    by_id = {t.id: t for t in load_suite().tasks}
    tasks = [by_id[i] for i in sorted(set(suite_mix(MIX_TASKS)))]
    with tempfile.TemporaryDirectory() as tmp:
        batch = Batch(Path(tmp) / "run", tasks, OracleSolver(), 2)
        batch.prepare()
        started = time.perf_counter()
        preload_worlds(tasks)  # what worker_pool does first: timed apart from the fork
        loaded = time.perf_counter()
        with batch.worker_pool(workers) as pool:
            ready = time.perf_counter()  # every worker forked and has answered a first job
            firsts = [pool.pool.submit(_two_trials, batch.runner, tasks[i]).result() for i in range(workers)]
        batch.finish("finished")
    print(
        json.dumps(
            {
                "workers": workers,
                "method": pool.method,
                "worlds_ms": round(1000 * (loaded - started), 1),
                "ready_ms": round(1000 * (ready - loaded), 1),
                "first_trial_ms": round(max(first for first, _ in firsts), 1),
                "second_trial_ms": round(max(second for _, second in firsts), 1),
            }
        )
    )


def _two_trials(runner: object, task: object) -> tuple[float, float]:
    """In a worker: its first trial of `task`, then another (ms each)."""
    import asyncio

    times = []
    for number in (1, 2):
        started = time.perf_counter()
        asyncio.run(runner.run_trial(task, number))  # type: ignore[attr-defined]
        times.append(1000 * (time.perf_counter() - started))
    return times[0], times[1]


def _cpu_bound(cores: int, leg: dict, c1: dict) -> str:
    """The most trials a second the cores allow at a leg's CPU a trial: ebench's (model client and
    harness, start-up not counted) and the fake model's, which runs on the same machine."""
    own, server = leg["cpu_ms_per_trial"], leg.get("server_cpu_ms_per_trial", 0.0)
    ebench_only, both = 1000 * cores / own, 1000 * cores / (own + server)
    return (
        f"at {leg['concurrency']}: ebench {own} ms + the fake model {server} ms of CPU a trial, at most {both:.0f} trials/s on"
        f" {cores} cores ({both / c1['trials_per_second']:.0f}x concurrency 1; ebench alone {ebench_only:.0f}/s), measured"
        f" {leg['trials_per_second']:.0f}/s"
    )


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far, from /proc (0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(delay: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "ebench.testing.fake_openai", "--delay", str(delay), "--parallel"], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.2, help="the fake model's answer time, seconds")
    parser.add_argument("--levels", default="1,16,64,256", help="the concurrency sweep")
    parser.add_argument(
        "--sweep-waves",
        type=int,
        default=12,
        help="trials per sweep leg = this x its concurrency (the steady state, not the ramp and the tail)",
    )
    parser.add_argument(
        "--waves", type=int, default=4, help="trials per leg of the other runs (workers, Ray, memory) = this x its concurrency"
    )
    parser.add_argument(
        "--leg-runs", type=int, default=2, help="runs of each compared leg (workers 1 and 2, Ray): the fastest counts, the highest memory"
    )
    parser.add_argument("--c1-trials", type=int, default=24, help="trials at concurrency 1")
    parser.add_argument("--oracle-trials", type=int, default=3, help="trials per task for the oracle legs (0: skip them)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray leg")
    parser.add_argument("--sample", type=float, default=0.25, help="seconds between two samples of a leg's process tree's memory")
    parser.add_argument("--quick", action="store_true", help="a smoke run: " + " ".join(QUICK))
    parser.add_argument("--memory-probe", nargs=3, metavar=("BASE", "TRIALS", "CONCURRENCY"), help=argparse.SUPPRESS)
    parser.add_argument("--worker-start-probe", type=int, metavar="WORKERS", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args = parser.parse_args([*sys.argv[1:], *QUICK])
    if args.memory_probe:
        base, trials, concurrency = args.memory_probe
        memory_probe(base, int(trials), int(concurrency))
        return
    if args.worker_start_probe:
        worker_start_probe(args.worker_start_probe)
        return
    say = (lambda text: None) if args.json else print
    levels = [int(level) for level in args.levels.split(",")]
    ebench("domains", "build")  # the worlds exist before any leg is timed
    figures: dict = {"cores": os.cpu_count(), "delay": args.delay, "oracle_trials": args.oracle_trials, "sweep": [], "legs": {}}
    server, base = start_server(args.delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for level in levels:
                trials = args.c1_trials if level == 1 else args.sweep_waves * level
                served = process_cpu_seconds(server.pid)
                leg = model_leg(base, root / f"c{level}", trials, level, sample=args.sample)
                # the fake model shares the machine's cores: its CPU is part of what bounds a leg here
                # (its share of the leg's second run, which finds every trial done, is nil)
                leg["server_cpu_ms_per_trial"] = round(1000 * (process_cpu_seconds(server.pid) - served) / max(leg["trials"], 1), 1)
                figures["sweep"].append(leg)
                say(
                    f"concurrency {level:>3} ({leg['workers']} workers): {leg['trials']} trials in {leg['batch_seconds']:.1f} s"
                    f" = {leg['trials_per_second']:.1f} trials/s; process {leg['process_seconds']:.1f} s; {leg['passed']} passed;"
                    f" memory {_tree(leg['memory'])}"
                )
            middle = max(levels[-2:]) if len(levels) > 1 else levels[0]
            middle = 64 if 64 in levels else middle
            trials = args.waves * middle
            legs = figures["legs"]
            for workers in ("1", "2"):
                leg = legs[f"workers_{workers}"] = best_leg(
                    args.leg_runs,
                    lambda n, w=workers: model_leg(base, root / f"w{w}-{n}", trials, middle, "--workers", w, sample=args.sample),
                )
                say(f"concurrency {middle}, --workers {workers}: {leg['trials_per_second']:.1f} trials/s; memory {_tree(leg['memory'])}")
            if not args.no_ray:
                try:
                    import ray  # noqa: F401
                except ImportError:
                    say("Ray is not installed: no Ray leg (pip install 'ebench[ray]')")
                else:
                    legs["ray"] = best_leg(
                        args.leg_runs,
                        lambda n: model_leg(base, root / f"ray-{n}", trials, middle, "--executor", "ray", sample=args.sample),
                    )
                    say(
                        f"concurrency {middle}, --executor ray (local, {os.cpu_count()} CPUs): {legs['ray']['trials_per_second']:.1f} trials/s;"
                        f" memory {_tree(legs['ray']['memory'])}"
                    )
            top = max(levels)
            probe = subprocess.run(
                [sys.executable, __file__, "--memory-probe", base, str(args.waves * top), str(top)], capture_output=True, text=True
            )
            if probe.returncode != 0:
                raise SystemExit(f"the memory probe failed: {probe.stderr.strip()[-500:]}")
            figures["memory"] = {"concurrency": top, **json.loads(probe.stdout)}
            memory = figures["memory"]
            say(
                f"memory, concurrency {top}, one process: {memory['start_mb']} MB at the start, peak {memory['peak_mb']} MB,"
                f" {memory['after_mb']} MB once the trials ended"
            )
            probe = subprocess.run(
                [sys.executable, __file__, "--worker-start-probe", str(max(2, os.cpu_count() or 1))], capture_output=True, text=True
            )
            if probe.returncode != 0:
                raise SystemExit(f"the worker start probe failed: {probe.stderr.strip()[-500:]}")
            start = figures["worker_start"] = json.loads(probe.stdout)
            say(
                f"worker start: {start['workers']} workers ({start['method']}) ready {start['ready_ms']} ms after the worlds were loaded"
                f" ({start['worlds_ms']} ms); a worker's first trial {start['first_trial_ms']} ms, its second {start['second_trial_ms']} ms"
            )
            if args.oracle_trials:
                for workers in ("1", str(os.cpu_count() or 1)):
                    summary, wall, memory = ebench(
                        "run", "--batch", "--solver", "oracle", "--trials", str(args.oracle_trials), "--workers", workers,
                        "--out", str(root / f"oracle-{workers}"),
                    )  # fmt: skip
                    legs[f"oracle_workers_{workers}"] = {
                        "trials": summary["trials_run"],
                        "passed": summary["passed"],
                        "batch_seconds": summary["seconds"],
                        "process_seconds": round(wall, 2),
                        "memory": memory,
                        "trials_per_second": round(summary["trials_run"] / summary["seconds"], 1),
                        "ms_per_trial": round(1000 * summary["seconds"] / summary["trials_run"], 2),
                    }
                    say(
                        f"oracle, suite x {args.oracle_trials}, --workers {workers}: {summary['trials_run']} trials in"
                        f" {summary['seconds']:.1f} s = {legs[f'oracle_workers_{workers}']['trials_per_second']} trials/s"
                    )
    finally:
        server.terminate()
        server.wait()
    figures.update(ratios(figures))
    figures["readme"] = readme_rows(figures)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for row in figures["readme"]:
        met = {True: "met", False: "MISSED", None: ""}[row["met"]]
        print(f"{row['figure']}: {row['value']} (goal: {row['goal']}) {met}")


def _tree(memory: dict) -> str:
    return f"{memory['peak_pss_mb']:,} MB PSS ({memory['peak_rss_mb']:,} MB RSS) over {memory['processes']} processes"


def ratios(figures: dict) -> dict:
    rate = {leg["concurrency"]: leg["trials_per_second"] for leg in figures["sweep"]}
    found: dict = {}
    if 1 in rate and 64 in rate:
        found["c64_over_c1"] = round(rate[64] / rate[1], 1)
    if 64 in rate and 256 in rate:
        found["c256_over_c64"] = round(rate[256] / rate[64], 2)
    legs = figures["legs"]
    if "ray" in legs and "workers_2" in legs:
        found["ray_vs_workers_2"] = round(legs["ray"]["trials_per_second"] / legs["workers_2"]["trials_per_second"], 2)
    return found


def readme_rows(figures: dict) -> list[dict]:
    rows = []
    sweep = ", ".join(
        f"{leg['concurrency']}: {leg['trials_per_second']:.1f}/s ({leg['batch_seconds']:.1f} s, process {leg['process_seconds']:.1f} s)"
        for leg in figures["sweep"]
    )
    mix = figures["sweep"][0]["mix"] if figures["sweep"] else None
    shape = (
        f"the suite's mix of {mix['tasks']} tasks: {mix['mean_calls']} reference calls on average, median {mix['median_calls']},"
        f" up to {mix['max_calls']} (the suite: {mix['suite_mean_calls']}, median {mix['suite_median_calls']})"
        if mix
        else "no leg"
    )
    if "c64_over_c1" in figures:
        value = f"{figures['c64_over_c1']}x (trials/s by the batch's seconds, default workers, and the process's wall time beside them: {sweep})"
        rows.append(
            _row(
                f"model batch, concurrency 64 vs 1 (fake model, {figures['delay'] * 1000:.0f} ms; {shape})",
                value,
                "at least 40x",
                figures["c64_over_c1"] >= 40,
            )
        )
        leg = next(leg for leg in figures["sweep"] if leg["concurrency"] == 64)
        c1 = next(leg for leg in figures["sweep"] if leg["concurrency"] == 1)
        value = "; ".join(_cpu_bound(figures["cores"], leg, c1) for leg in figures["sweep"] if leg["concurrency"] in (64, 256))
        rows.append(_row("model batch, the bound from CPU (ebench and the fake model share the cores)", value, "a figure to watch", None))
    elif figures["sweep"]:
        rows.append(
            _row(f"model batch by concurrency (fake model, {figures['delay'] * 1000:.0f} ms; {shape})", sweep, "a figure to watch", None)
        )
    if "c256_over_c64" in figures:
        rows.append(
            _row("model batch, concurrency 256 vs 64", f"{figures['c256_over_c64']}x", "at least 1.5x", figures["c256_over_c64"] >= 1.5)
        )
    legs = figures["legs"]
    if "workers_1" in legs and "workers_2" in legs:
        value = f"{legs['workers_1']['trials_per_second']:.1f} vs {legs['workers_2']['trials_per_second']:.1f} trials/s"
        rows.append(_row(f"model batch at {legs['workers_1']['concurrency']}, --workers 1 vs 2", value, "a figure to watch", None))
    if "ray_vs_workers_2" in figures:
        ratio = figures["ray_vs_workers_2"]
        rows.append(
            _row(
                f"model batch at {legs['ray']['concurrency']}, Ray (local, {figures['cores']} CPUs) vs --workers 2",
                f"{ratio:.2f}x the throughput",
                "within 20%",
                ratio >= 0.8,
            )
        )
    if figures["sweep"]:
        top = max(figures["sweep"], key=lambda leg: leg["concurrency"])
        value = _tree(top["memory"]) + f" ({top['workers']} workers)"
        goal = f"at most {GOALS['peak_mb']:,.0f} MB summed"
        rows.append(
            _row(
                f"memory of the default run at concurrency {top['concurrency']}, peak over its whole process tree",
                value,
                goal,
                top["memory"]["peak_pss_mb"] <= GOALS["peak_mb"],
            )
        )
    start = figures.get("worker_start")
    if start:
        value = (
            f"{start['ready_ms']} ms for {start['workers']} workers ({start['method']}ed after the worlds were loaded, {start['worlds_ms']} ms);"
            f" a worker's first trial {start['first_trial_ms']} ms, its second {start['second_trial_ms']} ms (oracle)"
        )
        rows.append(_row("batch workers ready after the fork", value, "at most 100 ms", start["ready_ms"] <= 100))
    tree = [(name, legs[key]) for name, key in (("--workers 2", "workers_2"), ("Ray", "ray")) if key in legs]
    if tree:
        value = "; ".join(f"{name} {_tree(leg['memory'])}" for name, leg in tree)
        rows.append(
            _row(f"memory at concurrency {tree[0][1]['concurrency']}, peak over the whole process tree", value, "a figure to watch", None)
        )
    memory = figures.get("memory")
    if memory:
        rows.append(
            _row(
                f"memory, concurrency {memory['concurrency']}, one process (--workers 1): peak",
                f"{memory['peak_mb']} MB",
                "a figure to watch (the goal is on the whole tree, above)",
                None,
            )
        )
        grown = memory["after_mb"] - memory["start_mb"]
        value = f"{memory['after_mb']} MB ({grown:+} MB from {memory['start_mb']} MB at the start)"
        rows.append(_row("memory once the trials ended", value, "within 300 MB of the start", grown <= 300))
    for workers in sorted(k for k in legs if k.startswith("oracle_workers_")):
        leg = legs[workers]
        value = f"{leg['trials_per_second']} trials/s ({leg['ms_per_trial']} ms a trial; process {leg['process_seconds']} s)"
        rows.append(
            _row(f"oracle, suite x {figures['oracle_trials']}, --workers {workers.rsplit('_', 1)[1]}", value, "a figure to watch", None)
        )
    return rows


def _row(figure: str, value: str, goal: str, met: bool | None) -> dict:
    return {"figure": figure, "value": value, "goal": goal, "met": met}


if __name__ == "__main__":
    main()
