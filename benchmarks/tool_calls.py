"""Median in-process latency of every tool, through a trial (`trial.call`) and the registry directly.

Goals (issues: foundation, meeting and moba): under 100 us for a lookup by id, under 2 ms for
any search or list, held on the call through a trial (`Trial.call`: the trial's lock, the tool, the
call recorded into a session file), which is what a solver's call costs; the registry's own figure
(validation and the tool) is reported beside it, on the kind of copy a trial holds (issue 34: the
trial's own share, `trial.call` minus it, at most 20 us median), and on a copy of the world file
(what the trial's copy, its small page cache and its change tracking, costs the tool).
Usage: python benchmarks/tool_calls.py [--domain D ...] [--repeat 300] [--rounds 3] [--tau-bench DIR --tau2 DIR] [--json]
       python benchmarks/tool_calls.py --quick    # 2 calls, 1 round: a smoke run
The arguments of each domain's calls are in the domain's tool cases module (`Domain.tool_cases_module`,
ebench/domains/<domain>/tool_cases.py for the built-in ones): `cases(conn, actor)` maps a label (`tool` or `tool(variant)`) to arguments, `LOOKUPS` names the tools held to
the lookup goal, and `ACTOR_SQL` (optional) picks the actor measured.
Write tools are measured on a copy of the world (the trial's kind, and the file's); each sample undoes its change (a savepoint rolled
back outside the timed call), so every sample sees the same world; through a trial, the savepoint
is on the trial's copy (its change tracking included). The machine is a shared VM:
each tool is measured in several rounds and the best round's median is reported, which
filters out neighbours' noise without hiding a slow tool (every call of a round counts).

Anchors (issue 34: a lookup through `trial.call` at most tau-bench's p50, measured in the same run):
with `--tau-bench DIR --tau2 DIR` (see benchmarks/anchors.py), one lookup's latency is measured the
same way in tau-bench and tau2, each in its own virtual environment: tau-bench retail
`get_order_details` and airline `get_reservation_details` through the harness's side of a call in
its tool-calling agent loop (`env.step` and the loop's record of it), tau2 retail `get_order_details`
through `get_response`. Without them there is no comparison ("no anchor").
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import anchors  # benchmarks/anchors.py: tau-bench and tau2 measured in the same run

GOALS_US = {"lookup": 100, "search/list": 2000}
GOAL_SHARE_US = 20  # issue 34: the trial's own share of a call, median over the tools
ANCHOR_LOOKUPS = (("tau-bench", "retail"), ("tau-bench", "airline"), ("tau2", "retail"))


def load_cases(domain: str) -> ModuleType:
    from ebench.engine.domain_registry import get_domain

    module = get_domain(domain).tool_cases()
    if module is None:
        raise SystemExit(f"no benchmark cases for domain {domain!r}: its Domain names no tool_cases_module")
    return module


def _samples(rounds_of, is_write: bool, repeat: int, rounds: int, label: str) -> list[float]:
    """The best of `rounds` rounds (by median) of `repeat` calls; a write is undone after each.
    `rounds_of()` gives each round's (call, connection it writes to), outside the timed calls."""
    round_samples = []
    for _ in range(rounds):
        call, conn = rounds_of()
        samples = []
        for _ in range(repeat):
            if is_write:
                conn.execute("SAVEPOINT bench")
            started = time.perf_counter()
            result = call()
            samples.append(time.perf_counter() - started)
            if is_write:
                conn.execute("ROLLBACK TO bench")
                conn.execute("RELEASE bench")
            if not result.ok:
                raise SystemExit(f"{label} failed: {result.error_message}")
        round_samples.append(samples)
    return min(round_samples, key=statistics.median)


class _Trials:
    """A fresh trial for each round of calls through `trial.call`, as a solver's calls meet one: a
    real trial makes tens of calls (the largest reference solution 144) and records well under its
    16 MiB; hundreds of calls of every tool in one trial would spend its recording budget (then
    measuring truncation markers) and keep every result alive for the garbage collector to walk."""

    def __init__(self, domain, actor: int, folder: Path) -> None:
        self.domain, self.actor, self.folder = domain, actor, folder
        self.trial = None
        self.opened = 0

    def next(self):
        from ebench.sessions.record import SessionWriter
        from ebench.sessions.trial import Trial

        self.close()
        self.opened += 1
        path = self.folder / f"{self.domain.name}-{self.opened}.jsonl"
        self.trial = Trial(None, domain=self.domain, actor=self.actor, writer=SessionWriter(path), solver={"name": "benchmark"})
        return self.trial

    def close(self) -> None:
        if self.trial is not None:
            self.trial.close()
            self.trial.writer.path.unlink(missing_ok=True)
            self.trial = None


def measure_domain(name: str, repeat: int, rounds: int, actor: int | None, folder: Path) -> dict:
    from ebench.engine.domain_registry import get_domain
    from ebench.engine.tools import WRITE
    from ebench.engine.world import ensure_world, scratch_copy
    from ebench.sessions.trial import trial_copy

    domain = get_domain(name)
    module = load_cases(name)
    # The registry alone runs on the kind of copy a trial holds (its page cache, its change
    # tracking), so `trial.call` minus it is what the trial adds: lock, recording, result. The same
    # calls on a copy of the world file (SQLite's default cache, no tracking) show the copy's part.
    conn = trial_copy(domain)
    file_conn = scratch_copy(ensure_world(domain))
    if actor is None:
        actor_sql = getattr(module, "ACTOR_SQL", f"SELECT MIN(id) FROM {domain.actor_table}")
        actor = conn.execute(actor_sql).fetchone()[0]
    cases = module.cases(conn, actor)
    missing = sorted(set(domain.tools.names) - {label.split("(")[0] for label in cases})
    if missing:
        raise SystemExit(f"{name}: no benchmark case for {', '.join(missing)} (add them to {domain.tool_cases_module})")
    env = domain.env(conn, actor)
    file_env = domain.env(file_conn, actor)
    trials = _Trials(domain, actor, folder)
    results = []
    try:
        for label, call_args in cases.items():
            tool_name = label.split("(")[0]
            is_write = domain.tools.get(tool_name).kind == WRITE
            where = f"{name}: {label}"

            def direct(t: str = tool_name, a: dict = call_args) -> tuple:
                return (lambda: domain.tools.call(env, t, a)), conn

            def on_file_copy(t: str = tool_name, a: dict = call_args) -> tuple:
                return (lambda: domain.tools.call(file_env, t, a)), file_conn

            def through_trial(t: str = tool_name, a: dict = call_args) -> tuple:
                trial = trials.next()
                return (lambda: trial.call(t, a)), trial.conn

            samples = _samples(direct, is_write, repeat, rounds, where)
            file_samples = _samples(on_file_copy, is_write, repeat, rounds, where)
            through = _samples(through_trial, is_write, repeat, rounds, where)
            kind = "lookup" if tool_name in module.LOOKUPS else ("write" if is_write else "search/list")
            goal = GOALS_US.get(kind)
            median_us = statistics.median(samples) * 1e6
            trial_us = statistics.median(through) * 1e6
            results.append(
                {
                    "tool": label,
                    "kind": kind,
                    "median_us": round(median_us, 1),
                    "p95_us": round(sorted(samples)[int(len(samples) * 0.95)] * 1e6, 1),
                    "file_copy_median_us": round(statistics.median(file_samples) * 1e6, 1),
                    "trial_median_us": round(trial_us, 1),
                    "trial_p95_us": round(sorted(through)[int(len(through) * 0.95)] * 1e6, 1),
                    "goal_us": goal,
                    "meets_goal": goal is None or trial_us < goal,
                }
            )
    finally:
        trials.close()
        conn.close()
        file_conn.close()
    return {"domain": name, "actor": actor, "tools": results}


def _span(rows: list[dict], key: str) -> str:
    low, high = min(rows, key=lambda r: r[key]), max(rows, key=lambda r: r[key])
    return f"{_us(low[key])}-{_us(high[key])} (worst: {high['domain']} `{high['tool']}`)"


def _us(value: float) -> str:
    return f"{value / 1000:.1f} ms" if value >= 1000 else f"{value:.0f} us"


def anchor_row(rows: list[dict], anchor: dict) -> dict:
    """ebench's slowest lookup through `trial.call` against tau-bench's lookups through its harness,
    measured in this run; without them, a row that says there is no anchor."""
    lookups = [r for r in rows if r["kind"] == "lookup"]
    measured = [(name, domain, f) for name, domain in ANCHOR_LOOKUPS if (f := anchors.figure(anchor["tool"], name, domain))]
    goal = "<= tau-bench retail's p50 (same run)"
    if not lookups:
        return {"figure": "a lookup through `trial.call` against tau-bench's", "value": "no lookup measured", "goal": goal, "met": None}
    worst = max(lookups, key=lambda r: r["trial_median_us"])
    if not measured:
        value = "no anchor: " + (anchors.describe(anchor["tool"], anchor["given"]) or "none measured")
        return {"figure": "a lookup through `trial.call` against tau-bench's", "value": value, "goal": goal, "met": None, "anchor": "none"}
    retail = anchors.figure(anchor["tool"], "tau-bench", "retail")
    spans = ", ".join(
        f"{name} {domain} `{f['tool']}` {_us(f['p50_us'])} (its step alone {_us(f['step_p50_us'])}, the bare tool {_us(f['bare_p50_us'])})"
        for name, domain, f in measured
    )
    return {
        "figure": "the slowest lookup through `trial.call`, median, against tau-bench / tau2's lookups through their harness (same run)",
        "value": f"ebench {_us(worst['trial_median_us'])} ({worst['domain']} `{worst['tool']}`: the registry alone, its SQL included, "
        f"{_us(worst['median_us'])}, the trial's share {_us(worst['trial_median_us'] - worst['median_us'])}); {spans}",
        "goal": goal,
        "met": worst["trial_median_us"] <= retail["p50_us"] if retail else None,
        "anchor": "same run",
    }


def _difference(rows: list[dict], more: str, less: str) -> tuple[float, float, dict]:
    """The median over the tools of `more` minus `less`, the largest, and its row."""
    extra = sorted(((r[more] - r[less], r) for r in rows), key=lambda pair: pair[0])
    largest, of = extra[-1]
    return statistics.median(e for e, _ in extra), largest, of


def share_row(rows: list[dict]) -> dict:
    """The trial's own share of a call: `trial.call` minus the registry called directly (the
    lock, the call recorded into the session file, the result handed back), per tool."""
    median, largest, of = _difference(rows, "trial_median_us", "median_us")
    return {
        "figure": "what a trial adds to a call (`trial.call` minus the registry alone on the same kind of copy: lock, recording, "
        "result), median over the tools",
        "value": f"{median:.0f} us (up to {largest:.0f} us: {of['domain']} `{of['tool']}`)",
        "goal": f"<= {GOAL_SHARE_US} us median",
        "met": median <= GOAL_SHARE_US,
    }


def copy_row(rows: list[dict]) -> dict:
    """What the trial's kind of copy costs a tool against a copy of the world file: its 64 KB page
    cache (a page it misses is read again from the image) and, for a write, its change tracking."""
    median, largest, of = _difference(rows, "median_us", "file_copy_median_us")
    return {
        "figure": "the trial's copy against a copy of the world file (its small page cache; a write's change tracking), "
        "registry alone, median over the tools",
        "value": f"{median:+.0f} us (up to {largest:+.0f} us: {of['domain']} `{of['tool']}`)",
        "goal": "a figure to watch",
        "met": None,
    }


def readme_rows(reports: list[dict], anchor: dict | None = None) -> list[dict]:
    rows = [{"domain": r["domain"], **t} for r in reports for t in r["tools"]]
    out = []
    for kind, name in (("lookup", "a lookup by id"), ("search/list", "a search or list"), ("write", "a write")):
        of_kind = [r for r in rows if r["kind"] == kind]
        if not of_kind:
            continue
        goal = GOALS_US.get(kind)
        out.append(
            {
                "figure": f"{name}, median per tool, through `trial.call` (lock, tool, recorded into the session file)",
                "value": f"{_span(of_kind, 'trial_median_us')}; the registry alone {_span(of_kind, 'median_us')}",
                "goal": f"< {_us(goal)}" if goal else "a figure to watch",
                "met": all(r["meets_goal"] for r in of_kind) if goal else None,
            }
        )
    out.append(share_row(rows))
    out.append(copy_row(rows))
    if anchor is not None:
        out.append(anchor_row(rows, anchor))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only this domain (repeatable); default: all")
    parser.add_argument("--actor", type=int, default=None, help="default: the domain's ACTOR_SQL choice")
    parser.add_argument("--repeat", type=int, default=300, help="calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 calls a round, 1 round (anchors too): a smoke run")
    anchors.add_arguments(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.rounds = 2, 1

    from ebench.engine.domain_registry import domain_names

    with tempfile.TemporaryDirectory() as tmp:
        reports = [measure_domain(name, args.repeat, args.rounds, args.actor, Path(tmp)) for name in args.domain or domain_names()]
    # The anchors after ebench's own figures, in this run, measured the same way (best round's median).
    given = anchors.checkouts(args)
    say = None if args.json else (lambda text: print(text, file=sys.stderr))
    anchor = {
        "given": {name: str(path) if path else None for name, path in given.items()},
        "tool": anchors.measure(given, "tool", rounds=args.rounds, repeat=args.repeat, say=say),
    }
    rows = readme_rows(reports, anchor)
    if args.json:
        print(json.dumps({"domains": reports, "anchor": anchor, "readme": rows}, indent=2))
        return
    missed = []
    for report in reports:
        print(f"{report['domain']}: median latency, best of {args.rounds} rounds of {args.repeat} calls (actor {report['actor']})")
        print(f"{'tool':36} {'kind':12} {'trial.call':>10} {'p95':>10} {'registry':>10} {'p95':>10}  goal")
        for r in report["tools"]:
            goal = f"< {r['goal_us']:.0f} us {'ok' if r['meets_goal'] else 'MISSED'}" if r["goal_us"] else ""
            print(
                f"{r['tool']:36} {r['kind']:12} {r['trial_median_us']:8.1f}us {r['trial_p95_us']:8.1f}us "
                f"{r['median_us']:8.1f}us {r['p95_us']:8.1f}us  {goal}"
            )
            if not r["meets_goal"]:
                missed.append(f"{report['domain']}.{r['tool']}")
        print()
    print("all goals met" if not missed else f"goals missed: {', '.join(missed)}")
    for row in rows[-2:]:  # the trial's share, and the anchor
        print(f"- {row['figure']}: {row['value']}  [goal: {row['goal']}]")


if __name__ == "__main__":
    main()
