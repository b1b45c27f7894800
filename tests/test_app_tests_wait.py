"""The app's tests wait for a condition (CONTRIBUTING, tests use real parts): no `pilot.pause()`
directly before an `assert`, where a slower machine would assert before the app got there."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def is_bare_pause(statement: ast.stmt) -> bool:
    """`await pilot.pause()` with no delay: a wait for nothing in particular."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Await)):
        return False
    call = statement.value.value
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "pause"
        and ast.unparse(call.func.value).split(".")[-1] == "pilot"
        and not call.args
        and not call.keywords
    )


def pauses_before_asserts(source: str) -> list[int]:
    """The lines of the bare pauses whose next statement in the same block is an `assert`."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for statement, following in zip(block, block[1:], strict=False):
                if is_bare_pause(statement) and isinstance(following, ast.Assert):
                    lines.append(statement.lineno)
    return sorted(lines)


def test_the_check_finds_a_pause_before_an_assert_in_any_block():
    source = """
async def test_x(pilot, other):
    await pilot.pause()
    assert 1
    await pilot.pause(0.1)  # a delay asked for: not this check's business
    assert 2
    for _ in range(2):
        if True:
            pass
        else:
            await pilot.pause()
            # a comment between is still "directly followed"
            assert 3
    await pilot.pause()
    x = 1
    assert x
    await other.pause()
    assert 4
    await self.pilot.pause()
    assert 5
"""
    assert pauses_before_asserts(source) == [3, 11, 19]


def test_no_app_test_asserts_right_after_a_bare_pause():
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.glob("*.py"))
        for line in pauses_before_asserts(path.read_text(encoding="utf-8"))
    ]
    assert not found, "wait for the condition the assert needs (appcheck.until_settled), not a bare pilot.pause(): " + ", ".join(found)
