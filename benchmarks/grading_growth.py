"""Grading's cost per changed row as the diff grows from 3 to 1,000 rows: it should stay flat.

For each domain a change of N rows is made on real copies of its world through the real change
tracker (`ChangeTracker.diff`), from the world's own rows: a quarter updates of existing rows, a
quarter deletions of rows nothing points at, and the rest new rows in a fan-out (new parent rows,
each with up to 200 new children pointing at it, as a meeting with its participants). The same
change is made three more times: with other ids for the new parents and the children inserted in
the opposite order (a trial that passes: grading has to match new rows by content); with a tenth
of the children pointing elsewhere; and with every child pointing elsewhere (trials that fail:
`_explain` pairs each wrong row with the most similar one and lists its wrong values). Timed, each
the fastest of --repeat runs (the machine is shared; the work is deterministic):

- `grade` of the passing pair (what every trial's finish pays);
- `grade` of each failing pair (the verdict, then every change accounted for);
- `explain` of the passing pair (what the solve screen's live diff asks after each call).

Each figure is printed per changed row (microseconds); the growth is the per-row cost at the
largest size over the smallest per-row cost at 30 rows or more (fixed costs make the smallest
diffs dearer per row, which is not growth). Goal (issue 34 section 7): grading linear in the diff.

    python benchmarks/grading_growth.py [--domain D ...] [--sizes 3,10,30,100,300,1000] [--repeat 9] [--json]
    python benchmarks/grading_growth.py --quick    # sizes 3,30,300 and 3 runs each
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

DEFAULT_SIZES = (3, 10, 30, 100, 300, 1000)
QUICK_SIZES = (3, 30, 300)
CHILDREN_PER_PARENT = 200  # the largest tasks of the suite: one meeting with ~190 participants
WRONG_SHARE = 10  # one child in this many points elsewhere in the failing trial
GOAL_GROWTH = 2.0  # per-row cost at the largest size within this factor of the flattest
FIGURES = {
    "grade_pass_us_per_row": "`grade` of a passing trial",
    "grade_fail_us_per_row": "`grade` of a failing trial (a tenth of the new children wrong)",
    "grade_all_wrong_us_per_row": "`grade` of a failing trial (every new child wrong)",
    "explain_us_per_row": "`explain` of a passing trial (the live diff)",
}


@dataclass(frozen=True)
class Shape:
    """Where a domain's synthetic change lands: a parent table with a generated id whose new rows
    get children (a table keyed by (parent, other)), a table whose rows are updated, and one whose
    rows are deleted."""

    parent: str
    child: str
    child_parent_column: str
    child_other_column: str
    other_table: str
    updated: tuple[tuple[str, str], ...]  # (table, column), largest table first
    deleted: tuple[str, ...]  # largest first


def find_shape(conn: sqlite3.Connection, schema: Any) -> Shape:
    """The shape for a schema, found from its keys and foreign keys (any domain, built-in or not)."""
    referenced = {fk.ref_table for fk in schema.foreign_keys if fk.ref_table != fk.table}
    fanouts = []
    for table in schema.tables:
        fks = {fk.column: fk.ref_table for fk in table.foreign_keys}
        if len(table.key) != 2 or any(k not in fks for k in table.key) or table.unique:
            continue
        for parent_column, other_column in (table.key, table.key[::-1]):
            parent, other = fks[parent_column], fks[other_column]
            if parent == other or not (schema.table(parent).has_generated_id and schema.table(other).has_generated_id):
                continue
            # enough rows to point at: a full parent's children and the failing trial's spares
            if conn.execute(f"SELECT COUNT(*) FROM {other}").fetchone()[0] >= CHILDREN_PER_PARENT * 6 // 5:
                fanouts.append((len(table.columns), table.name, parent_column, other_column, parent, other))
    if not fanouts:
        raise SystemExit("no table keyed by two references to tables with generated ids (and enough rows): no fan-out to build")
    _, child, parent_column, other_column, parent, other = max(fanouts)
    leaves = [t for t in schema.tables if t.has_generated_id and t.name not in referenced and t.name not in (parent, child)]
    if not leaves:
        raise SystemExit("no table with a generated id that nothing references: nothing to delete freely")
    deleted = tuple(sorted((t.name for t in leaves), key=lambda n: -conn.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0]))
    updated = _updatable(conn, schema, exclude={parent, child, *deleted})
    return Shape(parent, child, parent_column, other_column, other, updated, deleted)


def _copy_exprs(table: Any, tag: int) -> tuple[list[str], list[str]]:
    """Columns and SELECT expressions copying a row of `table` under a new generated id: unique
    values made distinct (text gets a suffix, numbers an offset), references kept."""
    unique = {c.name for c in table.columns if c.unique} | {name for group in table.unique for name in group}
    cols, exprs = [], []
    for col in table.columns:
        if col.primary_key:
            continue
        cols.append(col.name)
        if col.name in unique and not col.references and col.type == "TEXT":
            exprs.append(f"{col.name} || ' #{tag}'")
        elif col.name in unique and not col.references:
            exprs.append(f"{col.name} + {10**7 + tag}")
        else:
            exprs.append(col.name)
    return cols, exprs


def _updatable(conn: sqlite3.Connection, schema: Any, exclude: set[str]) -> tuple[tuple[str, str], ...]:
    """Tables with a generated id and a free column (no key, reference, uniqueness or check;
    text preferred), largest first: the rows updated are taken from them in that order."""
    found = []
    for table in schema.tables:
        if table.name in exclude or not table.has_generated_id:
            continue
        unique = {name for group in table.unique for name in group}
        free = [
            col
            for col in table.columns
            if not (col.primary_key or col.references or col.unique or col.check or col.volatile or col.name in unique)
            and not any(col.name in check for check in table.checks)
        ]
        if free:
            col = min(free, key=lambda c: c.type != "TEXT")
            found.append((conn.execute(f"SELECT COUNT(*) FROM {table.name}").fetchone()[0], table.name, col.name))
    if not found:
        raise SystemExit("no table with a free text column to update")
    return tuple((name, column) for _, name, column in sorted(found, reverse=True))


def make_change(conn: sqlite3.Connection, schema: Any, shape: Shape, size: int, variant: str) -> None:
    """`size` changed rows on `conn` (see the module's doc). `variant`: "expected", "passing" (other
    parent ids, children in the opposite order) or "failing" (a tenth of the children elsewhere)."""
    updates, deletes = size // 4, size // 4
    inserts = size - updates - deletes
    parents = max(1, -(-inserts // (CHILDREN_PER_PARENT + 1)))
    children = inserts - parents
    left = updates
    for table, column in shape.updated:
        key = schema.table(table).key[0]
        chosen = conn.execute(f"SELECT {key} FROM {table} ORDER BY {key} LIMIT ?", (left,)).fetchall()
        text = schema.table(table).column(column).type == "TEXT"
        edit = f"COALESCE({column}, '') || ' (edited)'" if text else f"COALESCE({column}, 0) + 1"
        conn.executemany(f"UPDATE {table} SET {column} = {edit} WHERE {key} = ?", chosen)
        left -= len(chosen)
    if left:  # the world is too small for this size
        raise SystemExit(f"only {updates - left} rows to update, {updates} asked")
    left = deletes
    for table in shape.deleted:
        key = schema.table(table).key[0]
        self_refs = [c.name for c in schema.table(table).columns if c.ref_table == table]
        spare = " AND ".join(f"{key} NOT IN (SELECT {c} FROM {table} WHERE {c} IS NOT NULL)" for c in self_refs) or "1"
        victims = conn.execute(f"SELECT {key} FROM {table} WHERE {spare} ORDER BY {key} DESC LIMIT ?", (left,)).fetchall()
        conn.executemany(f"DELETE FROM {table} WHERE {key} = ?", victims)
        left -= len(victims)
    if left:  # the world is too small for this size
        raise SystemExit(f"only {deletes - left} rows to delete, {deletes} asked")

    parent = schema.table(shape.parent)
    p_key = parent.key[0]
    if variant != "expected":  # a row inserted and deleted again: the parents get other ids
        p_cols, p_exprs = _copy_exprs(parent, 999)
        conn.execute(f"INSERT INTO {shape.parent} ({', '.join(p_cols)}) SELECT {', '.join(p_exprs)} FROM {shape.parent} LIMIT 1")
        conn.execute(f"DELETE FROM {shape.parent} WHERE rowid = last_insert_rowid()")
    child = schema.table(shape.child)
    o_key = schema.table(shape.other_table).key[0]
    others = [r[0] for r in conn.execute(f"SELECT {o_key} FROM {shape.other_table} ORDER BY {o_key}")]
    template_cols = [c for c in child.column_names if c not in (shape.child_parent_column, shape.child_other_column)]
    template = conn.execute(f"SELECT {', '.join(template_cols)} FROM {shape.child} LIMIT 1").fetchone()
    per_parent = [children // parents + (1 if i < children % parents else 0) for i in range(parents)]
    share = {"failing": WRONG_SHARE, "all_wrong": 1}.get(variant)
    if max(per_parent) + (-(-max(per_parent) // share) if share else 0) > len(others):
        raise SystemExit(f"{shape.other_table} has {len(others)} rows: too few for {max(per_parent)} children of one parent")
    for source, count in enumerate(per_parent):
        p_cols, p_exprs = _copy_exprs(parent, source)
        conn.execute(
            f"INSERT INTO {shape.parent} ({', '.join(p_cols)}) SELECT {', '.join(p_exprs)} FROM {shape.parent} "
            f"ORDER BY {p_key} LIMIT 1 OFFSET ?",
            (source,),
        )
        new_id = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
        chosen = others[:count]
        if share:  # every tenth child (or every child) points at another row instead
            spare_others = iter(others[count:])
            chosen = [next(spare_others) if i % share == 0 else o for i, o in enumerate(chosen)]
        if variant != "expected":
            chosen = chosen[::-1]
        conn.executemany(
            f"INSERT INTO {shape.child} ({shape.child_parent_column}, {shape.child_other_column}, {', '.join(template_cols)}) "
            f"VALUES ({', '.join('?' * (2 + len(template_cols)))})",
            [(new_id, other, *template) for other in chosen],
        )


def diffs(domain: Any, path: Any, shape: Shape, size: int) -> dict[str, Any]:
    """The expected, passing and failing diffs of one size, each from its own copy of the world."""
    from ebench.engine.world import scratch_copy
    from ebench.tasks.diff import ChangeTracker

    out = {}
    for variant in ("expected", "passing", "failing", "all_wrong"):
        conn = scratch_copy(path)
        try:
            tracker = ChangeTracker(conn, domain.schema)
            make_change(conn, domain.schema, shape, size, variant)
            out[variant] = tracker.diff()
        finally:
            conn.close()
        if len(out[variant]) != size:
            raise SystemExit(f"{domain.name}: the {variant} change has {len(out[variant])} rows, {size} asked")
    return out


def _fastest_us(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of `repeat` runs, in microseconds (the machine is shared: the fastest run is the
    least disturbed one, and grading's cost is deterministic), and the result."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return min(times) * 1e6, result


def measure(name: str, sizes: list[int], repeat: int) -> dict[str, Any]:
    from ebench.engine.domain_registry import get_domain
    from ebench.engine.world import ensure_world, scratch_copy
    from ebench.tasks.grading import explain, grade

    domain = get_domain(name)
    path = ensure_world(domain)
    conn = scratch_copy(path)
    try:
        shape = find_shape(conn, domain.schema)
    finally:
        conn.close()
    rows = []
    for size in sizes:
        d = diffs(domain, path, shape, size)
        schema = domain.schema
        pass_us, passed = _fastest_us(partial(grade, d["expected"], d["passing"], schema), repeat)
        fail_us, failed = _fastest_us(partial(grade, d["expected"], d["failing"], schema), repeat)
        wrong_us, all_wrong = _fastest_us(partial(grade, d["expected"], d["all_wrong"], schema), repeat)
        explain_us, explained = _fastest_us(partial(explain, d["expected"], d["passing"], schema), repeat)
        if not (passed.passed and explained.passed and len(explained.matched) == size):
            raise SystemExit(f"{name}, {size} rows: the passing trial did not pass ({passed.summary()}, {explained.summary()})")
        for result in (failed, all_wrong):
            if result.passed or not result.wrong:
                raise SystemExit(f"{name}, {size} rows: a failing trial found no wrong value ({result.summary()})")
        rows.append(
            {
                "rows": size,
                "grade_pass_us_per_row": round(pass_us / size, 2),
                "grade_fail_us_per_row": round(fail_us / size, 2),
                "grade_all_wrong_us_per_row": round(wrong_us / size, 2),
                "explain_us_per_row": round(explain_us / size, 2),
                "grade_pass_ms": round(pass_us / 1000, 3),
                "grade_all_wrong_ms": round(wrong_us / 1000, 3),
                "wrong_values": len(failed.wrong),
                "all_wrong_values": len(all_wrong.wrong),
            }
        )
    return {"domain": name, "shape": shape.__dict__, "sizes": rows, "growth": growth(rows)}


def growth(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Per figure: the per-row cost at the largest size over the smallest at 30 rows or more."""
    flat = [r for r in rows if r["rows"] >= 30] or rows
    largest = max(rows, key=lambda r: r["rows"])
    return {key: round(largest[key] / min(r[key] for r in flat), 2) for key in FIGURES}


def readme_rows(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for key, what in FIGURES.items():
        spans = []
        for report in reports:
            sizes = report["sizes"]
            spans.append(
                f"{report['domain']} {sizes[0][key]:.0f} us at {sizes[0]['rows']} rows, {sizes[-1][key]:.0f} us at {sizes[-1]['rows']:,}"
                f" (x{report['growth'][key]:.2f})"
            )
        worst = max(r["growth"][key] for r in reports)
        out.append(
            {
                "figure": f"{what}, cost per changed row from {reports[0]['sizes'][0]['rows']} to {reports[0]['sizes'][-1]['rows']:,} rows"
                " (growth: largest size over the flattest at 30+ rows)",
                "value": "; ".join(spans),
                "goal": f"linear in the diff: growth <= {GOAL_GROWTH:g}x",
                "met": worst <= GOAL_GROWTH,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable); default: all")
    parser.add_argument("--sizes", default=None, help=f"changed rows, comma-separated (default {','.join(map(str, DEFAULT_SIZES))})")
    parser.add_argument("--repeat", type=int, default=None, help="runs of each figure (the fastest counts; default 9, 3 with --quick)")
    parser.add_argument("--quick", action="store_true", help=f"sizes {','.join(map(str, QUICK_SIZES))} and 3 runs each")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",")}) if args.sizes else list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    except ValueError:
        parser.error(f"--sizes wants whole numbers separated by commas, not {args.sizes!r}")
    if min(sizes) < 3:
        parser.error("--sizes: at least 3 rows (a parent, a child, one more)")
    repeat = args.repeat or (3 if args.quick else 9)

    from ebench.engine.domain_registry import domain_names

    reports = [measure(name, sizes, repeat) for name in args.domain or domain_names()]
    data = {"sizes": sizes, "repeat": repeat, "domains": reports, "readme": readme_rows(reports)}
    if args.json:
        print(json.dumps(data, indent=2))
        return
    for report in reports:
        s = report["shape"]
        print(
            f"{report['domain']}: updates of {', '.join(t for t, _ in s['updated'])}, deletions of {', '.join(s['deleted'])}, new {s['parent']} rows with new"
            f" {s['child']} rows; per changed row, fastest of {repeat}:"
        )
        print(f"{'rows':>6} {'grade pass':>11} {'fail 1/10':>11} {'all wrong':>11} {'explain':>9}   whole grade: pass, all wrong")
        for r in report["sizes"]:
            print(
                f"{r['rows']:6,} {r['grade_pass_us_per_row']:9.1f}us {r['grade_fail_us_per_row']:9.1f}us"
                f" {r['grade_all_wrong_us_per_row']:9.1f}us {r['explain_us_per_row']:7.1f}us"
                f"   {r['grade_pass_ms']:.2f} ms, {r['grade_all_wrong_ms']:.2f} ms"
            )
        print(f"growth (largest over flattest at 30+ rows): {report['growth']}\n")
    for row in data["readme"]:
        verdict = "" if row["met"] is None else ("  ok" if row["met"] else "  MISSED")
        print(f"- {row['figure']}: {row['value']}  [goal: {row['goal']}]{verdict}")


if __name__ == "__main__":
    main()
