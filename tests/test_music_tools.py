"""The music domain's 33 tools, called through the registry on the real built world.

Every test works on `music_conn`, a fresh in-memory copy of the world, and finds its data with
SQL (never a hard-coded id). Results are checked against the database; write tools are checked
row by row; every refused call must leave the content hash of the world unchanged.
"""

from __future__ import annotations

import inspect
import json
import random
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from toolcheck import all_pages, col, err, nocase, non_decreasing, non_increasing, ok, tool_fixtures, val

from ebench.engine.domain_registry import get_domain
from ebench.engine.tools import PAGE_SIZE, READ, WRITE
from ebench.engine.world import content_hash

_MUSIC = get_domain("music")  # for parametrizing at collection time (no world needed)
ALL_TOOLS = _MUSIC.tools.names
READ_TOOLS = [t.name for t in _MUSIC.tools if t.kind == READ]
WRITE_TOOLS = [t.name for t in _MUSIC.tools if t.kind == WRITE]
PAGED_TOOLS = [t.name for t in _MUSIC.tools if any(p.name == "page" for p in t.params)]


# -- helpers -------------------------------------------------------------------------------


# The listener most tests act for: a rich library, not VIP (so VIP-only rules can be checked).
RICH_ACTOR_SQL = """
SELECT u.id FROM users u
WHERE u.vip_level = 0
  AND (SELECT MAX(song_count) FROM playlists WHERE owner_id = u.id) > 20
  AND (SELECT COUNT(*) FROM playlists WHERE owner_id = u.id) >= 2
  AND (SELECT COUNT(*) FROM favourite_songs WHERE user_id = u.id) > 20
  AND (SELECT COUNT(*) FROM listening_history WHERE user_id = u.id) > 20
  AND (SELECT COUNT(*) FROM comments WHERE user_id = u.id) > 20
  AND EXISTS (SELECT 1 FROM followed_artists WHERE user_id = u.id)
  AND EXISTS (SELECT 1 FROM saved_albums WHERE user_id = u.id)
  AND EXISTS (SELECT 1 FROM comment_likes WHERE user_id = u.id)
ORDER BY u.id LIMIT 1
"""


class Pick:
    """SQL look-ups of test data on the scratch world."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.actor: int = val(conn, RICH_ACTOR_SQL)
        assert self.actor is not None, "the world has no listener with a rich library"

    def val(self, sql: str, *params: Any) -> Any:
        found = val(self.conn, sql, *params)
        assert found is not None, f"no test data for: {sql} {params}"
        return found

    def missing(self, table: str) -> int:
        """An id no row of `table` has."""
        return val(self.conn, f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")

    def own_playlist(self, min_songs: int = 0) -> int:
        return self.val(
            "SELECT id FROM playlists WHERE owner_id = ? AND song_count >= ? ORDER BY song_count DESC, id LIMIT 1", self.actor, min_songs
        )

    def foreign_playlist(self, public: bool | None = None, min_songs: int = 0) -> int:
        return self.val(
            "SELECT id FROM playlists WHERE owner_id != ? AND song_count >= ? AND (? IS NULL OR is_public = ?) ORDER BY id LIMIT 1",
            self.actor,
            min_songs,
            public,
            public,
        )

    def song_in(self, playlist_id: int) -> int:
        return self.val("SELECT song_id FROM playlist_songs WHERE playlist_id = ? ORDER BY position LIMIT 1", playlist_id)

    def song(self, status: str = "licensed", where: str = "1", *params: Any) -> int:
        return self.val(f"SELECT id FROM songs s WHERE copyright_status = ? AND {where} ORDER BY id LIMIT 1", status, *params)

    def song_not_in(self, playlist_id: int, status: str = "licensed") -> int:
        return self.song(status, "NOT EXISTS (SELECT 1 FROM playlist_songs WHERE playlist_id = ? AND song_id = s.id)", playlist_id)

    def fav_song(self) -> int:
        return self.val("SELECT song_id FROM favourite_songs WHERE user_id = ? ORDER BY song_id LIMIT 1", self.actor)

    def non_fav_song(self, status: str = "licensed") -> int:
        return self.song(status, "NOT EXISTS (SELECT 1 FROM favourite_songs WHERE user_id = ? AND song_id = s.id)", self.actor)

    def followed_artist(self) -> int:
        return self.val("SELECT artist_id FROM followed_artists WHERE user_id = ? ORDER BY artist_id LIMIT 1", self.actor)

    def unfollowed_artist(self) -> int:
        return self.val(
            "SELECT id FROM artists a WHERE NOT EXISTS (SELECT 1 FROM followed_artists WHERE user_id = ? AND artist_id = a.id) ORDER BY id LIMIT 1",
            self.actor,
        )

    def saved_album(self) -> int:
        return self.val("SELECT album_id FROM saved_albums WHERE user_id = ? ORDER BY album_id LIMIT 1", self.actor)

    def unsaved_album(self) -> int:
        return self.val(
            "SELECT id FROM albums a WHERE NOT EXISTS (SELECT 1 FROM saved_albums WHERE user_id = ? AND album_id = a.id) ORDER BY id LIMIT 1",
            self.actor,
        )

    def own_comment(self) -> int:
        return self.val("SELECT id FROM comments WHERE user_id = ? ORDER BY id LIMIT 1", self.actor)

    def foreign_comment(self) -> int:
        return self.val("SELECT id FROM comments WHERE user_id != ? ORDER BY id LIMIT 1", self.actor)

    def liked_comment(self) -> int:
        return self.val("SELECT comment_id FROM comment_likes WHERE user_id = ? ORDER BY comment_id LIMIT 1", self.actor)

    def unliked_comment(self) -> int:
        return self.val(
            "SELECT id FROM comments c WHERE NOT EXISTS (SELECT 1 FROM comment_likes WHERE user_id = ? AND comment_id = c.id) ORDER BY id LIMIT 1",
            self.actor,
        )

    def playlist_name(self, playlist_id: int) -> str:
        return self.val("SELECT name FROM playlists WHERE id = ?", playlist_id)


def happy_args(p: Pick) -> dict[str, dict[str, Any]]:
    """Valid arguments for every tool, acting as p.actor on a fresh world."""
    pl = p.own_playlist(min_songs=2)
    return {
        "get_my_profile": {},
        "search_songs": {"query": "light", "sort_by": "most_played"},
        "get_song": {"song_id": p.song()},
        "search_artists": {"query": "a"},
        "get_artist": {"artist_id": p.followed_artist()},
        "list_artist_albums": {"artist_id": p.followed_artist()},
        "search_albums": {"album_type": "ep"},
        "get_album": {"album_id": p.saved_album()},
        "list_genres": {},
        "list_tags": {"category": "mood"},
        "list_my_playlists": {},
        "search_playlists": {},
        "get_playlist": {"playlist_id": pl},
        "list_favourite_songs": {"sort_by": "title"},
        "list_followed_artists": {},
        "list_saved_albums": {},
        "get_listening_history": {},
        "list_song_comments": {"song_id": p.val("SELECT song_id FROM comments ORDER BY id LIMIT 1")},
        "list_my_comments": {},
        "create_playlist": {"name": "A brand new test playlist", "description": "made by a test", "is_public": False},
        "update_playlist": {"playlist_id": pl, "description": "a new description from a test"},
        "delete_playlist": {"playlist_id": pl},
        "add_song_to_playlist": {"playlist_id": pl, "song_id": p.song_not_in(pl)},
        "remove_song_from_playlist": {"playlist_id": pl, "song_id": p.song_in(pl)},
        "favourite_song": {"song_id": p.non_fav_song()},
        "unfavourite_song": {"song_id": p.fav_song()},
        "follow_artist": {"artist_id": p.unfollowed_artist()},
        "unfollow_artist": {"artist_id": p.followed_artist()},
        "save_album": {"album_id": p.unsaved_album()},
        "unsave_album": {"album_id": p.saved_album()},
        "post_comment": {"song_id": p.song(), "content": "Lovely track."},
        "delete_comment": {"comment_id": p.own_comment()},
        "like_comment": {"comment_id": p.unliked_comment()},
    }


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture()
def pick(music_conn) -> Pick:
    return Pick(music_conn)


globals().update(tool_fixtures("music"))  # pristine, world_hash, unchanged, call


# =========================================================================================
# 1. Read tools: happy paths checked against the database
# =========================================================================================


def test_fresh_world_copy_has_the_world_hash(music_conn, pristine):
    # Error tests compare against the untouched world's hash: a fresh copy must have it.
    assert content_hash(music_conn) == pristine[0]
    assert music_conn.serialize() == pristine[1]


def test_registry_has_the_33_tools(music):
    assert len(music.tools) == 33
    assert (len(READ_TOOLS), len(WRITE_TOOLS)) == (19, 14)


def test_get_my_profile(call, music, music_conn, pick):
    me = ok(call(pick.actor, "get_my_profile", {}))
    user = music_conn.execute(
        "SELECT username, display_name, country, vip_level, joined_at FROM users WHERE id = ?", (pick.actor,)
    ).fetchone()
    assert (me["user_id"], me["username"], me["display_name"], me["country"], me["vip_level"], me["joined_at"]) == (pick.actor, *user)
    for key, table, column in [
        ("playlists", "playlists", "owner_id"),
        ("favourite_songs", "favourite_songs", "user_id"),
        ("followed_artists", "followed_artists", "user_id"),
        ("saved_albums", "saved_albums", "user_id"),
    ]:
        assert me[key] == val(music_conn, f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", pick.actor), key
    assert me["now"] == music.now


def test_search_songs_genre_filter(call, music_conn, pick):
    genre = pick.val(
        "SELECT g.name FROM genres g JOIN songs s ON s.genre_id = g.id GROUP BY g.id HAVING COUNT(*) > 40 ORDER BY g.id LIMIT 1"
    )
    res = ok(call(pick.actor, "search_songs", {"genre": genre.upper()}))  # genre names are case-insensitive
    assert res["items"] and all(s["genre"] == genre for s in res["items"])
    assert res["total"] == val(music_conn, "SELECT COUNT(*) FROM songs s JOIN genres g ON g.id = s.genre_id WHERE g.name = ?", genre)
    assert len(res["items"]) == PAGE_SIZE


# Each filter, with the SQL condition on songs s (joined to artists ar) that must select the same songs.
SONG_FILTERS = {
    "query": (lambda c: {"query": "  LIGHT "}, "(s.title LIKE '%light%' OR ar.name LIKE '%light%')", ()),
    "artist_id": (
        lambda c: {"artist_id": val(c, "SELECT artist_id FROM songs GROUP BY artist_id ORDER BY COUNT(*) DESC, artist_id LIMIT 1")},
        "s.artist_id = (SELECT artist_id FROM songs GROUP BY artist_id ORDER BY COUNT(*) DESC, artist_id LIMIT 1)",
        (),
    ),
    "album_id": (
        lambda c: {"album_id": val(c, "SELECT id FROM albums ORDER BY track_count DESC, id LIMIT 1")},
        "s.album_id = (SELECT id FROM albums ORDER BY track_count DESC, id LIMIT 1)",
        (),
    ),
    "tag": (
        lambda c: {"tag": val(c, "SELECT name FROM tags ORDER BY id LIMIT 1").upper()},
        "s.id IN (SELECT song_id FROM song_tags WHERE tag_id = (SELECT id FROM tags ORDER BY id LIMIT 1))",
        (),
    ),
    "language": (lambda c: {"language": "swedish"}, "s.language = 'Swedish'", ()),
    "copyright_status": (lambda c: {"copyright_status": "expired"}, "s.copyright_status = 'expired'", ()),
    "released_range": (
        lambda c: {
            "released_after": val(c, "SELECT release_date FROM songs ORDER BY release_date DESC LIMIT 1 OFFSET 200"),
            "released_before": val(c, "SELECT release_date FROM songs ORDER BY release_date DESC LIMIT 1 OFFSET 100"),
        },
        "s.release_date BETWEEN (SELECT release_date FROM songs ORDER BY release_date DESC LIMIT 1 OFFSET 200) "
        "AND (SELECT release_date FROM songs ORDER BY release_date DESC LIMIT 1 OFFSET 100)",
        (),
    ),
    "duration_range": (lambda c: {"min_duration_sec": 200, "max_duration_sec": 203}, "s.duration_sec BETWEEN 200 AND 203", ()),
    "combined": (
        lambda c: {"language": "English", "copyright_status": "vip_only", "min_duration_sec": 180},
        "s.language = 'English' AND s.copyright_status = 'vip_only' AND s.duration_sec >= 180",
        (),
    ),
}


@pytest.mark.parametrize("name", list(SONG_FILTERS))
def test_search_songs_filters_select_exactly_the_matching_songs(name, call, music_conn, pick):
    make_args, where, params = SONG_FILTERS[name]
    expected = set(col(music_conn, f"SELECT s.id FROM songs s JOIN artists ar ON ar.id = s.artist_id WHERE {where}", *params))
    assert expected, "filter selects nothing: the test would prove little"
    got = all_pages(call, pick.actor, "search_songs", make_args(music_conn), "song_id")
    assert {s["song_id"] for s in got} == expected


@pytest.mark.parametrize(
    "sort_by, field, check",
    [
        ("most_played", "play_count", non_increasing),
        ("newest", "release_date", non_increasing),
        ("oldest", "release_date", non_decreasing),
        ("duration", "duration_sec", non_increasing),
        ("title", "title", lambda titles: non_decreasing([nocase(t) for t in titles])),
    ],
)
def test_search_songs_sort_orders(sort_by, field, check, call, pick):
    items = all_pages(call, pick.actor, "search_songs", {"language": "German", "sort_by": sort_by}, "song_id")
    assert len(items) > PAGE_SIZE
    assert check([s[field] for s in items])


def test_search_songs_relevance_puts_exact_title_first(call, music_conn, pick):
    # A one-word ASCII title whose partial matches include a song played more than any exact match.
    title = None
    for (candidate,) in music_conn.execute(
        "SELECT title FROM songs WHERE title NOT GLOB '*[^A-Za-z]*' GROUP BY title "
        "HAVING COUNT(*) BETWEEN 2 AND 10 ORDER BY COUNT(*) DESC, title LIMIT 50"
    ):
        if val(
            music_conn,
            """SELECT 1 FROM songs s JOIN artists ar ON ar.id = s.artist_id
                              WHERE s.title != ?1 COLLATE NOCASE AND (s.title LIKE '%' || ?1 || '%' OR ar.name LIKE '%' || ?1 || '%')
                                AND s.play_count > (SELECT MAX(play_count) FROM songs WHERE title = ?1 COLLATE NOCASE)""",
            candidate,
        ):
            title = candidate
            break
    assert title, "no title suits this test"
    exact = set(col(music_conn, "SELECT id FROM songs WHERE title = ? COLLATE NOCASE", title))
    assert len(exact) < PAGE_SIZE
    res = ok(call(pick.actor, "search_songs", {"query": title.upper()}))
    assert res["total"] == val(
        music_conn,
        "SELECT COUNT(*) FROM songs s JOIN artists ar ON ar.id = s.artist_id WHERE s.title LIKE ? OR ar.name LIKE ?",
        f"%{title}%",
        f"%{title}%",
    )
    items = res["items"]
    head, tail = items[: len(exact)], items[len(exact) :]
    assert {s["song_id"] for s in head} == exact
    assert non_increasing([s["play_count"] for s in head])
    assert all(nocase(s["title"]) != nocase(title) for s in tail)
    assert non_increasing([s["play_count"] for s in tail])


def test_get_song(call, music_conn, pick):
    # A song with credits, tags and comments that the actor both favourited and played.
    song_id = pick.val(
        """
        SELECT s.id FROM songs s WHERE EXISTS (SELECT 1 FROM song_tags WHERE song_id = s.id)
        AND EXISTS (SELECT 1 FROM favourite_songs WHERE song_id = s.id AND user_id = ?)
        AND EXISTS (SELECT 1 FROM listening_history WHERE song_id = s.id AND user_id = ?)
        ORDER BY (SELECT COUNT(*) FROM song_artists WHERE song_id = s.id) DESC,
                 (SELECT COUNT(*) FROM comments WHERE song_id = s.id) DESC, s.id LIMIT 1""",
        pick.actor,
        pick.actor,
    )
    song = ok(call(pick.actor, "get_song", {"song_id": song_id}))
    row = music_conn.execute(
        """
        SELECT s.title, al.title, ar.name, g.name, s.duration_sec, s.release_date, s.copyright_status, s.play_count,
               s.favourite_count, s.track_number, s.is_explicit, s.album_id, s.artist_id
        FROM songs s JOIN albums al ON al.id = s.album_id JOIN artists ar ON ar.id = s.artist_id JOIN genres g ON g.id = s.genre_id
        WHERE s.id = ?""",
        (song_id,),
    ).fetchone()
    assert (
        song["title"],
        song["album"],
        song["artist"],
        song["genre"],
        song["duration_sec"],
        song["release_date"],
        song["copyright_status"],
        song["play_count"],
        song["favourite_count"],
        song["track_number"],
        int(song["is_explicit"]),
        song["album_id"],
        song["artist_id"],
    ) == row
    assert song["song_id"] == song_id
    assert song["duration"] == f"{row[4] // 60}:{row[4] % 60:02d}"
    assert song["favourited_by_me"] is True
    assert (
        song["my_play_count"]
        == val(music_conn, "SELECT COUNT(*) FROM listening_history WHERE song_id = ? AND user_id = ?", song_id, pick.actor)
        > 0
    )
    assert song["comment_count"] == val(music_conn, "SELECT COUNT(*) FROM comments WHERE song_id = ?", song_id)
    assert song["tags"] == sorted(
        col(music_conn, "SELECT t.name FROM song_tags st JOIN tags t ON t.id = st.tag_id WHERE st.song_id = ?", song_id)
    )
    credits = music_conn.execute(
        "SELECT sa.artist_id, ar.name, sa.role FROM song_artists sa JOIN artists ar ON ar.id = sa.artist_id WHERE sa.song_id = ?",
        (song_id,),
    ).fetchall()
    assert {(c["artist_id"], c["name"], c["role"]) for c in song["credits"]} == set(credits)
    # The same song seen by someone who never favourited it.
    other = pick.val(
        "SELECT id FROM users WHERE id NOT IN (SELECT user_id FROM favourite_songs WHERE song_id = ?) ORDER BY id LIMIT 1", song_id
    )
    assert ok(call(other, "get_song", {"song_id": song_id}))["favourited_by_me"] is False


def test_search_artists(call, music_conn, pick):
    genre, country = music_conn.execute(
        "SELECT g.name, ar.country FROM artists ar JOIN genres g ON g.id = ar.genre_id GROUP BY 1, 2 ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()
    res = ok(call(pick.actor, "search_artists", {"genre": genre, "country": country.lower()}))
    assert (
        res["total"]
        == val(
            music_conn,
            "SELECT COUNT(*) FROM artists ar JOIN genres g ON g.id = ar.genre_id WHERE g.name = ? AND ar.country = ?",
            genre,
            country,
        )
        > 1
    )
    assert all(a["genre"] == genre and a["country"] == country for a in res["items"])
    # Without an exact match, relevance is the most followed first.
    items = all_pages(call, pick.actor, "search_artists", {"query": "an"}, "artist_id")
    assert {a["artist_id"] for a in items} == set(col(music_conn, "SELECT id FROM artists WHERE name LIKE '%an%'"))
    assert non_increasing([a["follower_count"] for a in items])
    # An exact name (in another case) comes first.
    name = pick.val("SELECT name FROM artists WHERE name NOT GLOB '*[^A-Za-z ]*' ORDER BY follower_count, id LIMIT 1")
    res = ok(call(pick.actor, "search_artists", {"query": name.lower(), "artist_type": None}))
    assert nocase(res["items"][0]["name"]) == nocase(name)


def test_get_artist(call, music_conn, pick):
    artist_id = pick.followed_artist()
    artist = ok(call(pick.actor, "get_artist", {"artist_id": artist_id}))
    name, genre, followers = music_conn.execute(
        "SELECT ar.name, g.name, ar.follower_count FROM artists ar JOIN genres g ON g.id = ar.genre_id WHERE ar.id = ?", (artist_id,)
    ).fetchone()
    assert (artist["artist_id"], artist["name"], artist["genre"], artist["follower_count"]) == (artist_id, name, genre, followers)
    assert artist["followed_by_me"] is True
    assert artist["album_count"] == val(music_conn, "SELECT COUNT(*) FROM albums WHERE artist_id = ?", artist_id)
    assert artist["song_count"] == val(music_conn, "SELECT COUNT(*) FROM songs WHERE artist_id = ?", artist_id)
    top = col(music_conn, "SELECT id FROM songs WHERE artist_id = ? ORDER BY play_count DESC, id LIMIT 5", artist_id)
    assert [s["song_id"] for s in artist["top_songs"]] == top
    assert all(s["artist"] == name for s in artist["top_songs"])
    other = pick.unfollowed_artist()
    assert ok(call(pick.actor, "get_artist", {"artist_id": other}))["followed_by_me"] is False


def test_list_artist_albums(call, music_conn, pick):
    artist_id = pick.val(
        "SELECT artist_id FROM albums GROUP BY artist_id HAVING COUNT(DISTINCT album_type) >= 2 ORDER BY COUNT(*) DESC, artist_id LIMIT 1"
    )
    res = ok(call(pick.actor, "list_artist_albums", {"artist_id": artist_id}))
    assert {a["album_id"] for a in res["items"]} == set(col(music_conn, "SELECT id FROM albums WHERE artist_id = ?", artist_id))
    assert res["total"] == len(res["items"])
    assert non_increasing([a["release_date"] for a in res["items"]])
    kind = val(music_conn, "SELECT album_type FROM albums WHERE artist_id = ? ORDER BY id LIMIT 1", artist_id)
    res = ok(call(pick.actor, "list_artist_albums", {"artist_id": artist_id, "album_type": kind}))
    assert {a["album_id"] for a in res["items"]} == set(
        col(music_conn, "SELECT id FROM albums WHERE artist_id = ? AND album_type = ?", artist_id, kind)
    )
    assert all(a["album_type"] == kind for a in res["items"])


def test_search_albums(call, music_conn, pick):
    start, end = col(music_conn, "SELECT release_date FROM albums ORDER BY release_date DESC LIMIT 2 OFFSET 30")[::-1]
    items = all_pages(call, pick.actor, "search_albums", {"released_after": start, "released_before": end}, "album_id")
    assert {a["album_id"] for a in items} == set(col(music_conn, "SELECT id FROM albums WHERE release_date BETWEEN ? AND ?", start, end))
    genre = pick.val("SELECT g.name FROM albums al JOIN genres g ON g.id = al.genre_id GROUP BY g.id ORDER BY COUNT(*) DESC LIMIT 1")
    res = ok(call(pick.actor, "search_albums", {"genre": genre, "album_type": "single", "sort_by": "oldest"}))
    assert res["total"] == val(
        music_conn,
        "SELECT COUNT(*) FROM albums al JOIN genres g ON g.id = al.genre_id WHERE g.name = ? AND al.album_type = 'single'",
        genre,
    )
    assert all(a["genre"] == genre and a["album_type"] == "single" for a in res["items"])
    assert non_decreasing([a["release_date"] for a in res["items"]])


def test_search_albums_relevance_puts_exact_title_first(call, music_conn, pick):
    title = pick.val("""
        SELECT t FROM (SELECT DISTINCT title AS t FROM albums) WHERE t NOT GLOB '*[^A-Za-z ]*'
        AND EXISTS (SELECT 1 FROM albums WHERE title LIKE '%' || t || '%' AND title != t COLLATE NOCASE
                    AND release_date > (SELECT MAX(release_date) FROM albums WHERE title = t COLLATE NOCASE))
        ORDER BY t LIMIT 1""")
    exact = set(col(music_conn, "SELECT id FROM albums WHERE title = ? COLLATE NOCASE", title))
    res = ok(call(pick.actor, "search_albums", {"query": title.lower()}))
    assert {a["album_id"] for a in res["items"][: len(exact)]} == exact
    rest = res["items"][len(exact) :]
    assert rest and all(nocase(a["title"]) != nocase(title) for a in rest)
    assert non_increasing([a["release_date"] for a in rest])


@pytest.mark.parametrize(
    "tool, sql",
    [
        (
            "search_songs",
            "SELECT COUNT(*) FROM songs s JOIN artists ar ON ar.id = s.artist_id WHERE instr(s.title, ?1) OR instr(ar.name, ?1)",
        ),
        ("search_artists", "SELECT COUNT(*) FROM artists WHERE instr(name, ?1)"),
        (
            "search_albums",
            "SELECT COUNT(*) FROM albums al JOIN artists ar ON ar.id = al.artist_id WHERE instr(al.title, ?1) OR instr(ar.name, ?1)",
        ),
        ("search_playlists", "SELECT COUNT(*) FROM playlists WHERE (is_public = 1 OR owner_id = ?2) AND instr(name, ?1)"),
    ],
)
@pytest.mark.parametrize("query", ["%", "_", "a%", "\\", "100%_x"])
def test_search_query_wildcards_are_literal(tool, sql, query, call, music_conn, pick):
    # % and _ in the search box are characters to find, not LIKE wildcards.
    expected = val(music_conn, sql, *((query, pick.actor) if "?2" in sql else (query,)))
    assert ok(call(pick.actor, tool, {"query": query}))["total"] == expected


def test_search_songs_query_matches_substrings_exactly(call, music_conn, pick):
    # Random fragments of titles and artist names (some upper-cased): the tool, which narrows
    # with a trigram index for 3+ characters, finds exactly the songs containing the fragment
    # (ASCII letters compared case-insensitively, like LIKE).
    rows = music_conn.execute("SELECT s.id, s.title, ar.name FROM songs s JOIN artists ar ON ar.id = s.artist_id").fetchall()
    folded = [(sid, nocase(title) + "\n" + nocase(artist)) for sid, title, artist in rows]  # \n: no match across the two
    rng = random.Random(20260115)
    for _ in range(40):
        text = rng.choice(rows)[rng.choice((1, 2))]
        start = rng.randrange(len(text))
        query = text[start : start + rng.randint(2, 7)].strip()
        if not query:
            continue
        query = query.upper() if rng.random() < 0.3 else query
        expected = {sid for sid, hay in folded if nocase(query) in hay}
        got = ok(call(pick.actor, "search_songs", {"query": query}))
        assert got["total"] == len(expected), query
        assert {s["song_id"] for s in got["items"]} <= expected, query


def test_get_album(call, music_conn, pick):
    album_id = pick.val(
        "SELECT sv.album_id FROM saved_albums sv JOIN albums al ON al.id = sv.album_id WHERE sv.user_id = ? "
        "ORDER BY al.track_count DESC, al.id LIMIT 1",
        pick.actor,
    )
    album = ok(call(pick.actor, "get_album", {"album_id": album_id}))
    title, artist, tracks, total = music_conn.execute(
        "SELECT al.title, ar.name, al.track_count, al.total_duration_sec FROM albums al JOIN artists ar ON ar.id = al.artist_id WHERE al.id = ?",
        (album_id,),
    ).fetchone()
    assert (album["title"], album["artist"], album["track_count"], album["total_duration_sec"]) == (title, artist, tracks, total)
    assert album["saved_by_me"] is True
    assert [t["song_id"] for t in album["tracks"]] == col(
        music_conn, "SELECT id FROM songs WHERE album_id = ? ORDER BY track_number", album_id
    )
    assert [t["track_number"] for t in album["tracks"]] == col(
        music_conn, "SELECT track_number FROM songs WHERE album_id = ? ORDER BY track_number", album_id
    )
    assert len(album["tracks"]) == tracks
    assert all(t["album"] == title for t in album["tracks"])
    assert ok(call(pick.actor, "get_album", {"album_id": pick.unsaved_album()}))["saved_by_me"] is False


def test_list_genres(call, music_conn, pick):
    items = all_pages(call, pick.actor, "list_genres", {}, "genre_id")
    expected = music_conn.execute(
        "SELECT g.id, g.name, p.name FROM genres g LEFT JOIN genres p ON p.id = g.parent_id ORDER BY g.id"
    ).fetchall()
    assert [(g["genre_id"], g["name"], g["parent_genre"]) for g in items] == expected
    assert any(g["parent_genre"] is not None for g in items)


@pytest.mark.parametrize("category", [None, "mood", "activity", "era", "sound"])
def test_list_tags(category, call, music_conn, pick):
    items = all_pages(call, pick.actor, "list_tags", {"category": category}, "tag_id")
    expected = music_conn.execute(
        "SELECT id, name, category FROM tags WHERE ? IS NULL OR category = ? ORDER BY id", (category, category)
    ).fetchall()
    assert expected and [(t["tag_id"], t["name"], t["category"]) for t in items] == expected


def test_list_my_playlists(call, music_conn, pick):
    items = all_pages(call, pick.actor, "list_my_playlists", {}, "playlist_id")
    expected = music_conn.execute("SELECT id, name, song_count, is_public FROM playlists WHERE owner_id = ?", (pick.actor,)).fetchall()
    assert {(p["playlist_id"], p["name"], p["song_count"], int(p["is_public"])) for p in items} == set(expected)
    assert non_increasing([p["updated_at"] for p in items])


def test_search_playlists_shows_public_and_own_private_only(call, music_conn, pick):
    # Give the actor a private playlist if they have none.
    if not val(music_conn, "SELECT 1 FROM playlists WHERE owner_id = ? AND is_public = 0", pick.actor):
        ok(call(pick.actor, "create_playlist", {"name": "My secret mix", "is_public": False}))
    items = all_pages(call, pick.actor, "search_playlists", {}, "playlist_id")
    expected = set(col(music_conn, "SELECT id FROM playlists WHERE is_public = 1 OR owner_id = ?", pick.actor))
    assert {p["playlist_id"] for p in items} == expected
    assert val(music_conn, "SELECT COUNT(*) FROM playlists WHERE is_public = 0 AND owner_id != ?", pick.actor) > 0
    assert non_increasing([p["song_count"] for p in items])
    word = pick.val("SELECT name FROM playlists WHERE is_public = 1 ORDER BY id LIMIT 1").split()[0]
    res = ok(call(pick.actor, "search_playlists", {"query": word.upper()}))
    assert (
        res["total"]
        == val(music_conn, "SELECT COUNT(*) FROM playlists WHERE (is_public = 1 OR owner_id = ?) AND name LIKE ?", pick.actor, f"%{word}%")
        >= 1
    )


def test_get_playlist_own_private_and_foreign_public(call, music_conn, pick):
    for actor, playlist_id in [(pick.actor, pick.own_playlist(min_songs=1)), (pick.actor, pick.foreign_playlist(public=True, min_songs=1))]:
        res = ok(call(actor, "get_playlist", {"playlist_id": playlist_id}))
        name, owner, count, duration = music_conn.execute(
            "SELECT p.name, u.username, p.song_count, p.total_duration_sec FROM playlists p JOIN users u ON u.id = p.owner_id WHERE p.id = ?",
            (playlist_id,),
        ).fetchone()
        summary = res["playlist"]
        assert (summary["playlist_id"], summary["name"], summary["owner"], summary["song_count"], summary["total_duration_sec"]) == (
            playlist_id,
            name,
            owner,
            count,
            duration,
        )
        first = col(music_conn, "SELECT song_id FROM playlist_songs WHERE playlist_id = ? ORDER BY position LIMIT 20", playlist_id)
        assert [s["song_id"] for s in res["songs"]["items"]] == first
        assert res["songs"]["total"] == count
    private = pick.own_playlist()
    ok(call(pick.actor, "update_playlist", {"playlist_id": private, "is_public": False}))
    assert ok(call(pick.actor, "get_playlist", {"playlist_id": private}))["playlist"]["is_public"] is False


def test_list_favourite_songs(call, music_conn, pick):
    res = ok(call(pick.actor, "list_favourite_songs", {}))
    assert res["total"] == val(music_conn, "SELECT COUNT(*) FROM favourite_songs WHERE user_id = ?", pick.actor)
    assert non_increasing([s["favourited_at"] for s in res["items"]])
    for s in res["items"]:
        assert s["favourited_at"] == val(
            music_conn, "SELECT favourited_at FROM favourite_songs WHERE user_id = ? AND song_id = ?", pick.actor, s["song_id"]
        )
    oldest = ok(call(pick.actor, "list_favourite_songs", {"sort_by": "oldest"}))["items"]
    assert non_decreasing([s["favourited_at"] for s in oldest])
    by_artist = ok(call(pick.actor, "list_favourite_songs", {"sort_by": "artist"}))["items"]
    assert non_decreasing([nocase(s["artist"]) for s in by_artist])


def test_list_followed_artists(call, music_conn, pick):
    items = all_pages(call, pick.actor, "list_followed_artists", {}, "artist_id")
    assert {a["artist_id"] for a in items} == set(col(music_conn, "SELECT artist_id FROM followed_artists WHERE user_id = ?", pick.actor))
    assert non_increasing([a["followed_at"] for a in items])


def test_list_saved_albums(call, music_conn, pick):
    items = all_pages(call, pick.actor, "list_saved_albums", {}, "album_id")
    assert {a["album_id"] for a in items} == set(col(music_conn, "SELECT album_id FROM saved_albums WHERE user_id = ?", pick.actor))
    assert non_increasing([a["saved_at"] for a in items])


def test_get_listening_history_date_range_includes_the_end_day(call, music_conn, pick):
    # A day on which some listener played songs in the afternoon: the whole day must count.
    actor, day = music_conn.execute(
        "SELECT user_id, substr(played_at, 1, 10) FROM listening_history WHERE substr(played_at, 12) > '12:00:00' "
        "GROUP BY 1, 2 ORDER BY COUNT(*) DESC, 1, 2 LIMIT 1"
    ).fetchone()
    on_day = set(col(music_conn, "SELECT id FROM listening_history WHERE user_id = ? AND substr(played_at, 1, 10) = ?", actor, day))
    res = ok(call(actor, "get_listening_history", {"start_date": day, "end_date": day}))
    assert {p["play_id"] for p in res["items"]} == on_day and res["total"] == len(on_day)
    # end_date alone: every play up to and including that day.
    upto = ok(call(actor, "get_listening_history", {"end_date": day}))
    assert upto["total"] == val(
        music_conn, "SELECT COUNT(*) FROM listening_history WHERE user_id = ? AND substr(played_at, 1, 10) <= ?", actor, day
    )
    # start_date alone: every play from that day on.
    after = ok(call(actor, "get_listening_history", {"start_date": day}))
    assert after["total"] == val(
        music_conn, "SELECT COUNT(*) FROM listening_history WHERE user_id = ? AND substr(played_at, 1, 10) >= ?", actor, day
    )
    assert upto["total"] + after["total"] - len(on_day) == val(
        music_conn, "SELECT COUNT(*) FROM listening_history WHERE user_id = ?", actor
    )


def test_get_listening_history_content_and_song_filter(call, music_conn, pick):
    items = all_pages(call, pick.actor, "get_listening_history", {}, "play_id")
    assert [(p["played_at"], p["play_id"]) for p in items] == sorted(((p["played_at"], p["play_id"]) for p in items), reverse=True)
    for p in items[:5]:
        row = music_conn.execute(
            "SELECT h.song_id, s.title, h.seconds_played, h.source, h.device FROM listening_history h "
            "JOIN songs s ON s.id = h.song_id WHERE h.id = ? AND h.user_id = ?",
            (p["play_id"], pick.actor),
        ).fetchone()
        assert row == (p["song_id"], p["title"], p["seconds_played"], p["source"], p["device"])
    song_id = pick.val(
        "SELECT song_id FROM listening_history WHERE user_id = ? GROUP BY song_id ORDER BY COUNT(*) DESC, song_id LIMIT 1", pick.actor
    )
    res = ok(call(pick.actor, "get_listening_history", {"song_id": song_id}))
    assert res["total"] == val(music_conn, "SELECT COUNT(*) FROM listening_history WHERE user_id = ? AND song_id = ?", pick.actor, song_id)
    assert all(p["song_id"] == song_id for p in res["items"])


def test_list_song_comments(call, music_conn, pick):
    # A song with a reply and a comment the actor liked.
    song_id = pick.val(
        """SELECT c.song_id FROM comments c JOIN comment_likes l ON l.comment_id = c.id AND l.user_id = ?
                          WHERE EXISTS (SELECT 1 FROM comments r WHERE r.song_id = c.song_id AND r.parent_id IS NOT NULL)
                          ORDER BY c.song_id LIMIT 1""",
        pick.actor,
    )
    res = ok(call(pick.actor, "list_song_comments", {"song_id": song_id, "sort_by": "oldest"}))
    rows = music_conn.execute(
        "SELECT id, user_id, parent_id, content, like_count, "
        "EXISTS (SELECT 1 FROM comment_likes WHERE comment_id = c.id AND user_id = ?) FROM comments c WHERE song_id = ?",
        (pick.actor, song_id),
    ).fetchall()
    assert res["total"] == len(rows)
    got = {
        (c["comment_id"], c["user_id"], c["reply_to_comment_id"], c["content"], c["like_count"], int(c["liked_by_me"]))
        for c in res["items"]
    }
    assert got == set(rows)
    assert any(c["liked_by_me"] for c in res["items"]) and any(c["reply_to_comment_id"] for c in res["items"])
    assert non_decreasing([c["created_at"] for c in res["items"]])
    liked = ok(call(pick.actor, "list_song_comments", {"song_id": song_id, "sort_by": "most_liked"}))["items"]
    assert non_increasing([c["like_count"] for c in liked])


def test_list_my_comments(call, music_conn, pick):
    items = all_pages(call, pick.actor, "list_my_comments", {}, "comment_id")
    assert {c["comment_id"] for c in items} == set(col(music_conn, "SELECT id FROM comments WHERE user_id = ?", pick.actor))
    assert all(c["user_id"] == pick.actor for c in items)
    assert non_increasing([c["created_at"] for c in items])


# =========================================================================================
# 2. Pagination
# =========================================================================================

# case -> (tool, args builder(pick), where the page is in the result, item key, expected ids(pick, args))
PAGED_LISTINGS = {
    "search_songs(genre)": (
        "search_songs",
        lambda p: {
            "genre": p.val("SELECT g.name FROM genres g JOIN songs s ON s.genre_id = g.id GROUP BY g.id ORDER BY COUNT(*) DESC LIMIT 1"),
            "sort_by": "title",
        },
        lambda v: v,
        "song_id",
        lambda p, a: col(p.conn, "SELECT s.id FROM songs s JOIN genres g ON g.id = s.genre_id WHERE g.name = ?", a["genre"]),
    ),
    "get_playlist": (
        "get_playlist",
        lambda p: {"playlist_id": p.own_playlist(min_songs=21)},
        lambda v: v["songs"],
        "song_id",
        lambda p, a: col(p.conn, "SELECT song_id FROM playlist_songs WHERE playlist_id = ? ORDER BY position", a["playlist_id"]),
    ),
    "list_favourite_songs": (
        "list_favourite_songs",
        lambda p: {},
        lambda v: v,
        "song_id",
        lambda p, a: col(p.conn, "SELECT song_id FROM favourite_songs WHERE user_id = ?", p.actor),
    ),
    "get_listening_history": (
        "get_listening_history",
        lambda p: {},
        lambda v: v,
        "play_id",
        lambda p, a: col(p.conn, "SELECT id FROM listening_history WHERE user_id = ?", p.actor),
    ),
    "list_my_comments": (
        "list_my_comments",
        lambda p: {},
        lambda v: v,
        "comment_id",
        lambda p, a: col(p.conn, "SELECT id FROM comments WHERE user_id = ?", p.actor),
    ),
}


@pytest.mark.parametrize("case", list(PAGED_LISTINGS))
def test_pages_cover_every_row_exactly_once(case, call, pick):
    tool, build, part, key, expected_sql = PAGED_LISTINGS[case]
    args = build(pick)
    expected = expected_sql(pick, args)
    assert len(expected) > PAGE_SIZE, "needs more than one page"
    items = all_pages(call, pick.actor, tool, args, key, part)
    assert sorted(i[key] for i in items) == sorted(expected)
    if tool == "get_playlist":  # playlist order is the position order, across pages
        assert [i[key] for i in items] == expected
        assert [i["position"] for i in items] == list(range(1, len(expected) + 1))


@pytest.mark.parametrize("tool", PAGED_TOOLS)
def test_page_below_one_is_invalid_value(tool, call, pick, unchanged):
    args = happy_args(pick)[tool]
    for page in (0, -1):
        assert "page" in err(call(pick.actor, tool, {**args, "page": page}), "invalid_value")
    unchanged()


def test_page_past_the_end_and_integral_float_page(call, pick):
    first = ok(call(pick.actor, "list_favourite_songs", {}))
    past = ok(call(pick.actor, "list_favourite_songs", {"page": first["total_pages"] + 5}))
    assert past["items"] == [] and past["total"] == first["total"] and past["total_pages"] == first["total_pages"]
    # JSON has one number type: 2.0 is page 2.
    assert ok(call(pick.actor, "list_favourite_songs", {"page": 2.0})) == ok(call(pick.actor, "list_favourite_songs", {"page": 2}))
    empty = ok(call(pick.actor, "search_songs", {"query": "no song is called this zzqx"}))
    assert (empty["items"], empty["total"], empty["total_pages"]) == ([], 0, 1)


# =========================================================================================
# 3. Write tools: exact effects on the database
# =========================================================================================


def playlist_state(conn, playlist_id):
    return conn.execute("SELECT song_count, total_duration_sec, updated_at FROM playlists WHERE id = ?", (playlist_id,)).fetchone()


def playlist_songs(conn, playlist_id):
    return conn.execute("SELECT song_id, position FROM playlist_songs WHERE playlist_id = ? ORDER BY position", (playlist_id,)).fetchall()


def assert_playlist_consistent(conn, playlist_id, now):
    rows = playlist_songs(conn, playlist_id)
    assert [pos for _, pos in rows] == list(range(1, len(rows) + 1)), "positions are not 1..n"
    duration = val(
        conn,
        "SELECT COALESCE(SUM(s.duration_sec), 0) FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id = ?",
        playlist_id,
    )
    assert playlist_state(conn, playlist_id) == (len(rows), duration, now)


def test_create_playlist_then_add_songs_to_it(call, music, music_conn, pick):
    before = val(music_conn, "SELECT COUNT(*) FROM playlists")
    created = ok(
        call(pick.actor, "create_playlist", {"name": "  Road Trip 2026  ", "description": " songs for the car ", "is_public": False})
    )
    assert val(music_conn, "SELECT COUNT(*) FROM playlists") == before + 1
    row = music_conn.execute(
        "SELECT owner_id, name, description, is_public, created_at, updated_at, song_count, total_duration_sec FROM playlists WHERE id = ?",
        (created["playlist_id"],),
    ).fetchone()
    assert row == (pick.actor, "Road Trip 2026", "songs for the car", 0, music.now, music.now, 0, 0)
    assert (created["name"], created["is_public"], created["owner_id"], created["song_count"]) == ("Road Trip 2026", False, pick.actor, 0)
    # Defaults: public, empty description.
    public = ok(call(pick.actor, "create_playlist", {"name": "Defaults"}))
    assert music_conn.execute("SELECT is_public, description FROM playlists WHERE id = ?", (public["playlist_id"],)).fetchone() == (1, "")
    # The id is usable straight away.
    songs = col(music_conn, "SELECT id FROM songs WHERE copyright_status = 'licensed' ORDER BY id LIMIT 2")
    for n, song_id in enumerate(songs, 1):
        added = ok(call(pick.actor, "add_song_to_playlist", {"playlist_id": created["playlist_id"], "song_id": song_id}))
        assert (added["position"], added["song_count"]) == (n, n)
    assert [s for s, _ in playlist_songs(music_conn, created["playlist_id"])] == songs
    assert_playlist_consistent(music_conn, created["playlist_id"], music.now)
    assert created["playlist_id"] in {p["playlist_id"] for p in ok(call(pick.actor, "list_my_playlists", {}))["items"]}


def test_update_playlist(call, music, music_conn, pick):
    playlist_id = pick.own_playlist()
    old = music_conn.execute("SELECT created_at, song_count, total_duration_sec FROM playlists WHERE id = ?", (playlist_id,)).fetchone()
    others = music_conn.execute("SELECT * FROM playlists WHERE id != ? ORDER BY id", (playlist_id,)).fetchall()
    res = ok(
        call(
            pick.actor,
            "update_playlist",
            {"playlist_id": playlist_id, "name": " Renamed by test ", "description": "new words", "is_public": False},
        )
    )
    row = music_conn.execute(
        "SELECT name, description, is_public, updated_at, created_at, song_count, total_duration_sec FROM playlists WHERE id = ?",
        (playlist_id,),
    ).fetchone()
    assert row[:4] == ("Renamed by test", "new words", 0, music.now)
    assert row[4:] == old  # created_at and the song aggregates are untouched
    assert (res["playlist_id"], res["name"], res["description"], res["is_public"]) == (playlist_id, "Renamed by test", "new words", False)
    # No other playlist moved.
    assert music_conn.execute("SELECT * FROM playlists WHERE id != ? ORDER BY id", (playlist_id,)).fetchall() == others
    # Only one field: the others stay.
    ok(call(pick.actor, "update_playlist", {"playlist_id": playlist_id, "is_public": True}))
    assert music_conn.execute("SELECT name, description, is_public FROM playlists WHERE id = ?", (playlist_id,)).fetchone() == (
        "Renamed by test",
        "new words",
        1,
    )


def test_update_playlist_without_a_real_change_keeps_updated_at(call, music_conn, pick):
    playlist_id = pick.own_playlist()
    name, description, public, updated = music_conn.execute(
        "SELECT name, description, is_public, updated_at FROM playlists WHERE id = ?", (playlist_id,)
    ).fetchone()
    ok(
        call(
            pick.actor, "update_playlist", {"playlist_id": playlist_id, "name": name, "description": description, "is_public": bool(public)}
        )
    )
    assert music_conn.execute("SELECT name, description, is_public, updated_at FROM playlists WHERE id = ?", (playlist_id,)).fetchone() == (
        name,
        description,
        public,
        updated,
    )


def test_delete_playlist_removes_it_and_its_songs(call, music_conn, pick):
    playlist_id = pick.own_playlist(min_songs=2)
    n = val(music_conn, "SELECT COUNT(*) FROM playlist_songs WHERE playlist_id = ?", playlist_id)
    total_links, total_lists = val(music_conn, "SELECT COUNT(*) FROM playlist_songs"), val(music_conn, "SELECT COUNT(*) FROM playlists")
    name = pick.playlist_name(playlist_id)
    res = ok(call(pick.actor, "delete_playlist", {"playlist_id": playlist_id}))
    assert res == {"deleted_playlist_id": playlist_id, "name": name, "songs_removed": n}
    assert val(music_conn, "SELECT COUNT(*) FROM playlists WHERE id = ?", playlist_id) == 0
    assert val(music_conn, "SELECT COUNT(*) FROM playlist_songs WHERE playlist_id = ?", playlist_id) == 0
    assert val(music_conn, "SELECT COUNT(*) FROM playlist_songs") == total_links - n
    assert val(music_conn, "SELECT COUNT(*) FROM playlists") == total_lists - 1
    err(call(pick.actor, "get_playlist", {"playlist_id": playlist_id}), "not_found")


def test_add_song_to_playlist(call, music, music_conn, pick):
    playlist_id = pick.own_playlist(min_songs=1)
    before = playlist_songs(music_conn, playlist_id)
    count, duration, _ = playlist_state(music_conn, playlist_id)
    # A VIP-only song: anyone may add it, and the actor is not VIP.
    song_id = pick.song_not_in(playlist_id, status="vip_only")
    song_len, title = music_conn.execute("SELECT duration_sec, title FROM songs WHERE id = ?", (song_id,)).fetchone()
    res = ok(call(pick.actor, "add_song_to_playlist", {"playlist_id": playlist_id, "song_id": song_id}))
    assert res == {
        "playlist_id": playlist_id,
        "playlist": pick.playlist_name(playlist_id),
        "song_id": song_id,
        "title": title,
        "position": count + 1,
        "song_count": count + 1,
    }
    assert playlist_songs(music_conn, playlist_id) == before + [(song_id, count + 1)]
    assert val(music_conn, "SELECT added_at FROM playlist_songs WHERE playlist_id = ? AND song_id = ?", playlist_id, song_id) == music.now
    assert playlist_state(music_conn, playlist_id) == (count + 1, duration + song_len, music.now)
    assert_playlist_consistent(music_conn, playlist_id, music.now)


def test_remove_song_from_playlist_keeps_positions_contiguous(call, music, music_conn, pick):
    playlist_id = pick.own_playlist(min_songs=3)
    before = playlist_songs(music_conn, playlist_id)
    count, duration, _ = playlist_state(music_conn, playlist_id)
    song_id = before[1][0]  # the second song: songs after it must move up
    song_len = val(music_conn, "SELECT duration_sec FROM songs WHERE id = ?", song_id)
    res = ok(call(pick.actor, "remove_song_from_playlist", {"playlist_id": playlist_id, "song_id": song_id}))
    assert res == {
        "playlist_id": playlist_id,
        "playlist": pick.playlist_name(playlist_id),
        "removed_song_id": song_id,
        "song_count": count - 1,
    }
    after = playlist_songs(music_conn, playlist_id)
    assert [s for s, _ in after] == [s for s, _ in before if s != song_id]
    assert [pos for _, pos in after] == list(range(1, count))
    assert playlist_state(music_conn, playlist_id) == (count - 1, duration - song_len, music.now)
    # Remove the last and then the first: still 1..n.
    for song in (after[-1][0], after[0][0]):
        ok(call(pick.actor, "remove_song_from_playlist", {"playlist_id": playlist_id, "song_id": song}))
        assert_playlist_consistent(music_conn, playlist_id, music.now)
    # Re-adding a removed song appends it at the end.
    ok(call(pick.actor, "add_song_to_playlist", {"playlist_id": playlist_id, "song_id": song_id}))
    assert playlist_songs(music_conn, playlist_id)[-1] == (song_id, count - 2)
    assert_playlist_consistent(music_conn, playlist_id, music.now)


def test_playlist_holds_at_most_500_songs(call, music_conn, pick, music):
    playlist_id = ok(call(pick.actor, "create_playlist", {"name": "Five hundred"}))["playlist_id"]
    songs = col(music_conn, "SELECT id FROM songs WHERE copyright_status != 'expired' ORDER BY id LIMIT 501")
    for song_id in songs[:500]:
        ok(call(pick.actor, "add_song_to_playlist", {"playlist_id": playlist_id, "song_id": song_id}))
    before = content_hash(music_conn)
    err(call(pick.actor, "add_song_to_playlist", {"playlist_id": playlist_id, "song_id": songs[500]}), "forbidden")
    assert content_hash(music_conn) == before
    assert_playlist_consistent(music_conn, playlist_id, music.now)
    assert playlist_state(music_conn, playlist_id)[0] == 500


def test_favourite_and_unfavourite_song(call, music, music_conn, pick):
    song_id = pick.non_fav_song(status="vip_only")
    count = val(music_conn, "SELECT favourite_count FROM songs WHERE id = ?", song_id)
    title = val(music_conn, "SELECT title FROM songs WHERE id = ?", song_id)
    assert ok(call(pick.actor, "favourite_song", {"song_id": song_id})) == {"song_id": song_id, "title": title, "favourited": True}
    assert val(music_conn, "SELECT favourited_at FROM favourite_songs WHERE user_id = ? AND song_id = ?", pick.actor, song_id) == music.now
    assert val(music_conn, "SELECT favourite_count FROM songs WHERE id = ?", song_id) == count + 1
    assert val(music_conn, "SELECT COUNT(*) FROM favourite_songs WHERE song_id = ?", song_id) == count + 1
    listed = ok(call(pick.actor, "list_favourite_songs", {}))["items"]
    assert listed[0]["song_id"] == song_id  # newest favourite first
    assert ok(call(pick.actor, "get_song", {"song_id": song_id}))["favourited_by_me"] is True
    assert ok(call(pick.actor, "unfavourite_song", {"song_id": song_id})) == {"song_id": song_id, "title": title, "favourited": False}
    assert val(music_conn, "SELECT COUNT(*) FROM favourite_songs WHERE user_id = ? AND song_id = ?", pick.actor, song_id) == 0
    assert val(music_conn, "SELECT favourite_count FROM songs WHERE id = ?", song_id) == count


def test_unfavourite_an_expired_song_is_allowed(call, music_conn, pick):
    # Expired songs cannot be favourited, but a favourite made before the licence expired can be removed.
    row = music_conn.execute(
        "SELECT f.user_id, f.song_id, s.favourite_count FROM favourite_songs f JOIN songs s ON s.id = f.song_id "
        "WHERE s.copyright_status = 'expired' ORDER BY 1, 2 LIMIT 1"
    ).fetchone()
    if row is None:
        pytest.skip("no favourite of an expired song in this world")
    user, song_id, count = row
    ok(call(user, "unfavourite_song", {"song_id": song_id}))
    assert val(music_conn, "SELECT favourite_count FROM songs WHERE id = ?", song_id) == count - 1
    assert val(music_conn, "SELECT COUNT(*) FROM favourite_songs WHERE user_id = ? AND song_id = ?", user, song_id) == 0


def test_follow_and_unfollow_artist(call, music, music_conn, pick):
    artist_id = pick.unfollowed_artist()
    name, followers = music_conn.execute("SELECT name, follower_count FROM artists WHERE id = ?", (artist_id,)).fetchone()
    assert ok(call(pick.actor, "follow_artist", {"artist_id": artist_id})) == {"artist_id": artist_id, "name": name, "following": True}
    assert (
        val(music_conn, "SELECT followed_at FROM followed_artists WHERE user_id = ? AND artist_id = ?", pick.actor, artist_id) == music.now
    )
    assert val(music_conn, "SELECT follower_count FROM artists WHERE id = ?", artist_id) == followers + 1
    assert ok(call(pick.actor, "list_followed_artists", {}))["items"][0]["artist_id"] == artist_id
    assert ok(call(pick.actor, "get_artist", {"artist_id": artist_id}))["followed_by_me"] is True
    assert ok(call(pick.actor, "unfollow_artist", {"artist_id": artist_id})) == {"artist_id": artist_id, "name": name, "following": False}
    assert val(music_conn, "SELECT COUNT(*) FROM followed_artists WHERE user_id = ? AND artist_id = ?", pick.actor, artist_id) == 0
    assert val(music_conn, "SELECT follower_count FROM artists WHERE id = ?", artist_id) == followers
    assert val(music_conn, "SELECT COUNT(*) FROM followed_artists WHERE artist_id = ?", artist_id) == followers


def test_save_and_unsave_album(call, music, music_conn, pick):
    album_id = pick.unsaved_album()
    title = val(music_conn, "SELECT title FROM albums WHERE id = ?", album_id)
    saved = val(music_conn, "SELECT COUNT(*) FROM saved_albums")
    assert ok(call(pick.actor, "save_album", {"album_id": album_id})) == {"album_id": album_id, "title": title, "saved": True}
    assert val(music_conn, "SELECT saved_at FROM saved_albums WHERE user_id = ? AND album_id = ?", pick.actor, album_id) == music.now
    assert val(music_conn, "SELECT COUNT(*) FROM saved_albums") == saved + 1
    assert ok(call(pick.actor, "list_saved_albums", {}))["items"][0]["album_id"] == album_id
    assert ok(call(pick.actor, "get_album", {"album_id": album_id}))["saved_by_me"] is True
    assert ok(call(pick.actor, "unsave_album", {"album_id": album_id})) == {"album_id": album_id, "title": title, "saved": False}
    assert val(music_conn, "SELECT COUNT(*) FROM saved_albums WHERE user_id = ? AND album_id = ?", pick.actor, album_id) == 0
    assert val(music_conn, "SELECT COUNT(*) FROM saved_albums") == saved


def test_post_comment_and_reply(call, music, music_conn, pick):
    song_id = pick.song()
    total = val(music_conn, "SELECT COUNT(*) FROM comments")
    top = ok(call(pick.actor, "post_comment", {"song_id": song_id, "content": "  What a chorus!  "}))
    assert val(music_conn, "SELECT COUNT(*) FROM comments") == total + 1
    row = music_conn.execute(
        "SELECT song_id, user_id, parent_id, content, created_at, like_count FROM comments WHERE id = ?", (top["comment_id"],)
    ).fetchone()
    assert row == (song_id, pick.actor, None, "What a chorus!", music.now, 0)
    assert (top["song_id"], top["content"], top["reply_to_comment_id"], top["liked_by_me"]) == (song_id, "What a chorus!", None, False)
    assert top["song"] == val(music_conn, "SELECT title FROM songs WHERE id = ?", song_id)
    # Someone else replies; a 500-character comment is fine.
    other = pick.val("SELECT id FROM users WHERE id != ? ORDER BY id LIMIT 1", pick.actor)
    reply = ok(call(other, "post_comment", {"song_id": song_id, "content": "x" * 500, "reply_to_comment_id": top["comment_id"]}))
    assert music_conn.execute(
        "SELECT user_id, parent_id, length(content) FROM comments WHERE id = ?", (reply["comment_id"],)
    ).fetchone() == (other, top["comment_id"], 500)
    listed = ok(call(pick.actor, "list_song_comments", {"song_id": song_id}))
    assert {top["comment_id"], reply["comment_id"]} <= {c["comment_id"] for c in listed["items"]}
    assert top["comment_id"] in {c["comment_id"] for c in ok(call(pick.actor, "list_my_comments", {}))["items"]}


def test_like_comment(call, music, music_conn, pick):
    comment_id = pick.unliked_comment()
    likes = val(music_conn, "SELECT like_count FROM comments WHERE id = ?", comment_id)
    res = ok(call(pick.actor, "like_comment", {"comment_id": comment_id}))
    assert res == {"comment_id": comment_id, "like_count": likes + 1, "liked": True}
    assert val(music_conn, "SELECT liked_at FROM comment_likes WHERE user_id = ? AND comment_id = ?", pick.actor, comment_id) == music.now
    assert val(music_conn, "SELECT like_count FROM comments WHERE id = ?", comment_id) == likes + 1
    assert val(music_conn, "SELECT COUNT(*) FROM comment_likes WHERE comment_id = ?", comment_id) == likes + 1
    song_id = val(music_conn, "SELECT song_id FROM comments WHERE id = ?", comment_id)
    mine = [
        c for c in all_pages(call, pick.actor, "list_song_comments", {"song_id": song_id}, "comment_id") if c["comment_id"] == comment_id
    ]
    assert mine[0]["liked_by_me"] is True and mine[0]["like_count"] == likes + 1


def test_delete_comment_of_the_world_with_replies_and_likes(call, music_conn):
    # A comment from the world that has replies, likes, and likes on its replies.
    comment_id, author = music_conn.execute("""
        SELECT c.id, c.user_id FROM comments c
        WHERE EXISTS (SELECT 1 FROM comment_likes WHERE comment_id = c.id)
          AND EXISTS (SELECT 1 FROM comment_likes l JOIN comments r ON r.id = l.comment_id WHERE r.parent_id = c.id)
        ORDER BY c.id LIMIT 1""").fetchone()
    replies = col(music_conn, "SELECT id FROM comments WHERE parent_id = ?", comment_id)
    thread = [comment_id, *replies]
    marks = ",".join("?" * len(thread))
    likes = val(music_conn, f"SELECT COUNT(*) FROM comment_likes WHERE comment_id IN ({marks})", *thread)
    n_comments, n_likes = val(music_conn, "SELECT COUNT(*) FROM comments"), val(music_conn, "SELECT COUNT(*) FROM comment_likes")
    res = ok(call(author, "delete_comment", {"comment_id": comment_id}))
    assert res == {"deleted_comment_id": comment_id, "replies_deleted": len(replies), "likes_removed": likes}
    assert val(music_conn, f"SELECT COUNT(*) FROM comments WHERE id IN ({marks})", *thread) == 0
    assert val(music_conn, f"SELECT COUNT(*) FROM comment_likes WHERE comment_id IN ({marks})", *thread) == 0
    assert val(music_conn, "SELECT COUNT(*) FROM comments") == n_comments - len(thread)
    assert val(music_conn, "SELECT COUNT(*) FROM comment_likes") == n_likes - likes
    assert music_conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_delete_comment_removes_a_nested_thread_only(call, music_conn, pick):
    # Build: top <- reply <- reply-to-reply, plus a sibling comment on the same song, all liked.
    song_id = pick.song()
    users = col(music_conn, "SELECT id FROM users WHERE id != ? ORDER BY id LIMIT 2", pick.actor)
    top = ok(call(pick.actor, "post_comment", {"song_id": song_id, "content": "top"}))["comment_id"]
    reply = ok(call(users[0], "post_comment", {"song_id": song_id, "content": "reply", "reply_to_comment_id": top}))["comment_id"]
    deeper = ok(call(users[1], "post_comment", {"song_id": song_id, "content": "deeper", "reply_to_comment_id": reply}))["comment_id"]
    sibling = ok(call(users[1], "post_comment", {"song_id": song_id, "content": "sibling"}))["comment_id"]
    for user in users:
        for cid in (top, reply, deeper, sibling):
            ok(call(user, "like_comment", {"comment_id": cid}))
    assert val(music_conn, "SELECT like_count FROM comments WHERE id = ?", top) == 2
    res = ok(call(pick.actor, "delete_comment", {"comment_id": top}))
    assert res == {"deleted_comment_id": top, "replies_deleted": 2, "likes_removed": 6}
    assert col(music_conn, "SELECT id FROM comments WHERE id IN (?, ?, ?, ?)", top, reply, deeper, sibling) == [sibling]
    assert val(music_conn, "SELECT COUNT(*) FROM comment_likes WHERE comment_id IN (?, ?, ?)", top, reply, deeper) == 0
    assert val(music_conn, "SELECT COUNT(*) FROM comment_likes WHERE comment_id = ?", sibling) == 2
    assert val(music_conn, "SELECT like_count FROM comments WHERE id = ?", sibling) == 2
    # Deleting just a reply keeps its parent.
    reply2 = ok(call(pick.actor, "post_comment", {"song_id": song_id, "content": "me too", "reply_to_comment_id": sibling}))["comment_id"]
    assert ok(call(pick.actor, "delete_comment", {"comment_id": reply2}))["replies_deleted"] == 0
    assert col(music_conn, "SELECT id FROM comments WHERE id IN (?, ?)", sibling, reply2) == [sibling]


# =========================================================================================
# 4. Errors: the right code, and nothing changed
# =========================================================================================

LONG_NAME = "n" * 61

# id -> (builder(pick) -> (tool, args), expected code, text the message must contain or None)
ERROR_CASES: dict[str, tuple[Callable[[Pick], tuple[str, Any]], str, str | None]] = {
    # -- arguments the schema refuses
    "missing required": (lambda p: ("get_song", {}), "invalid_arguments", "song_id"),
    "missing one of two": (lambda p: ("add_song_to_playlist", {"playlist_id": p.own_playlist()}), "invalid_arguments", "song_id"),
    "missing content": (lambda p: ("post_comment", {"song_id": p.song()}), "invalid_arguments", "content"),
    "unknown argument": (lambda p: ("get_song", {"song_id": p.song(), "songid": 1}), "invalid_arguments", "songid"),
    "unknown filter": (lambda p: ("search_songs", {"artist": "Adele"}), "invalid_arguments", "artist"),
    "string for int": (lambda p: ("get_song", {"song_id": str(p.song())}), "invalid_arguments", "song_id"),
    "bool for int": (lambda p: ("favourite_song", {"song_id": True}), "invalid_arguments", "song_id"),
    "null for required int": (lambda p: ("get_song", {"song_id": None}), "invalid_arguments", "song_id"),
    "fraction for int": (lambda p: ("search_songs", {"page": 1.5}), "invalid_arguments", "page"),
    "list for string": (lambda p: ("create_playlist", {"name": ["Mix"]}), "invalid_arguments", "name"),
    "int for string": (lambda p: ("search_songs", {"query": 42}), "invalid_arguments", "query"),
    "string for bool": (lambda p: ("create_playlist", {"name": "Mix", "is_public": "yes"}), "invalid_arguments", "is_public"),
    "int for bool": (lambda p: ("update_playlist", {"playlist_id": p.own_playlist(), "is_public": 1}), "invalid_arguments", "is_public"),
    "enum value": (lambda p: ("search_songs", {"sort_by": "popular"}), "invalid_arguments", "sort_by"),
    "enum case": (lambda p: ("search_songs", {"copyright_status": "EXPIRED"}), "invalid_arguments", "copyright_status"),
    "invalid json": (lambda p: ("get_song", '{"song_id": 1'), "invalid_arguments", "JSON"),
    "not json at all": (lambda p: ("create_playlist", "name=Mix"), "invalid_arguments", "JSON"),
    "json array": (lambda p: ("get_song", "[1]"), "invalid_arguments", "object"),
    "json string": (lambda p: ("get_song", '"1"'), "invalid_arguments", "object"),
    "json null": (lambda p: ("get_song", "null"), "invalid_arguments", "object"),
    "python list": (lambda p: ("create_playlist", ["Mix"]), "invalid_arguments", "object"),
    "python int": (lambda p: ("delete_playlist", 5), "invalid_arguments", "object"),
    # -- unknown ids
    "get_song unknown": (lambda p: ("get_song", {"song_id": p.missing("songs")}), "not_found", None),
    # Ids used as filters must name something: an empty list would hide the solver's mistake.
    "search_songs unknown artist": (lambda p: ("search_songs", {"artist_id": p.missing("artists")}), "not_found", "artist"),
    "search_songs unknown album": (lambda p: ("search_songs", {"album_id": p.missing("albums")}), "not_found", "album"),
    "search_albums unknown artist": (lambda p: ("search_albums", {"artist_id": p.missing("artists")}), "not_found", "artist"),
    "history unknown song": (lambda p: ("get_listening_history", {"song_id": p.missing("songs")}), "not_found", "song"),
    "get_artist unknown": (lambda p: ("get_artist", {"artist_id": p.missing("artists")}), "not_found", None),
    "list_artist_albums unknown": (lambda p: ("list_artist_albums", {"artist_id": p.missing("artists")}), "not_found", None),
    "get_album unknown": (lambda p: ("get_album", {"album_id": p.missing("albums")}), "not_found", None),
    "get_playlist unknown": (lambda p: ("get_playlist", {"playlist_id": p.missing("playlists")}), "not_found", None),
    "list_song_comments unknown": (lambda p: ("list_song_comments", {"song_id": p.missing("songs")}), "not_found", None),
    "update_playlist unknown": (lambda p: ("update_playlist", {"playlist_id": p.missing("playlists"), "name": "X"}), "not_found", None),
    "delete_playlist unknown": (lambda p: ("delete_playlist", {"playlist_id": p.missing("playlists")}), "not_found", None),
    "add_song unknown playlist": (
        lambda p: ("add_song_to_playlist", {"playlist_id": p.missing("playlists"), "song_id": p.song()}),
        "not_found",
        None,
    ),
    "add_song unknown song": (
        lambda p: ("add_song_to_playlist", {"playlist_id": p.own_playlist(), "song_id": p.missing("songs")}),
        "not_found",
        None,
    ),
    "remove_song unknown playlist": (
        lambda p: ("remove_song_from_playlist", {"playlist_id": p.missing("playlists"), "song_id": p.song()}),
        "not_found",
        None,
    ),
    "remove_song not in playlist": (
        lambda p: ("remove_song_from_playlist", {"playlist_id": p.own_playlist(), "song_id": p.song_not_in(p.own_playlist())}),
        "not_found",
        None,
    ),
    "remove_song unknown song": (
        lambda p: ("remove_song_from_playlist", {"playlist_id": p.own_playlist(), "song_id": p.missing("songs")}),
        "not_found",
        None,
    ),
    "favourite unknown": (lambda p: ("favourite_song", {"song_id": p.missing("songs")}), "not_found", None),
    "unfavourite unknown": (lambda p: ("unfavourite_song", {"song_id": p.missing("songs")}), "not_found", None),
    "follow unknown": (lambda p: ("follow_artist", {"artist_id": p.missing("artists")}), "not_found", None),
    "unfollow unknown": (lambda p: ("unfollow_artist", {"artist_id": p.missing("artists")}), "not_found", None),
    "save unknown": (lambda p: ("save_album", {"album_id": p.missing("albums")}), "not_found", None),
    "unsave unknown": (lambda p: ("unsave_album", {"album_id": p.missing("albums")}), "not_found", None),
    "post_comment unknown song": (lambda p: ("post_comment", {"song_id": p.missing("songs"), "content": "hi"}), "not_found", None),
    "reply to unknown comment": (
        lambda p: ("post_comment", {"song_id": p.song(), "content": "hi", "reply_to_comment_id": p.missing("comments")}),
        "not_found",
        None,
    ),
    "delete_comment unknown": (lambda p: ("delete_comment", {"comment_id": p.missing("comments")}), "not_found", None),
    "like_comment unknown": (lambda p: ("like_comment", {"comment_id": p.missing("comments")}), "not_found", None),
    "negative id": (lambda p: ("get_album", {"album_id": -1}), "not_found", None),
    # -- forbidden
    "rename another's playlist": (
        lambda p: ("update_playlist", {"playlist_id": p.foreign_playlist(), "name": "Mine now"}),
        "forbidden",
        None,
    ),
    "delete another's playlist": (lambda p: ("delete_playlist", {"playlist_id": p.foreign_playlist()}), "forbidden", None),
    "add to another's playlist": (
        lambda p: (
            "add_song_to_playlist",
            {"playlist_id": p.foreign_playlist(public=True), "song_id": p.song_not_in(p.foreign_playlist(public=True))},
        ),
        "forbidden",
        None,
    ),
    "remove from another's playlist": (
        lambda p: (
            "remove_song_from_playlist",
            {"playlist_id": p.foreign_playlist(min_songs=1), "song_id": p.song_in(p.foreign_playlist(min_songs=1))},
        ),
        "forbidden",
        None,
    ),
    "view another's private playlist": (lambda p: ("get_playlist", {"playlist_id": p.foreign_playlist(public=False)}), "forbidden", None),
    "delete another's comment": (lambda p: ("delete_comment", {"comment_id": p.foreign_comment()}), "forbidden", None),
    "add expired song": (
        lambda p: ("add_song_to_playlist", {"playlist_id": p.own_playlist(), "song_id": p.song_not_in(p.own_playlist(), status="expired")}),
        "forbidden",
        "expired",
    ),
    "favourite expired song": (lambda p: ("favourite_song", {"song_id": p.non_fav_song(status="expired")}), "forbidden", "expired"),
    # -- conflicts
    "add song twice": (
        lambda p: ("add_song_to_playlist", {"playlist_id": p.own_playlist(min_songs=1), "song_id": p.song_in(p.own_playlist(min_songs=1))}),
        "conflict",
        None,
    ),
    "favourite twice": (lambda p: ("favourite_song", {"song_id": p.fav_song()}), "conflict", None),
    "follow twice": (lambda p: ("follow_artist", {"artist_id": p.followed_artist()}), "conflict", None),
    "save twice": (lambda p: ("save_album", {"album_id": p.saved_album()}), "conflict", None),
    "like twice": (lambda p: ("like_comment", {"comment_id": p.liked_comment()}), "conflict", None),
    "unfavourite not favourite": (lambda p: ("unfavourite_song", {"song_id": p.non_fav_song()}), "conflict", None),
    "unfollow not followed": (lambda p: ("unfollow_artist", {"artist_id": p.unfollowed_artist()}), "conflict", None),
    "unsave not saved": (lambda p: ("unsave_album", {"album_id": p.unsaved_album()}), "conflict", None),
    "create duplicate name": (lambda p: ("create_playlist", {"name": f"  {p.playlist_name(p.own_playlist())} "}), "conflict", None),
    "rename to a taken name": (
        lambda p: (
            "update_playlist",
            {
                "playlist_id": p.val("SELECT MAX(id) FROM playlists WHERE owner_id = ?", p.actor),
                "name": p.val("SELECT name FROM playlists WHERE owner_id = ? ORDER BY id LIMIT 1", p.actor),
            },
        ),
        "conflict",
        None,
    ),
    # -- invalid values
    "bad month": (lambda p: ("search_songs", {"released_after": "2024-13-01"}), "invalid_value", "released_after"),
    "not a date": (lambda p: ("search_songs", {"released_before": "yesterday"}), "invalid_value", "released_before"),
    "february 30": (lambda p: ("search_albums", {"released_after": "2024-02-30"}), "invalid_value", "released_after"),
    "datetime for date": (lambda p: ("get_listening_history", {"end_date": "2024-05-01 10:00:00"}), "invalid_value", "end_date"),
    "songs start after end": (
        lambda p: ("search_songs", {"released_after": "2024-06-01", "released_before": "2024-05-31"}),
        "invalid_value",
        None,
    ),
    "albums start after end": (
        lambda p: ("search_albums", {"released_after": "2024-06-01", "released_before": "2024-05-31"}),
        "invalid_value",
        None,
    ),
    "history start after end": (
        lambda p: ("get_listening_history", {"start_date": "2026-10-02", "end_date": "2026-10-01"}),
        "invalid_value",
        None,
    ),
    "history bad start": (lambda p: ("get_listening_history", {"start_date": "01/10/2026"}), "invalid_value", "start_date"),
    "unknown genre": (lambda p: ("search_songs", {"genre": "Polka"}), "invalid_value", "list_genres"),
    "unknown tag": (lambda p: ("search_songs", {"tag": "no-such-tag"}), "invalid_value", "list_tags"),
    "unknown artist genre": (lambda p: ("search_artists", {"genre": "Polka"}), "invalid_value", None),
    "unknown album genre": (lambda p: ("search_albums", {"genre": "Polka"}), "invalid_value", None),
    "empty playlist name": (lambda p: ("create_playlist", {"name": ""}), "invalid_value", None),
    "blank playlist name": (lambda p: ("create_playlist", {"name": "    "}), "invalid_value", None),
    "61-char playlist name": (lambda p: ("create_playlist", {"name": LONG_NAME}), "invalid_value", "60"),
    "rename to 61 chars": (lambda p: ("update_playlist", {"playlist_id": p.own_playlist(), "name": LONG_NAME}), "invalid_value", None),
    "rename to empty": (lambda p: ("update_playlist", {"playlist_id": p.own_playlist(), "name": " "}), "invalid_value", None),
    "comment over 500": (lambda p: ("post_comment", {"song_id": p.song(), "content": "x" * 501}), "invalid_value", "500"),
    "empty comment": (lambda p: ("post_comment", {"song_id": p.song(), "content": "   "}), "invalid_value", None),
    "reply on another song": (
        lambda p: (
            "post_comment",
            {
                "song_id": p.val("SELECT id FROM songs WHERE id != (SELECT song_id FROM comments ORDER BY id LIMIT 1) ORDER BY id LIMIT 1"),
                "content": "hi",
                "reply_to_comment_id": p.val("SELECT id FROM comments ORDER BY id LIMIT 1"),
            },
        ),
        "invalid_value",
        "another song",
    ),
    # update_playlist with nothing to change is refused as an arguments problem.
    "update with no fields": (lambda p: ("update_playlist", {"playlist_id": p.own_playlist()}), "invalid_arguments", "at least one"),
    "update with only nulls": (
        lambda p: ("update_playlist", {"playlist_id": p.own_playlist(), "name": None, "is_public": None}),
        "invalid_arguments",
        "at least one",
    ),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_error_result_and_nothing_changed(case, call, pick, unchanged):
    build, code, needle = ERROR_CASES[case]
    tool, args = build(pick)
    message = err(call(pick.actor, tool, args), code)
    if needle:
        assert needle.lower() in message.lower(), message
    unchanged()


@pytest.mark.parametrize(
    "name, suggestion",
    [
        ("search_song", "search_songs"),
        ("delete_playlists", "delete_playlist"),
        ("get_user_profile", "get_my_profile"),
    ],
)
def test_unknown_tool_suggests_a_close_name(name, suggestion, call, pick, unchanged):
    message = err(call(pick.actor, name, {}), "unknown_tool")
    assert name in message and "Did you mean: " in message and suggestion in message
    unchanged()


def test_unknown_tool_without_close_name(call, pick):
    message = err(call(pick.actor, "launch_rocket", {}), "unknown_tool")
    assert "Did you mean" not in message


def test_arguments_as_json_string_and_empty(call, pick):
    song_id = pick.song()
    assert ok(call(pick.actor, "get_song", json.dumps({"song_id": song_id}))) == ok(call(pick.actor, "get_song", {"song_id": song_id}))
    for empty in (None, "", {}):
        assert ok(call(pick.actor, "get_my_profile", empty))["user_id"] == pick.actor


def test_failed_write_after_successful_writes_keeps_only_the_successes(call, music_conn, pick):
    # The savepoint of a failing call rolls back only that call.
    playlist_id = ok(call(pick.actor, "create_playlist", {"name": "Savepoint check"}))["playlist_id"]
    ok(call(pick.actor, "add_song_to_playlist", {"playlist_id": playlist_id, "song_id": pick.song()}))
    before = content_hash(music_conn)
    err(call(pick.actor, "add_song_to_playlist", {"playlist_id": playlist_id, "song_id": pick.song()}), "conflict")
    err(call(pick.actor, "delete_comment", {"comment_id": pick.foreign_comment()}), "forbidden")
    assert content_hash(music_conn) == before
    assert playlist_songs(music_conn, playlist_id) == [(pick.song(), 1)]


# Fault injection (no mock: a temporary SQLite trigger on the real world) makes a write tool's
# later statement fail after its first write: the savepoint must undo the first write too.
# tool -> (trigger event and table, builder(pick) -> (actor, args))
MIDWAY_FAILURES: dict[str, tuple[str, Callable[[Pick], tuple[int, dict[str, Any]]]]] = {
    "add_song_to_playlist": ("UPDATE ON playlists", lambda p: (p.actor, happy_args(p)["add_song_to_playlist"])),
    "remove_song_from_playlist": (
        "UPDATE ON playlists",
        lambda p: (p.actor, {"playlist_id": p.own_playlist(min_songs=2), "song_id": p.song_in(p.own_playlist(min_songs=2))}),
    ),
    "delete_playlist": ("DELETE ON playlists", lambda p: (p.actor, {"playlist_id": p.own_playlist(min_songs=1)})),
    "favourite_song": ("UPDATE ON songs", lambda p: (p.actor, {"song_id": p.non_fav_song()})),
    "unfavourite_song": ("UPDATE ON songs", lambda p: (p.actor, {"song_id": p.fav_song()})),
    "follow_artist": ("UPDATE ON artists", lambda p: (p.actor, {"artist_id": p.unfollowed_artist()})),
    "unfollow_artist": ("UPDATE ON artists", lambda p: (p.actor, {"artist_id": p.followed_artist()})),
    "like_comment": ("UPDATE ON comments", lambda p: (p.actor, {"comment_id": p.unliked_comment()})),
    "delete_comment": (
        "DELETE ON comments",
        lambda p: (lambda author, cid: (author, {"comment_id": cid}))(
            *p.conn.execute(
                "SELECT c.user_id, c.id FROM comments c WHERE EXISTS (SELECT 1 FROM comment_likes WHERE comment_id = c.id) ORDER BY c.id LIMIT 1"
            ).fetchone()
        ),
    ),
}


@pytest.mark.parametrize("tool", list(MIDWAY_FAILURES))
def test_write_failing_midway_is_rolled_back(tool, call, pick, music_conn, unchanged):
    event, build = MIDWAY_FAILURES[tool]
    actor, args = build(pick)
    music_conn.execute(f"CREATE TEMP TRIGGER fail_midway BEFORE {event} BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
    message = err(call(actor, tool, args), "internal_error")
    assert "injected failure" in message
    unchanged()
    music_conn.execute("DROP TRIGGER fail_midway")
    ok(call(actor, tool, args))  # without the fault the same call goes through


# =========================================================================================
# 5. Generic checks over every tool
# =========================================================================================


def test_happy_args_cover_every_tool(pick):
    assert set(happy_args(pick)) == set(ALL_TOOLS)


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_unknown_extra_argument_is_refused_and_happy_call_works(tool, call, music, pick, music_conn, world_hash, unchanged):
    """An unknown extra argument is refused and changes nothing; the same call without it
    succeeds, leaves the world as it was for a read tool and changes it for a write tool."""
    args = happy_args(pick)[tool]
    message = err(call(pick.actor, tool, {**args, "bogus_extra": 1}), "invalid_arguments")
    assert "bogus_extra" in message
    if music.tools.get(tool).kind == WRITE:
        unchanged()
    value = ok(call(pick.actor, tool, args))
    assert value
    json.dumps(value)  # results must be JSON-serialisable for the solver
    if music.tools.get(tool).kind == READ:
        unchanged()  # covers the refused call too
    else:
        assert content_hash(music_conn) != world_hash
        assert music_conn.execute("PRAGMA foreign_key_check").fetchall() == []


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_schema_lists_exactly_the_params(tool, music):
    t = music.tools.get(tool)
    signature = list(inspect.signature(t.func).parameters.values())[1:]  # after env
    schema = t.parameters
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert list(schema["properties"]) == [p.name for p in signature]
    assert schema["required"] == [p.name for p in signature if p.default is inspect.Parameter.empty]
    for name, prop in schema["properties"].items():
        assert isinstance(prop.get("description"), str) and prop["description"].strip(), f"{tool}.{name} has no description"
        assert "type" in prop or "enum" in prop, f"{tool}.{name} has no type"
    assert t.summary and t.description and "Args:" not in t.description
    assert t.openai_schema()["function"] == {"name": tool, "description": t.description, "parameters": schema}


# =========================================================================================
# 6. Bugs found at 314af23 (fixed since in the working tree): regression tests that accept any
#    reasonable fix, and fail on the old behaviour
# =========================================================================================


@pytest.mark.parametrize(
    "tool, padded, unpadded",
    [
        ("search_songs", {"released_after": "2025-06-05"}, {"released_after": "2025-6-5"}),
        ("search_albums", {"released_before": "2025-06-05"}, {"released_before": "2025-6-5"}),
        ("get_listening_history", {"end_date": "2025-06-05"}, {"end_date": "2025-6-5"}),
        (
            "search_songs",
            {"released_after": "2024-05-01", "released_before": "2024-10-01"},
            {"released_after": "2024-5-1", "released_before": "2024-10-01"},
        ),
    ],
    ids=["songs-after", "albums-before", "history-end", "songs-range"],
)
def test_unpadded_date_is_refused_or_understood(tool, padded, unpadded, call, music_conn):
    # Was: strptime accepted 2025-6-5, then the text comparison (or SQLite's date()) gave wrong
    # rows, or a valid range was refused as "start after end". Now: refuse the format (invalid_value
    # about the date itself) or give what the padded date gives.
    actor = val(music_conn, "SELECT user_id FROM listening_history GROUP BY user_id ORDER BY COUNT(*) DESC, user_id LIMIT 1")
    expected = ok(call(actor, tool, padded))["total"]
    assert expected > 0
    res = call(actor, tool, unpadded)
    refused_format = not res.ok and res.error_code == "invalid_value" and "is after" not in res.error_message
    assert refused_format or (res.ok and res.value["total"] == expected), (
        res.payload() if not res.ok else f"total {res.value['total']} instead of {expected}"
    )


@pytest.mark.parametrize(
    "tool, args",
    [
        ("get_song", {"song_id": 2**63}),
        ("get_song", {"song_id": 1e300}),
        ("favourite_song", {"song_id": 2**63}),
        ("get_artist", {"artist_id": -(2**63) - 1}),
        ("add_song_to_playlist", {"playlist_id": 2**64, "song_id": 1}),
    ],
    ids=["get_song", "get_song-float", "favourite_song", "get_artist-negative", "add_song"],
)
def test_id_beyond_64_bits_is_a_clean_error(tool, args, call, pick, unchanged):
    # Was: validation passed and SQLite's OverflowError came back as internal_error.
    res = call(pick.actor, tool, args)
    assert not res.ok and res.error_code in ("not_found", "invalid_arguments"), res.payload()
    err(res, res.error_code)  # a well-formed error result
    unchanged()


@pytest.mark.parametrize("page", [2**62, 2**63 - 1])
def test_huge_page_is_an_empty_page(page, call, pick):
    # Was: OFFSET (page - 1) * 20 overflowed SQLite's integers: internal_error.
    res = ok(call(pick.actor, "list_genres", {"page": page}))
    assert res["items"] == [] and res["page"] == page
    assert res["total"] == val(pick.conn, "SELECT COUNT(*) FROM genres")
