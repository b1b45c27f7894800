"""A domain: a synthetic product's schema, seeded generators, repair rules, tools and description,
and where its task templates and benchmark tool cases live (one package per domain)."""

from __future__ import annotations

import hashlib
import importlib
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from .fill import Generator
from .repair import Check
from .schema import Schema
from .search import SearchIndex
from .tools import ToolEnv, ToolError, ToolRegistry

# The engine modules whose code shapes every world, whatever the domain.
_ENGINE_SOURCE_FILES = ("fill.py", "repair.py", "moments.py")
# A domain package's own world-shaping modules, by convention.
_PACKAGE_SOURCE_FILES = ("schema.py", "data.py", "checks.py", "vocabulary.py")


def package_source_files(package_file: str) -> list[Path]:
    """The files whose code shapes the world of the domain package whose `__init__.py` is
    `package_file`: those of its conventional modules it has (a plug-in needs no vocabulary.py),
    then the engine's."""
    package_dir = Path(package_file).parent
    engine_dir = Path(__file__).parent
    present = [package_dir / name for name in _PACKAGE_SOURCE_FILES if (package_dir / name).is_file()]
    return present + [engine_dir / name for name in _ENGINE_SOURCE_FILES]


def package_description(package_file: str) -> str:
    """The solver-facing description kept in `description.md` beside the domain package's `__init__.py`."""
    return (Path(package_file).parent / "description.md").read_text(encoding="utf-8").strip()


@dataclass
class Domain:
    name: str
    title: str
    version: str  # bump when the generated world changes on purpose
    default_seed: int
    now: str  # the frozen clock, "YYYY-MM-DD HH:MM:SS"
    schema: Schema
    generators: Mapping[str, Generator]
    checks: list[Check]
    tools: ToolRegistry
    description: str  # for the solver's system prompt
    actor_table: str  # the table whose rows are the actors (users, players, employees)
    actor_noun: str  # "listener", "player", "employee"
    actor_label_sql: str  # SELECT that gives a display name for actor ? (one row)
    faker_locales: list[str] = field(default_factory=lambda: ["en_US"])
    search_indexes: list[SearchIndex] = field(default_factory=list)
    source_files: list[Path] = field(default_factory=list)  # the files whose code shapes the world
    # Dotted module paths, imported on first use: the engine never imports ebench.tasks, which the
    # templates module does. `templates_module` exposes TEMPLATES (ebench.tasks.generation.Template
    # subclasses); `tool_cases_module` exposes cases(conn, actor), LOOKUPS and optionally ACTOR_SQL
    # (benchmarks/tool_calls.py). None: the domain has none. `parts_module` exposes GRAMMAR, the
    # parts composed tasks are built from (ebench.tasks.composition).
    templates_module: str | None = None
    tool_cases_module: str | None = None
    parts_module: str | None = None

    def template_classes(self) -> list[type]:
        """The domain's task template classes, in their declared order (none without a templates module)."""
        if self.templates_module is None:
            return []
        return list(importlib.import_module(self.templates_module).TEMPLATES)

    def tool_cases(self) -> ModuleType | None:
        """The module with the arguments the tool benchmark calls each tool with, if the domain has one."""
        return None if self.tool_cases_module is None else importlib.import_module(self.tool_cases_module)

    def code_fingerprint(self) -> str:
        """Hash of the code that shapes the world, so an edited generator triggers a rebuild."""
        digest = hashlib.sha256()
        for path in sorted(self.source_files):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    def env(self, conn: sqlite3.Connection, actor_id: Any) -> ToolEnv:
        """Tools bound to `actor_id` on `conn`; an unknown actor is a clear error."""
        if isinstance(actor_id, bool) or not isinstance(actor_id, int):
            raise ToolError("invalid_value", f"The actor must be an integer id, got {actor_id!r}.")
        key = self.schema.table(self.actor_table).key[0]
        row = conn.execute(f"SELECT 1 FROM {self.actor_table} WHERE {key} = ?", (actor_id,)).fetchone()
        if row is None:
            raise ToolError("not_found", f"No {self.actor_noun} with id {actor_id} in the {self.name} world.")
        return ToolEnv(conn=conn, actor_id=actor_id, now=self.now)

    def actor_label(self, conn: sqlite3.Connection, actor_id: int) -> str:
        row = conn.execute(self.actor_label_sql, (actor_id,)).fetchone()
        return row[0] if row else f"{self.actor_noun} {actor_id}"
