"""Solvers: who acts in a trial. Each has a name, a configuration (recorded, secrets redacted) and
`async solve(trial, limits) -> Outcome`.

- oracle: the task's reference solution (must pass every task);
- noop: does nothing (must pass none);
- replay: re-executes a recorded session's tool calls;
- llm: a model through litellm function calling (imported only when used).
"""

from .base import FatalSolverError, Outcome, Solver
from .simple import NoopSolver, OracleSolver, ReplaySolver

__all__ = ["FatalSolverError", "NoopSolver", "OracleSolver", "Outcome", "ReplaySolver", "Solver"]
