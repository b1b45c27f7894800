"""The synthesis pipeline's harness overhead per accepted task, model time excluded.

Goal (issue 17, "Done when"): a figure for what `ebench tasks synthesize` costs besides its
models: the generator's world copy and recorded loop, the draft checks (the reference replayed on
fresh copies, the lazy solvers' shortcuts), each verifier's recorded trial, the task file and log.
Usage: python benchmarks/synthesis_overhead.py [--count 5] [--verifiers 2] [--concurrency 1] [--json]

The real command (in this process, after its imports and the world are warm) against a local
fake OpenAI-compatible server (ebench/testing/fake_openai.py, in this process's threads) that
answers at once: a scripted generator that opens a new room each draft and agreeing verifiers that
solve it (ebench/testing/synthesis_script.py). Every draft is accepted. The figure is the command's
wall time less the time the server's responders spent answering (about zero), per accepted task;
the litellm client's share (its waits on the API, summed over the sessions' model messages, so
verifiers answering side by side both count) is reported beside it.
What a user waits for is the command from a fresh process: the same synthesis run again as
`python -m ebench tasks synthesize ...` (imports, litellm's among them, and the world's check
included) against the same server, reported as its wall time and per accepted task.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-fake-benchmark")


class TimedResponder:
    """A responder that adds up the time it spends answering (the 'model time' to leave out)."""

    def __init__(self, responders: dict) -> None:
        self.responders = responders
        self.seconds = 0.0
        self.requests = 0
        self.lock = threading.Lock()

    def __call__(self, body: dict):
        started = time.perf_counter()
        try:
            name = body["model"].split("/")[-1]  # verify-1, verify-2, ...: one scripted verifier under distinct names
            return self.responders["verify" if name.startswith("verify-") else name](body)
        finally:
            with self.lock:
                self.seconds += time.perf_counter() - started
                self.requests += 1


def api_wait(out: Path) -> float:
    """The litellm client's waits on the API, summed over every session's model messages."""
    from ebench.sessions.record import read_session

    total = 0.0
    for path in (out / "sessions").glob("*.jsonl"):
        for event in read_session(path).events:
            if event.event == "message" and getattr(event, "role", "") == "assistant":
                total += getattr(event, "seconds", 0.0) or 0.0
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=5, help="tasks to accept")
    parser.add_argument("--verifiers", type=int, default=2, help="verifier models (all agree)")
    parser.add_argument("--concurrency", type=int, default=1, help="drafts in progress at once")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ebench.cli import app
    from ebench.engine.domain_registry import get_domain
    from ebench.sessions.model_client import load_litellm
    from ebench.sessions.trial import current_world
    from ebench.testing.fake_openai import FakeOpenAI
    from ebench.testing.synthesis_script import ACTOR, fresh_room_generator, room_solver

    current_world(get_domain("moba"))  # built and imported before timing: the command's own work is measured
    load_litellm()
    responders = {"gen": fresh_room_generator(), "verify": room_solver()}
    responder = TimedResponder({"gen": lambda body: responders["gen"](body), "verify": lambda body: responders["verify"](body)})
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(responder) as server:

        def command(out: Path) -> list[str]:
            words = ["tasks", "synthesize", "--domain", "moba", "--generator-model", "openai/gen"]
            # distinct model names: the same model listed twice is one vote (its listings must be distinct configurations)
            words += [word for k in range(1, args.verifiers + 1) for word in ("--verifier-model", f"openai/verify-{k}")]
            words += ["--count", str(args.count), "--out", str(out), "--actor", str(ACTOR), "--capability", "dependency"]
            return words + ["--concurrency", str(args.concurrency), "--api-base", server.base_url, "--retries", "0", "--json"]

        out = Path(tmp) / "synth"
        printed = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(printed):
            code = app(command(out), standalone_mode=False)
        wall = time.perf_counter() - started
        summary = json.loads(printed.getvalue())
        waited = api_wait(out)
        accepted = summary["accepted"]
        if code or not accepted:
            raise SystemExit(f"error: the synthesis accepted {accepted} of {args.count} (exit {code}): {summary}")
        # the same synthesis from a fresh process, with fresh scripted models
        responders.update(gen=fresh_room_generator(), verify=room_solver())
        answering = responder.seconds
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "ebench", *command(Path(tmp) / "fresh")], capture_output=True, text=True)
        fresh_wall = time.perf_counter() - started
        fresh_answering = responder.seconds - answering
        fresh_accepted = json.loads(done.stdout)["accepted"] if done.returncode == 0 else 0
        if not fresh_accepted:
            raise SystemExit(f"error: the synthesis from a fresh process failed (exit {done.returncode}): {done.stderr[-500:]}")
    harness = wall - answering
    figures = {
        "accepted": accepted,
        "drafts": summary["drafts"],
        "verifiers": args.verifiers,
        "model_requests": responder.requests,
        "wall_s": round(wall, 3),
        "server_answering_s": round(answering, 4),
        "harness_ms_per_accepted": round(1000 * harness / accepted, 1),
        "client_api_wait_ms_per_accepted": round(1000 * waited / accepted, 1),
        "ms_per_model_request": round(1000 * harness / max(1, responder.requests), 2),
        "fresh_process_wall_s": round(fresh_wall, 3),
        "fresh_process_accepted": fresh_accepted,
        "fresh_process_s_per_accepted": round((fresh_wall - fresh_answering) / fresh_accepted, 3),
    }
    figures["readme"] = [
        {
            "figure": f"`ebench tasks synthesize` from a fresh process, fake models answering at once ({args.count} tasks, "
            f"{args.verifiers} verifiers)",
            "value": f"{fresh_wall:.1f} s ({figures['fresh_process_s_per_accepted']:.2f} s per accepted task, imports included)",
            "goal": "a figure to watch",
            "met": None,
        },
        {
            "figure": "its harness per accepted task in-process (world copies, checks, recorded trials, files)",
            "value": f"{figures['harness_ms_per_accepted']:.0f} ms, of which the litellm client's "
            f"{figures['client_api_wait_ms_per_accepted']:.0f} ms",
            "goal": "a figure to watch",
            "met": None,
        },
    ]
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{accepted} tasks accepted of {summary['drafts']} drafts, {args.verifiers} verifiers each, "
        f"{responder.requests} model requests in {wall:.2f} s (the server answering: {responder.seconds * 1000:.1f} ms)"
    )
    print(f"harness overhead per accepted task: {figures['harness_ms_per_accepted']:.0f} ms")
    print(f"  of which the litellm client's waits on the API (summed over sessions): {figures['client_api_wait_ms_per_accepted']:.0f} ms")
    print(
        f"the same command from a fresh process: {fresh_wall:.2f} s for {fresh_accepted} tasks "
        f"({figures['fresh_process_s_per_accepted']:.2f} s per accepted task)"
    )
    print("goal: none set; a figure to watch (issue 17)")


if __name__ == "__main__":
    main()
