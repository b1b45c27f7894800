"""How fast `ebench --help` answers, and which heavy modules it imports (it must import none).

Goal (issue: foundation): under 1 s; litellm and mcp are not imported for it.
Timed from a fresh process's start to its exit (`python -m ebench --help`), as a user waits for it.
Usage: python benchmarks/cli_startup.py [--repeat 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

HEAVY = ("litellm", "mcp", "textual", "faker", "openai", "pydantic")

PROBE = """
import sys
from ebench.cli import app
try:
    app(["--help"], standalone_mode=False)
except SystemExit:
    pass
print("HEAVY:" + ",".join(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    samples = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ebench", "--help"], check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    probe = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY)], check=True, capture_output=True, text=True)
    marker = next(line for line in probe.stdout.splitlines() if line.startswith("HEAVY:"))
    imported = [m for m in marker[len("HEAVY:") :].split(",") if m]
    result = {
        "median_s": round(statistics.median(samples), 3),
        "max_s": round(max(samples), 3),
        "heavy_modules_imported": imported,
        "meets_goal": statistics.median(samples) < 1.0 and not imported,
    }
    result["readme"] = [
        {
            "figure": "`ebench --help` from a fresh process",
            "value": f"{result['median_s']:.2f} s (max {result['max_s']:.2f} s)",
            "goal": "< 1 s",
            "met": result["median_s"] < 1.0,
        },
        {
            "figure": "heavy modules it imports (" + ", ".join(HEAVY) + ")",
            "value": ", ".join(imported) or "none",
            "goal": "none",
            "met": not imported,
        },
    ]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"ebench --help: median {result['median_s']:.3f} s, max {result['max_s']:.3f} s over {args.repeat} runs (goal < 1 s)")
    print(f"heavy modules imported: {', '.join(imported) or 'none'}")


if __name__ == "__main__":
    main()
