"""Layering rules: the core (domains, tasks, sessions) never imports textual, and the core layers
import downwards only.

A domain package (built in under ebench/domains/<name>/, or a plug-in) may import the engine and,
in its `templates` and `parts` modules only, ebench.tasks. The engine, the domain registry and ebench.tasks never
import a concrete domain package: they reach one through the registry (`get_domain`).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import ebench
from ebench.domains import builtin_domain_names

CORE = ("domains", "tasks", "sessions")
ROOT = Path(ebench.__file__).parent
DOMAINS_DIR = ROOT / "domains"
# The built-in domain packages: every folder beside the engine (not only the registered names,
# so that an unregistered package is held to the same rules).
DOMAIN_PACKAGES = sorted(p.name for p in DOMAINS_DIR.iterdir() if (p / "__init__.py").exists() and p.name != "engine")


def _imports(path: Path) -> set[str]:
    """Top-level names of the absolute imports in `path`."""
    return {name.split(".")[0] for name in _modules(path)}


def _modules(path: Path) -> set[str]:
    """Every module `path` imports, relative imports resolved to absolute dotted names."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)  # `from . import music`
    return names


def _offenders(files: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    """`file: module` for every import of a module under one of `forbidden`."""
    out = []
    for path in files:
        for module in sorted(_modules(path)):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                out.append(f"{path.relative_to(ROOT)}: {module}")
    return out


def test_the_built_in_domain_packages_are_the_registered_ones():
    assert sorted(builtin_domain_names()) == DOMAIN_PACKAGES


def test_core_source_never_imports_textual():
    offenders = [str(path.relative_to(ROOT)) for package in CORE for path in (ROOT / package).rglob("*.py") if "textual" in _imports(path)]
    assert offenders == []


def test_the_engine_the_registry_and_the_tasks_never_import_a_concrete_domain():
    concrete = tuple(f"ebench.domains.{name}" for name in DOMAIN_PACKAGES)
    files = [*(DOMAINS_DIR / "engine").rglob("*.py"), DOMAINS_DIR / "__init__.py", *(ROOT / "tasks").rglob("*.py")]
    assert _offenders(files, concrete) == []


def test_a_domain_package_imports_the_engine_and_only_its_templates_and_parts_import_the_tasks():
    for name in DOMAIN_PACKAGES:
        others = tuple(f"ebench.domains.{other}" for other in DOMAIN_PACKAGES if other != name)
        files = sorted((DOMAINS_DIR / name).rglob("*.py"))
        assert _offenders(files, (*others, "ebench.sessions", "ebench.app", "ebench.cli")) == [], name
        below_tasks = [p for p in files if p.name not in ("templates.py", "parts.py")]
        assert _offenders(below_tasks, ("ebench.tasks",)) == [], name


def test_the_core_layers_import_downwards_only():
    """domains below tasks below sessions; none of them imports the app or the CLI."""
    engine = sorted((DOMAINS_DIR / "engine").rglob("*.py"))
    assert _offenders(engine, ("ebench.tasks", "ebench.sessions", "ebench.app", "ebench.cli")) == []
    assert _offenders(sorted((ROOT / "tasks").rglob("*.py")), ("ebench.sessions", "ebench.app", "ebench.cli")) == []
    assert _offenders(sorted((ROOT / "sessions").rglob("*.py")), ("ebench.app", "ebench.cli")) == []


def test_importing_the_core_loads_neither_textual_nor_litellm_nor_mcp():
    modules = [f"ebench.{p}" for p in CORE] + [
        "ebench.domains.engine.world",
        "ebench.domains.engine.tools",
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
        "from ebench.domains import domain_names, get_domain\n"
        "for name in domain_names(): get_domain(name).template_classes()\n"
        "print(','.join(m for m in ('textual', 'litellm', 'mcp') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_importing_the_engine_or_listing_the_domains_loads_no_domain_and_no_task_code():
    probe = (
        "import sys\n"
        "import ebench.domains.engine.world, ebench.domains.engine.domain\n"
        "from ebench.domains import domain_names\n"
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
