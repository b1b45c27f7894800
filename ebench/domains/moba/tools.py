"""The MOBA platform's tools: what a player can do in the game client, acting as the current player.

Every tool is declared once here; its JSON schema comes from its signature and docstring.
Results speak product language (nicknames next to ids), lists come in pages of 20, and a
refused action raises ToolError, which the registry turns into an error result with nothing
changed. Refusal codes: not_found (unknown id), forbidden (not allowed for this player: not the
room owner, not a clan officer, a block in the way, a hero the shop does not sell), conflict
(the current state does not allow it: already friends, a full room or clan, a duplicate, an
insufficient balance), invalid_value (a bad argument value).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from ...engine.query import NamedWhere, bool_columns, check_date_range, check_text, require, sql_literal
from ...engine.search import like_pattern
from ...engine.tools import PAGE_SIZE, ErrorCode, ToolEnv, ToolError, ToolRegistry, check_page, not_found, paginate
from .schema import ROOM_CAPACITY, rank_score, tier_index
from .vocabulary import TIERS

TOOLS = ToolRegistry("moba")

Tier = Literal["Bronze", "Silver", "Gold", "Platinum", "Diamond", "Master", "Grandmaster", "Mythic"]
Region = Literal["East Asia", "Southeast Asia", "Europe", "Americas", "Middle East"]
Role = Literal["tank", "fighter", "assassin", "mage", "marksman", "support"]
Mode = Literal["ranked", "classic", "brawl"]
RoomMode = Literal["ranked", "classic", "brawl", "custom"]

MESSAGE_LIMIT = 100
ROOM_NAME_LIMIT = 30
DATE_EXAMPLE = "2026-05-31"  # the date messages show
# Mastery titles by proficiency points, as the hero page shows them.
MASTERY = ((20000, "Grandmaster"), (8000, "Master"), (3000, "Expert"), (1000, "Adept"), (0, "Novice"))

CURRENT_SEASON_SQL = "(SELECT id FROM seasons WHERE start_date <= :today AND end_date >= :today)"

PLAYER_COLUMNS = "p.id AS player_id, p.nickname, p.level, p.tier, p.stars, p.region, p.server, p.status"


# -- shared helpers ------------------------------------------------------------------------


def _today(env: ToolEnv) -> str:
    return env.now[:10]


def _current_season(env: ToolEnv) -> int:
    season: int = env.scalar(f"SELECT {CURRENT_SEASON_SQL}", {"today": _today(env)})
    return season


def _player(env: ToolEnv, player_id: int) -> dict[str, Any]:
    return require(env, "players", player_id, "player")


def _other_player(env: ToolEnv, player_id: int, action: str) -> dict[str, Any]:
    player = _player(env, player_id)
    if player_id == env.actor_id:
        raise ToolError(ErrorCode.INVALID_VALUE, f"You cannot {action} yourself.")
    return player


def _relation(env: ToolEnv, a: int, b: int) -> str | None:
    """'friend', 'blocked' (a blocked b) or None."""
    kind: str | None = env.scalar("SELECT kind FROM relations WHERE player_id = ? AND other_id = ?", (a, b))
    return kind


def _block_between(env: ToolEnv, other: dict[str, Any], action: str) -> None:
    if _relation(env, env.actor_id, other["id"]) == "blocked":
        raise ToolError(ErrorCode.FORBIDDEN, f"You blocked {other['nickname']}; unblock them before you {action}.")
    if _relation(env, other["id"], env.actor_id) == "blocked":
        raise ToolError(ErrorCode.FORBIDDEN, f"{other['nickname']} has blocked you, so you cannot {action}.")


def _mastery(points: int) -> str:
    return next(title for floor, title in MASTERY if points >= floor)


def _rate(wins: int, games: int) -> float | None:
    return round(100 * wins / games, 1) if games else None


def _team_officer(env: ToolEnv, team_id: int) -> str:
    """The actor's role in a clan, refusing unless leader or vice leader."""
    role: str | None = env.scalar("SELECT role FROM team_members WHERE team_id = ? AND player_id = ?", (team_id, env.actor_id))
    if role is None or role not in ("leader", "vice_leader"):
        raise ToolError(ErrorCode.FORBIDDEN, "Only the clan's leader or a vice leader can review its applications.")
    return role


def _active_room(env: ToolEnv, player_id: int) -> dict[str, Any] | None:
    return env.one(
        "SELECT r.id, r.name, r.status FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = ? AND r.status != 'closed'",
        (player_id,),
    )


# -- profile and players -------------------------------------------------------------------


@TOOLS.read
def get_my_profile(env: ToolEnv) -> dict[str, Any]:
    """Show the current player's profile: nickname, level, region and server, current rank,
    wallet (coins and diamonds), clan, the room they are in, and counts of heroes, friends and
    pending requests and invitations.
    """
    me = env.one(
        f"SELECT {PLAYER_COLUMNS}, p.coins, p.diamonds, p.created_at, p.last_login, p.signature, p.hero_count, "
        "p.total_matches, p.total_wins, p.mvp_count FROM players p WHERE p.id = ?",
        (env.actor_id,),
    )
    assert me is not None
    me["wallet"] = {"coins": me.pop("coins"), "diamonds": me.pop("diamonds")}
    me["win_rate"] = _rate(me["total_wins"], me["total_matches"])
    me["clan"] = env.one(
        "SELECT t.id AS team_id, t.name, m.role FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.player_id = ?",
        (env.actor_id,),
    )
    room = _active_room(env, env.actor_id)
    me["room"] = {"room_id": room["id"], "name": room["name"], "status": room["status"]} if room else None
    season = env.one(
        "SELECT id AS season_id, name, start_date, end_date FROM seasons WHERE start_date <= ? AND end_date >= ?",
        (_today(env), _today(env)),
    )
    me["current_season"] = season
    counts = env.one(
        "SELECT (SELECT COUNT(*) FROM relations WHERE player_id = :u AND kind = 'friend') AS friends, "
        "(SELECT COUNT(*) FROM relations WHERE player_id = :u AND kind = 'blocked') AS blocked_players, "
        "(SELECT COUNT(*) FROM friend_requests WHERE receiver_id = :u AND status = 'pending') AS pending_friend_requests, "
        "(SELECT COUNT(*) FROM room_invitations WHERE invitee_id = :u AND status = 'pending') AS pending_room_invitations, "
        "(SELECT COUNT(*) FROM favourite_matches WHERE player_id = :u) AS favourite_matches",
        {"u": env.actor_id},
    )
    return {**me, **(counts or {}), "now": env.now}


@TOOLS.read
def search_players(
    env: ToolEnv,
    query: str = "",
    region: Region | None = None,
    tier: Tier | None = None,
    status: Literal["online", "offline", "in_match"] | None = None,
    sort_by: Literal["relevance", "rank", "level", "nickname"] = "relevance",
    page: int = 1,
) -> dict[str, Any]:
    """Search players by nickname, with filters.

    Returns one page (20 players) with the total: id, nickname, level, current tier and stars,
    region, server, online status, and whether each is the current player's friend.

    Args:
        query: Text to find in the nickname (case-insensitive); empty matches every player.
        region: Only players of this region.
        tier: Only players currently in this ranked tier.
        status: Only players with this status: online, offline, or in a match.
        sort_by: relevance puts exact nicknames first, then the highest rank; rank: highest rank first; level: highest level first; nickname: A to Z.
        page: Page number, from 1.
    """
    where = NamedWhere(u=env.actor_id)
    text = query.strip()
    if text:
        where.add("p.nickname LIKE :q ESCAPE '\\'", q=like_pattern(text))
    for name, value in (("region", region), ("tier", tier), ("status", status)):
        if value is not None:
            where.add(f"p.{name} = :{name}", **{name: value})
    score = rank_score("p.tier", "p.stars")
    order = {
        "relevance": f"(p.nickname = {sql_literal(text)} COLLATE NOCASE) DESC, {score} DESC, p.id",
        "rank": f"{score} DESC, p.id",
        "level": "p.level DESC, p.id",
        "nickname": "p.nickname COLLATE NOCASE, p.id",
    }[sort_by]
    select = (
        f"SELECT {PLAYER_COLUMNS}, EXISTS (SELECT 1 FROM relations f WHERE f.player_id = :u AND f.other_id = p.id "
        f"AND f.kind = 'friend') AS is_friend FROM players p WHERE {where.condition}"
    )
    count = f"SELECT COUNT(*) FROM players p WHERE {where.condition}"
    return paginate(env, select, where.params, page, order, bool_columns("is_friend"), count=count)


@TOOLS.read
def get_player(env: ToolEnv, player_id: int) -> dict[str, Any]:
    """Show a player's public profile: level, region, current rank, record, clan, their three
    most practised heroes, and how they relate to the current player (friend and intimacy,
    blocked either way, a pending friend request either way).

    Args:
        player_id: The player's id.
    """
    # Two statements: the profile with clan and relations joined, then the top heroes.
    player = env.one(
        f"SELECT {PLAYER_COLUMNS}, p.signature, p.created_at, p.last_login, p.hero_count, p.total_matches, p.total_wins, "
        "p.mvp_count, t.id AS team_id, t.name AS team_name, m.role AS team_role, mine.kind AS my_kind, mine.since AS my_since, "
        "mine.intimacy AS my_intimacy, theirs.kind AS their_kind, fr.id AS request_id, fr.sender_id AS request_sender "
        "FROM players p LEFT JOIN team_members m ON m.player_id = p.id LEFT JOIN teams t ON t.id = m.team_id "
        "LEFT JOIN relations mine ON mine.player_id = :u AND mine.other_id = p.id "
        "LEFT JOIN relations theirs ON theirs.player_id = p.id AND theirs.other_id = :u "
        "LEFT JOIN friend_requests fr ON fr.id = (SELECT f.id FROM friend_requests f WHERE f.status = 'pending' "
        "AND ((f.sender_id = :u AND f.receiver_id = p.id) OR (f.sender_id = p.id AND f.receiver_id = :u))) WHERE p.id = :p",
        {"u": env.actor_id, "p": player_id},
    )
    if player is None:
        raise not_found("player", player_id)
    team_id, team_name, team_role = player.pop("team_id"), player.pop("team_name"), player.pop("team_role")
    kind, since, intimacy = player.pop("my_kind"), player.pop("my_since"), player.pop("my_intimacy")
    theirs, request_id, sender = player.pop("their_kind"), player.pop("request_id"), player.pop("request_sender")
    player["win_rate"] = _rate(player["total_wins"], player["total_matches"])
    player["clan"] = {"team_id": team_id, "name": team_name, "role": team_role} if team_id is not None else None
    player["top_heroes"] = [
        {**r, "mastery": _mastery(r["proficiency"])}
        for r in env.all(
            "SELECT h.id AS hero_id, h.name, h.role, ph.proficiency, ph.matches_played, ph.wins FROM player_heroes ph "
            "JOIN heroes h ON h.id = ph.hero_id WHERE ph.player_id = ? ORDER BY ph.proficiency DESC, h.id LIMIT 3",
            (player_id,),
        )
    ]
    if player_id != env.actor_id:
        friend = kind == "friend"
        player["relation"] = {
            "is_friend": friend,
            "friends_since": since if friend else None,
            "intimacy": intimacy if friend else None,
            "blocked_by_me": kind == "blocked",
            "has_blocked_me": theirs == "blocked",
            "pending_request_id": request_id,
            "pending_request_from": None if request_id is None else "me" if sender == env.actor_id else "them",
        }
    return player


# -- heroes --------------------------------------------------------------------------------

HERO_SELECT = """
SELECT h.id AS hero_id, h.name, h.title, h.role, h.secondary_role, h.lane, h.difficulty, h.availability,
       h.price_coins, h.price_diamonds, h.release_date, h.owner_count,
       EXISTS (SELECT 1 FROM player_heroes o WHERE o.player_id = :u AND o.hero_id = h.id) AS owned_by_me
FROM heroes h
"""


def _hero(env: ToolEnv) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The shaping of a hero row for the actor (owned, released by today)."""
    today = _today(env)

    def shape(row: dict[str, Any]) -> dict[str, Any]:
        row["owned_by_me"] = bool(row["owned_by_me"])
        row["released"] = row["release_date"] <= today
        return row

    return shape


@TOOLS.read
def search_heroes(
    env: ToolEnv,
    query: str = "",
    role: Role | None = None,
    lane: Literal["clash", "mid", "farm", "jungle", "roam"] | None = None,
    difficulty: Literal["easy", "normal", "hard"] | None = None,
    availability: Literal["shop", "starter", "event"] | None = None,
    owned: bool | None = None,
    max_price_coins: int | None = None,
    max_price_diamonds: int | None = None,
    sort_by: Literal["name", "price", "newest", "popularity"] = "name",
    page: int = 1,
) -> dict[str, Any]:
    """Browse and search the hero roster, with filters (owned or not, role, price...).

    Returns one page (20 heroes) with the total: id, name, title, role and secondary role, lane,
    difficulty, availability, prices in coins and diamonds (shop heroes only), release date,
    whether released, how many players own it and whether the current player owns it.

    Args:
        query: Text to find in the hero's name or title (case-insensitive); empty matches every hero.
        role: Only heroes whose main or secondary role is this one.
        lane: Only heroes played in this lane.
        difficulty: Only heroes of this difficulty.
        availability: shop (sold for coins or diamonds), starter (every player has them) or event (event rewards only).
        owned: true for the current player's heroes only, false for heroes they do not own yet.
        max_price_coins: Only shop heroes costing at most this many coins.
        max_price_diamonds: Only shop heroes costing at most this many diamonds.
        sort_by: name (A to Z), price (cheapest in coins first), newest (latest release first) or popularity (most owners first).
        page: Page number, from 1.
    """
    where = NamedWhere(u=env.actor_id)
    if query.strip():
        where.add("(h.name LIKE :q ESCAPE '\\' OR h.title LIKE :q ESCAPE '\\')", q=like_pattern(query.strip()))
    if role is not None:
        where.add("(h.role = :role OR h.secondary_role = :role)", role=role)
    for name, value in (("lane", lane), ("difficulty", difficulty), ("availability", availability)):
        if value is not None:
            where.add(f"h.{name} = :{name}", **{name: value})
    if owned is not None:
        where.add(("" if owned else "NOT ") + "EXISTS (SELECT 1 FROM player_heroes o WHERE o.player_id = :u AND o.hero_id = h.id)")
    if max_price_coins is not None:
        where.add("h.price_coins <= :max_coins", max_coins=max_price_coins)
    if max_price_diamonds is not None:
        where.add("h.price_diamonds <= :max_diamonds", max_diamonds=max_price_diamonds)
    order = {
        "name": "h.name COLLATE NOCASE, h.id",
        "price": "h.price_coins IS NULL, h.price_coins, h.name COLLATE NOCASE, h.id",
        "newest": "h.release_date DESC, h.id DESC",
        "popularity": "h.owner_count DESC, h.id",
    }[sort_by]
    return paginate(env, HERO_SELECT + " WHERE " + where.condition, where.params, page, order, _hero(env))


@TOOLS.read
def get_hero(env: ToolEnv, hero_id: int) -> dict[str, Any]:
    """Show a hero in full: title, roles, lane, difficulty, lore, prices, release date, how many
    players own it, and the current player's ownership and record with it.

    Args:
        hero_id: The hero's id.
    """
    hero = env.one(
        HERO_SELECT.replace("h.owner_count,", "h.owner_count, h.lore,", 1) + " WHERE h.id = :h", {"u": env.actor_id, "h": hero_id}
    )
    if hero is None:
        raise not_found("hero", hero_id)
    hero = _hero(env)(hero)
    mine = env.one(
        "SELECT acquired_at, acquired_via, currency, price_paid, proficiency, matches_played, wins FROM player_heroes "
        "WHERE player_id = ? AND hero_id = ?",
        (env.actor_id, hero_id),
    )
    if mine:
        mine["mastery"] = _mastery(mine["proficiency"])
        mine["win_rate"] = _rate(mine["wins"], mine["matches_played"])
    hero["my_hero"] = mine
    return hero


@TOOLS.read
def list_my_heroes(
    env: ToolEnv,
    role: Role | None = None,
    sort_by: Literal["proficiency", "matches", "win_rate", "recent", "name"] = "proficiency",
    page: int = 1,
) -> dict[str, Any]:
    """List the heroes the current player owns, with how and when each was acquired (and the price
    paid for a purchase), proficiency points and mastery title, matches played, wins and win rate.

    Args:
        role: Only heroes whose main or secondary role is this one.
        sort_by: proficiency (highest first), matches (most played first), win_rate (best first; unplayed heroes last), recent (latest acquired first) or name.
        page: Page number, from 1.
    """
    where = NamedWhere().add("ph.player_id = :u", u=env.actor_id)
    if role is not None:
        where.add("(h.role = :role OR h.secondary_role = :role)", role=role)
    order = {
        "proficiency": "ph.proficiency DESC, h.id",
        "matches": "ph.matches_played DESC, h.id",
        "win_rate": "ph.matches_played = 0, CAST(ph.wins AS REAL) / MAX(ph.matches_played, 1) DESC, ph.matches_played DESC, h.id",
        "recent": "ph.acquired_at DESC, h.id",
        "name": "h.name COLLATE NOCASE, h.id",
    }[sort_by]
    select = (
        "SELECT h.id AS hero_id, h.name, h.title, h.role, h.secondary_role, h.lane, ph.acquired_at, ph.acquired_via, "
        "ph.currency, ph.price_paid, ph.proficiency, ph.matches_played, ph.wins FROM player_heroes ph "
        f"JOIN heroes h ON h.id = ph.hero_id WHERE {where.condition}"
    )

    def shape(row: dict[str, Any]) -> dict[str, Any]:
        row["mastery"] = _mastery(row["proficiency"])
        row["win_rate"] = _rate(row["wins"], row["matches_played"])
        return row

    return paginate(env, select, where.params, page, order, shape)


# -- ranks ---------------------------------------------------------------------------------


def _my_rank(env: ToolEnv, where: NamedWhere) -> dict[str, Any] | None:
    """The actor's row of a leaderboard and its position: 1 + the rows ranked ahead of it (the order
    is total: tier and stars, then wins, descending, then id), counted instead of numbering the board."""
    score = rank_score("r.tier", "r.stars")
    mine = env.one(
        f"SELECT r.tier, r.stars, r.peak_tier, r.peak_stars, r.ranked_matches, r.ranked_wins, {score} AS _score "
        f"FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE {where.condition} AND r.player_id = :u",
        {**where.params, "u": env.actor_id},
    )
    if mine is None:
        return None
    ahead = env.scalar(
        f"SELECT COUNT(*) FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE {where.condition} "
        f"AND ({score}, r.ranked_wins, -r.player_id) > (:_score, :_wins, -:u)",
        {**where.params, "u": env.actor_id, "_score": mine.pop("_score"), "_wins": mine["ranked_wins"]},
    )
    mine["position"] = ahead + 1
    return mine


@TOOLS.read
def get_rank(env: ToolEnv, season_id: int | None = None, region: Region | None = None, page: int = 1) -> dict[str, Any]:
    """Show ranked seasons and a season's leaderboard.

    Returns every season (dates, ended/current/upcoming, and the current player's final or
    present tier in it), the chosen season, the current player's rank in it (tier, stars, peak,
    ranked matches and wins, leaderboard position), and one page of the leaderboard: players
    ordered by rank (tier, then stars), then by ranked wins.

    Args:
        season_id: The season; default the current season.
        region: Only players of this region on the leaderboard (and for the position).
        page: Page of the leaderboard, from 1.
    """
    today = _today(env)
    current = _current_season(env)
    season_id = current if season_id is None else season_id
    seasons = env.all(
        "SELECT s.id AS season_id, s.name, s.start_date, s.end_date, CASE WHEN s.end_date < :t THEN 'ended' "
        "WHEN s.start_date > :t THEN 'upcoming' ELSE 'current' END AS status, r.tier AS my_tier, r.stars AS my_stars "
        "FROM seasons s LEFT JOIN season_ranks r ON r.season_id = s.id AND r.player_id = :u ORDER BY s.number",
        {"t": today, "u": env.actor_id},
    )
    season = next((s for s in seasons if s["season_id"] == season_id), None)
    if season is None:
        raise not_found("season", season_id)
    where = NamedWhere().add("r.season_id = :s", s=season_id)
    if region is not None:
        where.add("p.region = :region", region=region)
    order = f"{rank_score('r.tier', 'r.stars')} DESC, r.ranked_wins DESC, r.player_id"
    rows = f"FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE {where.condition}"
    select = f"SELECT r.player_id, p.nickname, p.region, r.tier, r.stars, r.peak_tier, r.peak_stars, r.ranked_matches, r.ranked_wins {rows}"
    board = paginate(env, select, where.params, page, order, count=f"SELECT COUNT(*) {rows}")
    for n, row in enumerate(board["items"], start=(board["page"] - 1) * board["page_size"] + 1):
        row["position"] = n
    mine = _my_rank(env, where)
    if mine:
        mine["win_rate"] = _rate(mine["ranked_wins"], mine["ranked_matches"])
    return {"seasons": seasons, "season": season, "my_rank": mine, "leaderboard": board}


# -- friends and blacklist -----------------------------------------------------------------


@TOOLS.read
def list_friends(
    env: ToolEnv,
    status: Literal["online", "offline", "in_match"] | None = None,
    sort_by: Literal["intimacy", "nickname", "since", "rank"] = "intimacy",
    page: int = 1,
) -> dict[str, Any]:
    """List the current player's friends with their status, rank, intimacy and since when.

    Args:
        status: Only friends with this status: online, offline, or in a match.
        sort_by: intimacy (highest first), nickname (A to Z), since (newest friends first) or rank (highest first).
        page: Page number, from 1.
    """
    where = NamedWhere().add("f.player_id = :u", u=env.actor_id).add("f.kind = 'friend'")
    if status is not None:
        where.add("p.status = :status", status=status)
    order = {
        "intimacy": "f.intimacy DESC, p.id",
        "nickname": "p.nickname COLLATE NOCASE, p.id",
        "since": "f.since DESC, p.id",
        "rank": f"{rank_score('p.tier', 'p.stars')} DESC, p.id",
    }[sort_by]
    select = (
        f"SELECT {PLAYER_COLUMNS}, p.last_login, f.intimacy, f.since AS friends_since FROM relations f "
        f"JOIN players p ON p.id = f.other_id WHERE {where.condition}"
    )
    return paginate(env, select, where.params, page, order)


@TOOLS.read
def list_friend_requests(
    env: ToolEnv,
    direction: Literal["received", "sent"] = "received",
    status: Literal["pending", "accepted", "rejected"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List friend requests the current player received or sent, newest first.

    Args:
        direction: received (requests to the current player) or sent (requests by them).
        status: Only requests with this status; default all.
        page: Page number, from 1.
    """
    mine, other = ("receiver_id", "sender_id") if direction == "received" else ("sender_id", "receiver_id")
    where = NamedWhere().add(f"r.{mine} = :u", u=env.actor_id)
    if status is not None:
        where.add("r.status = :status", status=status)
    select = (
        "SELECT r.id AS request_id, r.sender_id, s.nickname AS sender, r.receiver_id, v.nickname AS receiver, r.message, "
        f"r.status, r.sent_at, r.answered_at, o.tier AS other_tier, o.level AS other_level FROM friend_requests r "
        f"JOIN players s ON s.id = r.sender_id JOIN players v ON v.id = r.receiver_id JOIN players o ON o.id = r.{other} WHERE {where.condition}"
    )
    return paginate(env, select, where.params, page, "r.sent_at DESC, r.id DESC")


@TOOLS.read
def list_blacklist(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the players the current player has blocked, most recently blocked first.

    Args:
        page: Page number, from 1.
    """
    select = (
        f"SELECT {PLAYER_COLUMNS}, b.since AS blocked_at FROM relations b JOIN players p ON p.id = b.other_id "
        "WHERE b.player_id = ? AND b.kind = 'blocked'"
    )
    return paginate(env, select, [env.actor_id], page, "b.since DESC, p.id")


# -- clans ---------------------------------------------------------------------------------

TEAM_SELECT = """
SELECT t.id AS team_id, t.name, t.region, t.level, t.member_count, t.capacity, t.member_count >= t.capacity AS is_full,
       t.leader_id, l.nickname AS leader, t.notice, t.created_at, t.total_contribution
FROM teams t JOIN players l ON l.id = t.leader_id
"""
_team = bool_columns("is_full")


@TOOLS.read
def search_teams(
    env: ToolEnv,
    query: str = "",
    region: Region | None = None,
    has_space: bool | None = None,
    min_level: int | None = None,
    sort_by: Literal["relevance", "level", "members", "name"] = "relevance",
    page: int = 1,
) -> dict[str, Any]:
    """Search clans by name, with filters.

    Returns one page (20 clans) with the total: id, name, region, level, members and capacity,
    whether full, leader, notice, creation date and total contribution.

    Args:
        query: Text to find in the clan name (case-insensitive); empty matches every clan.
        region: Only clans of this region.
        has_space: true for clans with a free place, false for full clans.
        min_level: Only clans of at least this level (1-10).
        sort_by: relevance (exact name first, then highest level), level, members (most first) or name.
        page: Page number, from 1.
    """
    where = NamedWhere()
    if query.strip():
        where.add("t.name LIKE :q ESCAPE '\\'", q=like_pattern(query.strip()))
    if region is not None:
        where.add("t.region = :region", region=region)
    if has_space is not None:
        where.add("t.member_count < t.capacity" if has_space else "t.member_count >= t.capacity")
    if min_level is not None:
        where.add("t.level >= :level", level=min_level)
    order = {
        "relevance": f"(t.name = {sql_literal(query.strip())} COLLATE NOCASE) DESC, t.level DESC, t.id",
        "level": "t.level DESC, t.id",
        "members": "t.member_count DESC, t.id",
        "name": "t.name COLLATE NOCASE, t.id",
    }[sort_by]
    return paginate(env, TEAM_SELECT + " WHERE " + where.condition, where.params, page, order, _team)


@TOOLS.read
def get_team(env: ToolEnv, team_id: int, page: int = 1) -> dict[str, Any]:
    """Show a clan and one page of its members (leader first, then vice leaders, elites and members,
    each by contribution), with the current player's role in it and any pending application of theirs.

    Args:
        team_id: The clan's id.
        page: Page of the member list, from 1.
    """
    team = env.one(TEAM_SELECT + " WHERE t.id = ?", (team_id,))
    if team is None:
        raise not_found("clan", team_id)
    team = _team(team)
    team["my_role"] = env.scalar("SELECT role FROM team_members WHERE team_id = ? AND player_id = ?", (team_id, env.actor_id))
    team["my_pending_application_id"] = env.scalar(
        "SELECT id FROM team_applications WHERE team_id = ? AND player_id = ? AND status = 'pending'", (team_id, env.actor_id)
    )
    members = paginate(
        env,
        f"SELECT {PLAYER_COLUMNS}, m.role, m.joined_at, m.contribution FROM team_members m JOIN players p ON p.id = m.player_id "
        "WHERE m.team_id = ?",
        [team_id],
        page,
        "CASE m.role WHEN 'leader' THEN 0 WHEN 'vice_leader' THEN 1 WHEN 'elite' THEN 2 ELSE 3 END, m.contribution DESC, p.id",
        count=team["member_count"],  # a stored aggregate the tools keep exact
    )
    return {"team": team, "members": members}


@TOOLS.read
def list_team_applications(
    env: ToolEnv,
    team_id: int | None = None,
    status: Literal["pending", "approved", "rejected"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List the applications to a clan, oldest first (only its leader and vice leaders can).

    Each application comes with the applicant's level, rank and current clan (an applicant
    already in a clan cannot be approved), the message, dates and who reviewed it.

    Args:
        team_id: The clan; default the current player's clan.
        status: Only applications with this status; default all.
        page: Page number, from 1.
    """
    if team_id is None:
        team_id = env.scalar("SELECT team_id FROM team_members WHERE player_id = ?", (env.actor_id,))
        if team_id is None:
            raise ToolError(ErrorCode.FORBIDDEN, "You are not in a clan; give the team_id of a clan you lead or co-lead.")
    else:
        require(env, "teams", team_id, "clan")
    _team_officer(env, team_id)
    where = NamedWhere().add("a.team_id = :t", t=team_id)
    if status is not None:
        where.add("a.status = :status", status=status)
    select = (
        "SELECT a.id AS application_id, a.player_id, p.nickname, p.level, p.tier, p.stars, p.region, "
        "m.team_id AS applicant_team_id, ct.name AS applicant_team, a.message, a.status, a.applied_at, a.reviewed_at, "
        "a.reviewed_by AS reviewed_by_id, rv.nickname AS reviewed_by FROM team_applications a JOIN players p ON p.id = a.player_id "
        "LEFT JOIN team_members m ON m.player_id = a.player_id LEFT JOIN teams ct ON ct.id = m.team_id "
        f"LEFT JOIN players rv ON rv.id = a.reviewed_by WHERE {where.condition}"
    )
    return paginate(env, select, where.params, page, "a.applied_at, a.id")


# -- rooms ---------------------------------------------------------------------------------

ROOM_SELECT = """
SELECT r.id AS room_id, r.name, r.mode, r.status, r.capacity, r.member_count, r.member_count >= r.capacity AS is_full,
       r.password IS NOT NULL AS has_password, r.owner_id, o.nickname AS owner, r.created_at, r.closed_at
FROM rooms r JOIN players o ON o.id = r.owner_id
"""
_room = bool_columns("is_full", "has_password")


@TOOLS.read
def list_rooms(
    env: ToolEnv,
    mode: RoomMode | None = None,
    status: Literal["open", "in_game", "closed"] | None = None,
    has_space: bool | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List game rooms, newest first: mode, status, members and capacity, owner, whether a
    password protects it.

    Args:
        mode: Only rooms of this mode.
        status: open (waiting for players), in_game or closed; default open and in_game rooms.
        has_space: true for rooms with a free place, false for full rooms.
        page: Page number, from 1.
    """
    where = NamedWhere()
    if status is None:
        where.add("r.status IN ('open', 'in_game')")
    else:
        where.add("r.status = :status", status=status)
    if mode is not None:
        where.add("r.mode = :mode", mode=mode)
    if has_space is not None:
        where.add("r.member_count < r.capacity" if has_space else "r.member_count >= r.capacity")
    return paginate(env, ROOM_SELECT + where.clause, where.params, page, "r.created_at DESC, r.id DESC", _room)


@TOOLS.read
def get_room(env: ToolEnv, room_id: int) -> dict[str, Any]:
    """Show a room with its members (owner first) and its pending invitations. The password is
    shown to the room's owner only.

    Args:
        room_id: The room's id.
    """
    room = env.one(ROOM_SELECT.replace("r.closed_at", "r.closed_at, r.password", 1) + " WHERE r.id = ?", (room_id,))
    if room is None:
        raise not_found("room", room_id)
    room = _room(room)
    if room["owner_id"] != env.actor_id:
        room.pop("password")
    room["members"] = env.all(
        f"SELECT {PLAYER_COLUMNS}, m.joined_at, p.id = :o AS is_owner FROM room_members m JOIN players p ON p.id = m.player_id "
        "WHERE m.room_id = :r ORDER BY p.id != :o, m.joined_at, p.id",
        {"r": room_id, "o": room["owner_id"]},
    )
    for member in room["members"]:
        member["is_owner"] = bool(member["is_owner"])
    room["i_am_member"] = any(m["player_id"] == env.actor_id for m in room["members"])
    room["pending_invitations"] = env.all(
        "SELECT i.id AS invitation_id, i.invitee_id, p.nickname AS invitee, i.inviter_id, q.nickname AS inviter, i.sent_at "
        "FROM room_invitations i JOIN players p ON p.id = i.invitee_id JOIN players q ON q.id = i.inviter_id "
        "WHERE i.room_id = ? AND i.status = 'pending' ORDER BY i.sent_at, i.id",
        (room_id,),
    )
    return room


@TOOLS.read
def list_room_invitations(
    env: ToolEnv,
    direction: Literal["received", "sent"] = "received",
    status: Literal["pending", "accepted", "declined", "expired"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List room invitations the current player received or sent, newest first, with the room's
    mode, status and free places.

    Args:
        direction: received (invitations to the current player) or sent (invitations by them).
        status: Only invitations with this status; default all.
        page: Page number, from 1.
    """
    mine = "invitee_id" if direction == "received" else "inviter_id"
    where = NamedWhere().add(f"i.{mine} = :u", u=env.actor_id)
    if status is not None:
        where.add("i.status = :status", status=status)
    select = (
        "SELECT i.id AS invitation_id, i.room_id, r.name AS room, r.mode, r.status AS room_status, r.member_count, r.capacity, "
        "i.inviter_id, a.nickname AS inviter, i.invitee_id, b.nickname AS invitee, i.status, i.sent_at, i.answered_at "
        "FROM room_invitations i JOIN rooms r ON r.id = i.room_id JOIN players a ON a.id = i.inviter_id "
        f"JOIN players b ON b.id = i.invitee_id WHERE {where.condition}"
    )
    return paginate(env, select, where.params, page, "i.sent_at DESC, i.id DESC")


# -- matches -------------------------------------------------------------------------------


@TOOLS.read
def list_match_history(
    env: ToolEnv,
    player_id: int | None = None,
    mode: Mode | None = None,
    hero_id: int | None = None,
    result: Literal["win", "loss"] | None = None,
    season_id: int | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List a player's matches, newest first, with the hero played, side, result, kills/deaths/
    assists, score, MVP and rating change, plus a summary (matches, wins, MVPs) of everything
    the filters select.

    Args:
        player_id: Whose history; default the current player.
        mode: Only matches of this mode.
        hero_id: Only matches played with this hero.
        result: Only wins or only losses.
        season_id: Only matches of this season.
        start_date: Only matches started on or after this day (YYYY-MM-DD).
        end_date: Only matches started on or before this day (YYYY-MM-DD), the whole day included.
        page: Page number, from 1.
    """
    check_date_range(start_date, end_date, "start_date", "end_date", example=DATE_EXAMPLE)
    if player_id is None:
        player_id = env.actor_id
    else:
        _player(env, player_id)
    where = NamedWhere().add("mp.player_id = :p", p=player_id)
    if mode is not None:
        where.add("m.mode = :mode", mode=mode)
    if hero_id is not None:
        require(env, "heroes", hero_id, "hero")
        where.add("mp.hero_id = :hero", hero=hero_id)
    if result is not None:
        where.add("mp.result = :result", result=result)
    if season_id is not None:
        require(env, "seasons", season_id, "season")
        where.add("m.season_id = :season", season=season_id)
    if start_date:
        where.add("m.started_at >= :start", start=start_date)
    if end_date:
        where.add("m.started_at < date(:end, '+1 day')", end=end_date)
    condition, params = where.condition, where.params
    # Without a filter on the match, its join adds nothing (every match_players row has its match).
    on_match = mode is not None or season_id is not None or bool(start_date) or bool(end_date)
    matches_join = "JOIN matches m ON m.id = mp.match_id " if on_match else ""
    summary = env.one(
        "SELECT COUNT(*) AS matches, COALESCE(SUM(mp.result = 'win'), 0) AS wins, COALESCE(SUM(mp.is_mvp), 0) AS mvps "
        f"FROM match_players mp {matches_join}WHERE {condition}",
        params,
    )
    assert summary is not None
    summary["win_rate"] = _rate(summary["wins"], summary["matches"])
    plain = not on_match and hero_id is None and result is None
    return {**_history_page(env, condition, params, page, summary["matches"], plain), "summary": summary}


def _history_page(env: ToolEnv, condition: str, params: dict[str, Any], page: int, total: int, plain: bool) -> dict[str, Any]:
    """A page of match history, as `paginate` shapes it. The page's keys come first and only its 20
    rows are then read in full (sorting every wide row of a long history cost twice as much)."""
    page = int(check_page(page))
    offset = (page - 1) * PAGE_SIZE
    rows: list[dict[str, Any]] = []
    if offset < total:  # past the last page there is nothing to fetch (and a huge offset would overflow SQLite)
        rows = env.all(
            "SELECT m.id AS match_id, m.started_at, m.mode, m.duration_sec, m.season_id, mp.hero_id, h.name AS hero, mp.side, "
            "mp.result, mp.kills, mp.deaths, mp.assists, mp.score, mp.is_mvp, mp.rating_change "
            f"FROM ({_history_keys(env, condition, offset, total, plain)} LIMIT :_page_size OFFSET :_offset) AS k "
            "CROSS JOIN match_players mp ON mp.match_id = k.id AND mp.player_id = :p CROSS JOIN matches m ON m.id = k.id "
            "CROSS JOIN heroes h ON h.id = mp.hero_id ORDER BY k.started DESC, k.id DESC",
            {**params, "_page_size": PAGE_SIZE, "_offset": offset},
        )
    shape = bool_columns("is_mvp")
    return {
        "items": [shape(r) for r in rows],
        "page": page,
        "page_size": PAGE_SIZE,
        "total": total,
        "total_pages": max(1, -(-total // PAGE_SIZE)),
    }


def _history_keys(env: ToolEnv, condition: str, offset: int, total: int, plain: bool) -> str:
    """SQL for a history's match ids and start times, newest first, by the cheaper of two equal
    ways: sort the player's rows, or walk every match newest first (the start index) keeping the
    player's, which stops after the page but visits matches/total matches per row kept. The
    walk is taken for an unfiltered history when it visits fewer than ~4/3 rows per row sorted."""
    if plain:
        matches: int = env.scalar("SELECT COALESCE(MAX(id), 0) FROM matches")  # about the count, in one index step
        if 3 * (offset + PAGE_SIZE) * matches < 4 * total * total:
            return (
                "SELECT m.id AS id, m.started_at AS started FROM matches m WHERE EXISTS (SELECT 1 FROM match_players mp "
                "WHERE mp.match_id = m.id AND mp.player_id = :p) ORDER BY m.started_at DESC, m.id DESC"
            )
    return (
        "SELECT m.id AS id, m.started_at AS started FROM match_players mp JOIN matches m ON m.id = mp.match_id "
        f"WHERE {condition} ORDER BY m.started_at DESC, m.id DESC"
    )


@TOOLS.read
def get_match(env: ToolEnv, match_id: int) -> dict[str, Any]:
    """Show a match in full: mode, season, start, duration, winner and kills per side, and all ten
    players' statistics (hero, lane, kills, deaths, assists, gold, damage dealt and taken, healing,
    tower damage, score, MVP, rating change), blue side first; also whether the current player
    played it and has it in their favourites.

    Args:
        match_id: The match's id.
    """
    match = env.one(
        "SELECT m.id AS match_id, m.mode, m.season_id, s.name AS season, m.started_at, m.duration_sec, m.winner_side, "
        "m.blue_kills, m.red_kills, EXISTS (SELECT 1 FROM favourite_matches f WHERE f.match_id = m.id AND f.player_id = :u) "
        "AS favourited_by_me FROM matches m JOIN seasons s ON s.id = m.season_id WHERE m.id = :m",
        {"m": match_id, "u": env.actor_id},
    )
    if match is None:
        raise not_found("match", match_id)
    match["favourited_by_me"] = bool(match["favourited_by_me"])
    match["players"] = [
        bool_columns("is_mvp")(r)
        for r in env.all(
            "SELECT mp.player_id, p.nickname, mp.side, mp.hero_id, h.name AS hero, mp.lane, mp.kills, mp.deaths, mp.assists, "
            "mp.gold, mp.damage_dealt, mp.damage_taken, mp.healing, mp.tower_damage, mp.score, mp.result, mp.is_mvp, "
            "mp.rating_change FROM match_players mp JOIN players p ON p.id = mp.player_id JOIN heroes h ON h.id = mp.hero_id "
            "WHERE mp.match_id = ? ORDER BY mp.side, mp.score DESC, mp.player_id",
            (match_id,),
        )
    ]
    match["i_played"] = any(p["player_id"] == env.actor_id for p in match["players"])
    return match


@TOOLS.read
def list_favourite_matches(env: ToolEnv, page: int = 1) -> dict[str, Any]:
    """List the matches the current player saved to their favourites, most recently saved first,
    with their note and how they played.

    Args:
        page: Page number, from 1.
    """
    select = (
        "SELECT f.match_id, f.favourited_at, f.note, m.started_at, m.mode, mp.hero_id, h.name AS hero, mp.result, "
        "mp.kills, mp.deaths, mp.assists, mp.score, mp.is_mvp FROM favourite_matches f JOIN matches m ON m.id = f.match_id "
        "JOIN match_players mp ON mp.match_id = f.match_id AND mp.player_id = f.player_id JOIN heroes h ON h.id = mp.hero_id "
        "WHERE f.player_id = ?"
    )
    return paginate(env, select, [env.actor_id], page, "f.favourited_at DESC, f.match_id DESC", bool_columns("is_mvp"))


# -- writes: friends and blacklist ---------------------------------------------------------


def _pending_between(env: ToolEnv, a: int, b: int) -> dict[str, Any] | None:
    return env.one(
        "SELECT id, sender_id FROM friend_requests WHERE status = 'pending' AND ((sender_id = :a AND receiver_id = :b) "
        "OR (sender_id = :b AND receiver_id = :a))",
        {"a": a, "b": b},
    )


def _end_friendship(env: ToolEnv, a: int, b: int) -> int:
    """Delete a friendship (both rows) and the accepted requests that made it; returns rows removed."""
    removed = env.conn.execute(
        "DELETE FROM relations WHERE kind = 'friend' AND ((player_id = :a AND other_id = :b) OR (player_id = :b AND other_id = :a))",
        {"a": a, "b": b},
    ).rowcount
    env.conn.execute(
        "DELETE FROM friend_requests WHERE status = 'accepted' AND ((sender_id = :a AND receiver_id = :b) "
        "OR (sender_id = :b AND receiver_id = :a))",
        {"a": a, "b": b},
    )
    return removed


@TOOLS.write
def send_friend_request(env: ToolEnv, player_id: int, message: str = "") -> dict[str, Any]:
    """Send a friend request from the current player. Not to yourself, a friend, a player you
    blocked or who blocked you, nor when a request between you two is already pending.

    Args:
        player_id: The player to befriend.
        message: An optional note, at most 100 characters.
    """
    other = _other_player(env, player_id, "send a friend request to")
    message = check_text(message, "A friend request message", MESSAGE_LIMIT, shortest=0)
    if _relation(env, env.actor_id, player_id) == "friend":
        raise ToolError(ErrorCode.CONFLICT, f"{other['nickname']} is already your friend.")
    _block_between(env, other, "send them a friend request")
    pending = _pending_between(env, env.actor_id, player_id)
    if pending:
        if pending["sender_id"] == env.actor_id:
            raise ToolError(
                ErrorCode.CONFLICT, f"You already sent {other['nickname']} a friend request (id {pending['id']}); it is pending."
            )
        raise ToolError(
            ErrorCode.CONFLICT, f"{other['nickname']} already sent you a friend request (id {pending['id']}); answer it instead."
        )
    cur = env.conn.execute(
        "INSERT INTO friend_requests (sender_id, receiver_id, message, status, sent_at) VALUES (?, ?, ?, 'pending', ?)",
        (env.actor_id, player_id, message, env.now),
    )
    return {
        "request_id": cur.lastrowid,
        "receiver_id": player_id,
        "receiver": other["nickname"],
        "message": message,
        "status": "pending",
        "sent_at": env.now,
    }


@TOOLS.write
def answer_friend_request(env: ToolEnv, request_id: int, accept: bool) -> dict[str, Any]:
    """Accept or reject a pending friend request sent to the current player. Accepting makes you
    friends (intimacy starts at 0).

    Args:
        request_id: The friend request's id.
        accept: true to accept, false to reject.
    """
    request = require(env, "friend_requests", request_id, "friend request")
    if request["receiver_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Friend request {request_id} was not sent to you; only its receiver can answer it.")
    if request["status"] != "pending":
        raise ToolError(ErrorCode.CONFLICT, f"Friend request {request_id} was already {request['status']}.")
    sender = _player(env, request["sender_id"])
    if accept:
        env.conn.executemany(
            "INSERT INTO relations (player_id, other_id, kind, since, intimacy) VALUES (?, ?, 'friend', ?, 0)",
            [(env.actor_id, sender["id"], env.now), (sender["id"], env.actor_id, env.now)],
        )
    status = "accepted" if accept else "rejected"
    env.conn.execute("UPDATE friend_requests SET status = ?, answered_at = ? WHERE id = ?", (status, env.now, request_id))
    return {"request_id": request_id, "sender_id": sender["id"], "sender": sender["nickname"], "status": status, "now_friends": accept}


@TOOLS.write
def remove_friend(env: ToolEnv, player_id: int) -> dict[str, Any]:
    """Remove a player from the current player's friends (for both of them; intimacy is lost).

    Args:
        player_id: The friend's player id.
    """
    other = _other_player(env, player_id, "unfriend")
    if _relation(env, env.actor_id, player_id) != "friend":
        raise ToolError(ErrorCode.CONFLICT, f"{other['nickname']} is not your friend.")
    _end_friendship(env, env.actor_id, player_id)
    return {"player_id": player_id, "nickname": other["nickname"], "is_friend": False}


@TOOLS.write
def block_player(env: ToolEnv, player_id: int) -> dict[str, Any]:
    """Block a player: they go on the current player's blacklist, a friendship between you ends,
    and pending friend requests between you are withdrawn.

    Args:
        player_id: The player to block.
    """
    other = _other_player(env, player_id, "block")
    relation = _relation(env, env.actor_id, player_id)
    if relation == "blocked":
        raise ToolError(ErrorCode.CONFLICT, f"{other['nickname']} is already on your blacklist.")
    was_friend = relation == "friend"
    if was_friend:
        _end_friendship(env, env.actor_id, player_id)
    withdrawn = env.conn.execute(
        "DELETE FROM friend_requests WHERE status = 'pending' AND ((sender_id = :a AND receiver_id = :b) "
        "OR (sender_id = :b AND receiver_id = :a))",
        {"a": env.actor_id, "b": player_id},
    ).rowcount
    env.conn.execute(
        "INSERT INTO relations (player_id, other_id, kind, since, intimacy) VALUES (?, ?, 'blocked', ?, 0)",
        (env.actor_id, player_id, env.now),
    )
    return {
        "player_id": player_id,
        "nickname": other["nickname"],
        "blocked": True,
        "friendship_ended": was_friend,
        "requests_withdrawn": withdrawn,
    }


@TOOLS.write
def unblock_player(env: ToolEnv, player_id: int) -> dict[str, Any]:
    """Take a player off the current player's blacklist (a former friendship does not come back).

    Args:
        player_id: The blocked player's id.
    """
    other = _other_player(env, player_id, "unblock")
    if not env.conn.execute(
        "DELETE FROM relations WHERE player_id = ? AND other_id = ? AND kind = 'blocked'", (env.actor_id, player_id)
    ).rowcount:
        raise ToolError(ErrorCode.CONFLICT, f"{other['nickname']} is not on your blacklist.")
    return {"player_id": player_id, "nickname": other["nickname"], "blocked": False}


# -- writes: rooms -------------------------------------------------------------------------


def _close_room(env: ToolEnv, room_id: int) -> tuple[int, int]:
    """Close a room: members leave, pending invitations expire. Returns (members, invitations)."""
    members = env.conn.execute("DELETE FROM room_members WHERE room_id = ?", (room_id,)).rowcount
    expired = env.conn.execute(
        "UPDATE room_invitations SET status = 'expired' WHERE room_id = ? AND status = 'pending'", (room_id,)
    ).rowcount
    env.conn.execute("UPDATE rooms SET status = 'closed', closed_at = ?, member_count = 0 WHERE id = ?", (env.now, room_id))
    return members, expired


def _leave_current_room(env: ToolEnv) -> dict[str, Any] | None:
    """Before the current player opens or joins a room they leave the one they are in: an owner's
    room is dissolved, a member just leaves. A running game cannot be left."""
    current = env.one(
        "SELECT r.id, r.name, r.status, r.owner_id FROM room_members m JOIN rooms r ON r.id = m.room_id "
        "WHERE m.player_id = ? AND r.status != 'closed'",
        (env.actor_id,),
    )
    if current is None:
        return None
    if current["status"] == "in_game":
        raise ToolError(ErrorCode.CONFLICT, f"You are in a running game in room {current['id']}; finish it before joining another room.")
    if current["owner_id"] == env.actor_id:
        _close_room(env, current["id"])
        return {"room_id": current["id"], "name": current["name"], "dissolved": True}
    env.conn.execute("DELETE FROM room_members WHERE room_id = ? AND player_id = ?", (current["id"], env.actor_id))
    env.conn.execute("UPDATE rooms SET member_count = member_count - 1 WHERE id = ?", (current["id"],))
    return {"room_id": current["id"], "name": current["name"], "dissolved": False}


def _room_summary(env: ToolEnv, room_id: int) -> dict[str, Any]:
    return _room(env.one(ROOM_SELECT + " WHERE r.id = ?", (room_id,)))  # type: ignore[arg-type]


@TOOLS.write
def create_room(
    env: ToolEnv,
    name: str,
    mode: RoomMode,
    capacity: int | None = None,
    password: str | None = None,
) -> dict[str, Any]:
    """Open a new game room owned by the current player, who joins it. A player is in one room at a
    time: the room they were in is left first (dissolved if they own it); a running game cannot be
    left. Ranked rooms hold 5 players, classic and brawl rooms 10; a custom room holds 2 to 10
    (default 10).

    Args:
        name: The room's name, 1 to 30 characters.
        mode: ranked, classic, brawl or custom.
        capacity: Places in the room; only custom rooms may choose (2-10).
        password: A 4 to 6 digit code players must know to join; omit for a public room.
    """
    name = check_text(name, "A room name", ROOM_NAME_LIMIT)
    if mode == "custom":
        capacity = 10 if capacity is None else capacity
        if not 2 <= capacity <= 10:
            raise ToolError(ErrorCode.INVALID_VALUE, "A custom room holds 2 to 10 players.")
    elif capacity is not None and capacity != ROOM_CAPACITY[mode]:
        raise ToolError(ErrorCode.INVALID_VALUE, f"A {mode} room always holds {ROOM_CAPACITY[mode]} players; only custom rooms choose.")
    else:
        capacity = ROOM_CAPACITY[mode]
    if password is not None and not re.fullmatch(r"\d{4,6}", password):
        raise ToolError(ErrorCode.INVALID_VALUE, "A room password is 4 to 6 digits.")
    left = _leave_current_room(env)
    cur = env.conn.execute(
        "INSERT INTO rooms (name, owner_id, mode, capacity, status, password, created_at, member_count) "
        "VALUES (?, ?, ?, ?, 'open', ?, ?, 1)",
        (name, env.actor_id, mode, capacity, password, env.now),
    )
    room_id = cur.lastrowid
    env.conn.execute("INSERT INTO room_members (room_id, player_id, joined_at) VALUES (?, ?, ?)", (room_id, env.actor_id, env.now))
    return {**_room_summary(env, room_id), "left_room": left}  # type: ignore[arg-type]


@TOOLS.write
def dissolve_room(env: ToolEnv, room_id: int) -> dict[str, Any]:
    """Close an open room (owner only): every member leaves and pending invitations expire. A room
    whose game is running cannot be dissolved.

    Args:
        room_id: The room's id.
    """
    room = require(env, "rooms", room_id, "room")
    if room["owner_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Only the room's owner can dissolve room {room_id}.")
    if room["status"] == "closed":
        raise ToolError(ErrorCode.CONFLICT, f"Room {room_id} is already closed.")
    if room["status"] == "in_game":
        raise ToolError(ErrorCode.CONFLICT, f"Room {room_id} is in a game; it can be dissolved once the game is over.")
    members, expired = _close_room(env, room_id)
    return {"room_id": room_id, "name": room["name"], "status": "closed", "members_removed": members, "invitations_expired": expired}


@TOOLS.write
def invite_to_room(env: ToolEnv, room_id: int, player_id: int) -> dict[str, Any]:
    """Invite a player to an open room the current player is in. Not when the room is full, the
    player is already in it or already invited, or a block stands between you.

    Args:
        room_id: The room's id.
        player_id: The player to invite.
    """
    room = require(env, "rooms", room_id, "room")
    other = _other_player(env, player_id, "invite")
    if not env.scalar("SELECT 1 FROM room_members WHERE room_id = ? AND player_id = ?", (room_id, env.actor_id)):
        raise ToolError(ErrorCode.FORBIDDEN, f"You are not in room {room_id}; only its members can invite players.")
    if room["status"] != "open":
        raise ToolError(ErrorCode.CONFLICT, f"Room {room_id} is {room['status'].replace('_', ' ')}; only open rooms take invitations.")
    if env.scalar("SELECT 1 FROM room_members WHERE room_id = ? AND player_id = ?", (room_id, player_id)):
        raise ToolError(ErrorCode.CONFLICT, f"{other['nickname']} is already in room {room_id}.")
    if room["member_count"] >= room["capacity"]:
        raise ToolError(ErrorCode.CONFLICT, f"Room {room_id} is full ({room['member_count']}/{room['capacity']}).")
    _block_between(env, other, "invite them")
    if env.scalar("SELECT 1 FROM room_invitations WHERE room_id = ? AND invitee_id = ? AND status = 'pending'", (room_id, player_id)):
        raise ToolError(ErrorCode.CONFLICT, f"{other['nickname']} already has a pending invitation to room {room_id}.")
    cur = env.conn.execute(
        "INSERT INTO room_invitations (room_id, inviter_id, invitee_id, status, sent_at) VALUES (?, ?, ?, 'pending', ?)",
        (room_id, env.actor_id, player_id, env.now),
    )
    return {
        "invitation_id": cur.lastrowid,
        "room_id": room_id,
        "room": room["name"],
        "invitee_id": player_id,
        "invitee": other["nickname"],
        "status": "pending",
        "sent_at": env.now,
    }


@TOOLS.write
def answer_room_invitation(env: ToolEnv, invitation_id: int, accept: bool) -> dict[str, Any]:
    """Accept or decline a pending room invitation sent to the current player. Accepting joins the
    room, which must still be open and have a free place; the room the player was in is left first
    (dissolved if they own it), and a running game cannot be left.

    Args:
        invitation_id: The invitation's id.
        accept: true to join the room, false to decline.
    """
    invitation = require(env, "room_invitations", invitation_id, "room invitation")
    if invitation["invitee_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Invitation {invitation_id} is not addressed to you.")
    if invitation["status"] != "pending":
        raise ToolError(ErrorCode.CONFLICT, f"Invitation {invitation_id} is {invitation['status']}, not pending.")
    room = require(env, "rooms", invitation["room_id"], "room")
    if accept:
        if room["status"] != "open":
            raise ToolError(ErrorCode.CONFLICT, f"Room {room['id']} is {room['status'].replace('_', ' ')}; it cannot be joined.")
        if room["member_count"] >= room["capacity"]:
            raise ToolError(ErrorCode.CONFLICT, f"Room {room['id']} is full ({room['member_count']}/{room['capacity']}).")
        left = _leave_current_room(env)
        env.conn.execute("INSERT INTO room_members (room_id, player_id, joined_at) VALUES (?, ?, ?)", (room["id"], env.actor_id, env.now))
        env.conn.execute("UPDATE rooms SET member_count = member_count + 1 WHERE id = ?", (room["id"],))
    else:
        left = None
    status = "accepted" if accept else "declined"
    env.conn.execute("UPDATE room_invitations SET status = ?, answered_at = ? WHERE id = ?", (status, env.now, invitation_id))
    return {"invitation_id": invitation_id, "status": status, "room": _room_summary(env, room["id"]), "left_room": left}


# -- writes: clan applications -------------------------------------------------------------


def _pending_application(env: ToolEnv, application_id: int) -> dict[str, Any]:
    application = require(env, "team_applications", application_id, "clan application")
    _team_officer(env, application["team_id"])
    if application["status"] != "pending":
        raise ToolError(ErrorCode.CONFLICT, f"Application {application_id} was already {application['status']}.")
    return application


@TOOLS.write
def approve_team_application(env: ToolEnv, application_id: int) -> dict[str, Any]:
    """Approve a pending application to the current player's clan (leader or vice leader only):
    the applicant joins as a member. Refused when the clan is full or the applicant is already in
    a clan.

    Args:
        application_id: The application's id.
    """
    application = _pending_application(env, application_id)
    team = require(env, "teams", application["team_id"], "clan")
    applicant = _player(env, application["player_id"])
    current = env.one("SELECT t.id, t.name FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.player_id = ?", (applicant["id"],))
    if current:
        raise ToolError(ErrorCode.CONFLICT, f"{applicant['nickname']} is already in the clan '{current['name']}'.")
    if team["member_count"] >= team["capacity"]:
        raise ToolError(ErrorCode.CONFLICT, f"The clan '{team['name']}' is full ({team['member_count']}/{team['capacity']}).")
    env.conn.execute(
        "INSERT INTO team_members (team_id, player_id, role, joined_at, contribution) VALUES (?, ?, 'member', ?, 0)",
        (team["id"], applicant["id"], env.now),
    )
    env.conn.execute("UPDATE teams SET member_count = member_count + 1 WHERE id = ?", (team["id"],))
    env.conn.execute(
        "UPDATE team_applications SET status = 'approved', reviewed_at = ?, reviewed_by = ? WHERE id = ?",
        (env.now, env.actor_id, application_id),
    )
    return {
        "application_id": application_id,
        "status": "approved",
        "team_id": team["id"],
        "team": team["name"],
        "player_id": applicant["id"],
        "nickname": applicant["nickname"],
        "member_count": team["member_count"] + 1,
        "capacity": team["capacity"],
    }


@TOOLS.write
def reject_team_application(env: ToolEnv, application_id: int) -> dict[str, Any]:
    """Reject a pending application to the current player's clan (leader or vice leader only).

    Args:
        application_id: The application's id.
    """
    application = _pending_application(env, application_id)
    env.conn.execute(
        "UPDATE team_applications SET status = 'rejected', reviewed_at = ?, reviewed_by = ? WHERE id = ?",
        (env.now, env.actor_id, application_id),
    )
    nickname = env.scalar("SELECT nickname FROM players WHERE id = ?", (application["player_id"],))
    return {
        "application_id": application_id,
        "status": "rejected",
        "team_id": application["team_id"],
        "player_id": application["player_id"],
        "nickname": nickname,
    }


# -- writes: favourites and the shop -------------------------------------------------------


@TOOLS.write
def favourite_match(env: ToolEnv, match_id: int, note: str = "") -> dict[str, Any]:
    """Save one of the current player's own matches to their favourites, with an optional note.

    Args:
        match_id: The match's id (a match the current player played).
        note: An optional note, at most 100 characters.
    """
    # One statement for the three checks (the match, played, already saved), refused in that order.
    state = env.one(
        "SELECT EXISTS (SELECT 1 FROM match_players WHERE match_id = :m AND player_id = :u) AS played, "
        "EXISTS (SELECT 1 FROM favourite_matches WHERE player_id = :u AND match_id = :m) AS saved FROM matches WHERE id = :m",
        {"m": match_id, "u": env.actor_id},
    )
    if state is None:
        raise not_found("match", match_id)
    note = check_text(note, "A note", MESSAGE_LIMIT, shortest=0)
    if not state["played"]:
        raise ToolError(ErrorCode.FORBIDDEN, f"You did not play match {match_id}; only your own matches can be favourited.")
    if state["saved"]:
        raise ToolError(ErrorCode.CONFLICT, f"Match {match_id} is already in your favourites.")
    env.conn.execute(
        "INSERT INTO favourite_matches (player_id, match_id, favourited_at, note) VALUES (?, ?, ?, ?)",
        (env.actor_id, match_id, env.now, note),
    )
    return {"match_id": match_id, "favourited": True, "note": note, "favourited_at": env.now}


@TOOLS.write
def unfavourite_match(env: ToolEnv, match_id: int) -> dict[str, Any]:
    """Remove a match from the current player's favourites.

    Args:
        match_id: The match's id.
    """
    require(env, "matches", match_id, "match")
    if not env.conn.execute("DELETE FROM favourite_matches WHERE player_id = ? AND match_id = ?", (env.actor_id, match_id)).rowcount:
        raise ToolError(ErrorCode.CONFLICT, f"Match {match_id} is not in your favourites.")
    return {"match_id": match_id, "favourited": False}


@TOOLS.write
def buy_hero(env: ToolEnv, hero_id: int, currency: Literal["coins", "diamonds"]) -> dict[str, Any]:
    """Buy a hero from the shop with coins or diamonds. Only released shop heroes are sold; a hero
    cannot be bought twice; the price must be covered by the balance (an insufficient balance is a
    conflict and nothing is charged).

    Args:
        hero_id: The hero's id.
        currency: Pay with coins or with diamonds.
    """
    hero = require(env, "heroes", hero_id, "hero")
    if hero["availability"] != "shop":
        how = "every player starts with it" if hero["availability"] == "starter" else "it is only given by events and season rewards"
        raise ToolError(ErrorCode.FORBIDDEN, f"{hero['name']} is not sold in the shop: {how}.")
    if hero["release_date"] > _today(env):
        raise ToolError(ErrorCode.FORBIDDEN, f"{hero['name']} is released on {hero['release_date']}; it cannot be bought before.")
    if env.scalar("SELECT 1 FROM player_heroes WHERE player_id = ? AND hero_id = ?", (env.actor_id, hero_id)):
        raise ToolError(ErrorCode.CONFLICT, f"You already own {hero['name']}.")
    price = hero["price_coins"] if currency == "coins" else hero["price_diamonds"]
    balance = env.scalar(f"SELECT {currency} FROM players WHERE id = ?", (env.actor_id,))
    if balance < price:
        raise ToolError(ErrorCode.CONFLICT, f"{hero['name']} costs {price} {currency} but you have {balance}; insufficient balance.")
    env.conn.execute(f"UPDATE players SET {currency} = {currency} - ?, hero_count = hero_count + 1 WHERE id = ?", (price, env.actor_id))
    env.conn.execute(
        "INSERT INTO player_heroes (player_id, hero_id, acquired_at, acquired_via, currency, price_paid, proficiency, matches_played, wins) "
        "VALUES (?, ?, ?, 'purchase', ?, ?, 0, 0, 0)",
        (env.actor_id, hero_id, env.now, currency, price),
    )
    env.conn.execute("UPDATE heroes SET owner_count = owner_count + 1 WHERE id = ?", (hero_id,))
    wallet = env.one("SELECT coins, diamonds FROM players WHERE id = ?", (env.actor_id,))
    return {"hero_id": hero_id, "name": hero["name"], "currency": currency, "price_paid": price, "wallet": wallet}


__all__ = ["TOOLS", "TIERS", "tier_index"]
