"""Build every world from scratch: the command a user runs, and each build in-process.

Goals on a 2-core machine: each world builds in under 5 s (issue: foundation), and all three
together in under 10 s (issue: meeting and moba).
The headline is `python -m ebench domains build` from a fresh process into a fresh, empty
EBENCH_HOME (interpreter start, imports, every world built and checked, the process's exit),
median of --repeat runs. Beside it, each domain's build in this process (`build_world`, the
imports already paid), median of --repeat builds; their sum is the in-process total.
Usage: python benchmarks/build_worlds.py [--domain D] [--repeat N] [--json]
Builds into temporary directories, so the user's worlds are left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_EACH_S = 5.0
GOAL_ALL_S = 10.0


def cli_build(domains: list[str] | None, repeat: int) -> list[float]:
    """Seconds for `python -m ebench domains build` in a fresh process and a fresh EBENCH_HOME."""
    options = [arg for name in domains or () for arg in ("--domain", name)]
    seconds = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as home:
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "ebench", "domains", "build", *options],
                check=True,
                capture_output=True,
                env={**os.environ, "EBENCH_HOME": home},
            )
            seconds.append(time.perf_counter() - started)
            if not list(Path(home, "worlds").glob("*.sqlite")):
                raise SystemExit("ebench domains build wrote no world")
    return seconds


def readme_rows(data: dict) -> list[dict]:
    each = ", ".join(f"{r['domain']} {r['seconds']:.1f} s" for r in data["domains"])
    cli = data["cli"]
    return [
        {
            "figure": f"`ebench domains build` from a fresh process into an empty home ({cli['domains']})",
            "value": f"{cli['median_s']:.1f} s (max {cli['max_s']:.1f} s)",
            "goal": f"< {GOAL_ALL_S:.0f} s together" if data["goal_all_s"] else "a figure to watch",
            "met": cli["median_s"] < GOAL_ALL_S if data["goal_all_s"] else None,
        },
        {
            "figure": "each world built in-process (imports paid), median",
            "value": f"{each}; {data['total_seconds']:.1f} s together ({data['total_rows']:,} rows)",
            "goal": f"< {GOAL_EACH_S:.0f} s each",
            "met": all(r["meets_goal"] for r in data["domains"]),
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable)")
    parser.add_argument("--repeat", type=int, default=3, help="builds per domain; the median is reported")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ebench.engine.domain_registry import domain_names, get_domain
    from ebench.engine.world import build_world

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.domain or domain_names():
            domain = get_domain(name)
            reports = [build_world(domain, path=Path(tmp) / f"{name}-{i}.sqlite") for i in range(args.repeat)]
            seconds = statistics.median(r.seconds for r in reports)
            phases = {t.table: round(t.seconds, 3) for t in reports[-1].tables}
            goal = GOAL_EACH_S
            results.append(
                {
                    "domain": name,
                    "rows": reports[0].rows,
                    "seconds": round(seconds, 3),
                    "rows_per_second": round(reports[0].rows / seconds),
                    "repaired": reports[0].repaired,
                    "goal_s": goal,
                    "meets_goal": goal is None or seconds < goal,
                    "fill_seconds_by_table": phases,
                }
            )
    total_seconds = sum(r["seconds"] for r in results)
    every_domain = not args.domain
    total = {
        "total_seconds": round(total_seconds, 3),
        "total_rows": sum(r["rows"] for r in results),
        "goal_all_s": GOAL_ALL_S if every_domain else None,
        "meets_goal_all": total_seconds < GOAL_ALL_S if every_domain else None,
    }
    cli = cli_build(args.domain, args.repeat)
    data = {
        "domains": results,
        **total,
        "cli": {
            "domains": ", ".join(args.domain or ["every world"]),
            "median_s": round(statistics.median(cli), 3),
            "max_s": round(max(cli), 3),
        },
    }
    data["readme"] = readme_rows(data)
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print(f"{'domain':10} {'rows':>8} {'seconds':>8} {'rows/s':>9} {'repaired':>9}  goal")
    for r in results:
        goal = f"< {r['goal_s']:.0f} s {'ok' if r['meets_goal'] else 'MISSED'}" if r["goal_s"] else ""
        print(f"{r['domain']:10} {r['rows']:8,} {r['seconds']:8.2f} {r['rows_per_second']:9,} {r['repaired']:9,}  {goal}")
    goal = f"  goal < {GOAL_ALL_S:.0f} s {'ok' if total['meets_goal_all'] else 'MISSED'}" if every_domain else ""
    print(f"{'total':10} {total['total_rows']:8,} {total_seconds:8.2f}  (median of {args.repeat} builds each){goal}")
    print(f"ebench domains build, fresh process and home: median {data['cli']['median_s']:.2f} s, max {data['cli']['max_s']:.2f} s")


if __name__ == "__main__":
    main()
