"""The shortcuts built from a reference solution alone: the reference without its last write, and
the reference as another actor. The generator and synthesis reject a draft that either passes;
`ebench tasks audit` runs them beside the template's own shortcuts (audit.py)."""

from __future__ import annotations

from pathlib import Path

from ..engine.domain_registry import get_domain
from ..engine.tools import WRITE
from ..engine.world import open_world_readonly
from .diff import Diff
from .reference import run_steps
from .spec import Step


def without_last_write(domain_name: str, steps: list[Step]) -> list[Step]:
    tools = get_domain(domain_name).tools
    writes = [i for i, s in enumerate(steps) if tools.get(s.tool).kind == WRITE]
    if not writes:
        return list(steps)
    last = writes[-1]
    return steps[:last] + steps[last + 1 :]


def wrong_actor(domain_name: str, world: Path, actor: int) -> int | None:
    """Another actor of the same world (the next id up, else down), deterministically."""
    domain = get_domain(domain_name)
    table = domain.actor_table
    key = domain.schema.table(table).key[0]
    conn = open_world_readonly(world)
    try:
        row = conn.execute(f"SELECT {key} FROM {table} WHERE {key} > ? ORDER BY {key} LIMIT 1", (actor,)).fetchone()
        if row is None:
            row = conn.execute(f"SELECT {key} FROM {table} WHERE {key} < ? ORDER BY {key} DESC LIMIT 1", (actor,)).fetchone()
    finally:
        conn.close()
    return None if row is None else int(row[0])


def reference_shortcuts(domain_name: str, world: Path, actor: int, reference: list[Step]) -> list[tuple[str, str, Diff]]:
    """(family, label, end state) of the shortcuts built from a reference solution: without its
    last write, and as another actor. The generator rejects drafts that either passes."""
    out = [
        (
            "no_last_write",
            "no_last_write",
            run_steps(domain_name, actor, without_last_write(domain_name, reference), world=world, tolerant=True).diff,
        )
    ]
    other = wrong_actor(domain_name, world, actor)
    if other is not None:
        out.append(("wrong_actor", f"actor {other}", run_steps(domain_name, other, reference, world=world, tolerant=True).diff))
    return out
