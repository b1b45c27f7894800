"""Build every world from scratch and print time and rows per second per domain.

Goals on a 2-core machine: each world builds in under 5 s (issue: foundation), and all three
together in under 10 s (issue: meeting and moba); the total is the sum of the medians.
Usage: python benchmarks/build_worlds.py [--domain D] [--repeat N] [--json]
Builds into a temporary directory, so the user's worlds are left alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

GOAL_EACH_S = 5.0
GOAL_ALL_S = 10.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable)")
    parser.add_argument("--repeat", type=int, default=3, help="builds per domain; the median is reported")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ebench.domains import domain_names, get_domain
    from ebench.domains.engine.world import build_world

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
    if args.json:
        print(json.dumps({"domains": results, **total}, indent=2))
        return
    print(f"{'domain':10} {'rows':>8} {'seconds':>8} {'rows/s':>9} {'repaired':>9}  goal")
    for r in results:
        goal = f"< {r['goal_s']:.0f} s {'ok' if r['meets_goal'] else 'MISSED'}" if r["goal_s"] else ""
        print(f"{r['domain']:10} {r['rows']:8,} {r['seconds']:8.2f} {r['rows_per_second']:9,} {r['repaired']:9,}  {goal}")
    goal = f"  goal < {GOAL_ALL_S:.0f} s {'ok' if total['meets_goal_all'] else 'MISSED'}" if every_domain else ""
    print(f"{'total':10} {total['total_rows']:8,} {total_seconds:8.2f}  (median of {args.repeat} builds each){goal}")


if __name__ == "__main__":
    main()
