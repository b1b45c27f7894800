"""exec_code latency as a code-mode trial sees it: the first block, warm blocks, proxied calls.

Goals (issue 34 §4): the first block of a code-mode trial under 20 ms however soon after the trial
opens (right away, or after a 200 ms first model turn), and blocks run back to back under 20 ms
each: workers are forked by a confined, preloaded zygote shared by the process's trials, so no
block waits for a fresh interpreter; (issue 6) under 1 ms per proxied tool call.
Every figure goes through `ebench.sessions.trial.Trial(task, code=True)` and `trial.exec_code`
(the lock, the sandbox, the recording of the block and of its calls), as a solver uses it:
- first block, cold: a trivial block run right after the trial opens (nothing waited for);
- first block after a first model turn: the same, 200 ms after the trial opens (a quick model);
- warm block: a trivial block run when the spare worker is ready, as between two model turns;
- back to back: blocks run with no pause, each waiting for whatever the next worker still needs
  (a fresh worker per block, forked from the zygote while the block before ran);
- the zygote's own start (once per process, by its first code-mode trial): a figure to watch;
- round trip: one block makes many calls to a cheap read tool, each timed inside the block; the
  median is compared with the same call through `trial.call` and through the registry directly.
Medians of --trials fresh trials (first blocks) and of --blocks blocks.
Usage: python benchmarks/exec_code.py [--domain music] [--trials 7] [--blocks 20] [--calls 500] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

GOALS_MS = {"first_block_cold": 20.0, "first_block_after_turn": 20.0, "block_back_to_back": 20.0, "proxied_call": 1.0}
MODEL_TURN_S = 0.2  # a simulated first model turn: the time between the trial's start and its first block


def _block_ms(trial, code: str = "None") -> float:
    started = time.perf_counter()
    result = trial.exec_code(code)
    elapsed = (time.perf_counter() - started) * 1000
    assert result.ok, result.error_message
    return elapsed


def first_blocks(task, trials: int, pause: float) -> tuple[list[float], list[float]]:
    """The first block of `trials` fresh code-mode trials, `pause` seconds after each opens; and
    what opening each trial took."""
    from ebench.sessions.trial import Trial

    blocks, opens = [], []
    for _ in range(trials):
        started = time.perf_counter()
        trial = Trial(task, code=True, solver={"name": "benchmark"})
        opens.append((time.perf_counter() - started) * 1000)
        try:
            if pause:
                time.sleep(pause)
            blocks.append(_block_ms(trial))
        finally:
            trial.close()
    return blocks, opens


def measure(domain_name: str, trials: int, blocks: int, calls: int) -> dict:
    from ebench.sessions.sandbox import zygote
    from ebench.sessions.trial import Trial
    from ebench.tasks.suite import load_suite

    task = load_suite(domain=domain_name).tasks[0]
    zygote.shutdown()
    started = time.perf_counter()
    warm = Trial(task, code=True)  # the world's image made, the sandbox imported, the zygote started: paid once per process
    _block_ms(warm)
    zygote_start = (time.perf_counter() - started) * 1000
    warm.close()
    cold, opens = first_blocks(task, trials, 0.0)
    after_turn, _ = first_blocks(task, trials, MODEL_TURN_S)
    trial = Trial(task, code=True, solver={"name": "benchmark"})
    try:
        tool = _cheap_tool(trial.domain)
        warm = []
        for _ in range(blocks):
            trial.sandbox().wait_ready()
            warm.append(_block_ms(trial))
        trial.sandbox().wait_ready()
        back_to_back = [_block_ms(trial) for _ in range(blocks)]
        trial.sandbox().wait_ready()
        code = (
            "import time\ntimes = []\n"
            f"for _ in range({calls}):\n    t = time.perf_counter()\n    {tool}()\n"
            "    times.append(time.perf_counter() - t)\ntimes.sort()\ntimes[len(times) // 2] * 1000"
        )
        result = trial.exec_code(code)
        assert result.ok, result.error_message
        proxied = float(result.value["value"])
        through_trial = []
        for _ in range(calls):
            started = time.perf_counter()
            trial.call(tool, {})
            through_trial.append((time.perf_counter() - started) * 1000)
        direct = []
        for _ in range(calls):
            started = time.perf_counter()
            trial.domain.tools.call(trial.env, tool, {})
            direct.append((time.perf_counter() - started) * 1000)
        isolation = trial.sandbox().isolation
    finally:
        trial.close()
    direct_ms = statistics.median(direct)
    figures = {
        "domain": domain_name,
        "task": task.id,
        "tool": tool,
        "isolation": isolation,
        "model_turn_s": MODEL_TURN_S,
        "code_trial_open_ms": round(statistics.median(opens), 2),
        "first_block_cold_ms": round(statistics.median(cold), 2),
        "first_block_cold_max_ms": round(max(cold), 2),
        "first_block_after_turn_ms": round(statistics.median(after_turn), 2),
        "first_block_after_turn_max_ms": round(max(after_turn), 2),
        "block_start_warm_ms": round(statistics.median(warm), 2),
        "block_start_back_to_back_ms": round(statistics.median(back_to_back), 2),
        "block_start_back_to_back_max_ms": round(max(back_to_back), 2),
        "first_trial_with_zygote_start_ms": round(zygote_start, 2),
        "proxied_call_ms": round(proxied, 4),
        "trial_call_ms": round(statistics.median(through_trial), 4),
        "direct_call_ms": round(direct_ms, 4),
        "proxy_overhead_ms": round(proxied - direct_ms, 4),
        "goals_ms": GOALS_MS,
    }
    figures["readme"] = readme_rows(figures)
    figures["meets_goals"] = all(row["met"] for row in figures["readme"] if row["met"] is not None)
    return figures


def readme_rows(f: dict) -> list[dict]:
    return [
        {
            "figure": "first exec_code block of a code-mode trial, right after it opens (nothing waited for)",
            "value": f"{f['first_block_cold_ms']:.1f} ms (max {f['first_block_cold_max_ms']:.1f} ms; opening the trial: {f['code_trial_open_ms']:.1f} ms)",
            "goal": f"< {GOALS_MS['first_block_cold']:.0f} ms",
            "met": f["first_block_cold_ms"] < GOALS_MS["first_block_cold"],
        },
        {
            "figure": f"first exec_code block of a code-mode trial, {f['model_turn_s'] * 1000:.0f} ms after it opens (a first model turn)",
            "value": f"{f['first_block_after_turn_ms']:.1f} ms (max {f['first_block_after_turn_max_ms']:.1f} ms)",
            "goal": f"< {GOALS_MS['first_block_after_turn']:.0f} ms",
            "met": f["first_block_after_turn_ms"] < GOALS_MS["first_block_after_turn"],
        },
        {
            "figure": "exec_code blocks back to back (no pause: a new worker per block, forked by the zygote)",
            "value": f"{f['block_start_back_to_back_ms']:.1f} ms each (max {f['block_start_back_to_back_max_ms']:.1f} ms; "
            f"{f['block_start_warm_ms']:.1f} ms with the worker ready)",
            "goal": f"< {GOALS_MS['block_back_to_back']:.0f} ms",
            "met": f["block_start_back_to_back_ms"] < GOALS_MS["block_back_to_back"],
        },
        {
            "figure": "the first code-mode trial of a process: opening, the zygote's start and a first block",
            "value": f"{f['first_trial_with_zygote_start_ms']:.0f} ms (once per process)",
            "goal": "a figure to watch",
            "met": None,
        },
        {
            "figure": f"a tool call from a block ({f['tool']}, recorded as the block's child)",
            "value": f"{f['proxied_call_ms']:.3f} ms (through `trial.call` {f['trial_call_ms']:.3f} ms, registry {f['direct_call_ms']:.3f} ms)",
            "goal": f"< {GOALS_MS['proxied_call']:.0f} ms",
            "met": f["proxied_call_ms"] < GOALS_MS["proxied_call"],
        },
    ]


def _cheap_tool(domain) -> str:
    for tool in domain.tools:
        if tool.kind == "read" and not any(p.required for p in tool.params) and "profile" in tool.name:
            return tool.name
    return next(t.name for t in domain.tools if t.kind == "read" and not any(p.required for p in t.params))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="music")
    parser.add_argument("--trials", type=int, default=7, help="fresh trials for each first-block figure")
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.domain, args.trials, args.blocks, args.calls)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    layers = ", ".join(k for k, v in figures["isolation"].items() if v)
    print(f"exec_code in a code-mode trial of {figures['task']} (layers: {layers})")
    for row in figures["readme"]:
        verdict = "" if row["met"] is None else ("  ok" if row["met"] else "  MISSED")
        print(f"- {row['figure']}: {row['value']}  [goal: {row['goal']}]{verdict}")
    print("  goals met" if figures["meets_goals"] else "  GOALS NOT MET")


if __name__ == "__main__":
    main()
