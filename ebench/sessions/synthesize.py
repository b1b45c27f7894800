"""Tasks written by a model (`ebench tasks synthesize`): the generator's recorded loop, the draft
checks, and the verifiers' k-of-n vote.

Each draft is one recorded generator trial on a private copy of the world, as a sampled user and
aimed at a requested capability. The generator has the public tools, `exec_code`, `query_sql`
(read-only SQL over the whole copy, answered here and recorded as a `privileged_call` note, so the
replay debugger steps through the session like any other) and `submit_task`, which ends its loop.
A message's calls run in the order sent; calls after `submit_task` in the same message are not run
(each is recorded as a `refused_call` note, and the draft's log line names them). A turn without a
tool call before `submit_task` is answered once with a reminder (NUDGE); a second in a row ends the
draft without a task. Its successful write calls and the copy's diff make the draft; `vet_draft`
(tasks/synthesis.py) rejects it with a counted reason or returns the task, labelled with the
capabilities it shows.

The task is then solved by each verifier model in an independent, recorded trial, by default with
the generator's tool set (`query_sql` and `exec_code` besides the public tools; `--verifier-tools
public`: the public tools only), graded against the draft's diff. Votes are counted per distinct
verifier configuration (model, API base and sampling arguments, `verifier_configurations`): the
same model listed twice is one opinion, so it is one vote, decided by the majority of its trials.
At least `min_votes` passing configurations accept the draft; a synthesis whose distinct
configurations cannot reach `min_votes` is refused at the start (`--allow-same-verifier`: it runs,
with the quorum lowered to the distinct configurations, and says so).

A model whose API failed for good (after its retries) is no verdict on the draft: a generator's or
the weak model's failure logs the draft as `infra_error` or `unverified`, a verifier's is no vote
against (when the failures are what keeps a draft below `min_votes` it is `unverified`), and none
is counted as a rejection; INFRA_STOP drafts in a row lost to the generator's API stop the run. A
rejected key or an unknown model stops it at once (FatalSolverError). Capabilities are handed out
to drafts by what is still missing from the requested mix, so the accepted tasks keep it. litellm
is imported only when a model runs (solvers/llm.py).

A synthesis resumes: its settings are kept in `synthesis.json`, and a run into a folder that
holds one continues from `synthesis.jsonl` (the drafts done, whatever their outcome), with the same
numbering, seeded users and capability choices an uninterrupted run would have had; a draft in
flight when it stopped is redone. `estimate` prices a plan without any model call (`--dry-run`).

A synthesis replays (`SynthesisConfig.replaying`, `ebench tasks synthesize-replay`): its drafts run
again, one at a time, each with its recorded user and capability, every model request answered
from the recorded sessions (solvers/recorded.py) instead of an API; the same calls on the same
worlds give the same tasks, and `replay_differences` names any draft or task that came out otherwise.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine.domain_registry import get_domain
from ..engine.tools import ErrorCode, ToolKind
from ..engine.world import open_world_readonly
from ..errors import InputError
from ..tasks.generation import SeenTasks
from ..tasks.spec import CAPABILITIES, CAPABILITY_TITLES, Step, Task, TaskFileError, load_task
from ..tasks.synthesis import DraftRejected, Rejection, SynthesisDraft, is_seen, query_sql, vet_draft
from .events import InternalErrorEvent
from .model_client import LLMConfig, model_prices, sendable_json
from .record import SessionWriter, drop_torn_line, secret_values
from .results import TrialSummary
from .solvers.base import FatalSolverError, Outcome
from .solvers.llm import LLMSolver, failed_request
from .solvers.recorded import RecordedResponses
from .terminations import Termination
from .trial import Trial, TrialLimits, current_world, open_trial

SYNTHESIS_LOG = "synthesis.jsonl"  # one line per draft
SYNTHESIS_SETTINGS = "synthesis.json"  # what a resumed run must match
SESSIONS = "sessions"
GENERATOR_LIMITS = TrialLimits(max_turns=40, max_tool_calls=100)
VERIFIER_TOOLS = ("public", "privileged")
DRAFTS_PER_TASK = 4  # default --max-drafts: count x this
INFRA_STOP = 3  # drafts in a row lost to the generator's API: the API is down, the run stops
# The model arguments that make two listings of one model different samplers, hence two opinions;
# any other argument (a timeout, a token limit, a key) leaves them one configuration.
SAMPLING_ARGS = ("seed", "temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "reasoning_effort")

QUERY_SQL_TOOL = {
    "type": "function",
    "function": {
        "name": "query_sql",
        "description": "Run one read-only SQL statement (SQLite) over the whole database; returns columns and rows (at most 200).",
        "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
    },
}
SUBMIT_TOOL = {
    "type": "function",
    "function": {
        "name": "submit_task",
        "description": "Hand in the task once your changes are made: the user's request, and a one-line summary of what it checks.",
        "parameters": {
            "type": "object",
            "properties": {"request": {"type": "string"}, "summary": {"type": "string"}},
            "required": ["request"],
        },
    },
}

GENERATOR_GUIDANCE = """You write one task for a benchmark of assistants that act through the product's tools.
You play the user {label} (id {actor}); the task must exercise: {capability}.

Work in this order:
1. Inspect the data with query_sql (read-only SQL over the whole database) and the read tools.
2. Decide a target: a change this user could ask for that needs {capability_lower}, changing at least three rows.
3. Make the change yourself with the product's public tools, as this user would (one call at a time, or
   exec_code: Python in which every public tool is a function).
4. Call submit_task with the user's request and a one-line summary of what it checks. Make every change
   before it: submit_task ends the draft, and calls after it in the same message are not run.

Every reply of yours should call a tool until you submit: a reply without a tool call gets one reminder,
and a second in a row ends the draft without a task.

Phrase the request as the user would write it: values the user knows or chooses (names, titles, dates, passwords)
stay explicit; values the database decides are replaced by the rule that finds them ("each friend who is online",
not their names or how many). Never state an id or a count of the rows the task changes."""


NUDGE = (
    "You have not called submit_task, so there is no task yet. Call submit_task with the user's request and a "
    "summary, or go on with the tools. Another reply without a tool call ends this draft without a task."
)
AFTER_SUBMIT = "Not run: submit_task ended the draft before this call. Make every change before calling submit_task."


class SynthesisError(InputError, ValueError):
    """A synthesis that cannot start (its output folder, its options); the message is one line."""


@dataclass
class SynthesisConfig:
    domain: str
    generator: LLMConfig
    verifiers: list[LLMConfig]
    count: int
    out: Path
    seed: int = 0
    concurrency: int = 1
    min_votes: int | None = None  # default: 2, or every verifier when there are fewer
    budget: float | None = None  # USD; no new draft starts once this much is spent
    max_drafts: int | None = None  # default: count x DRAFTS_PER_TASK
    capabilities: list[str] = field(default_factory=lambda: list(CAPABILITIES))
    actors: list[int] | None = None  # sample users from these only (default: every actor of the world)
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    verifier_tools: str = "privileged"  # as in the paper: the generator's tool set (query_sql, exec_code); "public": the stricter test
    weak: LLMConfig | None = None  # a weak model: a draft it passes (public tools) is too easy, rejected
    world_seed: int | None = None  # the world the drafts are made on (default: the domain's)
    generator_limits: TrialLimits = field(default_factory=lambda: GENERATOR_LIMITS)
    verifier_limits: TrialLimits = field(default_factory=TrialLimits)
    replay: Path | None = None  # a synthesis folder whose recorded answers stand in for the models
    allow_same_verifier: bool = False  # run when the distinct configurations cannot reach min_votes (the quorum is lowered)
    configurations: list[int] | None = None  # each verifier's configuration, as recorded (a replay); default: `verifier_configurations`
    verifier_code: bool | None = None  # privileged verifiers get exec_code (default); False: a replay of a synthesis from before

    @classmethod
    def replaying(cls, source: Path, out: Path) -> SynthesisConfig:
        """The config that replays the synthesis in `source` into `out`: its settings, its drafts
        (all of them, one at a time), every model answer taken from its sessions."""
        settings_path = source / SYNTHESIS_SETTINGS
        try:
            settings = json.loads(settings_path.read_text(encoding="utf-8"))
            records = read_log(source / SYNTHESIS_LOG)
        except FileNotFoundError as exc:
            raise SynthesisError(f"{source}: not a synthesis folder (no {Path(exc.filename).name})") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SynthesisError(f"{settings_path}: unreadable: {exc}") from None
        try:
            verifiers = [LLMConfig(model) for model in settings["verifier_models"]]
            earlier = legacy_settings(len(verifiers))  # a synthesis made before these were kept
            return cls(
                domain=settings["domain"],
                generator=LLMConfig(settings["generator_model"]),
                verifiers=verifiers,
                count=max(1, sum(r.outcome == "accepted" for r in records)),
                out=out,
                seed=settings["seed"],
                min_votes=settings["min_votes"],
                max_drafts=max(1, len(records)),
                capabilities=settings["capabilities"],
                actors=settings["actors"],
                verifier_tools=settings["verifier_tools"],
                weak=LLMConfig(settings["weak_model"]) if settings.get("weak_model") else None,
                world_seed=settings.get("world_seed"),
                replay=source,
                # the vote as recorded: the models alone no longer tell the configurations apart, and
                # the start was checked when the synthesis was made
                configurations=list(settings.get("verifier_configurations", earlier["verifier_configurations"])),
                verifier_code=bool(settings.get("verifier_code", earlier["verifier_code"])),
                allow_same_verifier=True,
            )
        except (KeyError, TypeError) as exc:
            raise SynthesisError(f"{settings_path}: not a synthesis's settings ({type(exc).__name__}: {exc})") from None

    @property
    def votes_needed(self) -> int:
        """--min-votes as asked (default 2, or every verifier listed when fewer)."""
        return self.min_votes if self.min_votes is not None else min(2, len(self.verifiers))

    @property
    def verifier_configurations(self) -> list[int]:
        return self.configurations if self.configurations is not None else verifier_configurations(self.verifiers)

    @property
    def distinct_verifiers(self) -> int:
        return len(set(self.verifier_configurations))

    @property
    def quorum(self) -> int:
        """The passing configurations a draft needs: --min-votes, lowered to the distinct
        configurations only with --allow-same-verifier (the start is refused otherwise)."""
        return min(self.votes_needed, self.distinct_verifiers) if self.allow_same_verifier else self.votes_needed

    @property
    def verifiers_get_code(self) -> bool:
        return self.verifier_tools == "privileged" and self.verifier_code is not False

    @property
    def verifier_tool_set(self) -> list[str]:
        """What a verifier is offered besides the task: the public tools, and the generator's privileged ones."""
        privileged = ["query_sql", *(["exec_code"] if self.verifiers_get_code else [])] if self.verifier_tools == "privileged" else []
        return ["public", *privileged]

    @property
    def draft_limit(self) -> int:
        """--max-drafts, counted over every run into the folder."""
        return self.max_drafts if self.max_drafts is not None else self.count * DRAFTS_PER_TASK

    def settings(self) -> dict[str, Any]:
        """What decides the drafts and their verdicts: a resumed run must have the same. (--count,
        --max-drafts, --budget and --concurrency may change between runs.)"""
        return {
            "domain": self.domain,
            "generator_model": self.generator.model,
            "verifier_models": [v.model for v in self.verifiers],
            "min_votes": self.votes_needed,
            "seed": self.seed,
            "world_seed": self.world_seed,
            "verifier_tools": self.verifier_tools,
            "weak_model": self.weak.model if self.weak else None,
            "capabilities": list(self.capabilities),
            "actors": self.actors,
            "verifier_configurations": self.verifier_configurations,
            "verifier_code": self.verifiers_get_code,
        }


def legacy_settings(verifiers: int) -> dict[str, Any]:
    """What a settings file written before a key was kept meant by its absence: every verifier its
    own vote, and no exec_code for the verifiers."""
    return {"verifier_configurations": list(range(1, verifiers + 1)), "verifier_code": False}


def verifier_configurations(verifiers: list[LLMConfig]) -> list[int]:
    """Each verifier's configuration, numbered from 1 in the order first listed: listings with the
    same model, API base and sampling arguments (SAMPLING_ARGS) are one configuration, one vote."""
    numbers: dict[str, int] = {}
    out = []
    for verifier in verifiers:
        sampling = {k: verifier.model_args[k] for k in SAMPLING_ARGS if k in verifier.model_args}
        key = json.dumps([verifier.model, (verifier.api_base or "").rstrip("/"), sampling], sort_keys=True, default=str)
        out.append(numbers.setdefault(key, len(numbers) + 1))
    return out


class LogLine:
    """What a line of a model job's log (synthesis.jsonl, paraphrase.jsonl) shares: a cost (each
    line's dataclass declares it, in its own place) and how it is written."""

    cost: float | None  # USD; None once one of its exchanges could not be priced

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None and v != ""}


class Spending:
    """What a model job has spent so far: its summary's cost figures (each summary's dataclass
    declares them) and how an exchange's cost is counted."""

    cost: float
    cost_unknown: int  # exchanges whose model litellm (and --prices) could not price

    def spend(self, line: LogLine, cost: float | None) -> None:
        """Add one exchange's cost to the job and to its log line (an unpriced one makes the line's unknown)."""
        if cost is None:
            line.cost = None
            self.cost_unknown += 1
        else:
            self.cost += cost
            if line.cost is not None:
                line.cost = round(line.cost + cost, 8)


@dataclass
class DraftRecord(LogLine):
    """One line of synthesis.jsonl."""

    draft: int
    actor: int
    capability: str
    outcome: str = "rejected"  # accepted | rejected | unverified | infra_error (a model's API failed) | surplus
    reason: str = ""
    detail: str = ""
    task: str | None = None
    query: str | None = None
    votes: str | None = None  # "k/n": passing configurations of the distinct ones
    cost: float | None = 0.0
    sessions: list[str] = field(default_factory=list)
    refused_after_submit: list[str] | None = None  # the generator's calls after submit_task, not run

    @classmethod
    def of(cls, line: dict[str, Any]) -> DraftRecord:
        """A line read back; `to_dict` leaves out an unknown cost, so a line without one had one."""
        known = {k: v for k, v in line.items() if k in cls.__dataclass_fields__}
        return cls(**{**known, "cost": line.get("cost")})


def read_log(path: Path) -> list[DraftRecord]:
    """The drafts of a synthesis log (a torn last line, of a draft cut short, left out)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()
    records = []
    for number, line in enumerate(lines, 1):
        try:
            records.append(DraftRecord.of(json.loads(line)))
        except (json.JSONDecodeError, TypeError, AttributeError) as exc:
            raise SynthesisError(f"{path}: line {number} is unreadable ({exc}); use another folder") from None
    return records


def replay_differences(source: Path, out: Path, domain: str) -> list[str]:
    """Where a replay in `out` ended otherwise than the synthesis it replayed: a draft's log line or
    a task file that is not the same (one line each; none when the replay is faithful)."""
    differences = []
    was = {r.draft: r.to_dict() for r in read_log(source / SYNTHESIS_LOG)}
    now = {r.draft: r.to_dict() for r in read_log(out / SYNTHESIS_LOG)} if (out / SYNTHESIS_LOG).exists() else {}
    for number in sorted(set(was) | set(now)):
        before, after = was.get(number), now.get(number)
        if before != after:
            keys = sorted(k for k in set(before or {}) | set(after or {}) if (before or {}).get(k) != (after or {}).get(k))
            differences.append(
                f"draft {number}: {', '.join(keys)} differ" if before and after else f"draft {number}: only in {source if before else out}"
            )
    tasks_before = {p.name: p.read_bytes() for p in (source / domain).glob("*.json")}
    tasks_after = {p.name: p.read_bytes() for p in (out / domain).glob("*.json")}
    for name in sorted(set(tasks_before) | set(tasks_after)):
        if tasks_before.get(name) != tasks_after.get(name):
            differences.append(f"task {name}: {'differs' if name in tasks_before and name in tasks_after else 'only in one folder'}")
    return differences


@dataclass
class SynthesisSummary(Spending):
    out: str
    status: str = "finished"  # finished | budget | drafts (ran out of --max-drafts) | api (INFRA_STOP drafts in a row lost to it)
    drafts: int = 0
    accepted: int = 0
    unverified: int = 0
    infra_errors: int = 0  # drafts whose generator's API failed: neither rejected nor kept
    surplus: int = 0  # verified after --count were accepted by drafts running alongside: not written
    rejected: Counter[str] = field(default_factory=Counter)
    accepted_by_capability: Counter[str] = field(default_factory=Counter)
    cost: float = 0.0
    cost_unknown: int = 0  # trials whose model litellm (and --prices) could not price
    tasks: list[str] = field(default_factory=list)
    resumed: int = 0  # drafts done by earlier runs into the folder (counted in the figures above)
    verifiers: int = 0  # --verifier-model listings
    distinct_verifiers: int = 0  # their distinct configurations: the votes there are
    votes_needed: int = 0  # the quorum
    verifier_tools: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "status": self.status,
            "drafts": self.drafts,
            "accepted": self.accepted,
            "unverified": self.unverified,
            "infra_errors": self.infra_errors,
            "surplus": self.surplus,
            "rejected": dict(self.rejected.most_common()),
            "accepted_by_capability": dict(sorted(self.accepted_by_capability.items())),
            "cost": round(self.cost, 6),
            "cost_unknown": self.cost_unknown,
            "tasks": self.tasks,
            "resumed": self.resumed,
            "verifiers": self.verifiers,
            "distinct_verifiers": self.distinct_verifiers,
            "votes_needed": self.votes_needed,
            "verifier_tools": self.verifier_tools,
        }


@dataclass
class GeneratorResult:
    request: str | None  # None: the generator stopped without submitting
    summary: str
    steps: list[Step]
    results: list[Any]
    outcome: Outcome
    refused: list[str] = field(default_factory=list)  # tools called after submit_task in its message: not run


class GeneratorSolver(LLMSolver):
    """The model solver's request, retry and recording machinery, with the generator's tools."""

    name = "generator"

    async def generate(self, trial: Trial, limits: TrialLimits, capability: str) -> GeneratorResult:
        domain = trial.domain
        label = domain.actor_label(trial.conn, trial.actor)
        system = f"{domain.description}\n\nThe current time is {domain.now}.\n\n" + GENERATOR_GUIDANCE.format(
            label=label, actor=trial.actor, capability=CAPABILITY_TITLES[capability], capability_lower=CAPABILITY_TITLES[capability].lower()
        )
        user = f"Write one task for {label} that exercises {CAPABILITY_TITLES[capability].lower()}."
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        trial.message("system", system)
        trial.message("user", user)
        from .sandbox.schema import code_mode_tools

        # The paper's generator has code too: exec_code runs Python with the public tools as functions.
        tools = [*code_mode_tools(domain.tools), QUERY_SQL_TOOL, SUBMIT_TOOL]
        steps: list[Step] = []
        results: list[Any] = []
        encoded = self.conversation()  # the messages encoded once each (lean client)

        def result(outcome: Outcome) -> GeneratorResult:  # ended without a draft
            return GeneratorResult(None, "", steps, results, outcome)

        privileged = 0  # query_sql and submit_task calls: notes, not trial calls, but calls all the same
        reminded = False  # the last turn without a tool call got NUDGE: a second in a row ends the draft
        # As for a solver, the time limit counts the generator's wall time less its waits on the API.
        deadline = time.perf_counter() + limits.timeout
        while True:
            if trial.turns >= limits.max_turns:
                return result(Outcome(Termination.MAX_TURNS))
            if deadline - time.perf_counter() <= 0:
                return result(Outcome(Termination.TIME_LIMIT))
            asked = time.perf_counter()
            try:
                response = await self._complete(trial, messages, tools, encoded)
            except FatalSolverError:
                raise
            except Exception as exc:
                return result(failed_request(exc))
            finally:
                deadline += time.perf_counter() - asked
            trial.turns += 1
            outcome, calls = self._take_turn(trial, response, messages, time.perf_counter() - asked)
            if outcome is not None and outcome.termination == Termination.AGENT_STOPPED and not reminded:
                # Real models often say what they will do next ("let me submit now") instead of doing
                # it: one reminder, rather than a draft lost to a habit.
                reminded = True
                messages.append({"role": "user", "content": NUDGE})
                trial.message("user", NUDGE)
                continue
            if outcome is not None:
                return result(outcome)  # stopped without submit_task: no draft
            reminded = False
            submitted: GeneratorResult | None = None
            sent = messages[-1].get("tool_calls") or []
            for call, sent_call in zip(calls, sent):  # in the order sent, as a solver's
                name, arguments = call["function"]["name"], call["function"]["arguments"]
                args = _parsed(arguments)
                if submitted is not None:
                    # Visible, not dropped: the session and the draft's log line name each call not run.
                    payload: Any = {"error": {"code": str(ErrorCode.CONFLICT), "message": AFTER_SUBMIT}}
                    trial.note("refused_call", tool=name, args=args, result=payload, turn=trial.turns)
                    submitted.refused.append(name)
                elif trial.tool_calls + privileged >= limits.max_tool_calls:
                    return result(Outcome(Termination.MAX_TOOL_CALLS))
                else:
                    privileged += name in ("query_sql", "submit_task")
                    payload, submitted = await self._generator_call(trial, call, args, steps, results)
                messages.append(
                    {"role": "tool", "tool_call_id": sent_call["id"], "content": sendable_json(json.dumps(payload, ensure_ascii=False))}
                )
            if submitted is not None:
                return submitted

    async def _generator_call(
        self, trial: Trial, call: dict[str, Any], args: dict[str, Any], steps: list[Step], results: list[Any]
    ) -> tuple[Any, GeneratorResult | None]:
        """One call of the generator's: what is sent back, and the draft when it was a valid
        submit_task. A successful write (a public tool's, or one inside exec_code) is a reference step."""
        domain = trial.domain
        name, arguments = call["function"]["name"], call["function"]["arguments"]
        if name == "submit_task":
            request = args.get("request")
            if isinstance(request, str) and request.strip():
                summary = args.get("summary")
                summary = summary if isinstance(summary, str) else ""
                trial.note("privileged_call", tool=name, args=args, turn=trial.turns)
                made = GeneratorResult(request.strip(), summary, steps, results, Outcome(Termination.AGENT_STOPPED))
                return {"ok": True}, made
            payload: Any = {"error": {"code": str(ErrorCode.INVALID_ARGUMENTS), "message": "submit_task needs 'request' (a string)."}}
            trial.note("privileged_call", tool=name, args=args, result=payload, turn=trial.turns)
            return payload, None
        if name == "query_sql":
            return answer_query_sql(trial, args), None
        if name == "exec_code":
            code = args.get("code") if isinstance(args.get("code"), str) else None
            block = await asyncio.to_thread(trial.exec_code, code, call_id=call["id"], turn=trial.turns)
            for child in trial.history:  # the block's write calls are reference steps, in order
                wrote = child.parent == call["id"] and child.ok and child.tool in domain.tools
                if wrote and domain.tools.get(str(child.tool)).kind == ToolKind.WRITE and isinstance(child.args, dict):
                    steps.append(Step(str(child.tool), dict(child.args)))
                    results.append(child.result)
            return block.for_solver(), None
        done = trial.call(name, arguments, call_id=call["id"], turn=trial.turns)
        if done.ok and domain.tools.get(name).kind == ToolKind.WRITE:
            steps.append(Step(name, args))
            results.append(done.value)
        return done.for_solver(), None


class PrivilegedVerifier(LLMSolver):
    """A verifier that also has `query_sql` (`--verifier-tools privileged`): a weaker test of the
    request, since the data no longer has to be found through the public tools."""

    name = "llm-privileged"

    def local_tools(self, trial: Trial) -> list[dict[str, Any]]:
        return [QUERY_SQL_TOOL]

    def local_call(self, trial: Trial, name: str, arguments: Any) -> Any:
        return answer_query_sql(trial, _parsed(arguments))


def answer_query_sql(trial: Trial, args: dict[str, Any]) -> Any:
    """Run query_sql on the trial's copy and record it as a `privileged_call` note, not a tool_call:
    replay re-executes tool calls through the domain's public registry, which has no query_sql."""
    with trial.lock:
        payload = query_sql(trial.conn, args.get("sql"))
    trial.note("privileged_call", tool="query_sql", args=args, result=payload, turn=trial.turns)
    return payload


def _parsed(arguments: Any) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


@dataclass
class Tally:
    """The verifiers' k-of-n vote on a task: passed (at least `need` solved it), rejected, or
    unverified (a verifier whose API failed is no vote against: when the failures are what keeps
    the task below `need`, it is neither kept nor counted against).

    With `configurations` (each trial's verifier configuration), n is the distinct configurations:
    one listed several times casts one vote, a pass when most of its trials pass, unknown when its
    failed requests could have made that majority."""

    verdict: str  # passed | rejected | unverified
    votes: str  # "k/n"
    reason: str = ""

    @classmethod
    def of(cls, votes: list[TrialSummary], need: int, configurations: list[int] | None = None) -> Tally:
        groups: dict[int, list[TrialSummary]] = {}
        for index, summary in enumerate(votes):
            groups.setdefault(configurations[index] if configurations else index, []).append(summary)
        passed = failed_api = 0
        for trials in groups.values():
            passes, api = sum(s.passed for s in trials), sum(s.infra_error for s in trials)
            if 2 * passes > len(trials):
                passed += 1
            elif 2 * (passes + api) > len(trials):
                failed_api += 1
        counted = f"{passed}/{len(groups)}"
        if passed >= need:
            return cls("passed", counted)
        if passed + failed_api >= need:
            return cls("unverified", counted, f"verifier API failures ({failed_api} of {len(groups)})")
        return cls("rejected", counted, f"verifiers disagree ({counted})")


def verifier_notes(solvers: list[LLMSolver], votes: list[TrialSummary], configurations: list[int] | None = None) -> list[dict[str, Any]]:
    """Each verifier's vote as the task's `generator` record keeps it (with its configuration's number when given)."""
    return [
        {
            "model": solver.settings.model,
            "passed": s.passed,
            "termination": str(s.termination),
            "cost": s.cost,
            "session": s.session,
            **({"configuration": configurations[index]} if configurations else {}),
        }
        for index, (solver, s) in enumerate(zip(solvers, votes))
    ]


async def run_verifier(
    task: Task, solver: LLMSolver, out: Path, name: str, secrets: list[str], limits: TrialLimits, *, code: bool = False
) -> TrialSummary:
    """One verifier's recorded trial of `task` into `out/name`, graded against its expected diff
    (`code`: with exec_code, in code mode)."""
    trial = open_trial(task, out / name, secrets=secrets, solver=solver.config(), session_name=name, code=code)
    try:
        outcome = await solver.solve(trial, limits.for_task(task))
    except (asyncio.CancelledError, FatalSolverError, KeyboardInterrupt):
        trial.close()
        raise
    except Exception as exc:  # a harness fault is no vote against the task
        trial.record(InternalErrorEvent(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()))
        return trial.finish(Termination.INFRA_ERROR, f"internal error: {type(exc).__name__}: {exc}")
    return trial.finish(outcome.termination, outcome.error)


def vote_problem(verifiers: int, votes_needed: int) -> str | None:
    """What is wrong with a model job's k-of-n vote (synthesize, paraphrase), in one line, or None."""
    if not verifiers:
        return "give at least one --verifier-model"
    if not 1 <= votes_needed <= verifiers:
        return f"--min-votes {votes_needed}: must be between 1 and the number of verifiers ({verifiers})"
    return None


def same_verifier_problem(config: SynthesisConfig) -> str | None:
    """Listings of one verifier configuration that leave the vote short (one line), or None."""
    listed, distinct, need = len(config.verifiers), config.distinct_verifiers, config.votes_needed
    if distinct >= need:
        return None
    return (
        f"--min-votes {need}: the {listed} --verifier-model listings are {distinct} distinct configuration(s), and one "
        "configuration (model, API base, sampling arguments) is one vote; list other models, state a sampling "
        "argument per listing (--verifier-model 'openai/gpt-4o-mini seed=2'), lower --min-votes, or give --allow-same-verifier"
    )


def unroutable_model(solvers: list[LLMSolver]) -> str | None:
    """The first model string litellm cannot route, as one line: checked before any exchange."""
    for solver in solvers:
        try:
            solver.check()
        except FatalSolverError as exc:
            return str(exc)
    return None


class Synthesis:
    """One `tasks synthesize` run into `config.out`."""

    def __init__(self, config: SynthesisConfig, on_draft: Callable[[DraftRecord, SynthesisSummary], None] | None = None) -> None:
        if problem := vote_problem(len(config.verifiers), config.votes_needed):
            raise SynthesisError(problem)
        if len(config.verifier_configurations) != len(config.verifiers):
            raise SynthesisError(f"{len(config.verifier_configurations)} verifier configurations for {len(config.verifiers)} verifiers")
        self.warnings: list[str] = []  # for the command to show before the run
        same = same_verifier_problem(config)
        if same and not config.allow_same_verifier:
            raise SynthesisError(same)
        if same:
            self.warnings.append(
                f"--allow-same-verifier: {len(config.verifiers)} verifier listings are {config.distinct_verifiers} distinct "
                f"configuration(s), so a draft needs {config.quorum} passing configuration(s), not {config.votes_needed}"
            )
        elif config.distinct_verifiers < len(config.verifiers):
            self.warnings.append(
                f"{len(config.verifiers)} verifier listings are {config.distinct_verifiers} distinct configurations: "
                "a configuration listed more than once is one vote (the majority of its trials)"
            )
        unknown = [c for c in config.capabilities if c not in CAPABILITIES]
        if unknown or not config.capabilities:
            raise SynthesisError(f"unknown capability {unknown[0]!r}" if unknown else "no capability to aim at")
        self.config = config
        self.domain = get_domain(config.domain)
        self.on_draft = on_draft
        self.generator = GeneratorSolver(config.generator, config.prices)
        if config.verifier_tools not in VERIFIER_TOOLS:
            raise SynthesisError(f"--verifier-tools {config.verifier_tools!r}: expected {' or '.join(VERIFIER_TOOLS)}")
        verifier_class = PrivilegedVerifier if config.verifier_tools == "privileged" else LLMSolver
        self.verifiers = [verifier_class(v, config.prices) for v in config.verifiers]
        self.weak = LLMSolver(config.weak, config.prices) if config.weak is not None else None
        self.recorded_drafts: dict[int, DraftRecord] = {}  # replaying: the drafts as they ended
        recorded = None
        if config.replay is not None:
            recorded = RecordedResponses(config.replay)
            self.recorded_drafts = {r.draft: r for r in read_log(config.replay / SYNTHESIS_LOG)}
        solvers = [self.generator, *self.verifiers, *([self.weak] if self.weak else [])]
        for solver in solvers:
            solver.recorded = recorded
        if problem := unroutable_model(solvers):
            raise SynthesisError(problem)
        self.secrets = secret_values({"generator": config.generator.to_dict(), "verifiers": [v.to_dict() for v in config.verifiers]})
        self.summary = SynthesisSummary(
            out=str(config.out),
            verifiers=len(config.verifiers),
            distinct_verifiers=config.distinct_verifiers,
            votes_needed=config.quorum,
            verifier_tools=config.verifier_tool_set,
        )
        self.infra_in_a_row = 0  # drafts just finished whose generator's API failed
        self.seen = SeenTasks()
        self.in_flight: Counter[str] = Counter()
        self.done: set[int] = set()  # draft numbers logged (or started by this run)
        world_actors = self._world_actors()
        self.actors = config.actors or world_actors
        unknown_actors = sorted(set(self.actors) - set(world_actors))
        if unknown_actors:
            raise SynthesisError(f"--actor {unknown_actors[0]}: no {self.domain.actor_noun} with this id in the {self.domain.name} world")

    def _world_actors(self) -> list[int]:
        table = self.domain.schema.table(self.domain.actor_table)
        conn = open_world_readonly(current_world(self.domain, self.config.world_seed)[0])
        try:
            return [row[0] for row in conn.execute(f"SELECT {table.key[0]} FROM {table.name} ORDER BY {table.key[0]}")]
        finally:
            conn.close()

    # -- the output folder -----------------------------------------------------------------
    def load(self, *, repair: bool = False) -> None:
        """Take over what earlier runs into `--out` did: the settings must match, the logged
        drafts count, the accepted tasks are seen; SynthesisError otherwise. Only with `repair`
        is anything written: a torn last log line and a task file no line names are removed."""
        out = self.config.out
        if out.exists() and not out.is_dir():
            raise SynthesisError(f"--out {out} is a file, not a folder")
        from ..tasks.suite import SUITE_DIR, load_suite

        for task in load_suite(SUITE_DIR, domain=self.domain.name).tasks:  # a draft may not repeat a shipped task
            self.seen.add(task, self.domain.schema)
        settings_path = out / SYNTHESIS_SETTINGS
        if not settings_path.exists():
            if (out / SYNTHESIS_LOG).exists() or any((out / self.domain.name).glob("*.json")):
                raise SynthesisError(f"--out {out} already holds tasks but no {SYNTHESIS_SETTINGS} to resume from; use another folder")
            return
        try:
            recorded = json.loads(settings_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SynthesisError(f"{settings_path}: unreadable: {exc}") from None
        wanted = self.config.settings()
        if isinstance(recorded, dict):  # a key kept only since: its absence meant what it says
            recorded = {**legacy_settings(len(recorded.get("verifier_models") or [])), **recorded}
        differ = [key for key in wanted if not isinstance(recorded, dict) or recorded.get(key) != wanted[key]]
        if differ:
            was = recorded.get(differ[0]) if isinstance(recorded, dict) else None
            # verifier_code follows no option: only an earlier ebench's folder differs in it
            fix = "use another folder" if differ[0] == "verifier_code" else "give the same options to resume, or use another folder"
            raise SynthesisError(
                f"--out {out} holds a synthesis made with other settings ({differ[0]} {was!r}, now {wanted[differ[0]]!r}); {fix}"
            )
        self._take_over(out / SYNTHESIS_LOG, repair)

    def _take_over(self, log_path: Path, repair: bool) -> None:
        if not log_path.exists():
            return
        if repair:
            drop_torn_line(log_path)
        accepted: set[str] = set()
        for record in read_log(log_path):  # the line of a draft cut short by a kill is left out: that draft is redone
            self.done.add(record.draft)
            self._count(record)
            if record.outcome == "accepted" and record.task:
                path = self.config.out / self.domain.name / f"{record.task}.json"
                try:
                    task = load_task(path)
                except TaskFileError as exc:
                    raise SynthesisError(f"{exc}; {log_path} lists it as accepted") from None
                self.seen.add(task, self.domain.schema)
                accepted.add(path.name)
        if repair:
            # A task written just before its draft's line (the run was killed between the two):
            # the draft is redone, and its task must not stay behind as one no line names.
            for path in (self.config.out / self.domain.name).glob(f"{self.domain.name}-s*.json"):
                if path.name not in accepted:
                    path.unlink()
        self.summary.resumed = len(self.done)

    def _count(self, record: DraftRecord) -> None:
        """A logged draft's share of the summary."""
        summary = self.summary
        summary.drafts += 1
        if record.cost is None:
            summary.cost_unknown += 1  # the log does not say how many of its trials were unpriced: one
        else:
            summary.cost += record.cost
        if record.outcome == "accepted" and record.task:
            summary.accepted += 1
            summary.accepted_by_capability[record.capability] += 1
            summary.tasks.append(record.task)
        elif record.outcome == "unverified":
            summary.unverified += 1
        elif record.outcome == "infra_error":
            summary.infra_errors += 1
        elif record.outcome == "surplus":
            summary.surplus += 1
        else:
            summary.rejected[record.reason] += 1

    def prepare(self) -> None:
        """`load` with repair, then the folders and the settings file of a new synthesis."""
        self.load(repair=True)
        out = self.config.out
        (out / self.domain.name).mkdir(parents=True, exist_ok=True)
        (out / SESSIONS).mkdir(exist_ok=True)
        settings_path = out / SYNTHESIS_SETTINGS
        if not settings_path.exists():
            settings_path.write_text(json.dumps(self.config.settings(), indent=2) + "\n", encoding="utf-8")

    # -- the plan and its price, without a model call ---------------------------------------
    def capability_mix(self) -> Counter[str]:
        """The accepted tasks' capabilities once --count are accepted (earlier runs' included)."""
        have = Counter(self.summary.accepted_by_capability)
        for _ in range(max(0, self.config.count - self.summary.accepted)):
            have[min(self.config.capabilities, key=lambda c: have[c])] += 1
        return have

    def estimate(self, turns: int, tokens_in: int, tokens_out: int) -> dict[str, Any]:
        """The plan of the drafts still to run, priced at most: every draft left runs and reaches
        the weak model (with --weak-model) and every verifier, each trial `turns` turns of `tokens_in` prompt and `tokens_out` completion
        tokens. A model neither --prices nor litellm's local price map knows is "unknown"."""
        cfg = self.config
        drafts = max(0, cfg.draft_limit - len(self.done)) if self.summary.accepted < cfg.count else 0
        roles = [
            ("generator", cfg.generator.model),
            *([("weak", cfg.weak.model)] if cfg.weak else []),  # it sees every draft that passes the checks, as the verifiers do
            *(("verifier", v.model) for v in cfg.verifiers),
        ]
        models: list[dict[str, Any]] = []
        total: float | None = 0.0
        for role, model in roles:
            price = self._price(model)
            cost = None if price is None else drafts * turns * (tokens_in * price[0] + tokens_out * price[1]) / 1e6
            models.append({"role": role, "model": model, "trials": drafts, "usd_per_million": price, "cost": cost})
            total = None if total is None or cost is None else total + cost
        return {
            "out": str(cfg.out),
            "domain": self.domain.name,
            "count": cfg.count,
            "drafts": drafts,
            "max_drafts": cfg.draft_limit,
            "done": self.summary.to_dict() if self.done else None,
            "capabilities": dict(sorted(self.capability_mix().items())),
            "users": len(self.actors),
            "verifiers": len(cfg.verifiers),
            "distinct_verifiers": cfg.distinct_verifiers,
            "votes_needed": cfg.quorum,
            "verifier_tools": cfg.verifier_tool_set,
            "assumptions": {"turns_per_trial": turns, "prompt_tokens_per_turn": tokens_in, "completion_tokens_per_turn": tokens_out},
            "models": [{**m, "cost": "unknown" if m["cost"] is None else round(m["cost"], 4)} for m in models],
            "cost": "unknown" if total is None else round(total, 4),
            "cost_priced": round(sum(m["cost"] for m in models if m["cost"] is not None), 4),  # the models with a price
        }

    def _price(self, model: str) -> tuple[float, float] | None:
        """USD per million (prompt, completion) tokens: --prices, else litellm's local map."""
        given = self.config.prices.get(model)
        if given:
            return given["input"], given["output"]
        return model_prices(model)  # an openai/ model's read without importing litellm

    # -- the loop --------------------------------------------------------------------------
    def plan(self, number: int) -> tuple[int, str]:
        """The draft's user (seeded by --seed and the draft's number) and the capability the mix
        most lacks (accepted and in-flight drafts counted; ties in the given order)."""
        if number in self.recorded_drafts:  # replaying: as the recorded draft was (its capability came from the mix then)
            return self.recorded_drafts[number].actor, self.recorded_drafts[number].capability
        rng = random.Random(f"{self.config.seed}-{number}")
        actor = rng.choice(self.actors)
        have = self.summary.accepted_by_capability + self.in_flight
        capability = min(self.config.capabilities, key=lambda c: have[c])  # min keeps the first of equals
        return actor, capability

    def _next_number(self) -> int:
        """The lowest draft number not done: a draft in flight when an earlier run stopped first."""
        number = 1
        while number in self.done:
            number += 1
        self.done.add(number)
        return number

    def _may_start(self, started: int) -> bool:
        cfg = self.config
        if cfg.replay is not None:  # every recorded draft, whatever was accepted
            return started < cfg.draft_limit
        if cfg.budget is not None and self.summary.cost >= cfg.budget:
            self.summary.status = "budget"
            return False
        if self.infra_in_a_row >= INFRA_STOP:
            self.summary.status = "api"
            return False
        # Drafts in flight do not count: most drafts are rejected, so --concurrency keeps that many
        # going until enough are accepted (one finished beyond that is logged as surplus).
        if self.summary.accepted >= cfg.count:
            return False
        if started >= cfg.draft_limit:
            if self.summary.accepted < cfg.count:
                self.summary.status = "drafts"
            return False
        return True

    async def run(self) -> SynthesisSummary:
        """Drafts until `count` are accepted, the budget is spent or --max-drafts have run; a
        FatalSolverError (a rejected key, an unknown model) stops everything and propagates."""
        log_path = self.config.out / SYNTHESIS_LOG
        started = len(self.done)
        running: set[asyncio.Task[None]] = set()
        with log_path.open("a", encoding="utf-8") as log:

            async def one(number: int, actor: int, capability: str) -> None:
                try:
                    record = await self.draft(number, actor, capability)
                finally:
                    self.in_flight[capability] -= 1
                log.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
                log.flush()
                self.infra_in_a_row = self.infra_in_a_row + 1 if record.outcome == "infra_error" else 0
                if self.on_draft:
                    self.on_draft(record, self.summary)

            try:
                while True:
                    while len(running) < max(1, self.config.concurrency) and self._may_start(started):
                        started += 1
                        number = self._next_number()
                        actor, capability = self.plan(number)
                        self.in_flight[capability] += 1
                        job = asyncio.create_task(one(number, actor, capability))
                        running.add(job)
                    if not running:
                        break
                    done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    for job in done:
                        running.discard(job)
                        job.result()  # a fatal error stops the run here
            finally:
                for job in running:
                    job.cancel()
                await asyncio.gather(*running, return_exceptions=True)
        if self.summary.accepted >= self.config.count:
            self.summary.status = "finished"
        return self.summary

    async def draft(self, number: int, actor: int, capability: str) -> DraftRecord:
        """One draft: the generator's trial, the checks, the verifiers' vote; its line of the log."""
        record = DraftRecord(number, actor, capability)
        self.summary.drafts += 1
        name = f"{SESSIONS}/generator-{number:04d}.jsonl"
        record.sessions.append(name)
        for stale in (self.config.out / SESSIONS).glob(f"verifier-{number:04d}-*.jsonl"):
            stale.unlink()  # of this draft's run cut short: it may not reach its verifiers this time
        trial = Trial(
            None,
            domain=self.domain,
            actor=actor,
            code=True,  # the generator may run exec_code
            world_seed=self.config.world_seed,
            writer=SessionWriter(self.config.out / name, self.secrets),
            solver=self.generator.config(),
            session_name=name,
        )
        try:
            made = await self.generator.generate(trial, self.config.generator_limits, capability)
        except (asyncio.CancelledError, FatalSolverError, KeyboardInterrupt):
            trial.close()
            raise
        except Exception as exc:  # a harness fault: recorded, the draft is lost, the run goes on
            trial.record(InternalErrorEvent(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()))
            made = GeneratorResult(None, "", [], [], Outcome(Termination.INFRA_ERROR, f"internal error: {exc}"))
        generated = trial.finish(made.outcome.termination, made.outcome.error)
        self.summary.spend(record, generated.cost)
        generator_note = {"model": self.config.generator.model, "cost": generated.cost, "session": name}
        if made.refused:
            record.refused_after_submit = list(made.refused)
        if made.request is None and made.outcome.termination == Termination.INFRA_ERROR:
            # the API's (or the harness's) failure, not the model's: no verdict on a draft, as a solver's infra error is no score
            record.outcome, record.reason, record.detail = "infra_error", "the generator's API failed", made.outcome.error or ""
            self.summary.infra_errors += 1
            return record
        if made.request is None:
            return self._rejected(record, "no task submitted", f"the generator ended with {made.outcome.termination}")
        record.query = made.request
        assert trial.final_diff is not None
        draft = SynthesisDraft(
            self.domain.name,
            actor,
            made.request,
            capability,
            made.steps,
            made.results,
            trial.final_diff,
            self.domain.default_seed if self.config.world_seed is None else self.config.world_seed,
            {
                "draft": number,
                "capability": capability,
                "summary": made.summary,
                "generator": generator_note,
                **({"refused_after_submit": list(made.refused)} if made.refused else {}),
            },
        )
        provisional = f"{self.domain.name}-draft{number:04d}"
        try:
            # in a thread: the checks replay the calls on fresh copies while other drafts talk to their models
            task = await asyncio.to_thread(vet_draft, draft, self.seen, task_id=provisional)
        except DraftRejected as exc:
            detail = exc.detail
            if made.refused:  # the likeliest cause of a draft short of its changes: say so
                detail = "; ".join(filter(None, [detail, f"{len(made.refused)} call(s) after submit_task not run"]))
            return self._rejected(record, str(exc.reason), detail)
        return await self._verify(record, task)

    async def _verify(self, record: DraftRecord, task: Task) -> DraftRecord:
        if self.weak is not None:  # the weak-baseline filter, before the verifiers' cost
            name = f"{SESSIONS}/weak-{record.draft:04d}.jsonl"
            record.sessions.append(name)
            weak = await run_verifier(task, self.weak, self.config.out, name, self.secrets, self.config.verifier_limits)
            self.summary.spend(record, weak.cost)
            task.generator["weak_model"] = {"model": self.weak.settings.model, "passed": weak.passed, "session": name}
            if weak.infra_error:  # its API failed: the filter did not run, so the draft is neither too easy nor through it
                record.outcome, record.reason, record.detail = "unverified", "the weak model's API failed", weak.error or ""
                self.summary.unverified += 1
                return record
            if weak.passed:
                return self._rejected(record, str(Rejection.WEAK_MODEL), self.weak.settings.model)
        votes = await asyncio.gather(*(self._vote(record, task, index, solver) for index, solver in enumerate(self.verifiers, 1)))
        for summary in votes:
            self.summary.spend(record, summary.cost)
        configurations = self.config.verifier_configurations
        tally = Tally.of(votes, self.config.quorum, configurations)
        record.votes = tally.votes
        task.generator["verifiers"] = verifier_notes(self.verifiers, votes, configurations)
        task.generator["votes"] = record.votes
        task.generator["distinct_verifiers"] = self.config.distinct_verifiers
        task.generator["verifier_tools"] = self.config.verifier_tools
        task.generator["verifier_tool_set"] = self.config.verifier_tool_set
        if tally.verdict == "unverified":
            record.outcome, record.reason = "unverified", tally.reason
            self.summary.unverified += 1
            return record
        if tally.verdict == "rejected":
            return self._rejected(record, tally.reason)
        # Checked again: a draft that ran alongside may have been accepted with the same request,
        # diff or solution meanwhile (the check and the add below have no await between them).
        if is_seen(task, self.seen, self.domain.schema):
            return self._rejected(record, str(Rejection.DUPLICATE))
        recorded = self.recorded_drafts.get(record.draft)
        if recorded.outcome == "surplus" if recorded else self.summary.accepted >= self.config.count:
            record.outcome, record.reason = "surplus", "enough tasks were accepted meanwhile"
            self.summary.surplus += 1
            return record
        self.summary.accepted += 1
        # replaying, a task keeps its recorded id (drafts that ran at once were accepted in their finishing order)
        task.id = recorded.task if recorded and recorded.task else f"{self.domain.name}-s{self.summary.accepted:04d}"
        self.seen.add(task, self.domain.schema)
        (self.config.out / self.domain.name / f"{task.id}.json").write_text(task.to_json(), encoding="utf-8")
        self.summary.accepted_by_capability[record.capability] += 1
        self.summary.tasks.append(task.id)
        record.outcome, record.task = "accepted", task.id
        return record

    async def _vote(self, record: DraftRecord, task: Task, index: int, solver: LLMSolver) -> TrialSummary:
        name = f"{SESSIONS}/verifier-{record.draft:04d}-{index}.jsonl"
        record.sessions.append(name)
        limits = self.config.verifier_limits
        return await run_verifier(task, solver, self.config.out, name, self.secrets, limits, code=self.config.verifiers_get_code)

    def _rejected(self, record: DraftRecord, reason: str, detail: str = "") -> DraftRecord:
        record.outcome, record.reason, record.detail = "rejected", reason, detail
        self.summary.rejected[reason] += 1
        return record
