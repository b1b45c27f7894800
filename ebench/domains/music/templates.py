"""Task templates of the music platform.

Each template has two halves (see ebench/tasks/generation.py): `draft` inspects the world with
SQL, picks a listener and targets and writes the expected writes; `solve` reaches the same end
state through the public tools from what the query states. Names a person would type (a new
playlist's name, a date, a threshold) are the user's and appear in the query; what the data
decides (which songs, how many) does not. Wording follows docs/wording.md.

Every draft checks, before it is certified, that each condition it states excludes something
(`_bites`): the selection made with the condition ignored differs from the right one. Thresholds
are values a person would write (durations in whole or half minutes, small counts); a boundary's
inclusivity bites only where a candidate happens to land on it (certify.optional_bite). Writes the
product refuses anyway (favouriting an expired song, adding a song to a playlist twice, following
an artist twice) are not conditions and are not phrased as ones.

Every template declares its `clauses`: each stated value, and each clause of the wording that
states no value, with the condition that uses it (a name that scopes a listing, such as an artist
or a playlist, with the condition applied over that listing) or WRITTEN for a value the task
writes. Listings hand the tools' own filters and sort for the stated conditions as `narrow`.

Playlist positions are volatile (grading ignores them), so no template declares an ordering.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sized
from typing import Any

from ...tasks.public import WRITTEN, Condition, PublicAPI, Reading, find_one
from ...tasks.spec import Step
from ...tasks.template_api import Draft, GenContext, NoTarget, Template, leaked
from ...tasks.template_helpers import days_ago, pretty_day, ref
from ...tasks.vocabulary import OpenTerm

PLAYLIST_NAMES = [
    "Late Night Drive",
    "Sunday Reset",
    "Focus Mode",
    "Gym Rotation",
    "Rainy Window",
    "Road Trip 2026",
    "Kitchen Disco",
    "Slow Mornings",
    "Deep Work",
    "Throwbacks",
    "Weekend Warmup",
    "Commute Mix",
    "Study Session",
    "Dinner Party",
    "Summer Leftovers",
    "Winter Coat",
    "Quiet Hours",
    "Party Starters",
    "Heartbreak Hotel",
    "Fresh Finds",
    "Long Run",
    "Sunset Terrace",
    "Coffee Shop",
    "Night Shift",
    "Morning Pages",
    "Autumn Walks",
    "Train Window",
    "Old Flames",
    "Back Porch",
    "City Lights",
    "Slow Burn",
    "Warm Up",
    "Cool Down",
    "Open Road",
    "Midnight Snack",
    "Golden Hour",
]
COMMENTS = [
    "On repeat all month.",
    "This one never gets old!",
    "Still my favourite track of the year.",
    "Beautiful production on this one.",
    "Cannot stop listening to this.",
    "Pure gold from start to finish.",
    "The chorus lives in my head now.",
    "Perfect for a long drive.",
]
THANKS = ["Thanks, glad you agree!", "Thank you for the reply!", "Appreciate it, thanks!", "Thanks for sharing that!"]
DEVICE_WORDS = {
    "car": "in the car",
    "mobile": "on my phone",
    "desktop": "in the desktop app",
    "web": "in the web player",
    "smart_speaker": "on my smart speaker",
}


# Terms whose reading the platform leaves open: a request that uses one says which reading it means.
OPEN_TERMS = (
    OpenTerm(
        "genre family",
        "list_genres shows sub-genres under their parent genre (Cantopop under Pop)",
        decided_by=r"sub-?genres?",
        words_sql="SELECT name FROM genres WHERE parent_id IS NOT NULL OR id IN (SELECT parent_id FROM genres WHERE parent_id IS NOT NULL)",
    ),
    OpenTerm(
        "availability",
        "a listener without VIP cannot play VIP-only songs, and nobody can play an expired one",
        decided_by=r"licen[cs]e|expired|\bVIP\b",
        pattern=r"\b(?:can(?:not|'t| not)? (?:still )?be played|(?:still )?(?:playable|available|unavailable))\b",
    ),
)


# -- helpers of the SQL side ---------------------------------------------------------------


def _listener(ctx: GenContext, sql: str, *params: Any) -> int:
    listener: int = ctx.choice(ctx.column(sql, *params), "listener")
    return listener


def user_any(ctx: GenContext) -> int:
    return _listener(ctx, "SELECT id FROM users ORDER BY id")


def _listener_with(ctx: GenContext, table: str, at_least: int, who: str = "user_id") -> int:
    """A listener owning at least `at_least` rows of `table` (plays, favourites, playlists...)."""
    return _listener(ctx, f"SELECT {who} FROM {table} GROUP BY {who} HAVING COUNT(*) >= {at_least} ORDER BY {who}")


def _draw_row(ctx: GenContext, what: str, sql: str, *params: Any) -> dict[str, Any]:
    """One row of the query, drawn at random (NoTarget when there is none)."""
    return ctx.choice(ctx.rows(sql, *params), what)


def _new_name(ctx: GenContext, *avoid: str) -> str:
    """A playlist name nobody uses yet."""
    taken = set(ctx.column("SELECT name FROM playlists")) | set(avoid)
    return ctx.choice([n for n in PLAYLIST_NAMES if n not in taken], "playlist name")


def _mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def _bites(right: Any, *wrong: Any) -> None:
    """Every wrong selection (a condition ignored or one step off) must differ from the right one."""
    for other in wrong:
        if other == right:
            raise NoTarget("a stated condition would exclude nothing")


def _anything(_: Any) -> bool:
    return True


def _selection_that_bites(pick: Callable[..., Any], *conditions: Callable[[Any], bool]) -> Any:
    """`pick` with every condition as stated; checks (`_bites`) that ignoring any one of them changes the selection.
    A boundary's inclusivity is not forced to bite: the values are natural, so mostly no candidate lands on them."""
    right = pick(*conditions)
    _bites(right, *(pick(*conditions[:i], _anything, *conditions[i + 1 :]) for i in range(len(conditions))))
    return right


# Durations a person would write: whole and half minutes.
ROUND_LENGTHS = tuple(range(60, 601, 30))


def _round_length(ctx: GenContext, fits: Callable[[int], bool], low: int = 120, high: int = 480) -> int:
    """A round duration (whole or half minutes) between `low` and `high` seconds for which `fits` holds."""
    return ctx.choice([t for t in ROUND_LENGTHS if low <= t <= high and fits(t)], "round length")


def _genre_family(ctx: GenContext, genre: str) -> str:
    """The words that decide the genre family reading, for a genre that has sub-genres or a parent
    (list_genres shows Cantopop under Pop): the request means the genre itself, never its sub-genres."""
    row = ctx.one(
        "SELECT p.name AS parent, (SELECT COUNT(*) FROM genres c WHERE c.parent_id = g.id) AS children "
        "FROM genres g LEFT JOIN genres p ON p.id = g.parent_id WHERE g.name = ?",
        genre,
    )
    if row is None:
        raise NoTarget("no such genre")
    if row["children"]:
        return " (not counting its sub-genres)"
    if row["parent"]:
        return f" (only that sub-genre of {row['parent']})"
    return ""


def _top_with_clean_cut(ranked: list[dict[str, Any]], k: int) -> list[int]:
    """The ids of the first k rows (most played first), refusing a tie in play count across the cut."""
    if len(ranked) <= k or ranked[k - 1]["play_count"] == ranked[k]["play_count"]:
        raise NoTarget("no clean cut")
    return [r["id"] for r in ranked[:k]]


def _in_range(items: Any, low: int, high: int, what: str) -> Any:
    if not low <= len(items) <= high:
        raise NoTarget(f"{len(items)} {what}, wanted {low}-{high}")
    return items


def _playlist_steps(name: str, songs: Iterable[int], at: int = 0, **extra: Any) -> list[Step]:
    """Create a playlist (step `at` of the task) and add songs to it."""
    return [Step("create_playlist", {"name": name, **extra})] + [
        Step("add_song_to_playlist", {"playlist_id": ref(at, "playlist_id"), "song_id": s}) for s in songs
    ]


def _draft(actor: int, query: str, steps: list[Step], stated: dict[str, Any], selected: Sized, *about: Any) -> Draft:
    """A draft whose hidden value is how many items the data selected; its targets are `about`, by default the listener."""
    return Draft(actor, query, steps, stated=stated, hidden=[len(selected)], targets=about or (("user", actor),))


def _unique(ids: Iterable[int]) -> list[int]:
    out: list[int] = []
    for i in ids:
        if i not in out:
            out.append(i)
    return out


# -- helpers of the public side ------------------------------------------------------------


def _artist_id(api: PublicAPI, name: str) -> int:
    """An artist, by the exact name the query gives."""
    artist: int = find_one(api.all_pages("search_artists", query=name), name=name)["artist_id"]
    return artist


def _favourite_ids(api: PublicAPI) -> set[int]:
    return {f["song_id"] for f in api.all_pages("list_favourite_songs")}


def _my_playlist(api: PublicAPI, name: str) -> dict[str, Any]:
    return find_one(api.all_pages("list_my_playlists"), name=name)


def _playlist_tracks(api: PublicAPI, playlist_id: int) -> list[dict[str, Any]]:
    """Every song of a playlist (get_playlist pages its songs under "songs")."""
    return api.all_pages("get_playlist", within="songs", playlist_id=playlist_id)


def _new_playlist(api: PublicAPI, name: str, songs: Iterable[int], **extra: Any) -> Any:
    playlist = api.call("create_playlist", creates="playlist_id", name=name, **extra)
    for song in songs:
        api.call("add_song_to_playlist", playlist_id=playlist["playlist_id"], song_id=song)
    return playlist


# The genre family reading: a genre alone, or with its sub-genres. Every request naming a genre that has sub-genres or a
# parent decides it (the genre itself, `_genre_family`); for other genres both readings are the same.
GENRE_FAMILY = Reading("genre family", decided_by=r"sub-?genres?")


def _genre_songs(api: PublicAPI, genre: str, narrow: dict[str, Any] | None = None, **search: Any) -> list[dict[str, Any]]:
    """Every song of the stated genre (search_songs takes one genre; its sub-genres are separate genres)."""
    genres = api.reading(GENRE_FAMILY.name, [genre], None)
    if genres is None:  # the other reading: the genre and its sub-genres
        genres = [genre] + [g["name"] for g in api.all_pages("list_genres") if (g["parent_genre"] or "").casefold() == genre.casefold()]
    songs: list[dict[str, Any]] = []
    for name in genres:
        songs += api.all_pages("search_songs", narrow=narrow, genre=name, **search)
    return songs


def _top_played_playlist(
    api: PublicAPI, stated: dict[str, Any], candidates: list[dict[str, Any]], passes: Callable[[dict[str, Any]], bool]
) -> None:
    """Create the stated playlist from the k most played `candidates` (ties by the higher id, as the catalogue
    sorts) that are in the stated language and pass the template's own conditions."""
    kept = [s for s in candidates if api.keep("language", s["language"].casefold() == stated["language"].casefold()) and passes(s)]
    ranked = sorted(kept, key=lambda s: (-s["play_count"], -s["song_id"]))
    chosen = api.top("top_k", ranked, stated["k"], lambda s: s["play_count"])
    # A song whose licence expired cannot be added: a sloppy solver that kept one gets it refused.
    _new_playlist(api, stated["name"], [s["song_id"] for s in chosen])


def _by_time(plays: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(plays, key=lambda p: (p["played_at"], p["play_id"]))


# == templates ===============================================================================


class MusicTemplate(Template):
    """A template whose `make` draws one candidate; `draft` tries a few draws before giving up, so
    that a template whose conditions need particular data still yields a task in most attempts."""

    tries = 12

    def make(self, ctx: GenContext) -> Draft:
        raise NotImplementedError

    def draft(self, ctx: GenContext) -> Draft:
        reason = NoTarget("no draw")
        for _ in range(self.tries):
            try:
                draft = self.make(ctx)
            except NoTarget as exc:
                reason = exc
                continue
            if not leaked(draft.query, draft.hidden):  # a count that happens to equal a stated number: draw again
                return draft
        raise reason


class FavouriteArtistSince(MusicTemplate):
    name = "favourite_artist_since"
    conditions = (Condition("since", "boundary"), Condition("max_length", "boundary"))
    clauses = {"artist": "since", "since": "since", "max_duration_sec": "max_length"}
    phrasings = (
        "Favourite every song whose main artist is {artist} that was released on or after {date} and is no longer than {length}.",
        "I'm into {artist} lately. Add to my favourites all songs with {artist} as the main artist that came out from {date} "
        "onwards, as long as they run {length} or less.",
        "Go through {artist}'s songs (main artist only): each one released on {date} or later with a length of at most "
        "{length} should end up in my favourites.",
    )

    def make(self, ctx: GenContext) -> Draft:
        artist = _draw_row(
            ctx,
            "artist",
            "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM songs s WHERE s.artist_id = a.id) BETWEEN 22 AND 80 "
            "AND (SELECT COUNT(*) FROM artists b WHERE b.name = a.name) = 1 ORDER BY a.id",
        )
        user = user_any(ctx)
        # Songs the product would refuse to favourite (expired, favourited already) are no candidates.
        candidates = ctx.rows(
            "SELECT id, release_date AS day, duration_sec AS secs FROM songs WHERE artist_id = ? AND copyright_status != 'expired' "
            "AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY release_date, id",
            artist["id"],
            user,
        )
        dates = sorted({c["day"] for c in candidates})
        if len(dates) < 4:
            raise NoTarget("few release dates")
        cut = ctx.rng.choice(dates[1:-2])
        limit = _round_length(ctx, lambda t: any(c["secs"] > t for c in candidates if c["day"] >= cut))

        def pick(day_ok: Callable[[str], bool], length_ok: Callable[[int], bool]) -> list[int]:
            return [c["id"] for c in candidates if day_ok(c["day"]) and length_ok(c["secs"])]

        songs = _selection_that_bites(pick, lambda d: d >= cut, lambda t: t <= limit)
        _in_range(songs, 3, 60, "songs")
        query = self.phrase(ctx, artist=artist["name"], date=pretty_day(cut), length=_mmss(limit))
        return _draft(
            user,
            query,
            [Step("favourite_song", {"song_id": s}) for s in songs],
            {"artist": artist["name"], "since": cut, "max_duration_sec": limit},
            songs,
            ("artist", artist["id"]),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        artist = _artist_id(api, stated["artist"])
        favourites = _favourite_ids(api)
        narrow = {"released_after": stated["since"], "max_duration_sec": stated["max_duration_sec"]}
        for song in api.all_pages("search_songs", narrow=narrow, artist_id=artist, sort_by="oldest"):
            if song["copyright_status"] == "expired" or song["song_id"] in favourites:
                continue  # the product refuses both anyway: not conditions
            if api.compare("since", song["release_date"], ">=", stated["since"]) and api.compare(
                "max_length", song["duration_sec"], "<=", stated["max_duration_sec"]
            ):
                api.call("favourite_song", song_id=song["song_id"])


class TopPlayedOfGenre(MusicTemplate):
    name = "top_played_of_genre"
    conditions = (
        Condition("top_k", "ranking"),
        Condition("language", "filter"),
        Condition("max_length", "boundary"),
        Condition("not_expired", "filter"),
    )
    readings = (GENRE_FAMILY,)
    clauses = {
        "name": WRITTEN,
        "k": "top_k",
        "genre": "top_k",
        "language": "language",
        "max_duration_sec": "max_length",
        "not_expired": "not_expired",
    }
    phrasings = (
        "Create a playlist called '{name}' with the {k} most played {genre} songs{family} in {language} (by play count) that are "
        "at most {length} long. Leave out songs whose licence has expired.",
        "Build me '{name}': of the {genre} tracks{family} in {language} no longer than {length}, take the top {k} by play count, "
        "leaving out any whose licence has expired.",
        "I want a new playlist '{name}' holding the {k} {genre} songs{family} in {language} with the most plays, counting only "
        "songs of {length} or shorter whose licence hasn't expired.",
    )

    def make(self, ctx: GenContext) -> Draft:
        combo = _draw_row(
            ctx,
            "genre and language",
            "SELECT g.id AS genre_id, g.name AS genre, s.language FROM songs s JOIN genres g ON g.id = s.genre_id "
            "WHERE s.copyright_status != 'expired' AND s.language != 'Instrumental' GROUP BY g.id, s.language HAVING COUNT(*) >= 30 "
            "ORDER BY g.id, s.language",
        )
        k = ctx.rng.choice([5, 6, 8, 10, 12])
        every = ctx.rows(
            "SELECT id, play_count, duration_sec, language = ? AS lang, copyright_status = 'expired' AS expired FROM songs "
            "WHERE genre_id = ? ORDER BY play_count DESC, id DESC",
            combo["language"],
            combo["genre_id"],
        )
        limit = _round_length(ctx, lambda t: 2 * k <= sum(r["lang"] and r["duration_sec"] <= t for r in every) <= len(every) - 5)

        def pick(length_ok: Callable[[int], bool], lang_ok: Callable[[int], bool], live_ok: Callable[[int], bool]) -> set[int]:
            # Ignoring the licence, an expired song takes a place and is then refused: the playlist is the rest.
            ranked = [r for r in every if length_ok(r["duration_sec"]) and lang_ok(r["lang"]) and live_ok(r["expired"])][:k]
            return {r["id"] for r in ranked if not r["expired"]}

        _selection_that_bites(pick, lambda d: d <= limit, lambda lang: bool(lang), lambda expired: not expired)
        songs = _top_with_clean_cut([r for r in every if r["lang"] and r["duration_sec"] <= limit and not r["expired"]], k)
        name = _new_name(ctx)
        query = self.phrase(
            ctx,
            name=name,
            k=k,
            genre=combo["genre"],
            family=_genre_family(ctx, combo["genre"]),
            language=combo["language"],
            length=_mmss(limit),
        )
        return Draft(
            user_any(ctx),
            query,
            _playlist_steps(name, songs),
            stated={"name": name, "k": k, "genre": combo["genre"], "language": combo["language"], "max_duration_sec": limit},
            targets=(("genre", combo["genre_id"], combo["language"]),),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        narrow = {"language": stated["language"], "max_duration_sec": stated["max_duration_sec"]}
        candidates = _genre_songs(api, stated["genre"], narrow=narrow, sort_by="most_played")
        _top_played_playlist(
            api,
            stated,
            candidates,
            lambda s: (
                api.compare("max_length", s["duration_sec"], "<=", stated["max_duration_sec"])
                and api.keep("not_expired", s["copyright_status"] != "expired")
            ),
        )


class HistoryNotFavourited(MusicTemplate):
    name = "history_not_favourited"
    conditions = (Condition("start", "boundary"), Condition("end", "boundary"), Condition("not_favourite", "filter"))
    clauses = {"name": WRITTEN, "start": "start", "end": "end", "not_favourite": "not_favourite"}
    phrasings = (
        "Make a playlist called '{name}' with every song I played between {start} and {end} (both days included) "
        "that isn't in my favourites yet.",
        "Go through my listening history from {start} through {end}, both days counting, and put each song I haven't "
        "favourited into a new playlist '{name}'.",
        "I want a new playlist, '{name}'. Fill it with the songs of my plays on {start} up to and including {end}, "
        "leaving out songs that are already among my favourites.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "listening_history", 40)
        plays = ctx.rows(
            "SELECT h.song_id, substr(h.played_at, 1, 10) AS day, s.copyright_status = 'expired' AS expired, "
            "h.song_id IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) AS fav "
            "FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = ? ORDER BY h.played_at, h.id",
            user,
            user,
        )
        days = sorted({p["day"] for p in plays if not p["fav"] and not p["expired"]})
        if len(days) < 8:
            raise NoTarget("few days")
        end = ctx.rng.choice(days[len(days) // 2 : -2])
        start = ctx.rng.choice([d for d in days if d < end and d >= days_ago(ctx, 75)] or [None])
        if start is None:
            raise NoTarget("no start day")

        def pick(start_ok: Callable[[str], bool], end_ok: Callable[[str], bool], fav_ok: bool = False) -> list[int]:
            return _unique(p["song_id"] for p in plays if start_ok(p["day"]) and end_ok(p["day"]) and (fav_ok or not p["fav"]))

        right = pick(lambda d: d >= start, lambda d: d <= end)
        if any(p["expired"] for p in plays if p["song_id"] in right):
            raise NoTarget("an expired song in range")
        playable = {p["song_id"] for p in plays if not p["expired"]}

        def able(ids: list[int]) -> set[int]:
            return {i for i in ids if i in playable}

        _bites(
            set(right),
            able(pick(lambda d: True, lambda d: d <= end)),
            able(pick(lambda d: d >= start, lambda d: True)),
            able(pick(lambda d: d >= start, lambda d: d <= end, fav_ok=True)),
        )
        _in_range(right, 15, 60, "songs")
        name = _new_name(ctx)
        query = self.phrase(ctx, name=name, start=pretty_day(start), end=pretty_day(end))
        return _draft(user, query, _playlist_steps(name, right), {"name": name, "start": start, "end": end}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        narrow = {"start_date": stated["start"], "end_date": stated["end"]}
        plays = _by_time(api.all_pages("get_listening_history", narrow=narrow))
        favourites = _favourite_ids(api)
        chosen: list[int] = []
        for play in plays:
            day = play["played_at"][:10]
            if (
                api.compare("start", day, ">=", stated["start"])
                and api.compare("end", day, "<=", stated["end"])
                and api.keep("not_favourite", play["song_id"] not in favourites)
                and play["song_id"] not in chosen
            ):
                chosen.append(play["song_id"])
        _new_playlist(api, stated["name"], chosen)


class FollowTopPlayedArtists(MusicTemplate):
    name = "follow_top_played_artists"
    conditions = (Condition("top_k", "ranking"), Condition("not_followed", "filter"))
    clauses = {"k": "top_k", "not_followed": "not_followed"}
    phrasings = (
        "Count my plays per main artist over my whole listening history. Of the artists I don't follow yet, follow the {k} "
        "I've played the most, and favourite the most played song (by play count) that each of them is main artist of.",
        "Follow the {k} artists I'm not following yet whom I listen to most, ranked by how many plays their songs (as main "
        "artist) have in my entire history. Then, for each of them, favourite the single most played song (platform play "
        "count) with them as main artist.",
        "Which artists that I don't follow do I play the most? Take my complete listening history, count plays by main "
        "artist, follow the top {k}, and add each one's most played song as main artist (by play count) to my favourites.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "listening_history", 60)
        counts = ctx.rows(
            "SELECT s.artist_id, COUNT(*) AS plays, s.artist_id IN (SELECT artist_id FROM followed_artists WHERE user_id = ?) AS followed "
            "FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = ? GROUP BY s.artist_id "
            "ORDER BY plays DESC, s.artist_id",
            user,
            user,
        )
        k = ctx.rng.choice([3, 4, 5])
        ranked = [c for c in counts if not c["followed"]]
        if len(ranked) <= k + 1 or ranked[k - 1]["plays"] == ranked[k]["plays"]:
            raise NoTarget("no clean cut")
        chosen = [c["artist_id"] for c in ranked[:k]]
        if all(not c["followed"] for c in counts[:k]):
            raise NoTarget("the follow filter excludes nothing")
        favourites = set(ctx.column("SELECT song_id FROM favourite_songs WHERE user_id = ?", user))
        steps: list[Step] = []
        for artist in chosen:
            steps.append(Step("follow_artist", {"artist_id": artist}))
            top = ctx.rows(
                "SELECT id, play_count, copyright_status FROM songs WHERE artist_id = ? ORDER BY play_count DESC, id DESC LIMIT 2", artist
            )
            if len(top) > 1 and top[0]["play_count"] == top[1]["play_count"]:
                raise NoTarget("two most played songs")
            if top[0]["copyright_status"] == "expired":
                raise NoTarget("the song to favourite has expired")
            if top[0]["id"] not in favourites:  # already a favourite: nothing to do
                steps.append(Step("favourite_song", {"song_id": top[0]["id"]}))
        query = self.phrase(ctx, k=k)
        return Draft(user, query, steps, stated={"k": k}, targets=(("user", user),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        plays = Counter(p["artist_id"] for p in api.all_pages("get_listening_history"))
        followed = {a["artist_id"] for a in api.all_pages("list_followed_artists")}
        favourites = _favourite_ids(api)
        candidates = [a for a in sorted(plays) if api.keep("not_followed", a not in followed)]
        ranked = sorted(candidates, key=lambda a: (-plays[a], a))
        for artist in api.top("top_k", ranked, stated["k"], lambda a: plays[a]):
            api.call("follow_artist", artist_id=artist)
            info = api.call("get_artist", artist_id=artist)
            top = info["top_songs"][0]
            if top["song_id"] not in favourites:
                api.call("favourite_song", song_id=top["song_id"])


class CleanExpired(MusicTemplate):
    name = "clean_expired"
    conditions = (Condition("expired", "filter"), Condition("other_playlists", "filter"))
    clauses = {"keep": "other_playlists", "expired": "expired"}
    phrasings = (
        "Some songs in my library can't be played any more because their licence expired. Take every such song out of all "
        "of my playlists except '{keep}', and unfavourite the ones among my favourites.",
        "Clean up my library: in every playlist of mine other than '{keep}' remove the songs whose licence has expired, and "
        "remove expired songs from my favourites as well. '{keep}' is left as it is.",
        "Expired songs are cluttering things. Unfavourite every favourite of mine whose licence has expired and take the "
        "expired tracks out of each of my playlists, leaving only '{keep}' untouched.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "playlists", 2, "owner_id")
        pairs = ctx.rows(
            "SELECT ps.playlist_id, ps.song_id FROM playlist_songs ps JOIN playlists p ON p.id = ps.playlist_id "
            "JOIN songs s ON s.id = ps.song_id WHERE p.owner_id = ? AND s.copyright_status = 'expired' "
            "ORDER BY ps.playlist_id, ps.position",
            user,
        )
        favourites = ctx.column(
            "SELECT f.song_id FROM favourite_songs f JOIN songs s ON s.id = f.song_id WHERE f.user_id = ? "
            "AND s.copyright_status = 'expired' ORDER BY f.favourited_at DESC, s.id",
            user,
        )
        holding = _unique(p["playlist_id"] for p in pairs)
        if len(holding) < 2 or not favourites:
            raise NoTarget("expired songs in fewer than two playlists, or none among the favourites")
        keep = ctx.rng.choice(holding)
        keep_name = ctx.value("SELECT name FROM playlists WHERE id = ?", keep)
        steps = [Step("remove_song_from_playlist", p) for p in pairs if p["playlist_id"] != keep] + [
            Step("unfavourite_song", {"song_id": s}) for s in favourites
        ]
        return Draft(
            user,
            self.phrase(ctx, keep=keep_name),
            steps,
            stated={"keep": keep_name},
            hidden=[len(pairs), len(favourites)],
            targets=(("user", user),),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        for playlist in api.all_pages("list_my_playlists"):
            if not api.keep("other_playlists", playlist["name"].casefold() != stated["keep"].casefold()):
                continue
            for song in _playlist_tracks(api, playlist["playlist_id"]):
                if api.keep("expired", song["copyright_status"] == "expired"):
                    api.call("remove_song_from_playlist", playlist_id=playlist["playlist_id"], song_id=song["song_id"])
        for song in api.all_pages("list_favourite_songs"):
            if api.keep("expired", song["copyright_status"] == "expired"):
                api.call("unfavourite_song", song_id=song["song_id"])


class LatestAlbumPlaylist(MusicTemplate):
    name = "latest_album_playlist"
    conditions = (Condition("full_album", "filter"), Condition("latest", "ranking"))
    clauses = {"artist": "latest", "name": WRITTEN, "full_album": "full_album"}
    phrasings = (
        "Find {artist}'s most recent full album (not a single or EP), save it to my library, and make a private playlist "
        "'{name}' with its tracks.",
        "Save the newest full-length album by {artist}, going by release date (EPs and singles don't count), and put its "
        "tracks into a new private playlist called '{name}'.",
        "I want {artist}'s latest proper album, judged by release date and ignoring singles and EPs: add it to my saved "
        "albums, then create '{name}' as a private playlist holding its songs.",
    )

    def make(self, ctx: GenContext) -> Draft:
        artist = _draw_row(
            ctx,
            "artist",
            "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM albums b WHERE b.artist_id = a.id AND b.album_type = 'album') >= 2 "
            "ORDER BY a.id",
        )
        releases = ctx.rows(
            "SELECT id, album_type, release_date FROM albums WHERE artist_id = ? ORDER BY release_date DESC, id DESC", artist["id"]
        )
        albums = [r for r in releases if r["album_type"] == "album"]
        if albums[0]["release_date"] == albums[1]["release_date"]:
            raise NoTarget("two latest albums")
        if releases[0]["album_type"] == "album":
            raise NoTarget("the newest release is an album: the type filter excludes nothing")
        if releases[0]["release_date"] == albums[0]["release_date"]:
            raise NoTarget("a single on the album's day")
        album = albums[0]["id"]
        user = _listener(
            ctx, "SELECT id FROM users WHERE id NOT IN (SELECT user_id FROM saved_albums WHERE album_id = ?) ORDER BY id", album
        )
        tracks = _in_range(
            ctx.column("SELECT id FROM songs WHERE album_id = ? AND copyright_status != 'expired' ORDER BY track_number", album),
            2,
            40,
            "tracks",
        )
        name = _new_name(ctx)
        query = self.phrase(ctx, artist=artist["name"], name=name)
        steps = [Step("save_album", {"album_id": album})] + _playlist_steps(name, tracks, at=1, is_public=False)
        return _draft(user, query, steps, {"artist": artist["name"], "name": name}, tracks, ("album", album))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        artist = _artist_id(api, stated["artist"])
        releases = api.all_pages("list_artist_albums", narrow={"album_type": "album"}, artist_id=artist)
        albums = [a for a in releases if api.keep("full_album", a["album_type"] == "album")]
        ranked = sorted(albums, key=lambda a: (a["release_date"], a["album_id"]), reverse=True)
        chosen = api.top("latest", ranked, 1, lambda a: a["release_date"])
        for album in chosen:
            api.call("save_album", album_id=album["album_id"])
        tracks: list[int] = []
        for album in chosen:
            # A track whose licence expired cannot be added to a playlist: the product leaves no other way.
            tracks += [
                t["song_id"] for t in api.call("get_album", album_id=album["album_id"])["tracks"] if t["copyright_status"] != "expired"
            ]
        _new_playlist(api, stated["name"], tracks, is_public=False)


class LongSongsOfGenreYear(MusicTemplate):
    name = "long_songs_of_genre_year"
    conditions = (Condition("year", "filter"), Condition("min_length", "boundary"))
    readings = (GENRE_FAMILY,)
    clauses = {"genre": "year", "year": "year", "min_duration_sec": "min_length"}
    phrasings = (
        "Favourite every {genre} song{family} released in {year} that runs {length} or longer.",
        "I like long {genre} tracks{family}. From the ones that came out in {year}, favourite all that are at least {length} long.",
        "Add to my favourites the {genre} songs{family} from {year} with a length of {length} or more.",
    )

    def make(self, ctx: GenContext) -> Draft:
        genre = _draw_row(
            ctx,
            "genre",
            "SELECT g.id, g.name FROM genres g WHERE (SELECT COUNT(*) FROM songs s WHERE s.genre_id = g.id) "
            "BETWEEN 40 AND 300 ORDER BY g.id",
        )
        user = user_any(ctx)
        # Songs the product would refuse to favourite (expired, favourited already) are no candidates.
        songs = ctx.rows(
            "SELECT id, substr(release_date, 1, 4) AS year, duration_sec FROM songs WHERE genre_id = ? AND copyright_status != 'expired' "
            "AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY duration_sec DESC, id DESC",
            genre["id"],
            user,
        )
        year = ctx.choice(sorted({s["year"] for s in songs if sum(t["year"] == s["year"] for t in songs) >= 6}), "year")
        lengths = [s["duration_sec"] for s in songs if s["year"] == year]
        threshold = _round_length(ctx, lambda t: 3 <= sum(d >= t for d in lengths) < len(lengths))

        def pick(year_ok: Callable[[str], bool], length_ok: Callable[[int], bool]) -> list[int]:
            return [s["id"] for s in songs if year_ok(s["year"]) and length_ok(s["duration_sec"])]

        right = _selection_that_bites(pick, lambda y: y == year, lambda d: d >= threshold)
        _in_range(right, 3, 40, "songs")
        query = self.phrase(ctx, genre=genre["name"], family=_genre_family(ctx, genre["name"]), year=year, length=_mmss(threshold))
        steps = [Step("favourite_song", {"song_id": s}) for s in right]
        return _draft(
            user, query, steps, {"genre": genre["name"], "year": year, "min_duration_sec": threshold}, right, ("genre", genre["id"], year)
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        favourites = _favourite_ids(api)
        year = stated["year"]
        narrow = {"released_after": f"{year}-01-01", "released_before": f"{year}-12-31", "min_duration_sec": stated["min_duration_sec"]}
        for song in _genre_songs(api, stated["genre"], narrow=narrow, sort_by="duration"):
            if song["copyright_status"] == "expired" or song["song_id"] in favourites:
                continue  # the product refuses both anyway: not conditions
            if api.keep("year", song["release_date"][:4] == year) and api.compare(
                "min_length", song["duration_sec"], ">=", stated["min_duration_sec"]
            ):
                api.call("favourite_song", song_id=song["song_id"])


class UnfollowUnplayedArtists(MusicTemplate):
    name = "unfollow_unplayed_artists"
    conditions = (Condition("followed_before", "boundary"), Condition("never_played", "filter"))
    clauses = {"before": "followed_before", "never_played": "never_played"}
    phrasings = (
        "Unfollow every artist I started following before {date} whom I've never listened to: no play "
        "of any song with them as main artist anywhere in my listening history.",
        "Tidy up who I follow. If I followed an artist before {date} and my whole listening history "
        "has no play of a song whose main artist they are, unfollow them.",
        "Go through the artists I follow: each one I followed earlier than {date} and whose songs "
        "(as main artist) I have never played at all gets unfollowed.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "followed_artists", 6)
        follows = ctx.rows(
            "SELECT artist_id, substr(followed_at, 1, 10) AS day, artist_id IN (SELECT s.artist_id FROM listening_history h "
            "JOIN songs s ON s.id = h.song_id WHERE h.user_id = ?) AS played FROM followed_artists WHERE user_id = ? "
            "ORDER BY followed_at, artist_id",
            user,
            user,
        )
        date = ctx.choice(sorted({f["day"] for f in follows if not f["played"]}), "follow day")

        def pick(day_ok: Callable[[str], bool], played_ok: bool = False) -> list[int]:
            return [f["artist_id"] for f in follows if day_ok(f["day"]) and (played_ok or not f["played"])]

        right = pick(lambda d: d < date)
        _bites(right, pick(lambda d: True), pick(lambda d: d < date, played_ok=True))
        _in_range(right, 2, 30, "artists")
        query = self.phrase(ctx, date=pretty_day(date))
        return _draft(user, query, [Step("unfollow_artist", {"artist_id": a}) for a in right], {"before": date}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        followed = api.all_pages("list_followed_artists")
        played = {p["artist_id"] for p in api.all_pages("get_listening_history")}
        for artist in sorted(followed, key=lambda a: (a["followed_at"], a["artist_id"])):
            if api.compare("followed_before", artist["followed_at"][:10], "<", stated["before"]) and api.keep(
                "never_played", artist["artist_id"] not in played
            ):
                api.call("unfollow_artist", artist_id=artist["artist_id"])


class MergePlaylists(MusicTemplate):
    name = "merge_playlists"
    # No condition: the task is a cross-step one (the songs go into the playlist the first write creates). The two
    # playlists' names are in the expected diff (their rows are deleted), the new one's too.
    clauses = {"a": WRITTEN, "b": WRITTEN, "name": WRITTEN}
    phrasings = (
        "Merge my playlists '{a}' and '{b}' into one new playlist called '{name}', then delete the two old playlists.",
        "I want '{a}' and '{b}' combined: create '{name}' holding all songs from both and remove the two originals afterwards.",
        "Replace my playlists '{a}' and '{b}' with a single new one, '{name}': it gets the songs of either playlist, and the "
        "old two get deleted.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "playlists", 2, "owner_id")
        mine = ctx.rows("SELECT id, name FROM playlists WHERE owner_id = ? ORDER BY id", user)
        a, b = ctx.rng.sample(mine, 2)
        songs = ctx.column(
            "SELECT ps.song_id FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id IN (?, ?) "
            "AND s.copyright_status != 'expired' GROUP BY ps.song_id ORDER BY MIN(ps.playlist_id = ?) DESC, MIN(ps.position), ps.song_id",
            a["id"],
            b["id"],
            a["id"],
        )
        _in_range(songs, 34, 200, "songs")
        name = _new_name(ctx)
        query = self.phrase(ctx, a=a["name"], b=b["name"], name=name)
        steps = _playlist_steps(name, songs) + [
            Step("delete_playlist", {"playlist_id": a["id"]}),
            Step("delete_playlist", {"playlist_id": b["id"]}),
        ]
        return _draft(
            user, query, steps, {"a": a["name"], "b": b["name"], "name": name}, songs, ("playlist", a["id"]), ("playlist", b["id"])
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        a, b = _my_playlist(api, stated["a"]), _my_playlist(api, stated["b"])
        songs: list[int] = []
        for playlist in (a, b):
            for song in _playlist_tracks(api, playlist["playlist_id"]):
                # The product refuses an expired song and a song twice: no other way to merge.
                if song["copyright_status"] != "expired" and song["song_id"] not in songs:
                    songs.append(song["song_id"])
        _new_playlist(api, stated["name"], songs)
        api.call("delete_playlist", playlist_id=a["playlist_id"])
        api.call("delete_playlist", playlist_id=b["playlist_id"])


class LikeArtistComments(MusicTemplate):
    name = "like_artist_comments"
    conditions = (Condition("min_likes", "boundary"), Condition("since", "boundary"))
    clauses = {"artist": "since", "min_likes": "min_likes", "since": "since"}
    phrasings = (
        "Go through the comments on every song whose main artist is {artist} and like each comment posted on or after "
        "{date} that has {likes}.",
        "On all songs with {artist} as main artist, like the comments from {date} onwards that already have {likes}.",
        "I want to support the {artist} community: for every song whose main artist is {artist}, like every comment "
        "with {likes} written on {date} or later.",
    )

    def make(self, ctx: GenContext) -> Draft:
        artist = _draw_row(
            ctx,
            "artist",
            "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM songs s WHERE s.artist_id = a.id) >= 30 "
            "AND (SELECT COUNT(*) FROM comments c JOIN songs s ON s.id = c.song_id WHERE s.artist_id = a.id) >= 10 ORDER BY a.id",
        )
        user = _listener(
            ctx,
            "SELECT id FROM users WHERE id NOT IN (SELECT c.user_id FROM comments c JOIN songs s ON s.id = c.song_id "
            "WHERE s.artist_id = ?) ORDER BY id",
            artist["id"],
        )
        comments = ctx.rows(
            "SELECT c.id, c.like_count AS likes, substr(c.created_at, 1, 10) AS day FROM comments c JOIN songs s ON s.id = c.song_id "
            "WHERE s.artist_id = ? AND c.id NOT IN (SELECT comment_id FROM comment_likes WHERE user_id = ?) ORDER BY c.id",
            artist["id"],
            user,
        )
        n = ctx.rng.choice([1, 2])
        date = ctx.choice(sorted({c["day"] for c in comments if c["likes"] >= n}), "comment day")

        def pick(likes_ok: Callable[[int], bool], day_ok: Callable[[str], bool]) -> list[int]:
            return [c["id"] for c in comments if likes_ok(c["likes"]) and day_ok(c["day"])]

        right = _selection_that_bites(pick, lambda x: x >= n, lambda d: d >= date)
        _in_range(right, 2, 40, "comments")
        likes = "any likes" if n == 1 else f"{n} or more likes"
        query = self.phrase(ctx, artist=artist["name"], likes=likes, date=pretty_day(date))
        steps = [Step("like_comment", {"comment_id": c}) for c in right]
        return _draft(user, query, steps, {"artist": artist["name"], "min_likes": n, "since": date}, right, ("artist", artist["id"]))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        artist = _artist_id(api, stated["artist"])
        for song in api.all_pages("search_songs", artist_id=artist, sort_by="oldest"):
            comments = api.all_pages("list_song_comments", song_id=song["song_id"], sort_by="oldest")
            for comment in sorted(comments, key=lambda c: c["comment_id"]):
                if comment["liked_by_me"]:
                    continue  # the product refuses a second like: not a condition
                if api.compare("min_likes", comment["like_count"], ">=", stated["min_likes"]) and api.compare(
                    "since", comment["created_at"][:10], ">=", stated["since"]
                ):
                    api.call("like_comment", comment_id=comment["comment_id"])


class SaveAlbumsOfFavourites(MusicTemplate):
    name = "save_albums_of_favourites"
    conditions = (
        Condition("min_favourites", "boundary", capability="aggregation_computation"),
        Condition("full_album", "filter"),
        Condition("since_year", "boundary"),
    )
    clauses = {"k": "min_favourites", "year": "since_year", "full_album": "full_album"}
    phrasings = (
        "Save to my library every full album (not an EP or single) released in {year} or later from which I've favourited "
        "at least {k} songs.",
        "Look through my favourite songs and count them per release. Each full-length album (EPs and singles don't count) "
        "from {year} onwards with {k} or more of my favourites should be in my saved albums.",
        "Which recent albums do I love most? Every album-type release (no EPs, no singles) that came out in {year} or later "
        "and holds at least {k} of my favourite songs: save it to my library.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "favourite_songs", 25)
        albums = ctx.rows(
            "SELECT s.album_id, COUNT(*) AS n, a.album_type = 'album' AS full, substr(a.release_date, 1, 4) AS year "
            "FROM favourite_songs f JOIN songs s ON s.id = f.song_id JOIN albums a ON a.id = s.album_id WHERE f.user_id = ? "
            "AND s.album_id NOT IN (SELECT album_id FROM saved_albums WHERE user_id = ?) GROUP BY s.album_id ORDER BY s.album_id",
            user,
            user,
        )
        k = ctx.rng.choice([2, 2, 3])
        year = ctx.choice(sorted({a["year"] for a in albums if a["full"] and a["n"] >= k}), "year")

        def pick(count_ok: Callable[[int], bool], year_ok: Callable[[str], bool], type_ok: bool = False) -> list[int]:
            return [a["album_id"] for a in albums if count_ok(a["n"]) and year_ok(a["year"]) and (type_ok or a["full"])]

        right = _selection_that_bites(pick, lambda n: n >= k, lambda y: y >= year)
        _bites(right, pick(lambda n: n >= k, lambda y: y >= year, type_ok=True))
        _in_range(right, 3, 30, "albums")
        query = self.phrase(ctx, k=k, year=year)
        return _draft(user, query, [Step("save_album", {"album_id": a}) for a in right], {"k": k, "year": year}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        counts = Counter(f["album_id"] for f in api.all_pages("list_favourite_songs"))
        saved = {a["album_id"] for a in api.all_pages("list_saved_albums")}
        for album in sorted(counts):
            if album in saved or not api.compare("min_favourites", counts[album], ">=", stated["k"]):
                continue
            info = api.call("get_album", album_id=album)
            if api.keep("full_album", info["album_type"] == "album") and api.compare(
                "since_year", info["release_date"][:4], ">=", stated["year"]
            ):
                api.call("save_album", album_id=album)


class TopTaggedSongs(MusicTemplate):
    name = "top_tagged_songs"
    conditions = (Condition("top_k", "ranking"), Condition("language", "filter"), Condition("licensed", "filter"))
    clauses = {"name": WRITTEN, "k": "top_k", "tag": "top_k", "language": "language", "licensed": "licensed"}
    phrasings = (
        "Create a playlist '{name}' with the {k} most played songs (by play count) in {language} tagged '{tag}', counting "
        "only songs that are licensed (neither VIP-only nor expired).",
        "Build me '{name}': among the {language} songs carrying the '{tag}' tag that are free to play (not VIP-only, not "
        "expired), the top {k} by play count.",
        "I'd like a new playlist called '{name}'. Put in it the {k} {language} songs with the '{tag}' tag that have the "
        "highest play counts, counting only songs anyone can play, so no VIP-only and no expired tracks.",
    )

    def make(self, ctx: GenContext) -> Draft:
        combo = _draw_row(
            ctx,
            "tag and language",
            "SELECT t.id AS tag_id, t.name AS tag, s.language FROM song_tags st JOIN tags t ON t.id = st.tag_id "
            "JOIN songs s ON s.id = st.song_id WHERE s.copyright_status = 'licensed' AND s.language != 'Instrumental' GROUP BY t.id, s.language "
            "HAVING COUNT(*) >= 15 ORDER BY t.id, s.language",
        )
        k = ctx.rng.choice([5, 6, 8, 10, 12])
        songs = ctx.rows(
            "SELECT s.id, s.play_count, s.language = ? AS lang, s.copyright_status != 'licensed' AS vip, "
            "s.copyright_status = 'expired' AS expired FROM songs s "
            "JOIN song_tags st ON st.song_id = s.id WHERE st.tag_id = ? ORDER BY s.play_count DESC, s.id DESC",
            combo["language"],
            combo["tag_id"],
        )

        def pick(lang_ok: bool = False, vip_ok: bool = False) -> list[dict[str, Any]]:
            return [s for s in songs if (lang_ok or s["lang"]) and (vip_ok or not s["vip"])]

        right = _top_with_clean_cut(pick(), k)
        # Ignoring the licence, a VIP-only song takes a place (an expired one too, and is then refused).
        _bites(set(right), {s["id"] for s in pick(lang_ok=True)[:k]}, {s["id"] for s in pick(vip_ok=True)[:k] if not s["expired"]})
        name = _new_name(ctx)
        query = self.phrase(ctx, name=name, k=k, tag=combo["tag"], language=combo["language"])
        return Draft(
            user_any(ctx),
            query,
            _playlist_steps(name, right),
            stated={"name": name, "k": k, "tag": combo["tag"], "language": combo["language"]},
            targets=(("tag", combo["tag_id"], combo["language"]),),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        narrow = {"language": stated["language"], "copyright_status": "licensed"}
        candidates = api.all_pages("search_songs", narrow=narrow, tag=stated["tag"], sort_by="most_played")
        _top_played_playlist(api, stated, candidates, lambda s: api.keep("licensed", s["copyright_status"] == "licensed"))


class FavouritesBeforeYear(MusicTemplate):
    name = "favourites_before_year"
    conditions = (Condition("before_year", "boundary"), Condition("language", "filter"))
    clauses = {"language": "language", "year": "before_year", "name": WRITTEN}
    phrasings = (
        "Put my favourite {language} songs released before {year} into a new playlist called '{name}'.",
        "Make '{name}', a playlist of the songs among my favourites that are in {language} and came out before January 1, {year}.",
        "From my favourites, collect every {language} track released earlier than {year} into a new playlist named '{name}'.",
    )

    def make(self, ctx: GenContext) -> Draft:
        combo = _draw_row(
            ctx,
            "listener and language",
            "SELECT f.user_id, s.language FROM favourite_songs f JOIN songs s ON s.id = f.song_id WHERE s.copyright_status != 'expired' "
            "AND s.language != 'Instrumental' "
            "GROUP BY f.user_id, s.language HAVING COUNT(*) >= 4 ORDER BY f.user_id, s.language",
        )
        user, language = combo["user_id"], combo["language"]
        favourites = ctx.rows(
            "SELECT s.id, substr(s.release_date, 1, 4) AS year, s.language = ? AS lang FROM favourite_songs f "
            "JOIN songs s ON s.id = f.song_id WHERE f.user_id = ? AND s.copyright_status != 'expired' "
            "ORDER BY f.favourited_at DESC, s.id",
            language,
            user,
        )
        year = ctx.choice(sorted({f["year"] for f in favourites if f["lang"]})[1:], "year")

        def pick(year_ok: Callable[[str], bool], lang_ok: bool = False) -> list[int]:
            return [f["id"] for f in favourites if year_ok(f["year"]) and (lang_ok or f["lang"])]

        right = pick(lambda y: y < year)
        _bites(right, pick(lambda y: True), pick(lambda y: y < year, lang_ok=True))
        _in_range(right, 2, 40, "songs")
        name = _new_name(ctx)
        query = self.phrase(ctx, language=language, year=year, name=name)
        return _draft(user, query, _playlist_steps(name, right), {"language": language, "year": year, "name": name}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        chosen = [
            f["song_id"]
            for f in api.all_pages("list_favourite_songs")
            if f["copyright_status"] != "expired"  # the product refuses it in a playlist: not a condition
            and api.compare("before_year", f["release_date"][:4], "<", stated["year"])
            and api.keep("language", f["language"].casefold() == stated["language"].casefold())
        ]
        _new_playlist(api, stated["name"], chosen)


ARTIST_KINDS = {"solo": ("solo artist", "solo artists"), "band": ("band", "bands")}


class FollowArtistsOfPlaylist(MusicTemplate):
    name = "follow_artists_of_playlist"
    conditions = (Condition("min_songs", "boundary", capability="aggregation_computation"), Condition("artist_type", "filter"))
    clauses = {"playlist": "min_songs", "k": "min_songs", "artist_type": "artist_type"}
    phrasings = (
        "In my playlist '{playlist}', find every {kind} who is main artist of at least {k} songs on it and follow them; then "
        "make the playlist private.",
        "Follow each of the {kinds} that are the main artist of {k} or more songs in my playlist '{playlist}', and switch "
        "'{playlist}' to private afterwards.",
        "Count the songs per main artist in my playlist '{playlist}'. Any {kind} (going by the artist's profile) with at "
        "least {k} there gets a follow from me, and then the playlist should no longer be public.",
    )

    def make(self, ctx: GenContext) -> Draft:
        playlist = _draw_row(
            ctx, "playlist", "SELECT p.id, p.name, p.owner_id FROM playlists p WHERE p.is_public = 1 AND p.song_count >= 6 ORDER BY p.id"
        )
        user = playlist["owner_id"]
        # Artists followed already are no candidates: the product refuses a second follow.
        artists = ctx.rows(
            "SELECT s.artist_id, COUNT(*) AS n, a.artist_type AS kind FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id "
            "JOIN artists a ON a.id = s.artist_id WHERE ps.playlist_id = ? "
            "AND s.artist_id NOT IN (SELECT artist_id FROM followed_artists WHERE user_id = ?) GROUP BY s.artist_id "
            "ORDER BY s.artist_id",
            playlist["id"],
            user,
        )
        k = ctx.rng.choice([2, 2, 3])
        kind = ctx.rng.choice(sorted(ARTIST_KINDS))

        def pick(count_ok: Callable[[int], bool], kind_ok: Callable[[str], bool]) -> list[int]:
            return [a["artist_id"] for a in artists if count_ok(a["n"]) and kind_ok(a["kind"])]

        right = _selection_that_bites(pick, lambda n: n >= k, lambda t: t == kind)
        _in_range(right, 1, 20, "artists")
        if kind == "band" and pick(lambda n: n >= k, lambda t: t in ("duo", "orchestra")):
            raise NoTarget("a duo or an orchestra could be read as a band")
        one, many = ARTIST_KINDS[kind]
        query = self.phrase(ctx, playlist=playlist["name"], k=k, kind=one, kinds=many)
        steps = [Step("follow_artist", {"artist_id": a}) for a in right] + [
            Step("update_playlist", {"playlist_id": playlist["id"], "is_public": False})
        ]
        return _draft(user, query, steps, {"playlist": playlist["name"], "k": k, "artist_type": kind}, right, ("playlist", playlist["id"]))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        playlist = _my_playlist(api, stated["playlist"])
        counts = Counter(s["artist_id"] for s in _playlist_tracks(api, playlist["playlist_id"]))
        for artist in sorted(counts):
            if not api.compare("min_songs", counts[artist], ">=", stated["k"]):
                continue
            info = api.call("get_artist", artist_id=artist)
            if api.keep("artist_type", info["artist_type"] == stated["artist_type"]) and not info["followed_by_me"]:
                api.call("follow_artist", artist_id=artist)
        api.call("update_playlist", playlist_id=playlist["playlist_id"], is_public=False)


class ArchiveOldFavourites(MusicTemplate):
    name = "archive_old_favourites"
    conditions = (Condition("before", "boundary"),)
    # What happens to an expired favourite (it cannot go into a playlist) is decided in words: it is unfavourited too.
    readings = (Reading("expired favourites", decided_by=r"expired|licen[cs]e"),)
    clauses = {"before": "before", "name": WRITTEN}
    phrasings = (
        "My favourites are a mess. Move every song I favourited before {date} into a new private playlist "
        "called '{name}' and unfavourite those songs. Songs whose licence has expired can't go into a playlist: just "
        "unfavourite them.",
        "Archive my old favourites: everything I favourited earlier than {date} goes into a new "
        "private playlist '{name}' and comes out of my favourites. Expired songs are only unfavourited.",
        "Create a private playlist '{name}' with the favourites I added before {date} (favourites from {date} stay), then "
        "remove those songs from my favourites; any that have expired skip the playlist but still get unfavourited.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "favourite_songs", 58)
        favourites = ctx.rows(
            "SELECT f.song_id, substr(f.favourited_at, 1, 10) AS day, s.copyright_status = 'expired' AS expired "
            "FROM favourite_songs f JOIN songs s ON s.id = f.song_id WHERE f.user_id = ? ORDER BY f.favourited_at, f.song_id",
            user,
        )
        # A big clean-up: most of the favourites move, so the cut is a late favourite day.
        cut = ctx.choice(sorted({f["day"] for f in favourites[52:-3]}), "cut day")
        old = [f for f in favourites if f["day"] < cut]
        _bites(old, favourites)
        _in_range(old, 52, 80, "favourites")
        if not any(f["expired"] for f in old):
            raise NoTarget("no expired favourite: the words on expired songs would apply to nothing")
        name = _new_name(ctx)
        steps = _playlist_steps(name, [f["song_id"] for f in old if not f["expired"]], is_public=False) + [
            Step("unfavourite_song", {"song_id": f["song_id"]}) for f in old
        ]
        query = self.phrase(ctx, date=pretty_day(cut), name=name)
        return _draft(user, query, steps, {"before": cut, "name": name}, old)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        favourites = api.all_pages("list_favourite_songs", sort_by="oldest")
        old = [f for f in favourites if api.compare("before", f["favourited_at"][:10], "<", stated["before"])]
        _new_playlist(api, stated["name"], [f["song_id"] for f in old if f["copyright_status"] != "expired"], is_public=False)
        for song in api.reading("expired favourites", old, [f for f in old if f["copyright_status"] != "expired"]):
            api.call("unfavourite_song", song_id=song["song_id"])


class DeleteOldComments(MusicTemplate):
    name = "delete_old_comments"
    conditions = (Condition("before", "boundary"), Condition("max_likes", "boundary"))
    clauses = {"before": "before", "max_likes": "max_likes"}
    phrasings = (
        "Delete every comment I posted before {date} that has fewer than {n} likes.",
        "Clean up my old comments: anything I wrote earlier than {date} with under {n} likes should go. Comments from "
        "{date} on stay, and so do ones with {n} likes or more.",
        "Remove my comments posted before {date} that got less than {n} likes; leave the rest alone.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = user_any(ctx)
        mine = ctx.rows(
            "SELECT id, parent_id, substr(created_at, 1, 10) AS day, like_count AS likes FROM comments "
            "WHERE user_id = ? ORDER BY created_at, id",
            user,
        )
        n = ctx.rng.choice([2, 2, 3])
        date = ctx.choice(sorted({c["day"] for c in mine if c["likes"] < n})[2:], "comment day")

        def pick(day_ok: Callable[[str], bool], likes_ok: Callable[[int], bool]) -> list[int]:
            return [c["id"] for c in mine if day_ok(c["day"]) and likes_ok(c["likes"])]

        right = _selection_that_bites(pick, lambda d: d < date, lambda x: x < n)
        _in_range(right, 2, 30, "comments")
        # A comment deleted with its thread cannot be deleted again: no chosen comment inside another's thread.
        for cid in right:
            ancestors = ctx.column(
                "WITH RECURSIVE up(id, parent) AS (SELECT id, parent_id FROM comments WHERE id = ? "
                "UNION ALL SELECT c.id, c.parent_id FROM comments c JOIN up ON c.id = up.parent) SELECT id FROM up",
                cid,
            )
            if any(a in right for a in ancestors[1:]):
                raise NoTarget("nested comments")
        if not ctx.value(f"SELECT COUNT(*) FROM comment_likes WHERE comment_id IN ({','.join('?' * len(right))})", *right):
            raise NoTarget("no like goes with the comments")
        query = self.phrase(ctx, date=pretty_day(date), n=n)
        return _draft(user, query, [Step("delete_comment", {"comment_id": c}) for c in right], {"before": date, "max_likes": n}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        mine = sorted(api.all_pages("list_my_comments"), key=lambda c: (c["created_at"], c["comment_id"]))
        for comment in mine:
            if api.compare("before", comment["created_at"][:10], "<", stated["before"]) and api.compare(
                "max_likes", comment["like_count"], "<", stated["max_likes"]
            ):
                api.call("delete_comment", comment_id=comment["comment_id"])


class ConsolidateSmallPlaylists(MusicTemplate):
    name = "consolidate_small_playlists"
    conditions = (Condition("max_size", "boundary"), Condition("untouched_since", "boundary"))
    clauses = {"target": "max_size", "max_size": "max_size", "before": "untouched_since"}
    phrasings = (
        "Fold my small, stale playlists into '{target}': every other playlist of mine with fewer than {n} songs that I "
        "last changed before {date} gets its songs added to '{target}' and is then deleted.",
        "Any playlist of mine holding under {n} songs and last updated before {date} (apart from '{target}' itself) should "
        "be merged into '{target}': add its songs that aren't in '{target}' yet, then delete it.",
        "Clean up my playlists: for each one with less than {n} songs whose last update was before {date}, other than "
        "'{target}', move its songs over to '{target}' and remove the small playlist.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "playlists", 4, "owner_id")
        mine = ctx.rows("SELECT id, name, song_count, substr(updated_at, 1, 10) AS day FROM playlists WHERE owner_id = ? ORDER BY id", user)
        target = ctx.choice(mine, "target playlist")
        others = [p for p in mine if p["id"] != target["id"]]

        def pick(size_ok: Callable[[int], bool], day_ok: Callable[[str], bool]) -> list[int]:
            return [p["id"] for p in others if size_ok(p["song_count"]) and day_ok(p["day"])]

        def bites(n: int, date: str) -> bool:
            right = pick(lambda c: c < n, lambda d: d < date)
            return bool(right) and right != pick(_anything, lambda d: d < date) and right != pick(lambda c: c < n, _anything)

        n, date = ctx.choice(
            [(n, d) for n in (5, 8, 10, 12, 15, 20, 25, 30) for d in sorted({p["day"] for p in others}) if bites(n, d)], "size and day"
        )
        right = pick(lambda c: c < n, lambda d: d < date)
        present = set(ctx.column("SELECT song_id FROM playlist_songs WHERE playlist_id = ?", target["id"]))
        steps: list[Step] = []
        for pid in right:
            # The product refuses an expired song and a song the target holds already: no other way to fold.
            for song in ctx.column(
                "SELECT ps.song_id FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id = ? "
                "AND s.copyright_status != 'expired' ORDER BY ps.position",
                pid,
            ):
                if song not in present:
                    present.add(song)
                    steps.append(Step("add_song_to_playlist", {"playlist_id": target["id"], "song_id": song}))
            steps.append(Step("delete_playlist", {"playlist_id": pid}))
        if len(present) > 500:
            raise NoTarget("too many songs")
        query = self.phrase(ctx, target=target["name"], n=n, date=pretty_day(date))
        return _draft(user, query, steps, {"target": target["name"], "max_size": n, "before": date}, right, ("playlist", target["id"]))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        playlists = api.all_pages("list_my_playlists")
        target = find_one(playlists, name=stated["target"])
        present = {s["song_id"] for s in _playlist_tracks(api, target["playlist_id"])}
        chosen = [
            p
            for p in sorted(playlists, key=lambda p: p["playlist_id"])
            if p["playlist_id"] != target["playlist_id"]
            and api.compare("max_size", p["song_count"], "<", stated["max_size"])
            and api.compare("untouched_since", p["updated_at"][:10], "<", stated["before"])
        ]
        for playlist in chosen:
            for song in _playlist_tracks(api, playlist["playlist_id"]):
                if song["copyright_status"] != "expired" and song["song_id"] not in present:
                    present.add(song["song_id"])
                    api.call("add_song_to_playlist", playlist_id=target["playlist_id"], song_id=song["song_id"])
            api.call("delete_playlist", playlist_id=playlist["playlist_id"])


class RenameAndTrim(MusicTemplate):
    name = "rename_and_trim"
    conditions = (Condition("min_length", "boundary"), Condition("not_favourite", "filter"))
    clauses = {"old": "min_length", "new": WRITTEN, "min_duration_sec": "min_length", "not_favourite": "not_favourite"}
    phrasings = (
        "Rename my playlist '{old}' to '{new}', then remove every song from it that is shorter than {length}, except songs "
        "that are among my favourites.",
        "Two changes to '{old}': it should be called '{new}' from now on, and the songs in it under {length} should go, "
        "unless I've favourited them.",
        "Take the songs shorter than {length} out of my playlist '{old}' (my favourite songs stay, whatever their length) and "
        "give the playlist the new name '{new}'.",
    )

    def make(self, ctx: GenContext) -> Draft:
        playlist = _draw_row(ctx, "playlist", "SELECT id, name, owner_id FROM playlists WHERE song_count >= 6 ORDER BY id")
        songs = ctx.rows(
            "SELECT s.id, s.duration_sec, s.id IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) AS fav "
            "FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id = ? ORDER BY ps.position",
            playlist["owner_id"],
            playlist["id"],
        )
        limit = _round_length(ctx, lambda t: any(s["duration_sec"] < t and s["fav"] for s in songs), low=150, high=300)

        def pick(length_ok: Callable[[int], bool], fav_ok: Callable[[int], bool]) -> list[int]:
            return [s["id"] for s in songs if length_ok(s["duration_sec"]) and fav_ok(s["fav"])]

        right = _selection_that_bites(pick, lambda d: d < limit, lambda fav: not fav)
        _in_range(right, 2, 40, "songs")
        mine = ctx.column("SELECT name FROM playlists WHERE owner_id = ?", playlist["owner_id"])
        new = _new_name(ctx, *mine)
        query = self.phrase(ctx, old=playlist["name"], new=new, length=_mmss(limit))
        steps = [Step("update_playlist", {"playlist_id": playlist["id"], "name": new})] + [
            Step("remove_song_from_playlist", {"playlist_id": playlist["id"], "song_id": s}) for s in right
        ]
        return _draft(
            playlist["owner_id"],
            query,
            steps,
            {"old": playlist["name"], "new": new, "min_duration_sec": limit},
            right,
            ("playlist", playlist["id"]),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        playlist = _my_playlist(api, stated["old"])
        favourites = _favourite_ids(api)
        api.call("update_playlist", playlist_id=playlist["playlist_id"], name=stated["new"])
        for song in _playlist_tracks(api, playlist["playlist_id"]):
            if api.compare("min_length", song["duration_sec"], "<", stated["min_duration_sec"]) and api.keep(
                "not_favourite", song["song_id"] not in favourites
            ):
                api.call("remove_song_from_playlist", playlist_id=playlist["playlist_id"], song_id=song["song_id"])


def _play_ranking(plays: Iterable[dict[str, Any]], key: str = "song_id") -> list[tuple[int, int, str]]:
    """(song, plays, last played) best first: most plays, then the most recent play, then the higher id."""
    count: Counter[int] = Counter()
    last: dict[int, str] = {}
    for p in plays:
        count[p[key]] += 1
        last[p[key]] = max(last.get(p[key], ""), p["played_at"])
    return sorted(((s, count[s], last[s]) for s in count), key=lambda r: (r[1], r[2], r[0]), reverse=True)


class MostPlayedSinceCompose(MusicTemplate):
    name = "most_played_since_compose"
    conditions = (Condition("since", "boundary"), Condition("most_played", "ranking", tie_break_stated=True))
    clauses = {"since": "since", "text": WRITTEN}
    phrasings = (
        "Find the song I've played the most times on or after {date} (count plays in my listening history, ties going "
        "to the one I played most recently). Favourite it, follow its main artist, save its album to my library, and "
        "comment '{text}' on it.",
        "From {date} on, which song have I played most often? If two are level, take the one I played "
        "last. For that song: add it to my favourites, follow its main artist, save the album it's on. And post the "
        "comment '{text}' on it.",
        "Look at my plays from {date} onwards and pick the song with the most plays (on a tie, the most "
        "recently played of them). I want it favourited, its main artist followed and its album saved, plus a comment "
        "'{text}' posted on it.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "listening_history", 40)
        plays = ctx.rows(
            "SELECT song_id, played_at, substr(played_at, 1, 10) AS day FROM listening_history WHERE user_id = ? ORDER BY played_at, id",
            user,
        )

        def top(ok: Callable[[str], bool]) -> int:
            return _play_ranking(p for p in plays if ok(p["day"]))[0][0]

        # A day from which on the winner is another song than over the whole history.
        def changes(day: str) -> bool:
            return top(lambda x: x >= day) != top(lambda x: True)

        days = [d for d in sorted({p["day"] for p in plays})[-60:-1] if changes(d)]
        date = ctx.choice(days, "day")
        song = top(lambda d: d >= date)
        info = ctx.rows(
            "SELECT s.artist_id, s.album_id, s.copyright_status, "
            "EXISTS (SELECT 1 FROM favourite_songs WHERE user_id = ?1 AND song_id = s.id) AS fav, "
            "EXISTS (SELECT 1 FROM followed_artists WHERE user_id = ?1 AND artist_id = s.artist_id) AS followed, "
            "EXISTS (SELECT 1 FROM saved_albums WHERE user_id = ?1 AND album_id = s.album_id) AS saved FROM songs s WHERE s.id = ?2",
            user,
            song,
        )[0]
        if info["copyright_status"] == "expired":
            raise NoTarget("an expired song")
        text = ctx.rng.choice(COMMENTS)
        query = self.phrase(ctx, date=pretty_day(date), text=text)
        steps = (
            ([] if info["fav"] else [Step("favourite_song", {"song_id": song})])
            + ([] if info["followed"] else [Step("follow_artist", {"artist_id": info["artist_id"]})])
            + ([] if info["saved"] else [Step("save_album", {"album_id": info["album_id"]})])
            + [Step("post_comment", {"song_id": song, "content": text})]
        )
        if len(steps) < 3:
            raise NoTarget("too small a change")
        return Draft(user, query, steps, stated={"since": date, "text": text}, targets=(("user", user),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        plays = api.all_pages("get_listening_history", narrow={"start_date": stated["since"]})
        recent = [p for p in plays if api.compare("since", p["played_at"][:10], ">=", stated["since"])]
        ranked = _play_ranking(recent)
        for song_id, _, _ in api.top("most_played", ranked, 1, lambda r: r[1]):
            song = api.call("get_song", song_id=song_id)
            if not song["favourited_by_me"]:
                api.call("favourite_song", song_id=song_id)
            if not api.call("get_artist", artist_id=song["artist_id"])["followed_by_me"]:
                api.call("follow_artist", artist_id=song["artist_id"])
            if not api.call("get_album", album_id=song["album_id"])["saved_by_me"]:
                api.call("save_album", album_id=song["album_id"])
            api.call("post_comment", song_id=song_id, content=stated["text"])


class ThankRepliers(MusicTemplate):
    name = "thank_repliers"
    conditions = (Condition("since", "boundary"), Condition("until", "boundary"))
    clauses = {"since": "since", "until": "until", "text": WRITTEN}
    phrasings = (
        "People replied to my comments. For every such reply posted between {start} and {end} (both days included), like "
        "it and answer it with '{text}'.",
        "Go through the replies to my comments. Each one written from {start} up to and including {end} gets a like from "
        "me and my reply '{text}'.",
        "I want to thank everyone who replied to one of my comments on {start} or later, but not after {end}: like each "
        "of those replies and answer it with '{text}'.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = user_any(ctx)
        replies = ctx.rows(
            "SELECT c.id, c.song_id, c.user_id, substr(c.created_at, 1, 10) AS day, "
            "c.id IN (SELECT comment_id FROM comment_likes WHERE user_id = ?) AS liked FROM comments c JOIN comments p "
            "ON p.id = c.parent_id WHERE p.user_id = ? ORDER BY c.song_id, c.created_at, c.id",
            user,
            user,
        )
        if any(r["user_id"] == user for r in replies):
            raise NoTarget("a reply to myself")
        days = sorted({r["day"] for r in replies})
        start = ctx.choice(days[1:-1], "first reply day")
        end = ctx.choice([d for d in days[:-1] if d >= start], "last reply day")

        def pick(start_ok: Callable[[str], bool], end_ok: Callable[[str], bool]) -> list[dict[str, Any]]:
            return [r for r in replies if start_ok(r["day"]) and end_ok(r["day"])]

        right = _selection_that_bites(pick, lambda d: d >= start, lambda d: d <= end)
        _in_range(right, 2, 20, "replies")
        text = ctx.rng.choice(THANKS)
        # The solver walks the songs of my comments in id order, each song's comments oldest first.
        steps: list[Step] = []
        for r in right:
            if not r["liked"]:  # the product refuses a second like
                steps.append(Step("like_comment", {"comment_id": r["id"]}))
            steps.append(Step("post_comment", {"song_id": r["song_id"], "content": text, "reply_to_comment_id": r["id"]}))
        query = self.phrase(ctx, start=pretty_day(start), end=pretty_day(end), text=text)
        return _draft(user, query, steps, {"since": start, "until": end, "text": text}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        mine = api.all_pages("list_my_comments")
        my_ids = {c["comment_id"] for c in mine}
        for song in sorted({c["song_id"] for c in mine}):
            for comment in api.all_pages("list_song_comments", song_id=song, sort_by="oldest"):
                if comment["reply_to_comment_id"] not in my_ids:
                    continue
                day = comment["created_at"][:10]
                if api.compare("since", day, ">=", stated["since"]) and api.compare("until", day, "<=", stated["until"]):
                    if not comment["liked_by_me"]:
                        api.call("like_comment", comment_id=comment["comment_id"])
                    api.call("post_comment", song_id=song, content=stated["text"], reply_to_comment_id=comment["comment_id"])


class FollowArtistsOfFavourites(MusicTemplate):
    name = "follow_artists_of_favourites"
    conditions = (Condition("min_favourites", "boundary", capability="aggregation_computation"), Condition("verified", "filter"))
    clauses = {"k": "min_favourites", "verified": "verified"}
    phrasings = (
        "Follow every verified artist who is the main artist of at least {k} of my favourite songs.",
        "Count my favourite songs per main artist. Each artist with {k} or more of them whose profile is verified should be "
        "among the artists I follow.",
        "I'd like to follow the artists behind my favourites: any verified artist that is main artist on {k} or more of my "
        "favourite songs.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "favourite_songs", 25)
        artists = ctx.rows(
            "SELECT s.artist_id, COUNT(*) AS n, a.is_verified AS verified FROM favourite_songs f JOIN songs s ON s.id = f.song_id "
            "JOIN artists a ON a.id = s.artist_id WHERE f.user_id = ? AND s.artist_id NOT IN (SELECT artist_id FROM followed_artists "
            "WHERE user_id = ?) GROUP BY s.artist_id ORDER BY s.artist_id",
            user,
            user,
        )
        k = ctx.rng.choice([2, 2, 3])

        def pick(ok: Callable[[int], bool], any_artist: bool = False) -> list[int]:
            return [a["artist_id"] for a in artists if ok(a["n"]) and (any_artist or a["verified"])]

        right = pick(lambda n: n >= k)
        _bites(right, pick(lambda n: True), pick(lambda n: n >= k, any_artist=True))
        _in_range(right, 2, 25, "artists")
        query = self.phrase(ctx, k=k)
        return _draft(user, query, [Step("follow_artist", {"artist_id": a}) for a in right], {"k": k}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        counts = Counter(f["artist_id"] for f in api.all_pages("list_favourite_songs"))
        for artist in sorted(counts):
            if not api.compare("min_favourites", counts[artist], ">=", stated["k"]):
                continue
            info = api.call("get_artist", artist_id=artist)
            if api.keep("verified", info["is_verified"]) and not info["followed_by_me"]:
                api.call("follow_artist", artist_id=artist)


class NewAlbumsOfFollowed(MusicTemplate):
    name = "new_albums_of_followed"
    conditions = (Condition("since", "boundary"), Condition("full_album", "filter"))
    clauses = {"since": "since", "full_album": "full_album"}
    phrasings = (
        "Save every full album (not EPs or singles) released on or after {date} by the artists I follow.",
        "For each artist I follow, add their full-length albums that came out on {date} or later to my "
        "saved albums; singles and EPs don't count.",
        "Catch me up on the artists I follow: any album-type release of theirs (no EPs, no singles) from {date} onwards "
        "goes into my library.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = user_any(ctx)
        releases = ctx.rows(
            "SELECT a.id, a.release_date AS day, a.album_type = 'album' AS full FROM albums a JOIN followed_artists f "
            "ON f.artist_id = a.artist_id WHERE f.user_id = ? AND a.id NOT IN (SELECT album_id FROM saved_albums WHERE user_id = ?) "
            "ORDER BY a.release_date, a.id",
            user,
            user,
        )
        date = ctx.choice(sorted({r["day"] for r in releases if r["full"]})[-12:-2], "release day")

        def pick(day_ok: Callable[[str], bool], any_type: bool = False) -> set[int]:
            return {r["id"] for r in releases if day_ok(r["day"]) and (any_type or r["full"])}

        right = pick(lambda d: d >= date)
        _bites(right, pick(lambda d: True), pick(lambda d: d >= date, any_type=True))
        _in_range(right, 3, 20, "albums")
        query = self.phrase(ctx, date=pretty_day(date))
        return _draft(user, query, [Step("save_album", {"album_id": a}) for a in sorted(right)], {"since": date}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        saved = {a["album_id"] for a in api.all_pages("list_saved_albums")}
        for artist in api.all_pages("list_followed_artists"):
            for album in api.all_pages("list_artist_albums", narrow={"album_type": "album"}, artist_id=artist["artist_id"]):
                if album["album_id"] in saved:
                    continue  # the product refuses a second save: not a condition
                if api.keep("full_album", album["album_type"] == "album") and api.compare(
                    "since", album["release_date"], ">=", stated["since"]
                ):
                    api.call("save_album", album_id=album["album_id"])


class DevicePlaysPlaylist(MusicTemplate):
    name = "device_plays_playlist"
    conditions = (Condition("device", "filter"), Condition("min_listen", "boundary"))
    clauses = {"name": WRITTEN, "device": "device", "min_seconds": "min_listen"}
    phrasings = (
        "Make a playlist '{name}' of every song I've listened to {where} for at least {length} in a single play, over my "
        "whole listening history.",
        "Going through all of my listening history: whenever I played a song {where} and listened {length} or longer in "
        "that play, that song belongs in a new playlist called '{name}'.",
        "Create '{name}' from my listening {where}: each song with at least one play there lasting {length} or more, "
        "anywhere in my history.",
    )

    def make(self, ctx: GenContext) -> Draft:
        combo = _draw_row(
            ctx,
            "listener and device",
            "SELECT user_id, device FROM listening_history GROUP BY user_id, device HAVING COUNT(*) >= 8 ORDER BY user_id, device",
        )
        user, device = combo["user_id"], combo["device"]
        plays = ctx.rows(
            "SELECT h.song_id, h.device = ? AS here, h.seconds_played AS secs, s.copyright_status = 'expired' AS expired "
            "FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = ? ORDER BY h.played_at, h.id",
            device,
            user,
        )
        limit = _round_length(ctx, lambda t: sum(p["here"] and p["secs"] >= t for p in plays) >= 3, low=60, high=300)

        def pick(ok: Callable[[int], bool], anywhere: bool = False) -> set[int]:
            return {p["song_id"] for p in plays if ok(p["secs"]) and (anywhere or p["here"]) and not p["expired"]}

        right = _unique(p["song_id"] for p in plays if p["here"] and p["secs"] >= limit)
        if any(p["expired"] for p in plays if p["song_id"] in right):
            raise NoTarget("an expired song")
        _bites(set(right), pick(lambda s: True), pick(lambda s: s >= limit, anywhere=True))
        _in_range(right, 3, 60, "songs")
        name = _new_name(ctx)
        query = self.phrase(ctx, name=name, where=DEVICE_WORDS[device], length=_mmss(limit))
        return _draft(user, query, _playlist_steps(name, right), {"name": name, "device": device, "min_seconds": limit}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        chosen: list[int] = []
        for play in _by_time(api.all_pages("get_listening_history")):
            if (
                api.keep("device", play["device"] == stated["device"])
                and api.compare("min_listen", play["seconds_played"], ">=", stated["min_seconds"])
                and play["song_id"] not in chosen
            ):
                chosen.append(play["song_id"])
        _new_playlist(api, stated["name"], chosen)


class TopListenTimePlaylist(MusicTemplate):
    name = "top_listen_time_playlist"
    conditions = (Condition("since", "boundary"), Condition("top_k", "ranking"))
    clauses = {"name": WRITTEN, "k": "top_k", "since": "since"}
    phrasings = (
        "Create a playlist '{name}' with the {k} songs I've spent the most time on since {date}: add up "
        "the seconds played per song in my listening history.",
        "From {date} on, which {k} songs have I listened to longest in total (sum of seconds played over "
        "my plays)? Put them in a new playlist '{name}'.",
        "Rank the songs in my listening history from {date} onwards by total listening time, adding up "
        "seconds played across plays, and make a playlist called '{name}' from the top {k}.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "listening_history", 40)
        plays = ctx.rows(
            "SELECT h.song_id, substr(h.played_at, 1, 10) AS day, h.seconds_played AS secs, "
            "s.copyright_status = 'expired' AS expired FROM listening_history h JOIN songs s ON s.id = h.song_id "
            "WHERE h.user_id = ? ORDER BY h.played_at, h.id",
            user,
        )
        date = ctx.choice(sorted({p["day"] for p in plays})[-40:-8], "day")
        k = ctx.rng.choice([5, 6, 8, 10])

        def ranked(ok: Callable[[str], bool]) -> list[tuple[int, int]]:
            total: Counter[int] = Counter()
            for p in plays:
                if ok(p["day"]):
                    total[p["song_id"]] += p["secs"]
            return sorted(total.items(), key=lambda t: (-t[1], t[0]))

        best = ranked(lambda d: d >= date)
        if len(best) <= k + 1 or best[k - 1][1] == best[k][1]:
            raise NoTarget("no clean cut")
        right = [s for s, _ in best[:k]]
        if any(p["expired"] for p in plays if p["song_id"] in right):
            raise NoTarget("an expired song in the top")
        _bites(set(right), {s for s, _ in ranked(lambda d: True)[:k]})
        name = _new_name(ctx)
        query = self.phrase(ctx, name=name, k=k, date=pretty_day(date))
        return Draft(user, query, _playlist_steps(name, right), stated={"name": name, "k": k, "since": date}, targets=(("user", user),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        total: Counter[int] = Counter()
        for play in api.all_pages("get_listening_history", narrow={"start_date": stated["since"]}):
            if api.compare("since", play["played_at"][:10], ">=", stated["since"]):
                total[play["song_id"]] += play["seconds_played"]
        ranked = sorted(total.items(), key=lambda t: (-t[1], t[0]))
        chosen = api.top("top_k", ranked, stated["k"], lambda t: t[1])
        _new_playlist(api, stated["name"], [s for s, _ in chosen])


class PromotePlayedFromPlaylist(MusicTemplate):
    name = "promote_played_from_playlist"
    conditions = (Condition("min_plays", "boundary", capability="aggregation_computation"), Condition("since", "boundary"))
    clauses = {"playlist": "min_plays", "n": "min_plays", "since": "since"}
    phrasings = (
        "In my playlist '{playlist}', every song I've played at least {n} times since {date} (count plays in my listening "
        "history from that day on) should become a favourite and leave the playlist.",
        "Move the songs I keep coming back to out of '{playlist}': each one with {n} or more plays in my listening history "
        "on or after {date} is removed from the playlist and goes to my favourites.",
        "Check my listening history from {date} onwards against my playlist '{playlist}'. For songs on it with at least {n} "
        "plays by me in that time: favourite them, and remove them from '{playlist}'.",
    )

    def make(self, ctx: GenContext) -> Draft:
        playlist = _draw_row(
            ctx,
            "playlist",
            "SELECT p.id, p.name, p.owner_id FROM playlists p WHERE p.song_count >= 5 AND (SELECT COUNT(*) FROM listening_history h "
            "JOIN playlist_songs ps ON ps.song_id = h.song_id WHERE ps.playlist_id = p.id AND h.user_id = p.owner_id) >= 8 ORDER BY p.id",
        )
        user = playlist["owner_id"]
        songs = ctx.rows(
            "SELECT ps.song_id AS id, ps.song_id IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) AS fav, "
            "s.copyright_status = 'expired' AS expired FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id "
            "WHERE ps.playlist_id = ? ORDER BY ps.position",
            user,
            playlist["id"],
        )
        on_list = {s["id"] for s in songs}
        plays = [
            p
            for p in ctx.rows(
                "SELECT song_id, substr(played_at, 1, 10) AS day FROM listening_history WHERE user_id = ? ORDER BY played_at, id", user
            )
            if p["song_id"] in on_list
        ]
        date = ctx.choice(sorted({p["day"] for p in plays})[1:], "play day")
        n = ctx.rng.choice([2, 2, 3])

        def pick(count_ok: Callable[[int], bool], day_ok: Callable[[str], bool]) -> list[int]:
            count = Counter(p["song_id"] for p in plays if day_ok(p["day"]))
            return [s["id"] for s in songs if count_ok(count[s["id"]])]

        chosen = set(_selection_that_bites(pick, lambda c: c >= n, lambda d: d >= date))
        right = [s for s in songs if s["id"] in chosen]
        _in_range(right, 1, 30, "songs")
        if any(s["expired"] for s in right):
            raise NoTarget("a chosen song is expired")
        if all(s["fav"] for s in right) and len(right) < 2:
            raise NoTarget("too small a change")
        steps: list[Step] = []
        for s in right:
            if not s["fav"]:  # a favourite already: the product refuses it again
                steps.append(Step("favourite_song", {"song_id": s["id"]}))
            steps.append(Step("remove_song_from_playlist", {"playlist_id": playlist["id"], "song_id": s["id"]}))
        query = self.phrase(ctx, playlist=playlist["name"], n=n, date=pretty_day(date))
        return _draft(user, query, steps, {"playlist": playlist["name"], "n": n, "since": date}, right, ("playlist", playlist["id"]))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        playlist = _my_playlist(api, stated["playlist"])
        tracks = _playlist_tracks(api, playlist["playlist_id"])
        history = api.all_pages("get_listening_history", narrow={"start_date": stated["since"]})
        plays = Counter(p["song_id"] for p in history if api.compare("since", p["played_at"][:10], ">=", stated["since"]))
        favourites = _favourite_ids(api)
        for song in tracks:
            if api.compare("min_plays", plays[song["song_id"]], ">=", stated["n"]):
                if song["song_id"] not in favourites:
                    api.call("favourite_song", song_id=song["song_id"])
                api.call("remove_song_from_playlist", playlist_id=playlist["playlist_id"], song_id=song["song_id"])


class VipSwap(MusicTemplate):
    name = "vip_swap"
    conditions = (Condition("vip_only", "filter"), Condition("licensed", "filter"), Condition("replacement", "ranking"))
    clauses = {"playlist": "vip_only", "vip_only": "vip_only", "licensed": "licensed"}
    phrasings = (
        "My VIP is ending. In my playlist '{playlist}', replace every VIP-only song: remove it and add instead the most "
        "played song (by play count) of the same main artist that is licensed (free to play) and not in the playlist yet.",
        "Swap out the VIP-only tracks of '{playlist}'. For each one, take its main artist's song with the highest play count "
        "among their licensed songs (VIP-only and expired ones don't qualify) that the playlist doesn't hold yet, add it, "
        "and remove the VIP-only track.",
        "I'm dropping VIP, so '{playlist}' needs fixing: every song in it that is VIP-only goes, and for each one the same "
        "main artist's most played licensed song (play count) not already on the playlist comes in.",
    )

    def make(self, ctx: GenContext) -> Draft:
        playlist = _draw_row(
            ctx,
            "playlist",
            "SELECT p.id, p.name, p.owner_id FROM playlists p WHERE EXISTS (SELECT 1 FROM playlist_songs ps JOIN songs s "
            "ON s.id = ps.song_id WHERE ps.playlist_id = p.id AND s.copyright_status = 'vip_only') ORDER BY p.id",
        )
        songs = ctx.rows(
            "SELECT s.id, s.artist_id, s.copyright_status AS status FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id "
            "WHERE ps.playlist_id = ? ORDER BY ps.position",
            playlist["id"],
        )
        present = {s["id"] for s in songs}
        vip = [s for s in songs if s["status"] == "vip_only"]
        if len({s["artist_id"] for s in vip}) != len(vip):
            raise NoTarget("two VIP-only songs of one artist")
        steps: list[Step] = []
        licensed_bites = False
        for s in vip:
            options = ctx.rows(
                "SELECT id, play_count, copyright_status AS status FROM songs WHERE artist_id = ? AND copyright_status != 'expired' "
                "ORDER BY play_count DESC, id DESC",
                s["artist_id"],
            )
            options = [o for o in options if o["id"] not in present]
            free = [o for o in options if o["status"] == "licensed"]
            if len(free) < 2 or free[0]["play_count"] == free[1]["play_count"]:
                raise NoTarget("no clear replacement")
            licensed_bites |= options[0]["id"] != free[0]["id"]
            present.add(free[0]["id"])
            steps += [
                Step("remove_song_from_playlist", {"playlist_id": playlist["id"], "song_id": s["id"]}),
                Step("add_song_to_playlist", {"playlist_id": playlist["id"], "song_id": free[0]["id"]}),
            ]
        if not licensed_bites:
            raise NoTarget("the licensed filter excludes nothing")
        query = self.phrase(ctx, playlist=playlist["name"])
        return _draft(playlist["owner_id"], query, steps, {"playlist": playlist["name"]}, vip, ("playlist", playlist["id"]))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        playlist = _my_playlist(api, stated["playlist"])
        tracks = _playlist_tracks(api, playlist["playlist_id"])
        present = {t["song_id"] for t in tracks}
        for track in tracks:
            if not api.keep("vip_only", track["copyright_status"] == "vip_only"):
                continue
            options = [
                s
                for s in api.all_pages(
                    "search_songs", narrow={"copyright_status": "licensed"}, artist_id=track["artist_id"], sort_by="most_played"
                )
                if s["copyright_status"] != "expired"
                and s["song_id"] not in present
                and api.keep("licensed", s["copyright_status"] == "licensed")
            ]
            ranked = sorted(options, key=lambda s: (-s["play_count"], -s["song_id"]))
            chosen = api.top("replacement", ranked, 1, lambda s: s["play_count"])
            api.call("remove_song_from_playlist", playlist_id=playlist["playlist_id"], song_id=track["song_id"])
            for song in chosen:
                present.add(song["song_id"])
                api.call("add_song_to_playlist", playlist_id=playlist["playlist_id"], song_id=song["song_id"])


class ArtistCollect(MusicTemplate):
    name = "artist_collect"
    conditions = (Condition("since_year", "boundary"), Condition("min_length", "boundary"))
    clauses = {"artist": "since_year", "year": "since_year", "min_duration_sec": "min_length"}
    phrasings = (
        "Follow {artist} and save every release of theirs (album, EP or single) that came out in {year} or later; then "
        "favourite each track on those releases that is at least {length} long.",
        "I'm getting into {artist}. Follow them, add to my saved albums all their releases of any type from {year} onwards, "
        "and on those releases favourite the tracks of {length} or longer.",
        "Three things for {artist}: a follow from me, every release of theirs since the start of {year} saved to my library "
        "(singles and EPs too), and a favourite on each track of those releases lasting at least {length}.",
    )

    def make(self, ctx: GenContext) -> Draft:
        artist = _draw_row(
            ctx,
            "artist",
            "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM albums b WHERE b.artist_id = a.id) >= 3 ORDER BY a.id",
        )
        user = _listener(
            ctx,
            "SELECT id FROM users WHERE id NOT IN (SELECT user_id FROM followed_artists WHERE artist_id = ?) "
            "AND id NOT IN (SELECT s.user_id FROM saved_albums s JOIN albums a ON a.id = s.album_id WHERE a.artist_id = ?) "
            "ORDER BY id",
            artist["id"],
            artist["id"],
        )
        releases = ctx.rows(
            "SELECT id, substr(release_date, 1, 4) AS year FROM albums WHERE artist_id = ? ORDER BY release_date DESC, id", artist["id"]
        )
        years = sorted({r["year"] for r in releases})
        if len(years) < 2:
            raise NoTarget("one release year")
        year = ctx.rng.choice(years[1:])
        tracks = ctx.rows(
            "SELECT s.id, s.album_id, substr(a.release_date, 1, 4) AS year, s.duration_sec AS secs FROM songs s JOIN albums a "
            "ON a.id = s.album_id WHERE a.artist_id = ? AND s.copyright_status != 'expired' AND s.id NOT IN "
            "(SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY a.release_date DESC, a.id, s.track_number",
            artist["id"],
            user,
        )
        lengths = [t["secs"] for t in tracks if t["year"] >= year]
        limit = _round_length(ctx, lambda t: 0 < sum(d >= t for d in lengths) < len(lengths))

        def pick(year_ok: Callable[[str], bool], length_ok: Callable[[int], bool]) -> list[int]:
            return [t["id"] for t in tracks if year_ok(t["year"]) and length_ok(t["secs"])]

        right = _selection_that_bites(pick, lambda y: y >= year, lambda s: s >= limit)
        albums = [r["id"] for r in releases if r["year"] >= year]
        _in_range(albums, 1, 8, "releases")
        steps = [Step("follow_artist", {"artist_id": artist["id"]})]
        for album in albums:
            steps.append(Step("save_album", {"album_id": album}))
            steps += [Step("favourite_song", {"song_id": t["id"]}) for t in tracks if t["album_id"] == album and t["id"] in right]
        query = self.phrase(ctx, artist=artist["name"], year=year, length=_mmss(limit))
        return Draft(
            user,
            query,
            steps,
            stated={"artist": artist["name"], "year": year, "min_duration_sec": limit},
            hidden=[len(right), len(albums)],
            targets=(("artist", artist["id"]),),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        artist = _artist_id(api, stated["artist"])
        favourites = _favourite_ids(api)
        api.call("follow_artist", artist_id=artist)
        for album in api.all_pages("list_artist_albums", artist_id=artist):
            if not api.compare("since_year", album["release_date"][:4], ">=", stated["year"]):
                continue
            api.call("save_album", album_id=album["album_id"])
            for track in api.call("get_album", album_id=album["album_id"])["tracks"]:
                if track["copyright_status"] == "expired" or track["song_id"] in favourites:
                    continue  # the product refuses both anyway: not conditions
                if api.compare("min_length", track["duration_sec"], ">=", stated["min_duration_sec"]):
                    api.call("favourite_song", song_id=track["song_id"])


class CommentRecentFavourites(MusicTemplate):
    name = "comment_recent_favourites"
    conditions = (Condition("since", "boundary"), Condition("followed", "filter"))
    clauses = {"since": "since", "text": WRITTEN, "followed": "followed"}
    phrasings = (
        "Post the comment '{text}' on each song I favourited on or after {date} whose main artist I follow.",
        "For my favourites added on {date} or later: if I follow the song's main artist, leave the comment '{text}' on the song.",
        "Leave '{text}' as a comment on every favourite of mine from {date} onwards, but only on songs "
        "whose main artist is among the artists I follow.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "favourite_songs", 20)
        favourites = ctx.rows(
            "SELECT f.song_id, substr(f.favourited_at, 1, 10) AS day, s.artist_id IN (SELECT artist_id FROM followed_artists "
            "WHERE user_id = ?) AS followed FROM favourite_songs f JOIN songs s ON s.id = f.song_id WHERE f.user_id = ? "
            "ORDER BY f.favourited_at DESC, s.id",
            user,
            user,
        )
        date = ctx.choice(sorted({f["day"] for f in favourites if f["followed"]})[1:-2], "favourite day")

        def pick(day_ok: Callable[[str], bool], any_artist: bool = False) -> list[int]:
            return [f["song_id"] for f in favourites if day_ok(f["day"]) and (any_artist or f["followed"])]

        right = pick(lambda d: d >= date)
        _bites(right, pick(lambda d: True), pick(lambda d: d >= date, any_artist=True))
        _in_range(right, 3, 25, "songs")
        text = ctx.rng.choice(COMMENTS)
        query = self.phrase(ctx, date=pretty_day(date), text=text)
        return _draft(
            user, query, [Step("post_comment", {"song_id": s, "content": text}) for s in right], {"since": date, "text": text}, right
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        followed = {a["artist_id"] for a in api.all_pages("list_followed_artists")}
        for song in api.all_pages("list_favourite_songs"):
            if api.compare("since", song["favourited_at"][:10], ">=", stated["since"]) and api.keep(
                "followed", song["artist_id"] in followed
            ):
                api.call("post_comment", song_id=song["song_id"], content=stated["text"])


class UnsaveUnplayedAlbums(MusicTemplate):
    name = "unsave_unplayed_albums"
    conditions = (Condition("released_before", "boundary"), Condition("never_played", "filter"))
    clauses = {"year": "released_before", "never_played": "never_played"}
    phrasings = (
        "Remove from my saved albums every release that came out before {year} and that I "
        "have never played a track of (over my whole listening history).",
        "Unsave the albums in my library released earlier than {year}, if my listening history has no play of any of their tracks.",
        "Tidy my library: for each saved album released before {year}, check my entire listening history; "
        "if none of its tracks was ever played, unsave it.",
    )

    def make(self, ctx: GenContext) -> Draft:
        user = _listener_with(ctx, "saved_albums", 6)
        saved = ctx.rows(
            "SELECT a.id, substr(a.release_date, 1, 4) AS year, a.id IN (SELECT s.album_id FROM listening_history h JOIN songs s "
            "ON s.id = h.song_id WHERE h.user_id = ?) AS played FROM saved_albums v JOIN albums a ON a.id = v.album_id "
            "WHERE v.user_id = ? ORDER BY v.saved_at DESC, a.id",
            user,
            user,
        )
        year = ctx.choice(sorted({s["year"] for s in saved if not s["played"]})[1:], "year")

        def pick(year_ok: Callable[[str], bool], played_ok: bool = False) -> list[int]:
            return [s["id"] for s in saved if year_ok(s["year"]) and (played_ok or not s["played"])]

        right = pick(lambda y: y < year)
        _bites(right, pick(lambda y: True), pick(lambda y: y < year, played_ok=True))
        _in_range(right, 3, 20, "albums")
        query = self.phrase(ctx, year=year)
        return _draft(user, query, [Step("unsave_album", {"album_id": a}) for a in right], {"year": year}, right)

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        saved = api.all_pages("list_saved_albums")
        played = {p["album_id"] for p in api.all_pages("get_listening_history")}
        for album in saved:
            if api.compare("released_before", album["release_date"][:4], "<", stated["year"]) and api.keep(
                "never_played", album["album_id"] not in played
            ):
                api.call("unsave_album", album_id=album["album_id"])


TEMPLATES = [
    FavouriteArtistSince,
    TopPlayedOfGenre,
    HistoryNotFavourited,
    FollowTopPlayedArtists,
    CleanExpired,
    LatestAlbumPlaylist,
    LongSongsOfGenreYear,
    UnfollowUnplayedArtists,
    MergePlaylists,
    LikeArtistComments,
    SaveAlbumsOfFavourites,
    TopTaggedSongs,
    FavouritesBeforeYear,
    FollowArtistsOfPlaylist,
    ArchiveOldFavourites,
    DeleteOldComments,
    ConsolidateSmallPlaylists,
    RenameAndTrim,
    MostPlayedSinceCompose,
    ThankRepliers,
    FollowArtistsOfFavourites,
    NewAlbumsOfFollowed,
    DevicePlaysPlaylist,
    TopListenTimePlaylist,
    PromotePlayedFromPlaylist,
    VipSwap,
    ArtistCollect,
    CommentRecentFavourites,
    UnsaveUnplayedAlbums,
]

# Scenario turns (ebench/tasks/scenario_generation.py). The entities a later turn may refer to by
# description ("the playlist you just made"): table -> (name column, noun, what making one is called).
SCENARIO_ENTITIES = {"playlists": ("name", "playlist", "made")}
# Chat turns that need no change, filled with the listener's own data (`:actor`) or the catalogue's.
SCENARIO_CHATS = (
    (
        "SELECT DISTINCT s.title AS song, a.name AS artist FROM listening_history h JOIN songs s ON s.id = h.song_id "
        "JOIN artists a ON a.id = s.artist_id WHERE h.user_id = :actor ORDER BY h.played_at DESC LIMIT 25",
        (
            "I can't stop playing '{song}' by {artist}. Do you know it?",
            "'{song}' came on again this morning. {artist} never gets old.",
            "Is '{song}' by {artist} on a full album or was it a single? Just curious, don't change anything.",
        ),
    ),
    (
        "SELECT g.name AS genre, p.name AS parent FROM genres g JOIN genres p ON p.id = g.parent_id ORDER BY g.id",
        (
            "Quick question, nothing to change: how is {genre} different from the rest of {parent}?",
            "I never know whether {genre} counts as {parent}. What do you think?",
        ),
    ),
    (
        "SELECT name AS playlist FROM playlists WHERE owner_id = :actor ORDER BY id",
        (
            "How many songs are in my playlist '{playlist}' right now? Leave it as it is.",
            "Is '{playlist}' public or private at the moment? No need to change it.",
        ),
    ),
    (
        "SELECT a.name AS artist FROM followed_artists f JOIN artists a ON a.id = f.artist_id WHERE f.user_id = :actor "
        "ORDER BY f.followed_at DESC LIMIT 20",
        (
            "Remind me, why did I follow {artist}? What kind of music do they make?",
            "Is {artist} a band or a solo artist? Just wondering.",
        ),
    ),
    (
        "SELECT name AS tag FROM tags WHERE category IN ('activity', 'mood') ORDER BY id",
        (
            "What would you put on for a {tag} evening? Just chatting, no playlist needed.",
            "Do you think {tag} music helps people concentrate?",
        ),
    ),
)
