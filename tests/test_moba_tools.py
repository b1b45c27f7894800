"""The moba domain's 33 tools, called through the registry on the real built world.

Every test works on `moba_conn`, a fresh in-memory copy of the world, and finds its data with
SQL (never a hard-coded id). Results are checked against the database; write tools are checked
row by row; every refused call must leave the content hash of the world unchanged. Each product
rule the tools enforce has its own test.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from toolcheck import all_pages, col, err, nocase, non_decreasing, non_increasing, ok, tool_fixtures, val

from ebench.domains.moba.schema import rank_score
from ebench.engine.domain_registry import get_domain
from ebench.engine.tools import READ, WRITE, parse_docstring
from ebench.engine.world import content_hash

_MOBA = get_domain("moba")  # for parametrizing at collection time (no world needed)
ALL_TOOLS = _MOBA.tools.names
READ_TOOLS = [t.name for t in _MOBA.tools if t.kind == READ]
WRITE_TOOLS = [t.name for t in _MOBA.tools if t.kind == WRITE]
PAGED_TOOLS = [t.name for t in _MOBA.tools if any(p.name == "page" for p in t.params)]
NOW = _MOBA.now
TODAY = NOW[:10]

# The tools that change the world, by the verb in their name (the read/write tag must agree).
WRITE_VERBS = (
    "send_",
    "answer_",
    "remove_",
    "block_",
    "unblock_",
    "create_",
    "dissolve_",
    "invite_",
    "approve_",
    "reject_",
    "favourite_",
    "unfavourite_",
    "buy_",
)


# -- helpers -------------------------------------------------------------------------------


# The player most tests act for: a clan officer with a pending application from a clanless
# player, an open room of their own with a free place, a pending invitation to another room with
# space, a pending friend request, friends, a blacklist and favourite matches.
RICH_ACTOR_SQL = """
SELECT p.id FROM players p JOIN team_members tm ON tm.player_id = p.id AND tm.role IN ('leader', 'vice_leader')
JOIN teams t ON t.id = tm.team_id AND t.member_count < t.capacity
WHERE EXISTS (SELECT 1 FROM team_applications a WHERE a.team_id = t.id AND a.status = 'pending'
              AND a.player_id NOT IN (SELECT player_id FROM team_members))
  AND EXISTS (SELECT 1 FROM rooms r WHERE r.owner_id = p.id AND r.status = 'open' AND r.member_count BETWEEN 2 AND r.capacity - 1)
  AND EXISTS (SELECT 1 FROM room_invitations i JOIN rooms r ON r.id = i.room_id WHERE i.invitee_id = p.id
              AND i.status = 'pending' AND r.member_count < r.capacity)
  AND EXISTS (SELECT 1 FROM friend_requests f WHERE f.receiver_id = p.id AND f.status = 'pending')
  AND (SELECT COUNT(*) FROM relations b WHERE b.player_id = p.id AND b.kind = 'friend') > 3
  AND EXISTS (SELECT 1 FROM relations b WHERE b.player_id = p.id AND b.kind = 'blocked')
  AND EXISTS (SELECT 1 FROM favourite_matches f WHERE f.player_id = p.id)
  AND p.total_matches > 2 * 20
ORDER BY p.total_matches DESC, p.id LIMIT 1
"""


class Pick:
    """SQL look-ups of test data on the scratch world."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.actor: int = val(conn, RICH_ACTOR_SQL)
        assert self.actor is not None, "the world has no player rich enough for these tests"

    def val(self, sql: str, *params: Any) -> Any:
        found = val(self.conn, sql, *params)
        assert found is not None, f"no test data for: {sql} {params}"
        return found

    def missing(self, table: str) -> int:
        return val(self.conn, f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")

    def nickname(self, player_id: int) -> str:
        return self.val("SELECT nickname FROM players WHERE id = ?", player_id)

    # -- social
    def friend(self) -> int:
        return self.val(
            "SELECT other_id FROM relations WHERE player_id = ? AND kind = 'friend' ORDER BY intimacy DESC, other_id LIMIT 1", self.actor
        )

    def blocked(self) -> int:
        return self.val("SELECT other_id FROM relations WHERE player_id = ? AND kind = 'blocked' ORDER BY other_id LIMIT 1", self.actor)

    def stranger(self, n: int = 0, of: int | None = None) -> int:
        """A player with no relation and no pending request with `of` (default the actor)."""
        me = self.actor if of is None else of
        return self.val(
            """
            SELECT p.id FROM players p WHERE p.id != ?1
              AND NOT EXISTS (SELECT 1 FROM relations r WHERE (r.player_id = ?1 AND r.other_id = p.id) OR (r.player_id = p.id AND r.other_id = ?1))
              AND NOT EXISTS (SELECT 1 FROM friend_requests f WHERE f.status = 'pending'
                              AND ((f.sender_id = ?1 AND f.receiver_id = p.id) OR (f.sender_id = p.id AND f.receiver_id = ?1)))
              AND NOT EXISTS (SELECT 1 FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = p.id AND r.status != 'closed')
            ORDER BY p.id LIMIT 1 OFFSET ?2""",
            me,
            n,
        )

    def received_request(self) -> int:
        return self.val("SELECT id FROM friend_requests WHERE receiver_id = ? AND status = 'pending' ORDER BY id LIMIT 1", self.actor)

    def answered_request(self) -> int:
        return self.val("SELECT id FROM friend_requests WHERE receiver_id != ? AND status != 'pending' ORDER BY id LIMIT 1", self.actor)

    # -- clans
    def my_team(self) -> int:
        return self.val("SELECT team_id FROM team_members WHERE player_id = ?", self.actor)

    def application(self, clanless: bool = True, status: str = "pending", team: int | None = None) -> int:
        where = "NOT IN" if clanless else "IN"
        return self.val(
            f"SELECT id FROM team_applications WHERE team_id = ? AND status = ? AND player_id {where} "
            "(SELECT player_id FROM team_members) ORDER BY id LIMIT 1",
            team or self.my_team(),
            status,
        )

    def foreign_application(self) -> int:
        return self.val("SELECT id FROM team_applications WHERE team_id != ? AND status = 'pending' ORDER BY id LIMIT 1", self.my_team())

    # -- rooms
    def my_room(self) -> int:
        return self.val("SELECT id FROM rooms WHERE owner_id = ? AND status = 'open'", self.actor)

    def room(self, status: str, full: bool | None = None, not_owner: bool = True) -> int:
        space = "" if full is None else ("AND member_count >= capacity" if full else "AND member_count < capacity")
        return self.val(
            f"SELECT id FROM rooms WHERE status = ? {space} AND (? = 0 OR owner_id != ?) ORDER BY id LIMIT 1",
            status,
            int(not_owner),
            self.actor,
        )

    def invitation(self) -> int:
        return self.val(
            "SELECT i.id FROM room_invitations i JOIN rooms r ON r.id = i.room_id WHERE i.invitee_id = ? "
            "AND i.status = 'pending' AND r.member_count < r.capacity ORDER BY i.id LIMIT 1",
            self.actor,
        )

    # -- matches and heroes
    def played_match(self, favourited: bool = False) -> int:
        where = "IN" if favourited else "NOT IN"
        return self.val(
            f"SELECT match_id FROM match_players WHERE player_id = ?1 AND match_id {where} "
            "(SELECT match_id FROM favourite_matches WHERE player_id = ?1) ORDER BY match_id DESC LIMIT 1",
            self.actor,
        )

    def unplayed_match(self) -> int:
        return self.val(
            "SELECT id FROM matches WHERE id NOT IN (SELECT match_id FROM match_players WHERE player_id = ?) ORDER BY id LIMIT 1",
            self.actor,
        )

    def owned_hero(self) -> int:
        return self.val("SELECT hero_id FROM player_heroes WHERE player_id = ? ORDER BY matches_played DESC, hero_id LIMIT 1", self.actor)

    def shop_hero(self, owned: bool = False, affordable: bool = True, player: int | None = None) -> int:
        me = self.actor if player is None else player
        owned_sql = "IN" if owned else "NOT IN"
        price = "<=" if affordable else ">"
        return self.val(
            f"SELECT h.id FROM heroes h WHERE h.availability = 'shop' AND h.release_date <= ?1 "
            f"AND h.id {owned_sql} (SELECT hero_id FROM player_heroes WHERE player_id = ?2) "
            f"AND h.price_coins {price} (SELECT coins FROM players WHERE id = ?2) ORDER BY h.price_coins, h.id LIMIT 1",
            TODAY,
            me,
        )

    def hero(self, where: str) -> int:
        return self.val(f"SELECT id FROM heroes WHERE {where} ORDER BY id LIMIT 1")


def happy_args(p: Pick) -> dict[str, dict[str, Any]]:
    """Valid arguments for every tool, acting as p.actor on a fresh world."""
    return {
        "get_my_profile": {},
        "search_players": {"query": "a", "sort_by": "rank"},
        "get_player": {"player_id": p.friend()},
        "search_heroes": {"role": "mage"},
        "get_hero": {"hero_id": p.owned_hero()},
        "list_my_heroes": {},
        "get_rank": {},
        "list_friends": {},
        "list_friend_requests": {},
        "list_blacklist": {},
        "search_teams": {},
        "get_team": {"team_id": p.my_team()},
        "list_team_applications": {},
        "list_rooms": {},
        "get_room": {"room_id": p.my_room()},
        "list_room_invitations": {},
        "list_match_history": {},
        "get_match": {"match_id": p.played_match()},
        "list_favourite_matches": {},
        "send_friend_request": {"player_id": p.stranger(), "message": "GG, add me"},
        "answer_friend_request": {"request_id": p.received_request(), "accept": True},
        "remove_friend": {"player_id": p.friend()},
        "block_player": {"player_id": p.stranger()},
        "unblock_player": {"player_id": p.blocked()},
        "create_room": {"name": "Test room", "mode": "brawl"},
        "dissolve_room": {"room_id": p.my_room()},
        "invite_to_room": {"room_id": p.my_room(), "player_id": p.stranger()},
        "answer_room_invitation": {"invitation_id": p.invitation(), "accept": False},
        "approve_team_application": {"application_id": p.application()},
        "reject_team_application": {"application_id": p.application()},
        "favourite_match": {"match_id": p.played_match(), "note": "what a game"},
        "unfavourite_match": {"match_id": p.played_match(favourited=True)},
        "buy_hero": {"hero_id": p.shop_hero(), "currency": "coins"},
    }


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture()
def pick(moba_conn) -> Pick:
    return Pick(moba_conn)


globals().update(tool_fixtures("moba"))  # pristine, world_hash, unchanged, call


def consistent(moba, conn) -> None:
    """Every repair rule of the world still holds (the tools keep the world's invariants)."""
    broken = [c.name for c in moba.checks if c.violations(conn, moba.now)]
    assert broken == [], broken
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


# =========================================================================================
# 1. Read tools checked against the database
# =========================================================================================


def test_fresh_world_copy_has_the_world_hash(moba_conn, pristine):
    assert content_hash(moba_conn) == pristine[0]


def test_registry_has_the_33_tools(moba):
    assert len(moba.tools) == 33
    assert (len(READ_TOOLS), len(WRITE_TOOLS)) == (19, 14)


def test_get_my_profile(call, moba, moba_conn, pick):
    me = ok(call(pick.actor, "get_my_profile", {}))
    row = moba_conn.execute(
        "SELECT nickname, level, tier, stars, region, coins, diamonds, total_matches, total_wins FROM players WHERE id = ?", (pick.actor,)
    ).fetchone()
    assert (
        me["nickname"],
        me["level"],
        me["tier"],
        me["stars"],
        me["region"],
        me["wallet"]["coins"],
        me["wallet"]["diamonds"],
        me["total_matches"],
        me["total_wins"],
    ) == row
    assert me["player_id"] == pick.actor and me["now"] == moba.now
    assert me["win_rate"] == round(100 * row[8] / row[7], 1)
    assert me["clan"]["team_id"] == pick.my_team() and me["clan"]["role"] in ("leader", "vice_leader")
    assert me["room"]["room_id"] == pick.my_room()
    assert me["current_season"]["start_date"] <= TODAY <= me["current_season"]["end_date"]
    assert me["friends"] == val(moba_conn, "SELECT COUNT(*) FROM relations WHERE player_id = ? AND kind = 'friend'", pick.actor)
    assert me["blocked_players"] == val(moba_conn, "SELECT COUNT(*) FROM relations WHERE player_id = ? AND kind = 'blocked'", pick.actor)
    assert me["pending_friend_requests"] == val(
        moba_conn, "SELECT COUNT(*) FROM friend_requests WHERE receiver_id = ? AND status = 'pending'", pick.actor
    )
    assert me["pending_room_invitations"] == val(
        moba_conn, "SELECT COUNT(*) FROM room_invitations WHERE invitee_id = ? AND status = 'pending'", pick.actor
    )
    # A clanless player outside any room.
    loner = pick.val(
        "SELECT id FROM players WHERE id NOT IN (SELECT player_id FROM team_members) AND id NOT IN "
        "(SELECT player_id FROM room_members) ORDER BY id LIMIT 1"
    )
    other = ok(call(loner, "get_my_profile", {}))
    assert other["clan"] is None and other["room"] is None


SCORE = rank_score("p.tier", "p.stars")


@pytest.mark.parametrize(
    "args, where",
    [
        ({"query": "  DRAGON "}, "nickname LIKE '%dragon%'"),
        ({"region": "Europe"}, "region = 'Europe'"),
        ({"tier": "Diamond"}, "tier = 'Diamond'"),
        ({"status": "in_match"}, "status = 'in_match'"),
        (
            {"region": "East Asia", "tier": "Platinum", "status": "offline"},
            "region = 'East Asia' AND tier = 'Platinum' AND status = 'offline'",
        ),
    ],
)
def test_search_players_filters(args, where, call, moba_conn, pick):
    expected = set(col(moba_conn, f"SELECT id FROM players WHERE {where}"))
    assert expected
    items = all_pages(call, pick.actor, "search_players", args, "player_id")
    assert {p["player_id"] for p in items} == expected
    friends = set(col(moba_conn, "SELECT other_id FROM relations WHERE player_id = ? AND kind = 'friend'", pick.actor))
    assert all(p["is_friend"] == (p["player_id"] in friends) for p in items)


def test_search_players_sorting_and_relevance(call, moba_conn, pick):
    ranked = all_pages(call, pick.actor, "search_players", {"sort_by": "rank"}, "player_id")
    scores = {r[0]: r[1] for r in moba_conn.execute(f"SELECT p.id, {SCORE} FROM players p")}
    assert non_increasing([scores[p["player_id"]] for p in ranked]) and len(ranked) == len(scores)
    by_level = ok(call(pick.actor, "search_players", {"sort_by": "level"}))["items"]
    assert non_increasing([p["level"] for p in by_level])
    by_name = ok(call(pick.actor, "search_players", {"sort_by": "nickname"}))["items"]
    assert non_decreasing([nocase(p["nickname"]) for p in by_name])
    # An exact nickname (in another case) comes first, before longer nicknames containing it.
    nick = pick.val(
        "SELECT p.nickname FROM players p WHERE p.nickname NOT GLOB '*[^A-Za-z]*' AND EXISTS (SELECT 1 FROM players o "
        "WHERE o.nickname LIKE '%' || p.nickname || '%' AND o.id != p.id) ORDER BY p.id LIMIT 1"
    )
    res = ok(call(pick.actor, "search_players", {"query": nick.upper()}))
    assert res["total"] >= 2 and nocase(res["items"][0]["nickname"]) == nocase(nick)
    assert all(nocase(p["nickname"]) != nocase(nick) for p in res["items"][1:])


def test_get_player_relations(call, moba_conn, pick):
    friend = pick.friend()
    res = ok(call(pick.actor, "get_player", {"player_id": friend}))
    since, intimacy = moba_conn.execute(
        "SELECT since, intimacy FROM relations WHERE player_id = ? AND other_id = ?", (pick.actor, friend)
    ).fetchone()
    assert res["relation"] == {
        "is_friend": True,
        "friends_since": since,
        "intimacy": intimacy,
        "blocked_by_me": False,
        "has_blocked_me": bool(
            val(moba_conn, "SELECT 1 FROM relations WHERE player_id = ? AND other_id = ? AND kind = 'blocked'", friend, pick.actor)
        ),
        "pending_request_id": None,
        "pending_request_from": None,
    }
    top = col(moba_conn, "SELECT hero_id FROM player_heroes WHERE player_id = ? ORDER BY proficiency DESC, hero_id LIMIT 3", friend)
    assert [h["hero_id"] for h in res["top_heroes"]] == top
    assert (res["total_matches"], res["hero_count"]) == moba_conn.execute(
        "SELECT total_matches, hero_count FROM players WHERE id = ?", (friend,)
    ).fetchone()
    team = val(moba_conn, "SELECT team_id FROM team_members WHERE player_id = ?", friend)
    assert (res["clan"] or {}).get("team_id") == team
    assert "coins" not in json.dumps(res) and "wallet" not in res  # another player's wallet is private
    blocked = ok(call(pick.actor, "get_player", {"player_id": pick.blocked()}))["relation"]
    assert blocked["blocked_by_me"] is True and blocked["is_friend"] is False
    request = pick.received_request()
    sender = val(moba_conn, "SELECT sender_id FROM friend_requests WHERE id = ?", request)
    pending = ok(call(pick.actor, "get_player", {"player_id": sender}))["relation"]
    assert (pending["pending_request_id"], pending["pending_request_from"]) == (request, "them")
    assert "relation" not in ok(call(pick.actor, "get_player", {"player_id": pick.actor}))


@pytest.mark.parametrize(
    "args, where",
    [
        ({"role": "mage"}, "(role = 'mage' OR secondary_role = 'mage')"),
        ({"lane": "jungle", "difficulty": "hard"}, "lane = 'jungle' AND difficulty = 'hard'"),
        ({"availability": "event"}, "availability = 'event'"),
        ({"owned": True}, "id IN (SELECT hero_id FROM player_heroes WHERE player_id = :a)"),
        (
            {"owned": False, "max_price_coins": 8888},
            "id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = :a) AND price_coins <= 8888",
        ),
        ({"max_price_diamonds": 388}, "price_diamonds <= 388"),
        ({"query": "OF THE"}, "(name LIKE '%of the%' OR title LIKE '%of the%')"),
    ],
)
def test_search_heroes_filters(args, where, call, moba_conn, pick):
    expected = set(col(moba_conn, f"SELECT id FROM heroes WHERE {where.replace(':a', str(pick.actor))}"))
    assert expected
    items = all_pages(call, pick.actor, "search_heroes", args, "hero_id")
    assert {h["hero_id"] for h in items} == expected
    owned = set(col(moba_conn, "SELECT hero_id FROM player_heroes WHERE player_id = ?", pick.actor))
    assert all(h["owned_by_me"] == (h["hero_id"] in owned) and h["released"] == (h["release_date"] <= TODAY) for h in items)


def test_search_heroes_sorting(call, pick):
    price = all_pages(call, pick.actor, "search_heroes", {"sort_by": "price"}, "hero_id")
    priced = [h["price_coins"] for h in price if h["price_coins"] is not None]
    assert non_decreasing(priced) and all(h["price_coins"] is None for h in price[len(priced) :])
    newest = ok(call(pick.actor, "search_heroes", {"sort_by": "newest"}))["items"]
    assert non_increasing([h["release_date"] for h in newest]) and newest[0]["released"] is False  # announced heroes first
    popular = ok(call(pick.actor, "search_heroes", {"sort_by": "popularity"}))["items"]
    assert non_increasing([h["owner_count"] for h in popular])


def test_get_hero_owned_and_not(call, moba_conn, pick):
    hero_id = pick.owned_hero()
    hero = ok(call(pick.actor, "get_hero", {"hero_id": hero_id}))
    row = moba_conn.execute("SELECT name, title, role, lore, owner_count, price_coins FROM heroes WHERE id = ?", (hero_id,)).fetchone()
    assert (hero["name"], hero["title"], hero["role"], hero["lore"], hero["owner_count"], hero["price_coins"]) == row
    mine = moba_conn.execute(
        "SELECT acquired_via, proficiency, matches_played, wins FROM player_heroes WHERE player_id = ? AND hero_id = ?",
        (pick.actor, hero_id),
    ).fetchone()
    assert hero["owned_by_me"] is True
    assert (
        hero["my_hero"]["acquired_via"],
        hero["my_hero"]["proficiency"],
        hero["my_hero"]["matches_played"],
        hero["my_hero"]["wins"],
    ) == mine
    other = ok(call(pick.actor, "get_hero", {"hero_id": pick.shop_hero()}))
    assert other["owned_by_me"] is False and other["my_hero"] is None


@pytest.mark.parametrize(
    "sort_by, key, check",
    [
        ("proficiency", "proficiency", non_increasing),
        ("matches", "matches_played", non_increasing),
        ("recent", "acquired_at", non_increasing),
        ("name", "name", lambda names: non_decreasing([nocase(n) for n in names])),
    ],
)
def test_list_my_heroes(sort_by, key, check, call, moba_conn, pick):
    items = all_pages(call, pick.actor, "list_my_heroes", {"sort_by": sort_by}, "hero_id")
    rows = {
        r[0]: r[1:]
        for r in moba_conn.execute(
            "SELECT hero_id, acquired_via, currency, price_paid, proficiency, matches_played, wins FROM player_heroes WHERE player_id = ?",
            (pick.actor,),
        )
    }
    assert {h["hero_id"] for h in items} == set(rows)
    for h in items:
        assert (h["acquired_via"], h["currency"], h["price_paid"], h["proficiency"], h["matches_played"], h["wins"]) == rows[h["hero_id"]]
        assert h["win_rate"] == (round(100 * h["wins"] / h["matches_played"], 1) if h["matches_played"] else None)
    assert check([h[key] for h in items])


def test_list_my_heroes_role_and_win_rate(call, moba_conn, pick):
    items = all_pages(call, pick.actor, "list_my_heroes", {"role": "tank", "sort_by": "win_rate"}, "hero_id")
    assert {h["hero_id"] for h in items} == set(
        col(
            moba_conn,
            "SELECT ph.hero_id FROM player_heroes ph JOIN heroes h ON h.id = ph.hero_id "
            "WHERE ph.player_id = ? AND (h.role = 'tank' OR h.secondary_role = 'tank')",
            pick.actor,
        )
    )
    rates = [h["win_rate"] for h in items]
    played = [r for r in rates if r is not None]
    assert non_increasing(played) and all(r is None for r in rates[len(played) :])


def test_get_rank_current_season_and_leaderboard(call, moba_conn, pick):
    res = ok(call(pick.actor, "get_rank", {}))
    current = pick.val("SELECT id FROM seasons WHERE start_date <= ? AND end_date >= ?", TODAY, TODAY)
    assert res["season"]["season_id"] == current and res["season"]["status"] == "current"
    assert [s["season_id"] for s in res["seasons"]] == col(moba_conn, "SELECT id FROM seasons ORDER BY number")
    assert {s["status"] for s in res["seasons"]} == {"ended", "current", "upcoming"}
    mine = moba_conn.execute(
        "SELECT tier, stars, ranked_matches, ranked_wins FROM season_ranks WHERE player_id = ? AND season_id = ?", (pick.actor, current)
    ).fetchone()
    assert (res["my_rank"]["tier"], res["my_rank"]["stars"], res["my_rank"]["ranked_matches"], res["my_rank"]["ranked_wins"]) == mine
    board = all_pages(call, pick.actor, "get_rank", {}, "player_id", lambda v: v["leaderboard"])
    assert len(board) == val(moba_conn, "SELECT COUNT(*) FROM season_ranks WHERE season_id = ?", current)
    scores = {
        r[0]: (r[1], r[2])
        for r in moba_conn.execute(
            f"SELECT player_id, {rank_score('tier', 'stars')}, ranked_wins FROM season_ranks WHERE season_id = ?", (current,)
        )
    }
    assert non_increasing([scores[r["player_id"]] for r in board])
    assert [r["position"] for r in board] == list(range(1, len(board) + 1))
    assert next(r["position"] for r in board if r["player_id"] == pick.actor) == res["my_rank"]["position"]


def test_get_rank_past_season_by_region(call, moba_conn, pick):
    season, region = moba_conn.execute(
        "SELECT r.season_id, p.region FROM season_ranks r JOIN players p ON p.id = r.player_id "
        "WHERE r.player_id = ? ORDER BY r.season_id LIMIT 1",
        (pick.actor,),
    ).fetchone()
    board = all_pages(call, pick.actor, "get_rank", {"season_id": season, "region": region}, "player_id", lambda v: v["leaderboard"])
    assert {r["player_id"] for r in board} == set(
        col(
            moba_conn,
            "SELECT r.player_id FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE r.season_id = ? AND p.region = ?",
            season,
            region,
        )
    )
    res = ok(call(pick.actor, "get_rank", {"season_id": season, "region": region}))
    assert res["season"]["status"] == "ended" and res["my_rank"]["position"] == next(
        r["position"] for r in board if r["player_id"] == pick.actor
    )
    upcoming = pick.val("SELECT id FROM seasons WHERE start_date > ?", TODAY)
    empty = ok(call(pick.actor, "get_rank", {"season_id": upcoming}))
    assert empty["my_rank"] is None and empty["leaderboard"]["total"] == 0 and empty["season"]["status"] == "upcoming"


@pytest.mark.parametrize(
    "sort_by, key, check",
    [
        ("intimacy", "intimacy", non_increasing),
        ("since", "friends_since", non_increasing),
        ("nickname", "nickname", lambda v: non_decreasing([nocase(n) for n in v])),
    ],
)
def test_list_friends(sort_by, key, check, call, moba_conn, pick):
    items = all_pages(call, pick.actor, "list_friends", {"sort_by": sort_by}, "player_id")
    rows = {
        r[0]: r[1:]
        for r in moba_conn.execute("SELECT other_id, intimacy, since FROM relations WHERE player_id = ? AND kind = 'friend'", (pick.actor,))
    }
    assert {f["player_id"] for f in items} == set(rows)
    assert all((f["intimacy"], f["friends_since"]) == rows[f["player_id"]] for f in items)
    assert check([f[key] for f in items])


def test_list_friends_by_status(call, moba_conn):
    actor, status = moba_conn.execute(
        "SELECT f.player_id, p.status FROM relations f JOIN players p ON p.id = f.other_id WHERE f.kind = 'friend' "
        "GROUP BY 1, 2 ORDER BY COUNT(*) DESC, 1 LIMIT 1"
    ).fetchone()
    items = all_pages(call, actor, "list_friends", {"status": status}, "player_id")
    assert {f["player_id"] for f in items} == set(
        col(
            moba_conn,
            "SELECT f.other_id FROM relations f JOIN players p ON p.id = f.other_id "
            "WHERE f.player_id = ? AND f.kind = 'friend' AND p.status = ?",
            actor,
            status,
        )
    )
    assert all(f["status"] == status for f in items)


@pytest.mark.parametrize("direction, status", [("received", None), ("received", "pending"), ("sent", None), ("sent", "accepted")])
def test_list_friend_requests(direction, status, call, moba_conn):
    mine = "receiver_id" if direction == "received" else "sender_id"
    actor = val(moba_conn, f"SELECT {mine} FROM friend_requests GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT 1")
    items = all_pages(call, actor, "list_friend_requests", {"direction": direction, "status": status}, "request_id")
    expected = col(moba_conn, f"SELECT id FROM friend_requests WHERE {mine} = ? AND (?2 IS NULL OR status = ?2)", actor, status)
    assert expected and {r["request_id"] for r in items} == set(expected)
    assert non_increasing([r["sent_at"] for r in items])
    assert all(r[mine] == actor for r in items)


def test_list_blacklist(call, moba_conn, pick):
    items = all_pages(call, pick.actor, "list_blacklist", {}, "player_id")
    assert {b["player_id"]: b["blocked_at"] for b in items} == dict(
        moba_conn.execute("SELECT other_id, since FROM relations WHERE player_id = ? AND kind = 'blocked'", (pick.actor,))
    )


@pytest.mark.parametrize(
    "args, where",
    [
        ({}, "1"),
        ({"region": "East Asia"}, "region = 'East Asia'"),
        ({"has_space": True}, "member_count < capacity"),
        ({"has_space": False}, "member_count >= capacity"),
        ({"min_level": 4}, "level >= 4"),
        ({"query": "AN"}, "name LIKE '%an%'"),
    ],
)
def test_search_teams(args, where, call, moba_conn, pick):
    expected = set(col(moba_conn, f"SELECT id FROM teams WHERE {where}"))
    assert expected
    items = all_pages(call, pick.actor, "search_teams", {**args, "sort_by": "members"}, "team_id")
    assert {t["team_id"] for t in items} == expected
    assert non_increasing([t["member_count"] for t in items])
    assert all(t["is_full"] == (t["member_count"] >= t["capacity"]) for t in items)


def test_get_team_lists_members_in_role_order(call, moba_conn, pick):
    team = pick.val("SELECT id FROM teams ORDER BY member_count DESC, id LIMIT 1")
    assert val(moba_conn, "SELECT member_count FROM teams WHERE id = ?", team) > 1
    members = all_pages(call, pick.actor, "get_team", {"team_id": team}, "player_id", lambda v: v["members"])
    rows = dict(moba_conn.execute("SELECT player_id, role FROM team_members WHERE team_id = ?", (team,)))
    assert {m["player_id"]: m["role"] for m in members} == rows
    order = ["leader", "vice_leader", "elite", "member"]
    assert non_decreasing([order.index(m["role"]) for m in members]) and members[0]["role"] == "leader"
    res = ok(call(pick.actor, "get_team", {"team_id": pick.my_team()}))
    assert res["team"]["my_role"] in ("leader", "vice_leader") and res["team"]["leader_id"] == val(
        moba_conn, "SELECT leader_id FROM teams WHERE id = ?", pick.my_team()
    )


def test_list_team_applications(call, moba_conn, pick):
    team = pick.my_team()
    items = all_pages(call, pick.actor, "list_team_applications", {}, "application_id")
    assert {a["application_id"] for a in items} == set(col(moba_conn, "SELECT id FROM team_applications WHERE team_id = ?", team))
    assert non_decreasing([a["applied_at"] for a in items])
    for a in items:
        assert a["applicant_team_id"] == val(moba_conn, "SELECT team_id FROM team_members WHERE player_id = ?", a["player_id"])
    pending = ok(call(pick.actor, "list_team_applications", {"team_id": team, "status": "pending"}))
    assert pending["total"] == val(moba_conn, "SELECT COUNT(*) FROM team_applications WHERE team_id = ? AND status = 'pending'", team) > 0


def test_list_rooms(call, moba_conn, pick):
    active = all_pages(call, pick.actor, "list_rooms", {}, "room_id")
    assert {r["room_id"] for r in active} == set(col(moba_conn, "SELECT id FROM rooms WHERE status != 'closed'"))
    assert non_increasing([r["created_at"] for r in active])
    assert all("password" not in r for r in active) and any(r["has_password"] for r in active)
    for args, where in [
        ({"status": "closed", "mode": "ranked"}, "status = 'closed' AND mode = 'ranked'"),
        ({"has_space": False}, "status != 'closed' AND member_count >= capacity"),
        ({"status": "open", "has_space": True}, "status = 'open' AND member_count < capacity"),
    ]:
        got = all_pages(call, pick.actor, "list_rooms", args, "room_id")
        expected = set(col(moba_conn, f"SELECT id FROM rooms WHERE {where}"))
        assert expected and {r["room_id"] for r in got} == expected, args


def test_get_room_shows_members_and_the_password_only_to_its_owner(call, moba_conn, pick):
    room = pick.my_room()
    mine = ok(call(pick.actor, "get_room", {"room_id": room}))
    assert mine["members"][0]["player_id"] == pick.actor and mine["members"][0]["is_owner"] is True
    assert {m["player_id"] for m in mine["members"]} == set(col(moba_conn, "SELECT player_id FROM room_members WHERE room_id = ?", room))
    assert mine["i_am_member"] is True and "password" in mine
    assert mine["password"] == val(moba_conn, "SELECT password FROM rooms WHERE id = ?", room)
    assert {i["invitation_id"] for i in mine["pending_invitations"]} == set(
        col(moba_conn, "SELECT id FROM room_invitations WHERE room_id = ? AND status = 'pending'", room)
    )
    locked = pick.val("SELECT id FROM rooms WHERE password IS NOT NULL AND owner_id != ? ORDER BY id LIMIT 1", pick.actor)
    seen = ok(call(pick.actor, "get_room", {"room_id": locked}))
    assert seen["has_password"] is True and "password" not in seen


@pytest.mark.parametrize("direction", ["received", "sent"])
def test_list_room_invitations(direction, call, moba_conn):
    mine = "invitee_id" if direction == "received" else "inviter_id"
    actor = val(moba_conn, f"SELECT {mine} FROM room_invitations GROUP BY 1 ORDER BY COUNT(*) DESC, 1 LIMIT 1")
    items = all_pages(call, actor, "list_room_invitations", {"direction": direction}, "invitation_id")
    assert {i["invitation_id"] for i in items} == set(col(moba_conn, f"SELECT id FROM room_invitations WHERE {mine} = ?", actor))
    assert non_increasing([i["sent_at"] for i in items])
    status = items[0]["status"]
    only = ok(call(actor, "list_room_invitations", {"direction": direction, "status": status}))
    assert only["total"] == sum(i["status"] == status for i in items)


HISTORY_FILTERS = {
    "all": ({}, "1"),
    "ranked wins": ({"mode": "ranked", "result": "win"}, "m.mode = 'ranked' AND mp.result = 'win'"),
    "season": (lambda c: {"season_id": 13}, "m.season_id = 13"),
    "date range": ({"start_date": "2026-01-01", "end_date": "2026-03-31"}, "m.started_at >= '2026-01-01' AND m.started_at < '2026-04-01'"),
    "end day included": ({"end_date": "2026-06-30"}, "m.started_at < '2026-07-01'"),
}


@pytest.mark.parametrize("case", list(HISTORY_FILTERS))
def test_list_match_history_filters_and_summary(case, call, moba_conn, pick):
    args, where = HISTORY_FILTERS[case]
    args = args(moba_conn) if callable(args) else args
    rows = moba_conn.execute(
        f"SELECT mp.match_id, mp.result, mp.is_mvp FROM match_players mp JOIN matches m ON m.id = mp.match_id "
        f"WHERE mp.player_id = ? AND {where}",
        (pick.actor,),
    ).fetchall()
    assert rows
    res = ok(call(pick.actor, "list_match_history", args))
    assert res["summary"]["matches"] == len(rows)
    assert res["summary"]["wins"] == sum(r[1] == "win" for r in rows) and res["summary"]["mvps"] == sum(r[2] for r in rows)
    items = all_pages(call, pick.actor, "list_match_history", args, "match_id")
    assert {i["match_id"] for i in items} == {r[0] for r in rows}
    assert non_increasing([i["started_at"] for i in items])


def test_list_match_history_of_another_player_with_a_hero(call, moba_conn, pick):
    friend = pick.friend()
    hero = pick.val(
        "SELECT hero_id FROM match_players WHERE player_id = ? GROUP BY hero_id ORDER BY COUNT(*) DESC, hero_id LIMIT 1", friend
    )
    res = ok(call(pick.actor, "list_match_history", {"player_id": friend, "hero_id": hero}))
    assert res["total"] == val(moba_conn, "SELECT COUNT(*) FROM match_players WHERE player_id = ? AND hero_id = ?", friend, hero) > 0
    assert all(i["hero_id"] == hero for i in res["items"])
    first = res["items"][0]
    row = moba_conn.execute(
        "SELECT kills, deaths, assists, score, result, rating_change FROM match_players WHERE match_id = ? AND player_id = ?",
        (first["match_id"], friend),
    ).fetchone()
    assert (first["kills"], first["deaths"], first["assists"], first["score"], first["result"], first["rating_change"]) == row


def test_get_match(call, moba_conn, pick):
    match_id = pick.played_match(favourited=True)
    res = ok(call(pick.actor, "get_match", {"match_id": match_id}))
    row = moba_conn.execute(
        "SELECT mode, season_id, started_at, duration_sec, winner_side, blue_kills, red_kills FROM matches WHERE id = ?", (match_id,)
    ).fetchone()
    assert (
        res["mode"],
        res["season_id"],
        res["started_at"],
        res["duration_sec"],
        res["winner_side"],
        res["blue_kills"],
        res["red_kills"],
    ) == row
    assert len(res["players"]) == 10 and [p["side"] for p in res["players"]] == ["blue"] * 5 + ["red"] * 5
    assert res["i_played"] is True and res["favourited_by_me"] is True
    stats = {
        r[0]: r[1:]
        for r in moba_conn.execute(
            "SELECT player_id, hero_id, kills, deaths, assists, gold, damage_dealt, damage_taken, healing, tower_damage, score, result, is_mvp "
            "FROM match_players WHERE match_id = ?",
            (match_id,),
        )
    }
    for p in res["players"]:
        assert (
            p["hero_id"],
            p["kills"],
            p["deaths"],
            p["assists"],
            p["gold"],
            p["damage_dealt"],
            p["damage_taken"],
            p["healing"],
            p["tower_damage"],
            p["score"],
            p["result"],
            int(p["is_mvp"]),
        ) == stats[p["player_id"]]
    assert sum(p["is_mvp"] for p in res["players"]) == 2
    other = ok(call(pick.actor, "get_match", {"match_id": pick.unplayed_match()}))
    assert other["i_played"] is False and other["favourited_by_me"] is False


def test_list_favourite_matches(call, moba_conn, pick):
    items = all_pages(call, pick.actor, "list_favourite_matches", {}, "match_id")
    assert {f["match_id"]: f["note"] for f in items} == dict(
        moba_conn.execute("SELECT match_id, note FROM favourite_matches WHERE player_id = ?", (pick.actor,))
    )
    assert non_increasing([f["favourited_at"] for f in items])
    for f in items:
        assert f["hero_id"] == val(
            moba_conn, "SELECT hero_id FROM match_players WHERE match_id = ? AND player_id = ?", f["match_id"], pick.actor
        )


# =========================================================================================
# 2. Pagination
# =========================================================================================


@pytest.mark.parametrize("tool", PAGED_TOOLS)
def test_page_below_one_is_invalid_value(tool, call, pick, unchanged):
    args = happy_args(pick)[tool]
    for page in (0, -1):
        assert "page" in err(call(pick.actor, tool, {**args, "page": page}), "invalid_value")
    unchanged()


def test_page_past_the_end_and_integral_float_page(call, pick):
    first = ok(call(pick.actor, "list_match_history", {}))
    assert first["total_pages"] > 2
    past = ok(call(pick.actor, "list_match_history", {"page": first["total_pages"] + 3}))
    assert past["items"] == [] and past["total"] == first["total"]
    assert ok(call(pick.actor, "list_match_history", {"page": 2.0})) == ok(call(pick.actor, "list_match_history", {"page": 2}))
    huge = ok(call(pick.actor, "search_heroes", {"page": 2**62}))
    assert huge["items"] == [] and huge["total"] > 100
    empty = ok(call(pick.actor, "search_players", {"query": "nobody is called this zzqx"}))
    assert (empty["items"], empty["total"], empty["total_pages"]) == ([], 0, 1)


@pytest.mark.parametrize(
    "tool, query, sql",
    [
        ("search_players", "%", "SELECT COUNT(*) FROM players WHERE instr(nickname, ?1)"),
        ("search_players", "_", "SELECT COUNT(*) FROM players WHERE instr(nickname, ?1)"),
        ("search_heroes", "%", "SELECT COUNT(*) FROM heroes WHERE instr(name, ?1) OR instr(title, ?1)"),
        ("search_teams", "_", "SELECT COUNT(*) FROM teams WHERE instr(name, ?1)"),
    ],
)
def test_search_wildcards_are_literal(tool, query, sql, call, moba_conn, pick):
    assert ok(call(pick.actor, tool, {"query": query}))["total"] == val(moba_conn, sql, query)


# =========================================================================================
# 3. Write tools: exact effects, row by row
# =========================================================================================


def test_send_friend_request(call, moba, moba_conn, pick):
    other = pick.stranger()
    before = val(moba_conn, "SELECT COUNT(*) FROM friend_requests")
    res = ok(call(pick.actor, "send_friend_request", {"player_id": other, "message": "  GG, add me  "}))
    row = moba_conn.execute(
        "SELECT sender_id, receiver_id, message, status, sent_at, answered_at FROM friend_requests WHERE id = ?", (res["request_id"],)
    ).fetchone()
    assert row == (pick.actor, other, "GG, add me", "pending", moba.now, None)
    assert val(moba_conn, "SELECT COUNT(*) FROM friend_requests") == before + 1
    # The receiver sees it and can accept it by id.
    assert res["request_id"] in {r["request_id"] for r in ok(call(other, "list_friend_requests", {"status": "pending"}))["items"]}
    ok(call(other, "answer_friend_request", {"request_id": res["request_id"], "accept": True}))
    assert ok(call(pick.actor, "get_player", {"player_id": other}))["relation"]["is_friend"] is True
    consistent(moba, moba_conn)


def test_answer_friend_request_accept_and_reject(call, moba, moba_conn, pick):
    request = pick.received_request()
    sender = val(moba_conn, "SELECT sender_id FROM friend_requests WHERE id = ?", request)
    res = ok(call(pick.actor, "answer_friend_request", {"request_id": request, "accept": True}))
    assert res["status"] == "accepted" and res["now_friends"] is True
    assert moba_conn.execute("SELECT status, answered_at FROM friend_requests WHERE id = ?", (request,)).fetchone() == (
        "accepted",
        moba.now,
    )
    rows = moba_conn.execute(
        "SELECT player_id, other_id, kind, since, intimacy FROM relations WHERE (player_id = ?1 AND other_id = ?2) "
        "OR (player_id = ?2 AND other_id = ?1) ORDER BY player_id",
        (pick.actor, sender),
    ).fetchall()
    assert sorted(rows) == sorted([(pick.actor, sender, "friend", moba.now, 0), (sender, pick.actor, "friend", moba.now, 0)])
    # Reject another pending request: no friendship.
    second = ok(call(pick.stranger(0), "send_friend_request", {"player_id": pick.actor}))["request_id"]
    friends = val(moba_conn, "SELECT COUNT(*) FROM relations WHERE kind = 'friend'")
    res = ok(call(pick.actor, "answer_friend_request", {"request_id": second, "accept": False}))
    assert res["status"] == "rejected" and res["now_friends"] is False
    assert moba_conn.execute("SELECT status, answered_at FROM friend_requests WHERE id = ?", (second,)).fetchone() == ("rejected", moba.now)
    assert val(moba_conn, "SELECT COUNT(*) FROM relations WHERE kind = 'friend'") == friends
    consistent(moba, moba_conn)


def test_remove_friend_ends_it_for_both(call, moba, moba_conn, pick):
    # A friendship made by an accepted request: the request goes with it (no accepted request without friends).
    friend = (
        pick.val(
            "SELECT r.receiver_id FROM friend_requests r WHERE r.sender_id = ? AND r.status = 'accepted' ORDER BY r.id LIMIT 1", pick.actor
        )
        if val(moba_conn, "SELECT 1 FROM friend_requests WHERE sender_id = ? AND status = 'accepted'", pick.actor)
        else pick.friend()
    )
    others = val(moba_conn, "SELECT COUNT(*) FROM relations") - 2
    ok(call(pick.actor, "remove_friend", {"player_id": friend}))
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM relations WHERE (player_id = ?1 AND other_id = ?2) OR (player_id = ?2 AND other_id = ?1)",
            pick.actor,
            friend,
        )
        == 0
    )
    assert val(moba_conn, "SELECT COUNT(*) FROM relations") == others
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM friend_requests WHERE status = 'accepted' AND ((sender_id = ?1 AND receiver_id = ?2) "
            "OR (sender_id = ?2 AND receiver_id = ?1))",
            pick.actor,
            friend,
        )
        == 0
    )
    assert friend not in {f["player_id"] for f in all_pages(call, pick.actor, "list_friends", {}, "player_id")}
    assert pick.actor not in {f["player_id"] for f in all_pages(call, friend, "list_friends", {}, "player_id")}
    consistent(moba, moba_conn)


def test_block_a_friend_ends_the_friendship_and_withdraws_requests(call, moba, moba_conn, pick):
    friend = pick.friend()
    res = ok(call(pick.actor, "block_player", {"player_id": friend}))
    assert res["friendship_ended"] is True
    assert moba_conn.execute(
        "SELECT player_id, other_id, kind, since, intimacy FROM relations WHERE (player_id = ?1 AND other_id = ?2) "
        "OR (player_id = ?2 AND other_id = ?1)",
        (pick.actor, friend),
    ).fetchall() == [(pick.actor, friend, "blocked", moba.now, 0)]
    # Blocking someone with a pending request (sent either way) withdraws it.
    request = pick.received_request()
    sender = val(moba_conn, "SELECT sender_id FROM friend_requests WHERE id = ?", request)
    res = ok(call(pick.actor, "block_player", {"player_id": sender}))
    assert res["requests_withdrawn"] == 1 and res["friendship_ended"] is False
    assert val(moba_conn, "SELECT COUNT(*) FROM friend_requests WHERE id = ?", request) == 0
    assert {b["player_id"] for b in ok(call(pick.actor, "list_blacklist", {}))["items"]} >= {friend, sender}
    consistent(moba, moba_conn)


def test_unblock_does_not_restore_the_friendship(call, moba, moba_conn, pick):
    friend = pick.friend()
    ok(call(pick.actor, "block_player", {"player_id": friend}))
    ok(call(pick.actor, "unblock_player", {"player_id": friend}))
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM relations WHERE (player_id = ?1 AND other_id = ?2) OR (player_id = ?2 AND other_id = ?1)",
            pick.actor,
            friend,
        )
        == 0
    )
    blocked = pick.blocked()
    ok(call(pick.actor, "unblock_player", {"player_id": blocked}))
    assert blocked not in {b["player_id"] for b in ok(call(pick.actor, "list_blacklist", {}))["items"]}
    ok(call(pick.actor, "send_friend_request", {"player_id": blocked}))  # unblocked: requests are possible again
    consistent(moba, moba_conn)


def test_create_room_and_invite_into_it(call, moba, moba_conn, pick):
    loner = pick.stranger()  # in no active room
    res = ok(call(loner, "create_room", {"name": "  Late night ranked ", "mode": "ranked", "password": "0420"}))
    row = moba_conn.execute(
        "SELECT name, owner_id, mode, capacity, status, password, created_at, closed_at, member_count FROM rooms WHERE id = ?",
        (res["room_id"],),
    ).fetchone()
    assert row == ("Late night ranked", loner, "ranked", 5, "open", "0420", moba.now, None, 1)
    assert res["left_room"] is None and res["has_password"] is True
    assert moba_conn.execute("SELECT player_id, joined_at FROM room_members WHERE room_id = ?", (res["room_id"],)).fetchall() == [
        (loner, moba.now)
    ]
    custom = ok(call(pick.stranger(1), "create_room", {"name": "Duo", "mode": "custom", "capacity": 2}))
    assert (custom["capacity"], custom["has_password"]) == (2, False)
    invitee = pick.stranger(0, of=loner)
    inv = ok(call(loner, "invite_to_room", {"room_id": res["room_id"], "player_id": invitee}))
    assert moba_conn.execute(
        "SELECT room_id, inviter_id, invitee_id, status, sent_at, answered_at FROM room_invitations WHERE id = ?", (inv["invitation_id"],)
    ).fetchone() == (res["room_id"], loner, invitee, "pending", moba.now, None)
    joined = ok(call(invitee, "answer_room_invitation", {"invitation_id": inv["invitation_id"], "accept": True}))
    assert joined["room"]["member_count"] == 2
    assert val(moba_conn, "SELECT member_count FROM rooms WHERE id = ?", res["room_id"]) == 2
    assert val(moba_conn, "SELECT joined_at FROM room_members WHERE room_id = ? AND player_id = ?", res["room_id"], invitee) == moba.now
    assert moba_conn.execute("SELECT status, answered_at FROM room_invitations WHERE id = ?", (inv["invitation_id"],)).fetchone() == (
        "accepted",
        moba.now,
    )
    consistent(moba, moba_conn)


def test_creating_a_room_leaves_and_dissolves_the_owned_one(call, moba, moba_conn, pick):
    old = pick.my_room()
    members = val(moba_conn, "SELECT member_count FROM rooms WHERE id = ?", old)
    pending = val(moba_conn, "SELECT COUNT(*) FROM room_invitations WHERE room_id = ? AND status = 'pending'", old)
    res = ok(call(pick.actor, "create_room", {"name": "Fresh start", "mode": "classic"}))
    assert res["left_room"] == {"room_id": old, "name": val(moba_conn, "SELECT name FROM rooms WHERE id = ?", old), "dissolved": True}
    assert moba_conn.execute("SELECT status, closed_at, member_count FROM rooms WHERE id = ?", (old,)).fetchone() == ("closed", moba.now, 0)
    assert val(moba_conn, "SELECT COUNT(*) FROM room_members WHERE room_id = ?", old) == 0
    assert (
        val(moba_conn, "SELECT COUNT(*) FROM room_invitations WHERE room_id = ? AND status = 'expired' AND answered_at IS NULL", old)
        >= pending
    )
    assert members > 1 and res["capacity"] == 10
    consistent(moba, moba_conn)


def test_joining_a_room_as_a_member_leaves_the_previous_room(call, moba, moba_conn, pick):
    # A non-owner member of an open room accepts an invitation to another open room with space.
    room = pick.my_room()
    member = pick.val(
        "SELECT player_id FROM room_members WHERE room_id = ? AND player_id != ? ORDER BY player_id LIMIT 1", room, pick.actor
    )
    target = pick.val(
        "SELECT id FROM rooms WHERE status = 'open' AND member_count < capacity AND id != ? AND owner_id != ? ORDER BY id LIMIT 1",
        room,
        member,
    )
    owner = val(moba_conn, "SELECT owner_id FROM rooms WHERE id = ?", target)
    if val(
        moba_conn,
        "SELECT 1 FROM relations WHERE kind = 'blocked' AND ((player_id = ?1 AND other_id = ?2) OR (player_id = ?2 AND other_id = ?1))",
        owner,
        member,
    ):
        pytest.skip("the chosen players block each other")
    inv = ok(call(owner, "invite_to_room", {"room_id": target, "player_id": member}))["invitation_id"]
    before = val(moba_conn, "SELECT member_count FROM rooms WHERE id = ?", room)
    res = ok(call(member, "answer_room_invitation", {"invitation_id": inv, "accept": True}))
    assert res["left_room"] == {"room_id": room, "name": val(moba_conn, "SELECT name FROM rooms WHERE id = ?", room), "dissolved": False}
    assert val(moba_conn, "SELECT member_count FROM rooms WHERE id = ?", room) == before - 1
    assert val(moba_conn, "SELECT status FROM rooms WHERE id = ?", room) == "open"
    assert col(moba_conn, "SELECT room_id FROM room_members WHERE player_id = ?", member) == [target]
    consistent(moba, moba_conn)


def test_decline_room_invitation(call, moba, moba_conn, pick):
    inv = pick.invitation()
    room = val(moba_conn, "SELECT room_id FROM room_invitations WHERE id = ?", inv)
    members = val(moba_conn, "SELECT member_count FROM rooms WHERE id = ?", room)
    res = ok(call(pick.actor, "answer_room_invitation", {"invitation_id": inv, "accept": False}))
    assert res["status"] == "declined" and res["left_room"] is None
    assert moba_conn.execute("SELECT status, answered_at FROM room_invitations WHERE id = ?", (inv,)).fetchone() == ("declined", moba.now)
    assert val(moba_conn, "SELECT member_count FROM rooms WHERE id = ?", room) == members
    assert val(moba_conn, "SELECT COUNT(*) FROM room_members WHERE room_id = ? AND player_id = ?", room, pick.actor) == 0


def test_dissolve_room(call, moba, moba_conn, pick):
    room = pick.my_room()
    members = val(moba_conn, "SELECT COUNT(*) FROM room_members WHERE room_id = ?", room)
    pending = val(moba_conn, "SELECT COUNT(*) FROM room_invitations WHERE room_id = ? AND status = 'pending'", room)
    res = ok(call(pick.actor, "dissolve_room", {"room_id": room}))
    assert (res["members_removed"], res["invitations_expired"], res["status"]) == (members, pending, "closed")
    assert moba_conn.execute("SELECT status, closed_at, member_count FROM rooms WHERE id = ?", (room,)).fetchone() == (
        "closed",
        moba.now,
        0,
    )
    assert val(moba_conn, "SELECT COUNT(*) FROM room_invitations WHERE room_id = ? AND status = 'pending'", room) == 0
    assert room not in {r["room_id"] for r in all_pages(call, pick.actor, "list_rooms", {}, "room_id")}
    consistent(moba, moba_conn)


def test_approve_and_reject_team_applications(call, moba, moba_conn, pick):
    team = pick.my_team()
    application = pick.application()
    applicant = val(moba_conn, "SELECT player_id FROM team_applications WHERE id = ?", application)
    count = val(moba_conn, "SELECT member_count FROM teams WHERE id = ?", team)
    res = ok(call(pick.actor, "approve_team_application", {"application_id": application}))
    assert (res["status"], res["member_count"], res["player_id"]) == ("approved", count + 1, applicant)
    assert moba_conn.execute("SELECT status, reviewed_at, reviewed_by FROM team_applications WHERE id = ?", (application,)).fetchone() == (
        "approved",
        moba.now,
        pick.actor,
    )
    assert moba_conn.execute(
        "SELECT team_id, role, joined_at, contribution FROM team_members WHERE player_id = ?", (applicant,)
    ).fetchone() == (team, "member", moba.now, 0)
    assert val(moba_conn, "SELECT member_count FROM teams WHERE id = ?", team) == count + 1
    other = pick.val("SELECT id FROM team_applications WHERE team_id = ? AND status = 'pending' ORDER BY id LIMIT 1", team)
    res = ok(call(pick.actor, "reject_team_application", {"application_id": other}))
    assert res["status"] == "rejected"
    assert moba_conn.execute("SELECT status, reviewed_at, reviewed_by FROM team_applications WHERE id = ?", (other,)).fetchone() == (
        "rejected",
        moba.now,
        pick.actor,
    )
    assert val(moba_conn, "SELECT member_count FROM teams WHERE id = ?", team) == count + 1
    consistent(moba, moba_conn)


def test_favourite_and_unfavourite_match(call, moba, moba_conn, pick):
    match_id = pick.played_match()
    ok(call(pick.actor, "favourite_match", {"match_id": match_id, "note": " Pentakill "}))
    assert moba_conn.execute(
        "SELECT favourited_at, note FROM favourite_matches WHERE player_id = ? AND match_id = ?", (pick.actor, match_id)
    ).fetchone() == (moba.now, "Pentakill")
    assert ok(call(pick.actor, "get_match", {"match_id": match_id}))["favourited_by_me"] is True
    assert ok(call(pick.actor, "list_favourite_matches", {}))["items"][0]["match_id"] == match_id  # newest first
    ok(call(pick.actor, "unfavourite_match", {"match_id": match_id}))
    assert val(moba_conn, "SELECT COUNT(*) FROM favourite_matches WHERE player_id = ? AND match_id = ?", pick.actor, match_id) == 0
    consistent(moba, moba_conn)


@pytest.mark.parametrize("currency", ["coins", "diamonds"])
def test_buy_hero(currency, call, moba, moba_conn, pick):
    price_column = f"price_{currency}"
    buyer, hero = moba_conn.execute(
        f"""
        SELECT p.id, h.id FROM players p JOIN heroes h ON h.availability = 'shop' AND h.release_date <= ? AND h.{price_column} <= p.{currency}
        WHERE h.id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = p.id) ORDER BY p.id, h.id LIMIT 1""",
        (TODAY,),
    ).fetchone()
    balance, hero_count = moba_conn.execute(f"SELECT {currency}, hero_count FROM players WHERE id = ?", (buyer,)).fetchone()
    price, owners = moba_conn.execute(f"SELECT {price_column}, owner_count FROM heroes WHERE id = ?", (hero,)).fetchone()
    other = "diamonds" if currency == "coins" else "coins"
    untouched = val(moba_conn, f"SELECT {other} FROM players WHERE id = ?", buyer)
    res = ok(call(buyer, "buy_hero", {"hero_id": hero, "currency": currency}))
    assert res["price_paid"] == price and res["wallet"][currency] == balance - price and res["wallet"][other] == untouched
    assert moba_conn.execute(f"SELECT {currency}, {other}, hero_count FROM players WHERE id = ?", (buyer,)).fetchone() == (
        balance - price,
        untouched,
        hero_count + 1,
    )
    assert moba_conn.execute(
        "SELECT acquired_at, acquired_via, currency, price_paid, proficiency, matches_played, wins FROM player_heroes "
        "WHERE player_id = ? AND hero_id = ?",
        (buyer, hero),
    ).fetchone() == (moba.now, "purchase", currency, price, 0, 0, 0)
    assert val(moba_conn, "SELECT owner_count FROM heroes WHERE id = ?", hero) == owners + 1
    assert ok(call(buyer, "get_hero", {"hero_id": hero}))["owned_by_me"] is True
    consistent(moba, moba_conn)


# =========================================================================================
# 4. Product rules, one by one: refused, with the right code, and nothing changed
# =========================================================================================


def test_rule_insufficient_balance_is_a_conflict(call, pick, moba_conn, unchanged):
    poor = pick.val("SELECT id FROM players WHERE coins < (SELECT MIN(price_coins) FROM heroes) ORDER BY id LIMIT 1")
    hero = pick.shop_hero(affordable=False, player=poor)
    message = err(call(poor, "buy_hero", {"hero_id": hero, "currency": "coins"}), "conflict")
    assert "insufficient" in message
    # Exactly the price is enough; one coin less is not.
    price = val(moba_conn, "SELECT price_coins FROM heroes WHERE id = ?", hero)
    moba_conn.execute("UPDATE players SET coins = ? WHERE id = ?", (price - 1, poor))
    snapshot = content_hash(moba_conn)
    err(call(poor, "buy_hero", {"hero_id": hero, "currency": "coins"}), "conflict")
    assert content_hash(moba_conn) == snapshot
    moba_conn.execute("UPDATE players SET coins = ? WHERE id = ?", (price, poor))
    assert ok(call(poor, "buy_hero", {"hero_id": hero, "currency": "coins"}))["wallet"]["coins"] == 0


def test_rule_an_owned_hero_cannot_be_bought_again(call, pick, unchanged):
    hero = pick.shop_hero(owned=True)
    assert "already own" in err(call(pick.actor, "buy_hero", {"hero_id": hero, "currency": "diamonds"}), "conflict")
    unchanged()


@pytest.mark.parametrize(
    "where, needle",
    [
        ("availability = 'starter'", "not sold"),
        ("availability = 'event'", "not sold"),
        (f"release_date > '{TODAY}'", "released on"),
    ],
)
def test_rule_only_released_shop_heroes_are_sold(where, needle, call, pick, unchanged):
    message = err(call(pick.actor, "buy_hero", {"hero_id": pick.hero(where), "currency": "coins"}), "forbidden")
    assert needle in message
    unchanged()


@pytest.mark.parametrize(
    "case",
    ["yourself", "a friend", "someone you blocked", "someone who blocked you", "a pending request of yours", "a pending request to you"],
)
def test_rule_friend_requests(case, call, moba_conn, pick, unchanged):
    actor = pick.actor
    if case == "yourself":
        target, code = actor, "invalid_value"
    elif case == "a friend":
        target, code = pick.friend(), "conflict"
    elif case == "someone you blocked":
        target, code = pick.blocked(), "forbidden"
    elif case == "someone who blocked you":
        actor, target = moba_conn.execute(
            "SELECT other_id, player_id FROM relations WHERE kind = 'blocked' ORDER BY player_id LIMIT 1"
        ).fetchone()
        code = "forbidden"
    elif case == "a pending request of yours":
        actor, target = moba_conn.execute(
            "SELECT sender_id, receiver_id FROM friend_requests WHERE status = 'pending' ORDER BY id LIMIT 1"
        ).fetchone()
        code = "conflict"
    else:
        target, actor = moba_conn.execute(
            "SELECT sender_id, receiver_id FROM friend_requests WHERE status = 'pending' ORDER BY id LIMIT 1"
        ).fetchone()
        code = "conflict"
    err(call(actor, "send_friend_request", {"player_id": target}), code)
    unchanged()


def test_rule_only_the_receiver_answers_a_friend_request_once(call, moba_conn, pick, unchanged):
    request = pick.received_request()
    sender = val(moba_conn, "SELECT sender_id FROM friend_requests WHERE id = ?", request)
    err(call(sender, "answer_friend_request", {"request_id": request, "accept": True}), "forbidden")
    err(call(pick.actor, "answer_friend_request", {"request_id": pick.answered_request(), "accept": True}), "forbidden")
    answered = (
        pick.val("SELECT id FROM friend_requests WHERE receiver_id = ? AND status != 'pending' ORDER BY id LIMIT 1", pick.actor)
        if val(moba_conn, "SELECT 1 FROM friend_requests WHERE receiver_id = ? AND status != 'pending'", pick.actor)
        else None
    )
    if answered:
        err(call(pick.actor, "answer_friend_request", {"request_id": answered, "accept": False}), "conflict")
    unchanged()


def test_rule_room_capacity(call, moba_conn, pick, unchanged):
    full = pick.room("open", full=True)
    member = val(moba_conn, "SELECT player_id FROM room_members WHERE room_id = ? ORDER BY player_id LIMIT 1", full)
    outsider = pick.stranger(0, of=member)
    assert "full" in err(call(member, "invite_to_room", {"room_id": full, "player_id": outsider}), "conflict")
    # A pending invitation to a room that filled up cannot be accepted.
    room = pick.my_room()
    invitee = pick.stranger()
    inv = ok(call(pick.actor, "invite_to_room", {"room_id": room, "player_id": invitee}))["invitation_id"]
    moba_conn.execute("UPDATE rooms SET capacity = member_count WHERE id = ?", (room,))
    snapshot = content_hash(moba_conn)
    assert "full" in err(call(invitee, "answer_room_invitation", {"invitation_id": inv, "accept": True}), "conflict")
    assert content_hash(moba_conn) == snapshot


@pytest.mark.parametrize("status", ["in_game", "closed"])
def test_rule_only_the_owner_dissolves_an_open_room(status, call, moba_conn, pick, unchanged):
    room = pick.my_room()
    member = pick.val(
        "SELECT player_id FROM room_members WHERE room_id = ? AND player_id != ? ORDER BY player_id LIMIT 1", room, pick.actor
    )
    assert "owner" in err(call(member, "dissolve_room", {"room_id": room}), "forbidden")
    other = pick.room(status)
    owner = val(moba_conn, "SELECT owner_id FROM rooms WHERE id = ?", other)
    err(call(owner, "dissolve_room", {"room_id": other}), "conflict")
    err(call(pick.actor, "dissolve_room", {"room_id": other}), "forbidden")
    unchanged()


def test_rule_room_invitations(call, moba_conn, pick, unchanged):
    room = pick.my_room()
    member = pick.val(
        "SELECT player_id FROM room_members WHERE room_id = ? AND player_id != ? ORDER BY player_id LIMIT 1", room, pick.actor
    )
    err(call(pick.actor, "invite_to_room", {"room_id": room, "player_id": member}), "conflict")  # already in
    err(call(pick.actor, "invite_to_room", {"room_id": room, "player_id": pick.actor}), "invalid_value")
    err(call(pick.actor, "invite_to_room", {"room_id": room, "player_id": pick.blocked()}), "forbidden")
    pending = pick.val("SELECT invitee_id FROM room_invitations WHERE room_id = ? AND status = 'pending' ORDER BY id LIMIT 1", room)
    err(call(pick.actor, "invite_to_room", {"room_id": room, "player_id": pending}), "conflict")  # already invited
    foreign = pick.room("open", full=False)
    err(call(pick.actor, "invite_to_room", {"room_id": foreign, "player_id": pick.stranger()}), "forbidden")  # not a member
    in_game = pick.room("in_game")
    player = val(moba_conn, "SELECT player_id FROM room_members WHERE room_id = ? LIMIT 1", in_game)
    err(call(player, "invite_to_room", {"room_id": in_game, "player_id": pick.actor}), "conflict")  # not open
    # Only the invitee answers; an answered invitation stays answered; a running game cannot be left.
    inv = pick.invitation()
    err(call(pick.friend(), "answer_room_invitation", {"invitation_id": inv, "accept": True}), "forbidden")
    answered = pick.val("SELECT id FROM room_invitations WHERE status != 'pending' ORDER BY id LIMIT 1")
    err(
        call(
            val(moba_conn, "SELECT invitee_id FROM room_invitations WHERE id = ?", answered),
            "answer_room_invitation",
            {"invitation_id": answered, "accept": True},
        ),
        "conflict",
    )
    unchanged()


def test_rule_a_running_game_cannot_be_left(call, moba_conn, pick, unchanged):
    player = pick.val(
        "SELECT m.player_id FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE r.status = 'in_game' ORDER BY 1 LIMIT 1"
    )
    assert "running game" in err(call(player, "create_room", {"name": "x", "mode": "brawl"}), "conflict")
    unchanged()


def test_rule_only_officers_review_applications(call, moba_conn, pick, unchanged):
    application = pick.application()
    member = val(
        moba_conn,
        "SELECT player_id FROM team_members WHERE team_id = ? AND role IN ('member', 'elite') ORDER BY player_id LIMIT 1",
        pick.my_team(),
    )
    for actor in [a for a in (member, pick.stranger()) if a]:
        err(call(actor, "approve_team_application", {"application_id": application}), "forbidden")
        err(call(actor, "reject_team_application", {"application_id": application}), "forbidden")
        err(call(actor, "list_team_applications", {"team_id": pick.my_team()}), "forbidden")
    err(call(pick.actor, "approve_team_application", {"application_id": pick.foreign_application()}), "forbidden")
    unchanged()


def test_rule_a_clan_member_cannot_be_approved_into_another_clan(call, pick, unchanged):
    application = pick.application(clanless=False)
    assert "already in the clan" in err(call(pick.actor, "approve_team_application", {"application_id": application}), "conflict")
    unchanged()


def test_rule_a_full_clan_takes_no_one(call, moba_conn, pick, unchanged):
    team, leader = moba_conn.execute(
        "SELECT t.id, t.leader_id FROM teams t WHERE t.member_count >= t.capacity AND EXISTS (SELECT 1 FROM "
        "team_applications a WHERE a.team_id = t.id AND a.status = 'pending' AND a.player_id NOT IN "
        "(SELECT player_id FROM team_members)) ORDER BY t.id LIMIT 1"
    ).fetchone()
    application = pick.application(team=team)
    assert "full" in err(call(leader, "approve_team_application", {"application_id": application}), "conflict")
    ok(call(leader, "reject_team_application", {"application_id": application}))  # rejecting is always possible


def test_rule_applications_are_reviewed_once(call, pick, unchanged):
    for status in ("approved", "rejected"):
        application = pick.val(
            "SELECT id FROM team_applications WHERE team_id = ? AND status = ? ORDER BY id LIMIT 1", pick.my_team(), status
        )
        err(call(pick.actor, "approve_team_application", {"application_id": application}), "conflict")
        err(call(pick.actor, "reject_team_application", {"application_id": application}), "conflict")
    unchanged()


def test_rule_only_own_matches_are_favourited_once(call, pick, unchanged):
    assert "did not play" in err(call(pick.actor, "favourite_match", {"match_id": pick.unplayed_match()}), "forbidden")
    err(call(pick.actor, "favourite_match", {"match_id": pick.played_match(favourited=True)}), "conflict")
    err(call(pick.actor, "unfavourite_match", {"match_id": pick.played_match()}), "conflict")
    unchanged()


def test_rule_duplicates_and_missing_relations_are_conflicts(call, pick, unchanged):
    err(call(pick.actor, "block_player", {"player_id": pick.blocked()}), "conflict")
    err(call(pick.actor, "unblock_player", {"player_id": pick.friend()}), "conflict")
    err(call(pick.actor, "remove_friend", {"player_id": pick.stranger()}), "conflict")
    err(call(pick.actor, "block_player", {"player_id": pick.actor}), "invalid_value")
    unchanged()


# =========================================================================================
# 5. Errors: argument problems, unknown ids, bad values
# =========================================================================================

ERROR_CASES: dict[str, tuple[Callable[[Pick], tuple[str, Any]], str, str | None]] = {
    "missing required": (lambda p: ("get_hero", {}), "invalid_arguments", "hero_id"),
    "missing currency": (lambda p: ("buy_hero", {"hero_id": p.shop_hero()}), "invalid_arguments", "currency"),
    "unknown argument": (lambda p: ("get_match", {"match_id": p.played_match(), "matchid": 1}), "invalid_arguments", "matchid"),
    "string for int": (lambda p: ("get_player", {"player_id": str(p.friend())}), "invalid_arguments", "player_id"),
    "bool for int": (lambda p: ("remove_friend", {"player_id": True}), "invalid_arguments", "player_id"),
    "string for bool": (
        lambda p: ("answer_friend_request", {"request_id": p.received_request(), "accept": "yes"}),
        "invalid_arguments",
        "accept",
    ),
    "enum case": (lambda p: ("search_players", {"tier": "diamond"}), "invalid_arguments", "tier"),
    "unknown region": (lambda p: ("get_rank", {"region": "Antarctica"}), "invalid_arguments", "region"),
    "unknown currency": (lambda p: ("buy_hero", {"hero_id": p.shop_hero(), "currency": "gold"}), "invalid_arguments", "currency"),
    "unknown room mode": (lambda p: ("create_room", {"name": "x", "mode": "ARAM"}), "invalid_arguments", "mode"),
    "fraction page": (lambda p: ("list_friends", {"page": 1.5}), "invalid_arguments", "page"),
    "invalid json": (lambda p: ("get_hero", '{"hero_id": 1'), "invalid_arguments", "JSON"),
    "json array": (lambda p: ("get_hero", "[1]"), "invalid_arguments", "object"),
    "huge id": (lambda p: ("get_match", {"match_id": 2**63}), "invalid_arguments", None),
    # unknown ids
    "get_player unknown": (lambda p: ("get_player", {"player_id": p.missing("players")}), "not_found", "player"),
    "get_hero unknown": (lambda p: ("get_hero", {"hero_id": p.missing("heroes")}), "not_found", "hero"),
    "get_team unknown": (lambda p: ("get_team", {"team_id": p.missing("teams")}), "not_found", "clan"),
    "get_room unknown": (lambda p: ("get_room", {"room_id": p.missing("rooms")}), "not_found", "room"),
    "get_match unknown": (lambda p: ("get_match", {"match_id": p.missing("matches")}), "not_found", "match"),
    "get_rank unknown season": (lambda p: ("get_rank", {"season_id": p.missing("seasons")}), "not_found", "season"),
    "history unknown player": (lambda p: ("list_match_history", {"player_id": p.missing("players")}), "not_found", "player"),
    "history unknown hero": (lambda p: ("list_match_history", {"hero_id": p.missing("heroes")}), "not_found", "hero"),
    "history unknown season": (lambda p: ("list_match_history", {"season_id": p.missing("seasons")}), "not_found", "season"),
    "applications unknown clan": (lambda p: ("list_team_applications", {"team_id": p.missing("teams")}), "not_found", "clan"),
    "send to unknown": (lambda p: ("send_friend_request", {"player_id": p.missing("players")}), "not_found", None),
    "answer unknown request": (
        lambda p: ("answer_friend_request", {"request_id": p.missing("friend_requests"), "accept": True}),
        "not_found",
        None,
    ),
    "remove unknown": (lambda p: ("remove_friend", {"player_id": p.missing("players")}), "not_found", None),
    "block unknown": (lambda p: ("block_player", {"player_id": -1}), "not_found", None),
    "unblock unknown": (lambda p: ("unblock_player", {"player_id": p.missing("players")}), "not_found", None),
    "dissolve unknown": (lambda p: ("dissolve_room", {"room_id": p.missing("rooms")}), "not_found", None),
    "invite to unknown room": (lambda p: ("invite_to_room", {"room_id": p.missing("rooms"), "player_id": p.stranger()}), "not_found", None),
    "invite unknown player": (lambda p: ("invite_to_room", {"room_id": p.my_room(), "player_id": p.missing("players")}), "not_found", None),
    "answer unknown invitation": (
        lambda p: ("answer_room_invitation", {"invitation_id": p.missing("room_invitations"), "accept": True}),
        "not_found",
        None,
    ),
    "approve unknown": (lambda p: ("approve_team_application", {"application_id": p.missing("team_applications")}), "not_found", None),
    "reject unknown": (lambda p: ("reject_team_application", {"application_id": p.missing("team_applications")}), "not_found", None),
    "favourite unknown": (lambda p: ("favourite_match", {"match_id": p.missing("matches")}), "not_found", None),
    "unfavourite unknown": (lambda p: ("unfavourite_match", {"match_id": p.missing("matches")}), "not_found", None),
    "buy unknown": (lambda p: ("buy_hero", {"hero_id": p.missing("heroes"), "currency": "coins"}), "not_found", None),
    # bad values
    "history bad date": (lambda p: ("list_match_history", {"start_date": "2026-02-30"}), "invalid_value", "start_date"),
    "history unpadded date": (lambda p: ("list_match_history", {"end_date": "2026-5-1"}), "invalid_value", "end_date"),
    "history start after end": (
        lambda p: ("list_match_history", {"start_date": "2026-06-02", "end_date": "2026-06-01"}),
        "invalid_value",
        None,
    ),
    "request message over 100": (
        lambda p: ("send_friend_request", {"player_id": p.stranger(), "message": "x" * 101}),
        "invalid_value",
        "100",
    ),
    "note over 100": (lambda p: ("favourite_match", {"match_id": p.played_match(), "note": "x" * 101}), "invalid_value", "100"),
    "empty room name": (lambda p: ("create_room", {"name": "   ", "mode": "classic"}), "invalid_value", None),
    "31-char room name": (lambda p: ("create_room", {"name": "r" * 31, "mode": "classic"}), "invalid_value", "30"),
    "custom room too big": (lambda p: ("create_room", {"name": "x", "mode": "custom", "capacity": 11}), "invalid_value", "2 to 10"),
    "custom room too small": (lambda p: ("create_room", {"name": "x", "mode": "custom", "capacity": 1}), "invalid_value", None),
    "ranked room capacity": (lambda p: ("create_room", {"name": "x", "mode": "ranked", "capacity": 10}), "invalid_value", "5"),
    "short password": (lambda p: ("create_room", {"name": "x", "mode": "classic", "password": "123"}), "invalid_value", "digits"),
    "letters password": (lambda p: ("create_room", {"name": "x", "mode": "classic", "password": "abcd"}), "invalid_value", "digits"),
    "unfriend yourself": (lambda p: ("remove_friend", {"player_id": p.actor}), "invalid_value", None),
    "invite yourself": (lambda p: ("invite_to_room", {"room_id": p.my_room(), "player_id": p.actor}), "invalid_value", None),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_error_result_and_nothing_changed(case, call, pick, unchanged):
    build, code, needle = ERROR_CASES[case]
    tool, args = build(pick)
    message = err(call(pick.actor, tool, args), code)
    if needle:
        assert needle.lower() in message.lower(), message
    unchanged()


def test_boundary_lengths_are_accepted(call, moba_conn, pick):
    ok(call(pick.stranger(), "create_room", {"name": "r" * 30, "mode": "custom", "capacity": 2, "password": "123456"}))
    ok(call(pick.actor, "send_friend_request", {"player_id": pick.stranger(), "message": "m" * 100}))
    ok(call(pick.actor, "favourite_match", {"match_id": pick.played_match(), "note": "n" * 100}))


def test_failed_write_after_successful_writes_keeps_only_the_successes(call, moba_conn, pick):
    other = pick.stranger()
    request = ok(call(pick.actor, "send_friend_request", {"player_id": other}))["request_id"]
    before = content_hash(moba_conn)
    err(call(pick.actor, "send_friend_request", {"player_id": other}), "conflict")
    err(call(pick.actor, "buy_hero", {"hero_id": pick.shop_hero(owned=True), "currency": "coins"}), "conflict")
    assert content_hash(moba_conn) == before
    assert val(moba_conn, "SELECT status FROM friend_requests WHERE id = ?", request) == "pending"


# A temporary trigger makes a write tool's later statement fail after its first write: the
# savepoint must undo the first write too. tool -> (trigger event, builder(pick) -> (actor, args))
MIDWAY_FAILURES: dict[str, tuple[str, Callable[[Pick], tuple[int, dict[str, Any]]]]] = {
    "buy_hero": ("UPDATE ON heroes", lambda p: (p.actor, {"hero_id": p.shop_hero(), "currency": "coins"})),
    "answer_friend_request": ("UPDATE ON friend_requests", lambda p: (p.actor, {"request_id": p.received_request(), "accept": True})),
    # A friendship made by an accepted request: removing it deletes the request too.
    "remove_friend": (
        "DELETE ON friend_requests",
        lambda p: (lambda sender, receiver: (sender, {"player_id": receiver}))(
            *p.conn.execute("SELECT sender_id, receiver_id FROM friend_requests WHERE status = 'accepted' ORDER BY id LIMIT 1").fetchone()
        ),
    ),
    "block_player": ("INSERT ON relations", lambda p: (p.actor, {"player_id": p.friend()})),
    "dissolve_room": ("UPDATE ON rooms", lambda p: (p.actor, {"room_id": p.my_room()})),
    "create_room": ("INSERT ON room_members", lambda p: (p.actor, {"name": "x", "mode": "brawl"})),
    "answer_room_invitation": ("UPDATE ON room_invitations", lambda p: (p.actor, {"invitation_id": p.invitation(), "accept": True})),
    "approve_team_application": ("UPDATE ON team_applications", lambda p: (p.actor, {"application_id": p.application()})),
}


@pytest.mark.parametrize("tool", list(MIDWAY_FAILURES))
def test_write_failing_midway_is_rolled_back(tool, call, pick, moba_conn, unchanged):
    event, build = MIDWAY_FAILURES[tool]
    actor, args = build(pick)
    moba_conn.execute(f"CREATE TEMP TRIGGER fail_midway BEFORE {event} BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
    assert "injected failure" in err(call(actor, tool, args), "internal_error")
    unchanged()
    moba_conn.execute("DROP TRIGGER fail_midway")
    ok(call(actor, tool, args))


# =========================================================================================
# 6. Generic checks over every tool
# =========================================================================================


def test_happy_args_cover_every_tool(pick):
    assert set(happy_args(pick)) == set(ALL_TOOLS)


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_unknown_extra_argument_is_refused_and_happy_call_works(tool, call, moba, pick, moba_conn, world_hash, unchanged):
    """An unknown extra argument is refused and changes nothing; the same call without it
    succeeds, leaves the world as it was for a read tool, and changes it consistently for a write."""
    args = happy_args(pick)[tool]
    assert "bogus_extra" in err(call(pick.actor, tool, {**args, "bogus_extra": 1}), "invalid_arguments")
    if moba.tools.get(tool).kind == WRITE:
        unchanged()
    value = ok(call(pick.actor, tool, args))
    assert value
    json.dumps(value)
    if moba.tools.get(tool).kind == READ:
        unchanged()
    else:
        assert content_hash(moba_conn) != world_hash
        consistent(moba, moba_conn)


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_docstring_documents_every_argument_and_the_tag_is_right(tool, moba):
    t = moba.tools.get(tool)
    signature = list(inspect.signature(t.func).parameters.values())[1:]  # after env
    summary, description, arg_docs = parse_docstring(t.func.__doc__)
    assert summary and description and "Args:" not in t.description
    assert set(arg_docs) == {p.name for p in signature}
    assert all(arg_docs[p.name].strip() for p in signature)
    schema = t.parameters
    assert schema["additionalProperties"] is False and list(schema["properties"]) == [p.name for p in signature]
    assert schema["required"] == [p.name for p in signature if p.default is inspect.Parameter.empty]
    for p in signature:
        if p.default is not inspect.Parameter.empty and p.name not in ("page", "query", "message", "note", "sort_by", "direction"):
            assert p.default is None, f"optional filter {tool}.{p.name} should default to None"
    assert (t.kind == WRITE) == tool.startswith(WRITE_VERBS), f"{tool} is tagged {t.kind}"
    assert t.openai_schema()["function"] == {"name": tool, "description": t.description, "parameters": schema}
