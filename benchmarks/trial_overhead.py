"""What a trial costs besides the solver: the whole trial a batch runs, and its parts.

The headline is a whole trial through `ebench.sessions.trial.open_trial`, as a batch runs it:
the trial opens (a copy of the world as a fresh one holds it: the copy the previous trial gave
back, its changes rolled back; change tracking, the session file and its first event), the
task's reference solution runs through `trial.call` (lock, tool, recording), and the trial
finishes (diff, grade, last event, file closed, the copy given back). Every task of the suite is run --rounds
times (after one warm-up trial per domain: the world's image is made once per process); the
median per domain and the largest task's are reported, with a first trial in a fresh process
(imports included) and that process's peak memory.

Goals (issues 18 and 34): harness overhead per trial under 6 ms in every domain, at least 100x
below tau-bench retail measured in the same run; the passing grade of the largest task within 2x its
diff. The anchors are measured here, beside ebench, when their checkouts are given (`--tau-bench DIR
--tau2 DIR`, see benchmarks/anchors.py: each installed into its own virtual environment once): a
whole trial's harness cost per task with a scripted agent and user (tau-bench retail and airline,
tau2 retail) and a first trial in a fresh process. Without them there is no ratio: the figure says
"no anchor".

The parts, beside it: for each world, and for the same world inflated ten times (every table's
rows copied nine more times with shifted keys, built in a temporary folder), a change of 5 and of
200 rows is made on a fresh copy (half deletions of rows nothing points at, half insertions of new
rows) and timed: copy (SQLite backup into memory), tracker (temp triggers installed), diff, and
grade (the diff against an equal expected diff: the full pass path). Medians of --repeat runs.
Usage: python benchmarks/trial_overhead.py [--domain D ...] [--rounds 3] [--repeat 15] [--tau-bench DIR --tau2 DIR] [--json]
       python benchmarks/trial_overhead.py --quick    # small sizes: a smoke run
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anchors  # benchmarks/anchors.py: tau-bench and tau2 measured in the same run

FACTOR = 10
ANCHOR_DOMAINS = (("tau-bench", "retail"), ("tau-bench", "airline"), ("tau2", "retail"))
QUICK = {"rounds": 1, "tasks": 3, "repeat": 2, "fresh": 1, "anchor_tasks": 3}
GOAL_TRIAL_MS = 6.0
GOAL_RATIO = 100
GOAL_GRADE_OVER_DIFF = 2.0


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
    from ebench.engine.world import scratch_copy
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


def run_trial(task, folder: Path, number: int) -> dict[str, float]:
    """One whole trial as a batch runs it (the oracle's calls, no model): seconds per phase."""
    from ebench.sessions.record import trial_session_file
    from ebench.sessions.trial import AGENT_STOPPED, open_trial
    from ebench.tasks.spec import resolve_args

    t0 = time.perf_counter()
    trial = open_trial(task, trial_session_file(folder, task.id, number), solver={"name": "oracle"})
    t1 = time.perf_counter()
    results: list = []
    for step in task.reference_solution:
        results.append(trial.call(step.tool, resolve_args(step.args, results)).value)
    t2 = time.perf_counter()
    summary = trial.finish(AGENT_STOPPED)
    t3 = time.perf_counter()
    if not summary.passed:
        raise SystemExit(f"{task.id}: the reference solution did not pass through Trial")
    return {"start": t1 - t0, "calls": t2 - t1, "finish": t3 - t2, "total": t3 - t0}


def _ms(values: list[float], quantile: float | None = None) -> float:
    """The median (or a quantile) of seconds, in milliseconds."""
    ordered = sorted(values)
    value = statistics.median(ordered) if quantile is None else ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]
    return round(1000 * value, 3)


def whole_trials(tasks: list, folder: Path, rounds: int) -> dict:
    """Every task `rounds` times, the rounds interleaved (a slow minute of the VM hits every task)."""
    samples: dict[str, list[float]] = {"start": [], "calls": [], "finish": [], "total": []}
    run_trial(tasks[0], folder / "warm-up", 1)  # the world's image, made once per process
    for number in range(1, rounds + 1):
        for task in tasks:
            for phase, seconds in run_trial(task, folder, number).items():
                samples[phase].append(seconds)
    return {
        "trials": len(samples["total"]),
        "calls_per_trial": round(sum(len(t.reference_solution) for t in tasks) / len(tasks), 1),
        **{f"{phase}_ms": _ms(values) for phase, values in samples.items()},
        "total_p90_ms": _ms(samples["total"], 0.9),
    }


def largest_task(task, folder: Path, repeat: int) -> dict:
    """The task with the most expected rows: its whole trial, and its diff against its grade."""
    from ebench.sessions.trial import Trial
    from ebench.tasks.grading import grade
    from ebench.tasks.spec import resolve_args

    totals = [run_trial(task, folder / "largest", n)["total"] for n in range(1, repeat + 1)]
    trial = Trial(task, solver={"name": "oracle"})
    try:
        results: list = []
        for step in task.reference_solution:
            results.append(trial.call(step.tool, resolve_args(step.args, results)).value)
        diffs, grades = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            actual = trial.diff()
            t1 = time.perf_counter()
            result = grade(task.expected_diff, actual, trial.domain.schema)
            grades.append(time.perf_counter() - t1)
            diffs.append(t1 - t0)
            assert result.passed
    finally:
        trial.close()
    diff_ms, grade_ms = _ms(diffs), _ms(grades)
    return {
        "task": task.id,
        "expected_rows": len(task.expected_diff),
        "calls": len(task.reference_solution),
        "total_ms": _ms(totals),
        "diff_ms": diff_ms,
        "grade_ms": grade_ms,
        "grade_over_diff": round(grade_ms / diff_ms, 2),
    }


def start_costs(task, folder: Path, repeat: int) -> dict:
    """A trial's start three ways: a fresh copy of the prepared image (what a process's first trial
    on a world pays, and a trial while every idle copy is taken), `Trial()` (the copy the last
    trial gave back, tracker, tool environment, start event), and `open_trial` (the session file
    opened and written too)."""
    from ebench.sessions.record import trial_session_file
    from ebench.sessions.trial import Trial, open_trial, trial_copy

    warm = Trial(task)  # the image made, the world checked
    domain = warm.domain
    warm.close()
    copies, trials, opened = [], [], []
    for n in range(repeat):
        t0 = time.perf_counter()
        conn = trial_copy(domain)
        copies.append(time.perf_counter() - t0)
        conn.close()
        t0 = time.perf_counter()
        trial = Trial(task)
        trials.append(time.perf_counter() - t0)
        trial.close()
        t0 = time.perf_counter()
        trial = open_trial(task, trial_session_file(folder / "start", task.id, n + 1))
        opened.append(time.perf_counter() - t0)
        trial.close()
    return {"image_copy_ms": _ms(copies), "trial_ms": _ms(trials), "open_trial_ms": _ms(opened)}


FRESH_PROCESS = """
import resource, sys, tempfile
from pathlib import Path
from ebench.sessions.record import trial_session_file
from ebench.sessions.trial import AGENT_STOPPED, open_trial
from ebench.tasks.spec import load_task, resolve_args
from ebench.tasks.suite import find_task

task = load_task(find_task(sys.argv[1]))
with tempfile.TemporaryDirectory() as folder:
    trial = open_trial(task, trial_session_file(Path(folder), task.id, 1), solver={"name": "oracle"})
    results = []
    for step in task.reference_solution:
        results.append(trial.call(step.tool, resolve_args(step.args, results)).value)
    assert trial.finish(AGENT_STOPPED).passed
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def fresh_process(task_id: str, repeat: int) -> dict:
    """One trial in a fresh Python process, from its start to its exit (imports, the world's
    fingerprint check and image included: what `ebench run` of one task pays before any model)."""
    seconds, kilobytes = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", FRESH_PROCESS, task_id], capture_output=True, text=True, check=True)
        seconds.append(time.perf_counter() - started)
        kilobytes.append(int(done.stdout.split()[-1]))
    return {"task": task_id, "seconds": round(statistics.median(seconds), 3), "peak_mb": round(statistics.median(kilobytes) / 1024, 1)}


def anchor_rows(data: dict, worst: float) -> list[dict]:
    """ebench's worst domain median per trial against tau-bench's and tau2's, measured in this run;
    without them, rows that say there is no anchor (and no ratio)."""

    trial, first, given = data["anchor"]["trial"], data["anchor"]["first"], data["anchor"]["given"]
    fresh = data["fresh_process"]
    measured = [(name, domain, f) for name, domain in ANCHOR_DOMAINS if (f := anchors.figure(trial, name, domain))]
    retail = anchors.figure(trial, "tau-bench", "retail")
    if measured:
        spans = [
            f"{name} {domain} {f['median_ms']:.0f} ms ({f['calls_per_trial']:.0f} calls, {f['tasks']} tasks)"
            for name, domain, f in measured
        ]
        ratios = ", ".join(f"{name} {domain} {f['median_ms'] / worst:.0f}x" for name, domain, f in measured)
        row = {
            "figure": "harness per trial, ebench's worst domain median against tau-bench / tau2 with a scripted agent (same run)",
            "value": f"{ratios} (ebench {worst:.1f} ms; {'; '.join(spans)})",
            "goal": f">= {GOAL_RATIO}x below tau-bench retail",
            "met": retail["median_ms"] / worst >= GOAL_RATIO if retail else None,
            "anchor": "same run",
        }
    else:
        row = {
            "figure": "harness per trial against tau-bench / tau2",
            "value": "no anchor: " + (anchors.describe(trial, given) or "none measured"),
            "goal": f">= {GOAL_RATIO}x below tau-bench retail",
            "met": None,
            "anchor": "none",
        }
    firsts = [(name, f) for name in anchors.NAMES if (f := (first.get(name) or {}).get("figures"))]
    value = f"{fresh['seconds']:.2f} s, peak {fresh['peak_mb']:.0f} MB"
    if firsts:
        value += "; " + ", ".join(f"{name} retail {f['seconds']:.2f} s, peak {f['peak_mb']:.0f} MB" for name, f in firsts)
    first_row = {
        "figure": f"a first trial in a fresh process ({fresh['task']}, imports included)"
        + (", beside tau-bench / tau2 (same run)" if firsts else ""),
        "value": value if firsts else value + " (no anchor)",
        "goal": "a figure to watch",
        "met": None,
        "anchor": "same run" if firsts else "none",
    }
    return [row, first_row]


def readme_rows(data: dict) -> list[dict]:
    per_domain = data["whole_trials"]
    worst = max(r["total_ms"] for r in per_domain)
    big, start = data["largest_task"], data["start"]
    inflated = [r for r in data["results"] if " x" in r["domain"]]
    ratio_row, first_row = anchor_rows(data, worst)
    return [
        {
            "figure": "whole trial (open, reference calls through `Trial`, diff, grade, session file), median per domain",
            "value": ", ".join(f"{r['domain']} {r['total_ms']:.1f} ms" for r in per_domain)
            + f" ({min(r['calls_per_trial'] for r in per_domain):.0f}-{max(r['calls_per_trial'] for r in per_domain):.0f} calls a trial on average;"
            + f" p90 up to {max(r['total_p90_ms'] for r in per_domain):.1f} ms)",
            "goal": f"< {GOAL_TRIAL_MS:g} ms per trial",
            "met": worst < GOAL_TRIAL_MS,
        },
        ratio_row,
        {
            "figure": "the parts of a whole trial (median over the suite)",
            "value": ", ".join(
                f"{r['domain']}: start {r['start_ms']:.2f} + calls {r['calls_ms']:.2f} + finish {r['finish_ms']:.2f} ms" for r in per_domain
            ),
            "goal": "a figure to watch",
            "met": None,
        },
        {
            "figure": f"whole trial of the largest task ({big['task']}: {big['expected_rows']} rows, {big['calls']} calls)",
            "value": f"{big['total_ms']:.1f} ms",
            "goal": "a figure to watch",
            "met": None,
        },
        {
            "figure": f"largest task's passing grade vs its diff ({big['task']})",
            "value": f"grade {big['grade_ms']:.2f} ms, diff {big['diff_ms']:.2f} ms ({big['grade_over_diff']:.1f}x)",
            "goal": f"grade within {GOAL_GRADE_OVER_DIFF:g}x the diff",
            "met": big["grade_over_diff"] <= GOAL_GRADE_OVER_DIFF,
        },
        {
            "figure": "a trial's start: `open_trial` (the copy the last trial gave back, tracker, session file, start event)",
            "value": f"{start['open_trial_ms']:.2f} ms (`Trial()` without a file {start['trial_ms']:.2f} ms; "
            f"a fresh copy of the image instead, as a process's first trial pays: {start['image_copy_ms']:.2f} ms)",
            "goal": "a figure to watch",
            "met": None,
        },
        first_row,
        {
            "figure": "diff of a 200-row change, worlds and worlds inflated 10x (260,000+ rows)",
            "value": f"up to {max(r['diff_200_ms'] for r in data['results']):.2f} ms"
            + (f" ({max(r['diff_200_ms'] for r in inflated):.2f} ms inflated)" if inflated else ""),
            "goal": "< 5 ms",
            "met": data["goals"]["diff of a 200-row change < 5 ms"],
        },
        {
            "figure": "copy of the largest world from its file (not per trial: the image is copied)",
            "value": f"{data['largest_world_copy_ms']:.2f} ms",
            "goal": "< 10 ms",
            "met": data["goals"]["copy of the largest world < 10 ms"],
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable); default: all")
    parser.add_argument("--rounds", type=int, default=3, help="whole trials per task of the suite")
    parser.add_argument("--tasks", type=int, default=0, help="only the first N tasks of each domain (0: all)")
    parser.add_argument("--repeat", type=int, default=15, help="runs of each part (and of the largest task)")
    parser.add_argument("--fresh", type=int, default=3, help="fresh processes running one trial")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, a smoke run: " + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items()),
    )
    anchors.add_arguments(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        for name, value in QUICK.items():
            setattr(args, name, value)

    from ebench.engine.domain_registry import domain_names, get_domain
    from ebench.engine.world import ensure_world, world_stats
    from ebench.tasks.suite import load_suite

    names = args.domain or domain_names()
    suite = [t for t in load_suite().tasks if t.domain in names]
    results, per_domain = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            tasks = [t for t in suite if t.domain == name][: args.tasks or None]
            per_domain.append({"domain": name, **whole_trials(tasks, Path(tmp) / "sessions", args.rounds)})
        biggest = max(suite, key=lambda t: (len(t.expected_diff), t.id))
        largest = largest_task(biggest, Path(tmp), args.repeat)
        start = start_costs(biggest, Path(tmp), args.repeat)
        for name in names:
            domain = get_domain(name)
            path = ensure_world(domain)
            rows = world_stats(domain, path).rows
            big = Path(tmp) / f"{name}-x{FACTOR}.sqlite"
            big_rows = inflate(domain, path, big)
            results.append({"domain": name, "rows": rows, **measure(domain, path, args.repeat)})
            results.append({"domain": f"{name} x{FACTOR}", "rows": big_rows, **measure(domain, big, args.repeat)})
    fresh = fresh_process(biggest.id, args.fresh)
    # The anchors after ebench's own figures, in this run (each in its own environment and process).
    given = anchors.checkouts(args)
    say = None if args.json else (lambda text: print(text, file=sys.stderr))
    anchor = {
        "given": {name: str(path) if path else None for name, path in given.items()},
        "trial": anchors.measure(given, "trial", tasks=args.anchor_tasks, rounds=1, say=say),
        "first": anchors.measure(given, "first", say=say),
    }
    largest_world = max((r for r in results if " x" not in r["domain"]), key=lambda r: r["world_mb"])
    goals = {
        "copy of the largest world < 10 ms": largest_world["copy_ms"] < 10,
        "diff of a 200-row change < 5 ms": all(r["diff_200_ms"] < 5 for r in results),
    }
    data = {
        "whole_trials": per_domain,
        "largest_task": largest,
        "start": start,
        "fresh_process": fresh,
        "anchor": anchor,
        "results": results,
        "largest_world_copy_ms": largest_world["copy_ms"],
        "goals": goals,
    }
    data["readme"] = readme_rows(data)
    if args.json:
        print(json.dumps(data, indent=2))
        return
    print(f"whole trials (open_trial, the reference solution through trial.call, finish), {args.rounds} per task:")
    print(f"{'domain':10} {'trials':>7} {'calls':>6} {'start':>8} {'calls':>8} {'finish':>8} {'total':>8} {'p90':>8}")
    for r in per_domain:
        print(
            f"{r['domain']:10} {r['trials']:7} {r['calls_per_trial']:6.1f} {r['start_ms']:6.2f}ms {r['calls_ms']:6.2f}ms "
            f"{r['finish_ms']:6.2f}ms {r['total_ms']:6.2f}ms {r['total_p90_ms']:6.2f}ms"
        )
    print()
    print(f"{'world':14} {'rows':>9} {'MB':>6} {'copy':>8} {'tracker':>8} {'diff 5':>8} {'diff 200':>9} {'grade 5':>8} {'grade 200':>10}")
    for r in results:
        print(
            f"{r['domain']:14} {r['rows']:9,} {r['world_mb']:6.1f} {r['copy_ms']:6.2f}ms {r['tracker_ms']:6.2f}ms "
            f"{r['diff_5_ms']:6.2f}ms {r['diff_200_ms']:7.2f}ms {r['grade_5_ms']:6.2f}ms {r['grade_200_ms']:8.2f}ms"
        )
    print()
    for row in data["readme"]:
        verdict = "" if row["met"] is None else ("  ok" if row["met"] else "  MISSED")
        print(f"- {row['figure']}: {row['value']}  [goal: {row['goal']}]{verdict}")


if __name__ == "__main__":
    main()
