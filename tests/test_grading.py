"""Grading a trial's diff against the expected one: the rules in the README (Tasks, "Grading"), and property tests.

The property tests replay a reference solution on the real music world in another valid order
and with other id allocation: it must still pass. Dropping one change or adding one must fail.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebench.engine.world import scratch_copy
from ebench.tasks.diff import ChangeTracker, Diff, RowChange
from ebench.tasks.grading import grade

ACTOR = 1


def _world_facts(conn: sqlite3.Connection) -> dict:
    q = lambda sql, *p: [r[0] for r in conn.execute(sql, p)]  # noqa: E731
    songs = q(
        "SELECT id FROM songs WHERE copyright_status = 'licensed' AND id NOT IN "
        "(SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY id LIMIT 12",
        ACTOR,
    )
    artists = q(
        "SELECT id FROM artists WHERE id NOT IN (SELECT artist_id FROM followed_artists WHERE user_id = ?) ORDER BY id LIMIT 3", ACTOR
    )
    own = q("SELECT id FROM playlists WHERE owner_id = ? ORDER BY id", ACTOR)
    return {"songs": songs, "artists": artists, "delete": own[0], "rename": own[1]}


def reference_steps(facts: dict) -> list[tuple[str, dict]]:
    """A task's reference solution: two new playlists with songs, favourites, follows, a delete and a rename.
    `$Name` stands for the id of the playlist created under that name."""
    s = facts["songs"]
    return [
        ("create_playlist", {"name": "Road trip"}),
        *[("add_song_to_playlist", {"playlist_id": "$Road trip", "song_id": song}) for song in s[0:4]],
        ("create_playlist", {"name": "Gym"}),
        *[("add_song_to_playlist", {"playlist_id": "$Gym", "song_id": song}) for song in s[4:7]],
        *[("favourite_song", {"song_id": song}) for song in s[7:10]],
        *[("follow_artist", {"artist_id": a}) for a in facts["artists"][:2]],
        ("delete_playlist", {"playlist_id": facts["delete"]}),
        ("update_playlist", {"playlist_id": facts["rename"], "name": "Renamed by the task"}),
    ]


def run(music, world_path, steps, *, burn_ids: int = 0) -> Diff:
    """Apply steps on a fresh copy; `burn_ids` shifts the ids SQLite will allocate to new rows."""
    conn = scratch_copy(world_path)
    if burn_ids:
        # A row with a higher id exists before the trial: every new id moves up. It is part of the
        # copy's starting state, so it is not a change of the trial.
        top = conn.execute("SELECT MAX(id) FROM playlists").fetchone()[0]
        conn.execute(
            "INSERT INTO playlists (id, owner_id, name, description, is_public, song_count, total_duration_sec, "
            "created_at, updated_at) SELECT ?, owner_id, 'burn', '', 1, 0, 0, created_at, updated_at FROM playlists "
            "WHERE id = ?",
            (top + burn_ids, top),
        )
    tracker = ChangeTracker(conn, music.schema)
    env = music.env(conn, ACTOR)
    created: dict[str, int] = {}
    for tool, args in steps:
        args = {k: created[v[1:]] if isinstance(v, str) and v.startswith("$") else v for k, v in args.items()}
        result = music.tools.call(env, tool, args)
        assert result.ok, (tool, args, result.error_message)
        if tool == "create_playlist":
            created[args["name"]] = result.value["playlist_id"]
    diff = tracker.diff()
    conn.close()
    return diff


@pytest.fixture(scope="module")
def reference(music, music_world):
    conn = scratch_copy(music_world)
    facts = _world_facts(conn)
    conn.close()
    steps = reference_steps(facts)
    return facts, steps, run(music, music_world, steps)


def test_the_reference_diff_has_every_kind_of_change(reference):
    _, _, expected = reference
    assert expected.counts()["insert"] >= 12 and expected.counts()["update"] >= 1 and expected.counts()["delete"] >= 1


def test_the_same_calls_pass_and_an_empty_trial_fails(music, music_world, reference):
    _, steps, expected = reference
    assert grade(expected, run(music, music_world, steps), music.schema).passed
    empty = grade(expected, Diff(), music.schema)
    assert not empty.passed and empty.recall == 0 and len(empty.missing) == len(expected)


def _valid_orders(steps: list[tuple[str, dict]]) -> st.SearchStrategy:
    """Permutations in which each playlist is created before songs are added to it."""

    def valid(order: list[int]) -> bool:
        seen: set[str] = set()
        for i in order:
            tool, args = steps[i]
            if tool == "create_playlist":
                seen.add(args["name"])
            elif isinstance(args.get("playlist_id"), str) and args["playlist_id"][1:] not in seen:
                return False
        return True

    def repair(order: list[int]) -> list[int]:
        # Move each creation in front of its first use: still a random valid order.
        order = list(order)
        for i, (tool, _) in enumerate(steps):
            if tool == "create_playlist":
                order.remove(i)
                name = steps[i][1]["name"]
                first_use = next(k for k, j in enumerate(order) if steps[j][1].get("playlist_id") == f"${name}")
                order.insert(first_use, i)
        assert valid(order)
        return order

    return st.permutations(range(len(steps))).map(repair)


SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(data=st.data())
def test_another_valid_order_and_other_ids_still_pass(music, music_world, reference, data):
    _, steps, expected = reference
    order = data.draw(_valid_orders(steps), label="order")
    burn = data.draw(st.sampled_from([0, 1, 7, 1000]), label="burn_ids")
    actual = run(music, music_world, [steps[i] for i in order], burn_ids=burn)
    result = grade(expected, actual, music.schema)
    assert result.passed, result.to_dict()


@SETTINGS
@given(data=st.data())
def test_dropping_one_change_fails(music, music_world, reference, data):
    _, steps, expected = reference
    actual = run(music, music_world, steps, burn_ids=data.draw(st.sampled_from([0, 5])))
    dropped = data.draw(st.integers(0, len(actual) - 1), label="dropped")
    partial = Diff([c for i, c in enumerate(actual.changes) if i != dropped])
    result = grade(expected, partial, music.schema)
    assert not result.passed
    assert result.missing or result.wrong


@SETTINGS
@given(extra=st.sampled_from(["favourite", "follow", "another song", "rename twice"]))
def test_one_extra_change_fails(music, music_world, reference, extra):
    facts, steps, expected = reference
    more = {
        "favourite": [("favourite_song", {"song_id": facts["songs"][10]})],
        "follow": [("follow_artist", {"artist_id": facts["artists"][2]})],
        "another song": [("add_song_to_playlist", {"playlist_id": "$Gym", "song_id": facts["songs"][11]})],
        "rename twice": [("update_playlist", {"playlist_id": facts["rename"], "name": "Something else"})],
    }[extra]
    result = grade(expected, run(music, music_world, steps + more), music.schema)
    assert not result.passed
    assert result.unexpected or result.wrong


def test_songs_under_the_wrong_new_playlist_fail_with_an_explanation(music, music_world, reference):
    facts, steps, expected = reference
    creates = [(t, a) for t, a in steps if t == "create_playlist"]
    swap = {"$Gym": "$Road trip", "$Road trip": "$Gym"}
    rest = [
        (t, {**a, "playlist_id": swap.get(a.get("playlist_id"), a.get("playlist_id"))}) if t == "add_song_to_playlist" else (t, a)
        for t, a in steps
        if t != "create_playlist"
    ]
    swapped = creates + rest
    result = grade(expected, run(music, music_world, swapped), music.schema)
    assert not result.passed
    assert 0 < result.precision < 1 and 0 < result.recall < 1
    columns = {(w.table, w.column) for w in result.wrong}
    assert ("playlists", "song_count") in columns or ("playlists", "name") in columns


def test_a_wrong_value_in_an_update_is_reported_with_expected_and_actual(music, music_world, reference):
    facts, steps, expected = reference
    edited = [(t, {**a, "name": "Renamed badly"}) if t == "update_playlist" else (t, a) for t, a in steps]
    result = grade(expected, run(music, music_world, edited), music.schema)
    assert not result.passed and not result.missing and not result.unexpected
    (wrong,) = result.wrong
    assert (wrong.table, wrong.column, wrong.expected, wrong.actual) == ("playlists", "name", "Renamed by the task", "Renamed badly")
    assert wrong.key == {"id": facts["rename"]}
    assert result.matched_rows == len(expected) - 1


def test_volatile_columns_are_ignored(music):
    base = dict(playlist_id=5, song_id=9, added_at="2026-10-15 20:30:00")
    expected = Diff([RowChange("playlist_songs", "insert", {"playlist_id": 5, "song_id": 9}, new={**base, "position": 3})])
    actual = Diff([RowChange("playlist_songs", "insert", {"playlist_id": 5, "song_id": 9}, new={**base, "position": 1})])
    assert music.schema.table("playlist_songs").column("position").volatile
    assert grade(expected, actual, music.schema).passed


def test_twin_new_rows_with_swapped_children_fail(music):
    """Two new playlists with equal content: which songs hang under which still matters."""

    def playlist(pid: int) -> RowChange:
        return RowChange(
            "playlists",
            "insert",
            {"id": pid},
            new={
                "id": pid,
                "owner_id": 1,
                "name": "Twin",
                "description": "",
                "is_public": 1,
                "song_count": 1,
                "total_duration_sec": 200,
                "created_at": "2026-10-15 20:30:00",
                "updated_at": "2026-10-15 20:30:00",
            },
        )

    def song(pid: int, sid: int) -> RowChange:
        return RowChange(
            "playlist_songs",
            "insert",
            {"playlist_id": pid, "song_id": sid},
            new={"playlist_id": pid, "song_id": sid, "position": 1, "added_at": "2026-10-15 20:30:00"},
        )

    expected = Diff([playlist(900), playlist(901), song(900, 1), song(901, 2)])
    same = Diff([playlist(700), playlist(701), song(700, 1), song(701, 2)])
    both_under_one = Diff([playlist(700), playlist(701), song(700, 1), song(700, 2)])
    assert grade(expected, same, music.schema).passed
    assert not grade(expected, both_under_one, music.schema).passed


def test_grade_serialises(music, music_world, reference):
    _, steps, expected = reference
    data = grade(expected, Diff(expected.changes[1:]), music.schema).to_dict()
    assert data["passed"] is False and data["expected_rows"] == len(expected) and 0 <= data["recall"] < 1


def test_each_schema_grades_by_its_own_table_facts_made_once():
    """Two schemas with a table of one name: one allocates the key (not compared), the other's key
    is text (compared). Graded in turn, each keeps its own facts (they are made once per schema)."""
    from ebench.engine.schema import INTEGER, TEXT, Column, Schema, Table

    generated = Schema((Table("items", "", (Column("id", INTEGER, primary_key=True), Column("name", TEXT))),))
    chosen = Schema((Table("items", "", (Column("id", TEXT, primary_key=True), Column("name", TEXT))),))
    expected = Diff([RowChange("items", "insert", {"id": 1}, new={"id": 1, "name": "a"})])
    actual = Diff([RowChange("items", "insert", {"id": 2}, new={"id": 2, "name": "a"})])
    for _ in range(2):
        assert grade(expected, actual, generated).passed  # another id the database allocated: the same row
        assert not grade(expected, actual, chosen).passed  # another key the solver chose: another row
