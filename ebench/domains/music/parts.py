"""The music platform's task grammar: the parts composed tasks are built from (ebench/tasks/composition.py).

Sources are what a listener reaches from their account (favourites, a playlist of theirs, the
songs of a main artist, their listening history, the artists they follow, their saved albums,
playlists and comments); predicates are the columns the tools show (language, genre, licence,
length, release date, play count, device...) and relations to the listener's library ("whose
main artist I follow", "that I have favourited"); reductions and writes are the platform's.

The wording follows docs/wording.md: "main artist" says which credit counts, a genre with
sub-genres or a parent is never stated (so "genre family" stays closed), availability is said with
the licence, a ranking names its measure and its tie-break, the listening history is "my whole
listening history". Writes the product refuses anyway (favouriting an expired song, a song twice
in a playlist, following an artist twice) are not conditions: the public half skips them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...tasks.composition import Action, Drafting, Entity, Grammar, Row, Solving, Source
from ...tasks.part_kinds import AboveAverage, EachCall, Equals, Every, Flag, GroupThreshold, GroupTop, Threshold, TopK
from ...tasks.public import Reading, find_one
from ...tasks.spec import Step
from ...tasks.template_api import NoTarget
from ...tasks.template_helpers import pretty_day, ref
from .templates import DEVICE_WORDS, PLAYLIST_NAMES

ENTITIES = {
    "song": Entity("song", "songs", "song_id"),
    "play": Entity("play", "listening_history", "play_id"),
    "artist": Entity("artist", "artists", "artist_id", person=True, singular="artist"),
    "album": Entity("album", "albums", "album_id"),
    "playlist": Entity("playlist", "playlists", "playlist_id"),
    "comment": Entity("comment", "comments", "comment_id"),
}

COUNTRIES = {
    "KR": "South Korea",
    "HK": "Hong Kong",
    "CN": "China",
    "JP": "Japan",
    "TW": "Taiwan",
    "MX": "Mexico",
    "BR": "Brazil",
    "FR": "France",
    "SE": "Sweden",
    "ES": "Spain",
    "US": "the United States",
    "GB": "the United Kingdom",
    "DE": "Germany",
}
PLAY_SOURCES = {
    "album": "an album page",
    "artist_page": "an artist's page",
    "playlist": "a playlist",
    "radio": "the radio",
    "recommendation": "a recommendation",
    "search": "a search",
}
ARTIST_TYPES = {"solo": "solo artists", "band": "bands", "duo": "duos", "orchestra": "orchestras"}
ALBUM_TYPES = {"album": "full albums", "ep": "EPs", "single": "singles"}

# A genre with sub-genres or a parent is an open term (templates.OPEN_TERMS): only the others are stated.
LONE_GENRES_SQL = (
    "SELECT name FROM genres g WHERE g.parent_id IS NULL AND NOT EXISTS (SELECT 1 FROM genres c WHERE c.parent_id = g.id) ORDER BY name"
)
GENRE_OF_SONG = "(SELECT name FROM genres g WHERE g.id = e.genre_id)"
# A genre that has sub-genres is stated with the words that decide the open term: the genre itself.
PARENT_GENRES_SQL = "SELECT name FROM genres g WHERE EXISTS (SELECT 1 FROM genres c WHERE c.parent_id = g.id) ORDER BY name"
GENRE_FAMILY = Reading("genre family", decided_by=r"sub-?genres?")


def _family_genre(s: Solving, item: Row) -> Any:
    """A song's genre as the request reads it: its own (the wording says "not counting its
    sub-genres"), or, in the other reading, its parent genre when it has one."""
    genre = s.api.reading(GENRE_FAMILY.name, item.get("genre"), None)
    if genre is not None:
        return genre
    parents = s.remember("genre_parents", lambda: {g["name"]: g["parent_genre"] for g in s.listing("list_genres")})
    return parents.get(item.get("genre")) or item.get("genre")


FOLLOWED_SQL = "SELECT artist_id FROM followed_artists WHERE user_id = :actor"
FAVOURITE_SQL = "SELECT song_id FROM favourite_songs WHERE user_id = :actor"


def _mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def _lengths(_: list[Any]) -> list[int]:
    return list(range(120, 481, 30))


def _dates(attrs: list[Any]) -> list[Any]:
    """The data's own dates: a candidate lands on the boundary (its inclusivity is then certified)."""
    return sorted({a for a in attrs if a})[1:-1]


def _plays(_: list[Any]) -> list[int]:
    return [50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000]


def _count(n: int) -> str:
    return f"{n:,}"


def _quoted(name: str) -> str:
    return f"'{name}'"


def _day(item: Row, field: str) -> str | None:
    value = item.get(field)
    return value[:10] if isinstance(value, str) else None


def _has(s: Solving, memo: str, tool: str, field: str, item_field: str, item: Row) -> bool:
    """Whether the item's `item_field` is among the `field`s of a listing of mine (read once)."""
    ids = s.remember(memo, lambda: {i[field] for i in s.listing(tool)})
    return item.get(item_field) in ids


def _users_with(d: Drafting, sql: str, what: str) -> int:
    return int(d.choice(d.column(sql), what))


# == sources ==================================================================================


class Favourites(Source):
    def __init__(self) -> None:
        super().__init__(
            "fav", "song", ("songs", "songs", "tracks"), ("in my favourites", "among my favourites", "I have favourited"), weight=1.3
        )

    def draw(self, d: Drafting) -> str:
        d.actor = _users_with(d, "SELECT user_id FROM favourite_songs GROUP BY user_id HAVING COUNT(*) >= 25 ORDER BY user_id", "listener")
        return "SELECT song_id AS id, favourited_at FROM favourite_songs WHERE user_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_favourite_songs")


class MyPlaylist(Source):
    def __init__(self) -> None:
        super().__init__(
            "plist",
            "song",
            ("songs", "tracks", "songs"),
            ("in my playlist {s_list}", "on my playlist {s_list}", "of my playlist {s_list}"),
            weight=1.3,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_list",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            d.rows("SELECT id, owner_id, name FROM playlists WHERE song_count >= 12 AND name NOT LIKE '%''%' ORDER BY id"), "playlist"
        )
        d.actor = row["owner_id"]
        d.params["playlist"] = row["id"]
        d.state("s_list", row["name"], _quoted(row["name"]))
        d.targets.append(("playlist", row["id"]))
        return "SELECT song_id AS id, added_at FROM playlist_songs WHERE playlist_id = :playlist"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        playlist = find_one(s.listing("list_my_playlists"), name=s.stated["s_list"])
        return s.listing("get_playlist", within="songs", playlist_id=playlist["playlist_id"])


class ArtistSongs(Source):
    def __init__(self) -> None:
        super().__init__(
            "artist_songs",
            "song",
            ("songs", "songs", "tracks"),
            ("whose main artist is {s_artist}", "with {s_artist} as their main artist", "that have {s_artist} as main artist"),
            weight=1.3,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_artist",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            d.rows(
                "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM songs s WHERE s.artist_id = a.id) BETWEEN 14 AND 60 "
                "AND (SELECT COUNT(*) FROM artists b WHERE b.name = a.name) = 1 AND a.name NOT LIKE '%''%' ORDER BY a.id"
            ),
            "artist",
        )
        d.actor = int(d.choice(d.column("SELECT id FROM users ORDER BY id"), "listener"))
        d.params["artist"] = row["id"]
        d.state("s_artist", row["name"])
        d.targets.append(("artist", row["id"]))
        return "SELECT id FROM songs WHERE artist_id = :artist"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        artist = find_one(s.listing("search_artists", query=s.stated["s_artist"]), name=s.stated["s_artist"])
        return s.listing("search_songs", narrow=narrow, artist_id=artist["artist_id"], sort_by="oldest")


class TaggedSongs(Source):
    def __init__(self) -> None:
        super().__init__(
            "tag_songs",
            "song",
            ("songs", "tracks", "songs"),
            ("in {s_lang} tagged '{s_tag}'", "in {s_lang} that carry the '{s_tag}' tag", "sung in {s_lang} with the tag '{s_tag}'"),
            weight=1.3,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_tag", "s_lang")

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            d.rows(
                "SELECT st.tag_id, t.name AS tag, s.language FROM song_tags st JOIN tags t ON t.id = st.tag_id "
                "JOIN songs s ON s.id = st.song_id WHERE s.language != 'Instrumental' GROUP BY st.tag_id, s.language "
                "HAVING COUNT(*) BETWEEN 15 AND 45 ORDER BY st.tag_id, s.language"
            ),
            "tag and language",
        )
        d.actor = int(d.choice(d.column("SELECT id FROM users ORDER BY id"), "listener"))
        d.params.update(tag=row["tag_id"], language=row["language"])
        d.state("s_tag", row["tag"])
        d.state("s_lang", row["language"])
        d.targets.append(("tag", row["tag_id"], row["language"]))
        return "SELECT song_id AS id FROM song_tags st JOIN songs s ON s.id = st.song_id WHERE st.tag_id = :tag AND s.language = :language"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("search_songs", narrow=narrow, tag=s.stated["s_tag"], language=s.stated["s_lang"], sort_by="most_played")


class History(Source):
    def __init__(self) -> None:
        super().__init__(
            "history",
            "play",
            ("plays", "plays", "plays"),
            ("in my whole listening history", "across my entire listening history", "anywhere in my listening history"),
        )

    def draw(self, d: Drafting) -> str:
        d.actor = _users_with(
            d, "SELECT user_id FROM listening_history GROUP BY user_id HAVING COUNT(*) BETWEEN 40 AND 140 ORDER BY user_id", "listener"
        )
        return "SELECT id FROM listening_history WHERE user_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("get_listening_history", narrow=narrow)


class Followed(Source):
    def __init__(self) -> None:
        super().__init__(
            "followed", "artist", ("artists", "artists", "artists"), ("I follow", "I am following", "on my follow list"), weight=0.5
        )

    def draw(self, d: Drafting) -> str:
        d.actor = _users_with(d, "SELECT user_id FROM followed_artists GROUP BY user_id HAVING COUNT(*) >= 10 ORDER BY user_id", "listener")
        return "SELECT artist_id AS id, followed_at FROM followed_artists WHERE user_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_followed_artists")


class CountryArtists(Source):
    def __init__(self) -> None:
        super().__init__(
            "country_artists",
            "artist",
            ("artists", "artists", "acts"),
            ("from {s_country} in the catalogue", "in the catalogue who come from {s_country}", "listed as from {s_country}"),
            weight=0.5,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_country",)

    def draw(self, d: Drafting) -> str:
        codes = d.column("SELECT country FROM artists GROUP BY country HAVING COUNT(*) BETWEEN 12 AND 40 ORDER BY country")
        code = d.choice([c for c in codes if c in COUNTRIES], "country")
        d.actor = int(d.choice(d.column("SELECT id FROM users ORDER BY id"), "listener"))
        d.params["country"] = code
        d.state("s_country", code, COUNTRIES[code])
        d.targets.append(("country", code))
        return "SELECT id FROM artists WHERE country = :country"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("search_artists", narrow=narrow, country=s.stated["s_country"])


class SavedAlbums(Source):
    def __init__(self) -> None:
        super().__init__(
            "saved", "album", ("albums", "releases", "albums"), ("I have saved", "saved in my library", "I keep in my library"), weight=0.7
        )

    def draw(self, d: Drafting) -> str:
        d.actor = _users_with(d, "SELECT user_id FROM saved_albums GROUP BY user_id HAVING COUNT(*) >= 8 ORDER BY user_id", "listener")
        return "SELECT album_id AS id, saved_at FROM saved_albums WHERE user_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_saved_albums")


class MyPlaylists(Source):
    def __init__(self) -> None:
        super().__init__("my_playlists", "playlist", ("playlists", "playlists", "playlists"), ("of mine", "I own", "I have made"))

    def draw(self, d: Drafting) -> str:
        d.actor = _users_with(d, "SELECT owner_id FROM playlists GROUP BY owner_id HAVING COUNT(*) >= 5 ORDER BY owner_id", "listener")
        return "SELECT id FROM playlists WHERE owner_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_my_playlists")


class MyComments(Source):
    def __init__(self) -> None:
        super().__init__("my_comments", "comment", ("comments", "comments", "comments"), ("I have posted", "I wrote", "of mine"))

    def draw(self, d: Drafting) -> str:
        d.actor = _users_with(d, "SELECT user_id FROM comments GROUP BY user_id HAVING COUNT(*) >= 20 ORDER BY user_id", "listener")
        return "SELECT id FROM comments WHERE user_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_my_comments")


# == predicates ===============================================================================


def _song_narrow(field: str) -> Any:
    """search_songs' own filter for a stated term (only the catalogue source lists through it)."""

    def narrow(source: str, value: Any) -> Row | None:
        return {field: value} if source in ("artist_songs", "tag_songs") else None

    return narrow


def _history_narrow(field: str) -> Any:
    def narrow(source: str, value: Any) -> Row | None:
        return {field: value} if source == "history" else None

    return narrow


def _artist_narrow(field: str) -> Any:
    def narrow(source: str, value: Any) -> Row | None:
        return {field: value} if source == "country_artists" else None

    return narrow


SONG_PREDICATES = [
    Equals(
        "lang",
        "song",
        "e.language",
        "language",
        ("are in <v>", "are sung in <v>", "have <v> as their language"),
        negated=("are not in <v>", "are not sung in <v>", "have a language other than <v>"),
        values=lambda d: [v for v in d.column("SELECT DISTINCT language FROM songs ORDER BY 1") if v != "Instrumental"],
        narrow=_song_narrow("language"),
        excluded_sources=("tag_songs",),
    ),
    Equals(
        "year",
        "song",
        "substr(e.release_date, 1, 4)",
        lambda s, i: (i.get("release_date") or "")[:4] or None,
        ("were released in <v>", "came out in <v>", "have <v> as their release year"),
        negated=("were not released in <v>", "did not come out in <v>", "have a release year other than <v>"),
    ),
    Equals(
        "genre",
        "song",
        GENRE_OF_SONG,
        "genre",
        ("belong to the <v> genre", "are filed under <v>", "have <v> as their genre"),
        negated=("do not belong to the <v> genre", "are not filed under <v>", "have a genre other than <v>"),
        values=lambda d: d.column(LONE_GENRES_SQL),
        narrow=_song_narrow("genre"),
    ),
    Equals(
        "genre_family",
        "song",
        GENRE_OF_SONG,
        _family_genre,
        ("are filed under <v>", "have <v> as their genre", "are listed under <v>"),
        negated=("are not filed under <v>", "have a genre other than <v>", "are not listed under <v>"),
        values=lambda d: d.column(PARENT_GENRES_SQL),
        words=lambda genre: f"{genre} (not counting its sub-genres)",
        readings=(GENRE_FAMILY,),
        narrow=_song_narrow("genre"),
    ),
    Flag(
        "expired",
        "song",
        "e.copyright_status = 'expired'",
        lambda s, i: i.get("copyright_status") == "expired",
        ("have an expired licence", "have had their licence expire", "are no longer licensed (their licence expired)"),
        negated=("do not have an expired licence", "have a licence that has not expired", "have not had their licence expire"),
    ),
    Flag(
        "vip",
        "song",
        "e.copyright_status = 'vip_only'",
        lambda s, i: i.get("copyright_status") == "vip_only",
        ("are VIP-only", "need a VIP membership", "are reserved for VIP members"),
        negated=("are not VIP-only", "do not need a VIP membership", "are not reserved for VIP members"),
        narrow=lambda source, value: {"copyright_status": "vip_only"} if source in ("artist_songs", "tag_songs") else None,
    ),
    Threshold(
        "short",
        "song",
        "e.duration_sec",
        "duration_sec",
        ("last at most <v>", "are no longer than <v>", "run <v> or less"),
        op="<=",
        candidates=_lengths,
        show=_mmss,
        narrow=_song_narrow("max_duration_sec"),
    ),
    Threshold(
        "long",
        "song",
        "e.duration_sec",
        "duration_sec",
        ("last at least <v>", "are <v> or longer", "run for <v> or more"),
        op=">=",
        candidates=_lengths,
        show=_mmss,
        narrow=_song_narrow("min_duration_sec"),
    ),
    Threshold(
        "released_since",
        "song",
        "e.release_date",
        "release_date",
        ("were released on or after <v>", "came out on <v> or later", "have a release date of <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
        narrow=_song_narrow("released_after"),
    ),
    Threshold(
        "released_before",
        "song",
        "e.release_date",
        "release_date",
        ("were released before <v>", "came out earlier than <v>", "have a release date before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        narrow=_song_narrow("released_before"),  # on or before: a superset the solver narrows itself
    ),
    Threshold(
        "popular",
        "song",
        "e.play_count",
        "play_count",
        ("have at least <v> plays on the platform", "have been played <v> times or more", "have a play count of <v> or more"),
        op=">=",
        candidates=_plays,
        show=_count,
    ),
    Flag(
        "by_followed",
        "song",
        f"e.artist_id IN ({FOLLOWED_SQL})",
        lambda s, i: _has(s, "followed", "list_followed_artists", "artist_id", "artist_id", i),
        ("have a main artist I follow", "are by a main artist I am following", "have as main artist someone I follow"),
        negated=(
            "have a main artist I do not follow",
            "are by a main artist I am not following",
            "have as main artist someone I do not follow",
        ),
    ),
    Flag(
        "favourited",
        "song",
        f"e.id IN ({FAVOURITE_SQL})",
        lambda s, i: _has(s, "favourites", "list_favourite_songs", "song_id", "song_id", i),
        ("I have favourited", "are among my favourites", "are in my favourites"),
        negated=("I have not favourited", "are not among my favourites", "are not in my favourites yet"),
        sources=("plist", "artist_songs", "tag_songs"),
    ),
    Flag(
        "played",
        "song",
        "e.id IN (SELECT song_id FROM listening_history WHERE user_id = :actor)",
        lambda s, i: _has(s, "played", "get_listening_history", "song_id", "song_id", i),
        (
            "I have played at some point in my whole listening history",
            "appear somewhere in my entire listening history",
            "I have listened to before, anywhere in my listening history",
        ),
        negated=(
            "I have never played in my whole listening history",
            "appear nowhere in my entire listening history",
            "I have not listened to before, anywhere in my listening history",
        ),
        private=True,
    ),
    Flag(
        "on_saved_album",
        "song",
        "e.album_id IN (SELECT album_id FROM saved_albums WHERE user_id = :actor)",
        lambda s, i: _has(s, "saved", "list_saved_albums", "album_id", "album_id", i),
        ("are on an album I have saved", "come from a release saved in my library", "belong to an album in my saved albums"),
        negated=(
            "are not on an album I have saved",
            "do not come from a release saved in my library",
            "belong to no album in my saved albums",
        ),
    ),
    Threshold(
        "fav_since",
        "song",
        "substr(src.favourited_at, 1, 10)",
        lambda s, i: _day(i, "favourited_at"),
        ("I favourited on or after <v>", "were added to my favourites on <v> or later", "became favourites of mine on <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
        sources=("fav",),
    ),
    Threshold(
        "added_before",
        "song",
        "substr(src.added_at, 1, 10)",
        lambda s, i: _day(i, "added_at"),
        ("were added to that playlist before <v>", "went into that playlist before <v>", "I put in that playlist before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        sources=("plist",),
    ),
]

PLAY_PREDICATES = [
    Threshold(
        "played_since",
        "play",
        "substr(e.played_at, 1, 10)",
        lambda s, i: _day(i, "played_at"),
        ("happened on or after <v>", "were made on <v> or later", "date from <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
        narrow=_history_narrow("start_date"),
    ),
    Threshold(
        "played_through",
        "play",
        "substr(e.played_at, 1, 10)",
        lambda s, i: _day(i, "played_at"),
        ("happened on or before <v>", "were made no later than <v>", "date from <v> or earlier"),
        op="<=",
        candidates=_dates,
        show=pretty_day,
        narrow=_history_narrow("end_date"),
    ),
    Equals(
        "device",
        "play",
        "e.device",
        "device",
        ("were made <v>", "happened <v>", "I listened to <v>"),
        negated=("were not made <v>", "did not happen <v>", "I did not listen to <v>"),
        words=DEVICE_WORDS,
    ),
    Equals(
        "play_source",
        "play",
        "e.source",
        "source",
        ("were started from <v>", "came from <v>", "I started from <v>"),
        negated=("were not started from <v>", "did not come from <v>", "I did not start from <v>"),
        words=PLAY_SOURCES,
        private=True,
    ),
    Flag(
        "whole_song",
        "play",
        "e.seconds_played >= (SELECT duration_sec FROM songs WHERE id = e.song_id)",
        lambda s, i: i.get("seconds_played", 0) >= i.get("duration_sec", 0),
        ("ran to the end of the song", "lasted the whole song", "covered the full length of the song"),
        negated=("stopped before the end of the song", "did not last the whole song", "fell short of the full length of the song"),
    ),
]


def _hour(item: Row) -> int | None:
    value = item.get("played_at")
    return int(value[11:13]) if isinstance(value, str) and len(value) >= 13 else None


def _night(item: Row) -> bool:
    hour = _hour(item)
    return hour is not None and (hour >= 22 or hour < 6)


def _weekend(item: Row) -> bool:
    value = item.get("played_at")
    return isinstance(value, str) and datetime.strptime(value[:10], "%Y-%m-%d").weekday() >= 5


PLAY_PREDICATES += [
    Flag(
        "at_night",
        "play",
        "(CAST(substr(e.played_at, 12, 2) AS INTEGER) >= 22 OR CAST(substr(e.played_at, 12, 2) AS INTEGER) < 6)",
        lambda s, i: _night(i),
        (
            "happened at night (from 22:00 to before 6:00)",
            "were made at night, between 22:00 and 6:00",
            "date from the night hours (22:00 up to 6:00)",
        ),
        negated=(
            "did not happen at night (from 22:00 to before 6:00)",
            "were made outside the night hours of 22:00 to 6:00",
            "date from the daytime (6:00 up to 22:00)",
        ),
    ),
    Flag(
        "weekend",
        "play",
        "strftime('%w', e.played_at) IN ('0', '6')",
        lambda s, i: _weekend(i),
        ("happened on a Saturday or Sunday", "were made at a weekend", "fall on a weekend day"),
        negated=("happened on a weekday (Monday to Friday)", "were not made at a weekend", "fall on a weekday"),
    ),
    Threshold(
        "listened_at_least",
        "play",
        "e.seconds_played",
        "seconds_played",
        ("lasted at least <v>", "ran for <v> or more", "were <v> long or longer"),
        op=">=",
        candidates=lambda attrs: [30, 60, 90, 120, 150, 180, 240],
        show=_mmss,
    ),
]

ARTIST_PREDICATES = [
    Equals(
        "artist_type",
        "artist",
        "e.artist_type",
        "artist_type",
        ("are <v>", "are listed as <v>", "are registered as <v>"),
        negated=("are not <v>", "are not listed as <v>", "are not registered as <v>"),
        words=ARTIST_TYPES,
        narrow=_artist_narrow("artist_type"),
    ),
    Equals(
        "country",
        "artist",
        "e.country",
        "country",
        ("are from <v>", "come from <v>", "have <v> as their country"),
        negated=("are not from <v>", "do not come from <v>", "have a country other than <v>"),
        words=COUNTRIES,
        values=lambda d: sorted(COUNTRIES),
        sources=("followed",),
    ),
    Threshold(
        "debut_since",
        "artist",
        "e.debut_year",
        "debut_year",
        ("debuted in <v> or later", "made their debut in <v> or after", "have a debut year of <v> or later"),
        op=">=",
        candidates=_dates,
    ),
    Threshold(
        "followers",
        "artist",
        "e.follower_count",
        "follower_count",
        ("have at least <v> followers", "are followed by <v> or more listeners", "count <v> followers or more"),
        op=">=",
        candidates=lambda attrs: [n for n in (2, 3, 4, 5, 6) if n in attrs],
    ),
    Flag(
        "verified",
        "artist",
        "e.is_verified",
        "is_verified",
        ("are verified", "have a verified profile", "carry the verified badge"),
        negated=("are not verified", "have no verified profile", "do not carry the verified badge"),
    ),
    Threshold(
        "followed_before",
        "artist",
        "substr(src.followed_at, 1, 10)",
        lambda s, i: _day(i, "followed_at"),
        ("I started following before <v>", "I followed before <v>", "have been on my follow list since before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        sources=("followed",),
    ),
    Flag(
        "artist_followed",
        "artist",
        f"e.id IN ({FOLLOWED_SQL})",
        lambda s, i: _has(s, "followed", "list_followed_artists", "artist_id", "artist_id", i),
        ("I follow", "I am following", "are on my follow list"),
        negated=("I do not follow", "I am not following", "are not on my follow list"),
        sources=("country_artists",),
    ),
    Flag(
        "artist_played",
        "artist",
        "e.id IN (SELECT s.artist_id FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = :actor)",
        lambda s, i: _has(s, "played_artists", "get_listening_history", "artist_id", "artist_id", i),
        (
            "are main artist of some play in my whole listening history",
            "appear as main artist somewhere in my entire listening history",
            "I have played as main artist at some point in my listening history",
        ),
        negated=(
            "are main artist of no play in my whole listening history",
            "appear nowhere as main artist in my entire listening history",
            "I have never played as main artist in my listening history",
        ),
    ),
]

ALBUM_PREDICATES = [
    Equals(
        "album_type",
        "album",
        "e.album_type",
        "album_type",
        ("are <v>", "were released as <v>", "count as <v>"),
        negated=("are not <v>", "were not released as <v>", "do not count as <v>"),
        words=ALBUM_TYPES,
    ),
    Threshold(
        "album_since",
        "album",
        "e.release_date",
        "release_date",
        ("were released on or after <v>", "came out on <v> or later", "have a release date of <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "album_before",
        "album",
        "e.release_date",
        "release_date",
        ("were released before <v>", "came out earlier than <v>", "have a release date before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "tracks",
        "album",
        "e.track_count",
        "track_count",
        ("have at least <v> tracks", "hold <v> or more tracks", "count <v> tracks or more"),
        op=">=",
        candidates=lambda attrs: [n for n in range(2, 13) if n in attrs],
    ),
    Equals(
        "album_genre",
        "album",
        "(SELECT name FROM genres g WHERE g.id = e.genre_id)",
        "genre",
        ("belong to the <v> genre", "are filed under <v>", "have <v> as their genre"),
        negated=("do not belong to the <v> genre", "are not filed under <v>", "have a genre other than <v>"),
        values=lambda d: d.column(LONE_GENRES_SQL),
    ),
    Flag(
        "album_by_followed",
        "album",
        f"e.artist_id IN ({FOLLOWED_SQL})",
        lambda s, i: _has(s, "followed", "list_followed_artists", "artist_id", "artist_id", i),
        ("are by an artist I follow", "come from an artist I am following", "were released by someone I follow"),
        negated=("are by an artist I do not follow", "come from an artist I am not following", "were released by someone I do not follow"),
    ),
    Threshold(
        "saved_before",
        "album",
        "substr(src.saved_at, 1, 10)",
        lambda s, i: _day(i, "saved_at"),
        ("I saved before <v>", "went into my library before <v>", "have been saved since before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        sources=("saved",),
    ),
]

PLAYLIST_PREDICATES = [
    Flag(
        "public",
        "playlist",
        "e.is_public",
        "is_public",
        ("are public", "other listeners can find", "are visible to other listeners"),
        negated=("are private", "are not public", "other listeners cannot find"),
    ),
    Threshold(
        "big",
        "playlist",
        "e.song_count",
        "song_count",
        ("hold at least <v> songs", "have <v> or more songs", "contain <v> songs or more"),
        op=">=",
        candidates=lambda attrs: [5, 10, 15, 20, 25, 30],
    ),
    Threshold(
        "created_before",
        "playlist",
        "substr(e.created_at, 1, 10)",
        lambda s, i: _day(i, "created_at"),
        ("I created before <v>", "were made before <v>", "date from before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
    ),
]

COMMENT_PREDICATES = [
    Threshold(
        "liked",
        "comment",
        "e.like_count",
        "like_count",
        ("have at least <v> likes", "got <v> or more likes", "collected <v> likes or more"),
        op=">=",
        candidates=lambda attrs: [2, 3],
    ),
    Threshold(
        "comment_since",
        "comment",
        "substr(e.created_at, 1, 10)",
        lambda s, i: _day(i, "created_at"),
        ("I posted on or after <v>", "were written on <v> or later", "date from <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Flag(
        "reply",
        "comment",
        "e.parent_id IS NOT NULL",
        lambda s, i: i.get("reply_to_comment_id") is not None,
        ("are replies to other comments", "answer another comment", "were posted as replies"),
        negated=("are not replies to other comments", "do not answer another comment", "were not posted as replies"),
    ),
]

# == reductions ===============================================================================

TIE_NEWER = "ties going to the more recent release"
REDUCTIONS = [
    Every(),
    TopK(
        "top_played",
        "song",
        measure=("e.play_count", "play_count"),
        tie=("e.release_date", "release_date"),
        np=(
            "the {r_k} most played of the <sel> (by play count, " + TIE_NEWER + ")",
            "the top {r_k} by play count among the <sel>, " + TIE_NEWER + ",",
            "the {r_k} with the highest play counts among the <sel> (on a tie, the newer release first)",
        ),
        subject=(
            "the {r_k} with the highest play counts (" + TIE_NEWER + ")",
            "the top {r_k} by play count, a tie going to the newer release,",
            "the {r_k} most played of them (by play count; on a tie, the more recently released)",
        ),
        take=(
            "the {r_k} most played (by play count, " + TIE_NEWER + ")",
            "the top {r_k} by play count (on a tie, the newer release first)",
            "the {r_k} with the highest play counts, " + TIE_NEWER + ",",
        ),
    ),
    TopK(
        "top_longest",
        "song",
        measure=("e.duration_sec", "duration_sec"),
        tie=("e.play_count", "play_count"),
        np=(
            "the {r_k} longest of the <sel> (by length, ties going to the more played song by play count)",
            "the top {r_k} by length among the <sel>, a tie going to the higher play count,",
            "the {r_k} with the longest durations among the <sel> (on a tie, the higher play count first)",
        ),
        subject=(
            "the {r_k} longest ones (by length; on a tie, the higher play count first)",
            "the top {r_k} by length, a tie going to the higher play count,",
            "the {r_k} with the longest durations (ties going to the higher play count)",
        ),
        take=(
            "the {r_k} longest (by length, ties going to the higher play count)",
            "the top {r_k} by duration (on a tie, the higher play count first)",
            "the {r_k} with the longest running time, ties going to the higher play count,",
        ),
    ),
    TopK(
        "top_newest",
        "song",
        measure=("e.release_date", "release_date"),
        tie=("e.play_count", "play_count"),
        np=(
            "the {r_k} most recently released of the <sel> (by release date, ties going to the higher play count)",
            "the {r_k} newest releases among the <sel>, a tie on the release date going to the higher play count,",
            "the {r_k} with the latest release dates among the <sel> (on a tie, the higher play count first)",
        ),
        subject=(
            "the {r_k} newest ones (by release date; on a tie, the higher play count first)",
            "the {r_k} most recently released, a tie going to the higher play count,",
            "the {r_k} with the latest release dates (ties going to the higher play count)",
        ),
        take=(
            "the {r_k} newest (by release date, ties going to the higher play count)",
            "the {r_k} most recent releases (on a tie, the higher play count first)",
            "the {r_k} with the latest release dates, ties going to the higher play count,",
        ),
        private=True,
    ),
    TopK(
        "most_played_one",
        "song",
        measure=("e.play_count", "play_count"),
        tie=("e.release_date", "release_date"),
        k=(1,),
        np=(
            "the single most played of the <sel> (by play count, " + TIE_NEWER + ")",
            "the one song with the highest play count among the <sel> (on a tie, the newer release)",
            "the most played song (by play count, " + TIE_NEWER + ") among the <sel>",
        ),
        subject=(
            "the single most played one (by play count, " + TIE_NEWER + ")",
            "the one with the highest play count (on a tie, the newer release)",
            "the most played of them by play count (" + TIE_NEWER + ")",
        ),
        take=(
            "the single most played one (by play count, " + TIE_NEWER + ")",
            "the one with the highest play count (on a tie, the newer release)",
            "the most played of them by play count (" + TIE_NEWER + ")",
        ),
    ),
    AboveAverage(
        "above_avg_plays",
        "song",
        measure=("e.play_count", "play_count"),
        np=(
            "those of the <sel> whose play count is above the average play count of that selection",
            "every one of the <sel> with more plays than the average of that selection (by play count)",
            "all of the <sel> played more than the average play count of that selection",
        ),
        subject=(
            "each one whose play count is above the average play count of that selection",
            "every one with more plays than the average of that selection (by play count)",
            "those played more than the average play count of that selection",
        ),
        take=(
            "those whose play count is above the average play count of that selection",
            "every one with more plays than the average of that selection (by play count)",
            "the ones played more than the average play count of that selection",
        ),
    ),
    AboveAverage(
        "above_avg_length",
        "song",
        measure=("e.duration_sec", "duration_sec"),
        np=(
            "those of the <sel> that are longer than the average length of that selection",
            "every one of the <sel> lasting longer than the average duration of that selection",
            "all of the <sel> whose length is above the average length of that selection",
        ),
        subject=(
            "each one longer than the average length of that selection",
            "every one lasting longer than the average duration of that selection",
            "those whose length is above the average length of that selection",
        ),
        take=(
            "those longer than the average length of that selection",
            "every one lasting longer than the average duration of that selection",
            "the ones whose length is above the average length of that selection",
        ),
        private=True,
    ),
    GroupThreshold(
        "artists_with_n",
        "song",
        "artist",
        group=("e.artist_id", "artist_id"),
        out_field="artist_id",
        np=(
            "every artist who is the main artist of at least {r_n} of the <sel>",
            "each artist with {r_n} or more of the <sel> as main artist",
            "the main artists of {r_n} or more of the <sel>",
        ),
        subject=(
            "every main artist of at least {r_n} of them",
            "each artist who is main artist of {r_n} or more of them",
            "the main artists of {r_n} or more of them",
        ),
        take=(
            "the main artists of at least {r_n} of them",
            "every artist who is main artist of {r_n} or more of them",
            "each main artist of {r_n} or more of them",
        ),
    ),
    GroupThreshold(
        "albums_with_n",
        "song",
        "album",
        group=("e.album_id", "album_id"),
        out_field="album_id",
        thresholds=(2, 3, 4),
        np=(
            "every album holding at least {r_n} of the <sel>",
            "each release that {r_n} or more of the <sel> come from",
            "the albums with {r_n} or more of the <sel> on them",
        ),
        subject=(
            "every album holding at least {r_n} of them",
            "each release that {r_n} or more of them come from",
            "the albums with {r_n} or more of them on them",
        ),
        take=(
            "the albums holding at least {r_n} of them",
            "every release that {r_n} or more of them come from",
            "each album with {r_n} or more of them on it",
        ),
    ),
    GroupThreshold(
        "songs_played_n",
        "play",
        "song",
        group=("e.song_id", "song_id"),
        out_field="song_id",
        thresholds=(2, 3, 4, 5),
        np=(
            "every song that at least {r_n} of the <sel> were of",
            "each song played {r_n} times or more among the <sel>",
            "the songs with {r_n} or more of the <sel>",
        ),
        subject=(
            "every song with at least {r_n} of them",
            "each song played {r_n} times or more among them",
            "the songs that {r_n} or more of them were of",
        ),
        take=(
            "the songs with at least {r_n} of them",
            "every song played {r_n} times or more among them",
            "each song that {r_n} or more of them were of",
        ),
    ),
    GroupThreshold(
        "artists_played_n",
        "play",
        "artist",
        group=("(SELECT artist_id FROM songs WHERE id = e.song_id)", "artist_id"),
        out_field="artist_id",
        np=(
            "every main artist of at least {r_n} of the <sel>",
            "each artist who is main artist of the song in {r_n} or more of the <sel>",
            "the main artists of the songs of {r_n} or more of the <sel>",
        ),
        subject=(
            "every main artist of the songs of at least {r_n} of them",
            "each artist who is main artist in {r_n} or more of them",
            "the main artists of {r_n} or more of them",
        ),
        take=(
            "the main artists of at least {r_n} of them",
            "every artist who is main artist in {r_n} or more of them",
            "each main artist of the songs of {r_n} or more of them",
        ),
    ),
    GroupThreshold(
        "artists_minutes",
        "play",
        "artist",
        group=("(SELECT artist_id FROM songs WHERE id = e.song_id)", "artist_id"),
        summed=("e.seconds_played", "seconds_played"),
        out_field="artist_id",
        thresholds=(10, 15, 20, 30, 45, 60),
        scale=60,
        np=(
            "every main artist I listened to for at least {r_n} minutes in total over the <sel> (by seconds played)",
            "each artist whose songs, as main artist, add up to {r_n} minutes or more of listening in the <sel>",
            "the main artists with a total listening time of {r_n} minutes or more across the <sel>",
        ),
        subject=(
            "every main artist with at least {r_n} minutes of listening in total among them (by seconds played)",
            "each artist whose songs, as main artist, add up to {r_n} minutes or more of them",
            "the main artists listened to for {r_n} minutes or more in total in them",
        ),
        take=(
            "the main artists with at least {r_n} minutes of listening in total among them (by seconds played)",
            "every artist whose songs, as main artist, add up to {r_n} minutes or more of them",
            "each main artist listened to for {r_n} minutes or more in total in them",
        ),
        private=True,
    ),
    GroupTop(
        "top_artist",
        "song",
        "artist",
        group=("e.artist_id", "artist_id"),
        name=("(SELECT name FROM artists WHERE id = e.artist_id)", "artist"),
        out_field="artist_id",
        np=(
            "the artist who is main artist of the most of the <sel> (ties going to the name first in the alphabet)",
            "the one main artist with the most songs among the <sel>, a tie going to the name that comes first alphabetically,",
            "whichever artist is main artist of the largest number of the <sel> (on a tie, the first by name)",
        ),
        subject=(
            "the artist who is main artist of the most of them (ties going to the name first in the alphabet)",
            "the one main artist with the most of them, a tie going to the name that comes first alphabetically,",
            "whichever artist is main artist of the largest number of them (on a tie, the first by name)",
        ),
        take=(
            "the artist who is main artist of the most of them (ties going to the name first in the alphabet)",
            "the one main artist with the most of them (a tie going to the name that comes first alphabetically)",
            "whichever artist is main artist of the largest number of them (on a tie, the first by name)",
        ),
    ),
    GroupTop(
        "top_artists_k",
        "play",
        "artist",
        group=("(SELECT artist_id FROM songs WHERE id = e.song_id)", "artist_id"),
        name=("(SELECT a.name FROM artists a JOIN songs s ON s.artist_id = a.id WHERE s.id = e.song_id)", "artist"),
        out_field="artist_id",
        k=(2, 3, 4),
        np=(
            "the {r_k} main artists with the most of the <sel> (by number of plays, ties going to the name first in the alphabet)",
            "the top {r_k} main artists by number of plays among the <sel>, a tie going to the name that comes first alphabetically,",
            "the {r_k} artists who are main artist of the most of the <sel> (on a tie, the first by name)",
        ),
        subject=(
            "the {r_k} main artists with the most of them (by number of plays, ties going to the name first in the alphabet)",
            "the top {r_k} main artists by number of plays, a tie going to the name that comes first alphabetically,",
            "the {r_k} artists who are main artist of the most of them (on a tie, the first by name)",
        ),
        take=(
            "the {r_k} main artists with the most of them (by number of plays, ties going to the name first in the alphabet)",
            "the top {r_k} main artists by number of plays (a tie going to the name that comes first alphabetically)",
            "the {r_k} artists who are main artist of the most of them (on a tie, the first by name)",
        ),
    ),
    TopK(
        "top_followed",
        "artist",
        measure=("e.follower_count", "follower_count"),
        tie=("e.name", "name"),
        tie_descending=False,
        np=(
            "the {r_k} most followed of the <sel> (by followers, ties going to the name first in the alphabet)",
            "the top {r_k} by follower count among the <sel>, a tie going to the name that comes first alphabetically,",
            "the {r_k} with the most followers among the <sel> (on a tie, the first by name)",
        ),
        subject=(
            "the {r_k} with the most followers (ties going to the name first in the alphabet)",
            "the top {r_k} by follower count, a tie going to the name that comes first alphabetically,",
            "the {r_k} most followed of them (on a tie, the first by name)",
        ),
        take=(
            "the {r_k} most followed (by followers, ties going to the name first in the alphabet)",
            "the top {r_k} by follower count (a tie going to the name that comes first alphabetically)",
            "the {r_k} with the most followers, on a tie the first by name,",
        ),
    ),
    TopK(
        "newest_debuts",
        "artist",
        measure=("e.debut_year", "debut_year"),
        tie=("e.name", "name"),
        tie_descending=False,
        np=(
            "the {r_k} most recent debuts among the <sel> (by debut year, ties going to the name first in the alphabet)",
            "the {r_k} who debuted last among the <sel>, a tie on the year going to the name that comes first alphabetically,",
            "the {r_k} with the latest debut years among the <sel> (on a tie, the first by name)",
        ),
        subject=(
            "the {r_k} with the latest debut years (ties going to the name first in the alphabet)",
            "the {r_k} who debuted last, a tie on the year going to the name that comes first alphabetically,",
            "the {r_k} most recent debuts among them (on a tie, the first by name)",
        ),
        take=(
            "the {r_k} most recent debuts (by debut year, ties going to the name first in the alphabet)",
            "the {r_k} who debuted last (a tie on the year going to the name that comes first alphabetically)",
            "the {r_k} with the latest debut years, on a tie the first by name,",
        ),
    ),
    AboveAverage(
        "above_avg_followers",
        "artist",
        measure=("e.follower_count", "follower_count"),
        np=(
            "those of the <sel> with more followers than the average of that selection",
            "every one of the <sel> whose follower count is above the average follower count of that selection",
            "all of the <sel> followed by more listeners than the average of that selection",
        ),
        subject=(
            "each one with more followers than the average of that selection",
            "every one whose follower count is above the average follower count of that selection",
            "those followed by more listeners than the average of that selection",
        ),
        take=(
            "those with more followers than the average of that selection",
            "every one whose follower count is above the average follower count of that selection",
            "the ones followed by more listeners than the average of that selection",
        ),
    ),
    TopK(
        "most_tracks",
        "album",
        measure=("e.track_count", "track_count"),
        tie=("e.release_date", "release_date"),
        k=(2, 3, 4),
        np=(
            "the {r_k} with the most tracks among the <sel> (ties going to the more recent release)",
            "the top {r_k} by number of tracks among the <sel>, a tie going to the newer release,",
            "the {r_k} biggest of the <sel> by track count (on a tie, the newer release first)",
        ),
        subject=(
            "the {r_k} with the most tracks (ties going to the more recent release)",
            "the top {r_k} by number of tracks, a tie going to the newer release,",
            "the {r_k} biggest of them by track count (on a tie, the newer release first)",
        ),
        take=(
            "the {r_k} with the most tracks (ties going to the more recent release)",
            "the top {r_k} by number of tracks (a tie going to the newer release)",
            "the {r_k} biggest by track count, on a tie the newer release,",
        ),
    ),
    TopK(
        "newest_albums",
        "album",
        measure=("e.release_date", "release_date"),
        tie=("e.track_count", "track_count"),
        k=(2, 3, 4),
        np=(
            "the {r_k} most recent of the <sel> (by release date, ties going to the one with more tracks)",
            "the {r_k} newest releases among the <sel>, a tie on the date going to the one with more tracks,",
            "the {r_k} with the latest release dates among the <sel> (on a tie, the one with more tracks first)",
        ),
        subject=(
            "the {r_k} most recent ones (by release date, ties going to the one with more tracks)",
            "the {r_k} newest releases, a tie on the date going to the one with more tracks,",
            "the {r_k} with the latest release dates (on a tie, the one with more tracks first)",
        ),
        take=(
            "the {r_k} most recent (by release date, ties going to the one with more tracks)",
            "the {r_k} newest releases (a tie on the date going to the one with more tracks)",
            "the {r_k} with the latest release dates, on a tie the one with more tracks,",
        ),
        private=True,
    ),
    TopK(
        "top_liked",
        "comment",
        measure=("e.like_count", "like_count"),
        tie=("e.created_at", "created_at"),
        k=(2, 3, 4),
        np=(
            "the {r_k} most liked of the <sel> (by likes, ties going to the more recent comment)",
            "the top {r_k} by like count among the <sel>, a tie going to the newer comment,",
            "the {r_k} with the most likes among the <sel> (on a tie, the more recent first)",
        ),
        subject=(
            "the {r_k} with the most likes (ties going to the more recent comment)",
            "the top {r_k} by like count, a tie going to the newer comment,",
            "the {r_k} most liked of them (on a tie, the more recent first)",
        ),
        take=(
            "the {r_k} most liked (by likes, ties going to the more recent comment)",
            "the top {r_k} by like count (a tie going to the newer comment)",
            "the {r_k} with the most likes, on a tie the more recent,",
        ),
    ),
]


# == actions ==================================================================================


def _expired(item: Row) -> bool:
    return item.get("copyright_status") == "expired"


class NewPlaylist(Action):
    """Create a playlist (named by the request) and add songs to it: the adds use the id the create
    returned (cross-step dependency). By default the songs are the result's; subclasses take the
    tracks of albums or the top song of artists. Expired songs cannot be added (not a condition)."""

    def __init__(
        self,
        key: str,
        *,
        private_list: bool,
        entity: str = "song",
        phrases: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None,
        **options: Any,
    ) -> None:
        kind = "private playlist" if private_list else "playlist"
        imperative, predicate, pronoun = phrases or (
            (
                "Create a new <kind> called {<slot>_name} with <obj>",
                "Make a new <kind> {<slot>_name} holding <obj>",
                "Put <obj> into a new <kind> named {<slot>_name}",
            ),
            (
                "should go into a new <kind> called {<slot>_name}",
                "should fill a new <kind> {<slot>_name}",
                "should be collected in a new <kind> named {<slot>_name}",
            ),
            (
                "put <them> into a new <kind> called {<slot>_name}",
                "collect <them> in a new <kind> {<slot>_name}",
                "make a new <kind> named {<slot>_name} with <them>",
            ),
        )
        super().__init__(
            key,
            entity,
            "song",
            tuple(p.replace("<kind>", kind) for p in imperative),
            tuple(p.replace("<kind>", kind) for p in predicate),
            tuple(p.replace("<kind>", kind) for p in pronoun),
            writes="new_playlist",
            creates=True,
            row_cost=1,
            **options,
        )
        self.private_list = private_list

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_name",)

    def draw(self, d: Drafting, slot: str) -> None:
        taken = set(d.column("SELECT name FROM playlists WHERE owner_id = :actor")) | {v for v in d.stated.values() if isinstance(v, str)}
        name = d.choice([n for n in PLAYLIST_NAMES if n not in taken], "playlist name")
        d.state(f"{slot}_name", name, _quoted(name))

    def songs(self, d: Drafting, targets: list[int]) -> list[int]:
        """The songs that go in, for the result's targets (the SQL half)."""
        return list(targets)

    def listed_songs(self, s: Solving, items: list[Row]) -> list[Row]:
        """The songs that go in, as listed items (the public half)."""
        return [{**item, "song_id": self.target_of(item, s.id_field)} for item in items]

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return {t for t, v in d.lookup("song", self.songs(d, targets), "e.copyright_status = 'expired'").items() if v}

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        refused = self.refused(d, targets)
        return {(slot, "created")} | {(slot, song) for song in self.songs(d, targets) if song not in refused}

    def _extra(self) -> Row:
        return {"is_public": False} if self.private_list else {}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        create = Step("create_playlist", {"name": d.stated[f"{slot}_name"], **self._extra()})
        songs = [song for song in dict.fromkeys(self.songs(d, targets)) if song not in refused]
        return [create] + [Step("add_song_to_playlist", {"playlist_id": ref(at, "playlist_id"), "song_id": song}) for song in songs]

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        songs = self.listed_songs(s, items)
        playlist = s.api.call("create_playlist", creates="playlist_id", name=s.stated[f"{slot}_name"], **self._extra())
        done: set[Any] = set()
        for song in songs:
            song_id = song.get("song_id")
            if song_id is None or song_id in done or _expired(song):
                continue
            done.add(song_id)
            s.api.call("add_song_to_playlist", playlist_id=playlist["playlist_id"], song_id=song_id)


class AlbumTracksPlaylist(NewPlaylist):
    """A new playlist with the tracks of the result's albums (get_album lists them)."""

    def __init__(self) -> None:
        super().__init__(
            "album_tracks_playlist",
            private_list=False,
            entity="album",
            phrases=(
                (
                    "Create a new <kind> called {<slot>_name} with the tracks of <obj>",
                    "Take <obj> and make a new <kind> {<slot>_name} holding <their> tracks",
                    "Put the tracks of <obj> into a new <kind> named {<slot>_name}",
                ),
                (
                    "should have <their> tracks go into a new <kind> called {<slot>_name}",
                    "should have <their> tracks fill a new <kind> {<slot>_name}",
                    "should have <their> tracks collected in a new <kind> named {<slot>_name}",
                ),
                (
                    "put <their> tracks into a new <kind> called {<slot>_name}",
                    "collect <their> tracks in a new <kind> {<slot>_name}",
                    "make a new <kind> named {<slot>_name} with <their> tracks",
                ),
            ),
        )

    def songs(self, d: Drafting, targets: list[int]) -> list[int]:
        out: list[int] = []
        for album in targets:
            out += d.column("SELECT id FROM songs WHERE album_id = :album ORDER BY track_number, id", album=album)
        return out

    def listed_songs(self, s: Solving, items: list[Row]) -> list[Row]:
        out: list[Row] = []
        for item in items:
            album = s.api.call("get_album", album_id=item["album_id"])
            out += album["tracks"] if album else []
        return out


class TopSongsPlaylist(NewPlaylist):
    """A new playlist with the most played song (by play count) of each artist of the result, found
    with get_artist: the create's id and the read's song ids meet in the adds."""

    def __init__(self) -> None:
        top = "the most played song (by play count) of <each><them>"
        super().__init__(
            "top_songs_playlist",
            private_list=False,
            entity="artist",
            phrases=(
                (
                    f"Take <obj> and create a new <kind> called {{<slot>_name}} with {top}",
                    f"Find <obj>, then make a new <kind> {{<slot>_name}} holding {top}",
                    f"For <obj>, put {top} into a new <kind> named {{<slot>_name}}",
                ),
                (
                    "should have <their> most played song (by play count) go into a new <kind> called {<slot>_name}",
                    "should have <their> most played song (by play count) fill a new <kind> {<slot>_name}",
                    "should have <their> most played song (by play count) collected in a new <kind> named {<slot>_name}",
                ),
                (
                    f"put {top} into a new <kind> called {{<slot>_name}}",
                    f"collect {top} in a new <kind> {{<slot>_name}}",
                    f"make a new <kind> named {{<slot>_name}} with {top}",
                ),
            ),
        )

    def songs(self, d: Drafting, targets: list[int]) -> list[int]:
        return list(_top_songs(d, targets).values())

    def listed_songs(self, s: Solving, items: list[Row]) -> list[Row]:
        out: list[Row] = []
        for item in items:
            artist = s.api.call("get_artist", artist_id=item["artist_id"])
            out += artist["top_songs"][:1] if artist else []
        return out


def _top_songs(d: Drafting, artists: list[int]) -> dict[int, int]:
    """Each artist's most played song (NoTarget when two share the top play count: two readings)."""
    out = {}
    for artist in artists:
        top = d.rows("SELECT id, play_count FROM songs WHERE artist_id = :a ORDER BY play_count DESC, id DESC LIMIT 2", a=artist)
        if len(top) > 1 and top[0]["play_count"] == top[1]["play_count"]:
            raise NoTarget("two most played songs")
        if top:
            out[artist] = top[0]["id"]
    return out


class RemoveFromPlaylist(Action):
    """Take the result's songs out of the source playlist."""

    def __init__(self) -> None:
        super().__init__(
            "remove_from_list",
            "song",
            "song",
            ("Remove <obj> from that playlist", "Take <obj> out of that playlist", "Drop <obj> from that playlist"),
            ("should be removed from that playlist", "should come out of that playlist", "should be dropped from that playlist"),
            ("remove <them> from that playlist", "take <them> out of that playlist", "drop <them> from that playlist"),
            row_cost=1,
            sources=("plist",),
        )

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        return [Step("remove_song_from_playlist", {"playlist_id": d.params["playlist"], "song_id": t}) for t in targets]

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        playlist = find_one(s.listing("list_my_playlists"), name=s.stated["s_list"])
        for item in items:
            s.api.call("remove_song_from_playlist", playlist_id=playlist["playlist_id"], song_id=self.target_of(item, s.id_field))


class FavouriteTopSong(Action):
    """For each artist of the result, favourite their most played song, found with get_artist (a
    chain: the song's id comes from a read that needs the artist found before)."""

    def __init__(self) -> None:
        super().__init__(
            "fav_top_song",
            "artist",
            "song",
            (
                "Take <obj> and favourite the most played song (by play count) of <each><them>",
                "Find <obj>, then add the song with the highest play count of <each><them> to my favourites",
                "For <obj>, put the single most played song (by play count) of <each><them> among my favourites",
            ),
            (
                "should have <their> most played song (by play count) added to my favourites",
                "should see <their> song with the highest play count go into my favourites",
                "should get <their> single most played song (by play count) favourited",
            ),
            (
                "favourite the most played song (by play count) of <each><them>",
                "add the song with the highest play count of <each><them> to my favourites",
                "put the single most played song (by play count) of <each><them> among my favourites",
            ),
            writes="favourite",
            excluded_sources=(),
        )

    def _top(self, d: Drafting, artists: list[int]) -> dict[int, int]:
        return _top_songs(d, artists)

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        songs = list(self._top(d, targets).values())
        return {t for t, v in d.lookup("song", songs, f"e.copyright_status = 'expired' OR e.id IN ({FAVOURITE_SQL})").items() if v}

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        refused = self.refused(d, targets)
        return {(slot, song) for song in self._top(d, targets).values() if song not in refused}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        songs = dict.fromkeys(self._top(d, targets).values())
        return [Step("favourite_song", {"song_id": song}) for song in songs if song not in refused]

    def prepare(self, s: Solving, slot: str) -> None:
        s.remember(f"{slot}:present", lambda: {i["song_id"] for i in s.listing("list_favourite_songs")})

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo[f"{slot}:present"]
        done: set[Any] = set()
        for item in items:
            artist = s.api.call("get_artist", artist_id=item["artist_id"])
            if artist is None or not artist["top_songs"]:
                continue
            song = artist["top_songs"][0]
            if song["song_id"] in present or song["song_id"] in done or _expired(song):
                continue
            done.add(song["song_id"])
            s.api.call("favourite_song", song_id=song["song_id"])


class DeleteComments(Action):
    """Delete the result's comments. A reply goes with the comment it answers (the product deletes
    the thread), so a reply whose parent is deleted too is not deleted again; a deeper thread (my
    reply under someone's reply under my comment) is not drawn."""

    def __init__(self) -> None:
        super().__init__(
            "delete_comment",
            "comment",
            "comment",
            ("Delete <obj>", "Remove <obj>", "Take down <obj>"),
            ("should be deleted", "should be removed", "should be taken down"),
            ("delete <them>", "remove <them>", "take <them> down"),
            row_cost=1,
            sources=("my_comments",),
        )

    def _parents(self, d: Drafting, targets: list[int]) -> dict[int, int | None]:
        return d.lookup("comment", targets, "e.parent_id")

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        parents = self._parents(d, targets)
        return {t for t in targets if parents.get(t) in set(targets)}

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        deep = d.column(
            "WITH RECURSIVE up(id, anc) AS (SELECT id, parent_id FROM comments WHERE user_id = :actor "
            "UNION ALL SELECT up.id, c.parent_id FROM up JOIN comments c ON c.id = up.anc) SELECT DISTINCT id FROM up "
            "WHERE anc IN (SELECT id FROM comments WHERE user_id = :actor) AND anc != (SELECT parent_id FROM comments WHERE id = up.id)"
        )
        if set(deep) & set(targets):
            raise NoTarget("a reply deeper in a thread of mine")
        return super().effects(d, slot, targets)

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        return [Step("delete_comment", {"comment_id": t}) for t in targets if t not in refused]

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        chosen = {i["comment_id"] for i in items}
        for item in items:
            if item.get("reply_to_comment_id") not in chosen:
                s.api.call("delete_comment", comment_id=item["comment_id"])


FAVOURITE_PHRASES = (
    ("Favourite <obj>", "Add <obj> to my favourites", "Put <obj> among my favourites"),
    ("should go into my favourites", "should be added to my favourites", "should end up among my favourites"),
    ("favourite <them>", "add <them> to my favourites", "put <them> among my favourites"),
)
FOLLOW_PHRASES = (
    ("Follow <obj>", "Start following <obj>", "Add <obj> to the artists I follow"),
    ("should be followed", "should be on my follow list", "should get a follow from me"),
    ("follow <them>", "start following <them>", "add <them> to the artists I follow"),
)
SAVE_PHRASES = (
    ("Save <obj> to my library", "Add <obj> to my saved albums", "Put <obj> into my library"),
    ("should be saved to my library", "should go into my saved albums", "should end up in my library"),
    ("save <them> to my library", "add <them> to my saved albums", "put <them> into my library"),
)

ACTIONS: list[Action] = [
    EachCall(
        "favourite",
        "song",
        "song",
        "favourite_song",
        "song_id",
        *FAVOURITE_PHRASES,
        refused=f"e.copyright_status = 'expired' OR e.id IN ({FAVOURITE_SQL})",
        present=("list_favourite_songs", "song_id"),
        present_sql=f"e.id IN ({FAVOURITE_SQL})",
        blocked=_expired,
        excluded_sources=("fav",),
    ),
    EachCall(
        "favourite_played",
        "play",
        "song",
        "favourite_song",
        "song_id",
        (
            "Favourite the songs of <obj>",
            "Add the songs played in <obj> to my favourites",
            "Put the songs of <obj> among my favourites",
        ),
        (
            "should have the song played added to my favourites",
            "should get the song played favourited",
            "should see the song played go into my favourites",
        ),
        ("favourite the songs of <them>", "add the songs of <them> to my favourites", "put <their> songs among my favourites"),
        via="song_id",
        via_column="e.song_id",
        writes="favourite",
        refused=f"e.copyright_status = 'expired' OR e.id IN ({FAVOURITE_SQL})",
        present=("list_favourite_songs", "song_id"),
        present_sql=f"e.id IN ({FAVOURITE_SQL})",
    ),
    EachCall(
        "unfavourite",
        "song",
        "song",
        "unfavourite_song",
        "song_id",
        ("Unfavourite <obj>", "Remove <obj> from my favourites", "Take <obj> out of my favourites"),
        ("should be removed from my favourites", "should come out of my favourites", "should no longer be favourites"),
        ("unfavourite <them>", "remove <them> from my favourites", "take <them> out of my favourites"),
        writes="favourite",
        sources=("fav",),
    ),
    NewPlaylist("new_playlist", private_list=False),
    NewPlaylist("new_private_playlist", private_list=True, private=True),
    AlbumTracksPlaylist(),
    TopSongsPlaylist(),
    RemoveFromPlaylist(),
    EachCall(
        "follow",
        "artist",
        "artist",
        "follow_artist",
        "artist_id",
        *FOLLOW_PHRASES,
        refused=f"e.id IN ({FOLLOWED_SQL})",
        present=("list_followed_artists", "artist_id"),
        present_sql=f"e.id IN ({FOLLOWED_SQL})",
        writes="follow",
        excluded_sources=("followed",),
    ),
    EachCall(
        "follow_main_artists",
        "song",
        "artist",
        "follow_artist",
        "artist_id",
        (
            "Follow the main artists of <obj>",
            "Start following the main artist of each of <obj>",
            "Add the main artists of <obj> to the artists I follow",
        ),
        (
            "should have their main artist followed",
            "should get their main artist on my follow list",
            "should see their main artist followed by me",
        ),
        (
            "follow the main artists of <them>",
            "start following <their> main artists",
            "add the main artists of <them> to the artists I follow",
        ),
        via="artist_id",
        via_column="e.artist_id",
        writes="follow",
        refused=f"e.id IN ({FOLLOWED_SQL})",
        present=("list_followed_artists", "artist_id"),
        present_sql=f"e.id IN ({FOLLOWED_SQL})",
    ),
    EachCall(
        "unfollow",
        "artist",
        "artist",
        "unfollow_artist",
        "artist_id",
        ("Unfollow <obj>", "Stop following <obj>", "Take <obj> off my follow list"),
        ("should be unfollowed", "should come off my follow list", "should no longer be followed"),
        ("unfollow <them>", "stop following <them>", "take <them> off my follow list"),
        writes="follow",
        sources=("followed",),
    ),
    FavouriteTopSong(),
    EachCall(
        "save",
        "album",
        "album",
        "save_album",
        "album_id",
        *SAVE_PHRASES,
        refused="e.id IN (SELECT album_id FROM saved_albums WHERE user_id = :actor)",
        present=("list_saved_albums", "album_id"),
        present_sql="e.id IN (SELECT album_id FROM saved_albums WHERE user_id = :actor)",
        writes="save",
        row_cost=1,
        excluded_sources=("saved",),
    ),
    EachCall(
        "save_albums_of",
        "song",
        "album",
        "save_album",
        "album_id",
        (
            "Save the albums of <obj> to my library",
            "Add the album of each of <obj> to my saved albums",
            "Put the albums of <obj> into my library",
        ),
        ("should have their album saved to my library", "should get their album into my saved albums", "should see their album saved"),
        ("save the albums of <them> to my library", "add <their> albums to my saved albums", "put the albums of <them> into my library"),
        via="album_id",
        via_column="e.album_id",
        writes="save",
        refused="e.id IN (SELECT album_id FROM saved_albums WHERE user_id = :actor)",
        present=("list_saved_albums", "album_id"),
        present_sql="e.id IN (SELECT album_id FROM saved_albums WHERE user_id = :actor)",
        row_cost=1,
        private=True,
    ),
    EachCall(
        "unsave",
        "album",
        "album",
        "unsave_album",
        "album_id",
        ("Remove <obj> from my library", "Unsave <obj>", "Take <obj> out of my saved albums"),
        ("should be removed from my library", "should be unsaved", "should come out of my saved albums"),
        ("remove <them> from my library", "unsave <them>", "take <them> out of my saved albums"),
        writes="save",
        row_cost=1,
        sources=("saved",),
    ),
    EachCall(
        "delete_playlist",
        "playlist",
        "playlist",
        "delete_playlist",
        "playlist_id",
        ("Delete <obj>", "Remove <obj> for good", "Get rid of <obj>"),
        ("should be deleted", "should be removed for good", "should go"),
        ("delete <them>", "remove <them> for good", "get rid of <them>"),
        writes="playlist",
        sources=("my_playlists",),
    ),
    EachCall(
        "make_private",
        "playlist",
        "playlist",
        "update_playlist",
        "playlist_id",
        ("Make <obj> private", "Switch <obj> to private", "Set <obj> to private"),
        ("should be made private", "should become private", "should be switched to private"),
        ("make <them> private", "switch <them> to private", "set <them> to private"),
        refused="NOT e.is_public",
        blocked=lambda item: not item.get("is_public", True),
        extra={"is_public": False},
        writes="playlist",
        row_cost=1,
        sources=("my_playlists",),
    ),
    DeleteComments(),
]

GRAMMAR = Grammar(
    domain="music",
    entities=ENTITIES,
    sources=[
        Favourites(),
        MyPlaylist(),
        ArtistSongs(),
        TaggedSongs(),
        History(),
        Followed(),
        CountryArtists(),
        SavedAlbums(),
        MyPlaylists(),
        MyComments(),
    ],
    predicates=[*SONG_PREDICATES, *PLAY_PREDICATES, *ARTIST_PREDICATES, *ALBUM_PREDICATES, *PLAYLIST_PREDICATES, *COMMENT_PREDICATES],
    reductions=REDUCTIONS,
    actions=ACTIONS,
)

__all__ = ["GRAMMAR"]
