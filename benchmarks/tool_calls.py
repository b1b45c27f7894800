"""Median in-process latency of every tool, called through the registry (validation included).

Goals (issues: foundation, meeting and moba): under 100 us for a lookup by id, under 2 ms for
any search or list.
Usage: python benchmarks/tool_calls.py [--domain D ...] [--repeat 300] [--rounds 3] [--json]
The arguments of each domain's calls are in the domain's tool cases module (`Domain.tool_cases_module`,
ebench/domains/<domain>/tool_cases.py for the built-in ones): `cases(conn, actor)` maps a label (`tool` or `tool(variant)`) to arguments, `LOOKUPS` names the tools held to
the lookup goal, and `ACTOR_SQL` (optional) picks the actor measured.
Write tools are measured on a scratch copy; each sample undoes its change (a savepoint rolled
back outside the timed call), so every sample sees the same world. The machine is a shared VM:
each tool is measured in several rounds and the best round's median is reported, which
filters out neighbours' noise without hiding a slow tool (every call of a round counts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from types import ModuleType

GOALS_US = {"lookup": 100, "search/list": 2000}


def load_cases(domain: str) -> ModuleType:
    from ebench.domains import get_domain

    module = get_domain(domain).tool_cases()
    if module is None:
        raise SystemExit(f"no benchmark cases for domain {domain!r}: its Domain names no tool_cases_module")
    return module


def measure_domain(name: str, repeat: int, rounds: int, actor: int | None) -> dict:
    from ebench.domains import get_domain
    from ebench.domains.engine.tools import WRITE
    from ebench.domains.engine.world import ensure_world, scratch_copy

    domain = get_domain(name)
    module = load_cases(name)
    conn = scratch_copy(ensure_world(domain))
    if actor is None:
        actor_sql = getattr(module, "ACTOR_SQL", f"SELECT MIN(id) FROM {domain.actor_table}")
        actor = conn.execute(actor_sql).fetchone()[0]
    cases = module.cases(conn, actor)
    missing = sorted(set(domain.tools.names) - {label.split("(")[0] for label in cases})
    if missing:
        raise SystemExit(f"{name}: no benchmark case for {', '.join(missing)} (add them to {domain.tool_cases_module})")
    env = domain.env(conn, actor)
    results = []
    for label, call_args in cases.items():
        tool_name = label.split("(")[0]
        tool = domain.tools.get(tool_name)
        is_write = tool.kind == WRITE
        round_samples = []
        for _ in range(rounds):
            samples = []
            for _ in range(repeat):
                if is_write:
                    conn.execute("SAVEPOINT bench")
                started = time.perf_counter()
                result = domain.tools.call(env, tool_name, call_args)
                samples.append(time.perf_counter() - started)
                if is_write:
                    conn.execute("ROLLBACK TO bench")
                    conn.execute("RELEASE bench")
                if not result.ok:
                    raise SystemExit(f"{name}: {label} failed: {result.error_message}")
            round_samples.append(samples)
        samples = min(round_samples, key=statistics.median)
        kind = "lookup" if tool_name in module.LOOKUPS else ("write" if is_write else "search/list")
        goal = GOALS_US.get(kind)
        median_us = statistics.median(samples) * 1e6
        results.append(
            {
                "tool": label,
                "kind": kind,
                "median_us": round(median_us, 1),
                "p95_us": round(sorted(samples)[int(len(samples) * 0.95)] * 1e6, 1),
                "goal_us": goal,
                "meets_goal": goal is None or median_us < goal,
            }
        )
    conn.close()
    return {"domain": name, "actor": actor, "tools": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable); default: all")
    parser.add_argument("--actor", type=int, default=None, help="default: the domain's ACTOR_SQL choice")
    parser.add_argument("--repeat", type=int, default=300, help="calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ebench.domains import domain_names

    reports = [measure_domain(name, args.repeat, args.rounds, args.actor) for name in args.domain or domain_names()]
    if args.json:
        print(json.dumps(reports, indent=2))
        return
    missed = []
    for report in reports:
        print(f"{report['domain']}: median latency, best of {args.rounds} rounds of {args.repeat} calls (actor {report['actor']})")
        print(f"{'tool':36} {'kind':12} {'median':>10} {'p95':>10}  goal")
        for r in report["tools"]:
            goal = f"< {r['goal_us']:.0f} us {'ok' if r['meets_goal'] else 'MISSED'}" if r["goal_us"] else ""
            print(f"{r['tool']:36} {r['kind']:12} {r['median_us']:8.1f}us {r['p95_us']:8.1f}us  {goal}")
            if not r["meets_goal"]:
                missed.append(f"{report['domain']}.{r['tool']}")
        print()
    print("all goals met" if not missed else f"goals missed: {', '.join(missed)}")


if __name__ == "__main__":
    main()
