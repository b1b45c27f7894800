"""Worlds: a domain's built base database, one plain SQLite file per domain and seed.

A world is built on demand into the data directory, with a build fingerprint (domain version,
seed, code hash, Faker version) stored inside it; a stale or missing world is rebuilt. It is
written to a temporary file and renamed into place, so a reader never sees half a world and a
crash leaves the old one. Trials and tool calls work on private copies, never on the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EBenchError
from ..paths import worlds_dir
from .domain import Domain
from .fill import TableFill, fill
from .repair import CheckResult, validate_and_repair
from .schema import INTERNAL_PREFIX
from .tools import ToolKind

META_TABLE = f"{INTERNAL_PREFIX}_build"


class WorldError(EBenchError, RuntimeError):
    """A world that cannot be opened or built."""


@dataclass
class BuildReport:
    domain: str
    seed: int
    path: str
    fingerprint: str
    seconds: float
    tables: list[TableFill]
    checks: list[CheckResult]
    built: bool = True  # False when an up-to-date world was already there

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    @property
    def repaired(self) -> int:
        return sum(c.repaired for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rows"] = self.rows
        data["repaired"] = self.repaired
        return data


def fingerprint(domain: Domain, seed: int) -> str:
    from importlib.metadata import version

    # Everything that shapes the content: code, seed, clock, Faker (version and locales), DDL.
    parts = [
        domain.name,
        domain.version,
        str(seed),
        domain.now,
        domain.code_fingerprint(),
        version("faker"),
        ",".join(domain.faker_locales),
    ]
    parts.extend(domain.schema.ddl())
    parts.extend(repr(index) for index in domain.search_indexes)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def world_path(domain: Domain, seed: int | None = None) -> Path:
    """Each (domain, seed) is its own file: a world built with another seed never replaces the
    default one (`music.sqlite`, `music-seed7.sqlite`)."""
    if seed is None or seed == domain.default_seed:
        return worlds_dir() / f"{domain.name}.sqlite"
    return worlds_dir() / f"{domain.name}-seed{seed}.sqlite"


def built_seeds(domain: Domain) -> list[int]:
    """The seeds of the worlds present in the data directory (the default one first)."""
    seeds = [domain.default_seed] if world_path(domain).exists() else []
    for path in sorted(worlds_dir().glob(f"{domain.name}-seed*.sqlite")):
        tail = path.stem[len(domain.name) + len("-seed") :]
        if tail.lstrip("-").isdigit() and int(tail) != domain.default_seed:
            seeds.append(int(tail))
    return seeds


def read_meta(path: Path) -> dict[str, str]:
    """The build metadata stored in a world file; empty if there is none or it is unreadable."""
    if not path.exists():
        return {}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return dict(conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall())
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return {}


def build_world(
    domain: Domain,
    seed: int | None = None,
    path: Path | None = None,
    on_table: Callable[[TableFill], None] | None = None,
) -> BuildReport:
    """Build `domain`'s world from scratch into `path` (default: the data directory)."""
    seed = domain.default_seed if seed is None else seed
    path = path or world_path(domain, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    # Private to this process and thread until renamed into place: two threads building one world
    # (concurrent trials opening it first) must not share a file.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    fp = fingerprint(domain, seed)
    conn: sqlite3.Connection | None = None
    try:  # from the connect on: the connect itself makes the file
        conn = sqlite3.connect(tmp, isolation_level=None)
        # The file is private until renamed into place, so durability during the build is moot.
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("BEGIN")
        for statement in domain.schema.ddl():
            conn.execute(statement)
        tables = fill(conn, domain.schema, domain.generators, seed, domain.now, domain.faker_locales, on_table)
        checks = validate_and_repair(conn, domain.checks, domain.now)
        for index in domain.search_indexes:
            index.build(conn)
        orphans = conn.execute("PRAGMA foreign_key_check").fetchall()
        if orphans:
            raise WorldError(f"{domain.name}: {len(orphans)} rows violate foreign keys after repair")
        content = content_hash(conn)[:24]
        conn.execute(f"CREATE TABLE {META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        meta = {
            "domain": domain.name,
            "version": domain.version,
            "seed": str(seed),
            "fingerprint": fp,
            "content": content,
            "now": domain.now,
        }
        conn.executemany(f"INSERT INTO {META_TABLE} VALUES (?, ?)", sorted(meta.items()))
        conn.execute("COMMIT")
        conn.execute("VACUUM")  # compact and canonical: the same seed gives the same bytes
        conn.execute("ANALYZE")
        conn.close()
        digest_tmp = digest_path(tmp)
        digest_tmp.write_text(file_digest(tmp) + "\n", encoding="ascii")
        os.replace(tmp, path)
        os.replace(digest_tmp, digest_path(path))
    except BaseException:  # ctrl+c at any point before the world is in place leaves no temporary file
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):  # a close that fails must not keep the file
                conn.close()
        tmp.unlink(missing_ok=True)
        digest_path(tmp).unlink(missing_ok=True)
        raise
    return BuildReport(domain.name, seed, str(path), fp, time.perf_counter() - started, tables, checks)


def digest_path(path: Path) -> Path:
    """The world's content check: the SHA-256 of its bytes, written beside it at build time."""
    return path.with_name(path.name + ".sha256")


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def world_state(domain: Domain, seed: int | None = None, path: Path | None = None) -> str:
    """ "current", "missing", "stale" (built by other code, another seed, or before worlds carried a
    digest) or "damaged" (its bytes
    no longer match the digest taken at build time: a damaged world is never used). The check
    hashes the file, a few milliseconds for these worlds."""
    seed = domain.default_seed if seed is None else seed
    path = path or world_path(domain, seed)
    if not path.exists():
        return "missing"
    meta = read_meta(path)
    if meta.get("fingerprint") != fingerprint(domain, seed) or "content" not in meta:
        return "stale"  # other code or seed, or built before worlds recorded their content
    try:
        recorded = digest_path(path).read_text(encoding="ascii").strip()
    except OSError:
        return "stale"  # built before worlds carried a digest: rebuilt, like other old worlds
    return "current" if recorded == file_digest(path) else "damaged"


def is_current(domain: Domain, seed: int | None = None, path: Path | None = None) -> bool:
    return world_state(domain, seed, path) == "current"


def ensure_world(domain: Domain, seed: int | None = None, force: bool = False) -> Path:
    """The path of an up-to-date world for (`domain`, `seed`), building it if missing or stale."""
    path = world_path(domain, seed)
    if force or not is_current(domain, seed, path):
        with _building(path):  # a thread that waited finds the world another one just built
            if force or not is_current(domain, seed, path):
                build_world(domain, seed, path)
    return path


_BUILD_LOCKS: dict[Path, threading.Lock] = {}
_BUILD_LOCKS_GUARD = threading.Lock()


def _building(path: Path) -> threading.Lock:
    """The lock of one world file: within a process, one thread builds it at a time."""
    with _BUILD_LOCKS_GUARD:
        return _BUILD_LOCKS.setdefault(path, threading.Lock())


def world_id(domain: Domain, seed: int | None = None) -> str:
    """What identifies a world to the tasks and sessions made on it: a hash of its rows (built if
    needed). Unlike the build fingerprint it does not change when the code is refactored or
    reformatted without changing a row."""
    return read_meta(ensure_world(domain, seed))["content"]


def open_world_readonly(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise WorldError(f"no world at {path}")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)


def scratch_copy(path: Path) -> sqlite3.Connection:
    """A private in-memory copy of a world: changes to it never reach the file."""
    source = open_world_readonly(path)
    try:
        copy = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        source.backup(copy)
    finally:
        source.close()
    copy.execute("PRAGMA foreign_keys=ON")
    return copy


@dataclass
class TableStats:
    name: str
    columns: int
    rows: int
    foreign_keys: int


@dataclass
class WorldStats:
    domain: str
    path: str
    seed: int
    now: str
    tables: int
    columns: int
    foreign_keys: int
    rows: int
    cells: int
    users: int
    orphans: int
    tools: int
    read_tools: int
    write_tools: int
    per_table: list[TableStats] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def world_stats(domain: Domain, path: Path) -> WorldStats:
    conn = open_world_readonly(path)
    try:
        per_table = []
        for table in domain.schema.tables:
            rows = conn.execute(f"SELECT COUNT(*) FROM {table.name}").fetchone()[0]
            per_table.append(TableStats(table.name, len(table.columns), rows, len(table.foreign_keys)))
        orphans = len(conn.execute("PRAGMA foreign_key_check").fetchall())
        users = conn.execute(f"SELECT COUNT(*) FROM {domain.actor_table}").fetchone()[0]
        meta = dict(conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall())
    finally:
        conn.close()
    kinds = [t.kind for t in domain.tools]
    return WorldStats(
        domain=domain.name,
        path=str(path),
        seed=int(meta.get("seed", domain.default_seed)),
        now=domain.now,
        tables=len(per_table),
        columns=sum(t.columns for t in per_table),
        foreign_keys=sum(t.foreign_keys for t in per_table),
        rows=sum(t.rows for t in per_table),
        cells=sum(t.rows * t.columns for t in per_table),
        users=users,
        orphans=orphans,
        tools=len(kinds),
        read_tools=kinds.count(ToolKind.READ),
        write_tools=kinds.count(ToolKind.WRITE),
        per_table=per_table,
    )


def content_hash(conn: sqlite3.Connection, tables: list[str] | None = None) -> str:
    """A hash of every row of every world table, in key order: equal hashes, equal content."""
    digest = hashlib.sha256()
    names = tables or [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            f"AND name NOT LIKE '{INTERNAL_PREFIX}%' ORDER BY name"
        )
    ]
    for name in names:
        digest.update(f"[{name}]".encode())
        width = len(conn.execute(f"PRAGMA table_info({name})").fetchall())
        order = ", ".join(str(i) for i in range(1, width + 1))
        for row in conn.execute(f"SELECT * FROM {name} ORDER BY {order}"):
            digest.update(repr(row).encode())
    return digest.hexdigest()
