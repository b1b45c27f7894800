"""Task templates of the music platform.

Each template inspects the world with SQL, picks a listener and targets, and writes the
reference solution with the public tools. Names a person would type (a new playlist's name, a
date, a threshold) are the user's and appear in the query; what the data decides (which songs,
how many) does not.
"""

from __future__ import annotations

from typing import Any

from ..generation import Draft, GenContext, NoTarget, Template
from ..spec import Step
from .common import bounded, days_ago, no_tie_at, pretty_day, ref, steps

PLAYLIST_NAMES = [
    "Late Night Drive", "Sunday Reset", "Focus Mode", "Gym Rotation", "Rainy Window", "Road Trip 2026",
    "Kitchen Disco", "Slow Mornings", "Deep Work", "Throwbacks", "Weekend Warmup", "Commute Mix",
    "Study Session", "Dinner Party", "Summer Leftovers", "Winter Coat", "Quiet Hours", "Party Starters",
    "Heartbreak Hotel", "Fresh Finds", "Long Run", "Sunset Terrace", "Coffee Shop", "Night Shift",
]
DESCRIPTIONS = ["", "", "made by my assistant", "for the car", "keep this one tidy"]


def _name(ctx: GenContext) -> str:
    taken = set(ctx.column("SELECT name FROM playlists"))
    free = [n for n in PLAYLIST_NAMES if n not in taken]
    return ctx.choice(free, "free playlist name")


def playlist_with(name: str, song_ids: list[int], *, is_public: bool = True, description: str = "") -> list[Step]:
    """Create a playlist, then add songs to it (the new id comes from the first step's result)."""
    args: dict[str, Any] = {"name": name}
    if not is_public:
        args["is_public"] = False
    if description:
        args["description"] = description
    return [Step("create_playlist", args)] + [
        Step("add_song_to_playlist", {"playlist_id": ref(0, "playlist_id"), "song_id": s}) for s in song_ids
    ]


def _listener(ctx: GenContext, sql: str, *params: Any) -> int:
    return ctx.choice(ctx.column(sql, *params), "listener")


class HistoryNotFavourited(Template):
    name = "history_not_favourited"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "cross_step_dependency")
    phrasings = (
        "Make a playlist called '{name}' with every song I played between {start} and {end} that isn't in my favourites yet.",
        "I want a new playlist named '{name}': all the songs from my listening history from {start} to {end} (both days included), "
        "minus anything I've already favourited. Each song only once.",
        "Go through what I listened to from {start} through {end} and put every song I haven't favourited into a new playlist, '{name}'.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT user_id FROM listening_history GROUP BY user_id HAVING COUNT(*) >= 40")
        span = ctx.rng.choice([7, 10, 14, 21, 30])
        end_back = ctx.rng.choice([0, 1, 3, 7, 15])
        start, end = days_ago(ctx, end_back + span), days_ago(ctx, end_back)
        songs = ctx.column(
            "SELECT h.song_id FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = ? "
            "AND h.played_at >= ? AND h.played_at < date(?, '+1 day') AND s.copyright_status != 'expired' "
            "AND h.song_id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) "
            "GROUP BY h.song_id ORDER BY MAX(h.played_at), h.song_id", user, start, end, user)
        bounded(songs, 3, 90, "songs")
        name = _name(ctx)
        query = self.phrase(ctx, name=name, start=pretty_day(start), end=pretty_day(end))
        if ctx.value("SELECT COUNT(*) FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = ? "
                     "AND s.copyright_status = 'expired' AND h.played_at >= ? AND h.played_at < date(?, '+1 day')", user, start, end):
            query += " Skip songs that can't be added any more."
        return Draft(user, query, playlist_with(name, songs), hidden=[len(songs)], params={"start": start, "end": end})


class FavouriteArtistSince(Template):
    name = "favourite_artist_since"
    capabilities = ("multi_condition_filtering", "precise_boundary_judgement", "complete_data_acquisition")
    phrasings = (
        "Favourite every song by {artist} released on or after {date} that I haven't favourited yet (skip the ones whose licence expired).",
        "I'm into {artist} lately. Add all their songs from {date} onwards (that day included) to my favourites, "
        "leaving out anything unavailable.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        artist = ctx.choice(ctx.rows(
            "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM songs s WHERE s.artist_id = a.id) BETWEEN 8 AND 60 "
            "AND (SELECT COUNT(*) FROM artists b WHERE b.name = a.name) = 1"), "artist")
        dates = sorted(set(ctx.column("SELECT release_date FROM songs WHERE artist_id = ?", artist["id"])))
        if len(dates) < 3:
            raise NoTarget("few release dates")
        # The boundary is a real release date, so "on or after" matters.
        cut = ctx.rng.choice(dates[len(dates) // 4: -1] or dates[:1])
        user = _listener(ctx, "SELECT id FROM users")
        songs = ctx.column(
            "SELECT id FROM songs WHERE artist_id = ? AND release_date >= ? AND copyright_status != 'expired' "
            "AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY id", artist["id"], cut, user)
        bounded(songs, 2, 60, "songs")
        query = self.phrase(ctx, artist=artist["name"], date=pretty_day(cut))
        return Draft(user, query, [Step("favourite_song", {"song_id": s}) for s in songs], hidden=[len(songs)],
                     params={"artist_id": artist["id"], "since": cut})


class FollowTopPlayedArtists(Template):
    name = "follow_top_played_artists"
    capabilities = ("aggregation_computation", "complete_data_acquisition", "cross_step_dependency")
    phrasings = (
        "Check my whole listening history and follow the {k} artists I've played the most (by number of plays) among the ones I don't follow yet.",
        "Count my plays per artist over my entire history. Of the artists I'm not following, follow the top {k}.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT user_id FROM listening_history GROUP BY user_id HAVING COUNT(*) >= 60")
        k = ctx.rng.choice([3, 4, 5, 6])
        ranked = [(r["artist_id"], r["plays"]) for r in ctx.rows(
            "SELECT s.artist_id, COUNT(*) AS plays FROM listening_history h JOIN songs s ON s.id = h.song_id "
            "WHERE h.user_id = ? AND s.artist_id NOT IN (SELECT artist_id FROM followed_artists WHERE user_id = ?) "
            "GROUP BY s.artist_id ORDER BY plays DESC, s.artist_id", user, user)]
        artists = no_tie_at(ranked, k)
        return Draft(user, self.phrase(ctx, k=k), [Step("follow_artist", {"artist_id": a}) for a in artists],
                     params={"k": k})


class CleanExpiredFromPlaylists(Template):
    name = "clean_expired_from_playlists"
    capabilities = ("complete_data_acquisition", "cross_entity_cascade")
    phrasings = (
        "Some songs in my playlists can't be played any more because their licence expired. Remove all of them from every playlist of mine.",
        "Clean up my playlists: take out every song whose copyright has expired, in all of my playlists.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT p.owner_id FROM playlist_songs ps JOIN playlists p ON p.id = ps.playlist_id "
                              "JOIN songs s ON s.id = ps.song_id WHERE s.copyright_status = 'expired' GROUP BY p.owner_id HAVING COUNT(*) >= 2")
        pairs = ctx.rows("SELECT ps.playlist_id, ps.song_id FROM playlist_songs ps JOIN playlists p ON p.id = ps.playlist_id "
                         "JOIN songs s ON s.id = ps.song_id WHERE p.owner_id = ? AND s.copyright_status = 'expired' "
                         "ORDER BY ps.playlist_id, ps.song_id", user)
        bounded(pairs, 2, 80, "expired songs in playlists")
        return Draft(user, self.phrase(ctx), [Step("remove_song_from_playlist", p) for p in pairs], hidden=[len(pairs)])


class LatestAlbumPlaylist(Template):
    name = "latest_album_playlist"
    capabilities = ("cross_step_dependency", "aggregation_computation", "cross_entity_cascade")
    phrasings = (
        "Find {artist}'s most recent album (a full album, not a single or EP), save it to my library, and make a private playlist "
        "'{name}' with all of its playable tracks.",
        "Save the newest full-length album by {artist} and also put its tracks (the available ones) into a new private playlist called '{name}'.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        artist = ctx.choice(ctx.rows(
            "SELECT a.id, a.name FROM artists a WHERE (SELECT COUNT(*) FROM albums b WHERE b.artist_id = a.id AND b.album_type = 'album') >= 2 "
            "AND (SELECT COUNT(*) FROM artists c WHERE c.name = a.name) = 1"), "artist")
        albums = ctx.rows("SELECT id, release_date FROM albums WHERE artist_id = ? AND album_type = 'album' "
                          "ORDER BY release_date DESC, id DESC", artist["id"])
        if len(albums) > 1 and albums[0]["release_date"] == albums[1]["release_date"]:
            raise NoTarget("two latest albums")
        album = albums[0]["id"]
        user = _listener(ctx, "SELECT id FROM users WHERE id NOT IN (SELECT user_id FROM saved_albums WHERE album_id = ?)", album)
        tracks = ctx.column("SELECT id FROM songs WHERE album_id = ? AND copyright_status != 'expired' ORDER BY track_number, id", album)
        bounded(tracks, 3, 40, "tracks")
        name = _name(ctx)
        return Draft(user, self.phrase(ctx, artist=artist["name"], name=name),
                     steps(Step("save_album", {"album_id": album}), [
                         Step(s.tool, {**s.args, "playlist_id": ref(1, "playlist_id")} if "playlist_id" in s.args else s.args)
                         for s in playlist_with(name, tracks, is_public=False)]),
                     hidden=[len(tracks)], params={"album_id": album})


class LongSongsOfGenreYear(Template):
    name = "long_songs_of_genre_year"
    capabilities = ("precise_boundary_judgement", "multi_condition_filtering", "complete_data_acquisition")
    phrasings = (
        "Favourite every {genre} song released in {year} that runs {length} or longer, unless it's already a favourite or unavailable.",
        "I like long {genre} tracks. From the ones released in {year}, favourite all that are at least {length} long "
        "(exactly {length} counts). Skip expired ones and ones I already favourited.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        genre = ctx.choice(ctx.rows("SELECT g.id, g.name FROM genres g WHERE (SELECT COUNT(*) FROM songs s WHERE s.genre_id = g.id) >= 60"), "genre")
        year = ctx.choice(ctx.column("SELECT substr(release_date, 1, 4) AS y FROM songs WHERE genre_id = ? GROUP BY y HAVING COUNT(*) >= 12",
                                     genre["id"]), "year")
        durations = sorted(ctx.column("SELECT duration_sec FROM songs WHERE genre_id = ? AND release_date LIKE ?", genre["id"], f"{year}%"))
        # The threshold is one song's exact length: "at least" must include it.
        threshold = ctx.rng.choice(durations[len(durations) // 2: -2] or durations)
        user = _listener(ctx, "SELECT id FROM users")
        songs = ctx.column(
            "SELECT id FROM songs WHERE genre_id = ? AND release_date LIKE ? AND duration_sec >= ? AND copyright_status != 'expired' "
            "AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY id", genre["id"], f"{year}%", threshold, user)
        bounded(songs, 2, 50, "songs")
        length = f"{threshold // 60}:{threshold % 60:02d}"
        return Draft(user, self.phrase(ctx, genre=genre["name"], year=year, length=length),
                     [Step("favourite_song", {"song_id": s}) for s in songs], hidden=[len(songs)],
                     params={"genre": genre["name"], "year": year, "min_duration_sec": threshold})


class UnfollowUnplayedArtists(Template):
    name = "unfollow_unplayed_artists"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "cross_entity_cascade")
    phrasings = (
        "Unfollow every artist I follow but have never actually listened to (no plays of any of their songs in my history).",
        "Tidy up who I follow: if I've never played a single song by an artist I follow, unfollow them.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT user_id FROM followed_artists GROUP BY user_id HAVING COUNT(*) >= 5")
        artists = ctx.column(
            "SELECT artist_id FROM followed_artists WHERE user_id = ? AND artist_id NOT IN "
            "(SELECT s.artist_id FROM listening_history h JOIN songs s ON s.id = h.song_id WHERE h.user_id = ?) ORDER BY artist_id", user, user)
        bounded(artists, 2, 60, "artists")
        return Draft(user, self.phrase(ctx), [Step("unfollow_artist", {"artist_id": a}) for a in artists], hidden=[len(artists)])


class MergePlaylists(Template):
    name = "merge_playlists"
    capabilities = ("cross_step_dependency", "cross_entity_cascade", "complete_data_acquisition")
    phrasings = (
        "Merge my playlists '{a}' and '{b}' into one new playlist called '{name}' (every song once, the playable ones), then delete the two old playlists.",
        "I want '{a}' and '{b}' combined: create '{name}' with all songs from both (no duplicates, skip expired ones) and remove the originals.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT owner_id FROM playlists GROUP BY owner_id HAVING COUNT(*) >= 2")
        mine = ctx.rows("SELECT id, name FROM playlists WHERE owner_id = ? AND song_count >= 3 ORDER BY id", user)
        if len(mine) < 2:
            raise NoTarget("two playlists")
        a, b = ctx.rng.sample(mine, 2)
        songs = ctx.column(
            "SELECT ps.song_id FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id IN (?, ?) "
            "AND s.copyright_status != 'expired' GROUP BY ps.song_id ORDER BY MIN(ps.playlist_id = ?) DESC, MIN(ps.position), ps.song_id",
            a["id"], b["id"], a["id"])
        bounded(songs, 3, 200, "songs")
        name = _name(ctx)
        return Draft(user, self.phrase(ctx, a=a["name"], b=b["name"], name=name),
                     steps(playlist_with(name, songs), Step("delete_playlist", {"playlist_id": a["id"]}),
                           Step("delete_playlist", {"playlist_id": b["id"]})),
                     hidden=[len(songs)], params={"a": a["id"], "b": b["id"]})


class LikePopularComments(Template):
    name = "like_popular_comments"
    capabilities = ("multi_condition_filtering", "precise_boundary_judgement")
    phrasings = (
        "On the song '{title}' by {artist}, like every comment (replies too) that already has at least {n} likes, if I haven't liked it.",
        "Open the comments of {artist}'s '{title}' and like all comments with {n} or more likes that I haven't liked yet.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        song = ctx.choice(ctx.rows(
            "SELECT s.id, s.title, a.name AS artist FROM songs s JOIN artists a ON a.id = s.artist_id "
            "WHERE (SELECT COUNT(*) FROM comments c WHERE c.song_id = s.id) >= 8 "
            "AND (SELECT COUNT(*) FROM songs t WHERE t.title = s.title AND t.artist_id = s.artist_id) = 1"), "song")
        likes = sorted(ctx.column("SELECT like_count FROM comments WHERE song_id = ?", song["id"]))
        n = ctx.rng.choice(likes[len(likes) // 3: -1] or likes)  # a real like count: "at least" includes it
        if n < 1:
            raise NoTarget("threshold 0")
        user = _listener(ctx, "SELECT id FROM users")
        comments = ctx.column(
            "SELECT id FROM comments WHERE song_id = ? AND like_count >= ? AND user_id != ? AND id NOT IN "
            "(SELECT comment_id FROM comment_likes WHERE user_id = ?) ORDER BY id", song["id"], n, user, user)
        bounded(comments, 2, 40, "comments")
        query = self.phrase(ctx, title=song["title"], artist=song["artist"], n=n)
        if ctx.value("SELECT COUNT(*) FROM comments WHERE song_id = ? AND user_id = ? AND like_count >= ?", song["id"], user, n):
            query += " Leave my own comments alone."
        return Draft(user, query, [Step("like_comment", {"comment_id": c}) for c in comments], hidden=[len(comments)],
                     params={"song_id": song["id"], "min_likes": n})


class SaveAlbumsOfFavourites(Template):
    name = "save_albums_of_favourites"
    capabilities = ("aggregation_computation", "complete_data_acquisition", "multi_condition_filtering")
    phrasings = (
        "Save every release (album, EP or single) that has at least {k} of my favourite songs on it, unless it's already in my saved albums.",
        "Look through my favourites and save to my library each release (album, EP or single alike) from which I've favourited {k} or more songs.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT user_id FROM favourite_songs GROUP BY user_id HAVING COUNT(*) >= 40")
        k = ctx.rng.choice([2, 2, 3])
        albums = ctx.column(
            "SELECT s.album_id FROM favourite_songs f JOIN songs s ON s.id = f.song_id WHERE f.user_id = ? "
            "AND s.album_id NOT IN (SELECT album_id FROM saved_albums WHERE user_id = ?) GROUP BY s.album_id "
            "HAVING COUNT(*) >= ? ORDER BY s.album_id", user, user, k)
        bounded(albums, 2, 60, "albums")
        return Draft(user, self.phrase(ctx, k=k), [Step("save_album", {"album_id": a}) for a in albums],
                     hidden=[len(albums)], params={"k": k})


class TopTaggedSongs(Template):
    name = "top_tagged_songs"
    capabilities = ("aggregation_computation", "multi_condition_filtering", "cross_step_dependency")
    phrasings = (
        "Create a public playlist '{name}' with the {n} most played songs in {language} tagged '{tag}', counting only songs that can "
        "still be played (licence not expired).",
        "Build me '{name}': among the {language} songs with the '{tag}' tag whose licence hasn't expired, the top {n} by play count.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        combo = ctx.choice(ctx.rows(
            "SELECT t.id AS tag_id, t.name AS tag, s.language FROM song_tags st JOIN tags t ON t.id = st.tag_id "
            "JOIN songs s ON s.id = st.song_id WHERE s.copyright_status != 'expired' GROUP BY t.id, s.language HAVING COUNT(*) >= 25"), "tag")
        n = ctx.rng.choice([10, 12, 15, 20, 25])
        ranked = [(r["id"], r["play_count"]) for r in ctx.rows(
            "SELECT s.id, s.play_count FROM songs s JOIN song_tags st ON st.song_id = s.id WHERE st.tag_id = ? AND s.language = ? "
            "AND s.copyright_status != 'expired' ORDER BY s.play_count DESC, s.id", combo["tag_id"], combo["language"])]
        songs = no_tie_at(ranked, n)
        user = _listener(ctx, "SELECT id FROM users")
        name = _name(ctx)
        return Draft(user, self.phrase(ctx, name=name, n=n, tag=combo["tag"], language=combo["language"]),
                     playlist_with(name, songs), params={"tag": combo["tag"], "language": combo["language"], "n": n})


class FavouritesBeforeYear(Template):
    name = "favourites_before_year"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "precise_boundary_judgement")
    phrasings = (
        "Put all of my favourite songs released before {year} into a new playlist called '{name}' (so {year} itself is not included). Skip unplayable ones.",
        "Make '{name}', a playlist of my favourites that came out before January 1, {year}, leaving out songs with an expired licence.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT user_id FROM favourite_songs GROUP BY user_id HAVING COUNT(*) >= 30")
        years = sorted(set(ctx.column("SELECT substr(s.release_date, 1, 4) FROM favourite_songs f JOIN songs s ON s.id = f.song_id "
                                      "WHERE f.user_id = ?", user)))
        year = ctx.rng.choice(years[len(years) // 3:] or years)
        songs = ctx.column(
            "SELECT s.id FROM favourite_songs f JOIN songs s ON s.id = f.song_id WHERE f.user_id = ? AND s.release_date < ? "
            "AND s.copyright_status != 'expired' ORDER BY f.favourited_at, s.id", user, f"{year}-01-01")
        bounded(songs, 3, 200, "songs")
        name = _name(ctx)
        return Draft(user, self.phrase(ctx, year=year, name=name), playlist_with(name, songs), hidden=[len(songs)],
                     params={"year": year})


class FollowArtistsOfPlaylist(Template):
    name = "follow_artists_of_playlist"
    capabilities = ("cross_entity_cascade", "cross_step_dependency", "complete_data_acquisition")
    phrasings = (
        "For my playlist '{playlist}': follow every artist (main artist of each song) I don't follow yet, then make the playlist private.",
        "Follow all the main artists of the songs in my playlist '{playlist}' that I'm not already following, and switch that playlist to private.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        playlist = ctx.choice(ctx.rows(
            "SELECT p.id, p.name, p.owner_id FROM playlists p WHERE p.is_public = 1 AND p.song_count BETWEEN 4 AND 80 "
            "AND (SELECT COUNT(*) FROM playlists q WHERE q.owner_id = p.owner_id AND q.name = p.name) = 1"), "playlist")
        user = playlist["owner_id"]
        artists = ctx.column(
            "SELECT DISTINCT s.artist_id FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id = ? "
            "AND s.artist_id NOT IN (SELECT artist_id FROM followed_artists WHERE user_id = ?) ORDER BY s.artist_id", playlist["id"], user)
        bounded(artists, 2, 60, "artists")
        return Draft(user, self.phrase(ctx, playlist=playlist["name"]),
                     steps([Step("follow_artist", {"artist_id": a}) for a in artists],
                           Step("update_playlist", {"playlist_id": playlist["id"], "is_public": False})),
                     hidden=[len(artists)], params={"playlist_id": playlist["id"]})


class ArchiveOldFavourites(Template):
    name = "archive_old_favourites"
    capabilities = ("cross_step_dependency", "cross_entity_cascade", "precise_boundary_judgement", "complete_data_acquisition")
    phrasings = (
        "My favourites are a mess. Move every song I favourited before {date} into a new private playlist called '{name}' "
        "and unfavourite those songs. Songs that can't be added to a playlist any more just get unfavourited.",
        "Archive my old favourites: everything I favourited before {date} (not on that day) goes into a new private playlist "
        "'{name}' and comes out of my favourites. Unplayable songs are only unfavourited.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        user = _listener(ctx, "SELECT user_id FROM favourite_songs GROUP BY user_id HAVING COUNT(*) >= 30")
        days = sorted(set(ctx.column("SELECT substr(favourited_at, 1, 10) FROM favourite_songs WHERE user_id = ?", user)))
        cut = ctx.rng.choice(days[len(days) // 4: -3] or days)
        old = ctx.rows("SELECT f.song_id, s.copyright_status FROM favourite_songs f JOIN songs s ON s.id = f.song_id "
                       "WHERE f.user_id = ? AND f.favourited_at < ? ORDER BY f.favourited_at, f.song_id", user, cut)
        bounded(old, 3, 120, "favourites")
        name = _name(ctx)
        playable = [r["song_id"] for r in old if r["copyright_status"] != "expired"]
        return Draft(user, self.phrase(ctx, date=pretty_day(cut), name=name),
                     steps(playlist_with(name, playable, is_public=False),
                           [Step("unfavourite_song", {"song_id": r["song_id"]}) for r in old]),
                     hidden=[len(old)], params={"before": cut})


TEMPLATES = [
    ArchiveOldFavourites, HistoryNotFavourited, FavouriteArtistSince, FollowTopPlayedArtists, CleanExpiredFromPlaylists, LatestAlbumPlaylist,
    LongSongsOfGenreYear, UnfollowUnplayedArtists, MergePlaylists, LikePopularComments, SaveAlbumsOfFavourites,
    TopTaggedSongs, FavouritesBeforeYear, FollowArtistsOfPlaylist,
]
