"""Median in-process latency of every tool, called through the registry (validation included).

Goals (issue: foundation): under 100 us for a lookup by id, under 2 ms for any search or list.
Usage: python benchmarks/tool_calls.py [--domain music] [--repeat 200] [--json]
Write tools are measured on a scratch copy; each sample undoes its change (a savepoint rolled
back outside the timed call), so every sample sees the same world. The machine is a shared VM:
each tool is measured in several rounds and the best round's median is reported, which
filters out neighbours' noise without hiding a slow tool (every call of a round counts).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

# Representative arguments per tool: the heaviest plausible call for searches and lists
# (broad queries, no filters), real ids for lookups. Ids are looked up, not hard-coded.
# get_playlist is not among them: besides the playlist it returns a page of 20 joined songs,
# so it is held to the list goal.
LOOKUPS = {"get_my_profile", "get_song", "get_artist", "get_album"}


def music_cases(conn, actor: int) -> dict[str, dict]:
    one = lambda sql, *p: conn.execute(sql, p).fetchone()[0]  # noqa: E731
    song = one("SELECT id FROM songs WHERE copyright_status != 'expired' ORDER BY play_count DESC LIMIT 1")
    artist = one("SELECT artist_id FROM songs WHERE id = ?", song)
    album = one("SELECT album_id FROM songs WHERE id = ?", song)
    playlist = one("SELECT id FROM playlists WHERE owner_id = ? ORDER BY song_count DESC LIMIT 1", actor)
    commented = one("SELECT song_id FROM comments GROUP BY song_id ORDER BY COUNT(*) DESC LIMIT 1")
    other_comment = one("SELECT id FROM comments WHERE user_id != ? LIMIT 1", actor)
    my_comment = one("SELECT id FROM comments WHERE user_id = ? LIMIT 1", actor)
    new_song = one("SELECT id FROM songs WHERE copyright_status = 'licensed' AND id NOT IN (SELECT song_id FROM playlist_songs WHERE playlist_id = ?) AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) LIMIT 1", playlist, actor)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="music")
    parser.add_argument("--actor", type=int, default=None, help="default: the actor with the most playlists")
    parser.add_argument("--repeat", type=int, default=300, help="calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ebench.domains import get_domain
    from ebench.domains.engine.world import ensure_world, scratch_copy

    domain = get_domain(args.domain)
    conn = scratch_copy(ensure_world(domain))
    actor = args.actor or conn.execute(
        "SELECT owner_id FROM playlists GROUP BY owner_id ORDER BY COUNT(*) DESC, owner_id LIMIT 1").fetchone()[0]
    cases = music_cases(conn, actor)
    env = domain.env(conn, actor)
    results = []
    for label, call_args in cases.items():
        name = label.split("(")[0]
        tool = domain.tools.get(name)
        rounds = []
        for _ in range(args.rounds):
            samples = []
            for _ in range(args.repeat):
                if tool.kind == "write":
                    conn.execute("SAVEPOINT bench")
                started = time.perf_counter()
                result = domain.tools.call(env, name, call_args)
                samples.append(time.perf_counter() - started)
                if tool.kind == "write":
                    conn.execute("ROLLBACK TO bench")
                    conn.execute("RELEASE bench")
                if not result.ok:
                    raise SystemExit(f"{label} failed: {result.error_message}")
            rounds.append(samples)
        samples = min(rounds, key=statistics.median)
        kind = "lookup" if name in LOOKUPS else ("write" if tool.kind == "write" else "search/list")
        goal = {"lookup": 100, "search/list": 2000}.get(kind)
        median_us = statistics.median(samples) * 1e6
        results.append({"tool": label, "kind": kind, "median_us": round(median_us, 1),
                        "p95_us": round(sorted(samples)[int(len(samples) * 0.95)] * 1e6, 1),
                        "goal_us": goal, "meets_goal": goal is None or median_us < goal})
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{args.domain}: median latency, best of {args.rounds} rounds of {args.repeat} calls (actor {actor})")
    print(f"{'tool':32} {'kind':12} {'median':>10} {'p95':>10}  goal")
    for r in results:
        goal = f"< {r['goal_us']:.0f} us {'ok' if r['meets_goal'] else 'MISSED'}" if r["goal_us"] else ""
        print(f"{r['tool']:32} {r['kind']:12} {r['median_us']:8.1f}us {r['p95_us']:8.1f}us  {goal}")
    missed = [r["tool"] for r in results if not r["meets_goal"]]
    print("all goals met" if not missed else f"goals missed: {', '.join(missed)}")


if __name__ == "__main__":
    main()
