"""Composed tasks: time `ebench tasks compose` and measure the structure it reaches.

For each domain with a task grammar: `ebench tasks compose --count N` from a fresh process, for
two seeds (timed: the command a user runs, imports and world checks included), then the figures
of issue 30 on what they wrote: distinct structures and the largest structure's share, the
capability shares, the structure overlap between the two seeds, and against the shipped suite.
With --private M, also a private split of M tasks, whose structure overlap with the public sets
must be 0.

Goals (300 tasks per domain on a 2-core machine): under a minute per domain; at least 250
distinct structures; two seeds overlap in structure by at most 10%; the shipped suite by at most
5%; each of the six capabilities above 15%.
Usage: python benchmarks/compose.py [--domain D] [--count N] [--seeds 1,2] [--private M] [--json]
Writes into a temporary directory; builds the worlds there first (not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL_SECONDS = 60.0
GOAL_DISTINCT_PER_300 = 250
GOAL_SEED_OVERLAP = 0.10
GOAL_SUITE_OVERLAP = 0.05
GOAL_CAPABILITY_SHARE = 0.15


def compose(domain: str, count: int, seed: int, out: Path, env: dict[str, str], split: str = "public") -> tuple[float, dict[str, Any]]:
    """Seconds for `ebench tasks compose` in a fresh process, and its JSON summary."""
    command = [sys.executable, "-m", "ebench", "tasks", "compose", "--domain", domain, "--count", str(count), "--seed", str(seed)]
    command += ["--out", str(out), "--split", split, "--json"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ebench tasks compose --domain {domain} --seed {seed} failed: {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)


def measure(domain: str, count: int, seeds: list[int], private: int, home: Path) -> dict[str, Any]:
    from ebench.tasks.spec import CAPABILITIES
    from ebench.tasks.structures import overlap, structure_stats
    from ebench.tasks.suite import SUITE_DIR, load_suite

    env = {**os.environ, "EBENCH_HOME": str(home)}
    runs = []
    sets = []
    for seed in seeds:
        out = home / f"{domain}-s{seed}"
        seconds, summary = compose(domain, count, seed, out, env)
        tasks = load_suite(out, domain).tasks
        sets.append(tasks)
        runs.append({"seed": seed, "seconds": round(seconds, 2), "written": summary["written"], "attempts": summary["attempts"]})
    first = sets[0]
    stats = structure_stats(first)
    caps = {c: round(sum(c in t.capabilities for t in first) / len(first), 4) for c in CAPABILITIES} if first else {}
    shipped = load_suite(SUITE_DIR, domain).tasks
    data: dict[str, Any] = {
        "domain": domain,
        "count": count,
        "runs": runs,
        "seconds_max": max(r["seconds"] for r in runs),
        "distinct_structures": stats["distinct_structures"],
        "largest_structure_share": stats["largest_structure_share"],
        "distinct_skeletons": stats["distinct_skeletons"],
        "depth": stats["depth"],
        "biting_conditions": stats["biting_conditions"],
        "reference_length": stats["reference_length"],
        "capability_shares": caps,
        "seed_overlap": overlap(sets[0], sets[1])["structure_overlap"] if len(sets) > 1 else None,
        "seed_skeleton_overlap": overlap(sets[0], sets[1])["skeleton_overlap"] if len(sets) > 1 else None,
        "suite_overlap": overlap(shipped, first)["structure_overlap"],
        "suite_skeleton_overlap": overlap(shipped, first)["skeleton_overlap"],
    }
    if private:
        out = home / f"{domain}-private"
        seconds, _ = compose(domain, private, seeds[0], out, env, split="private")
        hidden = load_suite(out, domain).tasks
        data["private"] = {
            "tasks": len(hidden),
            "seconds": round(seconds, 2),
            "structure_overlap_with_public": max(overlap(s, hidden)["structure_overlap"] for s in sets),
        }
    needed = GOAL_DISTINCT_PER_300 * count / 300
    data["goals"] = {
        "seconds": data["seconds_max"] < GOAL_SECONDS * count / 300,
        "distinct_structures": data["distinct_structures"] >= needed,
        "seed_overlap": data["seed_overlap"] is None or data["seed_overlap"] <= GOAL_SEED_OVERLAP,
        "suite_overlap": data["suite_overlap"] <= GOAL_SUITE_OVERLAP,
        "capabilities": bool(caps) and all(share > GOAL_CAPABILITY_SHARE for share in caps.values()),
    }
    return data


def readme_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for r in data["domains"]:
        n = r["count"]
        low_cap = min(r["capability_shares"].values()) if r["capability_shares"] else 0.0
        rows += [
            {
                "figure": f"`ebench tasks compose --count {n}` ({r['domain']}), slowest of {len(r['runs'])} seeds",
                "value": f"{r['seconds_max']:.1f} s",
                "goal": f"< {GOAL_SECONDS * n / 300:.0f} s",
                "met": r["goals"]["seconds"],
            },
            {
                "figure": f"composed {r['domain']}: distinct structures of {n}, largest share, lowest capability share",
                "value": f"{r['distinct_structures']}, {r['largest_structure_share']:.1%}, {low_cap:.0%}",
                "goal": f">= {GOAL_DISTINCT_PER_300 * n / 300:.0f}; each capability > {GOAL_CAPABILITY_SHARE:.0%}",
                "met": r["goals"]["distinct_structures"] and r["goals"]["capabilities"],
            },
            {
                "figure": f"composed {r['domain']}: structure overlap, seed vs seed and vs the shipped suite",
                "value": f"{(r['seed_overlap'] or 0):.1%}, {r['suite_overlap']:.1%}",
                "goal": f"<= {GOAL_SEED_OVERLAP:.0%}, <= {GOAL_SUITE_OVERLAP:.0%}",
                "met": r["goals"]["seed_overlap"] and r["goals"]["suite_overlap"],
            },
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable; default: every domain with a grammar)")
    parser.add_argument("--count", type=int, default=300, help="tasks per set")
    parser.add_argument("--seeds", default="1,2", help="the seeds of the sets compared (comma-separated)")
    parser.add_argument("--private", type=int, default=0, help="also a private split of this many tasks")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]

    from ebench.engine.domain_registry import domain_names, get_domain
    from ebench.engine.world import ensure_world

    names = args.domain or [n for n in domain_names() if get_domain(n).parts_module]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["EBENCH_HOME"] = str(home)
        for name in names:  # built before the clock starts
            domain = get_domain(name)
            ensure_world(domain, domain.default_seed)
        results = [measure(name, args.count, seeds, args.private, home) for name in names]
    data: dict[str, Any] = {"domains": results}
    data["readme"] = readme_rows(data)
    if args.json:
        print(json.dumps(data, indent=2))
        return
    for r in results:
        caps = ", ".join(f"{k} {v:.0%}" for k, v in r["capability_shares"].items())
        times = ", ".join(f"seed {run['seed']} {run['seconds']:.1f} s" for run in r["runs"])
        print(f"{r['domain']}: {r['count']} tasks per set ({times})")
        print(f"  distinct structures {r['distinct_structures']}, largest share {r['largest_structure_share']:.1%}")
        print(f"  capabilities: {caps}")
        print(f"  structure overlap: seed vs seed {(r['seed_overlap'] or 0):.1%}, vs the shipped suite {r['suite_overlap']:.1%}")
        if "private" in r:
            print(
                f"  private split: {r['private']['tasks']} tasks, structure overlap with public {r['private']['structure_overlap_with_public']:.1%}"
            )
        failed = [k for k, ok in r["goals"].items() if not ok]
        print(f"  goals: {'all met' if not failed else 'missed: ' + ', '.join(failed)}")


if __name__ == "__main__":
    main()
