"""How soon a model command sends its first request: `python -m ebench run --batch --model
openai/fake --api-base <fake server> --task music-0001`, started fresh, timed from just before the
process is started to the fake server (in this process, on 127.0.0.1) receiving its first request;
the lean client (the default for openai/ models) and litellm (EBENCH_LITELLM=1), alternately, the
median of `--runs` starts each. Goal (issue 34 §6): within 1.5 s of starting. Also reports whether
the lean run imported litellm (it must not: `-X importtime` of the same command).
Usage: python benchmarks/model_start.py [--runs 3] [--task music-0001] [--json]
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

GOAL = 1.5  # seconds from start to the first request


def first_request(base: str, server: object, task: str, out: Path, litellm: bool, importtime: bool = False) -> dict:
    """One fresh start: seconds to the first request, to the process's end, and the imports."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake-start", "LITELLM_OFFLINE_MODE": "true"}
    env.pop("EBENCH_LITELLM", None)
    if litellm:
        env["EBENCH_LITELLM"] = "1"
    command = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "ebench", "run", "--batch", "--model", "openai/fake"]
    command += ["--api-base", base, "--task", task, "--out", str(out), "--workers", "1", "--json"]
    arrivals: list[float] = server.arrivals  # type: ignore[attr-defined]
    seen = len(arrivals)
    started = time.time()
    process = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    ended = time.time()
    if process.returncode != 0:
        raise SystemExit(f"the model command failed ({process.returncode}): {process.stderr.strip()[-2000:]}")
    mine = arrivals[seen:]
    if not mine:
        raise SystemExit("the model command sent no request to the fake server")
    imported = {line.split("|")[-1].strip().split(".")[0] for line in process.stderr.splitlines() if line.startswith("import time:")}
    return {
        "first_request_s": round(min(mine) - started, 3),
        "command_s": round(ended - started, 3),
        "requests": len(mine),
        "imported_litellm": "litellm" in imported if importtime else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh starts per client (the median is reported)")
    parser.add_argument("--task", default="music-0001")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from ebench.tasks.suite import load_suite
    from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

    runs: dict[str, list[dict]] = {"lean": [], "litellm": []}
    with (
        tempfile.TemporaryDirectory(prefix="ebench-model-start-") as tmp,
        FakeOpenAI(ReferencePlayer(load_suite(ids=[args.task]).tasks)) as server,
    ):
        # one start of each first, not timed: the worlds are built and the OS caches warm
        for client in runs:
            first_request(server.base_url, server, args.task, Path(tmp) / f"warm-{client}", client == "litellm")
        for n in range(args.runs):
            for client in runs:  # alternately: a machine's load falls on both alike
                runs[client].append(first_request(server.base_url, server, args.task, Path(tmp) / f"{client}-{n}", client == "litellm"))
        imports = first_request(server.base_url, server, args.task, Path(tmp) / "importtime", False, importtime=True)
    result: dict = {"task": args.task, "runs": args.runs, "goal_s": GOAL}
    for client, rows in runs.items():
        result[client] = {
            "first_request_s": statistics.median(r["first_request_s"] for r in rows),
            "command_s": statistics.median(r["command_s"] for r in rows),
            "all_first_request_s": [r["first_request_s"] for r in rows],
        }
    result["lean_imports_litellm"] = imports["imported_litellm"]
    lean, slow = result["lean"]["first_request_s"], result["litellm"]["first_request_s"]
    result["readme"] = [
        {
            "figure": "A model command's first request after its start (`ebench run --batch --model openai/... --task ...`, fresh process)",
            "value": f"{lean:.2f} s lean client, {slow:.2f} s through litellm (same run)",
            "goal": f"<= {GOAL} s",
            "met": lean <= GOAL and not imports["imported_litellm"],
        }
    ]
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for client in runs:
        row = result[client]
        print(
            f"{client}: first request {row['first_request_s']:.2f} s after start (median of {args.runs}), command {row['command_s']:.2f} s"
        )
    print(f"lean run imports litellm: {'yes' if imports['imported_litellm'] else 'no'}; goal <= {GOAL} s")


if __name__ == "__main__":
    main()
