"""A solver plug-in: it says the task's request back, then makes the reference solution's first call.

All ebench needs is the factory its entry point names: `(options: SolverOptions) -> Solver`.
"""

from __future__ import annotations

from typing import Any

from ebench.api import Outcome, SolverOptions, SolverOptionsError, StepHook, Termination, Trial, TrialLimits


class EchoSolver:
    name = "echo"

    def __init__(self, voice: str) -> None:
        self.voice = voice

    @classmethod
    def from_options(cls, options: SolverOptions) -> EchoSolver:
        if options.model:
            raise SolverOptionsError("--solver echo takes no --model")
        return cls(str(options.model_args.get("voice", "plain")))

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "voice": self.voice}

    async def solve(self, trial: Trial, limits: TrialLimits, *, step: StepHook | None = None) -> Outcome:
        assert trial.task is not None
        trial.message("assistant", f"{self.voice}: {trial.task.query}")
        first = trial.task.reference_solution[0]
        if step is not None:  # one call, one step: a watched echo pauses before it
            await step()
        trial.call(first.tool, first.args)
        return Outcome(Termination.AGENT_STOPPED)


# The broken entry points.
NOT_A_FACTORY = 42


def not_a_solver(options: SolverOptions) -> object:
    return "a string"


def crashing_factory(options: SolverOptions) -> EchoSolver:
    raise KeyError("voice")
