"""What a trial costs besides the solver: copying the world, capturing changes, diffing, grading.

Goals (issue: tasks): a private copy of the largest world in under 10 ms; the diff of a 200-row
change in under 5 ms, and a diff cost that does not grow with the size of the world.
Usage: python benchmarks/trial_overhead.py [--domain D ...] [--repeat 15] [--json]

For each world, and for the same world inflated ten times (every table's rows copied nine more
times with shifted keys, built in a temporary folder), a change of 5 and of 200 rows is made on
a fresh copy (half deletions of rows nothing points at, half insertions of new rows) and timed:
copy (SQLite backup into memory), tracker (temp triggers installed), diff, and grade (the diff
against an equal expected diff: the full pass path). Medians of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

FACTOR = 10


def _leaf_table(schema):
    """The largest-keyed table nothing else references: its rows can be deleted freely."""
    referenced = {fk.ref_table for fk in schema.foreign_keys if fk.ref_table != fk.table}
    leaves = [t for t in schema.tables if t.has_generated_id and t.name not in referenced]
    return leaves


def inflate(domain, source: Path, target: Path, factor: int = FACTOR) -> int:
    """A copy of a world with every table's rows repeated `factor` times (keys and references shifted)."""
    src = sqlite3.connect(source)
    dst = sqlite3.connect(target)
    src.backup(dst)
    src.close()
    dst.execute("PRAGMA foreign_keys=OFF")
    dst.execute("PRAGMA ignore_check_constraints=ON")  # shifted numbers may leave a CHECK's range
    original = {t.name: dst.execute(f"SELECT COALESCE(MAX(rowid), 0) FROM {t.name}").fetchone()[0] for t in domain.schema.tables}
    shift = {
        t.name: (dst.execute(f"SELECT COALESCE(MAX({t.key[0]}), 0) FROM {t.name}").fetchone()[0] + 1)
        for t in domain.schema.tables
        if t.has_generated_id
    }
    for table in domain.schema.tables:
        unique = {c.name for c in table.columns if c.unique} | {name for group in table.unique for name in group}
        for k in range(1, factor):
            exprs = []
            for col in table.columns:
                if col.primary_key and table.has_generated_id:
                    exprs.append(f"{col.name} + {shift[table.name] * k}")
                elif col.ref_table in shift and col.ref_column == domain.schema.table(col.ref_table).key[0]:
                    exprs.append(f"{col.name} + {shift[col.ref_table] * k}")
                elif col.name in unique and col.type == "TEXT":
                    exprs.append(f"{col.name} || ' #{k}'")
                elif col.name in unique:
                    exprs.append(f"{col.name} + {10**7 * k}")
                else:
                    exprs.append(col.name)
            dst.execute(
                f"INSERT INTO {table.name} ({', '.join(table.column_names)}) SELECT {', '.join(exprs)} FROM main.{table.name} "
                f"WHERE rowid <= {original[table.name]}"
            )  # copies of the original rows only
    dst.commit()
    rows = sum(dst.execute(f"SELECT COUNT(*) FROM {t.name}").fetchone()[0] for t in domain.schema.tables)
    dst.execute("VACUUM")
    dst.close()
    return rows


def _change(conn: sqlite3.Connection, table, rows: int) -> None:
    """Delete rows//2 rows nothing points at and insert rows - rows//2 copies with new ids."""
    key = table.key[0]
    self_refs = [c.name for c in table.columns if c.ref_table == table.name]
    spare = " AND ".join(f"{key} NOT IN (SELECT {c} FROM {table.name} WHERE {c} IS NOT NULL)" for c in self_refs) or "1"
    victims = [r[0] for r in conn.execute(f"SELECT {key} FROM {table.name} WHERE {spare} ORDER BY {key} LIMIT ?", (rows // 2,))]
    conn.executemany(f"DELETE FROM {table.name} WHERE {key} = ?", [(v,) for v in victims])
    cols = [c for c in table.column_names if c != key]
    conn.execute(
        f"INSERT INTO {table.name} ({', '.join(cols)}) SELECT {', '.join(cols)} FROM {table.name} ORDER BY {key} DESC LIMIT ?",
        (rows - rows // 2,),
    )


def measure(domain, path: Path, repeat: int) -> dict:
    from ebench.domains.engine.world import scratch_copy
    from ebench.tasks.diff import ChangeTracker
    from ebench.tasks.grading import grade

    table = max(_leaf_table(domain.schema), key=lambda t: len(t.columns))
    out: dict = {"change_table": table.name}
    copies, trackers = [], []
    for size in (5, 200):
        diffs, grades = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            conn = scratch_copy(path)
            t1 = time.perf_counter()
            tracker = ChangeTracker(conn, domain.schema)
            t2 = time.perf_counter()
            copies.append(t1 - t0)
            trackers.append(t2 - t1)
            _change(conn, table, size)
            t3 = time.perf_counter()
            diff = tracker.diff()
            t4 = time.perf_counter()
            result = grade(diff, diff, domain.schema)
            t5 = time.perf_counter()
            assert len(diff) == size and result.passed, (len(diff), size)
            diffs.append(t4 - t3)
            grades.append(t5 - t4)
            conn.close()
        out[f"diff_{size}_ms"] = round(statistics.median(diffs) * 1000, 3)
        out[f"grade_{size}_ms"] = round(statistics.median(grades) * 1000, 3)
    out["copy_ms"] = round(statistics.median(copies) * 1000, 3)
    out["tracker_ms"] = round(statistics.median(trackers) * 1000, 3)
    out["world_mb"] = round(path.stat().st_size / 1e6, 2)
    return out


def trial_start(domain, repeat: int) -> float:
    """What a trial really pays: a copy of the prepared image, tracker included (sessions/trial.py)."""
    from ebench.sessions.trial import trial_copy

    trial_copy(domain).close()  # the image is made once per process
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        conn = trial_copy(domain)
        times.append(time.perf_counter() - t0)
        conn.close()
    return round(statistics.median(times) * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable); default: all")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ebench.domains import domain_names, get_domain
    from ebench.domains.engine.world import ensure_world, world_stats

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.domain or domain_names():
            domain = get_domain(name)
            path = ensure_world(domain)
            rows = world_stats(domain, path).rows
            big = Path(tmp) / f"{name}-x{FACTOR}.sqlite"
            big_rows = inflate(domain, path, big)
            results.append(
                {"domain": name, "rows": rows, **measure(domain, path, args.repeat), "trial_start_ms": trial_start(domain, args.repeat)}
            )
            results.append({"domain": f"{name} x{FACTOR}", "rows": big_rows, **measure(domain, big, args.repeat)})
    largest = max((r for r in results if " x" not in r["domain"]), key=lambda r: r["world_mb"])
    goals = {
        "copy of the largest world < 10 ms": largest["copy_ms"] < 10,
        "diff of a 200-row change < 5 ms": all(r["diff_200_ms"] < 5 for r in results),
    }
    if args.json:
        print(json.dumps({"results": results, "goals": goals}, indent=2))
        return
    print(f"{'world':14} {'rows':>9} {'MB':>6} {'copy':>8} {'tracker':>8} {'diff 5':>8} {'diff 200':>9} {'grade 5':>8} {'grade 200':>10}")
    for r in results:
        print(
            f"{r['domain']:14} {r['rows']:9,} {r['world_mb']:6.1f} {r['copy_ms']:6.2f}ms {r['tracker_ms']:6.2f}ms "
            f"{r['diff_5_ms']:6.2f}ms {r['diff_200_ms']:7.2f}ms {r['grade_5_ms']:6.2f}ms {r['grade_200_ms']:8.2f}ms"
        )
    for r in results:
        if "trial_start_ms" in r:
            print(f"{r['domain']}: a trial's start (copy of the prepared image, tracker included): {r['trial_start_ms']:.2f} ms")
    for goal, met in goals.items():
        print(f"{goal}: {'ok' if met else 'MISSED'}")


if __name__ == "__main__":
    main()
