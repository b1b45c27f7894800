"""Fuzzing of every music tool (the harness is in fuzzing.py), plus checks of the harness itself."""

from __future__ import annotations

from fuzzing import fuzz_suite

ACTOR = 1

# Mostly ids that make the product rules bite: the actor's own playlists and songs already in
# them or in the favourites, expired songs; a few others for the forbidden/not-mine paths.
ID_POOLS = {
    "song_id": "SELECT id FROM songs WHERE id <= 10 OR copyright_status = 'expired' AND id < 1500 "
    "OR id IN (SELECT song_id FROM favourite_songs WHERE user_id = :a) "
    "OR id IN (SELECT song_id FROM playlist_songs WHERE playlist_id IN (SELECT id FROM playlists WHERE owner_id = :a))",
    "playlist_id": "SELECT id FROM playlists WHERE owner_id = :a "
    "OR id IN (SELECT MIN(id) FROM playlists WHERE owner_id != :a GROUP BY is_public)",
    "artist_id": "SELECT id FROM artists WHERE id <= 20 OR id IN (SELECT artist_id FROM followed_artists WHERE user_id = :a)",
    "album_id": "SELECT id FROM albums WHERE id <= 20 OR id IN (SELECT album_id FROM saved_albums WHERE user_id = :a)",
    "comment_id": "SELECT id FROM comments WHERE user_id = :a OR id <= 20 OR parent_id IS NOT NULL AND id < 1300",
    "reply_to_comment_id": "SELECT id FROM comments WHERE id <= 40",
}

globals().update(
    fuzz_suite(
        "music",
        actor=ACTOR,
        id_pools=ID_POOLS,
        odd_texts=["2024-02-30", "2024-5-1", "2024-01-01", "2026-10-15", "love", "Pop", "pop", "chill", "Instrumental"],
        boundary_lengths=[59, 60, 61, 499, 500, 501],  # playlist names stop at 60 characters, comments at 500
    )
)


def test_the_fuzz_world_offers_every_kind_of_id(fuzz_world):
    conn, pools = fuzz_world
    playlists = pools["playlist_id"]
    owners = {r[0] for r in conn.execute(f"SELECT owner_id FROM playlists WHERE id IN ({','.join(map(str, playlists))})")}
    assert ACTOR in owners and len(owners) > 1
    songs = ",".join(map(str, pools["song_id"]))
    assert conn.execute(f"SELECT COUNT(*) FROM songs WHERE id IN ({songs}) AND copyright_status = 'expired'").fetchone()[0] > 0


def test_the_change_log_sees_writes_and_forgets_rolled_back_ones(music, fuzz_world):
    conn, _ = fuzz_world
    env = music.env(conn, ACTOR)
    conn.execute("SAVEPOINT probe")
    try:
        assert music.tools.call(env, "create_playlist", {"name": "logged"}).ok
        assert conn.execute("SELECT COUNT(*) FROM change_log").fetchone()[0] == 1
        assert not music.tools.call(env, "create_playlist", {"name": "logged"}).ok  # refused: conflict
        assert conn.execute("SELECT COUNT(*) FROM change_log").fetchone()[0] == 1
    finally:
        conn.execute("ROLLBACK TO probe")
        conn.execute("RELEASE probe")
