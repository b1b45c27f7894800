"""Layering rules: the core (domains, tasks, sessions) never imports textual."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ebench

CORE = ("domains", "tasks", "sessions")
ROOT = Path(ebench.__file__).parent


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_core_source_never_imports_textual():
    offenders = [str(path.relative_to(ROOT)) for package in CORE for path in (ROOT / package).rglob("*.py") if "textual" in _imports(path)]
    assert offenders == []


def test_importing_the_core_loads_neither_textual_nor_litellm_nor_mcp():
    modules = [f"ebench.{p}" for p in CORE] + [
        "ebench.domains.engine.world",
        "ebench.domains.engine.tools",
        "ebench.domains.music",
        "ebench.domains.meeting",
        "ebench.domains.moba",
        "ebench.tasks.diff",
        "ebench.tasks.grading",
        "ebench.tasks.spec",
        "ebench.tasks.generation",
        "ebench.tasks.suite",
        "ebench.tasks.reference",
        "ebench.sessions.sandbox",
    ]
    probe = (
        f"import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "from ebench.domains import get_domain\n"
        "for name in ('music', 'meeting', 'moba'): get_domain(name)\n"
        "print(','.join(m for m in ('textual', 'litellm', 'mcp') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
