"""The music platform's tables (16 tables, 26 foreign keys)."""

from __future__ import annotations

from ...engine.schema import INTEGER, TEXT, Column, Schema, Table

C = Column


def pk() -> Column:
    return C("id", INTEGER, primary_key=True)


def ts(name: str, doc: str = "", volatile: bool = False) -> Column:
    return C(
        name,
        TEXT,
        not_null=True,
        check=f"{name} GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]'",
        doc=doc,
        volatile=volatile,
    )


def day(name: str, doc: str = "") -> Column:
    return C(name, TEXT, not_null=True, check=f"{name} GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'", doc=doc)


COPYRIGHT_STATUSES = ("licensed", "vip_only", "expired")
ALBUM_TYPES = ("single", "ep", "album")
LISTEN_SOURCES = ("search", "playlist", "album", "radio", "recommendation", "artist_page")
DEVICES = ("mobile", "desktop", "web", "car", "smart_speaker")

SCHEMA = Schema(
    (
        Table(
            "genres",
            "Music genres; a sub-genre points at its parent.",
            (
                pk(),
                C("name", TEXT, not_null=True, unique=True),
                C("parent_id", INTEGER, references="genres", doc="parent genre, NULL for a top-level genre"),
                C("description", TEXT, not_null=True),
            ),
        ),
        Table(
            "tags",
            "Descriptive tags on songs (mood, activity, era, sound).",
            (
                pk(),
                C("name", TEXT, not_null=True, unique=True),
                C("category", TEXT, not_null=True, check="category IN ('mood','activity','era','sound')"),
            ),
        ),
        Table(
            "users",
            "Listeners (the actors).",
            (
                pk(),
                C("username", TEXT, not_null=True, unique=True),
                C("display_name", TEXT, not_null=True),
                C("email", TEXT, not_null=True, unique=True),
                C("country", TEXT, not_null=True),
                C("birth_year", INTEGER, not_null=True, check="birth_year BETWEEN 1940 AND 2015"),
                C("vip_level", INTEGER, not_null=True, default=0, check="vip_level BETWEEN 0 AND 3"),
                C("vip_expires_at", TEXT, doc="NULL unless vip_level > 0"),
                ts("joined_at"),
                C("bio", TEXT, not_null=True, default=""),
            ),
        ),
        Table(
            "artists",
            "Solo artists, bands, duos and ensembles.",
            (
                pk(),
                C("name", TEXT, not_null=True),
                C("artist_type", TEXT, not_null=True, check="artist_type IN ('solo','band','duo','orchestra')"),
                C("country", TEXT, not_null=True),
                C("genre_id", INTEGER, not_null=True, references="genres"),
                C("debut_year", INTEGER, not_null=True),
                C("bio", TEXT, not_null=True),
                C("is_verified", INTEGER, not_null=True, check="is_verified IN (0,1)"),
                C("follower_count", INTEGER, not_null=True, default=0, doc="followers on this platform"),
            ),
        ),
        Table(
            "albums",
            "Albums, EPs and singles.",
            (
                pk(),
                C("title", TEXT, not_null=True),
                C("artist_id", INTEGER, not_null=True, references="artists"),
                C("genre_id", INTEGER, not_null=True, references="genres"),
                C("album_type", TEXT, not_null=True, check="album_type IN ('single','ep','album')"),
                day("release_date"),
                C("label", TEXT, not_null=True),
                C("track_count", INTEGER, not_null=True, default=0),
                C("total_duration_sec", INTEGER, not_null=True, default=0),
            ),
            indexes=(("release_date",),),
        ),
        Table(
            "songs",
            "Tracks; each belongs to one album and one main artist.",
            (
                pk(),
                C("title", TEXT, not_null=True),
                C("album_id", INTEGER, not_null=True, references="albums"),
                C("artist_id", INTEGER, not_null=True, references="artists"),
                C("genre_id", INTEGER, not_null=True, references="genres"),
                C("track_number", INTEGER, not_null=True, check="track_number >= 1"),
                C("duration_sec", INTEGER, not_null=True, check="duration_sec BETWEEN 30 AND 1800"),
                day("release_date"),
                C("language", TEXT, not_null=True),
                C("lyrics_excerpt", TEXT, not_null=True, doc="empty for instrumentals"),
                C("copyright_status", TEXT, not_null=True, check="copyright_status IN ('licensed','vip_only','expired')"),
                C("is_explicit", INTEGER, not_null=True, check="is_explicit IN (0,1)"),
                C("play_count", INTEGER, not_null=True, doc="all-time streams, platform-wide"),
                C("favourite_count", INTEGER, not_null=True, default=0),
            ),
            unique=(("album_id", "track_number"),),
            indexes=(("release_date",), ("play_count",), ("title COLLATE NOCASE",), ("duration_sec",), ("artist_id", "play_count")),
        ),
        Table(
            "song_artists",
            "Other artists credited on a song.",
            (
                C("song_id", INTEGER, not_null=True, references="songs"),
                C("artist_id", INTEGER, not_null=True, references="artists"),
                C("role", TEXT, not_null=True, check="role IN ('featured','remixer','composer')"),
            ),
            primary_key=("song_id", "artist_id"),
        ),
        Table(
            "song_tags",
            "Tags attached to songs.",
            (
                C("song_id", INTEGER, not_null=True, references="songs"),
                C("tag_id", INTEGER, not_null=True, references="tags"),
            ),
            primary_key=("song_id", "tag_id"),
        ),
        Table(
            "playlists",
            "User playlists, public or private.",
            (
                pk(),
                C("owner_id", INTEGER, not_null=True, references="users"),
                C("name", TEXT, not_null=True, check="length(name) BETWEEN 1 AND 60"),
                C("description", TEXT, not_null=True, default=""),
                C("is_public", INTEGER, not_null=True, check="is_public IN (0,1)"),
                ts("created_at"),
                ts("updated_at"),
                C("song_count", INTEGER, not_null=True, default=0),
                C("total_duration_sec", INTEGER, not_null=True, default=0),
            ),
            unique=(("owner_id", "name"),),
        ),
        Table(
            "playlist_songs",
            "Songs in playlists, in order.",
            (
                C("playlist_id", INTEGER, not_null=True, references="playlists", on_delete="CASCADE"),
                C("song_id", INTEGER, not_null=True, references="songs"),
                C("position", INTEGER, not_null=True, volatile=True, doc="1-based; depends on the order songs were added"),
                ts("added_at"),
            ),
            primary_key=("playlist_id", "song_id"),
            indexes=(("playlist_id", "position"),),
        ),
        Table(
            "favourite_songs",
            "Songs a user has favourited (liked).",
            (
                C("user_id", INTEGER, not_null=True, references="users"),
                C("song_id", INTEGER, not_null=True, references="songs"),
                ts("favourited_at"),
            ),
            primary_key=("user_id", "song_id"),
            indexes=(("user_id", "favourited_at"),),
        ),
        Table(
            "followed_artists",
            "Artists a user follows.",
            (
                C("user_id", INTEGER, not_null=True, references="users"),
                C("artist_id", INTEGER, not_null=True, references="artists"),
                ts("followed_at"),
            ),
            primary_key=("user_id", "artist_id"),
        ),
        Table(
            "saved_albums",
            "Albums a user has saved to the library.",
            (
                C("user_id", INTEGER, not_null=True, references="users"),
                C("album_id", INTEGER, not_null=True, references="albums"),
                ts("saved_at"),
            ),
            primary_key=("user_id", "album_id"),
        ),
        Table(
            "listening_history",
            "Plays: who played which song, when, how long, from where.",
            (
                pk(),
                C("user_id", INTEGER, not_null=True, references="users"),
                C("song_id", INTEGER, not_null=True, references="songs"),
                ts("played_at"),
                C("seconds_played", INTEGER, not_null=True, check="seconds_played >= 1"),
                C("source", TEXT, not_null=True, check="source IN ('search','playlist','album','radio','recommendation','artist_page')"),
                C("device", TEXT, not_null=True, check="device IN ('mobile','desktop','web','car','smart_speaker')"),
            ),
            indexes=(("user_id", "played_at"),),
        ),
        Table(
            "comments",
            "Comments on songs; a reply points at the comment it answers.",
            (
                pk(),
                C("song_id", INTEGER, not_null=True, references="songs"),
                C("user_id", INTEGER, not_null=True, references="users"),
                C("parent_id", INTEGER, references="comments", doc="the comment this one replies to"),
                C("content", TEXT, not_null=True, check="length(content) BETWEEN 1 AND 500"),
                ts("created_at"),
                C("like_count", INTEGER, not_null=True, default=0),
            ),
        ),
        Table(
            "comment_likes",
            "Likes on comments.",
            (
                C("user_id", INTEGER, not_null=True, references="users"),
                C("comment_id", INTEGER, not_null=True, references="comments"),
                ts("liked_at"),
            ),
            primary_key=("user_id", "comment_id"),
        ),
    )
)
