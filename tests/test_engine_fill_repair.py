"""Seeded filling with foreign keys enforced, and validation/repair rules."""

from __future__ import annotations

import sqlite3

import pytest

from ebench.engine.fill import FillError, derive_seed, fill
from ebench.engine.repair import Aggregate, NotAfterNow, NotBefore, RepairError, Rule, validate_and_repair
from ebench.engine.schema import INTEGER, TEXT, Column, Schema, Table

NOW = "2026-01-01 12:00:00"

SCHEMA = Schema(
    (
        Table(
            "posts",
            "",
            (
                Column("id", INTEGER, primary_key=True),
                Column("author_id", INTEGER, not_null=True, references="authors"),
                Column("created_at", TEXT, not_null=True),
                Column("like_count", INTEGER, not_null=True, default=0),
            ),
        ),
        Table(
            "authors",
            "",
            (Column("id", INTEGER, primary_key=True), Column("name", TEXT, not_null=True), Column("joined_at", TEXT, not_null=True)),
        ),
        Table(
            "likes",
            "",
            (
                Column("post_id", INTEGER, references="posts"),
                Column("author_id", INTEGER, references="authors"),
                Column("liked_at", TEXT, not_null=True),
            ),
            primary_key=("post_id", "author_id"),
        ),
    )
)


def authors(ctx):
    for i in range(1, 11):
        yield {"id": i, "name": ctx.faker.name(), "joined_at": f"2024-0{1 + ctx.rng.randrange(9)}-01 00:00:00"}


def posts(ctx):
    ids = ctx.ids("authors")  # parents are drawn from rows that exist
    for i in range(1, 41):
        yield {"id": i, "author_id": ctx.rng.choice(ids), "created_at": f"2023-0{1 + ctx.rng.randrange(9)}-15 10:00:00"}


def likes(ctx):
    seen = set()
    for post in ctx.rows("posts", "id, created_at"):
        for author in ctx.rng.sample(ctx.ids("authors"), 3):
            if (post["id"], author) not in seen:
                seen.add((post["id"], author))
                yield {"post_id": post["id"], "author_id": author, "liked_at": "2022-01-01 00:00:00"}


GENERATORS = {"authors": authors, "posts": posts, "likes": likes}


def _fresh() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("PRAGMA foreign_keys=ON")
    for statement in SCHEMA.ddl():
        conn.execute(statement)
    return conn


def _dump(conn: sqlite3.Connection) -> list:
    return [conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in ("authors", "posts", "likes")]


def test_fill_follows_topological_order_and_reports_rows():
    conn = _fresh()
    seen = []
    result = fill(conn, SCHEMA, GENERATORS, seed=7, now=NOW, faker_locales=["en_US"], on_table=lambda t: seen.append(t.table))
    assert seen == ["authors", "posts", "likes"]  # posts is declared first but depends on authors
    assert [r.rows for r in result] == [10, 40, 120]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_same_seed_same_content_other_seed_other_content():
    a, b, c = _fresh(), _fresh(), _fresh()
    fill(a, SCHEMA, GENERATORS, 7, NOW, ["en_US"])
    fill(b, SCHEMA, GENERATORS, 7, NOW, ["en_US"])
    fill(c, SCHEMA, GENERATORS, 8, NOW, ["en_US"])
    assert _dump(a) == _dump(b)
    assert _dump(a) != _dump(c)
    assert derive_seed(7, "posts") == derive_seed(7, "posts") != derive_seed(7, "likes")


def test_foreign_keys_are_enforced_during_fill():
    def orphan_posts(ctx):
        yield {"id": 1, "author_id": 999, "created_at": NOW}

    conn = _fresh()
    with pytest.raises(FillError, match=r"'posts' refused row .*author_id': 999.*FOREIGN KEY"):
        fill(conn, SCHEMA, {**GENERATORS, "posts": orphan_posts}, 1, NOW, ["en_US"])


def test_generators_must_match_the_schema():
    with pytest.raises(FillError, match="no generator for: likes"):
        fill(_fresh(), SCHEMA, {"authors": authors, "posts": posts}, 1, NOW, ["en_US"])
    with pytest.raises(FillError, match="unknown columns"):
        fill(
            _fresh(), SCHEMA, {**GENERATORS, "authors": lambda ctx: [{"id": 1, "name": "x", "joined_at": NOW, "age": 3}]}, 1, NOW, ["en_US"]
        )


CHECKS = [
    NotBefore("posts", "created_at", "author_id", "authors", "joined_at", key="id"),
    NotBefore("likes", "liked_at", "post_id", "posts", "created_at"),
    NotAfterNow("authors", "joined_at"),
    Aggregate("posts", "like_count", "likes", "post_id"),
]


def test_repair_fixes_chronology_clock_and_aggregates_and_counts_them():
    conn = _fresh()
    fill(conn, SCHEMA, GENERATORS, 3, NOW, ["en_US"])
    conn.execute("UPDATE authors SET joined_at = '2030-01-01 00:00:00' WHERE id = 1")  # in the future
    results = validate_and_repair(conn, CHECKS, NOW)
    by_name = {r.name: r for r in results}
    # Posts were dated 2023 but authors joined in 2024: all moved after their author's joining.
    assert by_name["posts.created_at >= authors.joined_at"].repaired == 40
    assert by_name["likes.liked_at >= posts.created_at"].repaired == 120
    assert by_name["authors.joined_at <= now"].repaired == 1
    assert by_name["posts.like_count = count of likes"].repaired == 40
    assert all(r.checked > 0 for r in results)
    # The world is now consistent, and a second pass repairs nothing.
    bad = conn.execute(
        "SELECT COUNT(*) FROM posts p JOIN authors a ON a.id = p.author_id WHERE p.created_at < a.joined_at OR p.created_at > ?", (NOW,)
    ).fetchone()[0]
    assert bad == 0
    assert (
        conn.execute("SELECT COUNT(*) FROM posts WHERE like_count != (SELECT COUNT(*) FROM likes WHERE post_id = posts.id)").fetchone()[0]
        == 0
    )
    assert all(r.repaired == 0 for r in validate_and_repair(conn, CHECKS, NOW))


def test_repair_is_deterministic():
    a, b = _fresh(), _fresh()
    for conn in (a, b):
        fill(conn, SCHEMA, GENERATORS, 5, NOW, ["en_US"])
        validate_and_repair(conn, CHECKS, NOW)
    assert _dump(a) == _dump(b)


def test_rules_that_fight_each_other_fail_loudly():
    conn = _fresh()
    fill(conn, SCHEMA, GENERATORS, 3, NOW, ["en_US"])
    flip = Rule(
        "always wrong", "a rule whose fix never satisfies it", "posts", "like_count >= 0", "UPDATE posts SET like_count = like_count + 1"
    )
    with pytest.raises(RepairError, match="always wrong"):
        validate_and_repair(conn, [flip], NOW, max_rounds=3)


def test_a_verify_only_rule_passes_when_kept_and_fails_the_build_when_broken():
    conn = _fresh()
    fill(conn, SCHEMA, GENERATORS, 3, NOW, ["en_US"])
    guarded = Rule("posts have authors", "verified only", "posts", "author_id IS NULL", None)
    (result,) = validate_and_repair(conn, [guarded], NOW)
    assert result.repaired == 0 and result.checked == 40
    broken = Rule("no likes at all", "verified only", "likes", "1", None)
    with pytest.raises(RepairError, match="no likes at all.*cannot be repaired"):
        validate_and_repair(conn, [broken], NOW)


def test_music_repair_rules_fix_injected_damage(music, music_conn):
    """Break the built music world in ways the rules cover; repair must restore it."""
    conn = music_conn
    song, album = conn.execute("SELECT id, album_id FROM songs LIMIT 1").fetchone()
    playlist = conn.execute("SELECT id FROM playlists WHERE song_count > 3 LIMIT 1").fetchone()[0]
    conn.execute("UPDATE songs SET release_date = '1900-01-01' WHERE id = ?", (song,))
    conn.execute("UPDATE playlists SET song_count = 999, updated_at = '2000-01-01 00:00:00' WHERE id = ?", (playlist,))
    conn.execute("UPDATE users SET vip_level = 2, vip_expires_at = '2020-01-01 00:00:00' WHERE id = 1")
    conn.execute("UPDATE comments SET created_at = '2099-01-01 00:00:00' WHERE id = 1")
    # A gap and a tie in one playlist's positions.
    conn.execute("UPDATE playlist_songs SET position = position + 7 WHERE playlist_id = ? AND position > 2", (playlist,))
    conn.execute("UPDATE playlist_songs SET position = 1 WHERE playlist_id = ? AND position = 2", (playlist,))
    results = {r.name: r.repaired for r in validate_and_repair(conn, music.checks, music.now)}
    assert results["songs.release_date >= albums.release_date"] >= 1
    assert results["playlists.song_count = count of playlist_songs"] >= 1
    assert results["vip level matches membership"] >= 1
    assert results["comments.created_at <= now"] >= 1
    assert results["playlist positions contiguous"] >= 2
    positions = [r[0] for r in conn.execute("SELECT position FROM playlist_songs WHERE playlist_id = ? ORDER BY position", (playlist,))]
    assert positions == list(range(1, len(positions) + 1))
    album_date = conn.execute("SELECT release_date FROM albums WHERE id = ?", (album,)).fetchone()[0]
    assert conn.execute("SELECT release_date FROM songs WHERE id = ?", (song,)).fetchone()[0] >= album_date
    assert (
        conn.execute("SELECT song_count FROM playlists WHERE id = ?", (playlist,)).fetchone()[0]
        == conn.execute("SELECT COUNT(*) FROM playlist_songs WHERE playlist_id = ?", (playlist,)).fetchone()[0]
    )
    assert conn.execute("SELECT vip_level FROM users WHERE id = 1").fetchone()[0] == 0
    assert conn.execute("SELECT created_at FROM comments WHERE id = 1").fetchone()[0] <= music.now
