"""Validation and repair rules of the music world (run after the fill, in this order, until settled)."""

from __future__ import annotations

from ...engine.repair import Aggregate, Check, NotAfterNow, NotBefore, Rule

_TIMESTAMPS = [
    ("users", "joined_at"),
    ("playlists", "created_at"),
    ("playlists", "updated_at"),
    ("playlist_songs", "added_at"),
    ("favourite_songs", "favourited_at"),
    ("followed_artists", "followed_at"),
    ("saved_albums", "saved_at"),
    ("listening_history", "played_at"),
    ("comments", "created_at"),
    ("comment_likes", "liked_at"),
]

CHECKS: list[Check] = [
    # Status and cross-field consistency first: they can move rows between parents.
    Rule(
        "vip level matches membership",
        "a listener is VIP (level > 0) exactly while the membership has not expired",
        "users",
        "(vip_level > 0) != (vip_expires_at IS NOT NULL AND vip_expires_at > ?)",
        (
            "UPDATE users SET vip_level = 0 WHERE vip_level > 0 AND (vip_expires_at IS NULL OR vip_expires_at <= ?)",
            "UPDATE users SET vip_level = 1 WHERE vip_level = 0 AND vip_expires_at > ?",
        ),
    ),
    Rule(
        "reply on its parent's song",
        "a reply is posted under the same song as the comment it answers",
        "comments",
        "parent_id IS NOT NULL AND song_id != (SELECT p.song_id FROM comments p WHERE p.id = comments.parent_id)",
        "UPDATE comments SET song_id = (SELECT p.song_id FROM comments p WHERE p.id = comments.parent_id) "
        "WHERE parent_id IS NOT NULL AND song_id != (SELECT p.song_id FROM comments p WHERE p.id = comments.parent_id)",
    ),
    Rule(
        "seconds played within the song",
        "a play never lasts longer than the song",
        "listening_history",
        "seconds_played > (SELECT s.duration_sec FROM songs s WHERE s.id = listening_history.song_id)",
        "UPDATE listening_history SET seconds_played = (SELECT s.duration_sec FROM songs s WHERE s.id = listening_history.song_id) "
        "WHERE seconds_played > (SELECT s.duration_sec FROM songs s WHERE s.id = listening_history.song_id)",
    ),
    Rule(
        "playlist positions contiguous",
        "a playlist's songs are numbered 1..n without gaps or ties",
        "playlist_songs",
        "position != (SELECT COUNT(*) FROM playlist_songs p WHERE p.playlist_id = playlist_songs.playlist_id "
        "AND (p.position < playlist_songs.position OR (p.position = playlist_songs.position AND p.song_id <= playlist_songs.song_id)))",
        # UPDATE ... FROM computes every new position before changing any.
        "UPDATE playlist_songs SET position = r.n FROM (SELECT playlist_id, song_id, "
        "ROW_NUMBER() OVER (PARTITION BY playlist_id ORDER BY position, song_id) AS n FROM playlist_songs) r "
        "WHERE r.playlist_id = playlist_songs.playlist_id AND r.song_id = playlist_songs.song_id AND playlist_songs.position != r.n",
    ),
    Rule(
        "debut not after first release",
        "an artist's debut year is not later than the year of its first release",
        "artists",
        "debut_year > (SELECT MIN(CAST(substr(a.release_date, 1, 4) AS INTEGER)) FROM albums a WHERE a.artist_id = artists.id)",
        "UPDATE artists SET debut_year = (SELECT MIN(CAST(substr(a.release_date, 1, 4) AS INTEGER)) FROM albums a WHERE a.artist_id = artists.id) "
        "WHERE debut_year > (SELECT MIN(CAST(substr(a.release_date, 1, 4) AS INTEGER)) FROM albums a WHERE a.artist_id = artists.id)",
        kind="chronology",
    ),
    # Chronology: nothing before what it depends on.
    NotBefore("songs", "release_date", "album_id", "albums", "release_date", key="id", fmt="date"),
    NotBefore("playlists", "created_at", "owner_id", "users", "joined_at", key="id"),
    NotBefore("playlist_songs", "added_at", "playlist_id", "playlists", "created_at"),
    NotBefore("playlist_songs", "added_at", "song_id", "songs", "release_date"),
    NotBefore("favourite_songs", "favourited_at", "user_id", "users", "joined_at"),
    NotBefore("favourite_songs", "favourited_at", "song_id", "songs", "release_date"),
    NotBefore("followed_artists", "followed_at", "user_id", "users", "joined_at"),
    NotBefore("saved_albums", "saved_at", "user_id", "users", "joined_at"),
    NotBefore("saved_albums", "saved_at", "album_id", "albums", "release_date"),
    NotBefore("listening_history", "played_at", "user_id", "users", "joined_at", key="id"),
    NotBefore("listening_history", "played_at", "song_id", "songs", "release_date", key="id"),
    NotBefore("comments", "created_at", "song_id", "songs", "release_date", key="id"),
    NotBefore("comments", "created_at", "user_id", "users", "joined_at", key="id"),
    NotBefore("comments", "created_at", "parent_id", "comments", "created_at", key="id"),
    NotBefore("comment_likes", "liked_at", "comment_id", "comments", "created_at"),
    NotBefore("comment_likes", "liked_at", "user_id", "users", "joined_at"),
    Rule(
        "playlist updated after its changes",
        "a playlist's updated_at is not before its creation nor before its latest added song",
        "playlists",
        "updated_at < max(created_at, COALESCE((SELECT MAX(added_at) FROM playlist_songs p WHERE p.playlist_id = playlists.id), ''))",
        "UPDATE playlists SET updated_at = max(created_at, COALESCE((SELECT MAX(added_at) FROM playlist_songs p WHERE p.playlist_id = playlists.id), '')) "
        "WHERE updated_at < max(created_at, COALESCE((SELECT MAX(added_at) FROM playlist_songs p WHERE p.playlist_id = playlists.id), ''))",
        kind="chronology",
    ),
    # The frozen clock: nothing after now.
    NotAfterNow("albums", "release_date", fmt="date"),
    NotAfterNow("songs", "release_date", fmt="date"),
    *(NotAfterNow(table, column) for table, column in _TIMESTAMPS),
    # Stored aggregates equal their child rows.
    Aggregate("albums", "track_count", "songs", "album_id"),
    Aggregate("albums", "total_duration_sec", "songs", "album_id", expr="SUM(c.duration_sec)"),
    Aggregate("songs", "favourite_count", "favourite_songs", "song_id"),
    Aggregate("artists", "follower_count", "followed_artists", "artist_id"),
    Aggregate("playlists", "song_count", "playlist_songs", "playlist_id"),
    Aggregate(
        "playlists",
        "total_duration_sec",
        "playlist_songs",
        "playlist_id",
        expr="SUM((SELECT s.duration_sec FROM songs s WHERE s.id = c.song_id))",
    ),
    Aggregate("comments", "like_count", "comment_likes", "comment_id"),
    Rule(
        "album type matches its tracks",
        "a single has 1-2 tracks, an EP 3-6, an album 7 or more",
        "albums",
        "album_type != CASE WHEN track_count <= 2 THEN 'single' WHEN track_count <= 6 THEN 'ep' ELSE 'album' END",
        "UPDATE albums SET album_type = CASE WHEN track_count <= 2 THEN 'single' WHEN track_count <= 6 THEN 'ep' ELSE 'album' END",
    ),
    Rule(
        "plays cover the listening history",
        "a song's all-time play count is at least its plays in the listening history",
        "songs",
        "play_count < (SELECT COUNT(*) FROM listening_history h WHERE h.song_id = songs.id)",
        "UPDATE songs SET play_count = play_count + (SELECT COUNT(*) FROM listening_history h WHERE h.song_id = songs.id) "
        "WHERE play_count < (SELECT COUNT(*) FROM listening_history h WHERE h.song_id = songs.id)",
    ),
]
