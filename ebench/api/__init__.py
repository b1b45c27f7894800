"""The public API of ebench: everything a plug-in domain, a solver, a task template, an adapter
(Inspect AI, an RL environment) or a script needs, in one module.

    from ebench.api import Column, Domain, Schema, Table, ToolEnv, ToolRegistry

The contract
------------
Stable: the names in `__all__`, with the signatures and meanings their own docstrings give, and
the record formats by their version (docs/records.md). Changing one of them is changing this
contract: it is done on purpose, together with the README's "Adding a domain" and "Adding a
solver", docs/extending.md and the plug-ins of tests/plugins/, which import from this module
only (tests/test_api.py holds them to it, and this module to `mypy --strict`).

Private, by convention: every other module of ebench (`ebench.engine.*`,
`ebench.tasks.*`, `ebench.sessions.*`, ...), whatever its names look like. Modules move; this
module's table moves with them, so an import from here keeps working. Of a `Trial`, a solver
relies on what `TrialView` declares; its other attributes are ebench's own.

Cheap to import: each name is imported from its home the first time it is asked for (PEP 562),
so `import ebench.api` loads nothing but this file, and `from ebench.api import Domain` loads the
engine only. A plug-in domain's package therefore loads no task or session code until its
templates are asked for, and nothing here loads textual, litellm or mcp.

What is here
------------
- A domain: `Domain` (with `package_source_files`, `package_description`); its schema (`Schema`,
  `Table`, `Column`, `INTEGER`, `TEXT`, `REAL`, `SearchIndex`); its generators (`FillContext`,
  `Row`, `Generator`; dates with `DAY_FMT`, `TS_FMT`, `clock`, `ts`, `between`, `recent`); its
  repair rules (`Check`, `NotBefore`, `NotAfterNow`, `Aggregate`, `Rule`); its tools
  (`ToolRegistry`, `ToolEnv`, `ToolError`, `ToolResult`, `ErrorCode`, `ToolKind`, `not_found`,
  `paginate`, `PAGE_SIZE`, `Where`, `NamedWhere`, `require`, `check_date`, `check_date_range`,
  `check_text`, `bool_columns`); its world (`ensure_world`, `scratch_copy`).
- A task template: `Template`, `Draft`, `GenContext`, `NoTarget`, `Step`, `Condition`,
  `Reading`, `PublicAPI`, `WRITTEN`, `OpenTerm`, and the helpers `ref`, `pretty_day`,
  `days_ago`, `bounded`, `no_tie_at`.
- Tasks and their grading: `Task`, `CAPABILITIES`, `load_task`, `load_tasks`, `load_suite`,
  `find_task`, `Diff`, `RowChange`, `Grade`, `WrongValue`, `grade`.
- A trial and a solver: `open_trial`, `Trial`, `TrialView` (a solver's side of it: `request`,
  `tool_schemas()`, `call()`, `exec_code()`, `message()`, `grade()`...), `TrialLimits`,
  `Termination`, `Solver`, `SolverFactory`, `SolverOptions`, `Outcome`, `StepHook`.
- Sessions and runs: `TrialSummary`, `SessionEvent`, `StartEvent`, `MessageEvent`,
  `ToolCallEvent`, `TurnEndEvent`, `EndEvent`, `event_from`, `Session`, `read_session`,
  `new_session_file`, `trial_session_file`, `RunManifest`, `RunData`, `load_run`, `load_runs`;
  the typed parts of those records: `SolverInfo`, `ClientInfo`, `PerturbationRecord`,
  `ScenarioTurnResult`, `RunConfig`, `RunLimits`, `TaskSelection`, `UserRecord`, `TaskSet`,
  `SuiteRecord`, `RegradeNote` (each a `JsonObject`: known keys typed, other keys kept); a
  scenario file, `Scenario` and `Turn`.
- The registries: `DOMAINS`, `get_domain`, `domain_names`, `builtin_domain_names`; `SOLVERS`,
  `build_solver`, `solver_names`.
- What an adapter needs (an eval harness, an RL environment, a dataset exporter): the task sets
  (`SPLITS`, `shipped_splits`, `suite_version`, `tasks_root`, `TASK_FIELDS`, `TASK_FORMAT`,
  `parse_task`,
  `compose`, `task_world`), grades as recorded (`GradeRecord`, the old name of `Grade`; `diff_from_list`), the model client
  and solver (`LLMConfig`, `LLMSolver`, `UserSettings`, `system_prompt`, `secret_values`), and run
  directories (`sessions_dir`, `config_hash`, `MANIFEST`, `RESULTS`, `RUN_FORMAT`, `SESSIONS`,
  `write_json_atomic`).
- Errors: `EBenchError` (every error a user may see; `exit_code`), `InputError`,
  `EnvironmentFailure`, `PluginError`, `PluginWarning`, `UnknownName`, `UnknownDomain`,
  `UnknownSolver`, `SchemaError`, `TaskFileError`, `WorldMismatch`, `FatalSolverError`,
  `SolverOptionsError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .. import __version__

if TYPE_CHECKING:
    from ..engine.domain import Domain, package_description, package_source_files
    from ..engine.domain_registry import DOMAINS, UnknownDomain, builtin_domain_names, domain_names, get_domain
    from ..engine.fill import FillContext, Generator, Row
    from ..engine.moments import DAY_FMT, TS_FMT, between, clock, recent, ts
    from ..engine.query import NamedWhere, Where, bool_columns, check_date, check_date_range, check_text, require
    from ..engine.repair import Aggregate, Check, NotAfterNow, NotBefore, Rule
    from ..engine.schema import INTEGER, REAL, TEXT, Column, Schema, SchemaError, Table
    from ..engine.search import SearchIndex
    from ..engine.tools import PAGE_SIZE, ErrorCode, ToolEnv, ToolError, ToolKind, ToolRegistry, ToolResult, not_found, paginate
    from ..engine.world import ensure_world, scratch_copy
    from ..errors import EBenchError, EnvironmentFailure, InputError
    from ..paths import sessions_dir
    from ..registry import PluginError, PluginWarning, UnknownName
    from ..sessions.batch import config_hash
    from ..sessions.events import (
        ClientInfo,
        EndEvent,
        MessageEvent,
        SessionEvent,
        SolverInfo,
        StartEvent,
        ToolCallEvent,
        TurnEndEvent,
        event_from,
    )
    from ..sessions.model_client import LLMConfig
    from ..sessions.objects import JsonObject
    from ..sessions.prompts import system_prompt
    from ..sessions.record import Session, new_session_file, read_session, secret_values, trial_session_file
    from ..sessions.results import PerturbationRecord, ScenarioTurnResult, TrialSummary
    from ..sessions.runs import (
        MANIFEST,
        RESULTS,
        RUN_FORMAT,
        SESSIONS,
        RegradeNote,
        RunConfig,
        RunData,
        RunLimits,
        RunManifest,
        SuiteRecord,
        TaskSelection,
        TaskSet,
        UserRecord,
        load_run,
        load_runs,
        write_json_atomic,
    )
    from ..sessions.solvers.base import (
        FatalSolverError,
        Outcome,
        Solver,
        SolverFactory,
        SolverOptions,
        SolverOptionsError,
        StepHook,
        TrialView,
    )
    from ..sessions.solvers.llm import LLMSolver
    from ..sessions.solvers.registry import SOLVERS, UnknownSolver, build_solver, solver_names
    from ..sessions.terminations import Termination
    from ..sessions.trial import Trial, TrialLimits, open_trial
    from ..sessions.users import UserSettings
    from ..tasks.composition import compose
    from ..tasks.diff import Diff, RowChange, diff_from_list
    from ..tasks.grading import Grade, GradeRecord, WrongValue, grade
    from ..tasks.public import WRITTEN, Condition, PublicAPI, Reading
    from ..tasks.scenarios import Scenario, Turn
    from ..tasks.spec import CAPABILITIES, TASK_FIELDS, TASK_FORMAT, Step, Task, TaskFileError, load_task, load_tasks, parse_task
    from ..tasks.suite import SPLITS, find_task, load_suite, shipped_splits, suite_version, tasks_root
    from ..tasks.template_api import Draft, GenContext, NoTarget, Template
    from ..tasks.template_helpers import bounded, days_ago, no_tie_at, pretty_day, ref
    from ..tasks.vocabulary import OpenTerm
    from ..tasks.worlds import WorldMismatch, task_world

    def _a_trial_is_a_view(trial: Trial) -> TrialView:  # checked by mypy: Trial keeps TrialView's promises
        return trial


# Each public name and the module it lives in today: the one table to change when a module moves.
# tests/test_api.py checks it against the imports above and `__all__`.
_HOMES: dict[str, str] = {
    # a domain
    "Domain": "ebench.engine.domain",
    "package_description": "ebench.engine.domain",
    "package_source_files": "ebench.engine.domain",
    "FillContext": "ebench.engine.fill",
    "Generator": "ebench.engine.fill",
    "Row": "ebench.engine.fill",
    "DAY_FMT": "ebench.engine.moments",
    "TS_FMT": "ebench.engine.moments",
    "between": "ebench.engine.moments",
    "clock": "ebench.engine.moments",
    "recent": "ebench.engine.moments",
    "ts": "ebench.engine.moments",
    "NamedWhere": "ebench.engine.query",
    "Where": "ebench.engine.query",
    "bool_columns": "ebench.engine.query",
    "check_date": "ebench.engine.query",
    "check_date_range": "ebench.engine.query",
    "check_text": "ebench.engine.query",
    "require": "ebench.engine.query",
    "Aggregate": "ebench.engine.repair",
    "Check": "ebench.engine.repair",
    "NotAfterNow": "ebench.engine.repair",
    "NotBefore": "ebench.engine.repair",
    "Rule": "ebench.engine.repair",
    "INTEGER": "ebench.engine.schema",
    "REAL": "ebench.engine.schema",
    "TEXT": "ebench.engine.schema",
    "Column": "ebench.engine.schema",
    "Schema": "ebench.engine.schema",
    "SchemaError": "ebench.engine.schema",
    "Table": "ebench.engine.schema",
    "SearchIndex": "ebench.engine.search",
    "PAGE_SIZE": "ebench.engine.tools",
    "ErrorCode": "ebench.engine.tools",
    "ToolEnv": "ebench.engine.tools",
    "ToolError": "ebench.engine.tools",
    "ToolKind": "ebench.engine.tools",
    "ToolRegistry": "ebench.engine.tools",
    "ToolResult": "ebench.engine.tools",
    "not_found": "ebench.engine.tools",
    "paginate": "ebench.engine.tools",
    "ensure_world": "ebench.engine.world",
    "scratch_copy": "ebench.engine.world",
    # a task template
    "Draft": "ebench.tasks.template_api",
    "GenContext": "ebench.tasks.template_api",
    "NoTarget": "ebench.tasks.template_api",
    "Template": "ebench.tasks.template_api",
    "WRITTEN": "ebench.tasks.public",
    "Condition": "ebench.tasks.public",
    "PublicAPI": "ebench.tasks.public",
    "Reading": "ebench.tasks.public",
    "bounded": "ebench.tasks.template_helpers",
    "days_ago": "ebench.tasks.template_helpers",
    "no_tie_at": "ebench.tasks.template_helpers",
    "pretty_day": "ebench.tasks.template_helpers",
    "ref": "ebench.tasks.template_helpers",
    "OpenTerm": "ebench.tasks.vocabulary",
    # tasks and their grading
    "CAPABILITIES": "ebench.tasks.spec",
    "Step": "ebench.tasks.spec",
    "Task": "ebench.tasks.spec",
    "TaskFileError": "ebench.tasks.spec",
    "load_task": "ebench.tasks.spec",
    "load_tasks": "ebench.tasks.spec",
    "find_task": "ebench.tasks.suite",
    "load_suite": "ebench.tasks.suite",
    "Diff": "ebench.tasks.diff",
    "RowChange": "ebench.tasks.diff",
    "Grade": "ebench.tasks.grading",
    "WrongValue": "ebench.tasks.grading",
    "grade": "ebench.tasks.grading",
    "WorldMismatch": "ebench.tasks.worlds",
    # a trial and a solver
    "Trial": "ebench.sessions.trial",
    "TrialLimits": "ebench.sessions.trial",
    "open_trial": "ebench.sessions.trial",
    "Termination": "ebench.sessions.terminations",
    "FatalSolverError": "ebench.sessions.solvers.base",
    "Outcome": "ebench.sessions.solvers.base",
    "Solver": "ebench.sessions.solvers.base",
    "SolverFactory": "ebench.sessions.solvers.base",
    "SolverOptions": "ebench.sessions.solvers.base",
    "SolverOptionsError": "ebench.sessions.solvers.base",
    "StepHook": "ebench.sessions.solvers.base",
    "TrialView": "ebench.sessions.solvers.base",
    # sessions and runs
    "EndEvent": "ebench.sessions.events",
    "MessageEvent": "ebench.sessions.events",
    "SessionEvent": "ebench.sessions.events",
    "StartEvent": "ebench.sessions.events",
    "ToolCallEvent": "ebench.sessions.events",
    "TurnEndEvent": "ebench.sessions.events",
    "Session": "ebench.sessions.record",
    "new_session_file": "ebench.sessions.record",
    "read_session": "ebench.sessions.record",
    "trial_session_file": "ebench.sessions.record",
    "TrialSummary": "ebench.sessions.results",
    "RunData": "ebench.sessions.runs",
    "RunManifest": "ebench.sessions.runs",
    "load_run": "ebench.sessions.runs",
    "load_runs": "ebench.sessions.runs",
    # the registries
    "DOMAINS": "ebench.engine.domain_registry",
    "UnknownDomain": "ebench.engine.domain_registry",
    "builtin_domain_names": "ebench.engine.domain_registry",
    "domain_names": "ebench.engine.domain_registry",
    "get_domain": "ebench.engine.domain_registry",
    "SOLVERS": "ebench.sessions.solvers.registry",
    "UnknownSolver": "ebench.sessions.solvers.registry",
    "build_solver": "ebench.sessions.solvers.registry",
    "solver_names": "ebench.sessions.solvers.registry",
    # errors
    "EBenchError": "ebench.errors",
    "EnvironmentFailure": "ebench.errors",
    "InputError": "ebench.errors",
    "PluginError": "ebench.registry",
    "PluginWarning": "ebench.registry",
    "UnknownName": "ebench.registry",
    # what an adapter (an eval harness, an RL environment, a dataset exporter) needs beside the above
    "SPLITS": "ebench.tasks.suite",
    "shipped_splits": "ebench.tasks.suite",
    "suite_version": "ebench.tasks.suite",
    "tasks_root": "ebench.tasks.suite",
    "TASK_FIELDS": "ebench.tasks.spec",
    "TASK_FORMAT": "ebench.tasks.spec",
    "parse_task": "ebench.tasks.spec",
    "compose": "ebench.tasks.composition",
    "task_world": "ebench.tasks.worlds",
    "GradeRecord": "ebench.tasks.grading",  # the old name of Grade, kept for third-party code
    "diff_from_list": "ebench.tasks.diff",
    "LLMConfig": "ebench.sessions.model_client",
    "LLMSolver": "ebench.sessions.solvers.llm",
    "UserSettings": "ebench.sessions.users",
    "system_prompt": "ebench.sessions.prompts",
    "secret_values": "ebench.sessions.record",
    "sessions_dir": "ebench.paths",
    "config_hash": "ebench.sessions.batch",
    "MANIFEST": "ebench.sessions.runs",
    "RESULTS": "ebench.sessions.runs",
    "RUN_FORMAT": "ebench.sessions.runs",
    "SESSIONS": "ebench.sessions.runs",
    "write_json_atomic": "ebench.sessions.runs",
    # the typed parts of the records (a solver's description, a run's configuration, a scenario)
    "ClientInfo": "ebench.sessions.events",
    "SolverInfo": "ebench.sessions.events",
    "event_from": "ebench.sessions.events",
    "JsonObject": "ebench.sessions.objects",
    "PerturbationRecord": "ebench.sessions.results",
    "ScenarioTurnResult": "ebench.sessions.results",
    "RegradeNote": "ebench.sessions.runs",
    "RunConfig": "ebench.sessions.runs",
    "RunLimits": "ebench.sessions.runs",
    "SuiteRecord": "ebench.sessions.runs",
    "TaskSelection": "ebench.sessions.runs",
    "TaskSet": "ebench.sessions.runs",
    "UserRecord": "ebench.sessions.runs",
    "Scenario": "ebench.tasks.scenarios",
    "Turn": "ebench.tasks.scenarios",
}

__all__ = [
    "ClientInfo",
    "SolverInfo",
    "event_from",
    "JsonObject",
    "PerturbationRecord",
    "ScenarioTurnResult",
    "RegradeNote",
    "RunConfig",
    "RunLimits",
    "SuiteRecord",
    "TaskSelection",
    "TaskSet",
    "UserRecord",
    "Scenario",
    "Turn",
    "CAPABILITIES",
    "DAY_FMT",
    "DOMAINS",
    "INTEGER",
    "MANIFEST",
    "PAGE_SIZE",
    "REAL",
    "RESULTS",
    "RUN_FORMAT",
    "SESSIONS",
    "SOLVERS",
    "SPLITS",
    "TASK_FIELDS",
    "TASK_FORMAT",
    "TEXT",
    "TS_FMT",
    "WRITTEN",
    "Aggregate",
    "Check",
    "Column",
    "Condition",
    "Diff",
    "Domain",
    "Draft",
    "EBenchError",
    "EndEvent",
    "EnvironmentFailure",
    "ErrorCode",
    "FatalSolverError",
    "FillContext",
    "GenContext",
    "Generator",
    "Grade",
    "GradeRecord",
    "InputError",
    "LLMConfig",
    "LLMSolver",
    "MessageEvent",
    "NamedWhere",
    "NoTarget",
    "NotAfterNow",
    "NotBefore",
    "OpenTerm",
    "Outcome",
    "PluginError",
    "PluginWarning",
    "PublicAPI",
    "Reading",
    "Row",
    "RowChange",
    "Rule",
    "RunData",
    "RunManifest",
    "Schema",
    "SchemaError",
    "SearchIndex",
    "Session",
    "SessionEvent",
    "Solver",
    "SolverFactory",
    "SolverOptions",
    "SolverOptionsError",
    "StartEvent",
    "Step",
    "StepHook",
    "Table",
    "Task",
    "TaskFileError",
    "Template",
    "Termination",
    "ToolCallEvent",
    "ToolEnv",
    "ToolError",
    "ToolKind",
    "ToolRegistry",
    "ToolResult",
    "Trial",
    "TrialLimits",
    "TrialSummary",
    "TrialView",
    "TurnEndEvent",
    "UnknownDomain",
    "UnknownName",
    "UnknownSolver",
    "UserSettings",
    "Where",
    "WorldMismatch",
    "WrongValue",
    "__version__",
    "between",
    "bool_columns",
    "bounded",
    "build_solver",
    "builtin_domain_names",
    "check_date",
    "check_date_range",
    "check_text",
    "clock",
    "compose",
    "config_hash",
    "days_ago",
    "diff_from_list",
    "domain_names",
    "ensure_world",
    "find_task",
    "get_domain",
    "grade",
    "load_run",
    "load_runs",
    "load_suite",
    "load_task",
    "load_tasks",
    "new_session_file",
    "no_tie_at",
    "not_found",
    "open_trial",
    "package_description",
    "package_source_files",
    "paginate",
    "parse_task",
    "pretty_day",
    "read_session",
    "recent",
    "ref",
    "require",
    "scratch_copy",
    "secret_values",
    "sessions_dir",
    "shipped_splits",
    "solver_names",
    "suite_version",
    "system_prompt",
    "task_world",
    "tasks_root",
    "trial_session_file",
    "ts",
    "write_json_atomic",
]


if not TYPE_CHECKING:  # hidden from type checkers: a misspelt name stays an error there, not an Any

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
