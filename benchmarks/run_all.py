"""Run every benchmark and write the README's performance table from their figures.

Each script under benchmarks/ runs in a fresh process with --json, one after another (the
machine's cores are the scripts' to measure); the `readme` rows of their output (what was
measured, the figure, its goal, whether it was met) become the table between the README's
`<!-- performance:start -->` and `<!-- performance:end -->` markers, headed by the date, the
machine's core count and CPU model and the Python version. A script that fails, or prints no
rows, is a row saying so: the others are still run and written.

Comparisons with tau-bench and tau2 are measured in the same run when their checkouts are given
(`--tau-bench DIR --tau2 DIR`, passed through to the scripts that measure them; see
benchmarks/anchors.py). The table's `anchor` column says which figures came from a same-run
anchor ("same run") and which comparisons had none ("no anchor": no ratio is printed then).

    python benchmarks/run_all.py            # full sizes (several minutes), README rewritten
    python benchmarks/run_all.py --quick    # a smoke run at small sizes (not figures to quote)
    python benchmarks/run_all.py --no-write --json   # everything as JSON, README left alone
    python benchmarks/run_all.py --tau-bench DIR --tau2 DIR   # with the same-run anchors
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
START, END = "<!-- performance:start -->", "<!-- performance:end -->"

# (script, arguments at full size, arguments for --quick). Full sizes are the scripts' defaults:
# small enough to run in minutes, large enough that medians mean something.
SCRIPTS: list[tuple[str, list[str], list[str]]] = [
    ("trial_overhead.py", [], ["--quick"]),
    ("tool_calls.py", [], ["--quick"]),
    ("grading_growth.py", [], ["--quick"]),
    ("exec_code.py", [], ["--trials", "1", "--blocks", "2", "--calls", "20"]),
    ("batch_throughput.py", [], ["--quick"]),
    ("model_client.py", [], ["--requests", "16"]),
    ("model_start.py", [], ["--runs", "1"]),
    ("cli_startup.py", [], ["--repeat", "1"]),
    ("app_startup.py", [], ["--repeat", "1"]),
    ("build_worlds.py", [], ["--repeat", "1"]),
    ("live_diff.py", [], ["--repeat", "1"]),
    ("synthesis_overhead.py", [], ["--count", "2"]),
    ("faults.py", [], ["--tasks", "2", "--trials", "1"]),
    ("compose.py", [], ["--count", "20", "--seeds", "1,2"]),
]
TIMEOUT_S = {False: 1800, True: 600}  # per script, full and quick
ANCHORED = {"trial_overhead.py", "tool_calls.py"}  # the scripts that measure tau-bench / tau2 beside ebench
ANCHOR_CELL = {"same run": "same run", "none": "no anchor"}


def machine() -> dict[str, Any]:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "cores": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "system": platform.system(),
        "suite": _suite_version(),
    }


def _suite_version() -> str:
    """The shipped suite's version: the task ids the table names are that suite's."""
    from ebench.tasks.suite import suite_version

    return suite_version() or "?"


def run_script(script: str, args: list[str], timeout: float) -> dict[str, Any]:
    """One script in a fresh process; its output and rows, or a row saying why there are none."""
    command = [sys.executable, str(HERE / script), *args, "--json"]
    started = time.perf_counter()
    report: dict[str, Any] = {"script": script, "args": args, "ok": False, "error": None, "output": None}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    except subprocess.TimeoutExpired:
        report["error"] = f"no answer within {timeout:.0f} s"
    else:
        if done.returncode != 0:
            last = [line for line in done.stderr.strip().splitlines() if line.strip()][-1:] or ["(nothing on stderr)"]
            report["error"] = f"exit {done.returncode}: {last[0][:300]}"
        else:
            try:
                report["output"] = json.loads(done.stdout)
            except ValueError:
                report["error"] = "its output is not JSON"
    report["seconds"] = round(time.perf_counter() - started, 1)
    rows = report["output"].get("readme") if isinstance(report["output"], dict) else None
    if report["error"] is None and not (isinstance(rows, list) and rows):
        report["error"] = "it printed no `readme` rows"
    report["ok"] = report["error"] is None
    figure = "(no figures in its output)" if report["output"] is not None else "(the script failed)"
    report["readme"] = rows if report["ok"] else [{"figure": figure, "value": report["error"], "goal": "-", "met": False}]
    return report


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _met(value: Any) -> str:
    return {True: "yes", False: "**no**"}.get(value, "") if isinstance(value, bool) else ""


def render(reports: list[dict[str, Any]], host: dict[str, Any], quick: bool = False, anchors: list[str] | None = None) -> str:
    """The table, markers included. `anchors`: the anchors whose checkouts were given (measured in this run)."""
    given = (
        f" tau-bench / tau2 comparisons: {' and '.join(anchors)} measured in the same run (`anchor` column)."
        if anchors
        else " No tau-bench / tau2 checkout was given: their comparisons say `no anchor`."
    )
    lines = [
        START,
        f"Measured on {host['date']}: {host['cores']} cores ({_cell(host['cpu'])}), Python {host['python']}, "
        f"suite version {host.get('suite', '?')}, by `python benchmarks/run_all.py`"
        + (" --quick (smoke sizes: not figures to quote)" if quick else "")
        + "."
        + given,
        "",
        "| script | what is measured | figure | goal | met | anchor |",
        "|---|---|---|---|---|---|",
    ]
    for report in reports:
        for number, row in enumerate(report["readme"]):
            script = f"`{report['script']}`" if number == 0 else ""
            anchor = ANCHOR_CELL.get(row.get("anchor") or "", "")
            lines.append(
                f"| {script} | {_cell(row['figure'])} | {_cell(row['value'])} | {_cell(row['goal'])} | {_met(row.get('met'))} | {anchor} |"
            )
    lines.append(END)
    return "\n".join(lines)


def write_table(path: Path, table: str) -> None:
    """Replace what lies between the markers (the markers included) with `table`."""
    text = path.read_text(encoding="utf-8")
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"error: {path} has no {START} ... {END} markers")
    path.write_text(text[:start] + table + text[end + len(END) :], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--no-write", action="store_true", help="leave the README alone")
    parser.add_argument("--readme", type=Path, default=README, help="the file whose table is rewritten")
    parser.add_argument("--only", action="append", help="only this script (repeatable)")
    parser.add_argument("--tau-bench", type=Path, metavar="DIR", help="a tau-bench checkout: the anchor, measured in the same run")
    parser.add_argument("--tau2", type=Path, metavar="DIR", help="a tau2-bench checkout: the anchor, measured in the same run")
    parser.add_argument("--json", action="store_true", help="print everything as JSON")
    args = parser.parse_args()
    anchor_args = [
        a for flag, path in (("--tau-bench", args.tau_bench), ("--tau2", args.tau2)) if path for a in (flag, str(path.resolve()))
    ]
    chosen = [s for s in SCRIPTS if not args.only or s[0] in args.only]
    if args.only and len(chosen) != len(set(args.only)):
        raise SystemExit(f"error: unknown script among {', '.join(args.only)}")
    host = machine()
    reports = []
    for script, full, quick in chosen:
        print(f"{script} ...", file=sys.stderr, flush=True)
        extra = anchor_args if script in ANCHORED else []
        report = run_script(script, [*(quick if args.quick else full), *extra], TIMEOUT_S[args.quick])
        print(f"{script}: {'ok' if report['ok'] else report['error']} ({report['seconds']} s)", file=sys.stderr, flush=True)
        reports.append(report)
    table = render(reports, host, args.quick, [name for name, path in (("tau-bench", args.tau_bench), ("tau2", args.tau2)) if path])
    if not args.no_write:
        write_table(args.readme, table)
    if args.json:
        anchored = {"tau-bench": str(args.tau_bench) if args.tau_bench else None, "tau2": str(args.tau2) if args.tau2 else None}
        print(json.dumps({"machine": host, "quick": args.quick, "anchors": anchored, "scripts": reports, "table": table}, indent=2))
        return
    print(table)
    if not args.no_write:
        print(f"\nwritten to {args.readme}")


if __name__ == "__main__":
    main()
