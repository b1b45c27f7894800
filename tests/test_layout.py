"""The floors of ebench, checked by import-linter: the contracts in pyproject.toml
(`[tool.importlinter]`) are the rules, and `lint-imports` (run here in a subprocess, as a developer
runs it) is the checker. From the bottom: errors; registry, paths, terminal, themes; the engine;
the tasks; the domains (their templates are written with the tasks); the sessions; the testing
helpers; the public API; the app and the integrations; the command line. Every import counts,
those inside functions and under TYPE_CHECKING too, and no package holds an import cycle.

What import-linter cannot see (what importing a module loads at run time) is checked here too.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import ebench
from ebench.engine.domain_registry import builtin_domain_names

ROOT = Path(ebench.__file__).parent
DOMAINS_DIR = ROOT / "domains"
CORE = ("engine", "tasks", "domains", "sessions")
# The built-in domain packages: every folder of ebench/domains (not only the registered names, so
# that an unregistered package is held to the same rules).
DOMAIN_PACKAGES = sorted(p.name for p in DOMAINS_DIR.iterdir() if (p / "__init__.py").exists())
CONTRACTS = tomllib.loads((ROOT.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def test_the_built_in_domain_packages_are_the_registered_ones():
    assert sorted(builtin_domain_names()) == DOMAIN_PACKAGES


def test_every_import_contract_is_kept():
    out = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        cwd=ROOT.parent,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in out.stdout


def test_the_floors_name_every_package_and_top_level_module_of_ebench():
    """A new folder or module is given a floor: one the layers do not name would escape them."""
    layers = next(c for c in CONTRACTS if c["type"] == "layers")["layers"]
    named = {name.strip() for layer in layers for name in layer.split("|")}
    present = {
        f"ebench.{p.stem if p.is_file() else p.name}"
        for p in ROOT.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()
    }
    assert present - named == set()


def test_every_domain_package_is_held_to_the_domain_contracts():
    independence = next(c for c in CONTRACTS if c["type"] == "independence")
    assert sorted(m.rpartition(".")[2] for m in independence["modules"]) == DOMAIN_PACKAGES
    engine_only = next(c for c in CONTRACTS if c["type"] == "forbidden" and c["forbidden_modules"] == ["ebench.tasks"])
    assert {f"ebench.domains.{name}" for name in DOMAIN_PACKAGES} <= set(engine_only["source_modules"])
    # a domain module not named by the contract (beside templates and parts) would escape it
    stems = {p.stem for name in DOMAIN_PACKAGES for p in (DOMAINS_DIR / name).glob("*.py")} - {"__init__", "templates", "parts"}
    assert {f"ebench.domains.*.{stem}" for stem in stems} <= set(engine_only["source_modules"])


def test_a_broken_floor_is_caught(tmp_path):
    """The checker fails when an engine module imports the tasks (a floor above it), even from inside a function."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy / "ebench", ignore=shutil.ignore_patterns("__pycache__", "splits", "data"))
    shutil.copy(ROOT.parent / "pyproject.toml", copy / "pyproject.toml")
    moments = copy / "ebench" / "engine" / "moments.py"
    moments.write_text(
        moments.read_text(encoding="utf-8") + "\n\ndef _late():\n    from ..tasks import spec  # noqa\n\n    return spec\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command; lint_imports_command()",
        ],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "ebench.engine.moments -> ebench.tasks.spec" in out.stdout


def test_importing_the_core_loads_neither_textual_nor_litellm_nor_mcp():
    modules = [f"ebench.{p}" for p in CORE] + [
        "ebench.engine.world",
        "ebench.engine.tools",
        *(f"ebench.domains.{name}" for name in DOMAIN_PACKAGES),
        *(f"ebench.domains.{name}.templates" for name in DOMAIN_PACKAGES),
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
        "from ebench.engine.domain_registry import domain_names, get_domain\n"
        "for name in domain_names(): get_domain(name).template_classes()\n"
        "print(','.join(m for m in ('textual', 'litellm', 'mcp') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_importing_the_engine_or_listing_the_domains_loads_no_domain_and_no_task_code():
    probe = (
        "import sys\n"
        "import ebench.engine.world, ebench.engine.domain\n"
        "from ebench.engine.domain_registry import domain_names\n"
        "domain_names()\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('ebench.tasks') or "
        f"any(m.startswith('ebench.domains.' + d) for d in {DOMAIN_PACKAGES!r}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_readmes_layout_names_every_module():
    """The README's "Layout" names each module of ebench (its stem) and each package folder."""
    readme = (ROOT.parent / "README.md").read_text(encoding="utf-8")
    layout = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", layout))
    modules = [p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts]
    missing = sorted(str(p.relative_to(ROOT)) for p in modules if (p.parent.name if p.name == "__init__.py" else p.stem) not in named)
    assert missing == []
