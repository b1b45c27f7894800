"""Same-run anchors: tau-bench and tau2, installed from their checkouts and measured beside ebench.

ebench's benchmarks compare their figures with tau-bench's and tau2's only when those are measured
in the same run, on the same machine at the same time (a shared VM's speed changes from one hour
to the next, so a figure from another session is no anchor). Given a checkout of either
(`--tau-bench DIR`, `--tau2 DIR`), this module:

1. installs it into its own virtual environment under $EBENCH_ANCHORS (default
   /tmp/ebench-anchors/<name>-venv), created once and reused while the checkout's packaging file
   is unchanged: `python -m venv`, then `pip install -e DIR` from the package registry (should a
   dependency not install, the checkout without its dependencies and only what the measured parts
   import, recorded as such). tau2 wants Python >= 3.12: the first such interpreter found (on PATH
   or under ~/.pyenv/versions) is used;
2. runs this same file inside that environment as a measuring program (`--probe`, no ebench
   import), which prints JSON:

   - `trial`: a whole trial's harness cost per task with a scripted agent and user (no model):
     tau-bench retail and airline (`get_env`, `reset`, the task's reference actions through
     `env.step`, the closing reply and the reward: the data reloaded and the actions replayed and
     hashed), and tau2 retail (the environment built and initialised, the reference actions through
     `get_response` as the orchestrator calls them, then `evaluate_simulation` with every criterion
     the task names). Every task must earn reward 1, as ebench's oracle must pass;
   - `tool`: one lookup's latency through the harness, as ebench's `trial.call` is measured (the
     best of --rounds rounds by median, --repeat calls each): tau-bench retail `get_order_details`
     and airline `get_reservation_details` through `env.step`, tau2 retail `get_order_details`
     through `get_response`; the bare tool call beside it;
   - `first`: one trial in a fresh process, imports included, and the process's peak memory.

Without a checkout a figure is reported as "no anchor" and no ratio is printed.

    python benchmarks/anchors.py --tau-bench DIR --tau2 DIR [--anchor-tasks 20] [--json]
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HOME = Path(os.environ.get("EBENCH_ANCHORS", "/tmp/ebench-anchors"))
NAMES = ("tau-bench", "tau2")
# What each anchor measures: (anchor, domain) pairs.
TRIAL_DOMAINS = {"tau-bench": ("retail", "airline"), "tau2": ("retail",)}
LOOKUPS = {
    ("tau-bench", "retail"): "get_order_details",
    ("tau-bench", "airline"): "get_reservation_details",
    ("tau2", "retail"): "get_order_details",
}
# litellm (imported by both) fetches its price list over the network unless told not to.
_OFFLINE = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
# What the measured parts import (beside the standard library), should the full install fail.
MEASURED_IMPORTS = {
    "tau-bench": ["pydantic", "litellm", "openai", "google-generativeai"],
    "tau2": [
        "pydantic",
        "loguru",
        "litellm",
        "deepdiff",
        "addict",
        "docstring-parser",
        "fastapi",
        "numpy",
        "pandas",
        "python-dotenv",
        "pyyaml",
        "rich",
        "toml",
    ],
}
INSTALL_TIMEOUT_S = 1800
PROBE_TIMEOUT_S = 1800


class AnchorError(Exception):
    """An anchor that cannot be installed or measured: reported as the reason there is no figure."""


# ---------------------------------------------------------------------------------------------
# The ebench side: flags, install, run the probe.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every benchmark with anchors accepts."""
    parser.add_argument("--tau-bench", type=Path, metavar="DIR", help="a tau-bench checkout: measured in the same run as the anchor")
    parser.add_argument("--tau2", type=Path, metavar="DIR", help="a tau2-bench checkout: measured in the same run as the anchor")
    parser.add_argument("--anchor-tasks", type=int, default=20, help="tasks per anchor domain for the per-trial figure (0: all)")


def checkouts(args: argparse.Namespace) -> dict[str, Path | None]:
    return {"tau-bench": args.tau_bench, "tau2": args.tau2}


def _python_version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.split()
    return (int(parts[0]), int(parts[1])) if done.returncode == 0 and len(parts) == 2 else None


def _requires_python(checkout: Path) -> tuple[int, int]:
    """The lowest Python the checkout accepts (`requires-python = ">=3.12..."`), or this one's."""
    pyproject = checkout / "pyproject.toml"
    if pyproject.exists():
        found = re.search(r'requires-python\s*=\s*"[^"]*>=\s*(\d+)\.(\d+)', pyproject.read_text(encoding="utf-8"))
        if found:
            return int(found.group(1)), int(found.group(2))
    return sys.version_info[0], sys.version_info[1]


def find_python(checkout: Path) -> str:
    """An interpreter the checkout accepts: this one, else the first suitable on PATH or in pyenv."""
    low = _requires_python(checkout)
    candidates = [sys.executable]
    candidates += [p for minor in range(20, low[1] - 1, -1) if (p := shutil.which(f"python3.{minor}"))]
    candidates += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.*/bin/python"), reverse=True)]
    for python in candidates:
        version = _python_version(python)
        if version is not None and version >= low:
            return python
    raise AnchorError(f"no Python >= {low[0]}.{low[1]} found for {checkout.name} (tried {len(candidates)} interpreters)")


def _fingerprint(checkout: Path) -> str:
    """What decides whether the environment must be made again: the checkout's place and packaging."""
    digest = hashlib.sha256(str(checkout.resolve()).encode())
    for name in ("setup.py", "pyproject.toml", "requirements.txt"):
        path = checkout / name
        if path.exists():
            digest.update(name.encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def ensure_venv(name: str, checkout: Path, say: Any = None) -> Path:
    """The anchor's environment, installed from `checkout` if it is not already; its python."""
    if not checkout.is_dir():
        raise AnchorError(f"{name}: {checkout} is not a folder")
    venv = HOME / f"{name}-venv"
    python = venv / "bin" / "python"
    marker = venv / "ebench-anchor.json"
    fingerprint = _fingerprint(checkout)
    HOME.mkdir(parents=True, exist_ok=True)
    with open(HOME / f"{name}.lock", "w") as lock:  # two benchmarks never install at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if python.exists() and marker.exists() and json.loads(marker.read_text()).get("fingerprint") == fingerprint:
                return python
        except ValueError:
            pass
        if say:
            say(f"installing {name} from {checkout} into {venv} (once) ...")
        if not python.exists():
            _run([find_python(checkout), "-m", "venv", str(venv)], f"{name}: making its virtual environment")
        pip = [str(python), "-m", "pip", "install", "-q"]
        try:
            _run([*pip, "-e", str(checkout)], f"{name}: pip install -e {checkout}")
            installed = "in full"
        except AnchorError as error:  # a dependency that does not install: only what is measured
            _run([*pip, "--no-deps", "-e", str(checkout)], f"{name}: pip install --no-deps -e {checkout}")
            _run([*pip, *MEASURED_IMPORTS[name]], f"{name}: pip install {' '.join(MEASURED_IMPORTS[name])}")
            installed = f"only what the measured parts import ({', '.join(MEASURED_IMPORTS[name])}); in full it failed: {error}"
            if say:
                say(f"{name}: installed {installed}")
        marker.write_text(json.dumps({"fingerprint": fingerprint, "checkout": str(checkout.resolve()), "installed": installed}))
    return python


def installed(name: str) -> str:
    """How the anchor's environment was installed ("in full", or only what the measured parts import)."""
    try:
        return str(json.loads((HOME / f"{name}-venv" / "ebench-anchor.json").read_text()).get("installed", "in full"))
    except (OSError, ValueError):
        return "unknown"


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AnchorError(f"{what}: no end within {INSTALL_TIMEOUT_S} s") from None
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
        raise AnchorError(f"{what} failed: {(errors or ['(nothing on stderr)'])[-1][:300]}")


def probe(python: Path, checkout: Path, name: str, what: str, *args: str) -> Any:
    """This file's probe, run by the anchor's python: its JSON."""
    command = [str(python), str(Path(__file__).resolve()), "--probe", what, name, str(checkout), *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, cwd=checkout, env=_OFFLINE)
    except subprocess.TimeoutExpired:
        raise AnchorError(f"{name} {what}: no answer within {PROBE_TIMEOUT_S} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise AnchorError(f"{name} {what} failed: {(lines or ['(nothing on stderr)'])[-1][:300]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(
    given: dict[str, Path | None], what: str, *, tasks: int = 20, rounds: int = 3, repeat: int = 300, say: Any = None
) -> dict[str, Any]:
    """Every anchor's `what` figures ("trial", "tool" or "first"), or why there are none:
    {anchor: {"figures": ..., "seconds": ...} or {"error": reason}}; anchors without a checkout are absent."""
    out: dict[str, Any] = {}
    for name in NAMES:
        checkout = given.get(name)
        if checkout is None:
            continue
        try:
            python = ensure_venv(name, checkout.resolve(), say)
            started = time.perf_counter()
            if what == "first":
                figures = first_trial(python, checkout.resolve(), name)
            else:
                figures = probe(python, checkout.resolve(), name, what, str(tasks), str(rounds), str(repeat))
            seconds = round(time.perf_counter() - started, 1)
            out[name] = {"figures": figures, "seconds": seconds, "checkout": str(checkout), "installed": installed(name)}
        except AnchorError as error:
            out[name] = {"error": str(error), "checkout": str(checkout)}
    return out


def first_trial(python: Path, checkout: Path, name: str, repeat: int = 1) -> dict[str, Any]:
    """One trial of the anchor's first retail task in a fresh process: wall time from the process's
    start to its exit (imports and data loading included) and its peak memory."""
    seconds, peaks = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        figures = probe(python, checkout, name, "first", "1", "1", "1")
        seconds.append(time.perf_counter() - started)
        peaks.append(figures["peak_mb"])
    return {"seconds": round(statistics.median(seconds), 2), "peak_mb": round(statistics.median(peaks), 1), "domain": "retail"}


def describe(anchors: dict[str, Any], given: dict[str, Path | None]) -> str:
    """One line on where the anchors stand, for a figure that has none."""
    parts = []
    for name in NAMES:
        if given.get(name) is None:
            parts.append(f"{name}: no checkout given (--{name} DIR)")
        elif "error" in anchors.get(name, {}):
            parts.append(f"{name}: {anchors[name]['error']}")
    return "; ".join(parts)


def figure(anchors: dict[str, Any], name: str, domain: str) -> dict[str, Any] | None:
    """One anchor domain's figures, or None when that anchor was not measured."""
    entry = anchors.get(name)
    if not entry or "figures" not in entry:
        return None
    result = entry["figures"].get(domain)
    return result if isinstance(result, dict) else None


# ---------------------------------------------------------------------------------------------
# The probe: runs inside the anchor's environment (its own Python; nothing of ebench imported).


def _best_median(call: Any, repeat: int, rounds: int) -> tuple[float, float]:
    """As ebench's tool_calls.py: the best of `rounds` rounds by median, `repeat` calls each; (p50, p95) in us."""
    best: list[float] | None = None
    for _ in range(rounds):
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            call()
            samples.append(time.perf_counter() - started)
        if best is None or statistics.median(samples) < statistics.median(best):
            best = samples
    assert best is not None
    ordered = sorted(best)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.95)] * 1e6


def _summary(samples: list[float], passed: int, tasks: int, calls: list[int]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "trials": len(samples),
        "tasks": tasks,
        "passed": passed,
        "calls_per_trial": round(sum(calls) / max(len(calls), 1), 1),
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] * 1000, 2),
    }


class _TauBench:
    """tau-bench (sierra-research/tau-bench): `Env` with a scripted user in place of the model's."""

    def __init__(self) -> None:
        from tau_bench.envs import get_env
        from tau_bench.envs.user import BaseUserSimulationEnv
        from tau_bench.types import RESPOND_ACTION_NAME, Action

        class ScriptedUser(BaseUserSimulationEnv):  # the user's turns, instantly: no model
            def reset(self, instruction: str | None = None) -> str:
                return instruction or "hello"

            def step(self, content: str) -> str:
                return "###STOP###"

            def get_total_cost(self) -> float:
                return 0.0

        self.get_env, self.user, self.action, self.respond = get_env, ScriptedUser, Action, RESPOND_ACTION_NAME

    def env(self, domain: str, index: int) -> Any:
        env = self.get_env(domain, user_strategy="human", user_model="none", task_split="test", task_index=index)
        env.user = self.user()
        return env

    def tasks(self, domain: str) -> int:
        return len(self.env(domain, 0).tasks)

    def trial(self, domain: str, index: int) -> tuple[bool, int]:
        """A run.py trial without a model: the isolated env, reset, the reference actions, the
        closing reply (the task's outputs said) and the reward the env computes when it is done."""
        env = self.env(domain, index)
        env.reset(task_index=index)
        task = env.task
        response = None
        for action in task.actions:
            response = env.step(action)
            if response.done:
                break
        if response is None or not response.done:
            response = env.step(self.action(name=self.respond, kwargs={"content": ", ".join(task.outputs) or "done"}))
        return response.reward == 1, len(task.actions)

    def lookup(self, domain: str) -> tuple[Any, Any, Any]:
        """For the domain's lookup on a real id: the harness's side of one call in tau-bench's
        tool-calling agent loop (`env.step`: the tool, the action recorded, the response built;
        then the loop's record of it: the step's info dumped and merged, the tool message kept),
        `env.step` alone, and the bare tool."""
        env = self.env(domain, 0)
        env.reset(task_index=0)
        name = LOOKUPS[("tau-bench", domain)]
        kwargs = (
            {"order_id": next(iter(env.data["orders"]))} if domain == "retail" else {"reservation_id": next(iter(env.data["reservations"]))}
        )
        action = self.action(name=name, kwargs=kwargs)
        tool = env.tools_map[name]
        info: dict[str, Any] = {}
        messages: list[dict[str, Any]] = []

        def through() -> None:
            nonlocal info
            response = env.step(action)
            info = {**info, **response.info.model_dump()}
            messages.append({"role": "tool", "tool_call_id": "call_0", "name": name, "content": response.observation})
            env.actions.clear()  # a trial's trajectory is short: keep it from growing without end
            messages.clear()

        def step() -> None:
            env.step(action)
            env.actions.clear()

        return through, step, lambda: tool.invoke(data=env.data, **kwargs)


class _Tau2:
    """tau2 (sierra-research/tau2-bench): the environment, the orchestrator's tool path and the evaluator."""

    def __init__(self) -> None:
        from loguru import logger

        logger.remove()  # as its runner's log level does; debug lines on stderr would be timed too
        logger.add(sys.stderr, level="WARNING")
        from tau2.data_model.message import AssistantMessage, ToolCall
        from tau2.data_model.simulation import SimulationRun, TerminationReason
        from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
        from tau2.registry import registry

        self.assistant, self.tool_call, self.run, self.stop = AssistantMessage, ToolCall, SimulationRun, TerminationReason.AGENT_STOP
        # Every deterministic criterion (database, actions, what was said); the natural-language
        # assertions most tasks also name are judged by a model, which is no harness cost.
        self.evaluate, self.all, self.registry = evaluate_simulation, EvaluationType.ALL_IGNORE_BASIS, registry
        self._tasks: dict[str, list] = {}

    def task_list(self, domain: str) -> list:
        if domain not in self._tasks:
            self._tasks[domain] = self.registry.get_tasks_loader(domain)()
        return self._tasks[domain]

    def tasks(self, domain: str) -> int:
        return len(self.task_list(domain))

    def trial(self, domain: str, index: int) -> tuple[bool, int]:
        """A simulation without agent or user models: the environment built and set to the task's
        initial state (as the orchestrator does), each reference action through `get_response`,
        a closing message saying what the task wants said, then `evaluate_simulation` with every
        deterministic criterion (ALL_IGNORE_BASIS: database, actions, communication)."""
        from copy import deepcopy

        task = self.task_list(domain)[index]
        env = self.registry.get_env_constructor(domain)()
        initial = task.initial_state
        history = deepcopy(initial.message_history) if initial is not None and initial.message_history else []
        env.set_state(
            initialization_data=initial.initialization_data if initial is not None else None,
            initialization_actions=initial.initialization_actions if initial is not None else None,
            message_history=history,
        )
        messages: list = list(history)
        actions = (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []
        for number, action in enumerate(actions):
            call = self.tool_call(id=f"call_{number}", name=action.name, arguments=action.arguments, requestor=action.requestor)
            messages.append(self.assistant(role="assistant", content=None, tool_calls=[call]))
            messages.append(env.get_response(call))
        said = task.evaluation_criteria.communicate_info if task.evaluation_criteria else None
        messages.append(self.assistant(role="assistant", content=" ".join(said or []) or "Done."))
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        run = self.run(
            id=f"anchor-{index}",
            task_id=task.id,
            start_time=now,
            end_time=now,
            duration=0.0,
            termination_reason=self.stop,
            messages=messages,
        )
        reward = self.evaluate(simulation=run, task=task, evaluation_type=self.all, solo_mode=False, domain=domain)
        return reward.reward == 1, len(actions)

    def lookup(self, domain: str) -> tuple[Any, Any, Any]:
        """The orchestrator's path for one call (`get_response`: the tool, its result as JSON in a
        ToolMessage; the message kept in the trajectory), `get_response` alone, and the bare tool."""
        env = self.registry.get_env_constructor(domain)()
        order_id = next(iter(env.tools.db.orders))
        call = self.tool_call(id="call_0", name=LOOKUPS[("tau2", domain)], arguments={"order_id": order_id}, requestor="assistant")
        trajectory: list = []

        def through() -> None:
            trajectory.append(env.get_response(call))
            trajectory.clear()

        return through, lambda: env.get_response(call), lambda: env.use_tool(call.name, order_id=order_id)


def _probe(what: str, name: str, tasks: int, rounds: int, repeat: int) -> dict[str, Any]:
    harness = _TauBench() if name == "tau-bench" else _Tau2()
    out: dict[str, Any] = {}
    if what == "first":
        ok, _ = harness.trial("retail", 0)
        if not ok:
            raise SystemExit(f"{name} retail task 0: the reference actions did not earn reward 1")
        return {"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    for domain in TRIAL_DOMAINS[name]:
        if what == "trial":
            count = harness.tasks(domain)
            chosen = list(range(count))[: tasks or None]
            harness.trial(domain, chosen[0])  # warm-up: imports and caches, as ebench's warm-up trial
            samples, passed, calls = [], 0, []
            for _ in range(rounds):
                for index in chosen:
                    started = time.perf_counter()
                    ok, steps = harness.trial(domain, index)
                    samples.append(time.perf_counter() - started)
                    passed += ok
                    calls.append(steps)
            out[domain] = _summary(samples, passed, len(chosen), calls)
        else:
            through, step, bare = harness.lookup(domain)
            p50, p95 = _best_median(through, repeat, rounds)
            step_p50, _ = _best_median(step, repeat, rounds)
            bare_p50, _ = _best_median(bare, repeat, rounds)
            out[domain] = {
                "tool": LOOKUPS[(name, domain)],
                "p50_us": round(p50, 1),
                "p95_us": round(p95, 1),
                "step_p50_us": round(step_p50, 1),
                "bare_p50_us": round(bare_p50, 1),
            }
    out["python"] = sys.version.split()[0]
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--probe":  # inside the anchor's environment
        what, name, checkout, tasks, rounds, repeat = sys.argv[2:8]
        sys.path.insert(0, checkout)
        print(json.dumps(_probe(what, name, int(tasks), int(rounds), int(repeat))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the per-trial figure (every task once a round)")
    parser.add_argument("--repeat", type=int, default=300, help="calls per round of the lookup figure")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    given = checkouts(args)
    say = (lambda text: None) if args.json else (lambda text: print(text, file=sys.stderr))
    data = {
        "trial": measure(given, "trial", tasks=args.anchor_tasks, rounds=args.rounds, say=say),
        "tool": measure(given, "tool", rounds=3, repeat=args.repeat, say=say),
        "first": measure(given, "first", say=say),
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return
    for what, anchors in data.items():
        for name, entry in anchors.items():
            print(f"{what} {name}: {entry.get('figures', entry.get('error'))}")
    if not any(data.values()):
        print("no anchor: give --tau-bench DIR and/or --tau2 DIR")


if __name__ == "__main__":
    main()
