"""New wordings of existing tasks (`ebench tasks paraphrase`): a model rewords a task's request,
and the paraphrase is kept only when it passes the leak checks and the verifiers' k-of-n vote.

The expected diff, the reference solution, the actor and the world stay those of the original
task (certified, or voted on when it was synthesized); only the query changes. This breaks the
phrasing skeletons the templates share without touching any end state. Each rewording is one
recorded chat exchange (a session with no tool calls); each verifier solves the task from the new
wording in its own recorded trial (`run_verifier`, synthesize.py, as for synthesized drafts). A
verifier whose API failed is no vote against: the attempt is then `unverified` (`Tally`).
The model is asked through the model client (model_client.py; litellm only for what the lean client does not send).
"""

from __future__ import annotations

import asyncio
import json
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..engine.domain_registry import get_domain
from ..errors import InputError
from ..tasks.reference import leaks
from ..tasks.spec import Task
from ..tasks.synthesis import counts_stated
from ..tasks.template_api import query_key
from ..tasks.worlds import task_seed
from .events import InternalErrorEvent
from .model_client import LLMConfig
from .record import SessionWriter, secret_values
from .solvers.base import FatalSolverError, Outcome
from .solvers.llm import LLMSolver, failed_request
from .synthesize import (
    SESSIONS,
    LogLine,
    Spending,
    Tally,
    run_verifier,
    unroutable_model,
    verifier_configurations,
    verifier_notes,
    vote_problem,
)
from .terminations import Termination
from .trial import Trial, TrialLimits

PARAPHRASE_LOG = "paraphrase.jsonl"  # one line per attempt
QUOTES = "\"'`“”‘’«»"

PARAPHRASE_GUIDANCE = """You reword the requests users write to an assistant that acts through the product's tools.
Rewrite the request you are given in new words, as the same user might have written it on another day:
change the sentence structure and the order of the parts where the meaning allows, not only a word or two.
Keep every value it states exactly (names, titles, dates, times, passwords, numbers) and every condition,
exception and step; drop nothing and add nothing. Never add an id or a count of the rows the request affects.
Answer with the reworded request only: no quotes, no preamble, no comment."""


class ParaphraseError(InputError, ValueError):
    """A paraphrase run that cannot start (its output folder, its options); the message is one line."""


class ParaphraseRejection(StrEnum):
    """Why a paraphrase is not kept (counted per run); the verifiers' reasons come from `Tally`."""

    NO_REPLY = "no paraphrase"
    UNCHANGED = "unchanged wording"
    LEAKS_ID = "leaks an id"
    LEAKS_COUNT = "states a count"


@dataclass
class ParaphraseConfig:
    model: LLMConfig
    verifiers: list[LLMConfig]
    out: Path
    variants: int = 1  # paraphrase attempts per task
    concurrency: int = 1  # tasks being reworded at once (a task's variants go one after another)
    min_votes: int | None = None  # default: 2, or every verifier when there are fewer
    budget: float | None = None  # USD; no new attempt starts once this much is spent
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    verifier_limits: TrialLimits = field(default_factory=TrialLimits)

    @property
    def votes_needed(self) -> int:
        return self.min_votes if self.min_votes is not None else min(2, len(self.verifiers))


@dataclass
class AttemptRecord(LogLine):
    """One line of paraphrase.jsonl."""

    task: str
    variant: int
    outcome: str = "rejected"  # kept | rejected | unverified
    reason: str = ""
    detail: str = ""
    query: str | None = None
    paraphrase: str | None = None  # the kept task's id
    votes: str | None = None
    cost: float | None = 0.0
    sessions: list[str] = field(default_factory=list)


@dataclass
class ParaphraseSummary(Spending):
    out: str
    status: str = "finished"  # finished | budget
    attempts: int = 0
    kept: int = 0
    unverified: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    cost: float = 0.0
    cost_unknown: int = 0  # exchanges whose model litellm (and --prices) could not price
    tasks: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "status": self.status,
            "attempts": self.attempts,
            "kept": self.kept,
            "unverified": self.unverified,
            "rejected": dict(self.rejected.most_common()),
            "cost": round(self.cost, 6),
            "cost_unknown": self.cost_unknown,
            "tasks": self.tasks,
        }


def cleaned(reply: str | None) -> str:
    """The model's reply as a request: surrounding whitespace and quotes removed."""
    text = (reply or "").strip()
    while len(text) >= 2 and text[0] in QUOTES and text[-1] in QUOTES:
        text = text[1:-1].strip()
    return text


def paraphrase_id(task_id: str, variant: int) -> str:
    return f"{task_id}-p{variant}"


class Paraphraser(LLMSolver):
    """The model solver's request, retry and recording machinery, asked for one rewording."""

    name = "paraphraser"

    async def reword(self, trial: Trial, query: str, avoid: list[str]) -> tuple[str, Outcome]:
        """The reworded request ("" when the model gave none) and how the exchange ended."""
        system = f"{trial.domain.description}\n\n{PARAPHRASE_GUIDANCE}"
        user = query
        if avoid:  # a later variant: the model should not hand back an earlier wording
            user += "\n\nWord it differently from each of these:\n" + "\n".join(f"- {a}" for a in avoid)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        trial.message("system", system)
        trial.message("user", user)
        try:
            response = await self._complete(trial, messages, None)
        except FatalSolverError:
            raise
        except Exception as exc:
            return "", failed_request(exc)
        trial.turns += 1
        outcome, _ = self._take_turn(trial, response, messages, 0.0)
        reply = messages[-1].get("content") if messages[-1].get("role") == "assistant" else None
        return cleaned(reply if isinstance(reply, str) else None), outcome or Outcome(Termination.AGENT_STOPPED)


class Paraphrasing:
    """One `tasks paraphrase` run into `config.out`."""

    def __init__(self, config: ParaphraseConfig, on_attempt: Callable[[AttemptRecord, ParaphraseSummary], None] | None = None) -> None:
        if problem := vote_problem(len(config.verifiers), config.votes_needed):
            raise ParaphraseError(problem)
        # As in a synthesis: one verifier configuration (model, API base, sampling arguments) is one
        # vote, however often it is listed; a model agreeing with itself is not a second opinion.
        self.configurations = verifier_configurations(config.verifiers)
        distinct = len(set(self.configurations))
        if distinct < config.votes_needed:
            raise ParaphraseError(
                f"--min-votes {config.votes_needed}: the {len(config.verifiers)} --verifier-model listings are {distinct} distinct "
                "configuration(s), one vote each; list other models or state a sampling argument per listing "
                "(--verifier-model 'openai/gpt-4o-mini seed=2')"
            )
        if config.variants < 1:
            raise ParaphraseError(f"--variants {config.variants}: must be at least 1")
        self.config = config
        self.on_attempt = on_attempt
        self.paraphraser = Paraphraser(config.model, config.prices)
        self.verifiers = [LLMSolver(v, config.prices) for v in config.verifiers]
        if problem := unroutable_model([self.paraphraser, *self.verifiers]):
            raise ParaphraseError(problem)
        self.secrets = secret_values({"model": config.model.to_dict(), "verifiers": [v.to_dict() for v in config.verifiers]})
        self.summary = ParaphraseSummary(out=str(config.out))

    def prepare(self) -> None:
        out = self.config.out
        if out.exists() and not out.is_dir():
            raise ParaphraseError(f"--out {out} is a file, not a folder")
        if (out / PARAPHRASE_LOG).exists():
            raise ParaphraseError(f"--out {out} already holds a paraphrase run; use another folder")
        (out / SESSIONS).mkdir(parents=True, exist_ok=True)

    async def run(self, tasks: list[Task]) -> ParaphraseSummary:
        """`variants` attempts per task, `concurrency` tasks at once, until done or the budget is
        spent; each attempt's line is logged as it ends. A FatalSolverError (a rejected key, an
        unknown model) stops everything and propagates."""
        gate = asyncio.Semaphore(max(1, self.config.concurrency))
        with (self.config.out / PARAPHRASE_LOG).open("a", encoding="utf-8") as log:

            async def one(task: Task) -> None:
                async with gate:
                    tried: list[str] = []  # this task's wordings so far: a later variant must differ from each
                    for variant in range(1, self.config.variants + 1):
                        if self.config.budget is not None and self.summary.cost >= self.config.budget:
                            self.summary.status = "budget"
                            return
                        record = await self.attempt(task, variant, tried)
                        if record.query:
                            tried.append(record.query)
                        log.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
                        log.flush()
                        if self.on_attempt:
                            self.on_attempt(record, self.summary)

            jobs = [asyncio.create_task(one(task)) for task in tasks]
            try:
                await asyncio.gather(*jobs)
            finally:  # a fatal error (or ctrl+c) ends the others too
                for job in jobs:
                    job.cancel()
                await asyncio.gather(*jobs, return_exceptions=True)
        return self.summary

    async def attempt(self, task: Task, variant: int, tried: list[str]) -> AttemptRecord:
        """One rewording of `task`: the exchange, the checks, the verifiers' vote; its line of the log."""
        record = AttemptRecord(task.id, variant)
        self.summary.attempts += 1
        new_id = paraphrase_id(task.id, variant)
        name = f"{SESSIONS}/paraphrase-{new_id}.jsonl"
        record.sessions.append(name)
        trial = Trial(
            None,
            domain=get_domain(task.domain),
            actor=task.actor,
            world_seed=task_seed(task),  # the task's own world (the actor is one of its users)
            writer=SessionWriter(self.config.out / name, self.secrets),
            solver=self.paraphraser.config(),
            session_name=name,
        )
        try:
            query, outcome = await self.paraphraser.reword(trial, task.query, tried)
        except (asyncio.CancelledError, FatalSolverError, KeyboardInterrupt):
            trial.close()
            raise
        except Exception as exc:  # a harness fault: recorded, the attempt is lost, the run goes on
            trial.record(InternalErrorEvent(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()))
            query, outcome = "", Outcome(Termination.INFRA_ERROR, f"internal error: {exc}")
        exchanged = trial.finish(outcome.termination, outcome.error)
        self.summary.spend(record, exchanged.cost)
        if not query:
            return self._rejected(record, ParaphraseRejection.NO_REPLY, outcome.error or f"the exchange ended with {outcome.termination}")
        record.query = query
        earlier = [q for q in [task.query, *tried] if query_key(q) == query_key(query)]
        if earlier:
            return self._rejected(
                record, ParaphraseRejection.UNCHANGED, "the original" if earlier[0] == task.query else "an earlier variant"
            )
        paraphrased = task.model_copy(update={"id": new_id, "query": query, "source": "", "generator": self._generator_note(task)})
        # Only what the rewording added counts: the original's own wording was checked when it was made.
        before = set(leaks(task))
        if found := [f for f in leaks(paraphrased) if f not in before]:
            return self._rejected(record, ParaphraseRejection.LEAKS_ID, found[0])
        counted = set(counts_stated(task.query, task.expected_diff))
        if stated := [n for n in counts_stated(query, task.expected_diff) if n not in counted]:
            return self._rejected(record, ParaphraseRejection.LEAKS_COUNT, f"states {stated[0]}")
        return await self._verify(record, paraphrased)

    def _generator_note(self, task: Task) -> dict[str, Any]:
        """The original's record (a template's name and stated values still certify the task) with
        the paraphrase's; the original's own vote, for a synthesized task, kept under `original`."""
        note = dict(task.generator)
        clashing = {k: note.pop(k) for k in ("paraphrase_of", "model", "votes", "verifiers") if k in note}
        if clashing:
            note["original"] = clashing
        note.update({"paraphrase_of": task.id, "model": self.config.model.model})
        return note

    async def _verify(self, record: AttemptRecord, task: Task) -> AttemptRecord:
        names = [f"{SESSIONS}/verifier-{task.id}-{index}.jsonl" for index in range(1, len(self.verifiers) + 1)]
        record.sessions.extend(names)
        limits = self.config.verifier_limits
        votes = await asyncio.gather(
            *(run_verifier(task, solver, self.config.out, name, self.secrets, limits) for solver, name in zip(self.verifiers, names))
        )
        for summary in votes:
            self.summary.spend(record, summary.cost)
        tally = Tally.of(list(votes), self.config.votes_needed, self.configurations)
        record.votes = tally.votes
        task.generator["votes"] = tally.votes
        task.generator["verifiers"] = verifier_notes(self.verifiers, list(votes), self.configurations)
        if tally.verdict == "unverified":
            record.outcome, record.reason = "unverified", tally.reason
            self.summary.unverified += 1
            return record
        if tally.verdict == "rejected":
            return self._rejected(record, tally.reason)
        folder = self.config.out / task.domain
        folder.mkdir(exist_ok=True)
        (folder / f"{task.id}.json").write_text(task.to_json(), encoding="utf-8")
        self.summary.kept += 1
        self.summary.tasks.append(task.id)
        record.outcome, record.paraphrase = "kept", task.id
        return record

    def _rejected(self, record: AttemptRecord, reason: str, detail: str = "") -> AttemptRecord:
        record.outcome, record.reason, record.detail = "rejected", str(reason), detail
        self.summary.rejected[str(reason)] += 1
        return record
