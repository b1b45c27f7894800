"""No function of ebench is over 25 in cyclomatic complexity (radon's measure): a longer one is
split into named steps (CONTRIBUTING). The sandbox worker, a plain script run inside the sandbox,
is held to it too."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit

import ebench

ROOT = Path(ebench.__file__).resolve().parent
CEILING = 25


def test_no_function_is_over_the_complexity_ceiling():
    over = [
        f"{path.relative_to(ROOT)}:{block.lineno} {block.fullname} ({block.complexity})"
        for path in sorted(ROOT.rglob("*.py"))
        for block in cc_visit(path.read_text(encoding="utf-8"))
        if block.complexity > CEILING
    ]
    assert over == []


def test_the_measure_sees_a_complex_function():
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(CEILING + 1))
    (block,) = cc_visit(f"def f(x):\n{branches}\n    return -1\n")
    assert block.complexity > CEILING
