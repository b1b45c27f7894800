"""Fixed solving programs learned from the shipped suite, the way a model could memorise it
(issue 30): one program per template (a structure of the suite). A program recognises its
template's requests by their phrasing skeletons (a regular expression per skeleton, the values
as groups), reads the stated values back out of the text (as the suite's own tasks taught it:
which group holds which value, written how), and runs the template's public solver with them.

It is as strong as memorising gets without a model: on the suite's own structures it solves what
the templates solve. What it cannot do is meet a structure it has not seen."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ebench.engine.domain_registry import get_domain
from ebench.tasks.certify import run_public
from ebench.tasks.grading import grade
from ebench.tasks.spec import Task
from ebench.tasks.template_api import Template, templates_for
from ebench.tasks.template_helpers import pretty_day
from ebench.tasks.worlds import task_world

_FIELD = re.compile(r"\{(\w+)\}")


def skeleton_regex(phrasing: str) -> re.Pattern[str]:
    """The phrasing as a regular expression: its text literally, each `{field}` a group (a field
    written twice must read the same both times)."""
    out, seen, last = [], set(), 0
    for match in _FIELD.finditer(phrasing):
        out.append(re.escape(phrasing[last : match.start()]))
        name = match.group(1)
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
        last = match.end()
    out.append(re.escape(phrasing[last:]))
    return re.compile("^" + "".join(out) + "$", re.S)


def _iso_day(text: str) -> str:
    return datetime.strptime(text, "%B %d, %Y").strftime("%Y-%m-%d")


def _weekday_day(value: str) -> str:
    return f"{datetime.strptime(value, '%Y-%m-%d'):%A}, {pretty_day(value)}"


def _iso_from_weekday(text: str) -> str:
    return _iso_day(text.split(", ", 1)[1])


def _mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def _seconds(text: str) -> int:
    minutes, seconds = text.split(":")
    return int(minutes) * 60 + int(seconds)


@dataclass(frozen=True)
class Writing:
    """How a request writes a stated value, and how to read it back."""

    name: str
    write: Callable[[Any], str]
    read: Callable[[str, Any], Any]  # (text, an example value of the key) -> value


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WRITINGS = (
    Writing("as is", str, lambda text, example: type(example)(text) if isinstance(example, (int, float)) else text),
    Writing("day", lambda v: pretty_day(v) if isinstance(v, str) and _ISO.match(v) else None, lambda text, _: _iso_day(text)),
    Writing(
        "weekday and day", lambda v: _weekday_day(v) if isinstance(v, str) and _ISO.match(v) else None, lambda t, _: _iso_from_weekday(t)
    ),
    Writing("mm:ss", lambda v: _mmss(v) if isinstance(v, int) and not isinstance(v, bool) else None, lambda text, _: _seconds(text)),
)


@dataclass
class Program:
    """One template's program: per phrasing skeleton, which group holds each stated value and how
    it is written (learned from the suite's tasks of that template)."""

    template: Template
    regexes: list[re.Pattern[str]]
    learned: dict[int, dict[str, tuple[str, Writing, Any]]] = field(default_factory=dict)  # phrasing -> key -> (group, writing, example)

    def learn(self, task: Task) -> None:
        stated = task.generator.get("stated") or {}
        for index, regex in enumerate(self.regexes):
            match = regex.match(task.query)
            if match is None or index in self.learned:
                continue
            groups = match.groupdict()
            found: dict[str, tuple[str, Writing, Any]] = {}
            for key, value in stated.items():
                for group, text in groups.items():
                    writing = next((w for w in WRITINGS if _writes(w, value, text)), None)
                    if writing is not None:
                        found[key] = (group, writing, value)
                        break
            if len(found) == len(stated):  # every stated value was read back: the skeleton is learned
                self.learned[index] = found

    def read(self, query: str) -> dict[str, Any] | None:
        """The stated values of a request this program recognises, or None."""
        for index, keys in self.learned.items():
            match = self.regexes[index].match(query)
            if match is None:
                continue
            try:
                return {key: writing.read(match.group(group), example) for key, (group, writing, example) in keys.items()}
            except (ValueError, IndexError):
                continue
        return None


def _writes(writing: Writing, value: Any, text: str) -> bool:
    try:
        return writing.write(value) == text
    except (TypeError, ValueError):
        return False


def learn_programs(domain_name: str, suite: list[Task]) -> list[Program]:
    """One program per template of the domain, taught by the suite's tasks of that template."""
    programs = {t.name: Program(t, [skeleton_regex(p) for p in t.phrasings]) for t in templates_for(domain_name)}
    for task in suite:
        program = programs.get(str(task.generator.get("template")))
        if task.domain == domain_name and program is not None:
            program.learn(task)
    return [p for p in programs.values() if p.learned]


def solved_by_a_program(task: Task, programs: list[Program]) -> bool:
    """Whether a program recognises the request and its public solver, given the values it read,
    reaches the task's expected changes."""
    schema = get_domain(task.domain).schema
    world = task_world(task)
    for program in programs:
        stated = program.read(task.query)
        if stated is None:
            continue
        try:
            run = run_public(program.template, task.domain, world, task.actor, stated)
        except Exception:  # a program that meets what it does not know fails, whatever way it does
            continue
        if grade(task.expected_diff, run.diff, schema).passed:
            return True
    return False
