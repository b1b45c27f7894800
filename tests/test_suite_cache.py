"""The parsed suite kept on disk (tasks/suite_cache.py): what it gives equals parsing, and
anything that changes parsing's result (a task file, a domain's tools or tables, the parsing
code) misses it; a damaged entry is rebuilt; processes writing at once leave a whole entry."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import shutil
from pathlib import Path

import pytest

from ebench.engine.domain_registry import get_domain
from ebench.tasks import spec, suite_cache
from ebench.tasks.spec import load_tasks
from ebench.tasks.suite import SPLITS, load_suite, task_files


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache of this test's own (EBENCH_HOME is where the cache lives)."""
    home = tmp_path / "home"
    monkeypatch.setenv("EBENCH_HOME", str(home))
    monkeypatch.delenv(suite_cache.CACHE_ENV, raising=False)
    return home / "cache" / "suites"


class Parses:
    """Counts the real parses (`load_tasks` calls) the cache lets through."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        monkeypatch.setattr(suite_cache, "load_tasks", self)

    def __call__(self, paths: list[Path]) -> spec.LoadReport:
        self.count += 1
        return load_tasks(paths)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Parses:
    return Parses(monkeypatch)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A small task folder in the shipped layout: a few tasks of each domain, and a broken file."""
    root = tmp_path / "tasks"
    for domain in ("music", "meeting", "moba"):
        (root / domain).mkdir(parents=True)
        for path in task_files(SPLITS["suite"], domain)[:3]:
            shutil.copy(path, root / domain / path.name)
    (root / "music" / "music-broken.json").write_text('{"format": "ebench-task/1", "id": ', encoding="utf-8")
    return root


def dump(report: spec.LoadReport) -> tuple[list[dict[str, object]], list[tuple[str, str, str, str]]]:
    return [t.to_dict() | {"source": t.source} for t in report.tasks], [(e.source, e.field, e.reason, str(e)) for e in report.errors]


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_the_cached_split_equals_the_parsed_one(split: str, cache_home: Path, parses: Parses, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_suite(SPLITS[split])
    again = load_suite(SPLITS[split])
    assert parses.count == 1  # the second load came from the entry the first wrote
    assert len(list(cache_home.glob("*.pickle"))) == 1
    monkeypatch.setenv(suite_cache.CACHE_ENV, "0")
    parsed = load_suite(SPLITS[split])
    assert parses.count == 2  # turned off: parsed again
    assert dump(first) == dump(again) == dump(parsed)
    assert len(again.tasks) >= 100 and again.errors == []
    assert again.tasks[0] is not first.tasks[0]  # each load is its own: a caller changing a task changes no other's


def test_errors_are_kept_and_filters_apply_after(folder: Path, cache_home: Path, parses: Parses) -> None:
    first = load_suite(folder)
    cached = load_suite(folder)
    assert parses.count == 1
    assert dump(cached) == dump(first)
    assert [e.field for e in cached.errors] == ["(json)"] and isinstance(cached.errors[0], spec.TaskFileError)
    music = load_suite(folder, domain="music")  # another list of files: an entry of its own
    assert {t.domain for t in music.tasks} == {"music"} and parses.count == 2
    assert len(load_suite(folder, capability="cross_entity_cascade").tasks) <= len(cached.tasks)
    assert parses.count == 2


def test_a_changed_task_file_misses(folder: Path, cache_home: Path, parses: Parses) -> None:
    load_suite(folder)
    path = task_files(folder, "meeting")[0]
    data = json.loads(path.read_text(encoding="utf-8"))
    data["query"] = "Something else entirely, please."
    path.write_text(json.dumps(data), encoding="utf-8")
    report = load_suite(folder)
    assert parses.count == 2
    assert next(t for t in report.tasks if t.id == data["id"]).query == data["query"]
    assert len(list(cache_home.glob("*.pickle"))) == 1  # the stale entry was replaced, not kept beside
    load_suite(folder)
    assert parses.count == 2


def test_a_changed_tool_or_table_misses(folder: Path, cache_home: Path, parses: Parses, monkeypatch: pytest.MonkeyPatch) -> None:
    load_suite(folder)
    music = get_domain("music")
    schemas = music.tools.openai_schemas()
    renamed = ({**schemas[0], "function": {**schemas[0]["function"], "name": "renamed_tool"}}, *schemas[1:])
    with monkeypatch.context() as patched:
        patched.setattr(music.tools, "_schemas", renamed)  # a tool's schema as the domain now declares it
        load_suite(folder)
    assert parses.count == 2
    load_suite(folder)  # back as it was: the original key, its entry replaced meanwhile (one a file list)
    assert parses.count == 3
    load_suite(folder)
    assert parses.count == 3
    with monkeypatch.context() as patched:
        ddl = type(music.schema).ddl
        patched.setattr(type(music.schema), "ddl", lambda self: [*ddl(self), "CREATE TABLE added (id INTEGER PRIMARY KEY)"])
        load_suite(folder)
    assert parses.count == 4


def test_the_parsing_code_is_in_the_key(folder: Path, cache_home: Path, parses: Parses, monkeypatch: pytest.MonkeyPatch) -> None:
    load_suite(folder)
    load_suite(folder)
    assert parses.count == 1
    original = Path.read_bytes
    source = Path(spec.__file__)

    def edited(self: Path) -> bytes:  # spec.py as if someone had changed a check in it
        return original(self) + b"\n# changed\n" if self == source else original(self)

    suite_cache.code_key.cache_clear()
    try:
        with monkeypatch.context() as patched:
            patched.setattr(Path, "read_bytes", edited)
            load_suite(folder)
    finally:
        suite_cache.code_key.cache_clear()
    assert parses.count == 2


@pytest.mark.parametrize("damage", [b"", b"not a pickle at all", b"\x80\x05\x95truncated"])
def test_a_corrupt_entry_is_rebuilt(damage: bytes, folder: Path, cache_home: Path, parses: Parses) -> None:
    first = load_suite(folder)
    (entry,) = cache_home.glob("*.pickle")
    entry.write_bytes(damage)
    report = load_suite(folder)
    assert parses.count == 2 and dump(report) == dump(first)
    assert entry.stat().st_size > 1000  # written whole again
    load_suite(folder)
    assert parses.count == 2


def test_an_entry_of_another_key_is_not_used(folder: Path, cache_home: Path, parses: Parses) -> None:
    load_suite(folder)
    (entry,) = cache_home.glob("*.pickle")
    stored = pickle.loads(entry.read_bytes())
    stored["key"] = "0" * 64
    entry.write_bytes(pickle.dumps(stored))
    load_suite(folder)
    assert parses.count == 2


def test_a_cache_that_cannot_be_written_is_not_an_error(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("EBENCH_HOME", str(blocker))  # its cache folder cannot be made
    assert len(load_suite(folder).tasks) == 9


def _load_in_child(folder: str, home: str, queue: multiprocessing.Queue[int]) -> None:
    os.environ["EBENCH_HOME"] = home
    queue.put(len(load_suite(Path(folder)).tasks))


def test_processes_writing_at_once_leave_one_whole_entry(folder: Path, cache_home: Path, parses: Parses) -> None:
    context = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[int] = context.Queue()
    children = [context.Process(target=_load_in_child, args=(str(folder), os.environ["EBENCH_HOME"], queue)) for _ in range(4)]
    for child in children:
        child.start()
    counts = [queue.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    assert counts == [9] * 4
    assert [p.name for p in cache_home.iterdir() if not p.name.endswith(".pickle")] == []  # no temporary file left
    load_suite(folder)
    assert parses.count == 0  # the entry the children left is whole, and used


def test_the_key_covers_every_ebench_module_the_parsing_code_imports():
    """A change in a module parse_task relies on must miss the cache: every ebench module that the
    key's modules import (at the top, or inside a function) is in the key itself."""
    import ast
    import importlib.util

    from ebench.tasks import suite_cache

    # imported but not shaping what parsing gives
    not_parsing = {"ebench.engine.domain": "type annotations only", "ebench.paths": "where the cache lives"}
    keyed = set(suite_cache._CODE_MODULES)
    missing = set()
    for name in keyed:
        module = importlib.import_module(name)
        assert module.__file__ is not None
        for node in ast.walk(ast.parse(Path(module.__file__).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = importlib.util.resolve_name("." * node.level + (node.module or ""), module.__package__ or "")
            elif isinstance(node, ast.ImportFrom) and node.module:
                target = node.module
            else:
                continue
            if target.startswith("ebench.") and target not in keyed | set(not_parsing):
                missing.add(target)
    assert missing == set()
