"""Helpers shared by the task templates of every domain (each domain's `templates` module)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..engine.moments import TS_FMT
from .spec import Step
from .template_api import GenContext, NoTarget


def ref(step: int, path: str) -> dict[str, Any]:
    """An argument taken from an earlier step's result (e.g. the id of a playlist just created)."""
    return {"$from": step, "path": path}


def now(ctx: GenContext) -> datetime:
    return datetime.strptime(ctx.now, TS_FMT)


def day(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def days_ago(ctx: GenContext, n: int) -> str:
    return day(now(ctx) - timedelta(days=n))


def pretty_day(value: str) -> str:
    """'2026-10-03' -> 'October 3, 2026' (how a person writes a date)."""
    moment = datetime.strptime(value[:10], "%Y-%m-%d")
    return f"{moment:%B} {moment.day}, {moment.year}"


def bounded(ids: list[Any], low: int, high: int, what: str) -> list[Any]:
    """Refuse a target set that is too small to be a task or too large to be reasonable."""
    if not low <= len(ids) <= high:
        raise NoTarget(f"{len(ids)} {what}, wanted {low}-{high}")
    return ids


def no_tie_at(ranked: list[tuple[Any, float]], k: int) -> list[Any]:
    """The first k keys of a ranking (sorted best first), refusing a tie across the cut."""
    if len(ranked) < k:
        raise NoTarget("ranking too short")
    if len(ranked) > k and ranked[k - 1][1] == ranked[k][1]:
        raise NoTarget("tie at the cut")
    return [key for key, _ in ranked[:k]]


def steps(*groups: list[Step] | Step) -> list[Step]:
    out: list[Step] = []
    for group in groups:
        out.extend(group if isinstance(group, list) else [group])
    return out
