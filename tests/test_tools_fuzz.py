"""Garbage in, clear error out: random arguments never crash a tool or half-change the world.

A model can send anything. For every music tool, hypothesis draws argument objects that are
mostly plausible (real ids of the right kind: the actor's own playlists and others', expired
songs, comments with replies; dates, enum members, long and odd strings) and sometimes garbage
(wrong JSON types, unknown keys, out-of-range numbers, not an object at all). Each call must
succeed or return an error with a known, non-internal code; a refused write must leave the
database byte-for-byte as it was.
"""

from __future__ import annotations

import types
import typing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ebench.domains import get_domain
from ebench.domains.engine.tools import INT64_MAX, INT64_MIN, WRITE

ACTOR = 1
MUSIC_TOOLS = [t.name for t in get_domain("music").tools]
KNOWN_ERRORS = {"invalid_arguments", "invalid_value", "not_found", "forbidden", "conflict"}

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(INT64_MIN * 2, INT64_MAX * 2), st.floats(allow_nan=False), st.text(max_size=30),
)
garbage = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6
)
ODD_TEXTS = ["", " ", "%", "_", "'", '"', "\\", "2024-02-30", "2024-5-1", "2024-01-01", "2026-10-15", "love",
             "Pop", "pop", "chill", "Instrumental", "🎵", "NULL", "' OR 1=1 --"]
BOUNDARY_LENGTHS = [59, 60, 61, 499, 500, 501]  # playlist names stop at 60 characters, comments at 500


def _pick_branch(branches: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """An even choice between strategies (st.one_of does not weigh its branches evenly)."""
    return st.sampled_from(sorted(branches)).flatmap(branches.__getitem__)


texts = _pick_branch({
    "odd": st.sampled_from(ODD_TEXTS),
    "boundary": st.sampled_from(BOUNDARY_LENGTHS).map(lambda n: "x" * n),
    "free": st.text(max_size=40),
})

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


@pytest.fixture(scope="module")
def fuzz_world(music_world):
    from ebench.domains.engine.world import scratch_copy

    conn = scratch_copy(music_world)
    pools = {name: [r[0] for r in conn.execute(sql, {"a": ACTOR})] for name, sql in ID_POOLS.items()}
    # Every row change is logged into a temp table by temp triggers. The log lives in the same
    # transaction: a tool's rolled-back savepoint erases its entries too, so after a refused
    # call a non-empty log means a change survived. (Cheaper than copying the database.)
    conn.execute("CREATE TEMP TABLE change_log (tbl TEXT NOT NULL)")
    for table in get_domain("music").schema.tables:
        for event in ("INSERT", "UPDATE", "DELETE"):
            conn.execute(
                f"CREATE TEMP TRIGGER log_{table.name}_{event.lower()} AFTER {event} ON main.{table.name} "
                f"BEGIN INSERT INTO change_log VALUES ('{table.name}'); END"
            )
    return conn, pools


def _plausible(name: str, annotation, pools: dict[str, list[int]]) -> st.SearchStrategy:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        origin = typing.get_origin(annotation)
    if annotation is int:
        return st.sampled_from(pools[name]) if name in pools else st.integers(-3, 300)
    if annotation is str:
        return texts
    if annotation is bool:
        return st.booleans()
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(annotation))
    return garbage


def _argument(name: str, annotation, pools) -> st.SearchStrategy:
    plausible = _plausible(name, annotation, pools)
    # 4 in 5 plausible.
    return st.sampled_from([True, True, True, True, False]).flatmap(lambda fits: plausible if fits else garbage)


# derandomize: CI runs the same examples every time, so a failure is reproducible.
FUZZ = {"deadline": None, "derandomize": True, "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}


@pytest.mark.parametrize("tool_name", [t for t in MUSIC_TOOLS if get_domain("music").tools.get(t).kind != WRITE])
@settings(max_examples=25, **FUZZ)
@given(data=st.data())
def test_read_tools_give_a_result_or_a_clear_error(music, fuzz_world, tool_name, data):
    _fuzz_once(music, fuzz_world, tool_name, data)


@pytest.mark.parametrize("tool_name", [t for t in MUSIC_TOOLS if get_domain("music").tools.get(t).kind == WRITE])
@settings(max_examples=80, **FUZZ)
@given(data=st.data())
def test_write_tools_give_a_result_or_a_clear_error_and_refusals_change_nothing(music, fuzz_world, tool_name, data):
    _fuzz_once(music, fuzz_world, tool_name, data)


def _fuzz_once(music, fuzz_world, tool_name: str, data) -> None:
    conn, pools = fuzz_world
    tool = music.tools.get(tool_name)
    args: typing.Any = {
        p.name: data.draw(_argument(p.name, p.annotation, pools), label=p.name)
        for p in tool.params
        if p.required or data.draw(st.booleans())
    }
    if data.draw(st.integers(0, 9)) == 0:
        args[data.draw(st.text(min_size=1, max_size=8))] = data.draw(garbage)
    if data.draw(st.integers(0, 19)) == 0:
        args = data.draw(garbage)  # not even an object
    env = music.env(conn, ACTOR)
    conn.execute("SAVEPOINT fuzz")
    try:
        result = music.tools.call(env, tool_name, args)
        changed = [r[0] for r in conn.execute("SELECT tbl FROM change_log")]
        if not result.ok:
            assert result.error_code in KNOWN_ERRORS, (args, result.error_code, result.error_message)
            assert result.error_message
            assert changed == [], (args, result.error_code, f"a refused call changed {changed}")
        elif tool.kind != WRITE:
            assert changed == [], (args, f"a read tool changed {changed}")
    finally:
        conn.execute("ROLLBACK TO fuzz")  # every example starts from the same world
        conn.execute("RELEASE fuzz")


def test_the_fuzz_world_offers_every_kind_of_id(fuzz_world):
    """The pools must hold what makes the rules bite, or the fuzzing proves little."""
    conn, pools = fuzz_world
    playlists = pools["playlist_id"]
    owners = {r[0] for r in conn.execute(f"SELECT owner_id FROM playlists WHERE id IN ({','.join(map(str, playlists))})")}
    assert ACTOR in owners and len(owners) > 1
    songs = ",".join(map(str, pools["song_id"]))
    assert conn.execute(f"SELECT COUNT(*) FROM songs WHERE id IN ({songs}) AND copyright_status = 'expired'").fetchone()[0] > 0
    assert all(pools[name] for name in ID_POOLS)


def test_the_change_log_sees_writes_and_forgets_rolled_back_ones(music, fuzz_world):
    conn, pools = fuzz_world
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
