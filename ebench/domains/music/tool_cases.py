"""Benchmark arguments for the music tools (used by benchmarks/tool_calls.py)."""

from __future__ import annotations

import sqlite3
from typing import Any

# The actor measured: the listener with the most playlists (the heaviest library).
ACTOR_SQL = "SELECT owner_id FROM playlists GROUP BY owner_id ORDER BY COUNT(*) DESC, owner_id LIMIT 1"

# Representative arguments per tool: the heaviest plausible call for searches and lists
# (broad queries, no filters), real ids for lookups. Ids are looked up, not hard-coded.
# get_playlist is not among them: besides the playlist it returns a page of 20 joined songs,
# so it is held to the list goal.
LOOKUPS = {"get_my_profile", "get_song", "get_artist", "get_album"}


def cases(conn: sqlite3.Connection, actor: int) -> dict[str, dict[str, Any]]:
    def one(sql: str, *params: Any) -> Any:
        return conn.execute(sql, params).fetchone()[0]

    song = one("SELECT id FROM songs WHERE copyright_status != 'expired' ORDER BY play_count DESC LIMIT 1")
    artist = one("SELECT artist_id FROM songs WHERE id = ?", song)
    album = one("SELECT album_id FROM songs WHERE id = ?", song)
    playlist = one("SELECT id FROM playlists WHERE owner_id = ? ORDER BY song_count DESC LIMIT 1", actor)
    commented = one("SELECT song_id FROM comments GROUP BY song_id ORDER BY COUNT(*) DESC LIMIT 1")
    other_comment = one("SELECT id FROM comments WHERE user_id != ? LIMIT 1", actor)
    my_comment = one("SELECT id FROM comments WHERE user_id = ? LIMIT 1", actor)
    new_song = one(
        "SELECT id FROM songs WHERE copyright_status = 'licensed' AND id NOT IN (SELECT song_id FROM playlist_songs WHERE playlist_id = ?) AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) LIMIT 1",
        playlist,
        actor,
    )
    in_playlist = one("SELECT song_id FROM playlist_songs WHERE playlist_id = ? ORDER BY position LIMIT 1", playlist)
    fav = one("SELECT song_id FROM favourite_songs WHERE user_id = ? LIMIT 1", actor)
    followed = one("SELECT artist_id FROM followed_artists WHERE user_id = ? LIMIT 1", actor)
    unfollowed = one("SELECT id FROM artists WHERE id NOT IN (SELECT artist_id FROM followed_artists WHERE user_id = ?) LIMIT 1", actor)
    saved = one("SELECT album_id FROM saved_albums WHERE user_id = ? LIMIT 1", actor)
    unsaved = one("SELECT id FROM albums WHERE id NOT IN (SELECT album_id FROM saved_albums WHERE user_id = ?) LIMIT 1", actor)
    unliked = one("SELECT id FROM comments WHERE id NOT IN (SELECT comment_id FROM comment_likes WHERE user_id = ?) LIMIT 1", actor)
    return {
        "get_my_profile": {},
        "get_song": {"song_id": song},
        "get_artist": {"artist_id": artist},
        "get_album": {"album_id": album},
        "get_playlist": {"playlist_id": playlist},
        "search_songs": {},
        "search_songs(query)": {"query": "love"},
        "search_songs(filters)": {"genre": "Pop", "released_after": "2015-01-01", "tag": "chill", "sort_by": "newest"},
        "search_songs(page 50)": {"page": 50, "sort_by": "title"},
        "search_artists": {"query": "a"},
        "list_artist_albums": {"artist_id": artist},
        "search_albums": {"query": "e", "sort_by": "newest"},
        "list_genres": {},
        "list_tags": {},
        "list_my_playlists": {},
        "search_playlists": {},
        "list_favourite_songs": {"sort_by": "artist"},
        "list_followed_artists": {},
        "list_saved_albums": {},
        "get_listening_history": {},
        "list_song_comments": {"song_id": commented, "sort_by": "most_liked"},
        "list_my_comments": {},
        "create_playlist": {"name": "Benchmark mix"},
        "update_playlist": {"playlist_id": playlist, "name": "Renamed by benchmark"},
        "delete_playlist": {"playlist_id": playlist},
        "add_song_to_playlist": {"playlist_id": playlist, "song_id": new_song},
        "remove_song_from_playlist": {"playlist_id": playlist, "song_id": in_playlist},
        "favourite_song": {"song_id": new_song},
        "unfavourite_song": {"song_id": fav},
        "follow_artist": {"artist_id": unfollowed},
        "unfollow_artist": {"artist_id": followed},
        "save_album": {"album_id": unsaved},
        "unsave_album": {"album_id": saved},
        "post_comment": {"song_id": song, "content": "benchmark comment"},
        "delete_comment": {"comment_id": my_comment},
        "like_comment": {"comment_id": unliked if unliked != other_comment else other_comment},
    }
