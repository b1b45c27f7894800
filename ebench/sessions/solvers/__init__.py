"""Solvers: who acts in a trial. Each has a name, a configuration (recorded, secrets redacted) and
`async solve(trial, limits, *, step=None) -> Outcome`; `--solver NAME` finds one in the registry
(`registry.py`), which plug-ins add to through the "ebench.solvers" entry-point group.

- oracle: the task's reference solution (must pass every task);
- noop: does nothing (must pass none);
- replay: re-executes a recorded session's tool calls;
- llm: a model through litellm function calling (imported only when used).

The names below are imported on first use, so the command line can read the registry's names
without importing the solvers (and what they import).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import FatalSolverError, Outcome, Solver, SolverFactory, SolverOptions, SolverOptionsError, StepHook
    from .registry import UnknownSolver, build_solver, solver_names
    from .simple import NoopSolver, OracleSolver, ReplaySolver

_HOMES = {
    "FatalSolverError": ".base",
    "Outcome": ".base",
    "Solver": ".base",
    "SolverFactory": ".base",
    "SolverOptions": ".base",
    "SolverOptionsError": ".base",
    "StepHook": ".base",
    "UnknownSolver": ".registry",
    "build_solver": ".registry",
    "solver_names": ".registry",
    "NoopSolver": ".simple",
    "OracleSolver": ".simple",
    "ReplaySolver": ".simple",
}

__all__ = [
    "FatalSolverError",
    "NoopSolver",
    "OracleSolver",
    "Outcome",
    "ReplaySolver",
    "Solver",
    "SolverFactory",
    "SolverOptions",
    "SolverOptionsError",
    "StepHook",
    "UnknownSolver",
    "build_solver",
    "solver_names",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)
