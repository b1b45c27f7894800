"""Scripted agents that behave like real models, for measuring a suite's false negatives.

A benchmark must fail sloppy work and pass every correct way of working. These agents are
responders for the local OpenAI-compatible server (fake_openai.py): each plays a task's correct
plan through the real litellm client and the model solver, with the habits real models have,
or a sloppy plan that must fail. `tests/test_realistic_agents.py` runs them over every shipped
task and scenario; run them against your own tasks the same way:

    from ebench.testing.agents import CAREFUL, realistic_agent
    with FakeOpenAI(realistic_agent(tasks, CAREFUL["chatty"])) as server: ...

Habits (`Habits`), each a thing real assistants do that a fair grader must accept:

- `chatty`: a sentence of text before its tool calls;
- `parallel`: every call whose inputs it has, at once (each level of the dependency graph);
- `malformed`: its first tool call of a conversation is cut off (invalid JSON); it sends the
  call again once the harness says so;
- `polite`: every text answer ends with "Anything else I can help you with?";
- `extra_reads`: harmless reads first (every read tool that needs no argument);
- `reordered`: independent writes in another order (careful.reordered_writes);
- `filtered`: the tools' own filters and sort for the stated conditions (the template's
  FILTERED plan, certify.run_public).

Sloppy plans (`Sloppy`), each of which must fail: stopping one write short, reading only the first
page of every listing (where the task needs more, even with the tools' own filters).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..tasks.careful import reordered_writes, with_reads_first, write_refused
from ..tasks.certify import first_page_plan, run_public
from ..tasks.paths import write_tools
from ..tasks.public import CORRECT, FILTERED, FIRST_PAGE, PLAIN, Lazy
from ..tasks.reference import run_steps
from ..tasks.scenarios import Scenario
from ..tasks.shortcuts import without_last_write
from ..tasks.spec import Step, Task
from ..tasks.template_catalog import template_named
from ..tasks.worlds import task_world
from .fake_openai import ReferencePlayer, Reply, completion

POLITE_CLOSE = "Anything else I can help you with?"
CHATTER = "Let me look that up first."
BROKEN_ARGUMENTS = '{"page": 1, "quer'  # a tool call cut off mid-way, as a model's output can be


@dataclass(frozen=True)
class Habits:
    chatty: bool = False
    parallel: bool = False
    malformed: bool = False
    polite: bool = False
    extra_reads: bool = False
    reordered: bool = False
    filtered: bool = False


@dataclass(frozen=True)
class Sloppy:
    """A plan that must fail: the reference without its last write (stopping a step short), or
    the template's public solver reading only the first page of every listing."""

    last_write_dropped: bool = False
    first_page: bool = False


# The careful agents the tests run over every shipped task (and scenario): every habit is in one.
CAREFUL = {
    "chatty": Habits(chatty=True, parallel=True, malformed=True, polite=True),
    "extra-reads": Habits(extra_reads=True, reordered=True, parallel=True, polite=True),
    "filtered": Habits(filtered=True, chatty=True, parallel=True),
}
SLOPPY = {
    "stops-short": Sloppy(last_write_dropped=True),
    "first-page": Sloppy(first_page=True),
}


def careful_plan(task: Task, habits: Habits) -> list[Step]:
    """The steps a careful agent with `habits` takes for `task` (a plain task, not a scenario)."""
    steps = list(task.reference_solution)
    if habits.filtered:
        steps = _public_plan(task, filtered=True) or steps
    if habits.reordered:
        steps = _accepted_reorder(task, steps)
    if habits.extra_reads:
        steps = with_reads_first(task.domain, steps)
    return steps


def _accepted_reorder(task: Task, steps: list[Step]) -> list[Step]:
    """The steps with independent writes reordered, where the product accepts that order (a
    message cannot be sent to a chat already left: such writes depend on each other, and a careful
    agent keeps their order)."""
    writes = write_tools(task.domain)
    reordered = reordered_writes(steps, writes)
    if reordered is None:
        return steps
    run = run_steps(task.domain, task.actor, reordered, world=task_world(task), tolerant=True)
    return steps if write_refused(run.results, reordered, writes) else reordered


def sloppy_plan(task: Task, sloppy: Sloppy) -> list[Step] | None:
    """The steps of a sloppy plan for `task`; None where it does not apply (first page only, on a
    task that does not claim complete data acquisition, or has no template)."""
    if sloppy.first_page:
        if "complete_data_acquisition" not in task.capabilities:
            return None
        return _public_plan(task, first_page=True)
    if sloppy.last_write_dropped:
        return without_last_write(task.domain, task.reference_solution)
    return list(task.reference_solution)


def _public_plan(task: Task, *, filtered: bool = False, first_page: bool = False) -> list[Step] | None:
    """The calls of the task's template's public solver (the filtered plan, or the lazy one that
    reads page 1 only, on the filtered plan where it has one), or None for a task without one."""
    template = template_named(task.domain, str(task.generator.get("template", "")))
    stated = task.generator.get("stated")
    if template is None or not isinstance(stated, dict):
        return None
    world = task_world(task)
    if first_page:
        narrowed = run_public(template, task.domain, world, task.actor, stated).narrowed
        plan = first_page_plan(narrowed)
        return run_public(template, task.domain, world, task.actor, stated, Lazy(FIRST_PAGE), plan=plan).steps
    run = run_public(template, task.domain, world, task.actor, stated, CORRECT, plan=FILTERED if filtered else PLAIN)
    return run.steps if run.gave_up is None else None


def _with_plan(task: Task, plan: Iterable[Step]) -> Task:
    return task.model_copy(update={"reference_solution": list(plan)})


def _scenario_with(task: Task, planner: Any) -> Task:
    """A scenario task whose every turn's tasks follow `planner(task)`."""
    scenario: Scenario = copy.copy(task.scenario)
    turns = []
    for turn in scenario.turns:
        turns.append(turn.model_copy(update={"tasks": [_with_plan(t, planner(t)) for t in turn.tasks]}))
    scenario.turns = turns
    return scenario.as_task()


class RealisticAgent:
    """A responder: `ReferencePlayer` over each task's plan, with the conversational habits added
    (text before calls, a broken first call, a polite close)."""

    def __init__(self, tasks: Iterable[Task], habits: Habits = Habits(), *, plans: dict[str, list[Step]] | None = None) -> None:
        self.habits = habits
        played = []
        for task in tasks:
            if task.scenario is not None:
                played.append(_scenario_with(task, lambda t: careful_plan(t, habits)))
            else:
                played.append(_with_plan(task, plans[task.id] if plans and task.id in plans else careful_plan(task, habits)))
        self.player = ReferencePlayer(played, optimal=habits.parallel)
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        broken = self._broken_exchange(messages)
        if broken:  # the model's retry: it answers as if the broken call had not happened
            body = {**body, "messages": [m for i, m in enumerate(messages) if i not in broken]}
        reply = self.player(body)
        message = reply.body["choices"][0]["message"] if reply.status == 200 and isinstance(reply.body, dict) else None
        if message is None:
            return reply
        calls = message.get("tool_calls") or []
        if calls and self.habits.malformed and not broken and not any(m.get("role") == "tool" for m in messages):
            first = calls[0]["function"]
            return completion(CHATTER, [(first["name"], BROKEN_ARGUMENTS)])
        if calls:
            if self.habits.chatty:
                message["content"] = CHATTER
            return reply
        if self.habits.polite and isinstance(message.get("content"), str) and not message["content"].rstrip().endswith("?"):
            message["content"] = f"{message['content'].rstrip()} {POLITE_CLOSE}"
        return reply

    @staticmethod
    def _broken_exchange(messages: list[dict[str, Any]]) -> set[int]:
        """The positions of the broken call and the harness's answer to it, if the conversation
        holds them."""
        for index, message in enumerate(messages):
            calls = message.get("tool_calls") or [] if message.get("role") == "assistant" else []
            if any(c.get("function", {}).get("arguments") == BROKEN_ARGUMENTS for c in calls):
                ids = {c.get("id") for c in calls}
                answers = {i for i, m in enumerate(messages) if m.get("role") == "tool" and m.get("tool_call_id") in ids}
                return {index, *answers}
        return set()


def realistic_agent(tasks: Iterable[Task], habits: Habits) -> RealisticAgent:
    """A careful agent with `habits` over `tasks` (plain tasks and scenario tasks alike)."""
    return RealisticAgent(tasks, habits)


def sloppy_agent(tasks: Iterable[Task], sloppy: Sloppy) -> tuple[RealisticAgent, list[Task]]:
    """A sloppy agent over the tasks its plan applies to, and those tasks."""
    plans: dict[str, list[Step]] = {}
    chosen: list[Task] = []
    for task in tasks:
        plan = sloppy_plan(task, sloppy)
        if plan is not None:
            plans[task.id] = plan
            chosen.append(task)
    return RealisticAgent(chosen, Habits(parallel=True), plans=plans), chosen


__all__ = [
    "CAREFUL",
    "POLITE_CLOSE",
    "SLOPPY",
    "Habits",
    "RealisticAgent",
    "Sloppy",
    "careful_plan",
    "realistic_agent",
    "sloppy_agent",
    "sloppy_plan",
]
