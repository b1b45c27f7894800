"""The music platform's tools: what a listener can do in the app, acting as the current user.

Every tool is declared once here; its JSON schema comes from its signature and docstring.
Results speak product language (names next to ids), lists come in pages of 20, and a refused
action raises ToolError, which the registry turns into an error result with nothing changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ...engine.query import Where, bool_columns, check_date_range, check_text, require, sql_literal
from ...engine.search import SearchIndex, candidates, like_pattern
from ...engine.tools import ErrorCode, ToolEnv, ToolError, ToolRegistry, not_found, paginate

TOOLS = ToolRegistry("music")

PLAYLIST_LIMIT = 500  # songs per playlist, as in the product
DATE_EXAMPLE = "2024-05-31"  # the date messages show

# Song rows always carry their artist, album and genre names. CROSS JOIN fixes the join order
# (SQLite then walks songs first, through the index that matches the ORDER BY, and looks each
# name up by key) instead of letting the planner scan albums and sort everything.
SONG_COLUMNS = """s.id AS song_id, s.title, s.artist_id, ar.name AS artist, s.album_id, al.title AS album,
       g.name AS genre, s.duration_sec, s.release_date, s.language, s.copyright_status, s.play_count"""
SONG_JOINS = """CROSS JOIN artists ar ON ar.id = s.artist_id
CROSS JOIN albums al ON al.id = s.album_id
CROSS JOIN genres g ON g.id = s.genre_id"""
SONG_SELECT = f"SELECT {SONG_COLUMNS} FROM songs s {SONG_JOINS}"


def songs_via(link: str, extra_columns: str) -> str:
    """Song rows reached through a link table aliased `x` (a playlist's songs, favourites)."""
    return f"SELECT {extra_columns}, {SONG_COLUMNS} FROM {link} x CROSS JOIN songs s ON s.id = x.song_id {SONG_JOINS}"


SONG_SEARCH = SearchIndex(
    "songs",
    ("title", "artist"),
    "SELECT s.id, s.title, ar.name FROM songs s JOIN artists ar ON ar.id = s.artist_id ORDER BY s.id",
)

ALBUM_SELECT = """
SELECT al.id AS album_id, al.title, al.artist_id, ar.name AS artist, al.album_type, g.name AS genre,
       al.release_date, al.label, al.track_count, al.total_duration_sec
FROM albums al
CROSS JOIN artists ar ON ar.id = al.artist_id
CROSS JOIN genres g ON g.id = al.genre_id
"""

ARTIST_SELECT = """
SELECT ar.id AS artist_id, ar.name, ar.artist_type, ar.country, g.name AS genre, ar.debut_year,
       ar.is_verified, ar.follower_count
FROM artists ar
CROSS JOIN genres g ON g.id = ar.genre_id
"""

PLAYLIST_SELECT = """
SELECT p.id AS playlist_id, p.name, p.description, p.is_public, p.owner_id, u.username AS owner,
       p.song_count, p.total_duration_sec, p.created_at, p.updated_at
FROM playlists p
JOIN users u ON u.id = p.owner_id
"""

COMMENT_SELECT = """
SELECT c.id AS comment_id, c.song_id, s.title AS song, c.user_id, u.username, c.content, c.created_at,
       c.like_count, c.parent_id AS reply_to_comment_id,
       EXISTS (SELECT 1 FROM comment_likes l WHERE l.comment_id = c.id AND l.user_id = ?) AS liked_by_me
FROM comments c
JOIN users u ON u.id = c.user_id
JOIN songs s ON s.id = c.song_id
"""


# -- shared helpers ------------------------------------------------------------------------


def _mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def _song(row: dict[str, Any]) -> dict[str, Any]:
    row["duration"] = _mmss(row["duration_sec"])
    return row


def _album(row: dict[str, Any]) -> dict[str, Any]:
    row["total_duration"] = _mmss(row["total_duration_sec"])
    return row


_artist = bool_columns("is_verified")


def _playlist(row: dict[str, Any]) -> dict[str, Any]:
    row["is_public"] = bool(row["is_public"])
    row["total_duration"] = _mmss(row["total_duration_sec"])
    return row


_comment = bool_columns("liked_by_me")


def _genre_id(env: ToolEnv, name: str) -> int:
    gid: int | None = env.scalar("SELECT id FROM genres WHERE name = ? COLLATE NOCASE", (name,))
    if gid is None:
        raise ToolError(ErrorCode.INVALID_VALUE, f"No genre named {name!r}; list_genres shows the genres.")
    return gid


def _filter_on_row(env: ToolEnv, where: Where, column: str, ident: int | None, table: str, what: str) -> None:
    """Keep rows whose `column` is `ident`, which must be the id of a row of `table` (not_found naming `what` otherwise)."""
    if ident is not None:
        require(env, table, ident, what)
        where.add(f"{column} = ?", ident)


def _filter_dates(where: Where, column: str, after: str | None, before: str | None) -> None:
    """Keep rows whose `column` date is within the bounds given (an empty bound is no bound)."""
    if after:
        where.add(f"{column} >= ?", after)
    if before:
        where.add(f"{column} <= ?", before)


def _counted_page(
    env: ToolEnv, select: str, source: str, where: Where, page: int, order: str, shape: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """One page of `select` rows matching `where`, the total counted on `source` (a table and its alias) without the joins."""
    condition, params = where.clause, where.params
    return paginate(env, select + condition, params, page, order, shape, count=(f"SELECT COUNT(*) FROM {source}{condition}", params))


def _song_row(env: ToolEnv, song_id: int) -> dict[str, Any]:
    row = env.one(SONG_SELECT + " WHERE s.id = ?", (song_id,))
    if row is None:
        raise not_found("song", song_id)
    return _song(row)


def _available(song: dict[str, Any], action: str) -> None:
    if song["copyright_status"] == "expired":
        raise ToolError(
            ErrorCode.FORBIDDEN,
            f"'{song['title']}' is unavailable (its copyright licence has expired), so it cannot be {action}.",
        )


def _own_playlist(env: ToolEnv, playlist_id: int) -> dict[str, Any]:
    row = require(env, "playlists", playlist_id, "playlist")
    if row["owner_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Playlist {playlist_id} belongs to another user; you can only change your own playlists.")
    return row


def _touch_playlist(env: ToolEnv, playlist_id: int) -> None:
    env.conn.execute(
        "UPDATE playlists SET song_count = (SELECT COUNT(*) FROM playlist_songs WHERE playlist_id = :p), "
        "total_duration_sec = COALESCE((SELECT SUM(s.duration_sec) FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id "
        "WHERE ps.playlist_id = :p), 0), updated_at = :now WHERE id = :p",
        {"p": playlist_id, "now": env.now},
    )


def _playlist_summary(env: ToolEnv, playlist_id: int) -> dict[str, Any]:
    return _playlist(env.one(PLAYLIST_SELECT + " WHERE p.id = ?", (playlist_id,)))  # type: ignore[arg-type]


# -- profile -------------------------------------------------------------------------------


@TOOLS.read
def get_my_profile(env: ToolEnv) -> dict[str, Any]:
    """Show the current user's profile: name, country, VIP membership and library counts.

    Returns the user's id, username, display name, VIP level (0 = not VIP) and expiry, join date,
    and how many playlists, favourite songs, followed artists and saved albums they have.
    """
    user = env.one(
        "SELECT id AS user_id, username, display_name, country, birth_year, vip_level, vip_expires_at, joined_at, bio "
        "FROM users WHERE id = ?",
        (env.actor_id,),
    )
    assert user is not None
    counts = env.one(
        "SELECT (SELECT COUNT(*) FROM playlists WHERE owner_id = :u) AS playlists, "
        "(SELECT COUNT(*) FROM favourite_songs WHERE user_id = :u) AS favourite_songs, "
        "(SELECT COUNT(*) FROM followed_artists WHERE user_id = :u) AS followed_artists, "
        "(SELECT COUNT(*) FROM saved_albums WHERE user_id = :u) AS saved_albums",
        {"u": env.actor_id},
    )
    return {**user, **(counts or {}), "now": env.now}


# -- catalogue: songs ----------------------------------------------------------------------


@TOOLS.read
def search_songs(
    env: ToolEnv,
    query: str = "",
    artist_id: int | None = None,
    album_id: int | None = None,
    genre: str | None = None,
    tag: str | None = None,
    language: str | None = None,
    released_after: str | None = None,
    released_before: str | None = None,
    min_duration_sec: int | None = None,
    max_duration_sec: int | None = None,
    copyright_status: Literal["licensed", "vip_only", "expired"] | None = None,
    sort_by: Literal["relevance", "most_played", "newest", "oldest", "title", "duration"] = "relevance",
    page: int = 1,
) -> dict[str, Any]:
    """Search the song catalogue by title or artist name, with filters.

    Returns one page (20 songs) with the total: each song with its id, title, artist, album,
    genre, duration, release date, language, copyright status and play count.

    Args:
        query: Words to find in the song title or the artist's name (case-insensitive); empty matches every song.
        artist_id: Only songs whose main artist is this artist.
        album_id: Only songs on this album.
        genre: Only songs of this genre, by name (sub-genres are separate genres; see list_genres).
        tag: Only songs with this tag, by name (see list_tags), e.g. "chill".
        language: Only songs in this language, e.g. "English", "Korean", "Instrumental".
        released_after: Only songs released on or after this date (YYYY-MM-DD).
        released_before: Only songs released on or before this date (YYYY-MM-DD).
        min_duration_sec: Only songs at least this many seconds long.
        max_duration_sec: Only songs at most this many seconds long.
        copyright_status: Only songs with this availability: licensed (free), vip_only, expired (unplayable).
        sort_by: Order of results; relevance puts exact title matches first, then the most played.
        page: Page number, from 1.
    """
    check_date_range(released_after, released_before, "released_after", "released_before", example=DATE_EXAMPLE)
    # Every condition is on `s` alone, so the total is counted on songs without the joins.
    where = Where()
    text = query.strip()
    if text:
        fragment, fts_params = candidates(SONG_SEARCH, "s.id", text)
        where.add(
            f"{fragment} AND (s.title LIKE ? ESCAPE '\\' OR s.artist_id IN (SELECT id FROM artists WHERE name LIKE ? ESCAPE '\\'))",
            *fts_params,
            like_pattern(text),
            like_pattern(text),
        )
    _filter_on_row(env, where, "s.artist_id", artist_id, "artists", "artist")
    _filter_on_row(env, where, "s.album_id", album_id, "albums", "album")
    if genre is not None:
        where.add("s.genre_id = ?", _genre_id(env, genre))
    if tag is not None:
        tag_id = env.scalar("SELECT id FROM tags WHERE name = ? COLLATE NOCASE", (tag,))
        if tag_id is None:
            raise ToolError(ErrorCode.INVALID_VALUE, f"No tag named {tag!r}; list_tags shows the tags.")
        where.add("s.id IN (SELECT song_id FROM song_tags WHERE tag_id = ?)", tag_id)
    if language is not None:
        where.add("s.language = ? COLLATE NOCASE", language)
    _filter_dates(where, "s.release_date", released_after, released_before)
    if min_duration_sec is not None:
        where.add("s.duration_sec >= ?", min_duration_sec)
    if max_duration_sec is not None:
        where.add("s.duration_sec <= ?", max_duration_sec)
    if copyright_status is not None:
        where.add("s.copyright_status = ?", copyright_status)
    # Tie-breaks run in the same direction as the sort so that an index can serve the order.
    most_played = "s.play_count DESC, s.id DESC"
    order = {
        "relevance": f"(s.title = {sql_literal(text)} COLLATE NOCASE) DESC, {most_played}" if text else most_played,
        "most_played": most_played,
        "newest": "s.release_date DESC, s.id DESC",
        "oldest": "s.release_date, s.id",
        "title": "s.title COLLATE NOCASE, s.id",
        "duration": "s.duration_sec DESC, s.id DESC",
    }[sort_by]
    return _counted_page(env, SONG_SELECT, "songs s", where, page, order, _song)


@TOOLS.read
def get_song(env: ToolEnv, song_id: int) -> dict[str, Any]:
    """Show a song in full: album, artists (main and credited), genre, tags, lyrics excerpt,
    availability, play and favourite counts, and whether the current user has favourited it.

    Args:
        song_id: The song's id.
    """
    # One statement: credits and tags come back as JSON arrays built by SQLite.
    song = env.one(
        f"SELECT {SONG_COLUMNS}, s.track_number, s.lyrics_excerpt, s.is_explicit, s.favourite_count, "
        "(SELECT COUNT(*) FROM comments c WHERE c.song_id = s.id) AS comment_count, "
        "EXISTS (SELECT 1 FROM favourite_songs f WHERE f.song_id = s.id AND f.user_id = :u) AS favourited_by_me, "
        "(SELECT COUNT(*) FROM listening_history h WHERE h.song_id = s.id AND h.user_id = :u) AS my_play_count, "
        "(SELECT json_group_array(json_object('artist_id', artist_id, 'name', name, 'role', role)) FROM "
        " (SELECT sa.artist_id, a2.name, sa.role FROM song_artists sa JOIN artists a2 ON a2.id = sa.artist_id "
        "  WHERE sa.song_id = s.id ORDER BY sa.role, a2.name)) AS credits, "
        "(SELECT json_group_array(name) FROM (SELECT t.name FROM song_tags st JOIN tags t ON t.id = st.tag_id "
        "  WHERE st.song_id = s.id ORDER BY t.name)) AS tags "
        f"FROM songs s {SONG_JOINS} WHERE s.id = :s",
        {"s": song_id, "u": env.actor_id},
    )
    if song is None:
        raise not_found("song", song_id)
    song = bool_columns("is_explicit", "favourited_by_me")(_song(song))
    song["credits"] = json.loads(song["credits"])
    song["tags"] = json.loads(song["tags"])
    return song


# -- catalogue: artists and albums ---------------------------------------------------------


@TOOLS.read
def search_artists(
    env: ToolEnv,
    query: str = "",
    genre: str | None = None,
    country: str | None = None,
    artist_type: Literal["solo", "band", "duo", "orchestra"] | None = None,
    sort_by: Literal["relevance", "followers", "name", "debut_year"] = "relevance",
    page: int = 1,
) -> dict[str, Any]:
    """Search artists by name, with filters.

    Returns one page (20 artists) with the total: id, name, type, country, genre, debut year,
    verification and follower count.

    Args:
        query: Words to find in the artist's name (case-insensitive); empty matches every artist.
        genre: Only artists of this genre, by name.
        country: Only artists from this country, as a two-letter code such as "KR" or "US".
        artist_type: Only solo artists, bands, duos or orchestras.
        sort_by: Order of results; relevance puts exact name matches first, then the most followed.
        page: Page number, from 1.
    """
    where = Where()
    if query.strip():
        where.add("ar.name LIKE ? ESCAPE '\\'", like_pattern(query.strip()))
    if genre is not None:
        where.add("ar.genre_id = ?", _genre_id(env, genre))
    if country is not None:
        where.add("ar.country = ? COLLATE NOCASE", country)
    if artist_type is not None:
        where.add("ar.artist_type = ?", artist_type)
    order = {
        "relevance": f"(ar.name = {sql_literal(query.strip())} COLLATE NOCASE) DESC, ar.follower_count DESC, ar.id",
        "followers": "ar.follower_count DESC, ar.id",
        "name": "ar.name COLLATE NOCASE, ar.id",
        "debut_year": "ar.debut_year, ar.id",
    }[sort_by]
    return _counted_page(env, ARTIST_SELECT, "artists ar", where, page, order, _artist)


@TOOLS.read
def get_artist(env: ToolEnv, artist_id: int) -> dict[str, Any]:
    """Show an artist: bio, genre, country, followers, how many albums and songs, their five
    most played songs, and whether the current user follows them.

    Args:
        artist_id: The artist's id.
    """
    artist = env.one(
        ARTIST_SELECT.replace(
            "SELECT ",
            "SELECT ar.bio, (SELECT COUNT(*) FROM albums WHERE artist_id = ar.id) AS album_count, "
            "(SELECT COUNT(*) FROM songs WHERE artist_id = ar.id) AS song_count, "
            "EXISTS (SELECT 1 FROM followed_artists WHERE artist_id = ar.id AND user_id = ?) AS followed_by_me, ",
            1,
        )
        + " WHERE ar.id = ?",
        (env.actor_id, artist_id),
    )
    if artist is None:
        raise not_found("artist", artist_id)
    artist = bool_columns("is_verified", "followed_by_me")(artist)
    artist["top_songs"] = [
        _song(r) for r in env.all(SONG_SELECT + " WHERE s.artist_id = ? ORDER BY s.play_count DESC, s.id DESC LIMIT 5", (artist_id,))
    ]
    return artist


@TOOLS.read
def list_artist_albums(
    env: ToolEnv,
    artist_id: int,
    album_type: Literal["single", "ep", "album"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List an artist's releases, newest first.

    Args:
        artist_id: The artist's id.
        album_type: Only singles, EPs or full albums.
        page: Page number, from 1.
    """
    require(env, "artists", artist_id, "artist")
    where = Where().add("al.artist_id = ?", artist_id)
    if album_type is not None:
        where.add("al.album_type = ?", album_type)
    return paginate(env, ALBUM_SELECT + where.clause, where.params, page, "al.release_date DESC, al.id", _album)


@TOOLS.read
def search_albums(
    env: ToolEnv,
    query: str = "",
    artist_id: int | None = None,
    genre: str | None = None,
    album_type: Literal["single", "ep", "album"] | None = None,
    released_after: str | None = None,
    released_before: str | None = None,
    sort_by: Literal["relevance", "newest", "oldest", "title"] = "relevance",
    page: int = 1,
) -> dict[str, Any]:
    """Search albums, EPs and singles by title or artist name, with filters.

    Args:
        query: Words to find in the album title or the artist's name (case-insensitive); empty matches every album.
        artist_id: Only releases by this artist.
        genre: Only releases of this genre, by name.
        album_type: Only singles, EPs or full albums.
        released_after: Only releases on or after this date (YYYY-MM-DD).
        released_before: Only releases on or before this date (YYYY-MM-DD).
        sort_by: Order of results; relevance puts exact title matches first, then the newest.
        page: Page number, from 1.
    """
    check_date_range(released_after, released_before, "released_after", "released_before", example=DATE_EXAMPLE)
    where = Where()
    if query.strip():
        pattern = like_pattern(query.strip())
        where.add(
            "(al.title LIKE ? ESCAPE '\\' OR al.artist_id IN (SELECT id FROM artists WHERE name LIKE ? ESCAPE '\\'))", pattern, pattern
        )
    _filter_on_row(env, where, "al.artist_id", artist_id, "artists", "artist")
    if genre is not None:
        where.add("al.genre_id = ?", _genre_id(env, genre))
    if album_type is not None:
        where.add("al.album_type = ?", album_type)
    _filter_dates(where, "al.release_date", released_after, released_before)
    order = {
        "relevance": f"(al.title = {sql_literal(query.strip())} COLLATE NOCASE) DESC, al.release_date DESC, al.id DESC",
        "newest": "al.release_date DESC, al.id DESC",
        "oldest": "al.release_date, al.id",
        "title": "al.title COLLATE NOCASE, al.id",
    }[sort_by]
    return _counted_page(env, ALBUM_SELECT, "albums al", where, page, order, _album)


@TOOLS.read
def get_album(env: ToolEnv, album_id: int) -> dict[str, Any]:
    """Show an album with its full track list and whether the current user saved it.

    Args:
        album_id: The album's id.
    """
    album = env.one(ALBUM_SELECT + " WHERE al.id = ?", (album_id,))
    if album is None:
        raise not_found("album", album_id)
    album = _album(album)
    album["saved_by_me"] = bool(env.scalar("SELECT 1 FROM saved_albums WHERE album_id = ? AND user_id = ?", (album_id, env.actor_id)))
    album["tracks"] = [
        {"track_number": r.pop("track_number"), **_song(r)}
        for r in env.all(
            f"SELECT s.track_number, {SONG_COLUMNS} FROM songs s {SONG_JOINS} WHERE s.album_id = ? ORDER BY s.track_number",
            (album_id,),
        )
    ]
    return album


@TOOLS.read
def list_genres(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the platform's genres, with each sub-genre's parent genre.

    Args:
        page: Page number, from 1.
    """
    return paginate(
        env,
        "SELECT g.id AS genre_id, g.name, p.name AS parent_genre, g.description FROM genres g LEFT JOIN genres p ON p.id = g.parent_id",
        [],
        page,
        "g.id",
    )


@TOOLS.read
def list_tags(env: ToolEnv, category: Literal["mood", "activity", "era", "sound"] | None = None, page: int = 1) -> dict[str, Any]:
    """List the tags songs can carry (moods, activities, eras, sounds).

    Args:
        category: Only tags of this category.
        page: Page number, from 1.
    """
    where = Where().add("category = ?", category) if category else Where()
    return paginate(env, f"SELECT id AS tag_id, name, category FROM tags{where.clause}", where.params, page, "id")


# -- the user's library --------------------------------------------------------------------


@TOOLS.read
def list_my_playlists(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the current user's playlists (public and private), most recently updated first.

    Args:
        page: Page number, from 1.
    """
    return paginate(env, PLAYLIST_SELECT + " WHERE p.owner_id = ?", [env.actor_id], page, "p.updated_at DESC, p.id", _playlist)


@TOOLS.read
def search_playlists(env: ToolEnv, query: str = "", page: int = 1) -> dict[str, Any]:
    """Search public playlists by name (the current user's own playlists included).

    Args:
        query: Words to find in the playlist name (case-insensitive); empty lists every public playlist.
        page: Page number, from 1.
    """
    where = Where().add("(p.is_public = 1 OR p.owner_id = ?)", env.actor_id)
    if query.strip():
        where.add("p.name LIKE ? ESCAPE '\\'", like_pattern(query.strip()))
    return paginate(env, PLAYLIST_SELECT + where.clause, where.params, page, "p.song_count DESC, p.id", _playlist)


@TOOLS.read
def get_playlist(env: ToolEnv, playlist_id: int, page: int = 1) -> dict[str, Any]:
    """Show a playlist and one page of its songs in playlist order. Another user's private
    playlist cannot be viewed.

    Args:
        playlist_id: The playlist's id.
        page: Page of the playlist's songs, from 1.
    """
    playlist = env.one(PLAYLIST_SELECT + " WHERE p.id = ?", (playlist_id,))
    if playlist is None:
        raise not_found("playlist", playlist_id)
    if not playlist["is_public"] and playlist["owner_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Playlist {playlist_id} is private.")
    songs = paginate(
        env,
        songs_via("playlist_songs", "x.position, x.added_at") + " WHERE x.playlist_id = ?",
        [playlist_id],
        page,
        "x.position",
        _song,
        count=playlist["song_count"],  # a stored aggregate the tools keep exact
    )
    return {"playlist": _playlist(playlist), "songs": songs}


@TOOLS.read
def list_favourite_songs(
    env: ToolEnv,
    sort_by: Literal["newest", "oldest", "title", "artist"] = "newest",
    page: int = 1,
) -> dict[str, Any]:
    """List the songs the current user has favourited, with when each was favourited.

    Args:
        sort_by: newest or oldest favourited first, or by song title or artist name.
        page: Page number, from 1.
    """
    order = {
        "newest": "x.favourited_at DESC, s.id",
        "oldest": "x.favourited_at, s.id",
        "title": "s.title COLLATE NOCASE, s.id",
        "artist": "ar.name COLLATE NOCASE, s.id",
    }[sort_by]
    select = songs_via("favourite_songs", "x.favourited_at") + " WHERE x.user_id = ?"
    count = ("SELECT COUNT(*) FROM favourite_songs WHERE user_id = ?", [env.actor_id])
    return paginate(env, select, [env.actor_id], page, order, _song, count=count)


@TOOLS.read
def list_followed_artists(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the artists the current user follows, most recently followed first.

    Args:
        page: Page number, from 1.
    """
    select = (
        ARTIST_SELECT.replace("SELECT ", "SELECT f.followed_at, ", 1)
        + " JOIN followed_artists f ON f.artist_id = ar.id WHERE f.user_id = ?"
    )
    return paginate(env, select, [env.actor_id], page, "f.followed_at DESC, ar.id", _artist)


@TOOLS.read
def list_saved_albums(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the albums the current user has saved, most recently saved first.

    Args:
        page: Page number, from 1.
    """
    select = (
        ALBUM_SELECT.replace("SELECT ", "SELECT sv.saved_at, ", 1) + " JOIN saved_albums sv ON sv.album_id = al.id WHERE sv.user_id = ?"
    )
    return paginate(env, select, [env.actor_id], page, "sv.saved_at DESC, al.id", _album)


@TOOLS.read
def get_listening_history(
    env: ToolEnv,
    start_date: str | None = None,
    end_date: str | None = None,
    song_id: int | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List the current user's plays, most recent first: what was played, when, for how long,
    from where and on which device.

    Args:
        start_date: Only plays on or after this day (YYYY-MM-DD).
        end_date: Only plays on or before this day (YYYY-MM-DD), the whole day included.
        song_id: Only plays of this song.
        page: Page number, from 1.
    """
    check_date_range(start_date, end_date, "start_date", "end_date", example=DATE_EXAMPLE)
    where = Where().add("h.user_id = ?", env.actor_id)
    if start_date:
        where.add("h.played_at >= ?", start_date)
    if end_date:
        where.add("h.played_at < date(?, '+1 day')", end_date)
    if song_id is not None:
        require(env, "songs", song_id, "song")
        where.add("h.song_id = ?", song_id)
    select = (
        "SELECT h.id AS play_id, h.played_at, h.seconds_played, h.source, h.device, s.id AS song_id, s.title, "
        "s.artist_id, ar.name AS artist, s.album_id, al.title AS album, s.duration_sec FROM listening_history h "
        "JOIN songs s ON s.id = h.song_id JOIN artists ar ON ar.id = s.artist_id JOIN albums al ON al.id = s.album_id" + where.clause
    )
    return paginate(env, select, where.params, page, "h.played_at DESC, h.id DESC")


# -- comments ------------------------------------------------------------------------------


@TOOLS.read
def list_song_comments(
    env: ToolEnv,
    song_id: int,
    sort_by: Literal["newest", "oldest", "most_liked"] = "newest",
    page: int = 1,
) -> dict[str, Any]:
    """List the comments on a song (replies included, with the comment they answer).

    Args:
        song_id: The song's id.
        sort_by: newest or oldest first, or the most liked first.
        page: Page number, from 1.
    """
    require(env, "songs", song_id, "song")
    order = {"newest": "c.created_at DESC, c.id", "oldest": "c.created_at, c.id", "most_liked": "c.like_count DESC, c.id"}[sort_by]
    return paginate(env, COMMENT_SELECT + " WHERE c.song_id = ?", [env.actor_id, song_id], page, order, _comment)


@TOOLS.read
def list_my_comments(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the comments the current user has posted, newest first.

    Args:
        page: Page number, from 1.
    """
    return paginate(env, COMMENT_SELECT + " WHERE c.user_id = ?", [env.actor_id, env.actor_id], page, "c.created_at DESC, c.id", _comment)


# -- writes: playlists ---------------------------------------------------------------------


@TOOLS.write
def create_playlist(env: ToolEnv, name: str, description: str = "", is_public: bool = True) -> dict[str, Any]:
    """Create a new, empty playlist owned by the current user. Names are unique per user.

    Args:
        name: The playlist's name, 1 to 60 characters.
        description: A short description.
        is_public: Whether other users can find and view it.
    """
    name = check_text(name, "A playlist name", 60)
    if env.scalar("SELECT 1 FROM playlists WHERE owner_id = ? AND name = ?", (env.actor_id, name)):
        raise ToolError(ErrorCode.CONFLICT, f"You already have a playlist named {name!r}.")
    cur = env.conn.execute(
        "INSERT INTO playlists (owner_id, name, description, is_public, created_at, updated_at, song_count, total_duration_sec) "
        "VALUES (?, ?, ?, ?, ?, ?, 0, 0)",
        (env.actor_id, name, description.strip(), int(is_public), env.now, env.now),
    )
    return _playlist_summary(env, cur.lastrowid)  # type: ignore[arg-type]


@TOOLS.write
def update_playlist(
    env: ToolEnv,
    playlist_id: int,
    name: str | None = None,
    description: str | None = None,
    is_public: bool | None = None,
) -> dict[str, Any]:
    """Rename a playlist of the current user, change its description, or make it public or private.

    Args:
        playlist_id: The playlist's id.
        name: The new name, 1 to 60 characters.
        description: The new description.
        is_public: True to make it public, false to make it private.
    """
    if name is None and description is None and is_public is None:
        raise ToolError(ErrorCode.INVALID_ARGUMENTS, "Give at least one of name, description, is_public.")
    playlist = _own_playlist(env, playlist_id)
    changes: dict[str, Any] = {}
    if name is not None:
        name = check_text(name, "A playlist name", 60)
        clash = env.scalar("SELECT id FROM playlists WHERE owner_id = ? AND name = ? AND id != ?", (env.actor_id, name, playlist_id))
        if clash:
            raise ToolError(ErrorCode.CONFLICT, f"You already have another playlist named {name!r}.")
        changes["name"] = name
    if description is not None:
        changes["description"] = description.strip()
    if is_public is not None:
        changes["is_public"] = int(is_public)
    changes = {k: v for k, v in changes.items() if playlist[k] != v}
    if changes:
        sets = ", ".join(f"{k} = ?" for k in changes)
        env.conn.execute(f"UPDATE playlists SET {sets}, updated_at = ? WHERE id = ?", (*changes.values(), env.now, playlist_id))
    return _playlist_summary(env, playlist_id)


@TOOLS.write
def delete_playlist(env: ToolEnv, playlist_id: int) -> dict[str, Any]:
    """Delete one of the current user's playlists and its song list.

    Args:
        playlist_id: The playlist's id.
    """
    playlist = _own_playlist(env, playlist_id)
    removed = env.conn.execute("DELETE FROM playlist_songs WHERE playlist_id = ?", (playlist_id,)).rowcount
    env.conn.execute("DELETE FROM playlists WHERE id = ?", (playlist_id,))
    return {"deleted_playlist_id": playlist_id, "name": playlist["name"], "songs_removed": removed}


@TOOLS.write
def add_song_to_playlist(env: ToolEnv, playlist_id: int, song_id: int) -> dict[str, Any]:
    """Append a song to the end of one of the current user's playlists. A song can be in a
    playlist once; songs whose licence has expired cannot be added.

    Args:
        playlist_id: The playlist's id.
        song_id: The song's id.
    """
    playlist = _own_playlist(env, playlist_id)
    song = _song_row(env, song_id)
    _available(song, "added to a playlist")
    if env.scalar("SELECT 1 FROM playlist_songs WHERE playlist_id = ? AND song_id = ?", (playlist_id, song_id)):
        raise ToolError(ErrorCode.CONFLICT, f"'{song['title']}' is already in playlist '{playlist['name']}'.")
    count = env.scalar("SELECT COUNT(*) FROM playlist_songs WHERE playlist_id = ?", (playlist_id,))
    if count >= PLAYLIST_LIMIT:
        raise ToolError(ErrorCode.FORBIDDEN, f"A playlist holds at most {PLAYLIST_LIMIT} songs.")
    env.conn.execute(
        "INSERT INTO playlist_songs (playlist_id, song_id, position, added_at) VALUES (?, ?, ?, ?)",
        (playlist_id, song_id, count + 1, env.now),
    )
    _touch_playlist(env, playlist_id)
    return {
        "playlist_id": playlist_id,
        "playlist": playlist["name"],
        "song_id": song_id,
        "title": song["title"],
        "position": count + 1,
        "song_count": count + 1,
    }


@TOOLS.write
def remove_song_from_playlist(env: ToolEnv, playlist_id: int, song_id: int) -> dict[str, Any]:
    """Remove a song from one of the current user's playlists; the songs after it move up.

    Args:
        playlist_id: The playlist's id.
        song_id: The song's id.
    """
    playlist = _own_playlist(env, playlist_id)
    position = env.scalar("SELECT position FROM playlist_songs WHERE playlist_id = ? AND song_id = ?", (playlist_id, song_id))
    if position is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"Song {song_id} is not in playlist '{playlist['name']}'.")
    env.conn.execute("DELETE FROM playlist_songs WHERE playlist_id = ? AND song_id = ?", (playlist_id, song_id))
    env.conn.execute("UPDATE playlist_songs SET position = position - 1 WHERE playlist_id = ? AND position > ?", (playlist_id, position))
    _touch_playlist(env, playlist_id)
    remaining = env.scalar("SELECT song_count FROM playlists WHERE id = ?", (playlist_id,))
    return {"playlist_id": playlist_id, "playlist": playlist["name"], "removed_song_id": song_id, "song_count": remaining}


# -- writes: favourites, follows, saved albums ---------------------------------------------


@dataclass(frozen=True)
class Library:
    """A part of the user's library: rows (user_id, <key>, <stamp>), maybe with a counter
    on the item that the tools keep equal to the number of rows."""

    table: str
    key: str
    stamp: str
    counter: str | None  # "table.column" of the item's aggregate
    present: str  # message when adding what is there; {} is the item's name
    absent: str  # message when removing what is not there
    name: str  # the item's column that names it ("title", "name")
    flag: str  # the answer's key that says whether the item is now in the library

    def answer(self, item_id: int, item: dict[str, Any], present: bool) -> dict[str, Any]:
        """What an add or remove tool returns: the item, its name and whether it is now in the library."""
        return {self.key: item_id, self.name: item[self.name], self.flag: present}


FAVOURITES = Library(
    "favourite_songs",
    "song_id",
    "favourited_at",
    "songs.favourite_count",
    "'{}' is already in your favourites.",
    "'{}' is not in your favourites.",
    "title",
    "favourited",
)
FOLLOWS = Library(
    "followed_artists",
    "artist_id",
    "followed_at",
    "artists.follower_count",
    "You already follow {}.",
    "You do not follow {}.",
    "name",
    "following",
)
SAVED = Library(
    "saved_albums", "album_id", "saved_at", None, "'{}' is already in your library.", "'{}' is not in your library.", "title", "saved"
)


def _add_to_library(env: ToolEnv, library: Library, item_id: int, item: dict[str, Any]) -> dict[str, Any]:
    where = f"user_id = ? AND {library.key} = ?"
    if env.scalar(f"SELECT 1 FROM {library.table} WHERE {where}", (env.actor_id, item_id)):
        raise ToolError(ErrorCode.CONFLICT, library.present.format(item[library.name]))
    env.conn.execute(
        f"INSERT INTO {library.table} (user_id, {library.key}, {library.stamp}) VALUES (?, ?, ?)",
        (env.actor_id, item_id, env.now),
    )
    _count(env, library, item_id, +1)
    return library.answer(item_id, item, True)


def _remove_from_library(env: ToolEnv, library: Library, item_id: int, item: dict[str, Any]) -> dict[str, Any]:
    sql = f"DELETE FROM {library.table} WHERE user_id = ? AND {library.key} = ?"
    if not env.conn.execute(sql, (env.actor_id, item_id)).rowcount:
        raise ToolError(ErrorCode.CONFLICT, library.absent.format(item[library.name]))
    _count(env, library, item_id, -1)
    return library.answer(item_id, item, False)


def _count(env: ToolEnv, library: Library, item_id: int, delta: int) -> None:
    if library.counter:
        table, column = library.counter.split(".")
        env.conn.execute(f"UPDATE {table} SET {column} = {column} + ? WHERE id = ?", (delta, item_id))


@TOOLS.write
def favourite_song(env: ToolEnv, song_id: int) -> dict[str, Any]:
    """Add a song to the current user's favourites. Songs whose licence has expired cannot be favourited.

    Args:
        song_id: The song's id.
    """
    song = _song_row(env, song_id)
    _available(song, "favourited")
    return _add_to_library(env, FAVOURITES, song_id, song)


@TOOLS.write
def unfavourite_song(env: ToolEnv, song_id: int) -> dict[str, Any]:
    """Remove a song from the current user's favourites.

    Args:
        song_id: The song's id.
    """
    return _remove_from_library(env, FAVOURITES, song_id, _song_row(env, song_id))


@TOOLS.write
def follow_artist(env: ToolEnv, artist_id: int) -> dict[str, Any]:
    """Follow an artist as the current user.

    Args:
        artist_id: The artist's id.
    """
    return _add_to_library(env, FOLLOWS, artist_id, require(env, "artists", artist_id, "artist"))


@TOOLS.write
def unfollow_artist(env: ToolEnv, artist_id: int) -> dict[str, Any]:
    """Stop following an artist.

    Args:
        artist_id: The artist's id.
    """
    return _remove_from_library(env, FOLLOWS, artist_id, require(env, "artists", artist_id, "artist"))


@TOOLS.write
def save_album(env: ToolEnv, album_id: int) -> dict[str, Any]:
    """Save an album to the current user's library.

    Args:
        album_id: The album's id.
    """
    return _add_to_library(env, SAVED, album_id, require(env, "albums", album_id, "album"))


@TOOLS.write
def unsave_album(env: ToolEnv, album_id: int) -> dict[str, Any]:
    """Remove an album from the current user's library.

    Args:
        album_id: The album's id.
    """
    return _remove_from_library(env, SAVED, album_id, require(env, "albums", album_id, "album"))


# -- writes: comments ----------------------------------------------------------------------


@TOOLS.write
def post_comment(env: ToolEnv, song_id: int, content: str, reply_to_comment_id: int | None = None) -> dict[str, Any]:
    """Post a comment on a song as the current user, or reply to a comment on that song.

    Args:
        song_id: The song's id.
        content: The comment's text, 1 to 500 characters.
        reply_to_comment_id: The comment this one answers; it must be on the same song.
    """
    song = _song_row(env, song_id)
    content = check_text(content, "A comment", 500)
    if reply_to_comment_id is not None:
        parent = require(env, "comments", reply_to_comment_id, "comment")
        if parent["song_id"] != song_id:
            raise ToolError(ErrorCode.INVALID_VALUE, f"Comment {reply_to_comment_id} is on another song, not on '{song['title']}'.")
    cur = env.conn.execute(
        "INSERT INTO comments (song_id, user_id, parent_id, content, created_at, like_count) VALUES (?, ?, ?, ?, ?, 0)",
        (song_id, env.actor_id, reply_to_comment_id, content, env.now),
    )
    return _comment(env.one(COMMENT_SELECT + " WHERE c.id = ?", (env.actor_id, cur.lastrowid)))  # type: ignore[arg-type]


@TOOLS.write
def delete_comment(env: ToolEnv, comment_id: int) -> dict[str, Any]:
    """Delete one of the current user's comments; its replies and likes go with it.

    Args:
        comment_id: The comment's id.
    """
    comment = require(env, "comments", comment_id, "comment")
    if comment["user_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Comment {comment_id} was posted by another user; you can only delete your own.")
    thread = [
        r["id"]
        for r in env.all(
            "WITH RECURSIVE t(id) AS (SELECT ? UNION ALL SELECT c.id FROM comments c JOIN t ON c.parent_id = t.id) SELECT id FROM t",
            (comment_id,),
        )
    ]
    marks = ", ".join("?" for _ in thread)
    likes = env.conn.execute(f"DELETE FROM comment_likes WHERE comment_id IN ({marks})", thread).rowcount
    # Deepest replies first, so no row ever points at a deleted comment.
    for cid in reversed(thread):
        env.conn.execute("DELETE FROM comments WHERE id = ?", (cid,))
    return {"deleted_comment_id": comment_id, "replies_deleted": len(thread) - 1, "likes_removed": likes}


@TOOLS.write
def like_comment(env: ToolEnv, comment_id: int) -> dict[str, Any]:
    """Like a comment as the current user (once per comment).

    Args:
        comment_id: The comment's id.
    """
    comment = require(env, "comments", comment_id, "comment")
    if env.scalar("SELECT 1 FROM comment_likes WHERE user_id = ? AND comment_id = ?", (env.actor_id, comment_id)):
        raise ToolError(ErrorCode.CONFLICT, f"You already liked comment {comment_id}.")
    env.conn.execute("INSERT INTO comment_likes (user_id, comment_id, liked_at) VALUES (?, ?, ?)", (env.actor_id, comment_id, env.now))
    env.conn.execute("UPDATE comments SET like_count = like_count + 1 WHERE id = ?", (comment_id,))
    return {"comment_id": comment_id, "like_count": comment["like_count"] + 1, "liked": True}
