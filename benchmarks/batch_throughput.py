"""Batch throughput: is the harness the bottleneck?

1. The oracle over the whole shipped suite, 3 trials per task: trials per second (the harness alone:
   fresh copy, change tracking, tool calls, diff, grade, session and results files).
2. The model solver, through the real litellm client, against a local fake OpenAI-compatible
   server (its own process) that answers after 200 ms, playing each task's reference solution:
   the same trials at concurrency 1 and 64. Reports the speed-up (goal: at least 40x), the
   client's CPU per model request, and the harness's own time per trial.

    python benchmarks/batch_throughput.py [--trials 64] [--delay 0.2] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark")

from ebench.sessions.batch import Batch  # noqa: E402
from ebench.sessions.runs import load_run  # noqa: E402
from ebench.sessions.solvers import OracleSolver  # noqa: E402
from ebench.sessions.solvers.llm import LLMConfig, LLMSolver, load_litellm  # noqa: E402
from ebench.sessions.trial import current_world  # noqa: E402
from ebench.tasks.suite import load_suite  # noqa: E402


def run(out: Path, tasks, solver, trials: int, concurrency: int) -> tuple[float, float, list[dict]]:
    batch = Batch(out, list(tasks), solver, trials)
    batch.prepare()
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(batch.run(concurrency))
    return time.perf_counter() - wall, time.process_time() - cpu, load_run(out).results


def start_server(delay: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "ebench.testing.fake_openai", "--delay", str(delay), "--parallel"], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=64, help="model trials at each concurrency")
    parser.add_argument("--delay", type=float, default=0.2, help="the fake model's answer time, seconds")
    parser.add_argument("--oracle-tasks", type=int, default=0, help="only the first N tasks for the oracle (0: all)")
    parser.add_argument(
        "--model",
        default="openai/gpt-4o-mini",
        help="the model name litellm is given (a priced one, as real runs use; the fake server answers any)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    say = (lambda text: None) if args.json else print
    suite = load_suite().tasks
    from ebench.domains import get_domain

    for name in sorted({t.domain for t in suite}):
        current_world(get_domain(name))  # built before timing
    figures: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        oracle_tasks = suite[: args.oracle_tasks] if args.oracle_tasks else suite
        wall, _, results = run(root / "oracle", oracle_tasks, OracleSolver(), 3, 8)
        passed = sum(r.passed for r in results)
        figures["oracle"] = {
            "trials": len(results),
            "seconds": round(wall, 3),
            "trials_per_second": round(len(results) / wall, 1),
            "ms_per_trial": round(1000 * wall / len(results), 2),
            "passed": passed,
        }
        say(
            f"oracle, {len(oracle_tasks)} tasks x 3: {len(results)} trials in {wall:.1f} s = {len(results) / wall:.1f} trials/s "
            f"({1000 * wall / len(results):.1f} ms per trial; {passed}/{len(results)} passed)"
        )

        # the model solver: short tasks first, so the concurrency-1 leg stays under a minute
        chosen = sorted(suite, key=lambda t: (len(t.reference_solution), t.id))[: args.trials]
        server, base = start_server(args.delay)
        try:
            load_litellm()
            solver = LLMSolver(LLMConfig(model=args.model, api_base=base, retries=0))
            legs = {}
            for concurrency in (1, 64):
                wall, cpu, results = run(root / f"llm-{concurrency}", chosen, solver, 1, concurrency)
                turns = sum(r.turns for r in results)
                passed = sum(r.passed for r in results)
                legs[concurrency] = (wall, cpu, turns)
                figures[f"model_concurrency_{concurrency}"] = {
                    "trials": len(results),
                    "turns": turns,
                    "seconds": round(wall, 3),
                    "cpu_seconds": round(cpu, 3),
                    "trials_per_second": round(len(results) / wall, 2),
                    "passed": passed,
                }
                say(
                    f"model solver, concurrency {concurrency:>2}: {len(results)} trials, {turns} model turns in {wall:.2f} s "
                    f"= {len(results) / wall:.2f} trials/s; CPU {cpu:.2f} s; {passed}/{len(results)} passed"
                )
        finally:
            server.terminate()
            server.wait()
    (w1, _, turns), (w64, c64, _) = legs[1], legs[64]
    harness_ms = figures["oracle"]["ms_per_trial"]
    figures["speed_up"] = round(w1 / w64, 2)
    figures["cpu_ms_per_turn"] = round(1000 * c64 / turns, 2)
    figures["harness_ms_per_trial"] = harness_ms
    figures["client_ms_per_turn"] = round((1000 * c64 - harness_ms * len(chosen)) / turns, 2)
    figures["goal_speed_up_40x"] = figures["speed_up"] >= 40
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"speed-up at concurrency 64: {figures['speed_up']:.1f}x (goal: at least 40x: {'ok' if figures['goal_speed_up_40x'] else 'MISSED'})"
    )
    print(
        f"CPU per model turn at concurrency 64: {figures['cpu_ms_per_turn']:.1f} ms, of which the harness "
        f"(copy, tools, diff, grade, records; the oracle's time per trial) is {harness_ms:.1f} ms per trial "
        f"and the model client (litellm) about {figures['client_ms_per_turn']:.1f} ms per turn"
    )
    print(f"bound from CPU alone on one core: {turns * args.delay / max(c64, 1e-9):.1f}x")


if __name__ == "__main__":
    main()
