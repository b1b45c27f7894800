"""The parsed, checked task files kept on disk, so a process loads a suite instead of parsing it.

Parsing and checking the shipped suite (323 tasks, and the ask and composed splits) costs a
fifth of a second or more a process; unpickling the result costs a third of that. An entry is
valid for exactly what shaped it, all in its key:

- every task file's path and bytes;
- the code that parses and checks (this module, spec.py and what parse_task uses: their source),
  the Python and pydantic versions;
- every registered domain's name, tables and tools (a task is checked against them).

Entries live under `paths.cache_dir()/suites`, one file per list of task files (a changed file
replaces its entry rather than adding one). Writes go through a temporary file and `os.replace`,
so processes writing at once leave one whole entry; an entry that is missing, stale, corrupt or
unreadable is rebuilt without a word, and a cache that cannot be written is simply not kept.
EBENCH_SUITE_CACHE=0 turns it off.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .spec import LoadReport, TaskFileError, load_tasks

if TYPE_CHECKING:
    from ..engine.domain import Domain

CACHE_ENV = "EBENCH_SUITE_CACHE"  # "0" (or "off", "false", "no"): parse every time
ENTRY_FORMAT = 1  # bump when what an entry holds changes shape
# The modules whose code decides what parsing gives (parse_task's own, and this one's).
_CODE_MODULES = (
    "ebench.errors",
    "ebench.registry",
    "ebench.engine.schema",
    "ebench.engine.domain_registry",
    "ebench.tasks.diff",
    "ebench.tasks.records",
    "ebench.tasks.spec",
    __name__,
)


def enabled() -> bool:
    return os.environ.get(CACHE_ENV, "1").strip().lower() not in ("0", "off", "false", "no")


def load_tasks_cached(paths: Sequence[Path]) -> LoadReport:
    """`load_tasks(paths)`, from the cache when an entry for exactly these files, this code and
    these domains is there; else parsed and stored for the next process."""
    if not enabled():
        return load_tasks(paths)
    try:
        contents = [path.read_bytes() for path in paths]
    except OSError:  # a file that cannot be read: the loader reports it, nothing is cached
        return load_tasks(paths)
    key = entry_key(paths, contents)
    entry = entry_path(paths)
    found = _read(entry, key) if entry is not None else None
    if found is not None:
        return found
    report = load_tasks(paths)
    if entry is not None:
        _write(entry, key, report)
    return report


def entry_key(paths: Sequence[Path], contents: Sequence[bytes]) -> str:
    """The digest of everything an entry depends on (see the module's docstring)."""
    digest = hashlib.sha256(f"ebench-suite-cache/{ENTRY_FORMAT}\n{code_key()}\n{domains_key()}\n".encode())
    for path, content in zip(paths, contents, strict=True):
        digest.update(f"{path}\n{len(content)}\n".encode())
        digest.update(content)
    return digest.hexdigest()


def entry_path(paths: Sequence[Path]) -> Path | None:
    """The file of the entry for these task files (None: no cache folder can be made)."""
    from ..paths import cache_dir

    name = hashlib.sha256("\n".join(str(path) for path in paths).encode()).hexdigest()[:24]
    try:
        folder = cache_dir() / "suites"
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder / f"{name}.pickle"


@cache
def code_key() -> str:
    """The source of the parsing code, and the versions of what it stands on (once per process)."""
    import importlib
    from importlib.metadata import version

    digest = hashlib.sha256(f"{sys.version}\npydantic {version('pydantic')}\n".encode())
    for name in _CODE_MODULES:
        source = getattr(importlib.import_module(name), "__file__", None)
        digest.update(f"{name}\n".encode())
        digest.update(Path(source).read_bytes() if source else b"?")
    return digest.hexdigest()


def domains_key() -> str:
    """Every registered domain's name and fingerprint (a plug-in that fails to load counts as such)."""
    from ..engine.domain_registry import domain_names, get_domain

    parts = []
    for name in domain_names():
        try:
            parts.append(f"{name}={domain_fingerprint(get_domain(name))}")
        except Exception as exc:  # a broken plug-in: the tasks naming it are errors, as parsing would find
            parts.append(f"{name}!{type(exc).__name__}")
    return "\n".join(parts)


def domain_fingerprint(domain: Domain) -> str:
    """What a task is checked against in its domain: its tables (the DDL: columns and keys) and
    its tools (names and argument schemas)."""
    digest = hashlib.sha256(f"{domain.name}\n{domain.version}\n".encode())
    digest.update("\n".join(domain.schema.ddl()).encode())
    digest.update(json.dumps(domain.tools.openai_schemas(), sort_keys=True).encode())
    return digest.hexdigest()


def _read(entry: Path, key: str) -> LoadReport | None:
    """The report an entry holds when its key is `key`; None when there is none or it is unusable."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    collecting = gc.isenabled()
    gc.disable()  # the collector would walk the thousands of objects being made: twice as slow
    try:
        stored = pickle.loads(data)
        if not (isinstance(stored, dict) and stored.get("key") == key):
            return None
        errors = [TaskFileError(*error) for error in stored["errors"]]
        tasks = stored["tasks"]
    except Exception:  # torn, corrupt, or written by code whose classes have moved: rebuilt
        return None
    finally:
        if collecting:
            gc.enable()
    return LoadReport(tasks, errors) if isinstance(tasks, list) else None


def _write(entry: Path, key: str, report: LoadReport) -> None:
    """Store `report` under `key`, atomically; a failure leaves the cache as it was."""
    # A TaskFileError does not pickle by its arguments: kept as what rebuilds it.
    errors = [(e.source, e.field, e.reason) for e in report.errors]
    try:
        data = pickle.dumps({"key": key, "tasks": report.tasks, "errors": errors}, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a task holding something that does not pickle: not cached
        return
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{entry.stem}.", suffix=".tmp", dir=entry.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temp, entry)
    except BaseException as exc:
        Path(temp).unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise


def clear() -> int:
    """Remove every entry (how many were removed); for tests and a user who wants the space back."""
    from ..paths import cache_dir

    removed = 0
    for entry in (cache_dir() / "suites").glob("*.pickle"):
        entry.unlink(missing_ok=True)
        removed += 1
    return removed
