"""Faults over one small batch: does a fault the model did not cause ever change a score?

The model solver (the real litellm client) runs the same small batch against the fake
OpenAI-compatible server on 127.0.0.1, which plays each task's reference solution: first without
a fault, then once per fault, injected into every trial of every other task from its second turn
on (after the trial's first change). For each fault: the trials it affected (seen in their
sessions), the infrastructure errors, the trials scored and passed, and whether every scored
trial has the fault-free run's result. What each kind of fault must give:

- the API's, persistent (hang, 500, truncated, dropped): the affected trials are infrastructure
  errors, left out of the scores; the others score as without the fault;
- the API's, passing (the same, once per trial): retried; every score as without the fault;
- the configuration's (401, missing key): the run stops at once, nothing affected is scored;
- the model's (huge content, surrogates, unknown tool, wrong-typed arguments): recorded in the
  session and scored like any trial (the fake model carries on, so the scores stay the same).

Then the trust boundaries are attacked (benchmarks/boundaries.py: query_sql, recorded payloads,
terminal output, the web view, the command line's error contract, ctrl+c with workers, a full
disk, a simulated user with an empty answer), each with whether it held.

    python benchmarks/faults.py [--tasks 4] [--trials 2] [--concurrency 4] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark")

from boundaries import print_rows, run_attacks  # noqa: E402  (this folder is on sys.path when run as a script)

from ebench.sessions.batch import Batch  # noqa: E402
from ebench.sessions.events import ApiErrorEvent, MessageEvent, ToolCallEvent  # noqa: E402
from ebench.sessions.model_client import LLMConfig, load_litellm  # noqa: E402
from ebench.sessions.record import read_session  # noqa: E402
from ebench.sessions.runs import load_run  # noqa: E402
from ebench.sessions.solvers.base import FatalSolverError  # noqa: E402
from ebench.sessions.solvers.llm import LLMSolver  # noqa: E402
from ebench.sessions.trial import current_world  # noqa: E402
from ebench.tasks.suite import load_suite  # noqa: E402
from ebench.testing.fake_openai import FAULTS, FakeOpenAI, Faulty, ReferencePlayer, on_turn  # noqa: E402

HUGE = 2_000_000  # characters of huge_content
# When a fatal error stops the run, the other trials are cancelled mid-request and litellm leaves
# its inner coroutine unawaited: a warning on stderr that says nothing about the faults.
warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)


@dataclass
class Case:
    name: str
    fault: str | None  # a Faulty fault, or None (no fault; or missing_key, which is the client's)
    cause: str  # api | configuration | model | -
    once: bool = False
    no_key: bool = False


CASES = [
    Case("(none)", None, "-"),
    *[Case(f, f, "api") for f in ("hang", "500", "truncated", "dropped")],
    *[Case(f"{f} once", f, "api", once=True) for f in ("hang", "500", "truncated", "dropped")],
    Case("401", "401", "configuration"),
    Case("missing_key", None, "configuration", no_key=True),
    *[Case(f, f, "model") for f in ("huge_content", "surrogates", "unknown_tool", "wrong_types")],
]
assert {c.fault for c in CASES} - {None} == set(FAULTS)


def affected(path: Path) -> bool:
    """Whether a session shows a fault: a failed API request, repaired or huge text, a tool error."""
    for event in read_session(path).events:
        if isinstance(event, ApiErrorEvent):
            return True
        if isinstance(event, MessageEvent) and (event.repaired or event.capped or len(event.content or "") >= HUGE):
            return True
        if isinstance(event, ToolCallEvent) and not event.ok:
            return True
    return False


def run_case(case: Case, out: Path, tasks, faulted: set[str], args) -> dict:
    player = ReferencePlayer(tasks)
    responder = player
    if case.fault is not None:

        def when(body: dict) -> bool:
            task = player.task_for(body)
            return task is not None and task.id in faulted and on_turn(2)(body)

        responder = Faulty(player, case.fault, when=when, each_once=case.once, huge=HUGE)
    saved_key = os.environ.pop("OPENAI_API_KEY", None) if case.no_key else None
    stopped = None
    started = time.perf_counter()
    try:
        with FakeOpenAI(responder) as server:
            solver = LLMSolver(
                LLMConfig(
                    model="openai/fake", api_base=server.base_url, retries=args.retries, backoff=0.01, request_timeout=args.request_timeout
                )
            )
            batch = Batch(out, list(tasks), solver, args.trials)
            batch.prepare()
            try:
                asyncio.run(batch.run(args.concurrency))
            except FatalSolverError as exc:
                stopped = str(exc)
            batch.finish("failed" if stopped else "finished")
    finally:
        if saved_key is not None:
            os.environ["OPENAI_API_KEY"] = saved_key
    seconds = time.perf_counter() - started
    results = load_run(out).results
    sessions = sorted((out / "sessions").rglob("*.jsonl"))
    return {
        "results": results,
        "affected": sum(affected(p) for p in sessions),
        "stopped": stopped,
        "requests": len(server.requests),
        "seconds": seconds,
        "handlers_left": server.handlers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=4, help="the N tasks with the shortest reference solutions")
    parser.add_argument("--trials", type=int, default=2, help="trials per task")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--retries", type=int, default=1, help="retries of a transient API error")
    parser.add_argument("--request-timeout", type=float, default=1.0, help="seconds before a hanging request is given up")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from ebench.engine.domain_registry import get_domain

    tasks = sorted(load_suite().tasks, key=lambda t: (len(t.reference_solution), t.id))[: args.tasks]
    faulted = {t.id for t in tasks[::2]}  # every other task
    faulted_trials = len(faulted) * args.trials
    for name in sorted({t.domain for t in tasks}):
        current_world(get_domain(name))  # built before the runs
    load_litellm()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        baseline: dict[tuple[str, int], bool] = {}
        for number, case in enumerate(CASES):
            run = run_case(case, Path(tmp) / f"{number:02d}", tasks, faulted, args)
            results = run["results"]
            if case.fault is None and not case.no_key:
                baseline = {(r.task, r.trial): r.passed for r in results}
            scored = [r for r in results if not r.infra_error]
            infra = len(results) - len(scored)
            equal = all(baseline.get((r.task, r.trial)) == r.passed for r in scored)
            scored_faulted = sum(r.task in faulted for r in scored)
            tool_errors: dict[str, int] = {}
            for r in results:
                for code, count in r.tool_errors.items():
                    tool_errors[code] = tool_errors.get(code, 0) + count
            # what the harness promises for this kind of fault
            if case.cause == "-":
                ok = run["affected"] == 0 and infra == 0
            elif case.cause == "configuration":  # without a key, nothing is even sent
                ok = run["stopped"] is not None and scored_faulted == 0 and equal and not (case.no_key and run["requests"])
            elif case.cause == "api" and not case.once:
                ok = infra == run["affected"] == faulted_trials and scored_faulted == 0 and equal
            else:  # passing API faults and the model's: all scored, as without the fault
                ok = infra == 0 and run["affected"] == faulted_trials and len(scored) == len(tasks) * args.trials and equal
            ok = ok and run["handlers_left"] == 0
            rows.append(
                {
                    "fault": case.name,
                    "caused_by": case.cause,
                    "trials": len(tasks) * args.trials,
                    "affected": run["affected"],
                    "infra_errors": infra,
                    "scored": len(scored),
                    "passed": sum(r.passed for r in scored),
                    "tool_errors": tool_errors,
                    "scores_equal": equal,
                    "stopped": run["stopped"],
                    "requests": run["requests"],
                    "seconds": round(run["seconds"], 2),
                    "ok": ok,
                }
            )
    boundaries = run_attacks()
    broken = [f"{r['boundary']}: {r['attack']}" for r in boundaries if not r["held"]]
    figures = {
        "tasks": [t.id for t in tasks],
        "faulted_tasks": sorted(faulted),
        "trials_per_task": args.trials,
        "faults": rows,
        "boundaries": boundaries,
        "all_ok": all(r["ok"] for r in rows) and not broken,
    }
    wrong = [r["fault"] for r in rows if not r["ok"]]
    figures["readme"] = [
        {
            "figure": f"faults of the API, the configuration and the model over a small batch ({len(tasks)} tasks x {args.trials} trials): "
            "a fault the model did not cause never changes a score",
            "value": f"{len(rows) - len(wrong)} of {len(rows)} handled as promised" + (f" (wrong: {', '.join(wrong)})" if wrong else ""),
            "goal": "all",
            "met": not wrong,
        },
        {
            "figure": "trust boundaries attacked (query_sql, recorded payloads, terminal, web view, command line, interrupts)",
            "value": f"{len(boundaries) - len(broken)} of {len(boundaries)} held" + (f" (broken: {'; '.join(broken)})" if broken else ""),
            "goal": "all",
            "met": not broken,
        },
    ]
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{len(tasks)} tasks x {args.trials} trials; faults injected into {', '.join(sorted(faulted))} from the second turn\n")
    header = f"{'fault':<16} {'caused by':<14} {'affected':>8} {'infra':>6} {'scored':>7} {'passed':>7}  {'scores = fault-free':<20} {'s':>6}  verdict"
    print(header)
    print("-" * len(header))
    for r in rows:
        same = "-" if r["fault"] == "(none)" or not r["scored"] else ("yes" if r["scores_equal"] else "NO")
        note = f"  stopped: {r['stopped'][:70]}" if r["stopped"] else (f"  tool errors {r['tool_errors']}" if r["tool_errors"] else "")
        print(
            f"{r['fault']:<16} {r['caused_by']:<14} {r['affected']:>8} {r['infra_errors']:>6} {r['scored']:>7} "
            f"{r['passed']:>7}  {same:<20} {r['seconds']:>6.1f}  {'ok' if r['ok'] else 'WRONG'}{note}"
        )
    print(f"\nevery fault handled as promised: {'yes' if not wrong else 'NO'}\n")
    print_rows(boundaries)


if __name__ == "__main__":
    main()
