"""The solver registry: `--solver NAME` names one of its entries.

An entry is a factory `(options: SolverOptions) -> Solver`. The built-in solvers are registered
here by dotted path, so a solver's module (litellm's, for the model solver) is imported only when
it is chosen. A package outside ebench adds a solver by declaring an entry point in the
"ebench.solvers" group that names its factory:

    [project.entry-points."ebench.solvers"]
    echo = "ebench_echo:EchoSolver.from_options"

This module imports nothing heavy: the command line lists its names in `ebench run --help`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...registry import PluginError, Registry, UnknownName

if TYPE_CHECKING:
    from .base import Solver, SolverFactory, SolverOptions

GROUP = "ebench.solvers"


class UnknownSolver(UnknownName):
    """A solver name no built-in or plug-in answers to."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__("solver", name, known)
        self.args = (f"unknown solver {name!r}; choose one of: {', '.join(known)}",)  # the wording ebench has always used


def _factory(value: object) -> SolverFactory:
    if not callable(value):
        raise PluginError(f"a solver entry point must name a factory (options: SolverOptions) -> Solver, got {type(value).__name__}")
    return value


SOLVERS: Registry[SolverFactory] = Registry("solver", GROUP, _factory, unknown=UnknownSolver)
SOLVERS.register("llm", "ebench.sessions.solvers.llm:LLMSolver.from_options")
SOLVERS.register("oracle", "ebench.sessions.solvers.simple:OracleSolver.from_options")
SOLVERS.register("noop", "ebench.sessions.solvers.simple:NoopSolver.from_options")
SOLVERS.register("replay", "ebench.sessions.solvers.simple:ReplaySolver.from_options")


def solver_names() -> list[str]:
    """The built-in solvers, then the plug-ins by name."""
    return SOLVERS.names()


def builtin_solver_names() -> list[str]:
    """The solvers ebench ships (listing them reads no entry point)."""
    return SOLVERS.builtin_names()


def build_solver(name: str, options: SolverOptions) -> Solver:
    """The solver `name` built from `options`. UnknownSolver for a name nobody answers to,
    SolverOptionsError for options it cannot be built from, PluginError for a broken plug-in;
    any other EBenchError a factory raises is its own one-line word, passed on."""
    from ...errors import EBenchError
    from .base import Solver

    factory = SOLVERS.get(name)
    try:
        solver = factory(options)
    except EBenchError:  # SolverOptionsError among them
        raise
    except Exception as exc:  # a plug-in's bug is reported in one line, never a traceback at the user
        raise PluginError(f"the solver {name!r} cannot be built: {type(exc).__name__}: {exc}") from exc
    if not isinstance(solver, Solver):
        raise PluginError(f"the solver {name!r} factory gave a {type(solver).__name__}, not a solver (name, config(), solve())")
    return solver
