"""Worlds: deterministic builds, fingerprints and rebuilds, private copies, statistics."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ebench.engine.world import (
    META_TABLE,
    build_world,
    content_hash,
    digest_path,
    ensure_world,
    fingerprint,
    is_current,
    read_meta,
    scratch_copy,
    world_path,
    world_state,
    world_stats,
)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def twin_builds(music, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("twins")
    a = build_world(music, path=tmp / "a.sqlite")
    b = build_world(music, path=tmp / "b.sqlite")
    c = build_world(music, seed=music.default_seed + 1, path=tmp / "c.sqlite")
    return a, b, c


def test_same_seed_gives_byte_identical_worlds(twin_builds):
    a, b, c = twin_builds
    assert _sha(Path(a.path)) == _sha(Path(b.path))
    with sqlite3.connect(a.path) as ca, sqlite3.connect(b.path) as cb:
        assert content_hash(ca) == content_hash(cb)


def test_another_seed_gives_another_world(twin_builds):
    a, _, c = twin_builds
    with sqlite3.connect(a.path) as ca, sqlite3.connect(c.path) as cc:
        assert content_hash(ca) != content_hash(cc)
    assert a.fingerprint != c.fingerprint


def test_build_report_and_metadata(music, twin_builds):
    a = twin_builds[0]
    assert a.rows >= 18_000
    assert [t.table for t in a.tables] == music.schema.fill_order()
    assert a.repaired > 0  # the generators leave work for the repair rules, and the report says so
    assert len(a.checks) == len(music.checks)
    meta = read_meta(Path(a.path))
    assert meta["fingerprint"] == fingerprint(music, music.default_seed)
    assert meta["seed"] == str(music.default_seed)
    assert not list(Path(a.path).parent.glob(".*.tmp"))  # built aside, then renamed into place


def test_no_orphans_and_no_violated_constraints(music_world):
    conn = sqlite3.connect(music_world)
    conn.execute("PRAGMA foreign_keys=ON")
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_world_is_consistent_after_build(music, music_conn):
    """Every repair rule holds on the built world."""
    for check in music.checks:
        assert check.violations(music_conn, music.now) == 0, check.name


def test_ensure_world_builds_once_and_rebuilds_when_stale(music, ebench_home, music_world):
    assert music_world == world_path(music)
    assert str(music_world).startswith(str(ebench_home))  # EBENCH_HOME decides where worlds live
    stamp = music_world.stat().st_mtime_ns
    assert ensure_world(music) == music_world
    assert music_world.stat().st_mtime_ns == stamp  # up to date: not rebuilt
    # A new domain version (or edited generator code) changes the fingerprint: the world is stale.
    bumped = dataclasses.replace(music, version=music.version + "-test")
    assert not is_current(bumped)
    assert is_current(music)
    # Another seed, another clock or edited generator code make it stale too.
    assert not is_current(music, seed=music.default_seed + 1)
    assert not is_current(dataclasses.replace(music, now="2027-01-01 00:00:00"))
    edited = music_world.parent / "edited_generator.py"
    edited.write_text("# a changed generator\n")
    assert not is_current(dataclasses.replace(music, source_files=[*music.source_files, edited]))


def test_a_corrupt_world_file_is_rebuilt(music, tmp_path, monkeypatch):
    monkeypatch.setenv("EBENCH_HOME", str(tmp_path))
    path = world_path(music)
    path.write_bytes(b"this is not a database")
    assert read_meta(path) == {}
    assert ensure_world(music) == path
    assert read_meta(path)["fingerprint"] == fingerprint(music, music.default_seed)


def test_threads_that_open_a_missing_world_at_once_build_it_once(music, tmp_path, monkeypatch):
    """Concurrent trials (an Inspect eval, RL rollouts) may all be first to open a world: one builds
    it, the others wait for it and use it; none sees a half-built file."""
    from concurrent.futures import ThreadPoolExecutor

    import ebench.engine.world as world

    monkeypatch.setenv("EBENCH_HOME", str(tmp_path))
    builds = []
    real_build = world.build_world
    monkeypatch.setattr(world, "build_world", lambda *a, **k: builds.append(1) or real_build(*a, **k))
    with ThreadPoolExecutor(8) as pool:
        paths = list(pool.map(lambda _: ensure_world(music), range(8)))
    assert paths == [world_path(music)] * 8
    assert builds == [1]
    assert world_state(music) == "current"
    assert [p.name for p in tmp_path.rglob("*.tmp")] == []


def test_a_world_damaged_inside_is_detected_and_rebuilt_never_used(music, music_world, tmp_path):
    """4 KB overwritten in the middle of the file: the build fingerprint still matches, the digest
    taken at build time does not."""
    home = tmp_path / "home"
    (home / "worlds").mkdir(parents=True)
    path = home / "worlds" / music_world.name
    shutil.copy(music_world, path)
    shutil.copy(digest_path(music_world), digest_path(path))
    assert world_state(music, path=path) == "current"
    intact = path.read_bytes()
    with path.open("r+b") as handle:
        handle.seek(len(intact) // 2)
        handle.write(b"\xa5" * 4096)
    assert read_meta(path)["fingerprint"] == fingerprint(music, music.default_seed)  # the old check passes
    assert world_state(music, path=path) == "damaged"
    env = {**os.environ, "EBENCH_HOME": str(home)}
    listed = subprocess.run(
        [sys.executable, "-m", "ebench", "domains", "list", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert next(r for r in json.loads(listed.stdout) if r["name"] == "music")["state"] == "damaged"
    # a batch in a fresh process rebuilds it before the first trial, and every trial passes
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "ebench",
            "run",
            "--batch",
            "--solver",
            "oracle",
            "--domain",
            "music",
            "--out",
            str(tmp_path / "run"),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert summary["passed"] == summary["scored"] > 0 and summary["infra_errors"] == 0
    assert world_state(music, path=path) == "current" and path.read_bytes() == intact


def test_scratch_copy_is_private(music_world):
    before = _sha(music_world)
    copy = scratch_copy(music_world)
    copy.execute("DELETE FROM comment_likes")
    copy.execute("UPDATE songs SET title = 'changed'")
    other = scratch_copy(music_world)
    assert other.execute("SELECT COUNT(*) FROM comment_likes").fetchone()[0] > 0
    assert _sha(music_world) == before
    # The world file is opened read-only for copying: it cannot be written through that path.
    ro = sqlite3.connect(f"file:{music_world}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError):
        ro.execute("DELETE FROM songs")


def test_stats_count_what_is_in_the_file(music, music_world):
    stats = world_stats(music, music_world)
    conn = sqlite3.connect(music_world)
    rows = sum(conn.execute(f"SELECT COUNT(*) FROM {t.name}").fetchone()[0] for t in music.schema.tables)
    assert stats.rows == rows
    assert stats.tables == len(music.schema.tables) == 16
    assert stats.foreign_keys == len(music.schema.foreign_keys)
    assert stats.columns == music.schema.column_count
    assert stats.cells == sum(t.rows * t.columns for t in stats.per_table)
    assert stats.users == conn.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 54
    assert stats.orphans == 0
    assert 25 <= stats.tools <= 33 and stats.write_tools >= 8
    assert 18_000 <= stats.rows <= 29_400
    # Internal tables (build metadata, search index) are not counted as the world's.
    assert META_TABLE not in {t.name for t in stats.per_table}


def test_content_hash_sees_every_change(music_conn):
    before = content_hash(music_conn)
    music_conn.execute("UPDATE playlist_songs SET position = position WHERE 0")
    assert content_hash(music_conn) == before
    music_conn.execute("UPDATE playlist_songs SET added_at = '2020-01-01 00:00:00' WHERE rowid = 1")
    assert content_hash(music_conn) != before
