"""ebench.api, the public contract: what it declares is what it gives, it is cheap to import and
passes `mypy --strict`, nothing inside ebench depends on it, and every example written for people
outside ebench (the plug-ins of tests/plugins/, the code of docs/extending.md and of the README's
"Adding a domain" and "Adding a solver") imports from it and from no other ebench module."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ebench
import ebench.api as api

ROOT = Path(ebench.__file__).resolve().parent
REPO = ROOT.parent
API = ROOT / "api" / "__init__.py"
README_SECTIONS = ("Adding a domain", "Adding a solver")


def _type_imports() -> dict[str, str]:
    """name -> absolute module of the imports under `if TYPE_CHECKING:` in ebench/api/__init__.py."""
    tree = ast.parse(API.read_text(encoding="utf-8"))
    [block] = [n for n in tree.body if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"]
    homes = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom):
            base = ["ebench"] if node.level == 2 else ["ebench", "api"]  # `..x` is ebench.x
            module = ".".join([*base, *([node.module] if node.module else [])])
            homes.update({alias.asname or alias.name: module for alias in node.names})
    return homes


def test_the_table_the_type_imports_and_all_declare_the_same_names():
    public = set(api.__all__) - {"__version__"}
    assert len(api.__all__) == len(set(api.__all__))
    assert _type_imports() == api._HOMES
    assert set(api._HOMES) == public


def test_every_public_name_is_the_object_of_its_home():
    for name, home in api._HOMES.items():
        assert getattr(api, name) is getattr(importlib.import_module(home), name), name
    assert api.__version__ == ebench.__version__
    assert set(api.__all__) <= set(dir(api))
    with pytest.raises(AttributeError, match="has no attribute 'Domian'"):
        api.Domian  # noqa: B018


def _loaded_after(code: str) -> list[str]:
    """The modules of interest a fresh interpreter holds after running `code`."""
    probe = f"import sys\n{code}\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('ebench', 'pydantic', 'textual', 'litellm', 'mcp'))))"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()


def test_importing_the_api_loads_only_what_is_asked_for():
    assert _loaded_after("import ebench.api") == ["ebench", "ebench.api"]
    # What a domain package's modules (all but its templates) use: the engine, no task or session code.
    domain_side = "from ebench.api import Column, Domain, FillContext, NotBefore, Schema, Table, ToolEnv, ToolRegistry, paginate"
    loaded = _loaded_after(domain_side)
    assert not [m for m in loaded if m.startswith(("ebench.tasks", "ebench.sessions", "pydantic"))], loaded
    # Everything: still no terminal UI, model client or MCP.
    loaded = _loaded_after("from ebench.api import *")
    assert not [m for m in loaded if m.split(".")[0] in ("textual", "litellm", "mcp")], loaded


def test_nothing_inside_ebench_but_the_integrations_imports_the_api():
    """The api sits above the core: an import of it from there would be a cycle. The integrations
    (adapters for Inspect AI, RL environments, datasets) sit above it and use it as any outside
    code would (the floors are import-linter's contracts: tests/test_layout.py)."""
    offenders = [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*.py")
        if p.parent.name not in ("api", "integrations") and _ebench_imports(p.read_text(encoding="utf-8"), p) & {"ebench.api"}
    ]
    assert offenders == []


def _ebench_imports(source: str, path: Path) -> set[str]:
    """The ebench modules `source` imports (`from ebench import api` counts as ebench.api; a
    relative import inside ebench is resolved)."""
    found: set[str] = set()
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1]) if path.is_relative_to(ROOT) else ""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                if not package:
                    continue  # a plug-in's own modules
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*parts, *([module] if module else [])])
            found.add(module)
            if module == "ebench":
                found.update(f"ebench.{alias.name}" for alias in node.names)
    return {m for m in found if m == "ebench" or m.startswith("ebench.")}


def _outside_the_api(source: str, where: str) -> list[str]:
    """Every ebench module but ebench.api that an example imports, as `where: module`."""
    return [f"{where}: {m}" for m in sorted(_ebench_imports(source, Path(where))) if m not in ("ebench", "ebench.api")]


def _python_blocks(markdown: str) -> list[str]:
    """The ```python blocks, those indented in a list item too, dedented."""
    return [textwrap.dedent(code) for _, code in re.findall(r"^( *)```python\n(.*?)^\1```", markdown, flags=re.S | re.M)]


def _section(markdown: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, flags=re.S | re.M)
    assert match is not None, f"no section {title!r}"
    return match.group(1)


def test_the_plugins_import_only_the_api():
    files = sorted((REPO / "tests" / "plugins").rglob("*.py"))
    assert len(files) >= 8  # the domain's modules, the solver, their build backends
    offenders = [o for path in files for o in _outside_the_api(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))]
    assert offenders == []
    users = [p for p in files if "from ebench.api import" in p.read_text(encoding="utf-8")]
    assert len(users) >= 7  # every module of theirs that needs ebench uses the api


def test_the_integrations_import_only_the_api():
    """The adapters (Inspect AI, verifiers, datasets) are outside code that ships with ebench: the
    contract is all they use."""
    files = sorted((ROOT / "integrations").glob("*.py"))
    assert len(files) >= 4
    imports = {str(path.relative_to(REPO)): _ebench_imports(path.read_text(encoding="utf-8"), path) for path in files}
    assert {where: sorted(found - {"ebench", "ebench.api"}) for where, found in imports.items()} == {where: [] for where in imports}
    assert sum("ebench.api" in found for found in imports.values()) >= 3  # relative imports resolved: they are seen


def test_the_extending_guide_imports_only_the_api():
    blocks = _python_blocks((REPO / "docs" / "extending.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 2 and all("from ebench.api import" in block for block in blocks)
    assert [o for i, block in enumerate(blocks) for o in _outside_the_api(block, f"docs/extending.md block {i + 1}")] == []


@pytest.mark.parametrize("title", README_SECTIONS)
def test_the_readme_examples_import_only_the_api(title: str):
    """The README shows a plug-in's imports, and they are all from ebench.api."""
    blocks = _python_blocks(_section((REPO / "README.md").read_text(encoding="utf-8"), title))
    assert any("from ebench.api import" in block for block in blocks), f"README, {title}: no example imports from ebench.api"
    assert [o for i, block in enumerate(blocks) for o in _outside_the_api(block, f"README {title} block {i + 1}")] == []


def test_the_api_passes_mypy_strict(request: pytest.FixtureRequest, tmp_path: Path):
    """Its declarations are checked strictly (the modules behind them silently). mypy's cache is
    kept in pytest's, apart from the project's own run (other options would invalidate it)."""
    pytest_cache = getattr(request.config, "cache", None)
    cache = pytest_cache.mkdir("mypy-api") if pytest_cache is not None else tmp_path
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--cache-dir", str(cache), "-p", "ebench.api"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
