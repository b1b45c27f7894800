"""The solver registry: `--solver NAME` finds built-ins and plug-ins alike, solvers are built from
one typed options object, and the step hook the app pauses on is part of every solver's `solve`.

The plug-in (tests/plugins/ebench_echo_solver) is a real package, installed into a folder of its
own and found only through its "ebench.solvers" entry point, as a package outside ebench would be."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from ebench.registry import PluginWarning
from ebench.sessions.record import read_session
from ebench.sessions.solvers import OracleSolver, SolverOptions, SolverOptionsError, UnknownSolver, build_solver
from ebench.sessions.solvers.registry import SOLVERS, builtin_solver_names
from ebench.sessions.trial import Trial, TrialLimits
from ebench.sessions.watch import StepGate, watch
from ebench.tasks.suite import load_suite

PLUGIN = Path(__file__).resolve().parent / "plugins" / "ebench_echo_solver"
TASK = "music-0005"
BROKEN = ["echo-crashes", "echo-missing", "echo-not-a-factory", "echo-not-a-solver"]


@pytest.fixture(scope="session")
def echo_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in installed into a folder of its own (put on PYTHONPATH to make it visible)."""
    source = tmp_path_factory.mktemp("echo-source") / PLUGIN.name
    shutil.copytree(PLUGIN, source)  # pip builds inside the source folder: a copy keeps the repo clean
    target = tmp_path_factory.mktemp("echo-site")
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--no-deps", "--no-build-isolation", "--no-index", "--target", str(target), str(source)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return target


def ebench(plugin: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ebench ARGS` in a fresh process that sees the plug-in, with its own data directory."""
    path = [str(plugin), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "EBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "ebench", *args], env=env, capture_output=True, text=True, timeout=300)


# The plug-in also declares "oracle": refused, with this warning wherever its entry points are read.
SHADOWED = "warning: the solver plug-in 'oracle' (ebench_echo_solver:EchoSolver.from_options) is ignored: 'oracle' is a built-in solver"


def said(result: subprocess.CompletedProcess[str]) -> str:
    """stderr without the refused plug-in's warning, which must be there, once."""
    lines = result.stderr.strip().splitlines()
    assert lines.count(SHADOWED) == 1, result.stderr
    return "\n".join(line for line in lines if line != SHADOWED)


def test_a_plugin_solver_scores_a_batch_through_its_entry_point(echo_plugin: Path, tmp_path: Path):
    out = tmp_path / "run"
    result = ebench(
        echo_plugin, tmp_path / "home", "run", "--batch", "--solver", "echo", "--model-arg", "voice=loud", "--task", TASK, "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    [line] = (out / "results.jsonl").read_text().splitlines()
    row = json.loads(line)
    assert (row["task"], row["solver"], row["passed"], row["tool_calls"]) == (TASK, "echo", False, 1)
    assert json.loads((out / "manifest.json").read_text())["config"]["solver"] == {"name": "echo", "voice": "loud"}
    session = read_session(out / row["session"])
    assert session.start.solver.to_dict() == {"name": "echo", "voice": "loud"}  # the options reached the plug-in's factory
    [call] = session.tool_calls()
    assert call.tool == load_suite(ids=[TASK]).tasks[0].reference_solution[0].tool


def test_unknown_solver_errors_list_the_plugins_too(echo_plugin: Path, tmp_path: Path):
    result = ebench(echo_plugin, tmp_path, "run", "--batch", "--solver", "psychic")
    assert result.returncode == 2
    known = ", ".join([*builtin_solver_names(), *sorted(["echo", *BROKEN])])
    assert said(result) == f"error: unknown solver 'psychic'; choose one of: {known}"


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "echo-missing",
            "the solver 'echo-missing' (ebench_echo_solver_missing:EchoSolver.from_options) cannot be loaded: ModuleNotFoundError",
        ),
        (
            "echo-not-a-factory",
            "the solver 'echo-not-a-factory' (ebench_echo_solver:NOT_A_FACTORY): a solver entry point must name a factory",
        ),
        ("echo-not-a-solver", "the solver 'echo-not-a-solver' factory gave a str, not a solver"),
        ("echo-crashes", "the solver 'echo-crashes' cannot be built: KeyError: 'voice'"),
    ],
)
def test_a_broken_plugin_is_one_line_naming_it(echo_plugin: Path, tmp_path: Path, name: str, message: str):
    result = ebench(echo_plugin, tmp_path, "run", "--batch", "--solver", name, "--task", TASK)
    assert result.returncode == 2
    assert message in said(result) and len(said(result).splitlines()) == 1 and "Traceback" not in result.stderr


def test_a_plugin_refuses_options_it_cannot_use_like_a_builtin(echo_plugin: Path, tmp_path: Path):
    result = ebench(echo_plugin, tmp_path, "run", "--batch", "--solver", "echo", "--model", "m", "--task", TASK)
    assert (result.returncode, said(result)) == (2, "error: --solver echo takes no --model")


@pytest.fixture
def echo_in_process(echo_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The plug-in visible to this process's registry, and forgotten again afterwards."""
    monkeypatch.syspath_prepend(str(echo_plugin))
    SOLVERS.refresh()
    with pytest.warns(PluginWarning, match="the solver plug-in 'oracle' .* is ignored: 'oracle' is a built-in solver"):
        SOLVERS.names()  # the entry points read now: the plug-in's "oracle" is refused, with a warning
    yield
    monkeypatch.undo()
    sys.modules.pop("ebench_echo_solver", None)
    SOLVERS.refresh()


def test_a_watched_plugin_pauses_at_the_step_hook(echo_in_process: None, tmp_path: Path):
    solver = build_solver("echo", SolverOptions())
    [task] = load_suite(ids=[TASK]).tasks
    trial = Trial(task, solver=solver.config())
    gate = StepGate(paused=True)
    result: dict[str, object] = {}
    thread = threading.Thread(target=lambda: result.setdefault("summary", watch(trial, solver, TrialLimits(), gate)))
    thread.start()
    deadline = time.monotonic() + 15
    while not gate.waiting:
        assert time.monotonic() < deadline, "the plug-in never reached its step"
        time.sleep(0.01)
    assert trial.tool_calls == 0  # held before its one call
    gate.step()
    thread.join(15)
    assert result["summary"] is not None and trial.tool_calls == 1


def test_builtins_are_built_from_typed_options():
    assert isinstance(build_solver("oracle", SolverOptions()), OracleSolver)
    llm = build_solver("llm", SolverOptions(model="openai/gpt-4o-mini", model_args={"temperature": 0}, retries=2))
    assert llm.config()["model_args"] == {"temperature": 0} and llm.settings.retries == 2  # type: ignore[attr-defined]
    with pytest.raises(SolverOptionsError, match="--solver llm needs --model"):
        build_solver("llm", SolverOptions())
    with pytest.raises(SolverOptionsError, match="--model is for --solver llm, not noop"):
        build_solver("noop", SolverOptions(model="m"))
    with pytest.raises(SolverOptionsError, match="needs --replay-from"):
        build_solver("replay", SolverOptions())
    with pytest.raises(UnknownSolver, match="unknown solver 'psychic'; choose one of: llm, oracle, noop, replay"):
        build_solver("psychic", SolverOptions())


def test_bad_prices_file_is_an_options_error(tmp_path: Path):
    prices = tmp_path / "prices.json"
    prices.write_text('{"m": {"input": "cheap"}}')
    with pytest.raises(SolverOptionsError, match="expected"):
        build_solver("llm", SolverOptions(model="openai/gpt-4o-mini", prices=prices))


def test_options_are_one_checked_frozen_object():
    options = SolverOptions(model="m")
    with pytest.raises(ValidationError):
        options.model = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        SolverOptions(modle="m")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SolverOptions(retries=-1)


def test_listing_solvers_imports_no_solver():
    code = "import sys; from ebench.sessions.solvers.registry import builtin_solver_names; builtin_solver_names(); "
    code += "print(sorted(m for m in sys.modules if m.startswith(('ebench.sessions.solvers.', 'litellm', 'pydantic'))))"
    listed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert listed == "['ebench.sessions.solvers.registry']"


def test_a_plugin_never_replaces_a_builtin(echo_in_process: None):
    assert SOLVERS.names().count("oracle") == 1  # the plug-in declares an "oracle" too (echo_in_process: the warning)
    assert isinstance(build_solver("oracle", SolverOptions()), OracleSolver)
    assert build_solver("echo", SolverOptions(model_args={"voice": "soft"})).config() == {"name": "echo", "voice": "soft"}
