"""Which world a task runs on, and the refusal when that world is not the one it was made on.

A task records the seed and the id of the world it was made on (`task.world`: `fingerprint` is
a hash of the world's rows). It runs on that seed's world (each seed is its own file), and only if
this ebench builds the same rows for that seed: another generator version or Faker release would
give other rows, and the task's expected diff would be about data that is not there. A refactor
that changes no row keeps every task valid. Tasks from before fingerprints were recorded run on the
default world; tasks that recorded the older build fingerprint (a hash of the code) still run while
that code is unchanged.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..engine.domain_registry import get_domain
from ..engine.world import ensure_world, fingerprint, world_id
from ..errors import InputError
from .spec import Task


class WorldMismatch(InputError, ValueError):
    """The task was made on a world this ebench does not build; the message is one line."""


@lru_cache(maxsize=64)
def world_fingerprint(domain_name: str, seed: int) -> str:
    """The id of the world of (domain, seed), built if needed; once per process."""
    return world_id(get_domain(domain_name), seed)


@lru_cache(maxsize=64)
def _build_fingerprint(domain_name: str, seed: int) -> str:
    return fingerprint(get_domain(domain_name), seed)


def world_matches(domain_name: str, seed: int, recorded: str) -> bool:
    """Whether `recorded` (from a task or a session) names the world this ebench builds for seed:
    its row hash, or the build fingerprint older files recorded."""
    return recorded in (world_fingerprint(domain_name, seed), _build_fingerprint(domain_name, seed))


def task_seed(task: Task) -> int:
    seed = task.world.get("seed") if task.world else None
    return get_domain(task.domain).default_seed if seed is None else int(seed)


def check_world(task: Task) -> None:
    """Raise WorldMismatch unless this ebench builds the world `task` was made on."""
    if not task.world:
        return
    seed = task_seed(task)
    here = world_fingerprint(task.domain, seed)
    if not world_matches(task.domain, seed, str(task.world.get("fingerprint"))):
        raise WorldMismatch(
            f"task {task.id} was made on the {task.domain} world {task.world.get('fingerprint')} (seed {seed}), "
            f"but this ebench builds {here} for that seed (other generator code or Faker version): "
            f"regenerate the task with `ebench tasks generate --domain {task.domain} --world-seed {seed}`, "
            "or run it with the ebench version it was made with"
        )


def task_world(task: Task) -> Path:
    """The path of the world `task` runs on, built if needed; WorldMismatch if it cannot be had."""
    check_world(task)
    return ensure_world(get_domain(task.domain), task_seed(task))
