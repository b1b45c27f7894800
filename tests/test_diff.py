"""Change capture on a trial copy: the tracker's net diff, checked against a full comparison."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebench.engine.world import open_world_readonly, scratch_copy
from ebench.tasks.diff import ChangeTracker, diff_from_list, full_diff

ACTOR = 1


@pytest.fixture()
def trial(music, music_world):
    conn = scratch_copy(music_world)
    tracker = ChangeTracker(conn, music.schema)
    yield conn, tracker
    conn.close()


def _licensed(conn: sqlite3.Connection, n: int, offset: int = 0) -> list[int]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM songs WHERE copyright_status = 'licensed' AND id NOT IN "
            "(SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY id LIMIT ? OFFSET ?",
            (ACTOR, n, offset),
        )
    ]


def test_no_change_gives_an_empty_diff(trial, music):
    conn, tracker = trial
    env = music.env(conn, ACTOR)
    assert music.tools.call(env, "search_songs", {"query": "love"}).ok
    assert len(tracker.diff()) == 0


def test_inserts_updates_and_deletes_with_old_and_new_values(trial, music):
    conn, tracker = trial
    env = music.env(conn, ACTOR)
    playlist = conn.execute("SELECT id, name FROM playlists WHERE owner_id = ? ORDER BY id LIMIT 1", (ACTOR,)).fetchone()
    created = music.tools.call(env, "create_playlist", {"name": "Diff test"}).value["playlist_id"]
    assert music.tools.call(env, "update_playlist", {"playlist_id": playlist[0], "name": "Renamed"}).ok
    song = _licensed(conn, 1)[0]
    assert music.tools.call(env, "favourite_song", {"song_id": song}).ok
    diff = tracker.diff()
    by = {(c.table, c.op): c for c in diff}
    assert by[("playlists", "insert")].new["name"] == "Diff test" and by[("playlists", "insert")].key == {"id": created}
    rename = [c for c in diff if c.table == "playlists" and c.op == "update"][0]
    assert rename.key == {"id": playlist[0]}
    assert rename.old["name"] == playlist[1] and rename.new["name"] == "Renamed"
    assert rename.new["updated_at"] == music.now  # the frozen clock: deterministic
    assert set(rename.new) == {"name", "updated_at"}  # only what changed
    assert by[("favourite_songs", "insert")].key == {"user_id": ACTOR, "song_id": song}
    assert by[("songs", "update")].new["favourite_count"] == by[("songs", "update")].old["favourite_count"] + 1


def test_insert_then_delete_cancels_and_updates_fold(trial, music):
    conn, tracker = trial
    env = music.env(conn, ACTOR)
    created = music.tools.call(env, "create_playlist", {"name": "Short-lived"}).value["playlist_id"]
    assert music.tools.call(env, "delete_playlist", {"playlist_id": created}).ok
    song = _licensed(conn, 1)[0]
    assert music.tools.call(env, "favourite_song", {"song_id": song}).ok
    assert music.tools.call(env, "unfavourite_song", {"song_id": song}).ok
    assert len(tracker.diff()) == 0  # the favourite count went up and back: no net change
    playlist = conn.execute("SELECT id, name FROM playlists WHERE owner_id = ? LIMIT 1", (ACTOR,)).fetchone()
    for name in ("one", "two", "three"):
        assert music.tools.call(env, "update_playlist", {"playlist_id": playlist[0], "name": name}).ok
    (change,) = tracker.diff()
    assert change.op == "update" and change.old["name"] == playlist[1] and change.new == {"name": "three", "updated_at": music.now}


def test_a_reused_generated_id_is_a_delete_plus_an_insert(trial, music):
    conn, tracker = trial
    env = music.env(conn, ACTOR)
    top = conn.execute("SELECT MAX(id) FROM playlists").fetchone()[0]
    owner = conn.execute("SELECT owner_id FROM playlists WHERE id = ?", (top,)).fetchone()[0]
    env = music.env(conn, owner)
    assert music.tools.call(env, "delete_playlist", {"playlist_id": top}).ok
    created = music.tools.call(env, "create_playlist", {"name": "Takes the id"}).value["playlist_id"]
    assert created == top  # SQLite reused the id
    ops = sorted(c.op for c in tracker.diff() if c.table == "playlists")
    assert ops == ["delete", "insert"]


def test_a_natural_key_deleted_and_added_again_is_no_change(trial, music):
    conn, tracker = trial
    env = music.env(conn, ACTOR)
    song = conn.execute("SELECT song_id FROM favourite_songs WHERE user_id = ? LIMIT 1", (ACTOR,)).fetchone()[0]
    assert music.tools.call(env, "unfavourite_song", {"song_id": song}).ok
    assert music.tools.call(env, "favourite_song", {"song_id": song}).ok
    changes = [c for c in tracker.diff() if c.table == "favourite_songs"]
    # The favourite is back; only its timestamp moved (now instead of the original date).
    assert [c.op for c in changes] in ([], ["update"])
    if changes:
        assert set(changes[0].new) == {"favourited_at"}


def test_the_diff_round_trips_through_json(trial, music):
    conn, tracker = trial
    env = music.env(conn, ACTOR)
    music.tools.call(env, "create_playlist", {"name": "Round trip"})
    diff = tracker.diff()
    assert diff_from_list(diff.to_list()).to_list() == diff.to_list()


def test_the_world_file_is_untouched_by_the_tracker(music, music_world):
    before = music_world.read_bytes()
    conn = scratch_copy(music_world)
    ChangeTracker(conn, music.schema)
    music.tools.call(music.env(conn, ACTOR), "create_playlist", {"name": "x"})
    conn.close()
    assert music_world.read_bytes() == before


# A random walk over the music write tools: the tracker's diff must equal the full comparison.
WRITES = st.lists(
    st.tuples(
        st.sampled_from(["create", "delete_own", "add", "remove", "fav", "unfav", "follow", "unfollow", "rename", "comment"]),
        st.integers(0, 30),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=WRITES)
def test_tracker_diff_equals_the_full_comparison(music, music_world, steps):
    conn = scratch_copy(music_world)
    tracker = ChangeTracker(conn, music.schema)
    env = music.env(conn, ACTOR)
    songs = _licensed(conn, 40)
    artists = [r[0] for r in conn.execute("SELECT id FROM artists ORDER BY id LIMIT 40")]
    for action, n in steps:
        mine = [r[0] for r in conn.execute("SELECT id FROM playlists WHERE owner_id = ? ORDER BY id", (ACTOR,))]
        pl = mine[n % len(mine)] if mine else 0
        call = {
            "create": ("create_playlist", {"name": f"walk {n}"}),
            "delete_own": ("delete_playlist", {"playlist_id": pl}),
            "add": ("add_song_to_playlist", {"playlist_id": pl, "song_id": songs[n % 40]}),
            "remove": ("remove_song_from_playlist", {"playlist_id": pl, "song_id": songs[n % 40]}),
            "fav": ("favourite_song", {"song_id": songs[n % 40]}),
            "unfav": ("unfavourite_song", {"song_id": songs[n % 40]}),
            "follow": ("follow_artist", {"artist_id": artists[n % 40]}),
            "unfollow": ("unfollow_artist", {"artist_id": artists[n % 40]}),
            "rename": ("update_playlist", {"playlist_id": pl, "name": f"renamed {n}"}),
            "comment": ("post_comment", {"song_id": songs[n % 40], "content": f"note {n}"}),
        }[action]
        music.tools.call(env, *call)  # refusals are fine: they change nothing
    world = open_world_readonly(music_world)
    try:
        assert tracker.diff().to_list() == full_diff(world, conn, music.schema).to_list()
    finally:
        world.close()
        conn.close()
