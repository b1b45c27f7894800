"""Seeded row generators for the music world, one per table.

Generators draw parents from rows that exist (ctx.ids / ctx.rows) and aim for plausible data:
listeners have tastes (favourite genres) that shape their favourites, follows, playlists and
plays; popular songs get more comments. They do not chase every cross-table rule (a comment
dated before its song's release, an aggregate left at zero): the repair rules in checks.py
settle those deterministically after the fill, and the build reports how many they fixed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from random import Random

from ...engine.fill import FillContext, Row
from ...engine.moments import DAY_FMT, TS_FMT, between, clock, recent, ts
from . import vocabulary as V


def _fill_pattern(rng: Random, pattern: str, country: str = "US") -> str:
    return pattern.format(
        adj=rng.choice(V.ADJECTIVES),
        noun=rng.choice(V.NOUNS),
        verb=rng.choice(V.VERBS),
        num=rng.randint(1, 9),
        city=rng.choice(V.CITIES[country]),
    )


def _genre_ids(ctx: FillContext) -> dict[str, int]:
    return {r["name"]: r["id"] for r in ctx.rows("genres", "id, name")}


# -- roots ---------------------------------------------------------------------------------


def genres(ctx: FillContext) -> Iterable[Row]:
    ids: dict[str, int] = {}
    for i, (name, parent, description) in enumerate(V.GENRES, start=1):
        ids[name] = i
        yield {"id": i, "name": name, "parent_id": ids[parent] if parent else None, "description": description}


def tags(ctx: FillContext) -> Iterable[Row]:
    for i, (name, category) in enumerate(V.TAGS, start=1):
        yield {"id": i, "name": name, "category": category}


USER_COUNT = 54


def users(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    usernames: set[str] = set()
    en = ctx.faker["en_US"]
    for i in range(1, USER_COUNT + 1):
        country = rng.choice(V.USER_COUNTRIES)
        locale = V.COUNTRIES[country][0]
        display = ctx.faker[locale].name()
        username = en.user_name()
        while username in usernames:
            username = f"{en.user_name()}{rng.randint(2, 99)}"
        usernames.add(username)
        level = rng.choices([0, 1, 2, 3], weights=[45, 30, 15, 10])[0]
        expires = None
        if level or rng.random() < 0.15:  # some listeners' VIP lapsed long ago
            expires = ts(now + timedelta(days=rng.randint(-200, 400), hours=rng.randint(0, 23)))
        yield {
            "id": i,
            "username": username,
            "display_name": display,
            "email": f"{username}@{rng.choice(['qmail.com', 'example.com', 'mailbox.org', 'inbox.cn'])}",
            "country": country,
            "birth_year": min(2012, max(1950, int(rng.gauss(1995, 9)))),
            "vip_level": level,
            "vip_expires_at": expires,
            "joined_at": ts(between(rng, datetime(2015, 3, 1), now - timedelta(days=20))),
            "bio": rng.choice(V.USER_BIOS),
        }


# -- catalogue -----------------------------------------------------------------------------

ARTIST_COUNT = 320
# Genres' share of artists: pop, rock, hip-hop and electronic dominate a streaming catalogue.
GENRE_WEIGHTS = {
    "Pop": 14,
    "K-Pop": 9,
    "J-Pop": 5,
    "Mandopop": 10,
    "Cantopop": 4,
    "Synthpop": 3,
    "Rock": 7,
    "Indie Rock": 7,
    "Metal": 3,
    "Punk": 2,
    "Hip-Hop": 8,
    "Trap": 3,
    "R&B": 6,
    "Electronic": 4,
    "House": 3,
    "Techno": 2,
    "Lo-fi": 3,
    "Ambient": 2,
    "Jazz": 4,
    "Classical": 3,
    "Folk": 3,
    "Country": 3,
    "Latin": 4,
    "Soundtrack": 2,
}


def artists(ctx: FillContext) -> Iterable[Row]:
    rng = ctx.rng
    genre_ids = _genre_ids(ctx)
    names, weights = zip(*GENRE_WEIGHTS.items())
    countries = list(V.COUNTRIES)
    seen: set[str] = set()
    for i in range(1, ARTIST_COUNT + 1):
        genre = rng.choices(names, weights=weights)[0]
        country = rng.choice(V.GENRE_COUNTRIES.get(genre) or countries)
        locale = V.COUNTRIES[country][0]
        if genre in ("Classical", "Soundtrack") and rng.random() < 0.4:
            kind = "orchestra"
        else:
            kind = rng.choices(["solo", "band", "duo"], weights=[58, 30, 12])[0]
        for _ in range(20):
            if kind == "solo":
                name = ctx.faker[locale].name()
            elif kind == "duo":
                name = f"{ctx.faker[locale].first_name()} & {ctx.faker[locale].first_name()}"
            elif kind == "band":
                name = _fill_pattern(rng, rng.choice(V.BAND_PATTERNS))
            else:
                name = _fill_pattern(rng, rng.choice(V.ORCHESTRA_PATTERNS), country)
            if name not in seen:
                break
        seen.add(name)
        debut = min(2025, 1978 + int(47 * rng.random() ** 0.6))
        type_word = {"solo": "Singer-songwriter", "band": "Band", "duo": "Duo", "orchestra": "Ensemble"}[kind]
        bio = rng.choice(V.BIO_TEMPLATES).format(
            type_word=type_word,
            country=country,
            adj=rng.choice(V.ADJECTIVES).lower(),
            adj2=rng.choice(V.ADJECTIVES).lower(),
            genre=genre,
            genre2=rng.choice(names),
            year=debut,
        )
        yield {
            "id": i,
            "name": name,
            "artist_type": kind,
            "country": country,
            "genre_id": genre_ids[genre],
            "debut_year": debut,
            "bio": bio,
            "is_verified": int(rng.random() < 0.6),
            "follower_count": 0,
        }


ALBUM_TRACKS = {"single": (1, 2), "ep": (3, 6), "album": (7, 14)}


def albums(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    album_id = 0
    for artist in ctx.rows("artists", "id, genre_id, debut_year"):
        count = rng.choices([1, 2, 3, 4, 5, 6], weights=[24, 26, 22, 14, 9, 5])[0]
        for _ in range(count):
            album_id += 1
            kind = rng.choices(list(ALBUM_TRACKS), weights=[40, 22, 38])[0]
            released = between(rng, datetime(artist["debut_year"], 1, 1), now - timedelta(days=1))
            yield {
                "id": album_id,
                "title": _fill_pattern(rng, rng.choice(V.ALBUM_PATTERNS if kind != "single" else V.TITLE_PATTERNS)),
                "artist_id": artist["id"],
                "genre_id": artist["genre_id"],
                "album_type": kind,
                "release_date": released.strftime(DAY_FMT),
                "label": rng.choice(V.LABELS),
                "track_count": 0,
                "total_duration_sec": 0,
            }


def _duration(rng: Random, genre: str) -> int:
    if genre in ("Classical", "Soundtrack"):
        return int(min(1500, max(90, rng.gauss(330, 150))))
    if genre in ("Punk",):
        return int(max(70, rng.gauss(150, 30)))
    return int(min(600, max(75, rng.gauss(215, 40))))


def _lyrics(rng: Random) -> str:
    lines = rng.sample(V.LYRIC_LINES, 2)
    return " / ".join(line.format(adj=rng.choice(V.ADJECTIVES).lower(), noun=rng.choice(V.NOUNS).lower()) for line in lines)


def songs(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    genre_names = {r["id"]: r["name"] for r in ctx.rows("genres", "id, name")}
    artist_country = {r["id"]: r["country"] for r in ctx.rows("artists", "id, country")}
    song_id = 0
    for album in ctx.rows("albums", "id, title, artist_id, genre_id, album_type, release_date"):
        genre = genre_names[album["genre_id"]]
        low, high = ALBUM_TRACKS[album["album_type"]]
        released = datetime.strptime(album["release_date"], DAY_FMT)
        for track in range(1, rng.randint(low, high) + 1):
            song_id += 1
            if track == 1 and album["album_type"] == "single":
                title = album["title"]
            else:
                title = _fill_pattern(rng, rng.choice(V.TITLE_PATTERNS))
            instrumental = genre in V.INSTRUMENTAL_GENRES and rng.random() < 0.8
            day = released
            roll = rng.random()
            if roll < 0.06:  # a bonus track added to the album later
                day = released + timedelta(days=rng.randint(30, 700))
            elif roll < 0.10:  # pre-release singles: the repair rules date them with the album
                day = released - timedelta(days=rng.randint(5, 60))
            age_years = max(0.1, (now - released).days / 365)
            plays = int(math.exp(rng.gauss(10.5, 1.8)) * min(3.0, 0.6 + age_years / 4))
            yield {
                "id": song_id,
                "title": title,
                "album_id": album["id"],
                "artist_id": album["artist_id"],
                "genre_id": album["genre_id"],
                "track_number": track,
                "duration_sec": _duration(rng, genre),
                "release_date": min(day, now).strftime(DAY_FMT),
                "language": "Instrumental" if instrumental else V.COUNTRIES[artist_country[album["artist_id"]]][1],
                "lyrics_excerpt": "" if instrumental else _lyrics(rng),
                "copyright_status": rng.choices(["licensed", "vip_only", "expired"], weights=[82, 12, 6])[0],
                "is_explicit": int(rng.random() < (0.4 if genre in ("Hip-Hop", "Trap") else 0.04)),
                "play_count": plays,
                "favourite_count": 0,
            }


def song_artists(ctx: FillContext) -> Iterable[Row]:
    rng = ctx.rng
    artist_ids = ctx.ids("artists")
    song_rows = ctx.rows("songs", "id, artist_id")
    for song in rng.sample(song_rows, 620):
        others = rng.sample(artist_ids, rng.choice([1, 1, 1, 2]))
        for artist in others:
            if artist == song["artist_id"]:
                continue
            role = rng.choices(["featured", "remixer", "composer"], weights=[75, 15, 10])[0]
            yield {"song_id": song["id"], "artist_id": artist, "role": role}


def song_tags(ctx: FillContext) -> Iterable[Row]:
    rng = ctx.rng
    tag_ids = {r["name"]: r["id"] for r in ctx.rows("tags", "id, name")}
    by_category: dict[str, list[int]] = defaultdict(list)
    for row in ctx.rows("tags", "id, category"):
        by_category[row["category"]].append(row["id"])
    for song in ctx.rows("songs", "id, release_date, language"):
        chosen: set[int] = set()
        year = int(song["release_date"][:4])
        if rng.random() < 0.3:
            decade = "80s" if year < 1990 else "90s" if year < 2000 else "2000s" if year < 2010 else "2010s" if year < 2020 else "2020s"
            chosen.add(tag_ids[decade])
        if song["language"] == "Instrumental":
            chosen.add(tag_ids["instrumental"])
        for _ in range(rng.choices([0, 1, 2], weights=[40, 48, 12])[0]):
            chosen.add(rng.choice(by_category["mood"] + by_category["activity"]))
        if rng.random() < 0.12:
            chosen.add(rng.choice(by_category["sound"]))
        for tag in sorted(chosen):
            yield {"song_id": song["id"], "tag_id": tag}


# -- listeners' libraries ------------------------------------------------------------------


def _tastes(ctx: FillContext) -> dict[int, list[int]]:
    """Each listener's 2-4 favourite genres, drawn from a stream of its own so every
    library table sees the same tastes."""
    rng = Random(ctx.seed * 7919 + 17)
    genre_ids = ctx.ids("genres")
    return {uid: rng.sample(genre_ids, rng.randint(2, 4)) for uid in ctx.ids("users")}


def _by_genre(ctx: FillContext, table: str) -> dict[int, list[int]]:
    """Ids of `table` (songs, artists, albums) grouped by genre."""
    by_genre: dict[int, list[int]] = defaultdict(list)
    for row in ctx.rows(table, "id, genre_id"):
        by_genre[row["genre_id"]].append(row["id"])
    return by_genre


def _pick(rng: Random, taste: list[int], by_genre: dict[int, list[int]], everything: list[int], n: int, bias: float) -> list[int]:
    """Up to `n` distinct ids, each drawn from the listener's taste with probability `bias`."""
    picked: dict[int, None] = {}
    tries = 0
    while len(picked) < n and tries < n * 20:
        tries += 1
        pool = by_genre.get(rng.choice(taste)) if rng.random() < bias else None
        picked[rng.choice(pool or everything)] = None
    return list(picked)


def _joined(ctx: FillContext) -> dict[int, datetime]:
    return {r["id"]: datetime.strptime(r["joined_at"], TS_FMT) for r in ctx.rows("users", "id, joined_at")}


def playlists(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    pid = 0
    for uid in ctx.ids("users"):
        for name in rng.sample(V.PLAYLIST_NAMES, rng.choices([0, 1, 2, 3, 4, 5, 6, 8], weights=[3, 10, 14, 18, 18, 14, 12, 11])[0]):
            pid += 1
            created = between(rng, datetime(2016, 1, 1), now - timedelta(days=2))  # repair dates it after joining
            yield {
                "id": pid,
                "owner_id": uid,
                "name": name,
                "description": rng.choice(V.PLAYLIST_DESCRIPTIONS),
                "is_public": int(rng.random() < 0.7),
                "created_at": ts(created),
                "updated_at": ts(created),
                "song_count": 0,
                "total_duration_sec": 0,
            }


def playlist_songs(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    tastes, by_genre, all_songs = _tastes(ctx), _by_genre(ctx, "songs"), ctx.ids("songs")
    for playlist in ctx.rows("playlists", "id, owner_id, created_at"):
        created = datetime.strptime(playlist["created_at"], TS_FMT)
        n = max(3, min(60, int(rng.gauss(16, 8))))
        for position, song in enumerate(_pick(rng, tastes[playlist["owner_id"]], by_genre, all_songs, n, 0.75), start=1):
            yield {"playlist_id": playlist["id"], "song_id": song, "position": position, "added_at": ts(between(rng, created, now))}


def _library(
    ctx: FillContext,
    items: str,
    key: str,
    stamp: str,
    size: tuple[int, float, float],
    bias: float,
    when: Callable[[Random, datetime, datetime], datetime],
) -> Iterator[Row]:
    """Rows (user, item, moment) of a listener's library: about size=(minimum, mean, sd) items
    per listener, a share `bias` of them from the listener's favourite genres."""
    rng, now = ctx.rng, clock(ctx)
    tastes, by_genre, everything = _tastes(ctx), _by_genre(ctx, items), ctx.ids(items)
    minimum, mean, sd = size
    for uid, joined in _joined(ctx).items():
        n = max(minimum, int(rng.gauss(mean, sd)))
        for item in _pick(rng, tastes[uid], by_genre, everything, n, bias):
            yield {"user_id": uid, key: item, stamp: ts(when(rng, joined, now))}


def favourite_songs(ctx: FillContext) -> Iterable[Row]:
    # Favourites lean recent: 30% within the last 120 days.
    return _library(ctx, "songs", "song_id", "favourited_at", (4, 42, 20), 0.7, lambda rng, joined, now: recent(rng, now, joined, 120, 0.3))


def followed_artists(ctx: FillContext) -> Iterable[Row]:
    return _library(ctx, "artists", "artist_id", "followed_at", (2, 14, 6), 0.65, lambda rng, joined, now: between(rng, joined, now))


def saved_albums(ctx: FillContext) -> Iterable[Row]:
    return _library(ctx, "albums", "album_id", "saved_at", (1, 10, 4), 0.7, lambda rng, joined, now: between(rng, joined, now))


def listening_history(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    tastes, by_genre, all_songs = _tastes(ctx), _by_genre(ctx, "songs"), ctx.ids("songs")
    favourites: dict[int, list[int]] = defaultdict(list)
    for row in ctx.rows("favourite_songs", "user_id, song_id"):
        favourites[row["user_id"]].append(row["song_id"])
    durations = {r["id"]: r["duration_sec"] for r in ctx.rows("songs", "id, duration_sec")}
    sources = ["search", "playlist", "album", "radio", "recommendation", "artist_page"]
    devices = ["mobile", "desktop", "web", "car", "smart_speaker"]
    plays = []
    for uid, joined in _joined(ctx).items():
        for _ in range(max(10, int(rng.gauss(78, 30)))):
            if favourites[uid] and rng.random() < 0.45:
                song = rng.choice(favourites[uid])
            else:
                song = _pick(rng, tastes[uid], by_genre, all_songs, 1, 0.7)[0]
            full = durations[song]
            seconds = full if rng.random() < 0.7 else rng.randint(5, full)
            plays.append((recent(rng, now, joined, 60, 0.55), uid, song, seconds))
    plays.sort(key=lambda p: (p[0], p[1], p[2]))  # ids follow time, as in a real log
    for i, (moment, uid, song, seconds) in enumerate(plays, start=1):
        yield {
            "id": i,
            "user_id": uid,
            "song_id": song,
            "played_at": ts(moment),
            "seconds_played": seconds,
            "source": rng.choices(sources, weights=[20, 30, 15, 10, 20, 5])[0],
            "device": rng.choices(devices, weights=[55, 20, 10, 10, 5])[0],
        }


def comments(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    user_ids = ctx.ids("users")
    song_rows = ctx.rows("songs", "id, play_count")
    popular = sorted(song_rows, key=lambda r: (-r["play_count"], r["id"]))[:900]
    cid = 0
    top_level: list[tuple[int, int, datetime]] = []
    for _ in range(1250):
        cid += 1
        song = rng.choice(popular)["id"] if rng.random() < 0.8 else rng.choice(song_rows)["id"]
        created = recent(rng, now, datetime(2018, 1, 1), 90, 0.35)
        content = rng.choice(V.COMMENT_TEMPLATES).format(
            time=f"{rng.randint(1, 3)}:{rng.randint(0, 59):02d}", year=now.year, adj=rng.choice(V.ADJECTIVES).lower()
        )
        top_level.append((cid, song, created))
        yield {
            "id": cid,
            "song_id": song,
            "user_id": rng.choice(user_ids),
            "parent_id": None,
            "content": content,
            "created_at": ts(created),
            "like_count": 0,
        }
    for _ in range(320):
        cid += 1
        parent, song, parent_created = rng.choice(top_level)
        if rng.random() < 0.05:  # a reply filed under the wrong song: the repair rules fix it
            song = rng.choice(song_rows)["id"]
        yield {
            "id": cid,
            "song_id": song,
            "user_id": rng.choice(user_ids),
            "parent_id": parent,
            "content": rng.choice(V.REPLY_TEMPLATES),
            "created_at": ts(between(rng, parent_created, now)),
            "like_count": 0,
        }


def comment_likes(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    user_ids = ctx.ids("users")
    comment_rows = ctx.rows("comments", "id, created_at")
    seen: set[tuple[int, int]] = set()
    while len(seen) < 1300:
        comment = rng.choice(comment_rows)
        user = rng.choice(user_ids)
        if (user, comment["id"]) in seen:
            continue
        seen.add((user, comment["id"]))
        created = datetime.strptime(comment["created_at"], TS_FMT)
        yield {"user_id": user, "comment_id": comment["id"], "liked_at": ts(between(rng, created, now))}


GENERATORS = {
    "genres": genres,
    "tags": tags,
    "users": users,
    "artists": artists,
    "albums": albums,
    "songs": songs,
    "song_artists": song_artists,
    "song_tags": song_tags,
    "playlists": playlists,
    "playlist_songs": playlist_songs,
    "favourite_songs": favourite_songs,
    "followed_artists": followed_artists,
    "saved_albums": saved_albums,
    "listening_history": listening_history,
    "comments": comments,
    "comment_likes": comment_likes,
}
