"""Helpers shared by the tool tests of every domain (test_<domain>_tools.py)."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ebench.engine.tools import PAGE_SIZE
from ebench.engine.world import content_hash, scratch_copy


def val(conn: sqlite3.Connection, sql: str, *params: Any) -> Any:
    """First column of the first row, or None."""
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def col(conn: sqlite3.Connection, sql: str, *params: Any) -> list[Any]:
    """First column of every row."""
    return [r[0] for r in conn.execute(sql, params).fetchall()]


def ok(result) -> Any:
    assert result.ok, result.payload()
    return result.value


def err(result, code: str) -> str:
    """The error message of a refused call, after checking its code and payload shape."""
    assert not result.ok, f"expected {code}, got success: {json.dumps(result.value)[:300]}"
    assert result.error_code == code, result.payload()
    assert result.value is None
    assert result.error_message
    assert result.payload() == {"error": {"code": code, "message": result.error_message}}
    return result.error_message


def nocase(text: str) -> str:
    """SQLite's NOCASE collation: ASCII letters folded, everything else compared as is."""
    return "".join(ch.lower() if "A" <= ch <= "Z" else ch for ch in text)


def non_increasing(values: list[Any]) -> bool:
    return all(a >= b for a, b in zip(values, values[1:]))


def non_decreasing(values: list[Any]) -> bool:
    return all(a <= b for a, b in zip(values, values[1:]))


def world_image(world: Path) -> tuple[str, bytes]:
    """Content hash and raw image of an untouched world (what every fresh scratch copy starts with)."""
    conn = scratch_copy(world)
    try:
        return content_hash(conn), conn.serialize()
    finally:
        conn.close()


def unchanged_check(conn: sqlite3.Connection, pristine: tuple[str, bytes]) -> Callable[[], None]:
    """A check that `conn` still has the content it started with.

    Hashing every row takes ~0.1 s, so a byte-identical database image (which certainly has the
    same content) is accepted first; any other image gets the full content hash comparison.
    """

    def check() -> None:
        world_hash, image = pristine
        if conn.serialize() == image:
            return
        assert content_hash(conn) == world_hash, "the world's content changed"

    return check


def tool_fixtures(domain_name: str) -> dict[str, Callable]:
    """The fixtures every `test_<domain>_tools.py` uses, bound to one domain (install them with
    `globals().update(tool_fixtures("music"))`): `pristine` (content hash and image of the
    untouched world), `world_hash`, `unchanged` (a check that this test's copy still has that
    content) and `call(actor, tool, args)` on this test's copy."""
    import pytest

    @pytest.fixture(scope="session")
    def pristine(request: pytest.FixtureRequest) -> tuple[str, bytes]:
        return world_image(request.getfixturevalue(f"{domain_name}_world"))

    @pytest.fixture(scope="session")
    def world_hash(pristine) -> str:
        return pristine[0]

    @pytest.fixture()
    def unchanged(request: pytest.FixtureRequest, pristine) -> Callable[[], None]:
        return unchanged_check(request.getfixturevalue(f"{domain_name}_conn"), pristine)

    @pytest.fixture()
    def call(request: pytest.FixtureRequest) -> Callable[..., Any]:
        domain = request.getfixturevalue(domain_name)
        conn = request.getfixturevalue(f"{domain_name}_conn")

        def _call(actor: int, name: str, args: Any = None):
            return domain.tools.call(domain.env(conn, actor), name, args)

        return _call

    return {"pristine": pristine, "world_hash": world_hash, "unchanged": unchanged, "call": call}


def all_pages(
    call, actor: int, tool: str, args: dict[str, Any], key: str, part: Callable[[Any], dict[str, Any]] = lambda v: v
) -> list[dict[str, Any]]:
    """Every item of a paged listing, checking the page bookkeeping on the way.
    `part` picks the paged part of a result that holds more than the page."""
    first = part(ok(call(actor, tool, {**args, "page": 1})))
    total, pages = first["total"], first["total_pages"]
    assert pages == max(1, math.ceil(total / PAGE_SIZE))
    items: list[dict[str, Any]] = []
    for n in range(1, pages + 1):
        page = part(ok(call(actor, tool, {**args, "page": n})))
        assert (page["page"], page["page_size"], page["total"], page["total_pages"]) == (n, PAGE_SIZE, total, pages)
        assert len(page["items"]) == (PAGE_SIZE if n < pages else total - PAGE_SIZE * (pages - 1))
        items += page["items"]
    beyond = part(ok(call(actor, tool, {**args, "page": pages + 1})))
    assert beyond["items"] == [] and beyond["total"] == total and beyond["page"] == pages + 1
    ids = [item[key] for item in items]
    assert len(ids) == len(set(ids)), "an item appears on two pages"
    return items
