"""The MOBA platform's task grammar: the parts composed tasks are built from (ebench/tasks/composition.py).

Sources are what a player reaches from their account: their match history (whole, this season, a
named season, with one hero, shared with one player, their favourite matches), their friends, the
players of their clan, a season's leaderboard, the players of a region, the shop's heroes they
could buy, the heroes they own. Predicates are the fields the tools show
(mode, result, MVP, kills, score, dates, duration; tier, level, status, intimacy, contribution;
role, lane, price, owners; proficiency, how a hero was acquired) and relations to the player's
own account ("with a hero I bought", "that are my friends", "in my clan, whatever their clan
role"). Reductions rank (with the tie-break stated), keep what is above the average, or count the
players met across the kept matches ("every player who was on my team in at least 3 of them").
Writes are the game's: favourite or unfavourite a match (with a note), send friend requests,
unfriend, block, open a room and invite players to it (a created id the invitations use), buy
heroes, or buy the hero each player has the most proficiency with (a chained read per player).
Clan applications are not part of it: in this world most applicants are already in a clan and the
clans with a queue are full, so nearly every approval is refused and nothing certifies.

Every player-shaped entity that comes from a different listing is its own entity (`friend`,
`clanmate`, `ranked`, `player`, `opponent`): its listing carries other fields (intimacy, clan
role, season tier), and a reduction cannot be limited to some sources, only to an entity.

Writes the product refuses anyway (a match favourited twice, a request to a friend or across a
block, a hero already owned or not yet released) are not conditions: the public half skips them,
reading what tells them apart (the favourites, `get_player`'s relation, the hero's shop fields).
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...tasks.composition import Action, Drafting, Entity, Grammar, Reduction, Row, Solving, Source
from ...tasks.part_kinds import AboveAverage, EachCall, Equals, Every, Flag, GroupThreshold, GroupTop, Threshold, TopK
from ...tasks.public import Condition, Lazy, find_one
from ...tasks.spec import Step
from ...tasks.template_api import NoTarget
from ...tasks.template_helpers import pretty_day, ref
from .schema import rank_score, tier_index
from .templates import CLAN_READING, FRIEND_MESSAGES, MATCH_NOTES, ROOM_NAMES
from .vocabulary import LANES, REGIONS, ROLES, TIERS

ENTITIES = {
    "match": Entity("match", "matches", "match_id"),
    "hero": Entity("hero", "heroes", "hero_id"),
    "owned": Entity("owned", "heroes", "hero_id"),
    "friend": Entity("friend", "players", "player_id", person=True),
    "clanmate": Entity("clanmate", "players", "player_id", person=True),
    "ranked": Entity("ranked", "players", "player_id", person=True),
    "player": Entity("player", "players", "player_id", person=True),
    "opponent": Entity("opponent", "players", "player_id", person=True),
}
PEOPLE = ("friend", "clanmate", "ranked", "player")  # the player-shaped entities a request or a room invitation goes to

MODES = ("ranked", "classic", "brawl")
ROOM_MODES = ("classic", "brawl", "custom")  # rooms of 10: every invitation fits
MAX_INVITED = 9  # a room of 10 holds me and nine invited players
STATUS_WORDS = {"online": "online", "offline": "offline", "in_match": "in a match"}
VIA_WORDS = {
    "purchase": "by buying them in the shop",
    "starter": "as starter heroes",
    "event": "from an event",
    "season_reward": "as a season reward",
}
HISTORY = ("history", "current_season", "past_season", "hero_matches", "duo")  # sources listed by list_match_history
MATCH_LEVEL = ("mode", "start_date", "end_date", "season_id")  # list_match_history filters that hold for both players of a match

TODAY_SQL = "(SELECT id FROM seasons WHERE start_date <= :today AND end_date >= :today)"
FRIENDS_SQL = "SELECT other_id FROM relations WHERE player_id = :actor AND kind = 'friend'"
CLAN_SQL = "SELECT player_id FROM team_members WHERE team_id = (SELECT team_id FROM team_members WHERE player_id = :actor)"
BLOCKED_SQL = (
    "e.id IN (SELECT other_id FROM relations WHERE player_id = :actor AND kind = 'blocked') "
    "OR e.id IN (SELECT player_id FROM relations WHERE other_id = :actor AND kind = 'blocked')"
)
RECEIVED_SQL = "e.id IN (SELECT sender_id FROM friend_requests WHERE receiver_id = :actor AND status = 'pending')"
REQUEST_REFUSED_SQL = (
    f"e.id IN ({FRIENDS_SQL}) OR {BLOCKED_SQL} OR {RECEIVED_SQL} "
    "OR e.id IN (SELECT receiver_id FROM friend_requests WHERE sender_id = :actor AND status = 'pending')"
)
FAVOURITES_SQL = "SELECT match_id FROM favourite_matches WHERE player_id = :actor"
OWNED_SQL = "SELECT hero_id FROM player_heroes WHERE player_id = :actor"
NOT_FOR_SALE_SQL = f"e.availability != 'shop' OR e.release_date > :today OR e.id IN ({OWNED_SQL})"


# == helpers ==================================================================================


def _memo(d: Drafting, key: str, make: Callable[[], Any]) -> Any:
    """A value computed once per draw (the SQL half reads it for every lazy variant)."""
    store: dict[str, Any] = d.__dict__.setdefault("_moba", {})
    if key not in store:
        store[key] = make()
    return store[key]


T = TypeVar("T")

# The world's answers to the drafts' queries, per connection (a generation run drafts thousands of
# times on one read-only copy): a few connections are kept, each with what was asked of it. Holding
# the connection keeps its id from being reused by another one.
# Per connection: what was read from it (row lists by query, values by name).
_WORLD: OrderedDict[int, tuple[Any, dict[Any, Any]]] = OrderedDict()


def _world_rows(d: Drafting, sql: str, **params: Any) -> list[Row]:
    """`d.rows(sql)`, asked once per world copy (the rows are shared: callers do not change them)."""
    conn = d.ctx.conn
    entry = _WORLD.get(id(conn))
    if entry is None or entry[0] is not conn:
        entry = _WORLD[id(conn)] = (conn, {})
        while len(_WORLD) > 4:
            _WORLD.popitem(last=False)
    given = {"actor": d.actor, **d.params, **params}
    key = (sql, tuple((name, given.get(name)) for name in sorted(set(re.findall(r":(\w+)", sql)))))
    if key not in entry[1]:
        entry[1][key] = d.rows(sql, **params)
    rows: list[Row] = entry[1][key]
    return rows


def _world_value(d: Drafting, name: str, make: Callable[[], T]) -> T:
    """A value computed from the world for the draw's actor, once per world copy."""
    conn = d.ctx.conn
    _world_rows(d, "SELECT 1")  # makes sure the connection has its entry
    store = _WORLD[id(conn)][1]
    key = ("value", name, d.actor)
    if key not in store:
        store[key] = make()
    value: T = store[key]  # what `make` made for this name
    return value


def _world_column(d: Drafting, sql: str, **params: Any) -> list[Any]:
    return [next(iter(row.values())) for row in _world_rows(d, sql, **params)]


def _ascii_lower(text: str) -> str:
    """SQLite's lower(): ASCII letters only, so that both halves sort names alike."""
    return "".join(c.lower() if c.isascii() else c for c in text)


def _quoted(text: str) -> str:
    return f"'{text}'"


def _day(value: Any) -> str | None:
    return value[:10] if isinstance(value, str) else None


def _dates(attrs: list[Any]) -> list[Any]:
    """The data's own dates: a candidate lands on the boundary (its inclusivity is then certified)."""
    return sorted({a for a in attrs if a})[1:-1]


def _present(attrs: list[Any]) -> list[Any]:
    return sorted({a for a in attrs if a is not None})


def _minutes(seconds: int) -> str:
    return f"{seconds // 60} minutes"


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _tier(item: Row, field: str = "tier") -> int | None:
    value = item.get(field)
    return TIERS.index(value) if value in TIERS else None


def _today(d: Drafting) -> None:
    d.params["today"] = d.ctx.now[:10]


def _me(s: Solving) -> Row:
    return s.remember("me", lambda: s.api.call("get_my_profile"))


def _friend_ids(s: Solving) -> set[int]:
    return s.remember("friends", lambda: {i["player_id"] for i in s.listing("list_friends")})


def _clan_ids(s: Solving) -> set[int]:
    def make() -> set[int]:
        clan = _me(s).get("clan")
        if not clan:
            return set()
        return {m["player_id"] for m in s.listing("get_team", within="members", team_id=clan["team_id"])}

    return s.remember("clan", make)


def _match(s: Solving, match_id: int) -> Row:
    """A match as get_match shows it (read once per solve); {} when the read fails."""
    return s.remember(f"match:{match_id}", lambda: s.api.call("get_match", match_id=match_id) or {})


def _match_players(s: Solving, match_id: int) -> list[Row]:
    return list(_match(s, match_id).get("players", []))


def _side_of(s: Solving, match_id: int) -> tuple[str | None, list[Row]]:
    """My side in a match and its ten players (get_match)."""
    players = _match_players(s, match_id)
    me = _me(s)["player_id"]
    mine = next((p for p in players if p["player_id"] == me), None)
    return (mine["side"] if mine else None), players


def _relation(s: Solving, player: int) -> Row:
    def make() -> Row:
        found = s.api.call("get_player", player_id=player)
        return dict(found["relation"]) if found and found.get("relation") else {}

    return s.remember(f"relation:{player}", make)


def _blocked(s: Solving, player: int) -> bool:
    relation = _relation(s, player)
    return bool(relation.get("blocked_by_me") or relation.get("has_blocked_me"))


def _hero_table(s: Solving) -> dict[int, Row]:
    return s.remember("heroes", lambda: {h["hero_id"]: h for h in s.listing("search_heroes")})


def _my_heroes(s: Solving) -> dict[int, Row]:
    return s.remember("my_heroes", lambda: {h["hero_id"]: h for h in s.listing("list_my_heroes")})


def _person(item: Row) -> Row:
    """A listed player with the computed fields the parts compare: rank as one number (tier, then
    stars) and the nickname as both halves sort it."""
    out = dict(item)
    tier = _tier(item)
    out["rank_score"] = None if tier is None else tier * 1000 + int(item.get("stars") or 0)
    out["nick_key"] = _ascii_lower(str(item.get("nickname", "")))
    return out


def _hero_item(item: Row) -> Row:
    out = dict(item)
    out["name_key"] = _ascii_lower(str(item.get("name", "")))
    return out


def _sides(d: Drafting) -> dict[int, list[tuple[int, bool]]]:
    """For each match of the actor: the other nine players, each with whether they were on the actor's side."""

    def make() -> dict[int, list[tuple[int, bool]]]:
        out: dict[int, list[tuple[int, bool]]] = {}
        for row in _world_rows(
            d,
            "SELECT mp.match_id AS m, o.player_id AS p, o.side = mp.side AS same FROM match_players mp JOIN match_players o "
            "ON o.match_id = mp.match_id AND o.player_id != mp.player_id WHERE mp.player_id = :actor ORDER BY mp.match_id, o.player_id",
        ):
            out.setdefault(row["m"], []).append((row["p"], bool(row["same"])))
        return out

    return _world_value(d, "sides", make)


def _pick(d: Drafting, sql: str, what: str, **params: Any) -> Row:
    return d.choice(_world_rows(d, sql, **params), what)


def _any_actor(d: Drafting, where: str = "1", **params: Any) -> int:
    return int(d.choice(_world_column(d, f"SELECT id FROM players WHERE {where} ORDER BY id", **params), "player"))


# == sources ==================================================================================

MATCH_COLUMNS = "mp.match_id AS id, mp.side, mp.result, mp.kills, mp.deaths, mp.assists, mp.score, mp.is_mvp, mp.hero_id"


def _my_matches_sql(where: str = "", columns: str = "", join: str = "") -> str:
    return (
        f"SELECT {MATCH_COLUMNS}{columns} FROM match_players mp JOIN matches m ON m.id = mp.match_id {join} "
        f"WHERE mp.player_id = :actor{where}"
    )


def _players_with_matches(d: Drafting, where: str, low: int, high: int, what: str, **params: Any) -> int:
    return int(
        d.choice(
            _world_column(
                d,
                f"SELECT mp.player_id FROM match_players mp JOIN matches m ON m.id = mp.match_id WHERE {where} "
                f"GROUP BY mp.player_id HAVING COUNT(*) BETWEEN {low} AND {high} ORDER BY mp.player_id",
                **params,
            ),
            what,
        )
    )


class History(Source):
    def __init__(self) -> None:
        super().__init__(
            "history",
            "match",
            ("matches", "games", "matches"),
            ("in my whole match history", "from my entire match history", "anywhere in my match history"),
        )

    def draw(self, d: Drafting) -> str:
        d.actor = _players_with_matches(d, "1", 30, 150, "player")
        return _my_matches_sql()

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_match_history", narrow=narrow)


class CurrentSeason(Source):
    def __init__(self) -> None:
        super().__init__(
            "current_season",
            "match",
            ("matches", "games", "matches"),
            ("I played in the current season", "of mine from this season", "I have played so far this season"),
        )

    def draw(self, d: Drafting) -> str:
        _today(d)
        d.actor = _players_with_matches(d, f"m.season_id = {TODAY_SQL}", 15, 120, "player", today=d.params["today"])
        return _my_matches_sql(f" AND m.season_id = {TODAY_SQL}")

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        season = _me(s)["current_season"]["season_id"]
        return s.listing("list_match_history", narrow=narrow, season_id=season)


def _season_id(s: Solving, name: str) -> int:
    seasons = s.remember("seasons", lambda: s.api.call("get_rank")["seasons"])
    return int(find_one(seasons, name=name)["season_id"])


class PastSeason(Source):
    def __init__(self) -> None:
        super().__init__(
            "past_season",
            "match",
            ("matches", "games", "matches"),
            ("I played in season {s_season}", "of mine from season {s_season}", "I played during season {s_season}"),
            weight=0.8,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_season",)

    def draw(self, d: Drafting) -> str:
        _today(d)
        row = _pick(
            d,
            "SELECT mp.player_id, m.season_id, s.name FROM match_players mp JOIN matches m ON m.id = mp.match_id "
            f"JOIN seasons s ON s.id = m.season_id WHERE m.season_id < {TODAY_SQL} GROUP BY mp.player_id, m.season_id "
            "HAVING COUNT(*) BETWEEN 12 AND 60 ORDER BY mp.player_id, m.season_id",
            "player and season",
            today=d.params["today"],
        )
        d.actor = row["player_id"]
        d.params["season"] = row["season_id"]
        d.state("s_season", row["name"])
        return _my_matches_sql(" AND m.season_id = :season")

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_match_history", narrow=narrow, season_id=_season_id(s, s.stated["s_season"]))


class HeroMatches(Source):
    def __init__(self) -> None:
        super().__init__(
            "hero_matches",
            "match",
            ("matches", "games", "matches"),
            ("I played as {s_hero}", "in which I picked {s_hero}", "where my hero was {s_hero}"),
            weight=0.8,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_hero",)

    def draw(self, d: Drafting) -> str:
        row = _pick(
            d,
            "SELECT mp.player_id, mp.hero_id, h.name FROM match_players mp JOIN heroes h ON h.id = mp.hero_id "
            "GROUP BY mp.player_id, mp.hero_id HAVING COUNT(*) BETWEEN 12 AND 60 ORDER BY mp.player_id, mp.hero_id",
            "player and hero",
        )
        d.actor = row["player_id"]
        d.params["hero"] = row["hero_id"]
        d.state("s_hero", row["name"])
        return _my_matches_sql(" AND mp.hero_id = :hero")

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        hero = find_one(s.listing("search_heroes", query=s.stated["s_hero"]), name=s.stated["s_hero"])
        return s.listing("list_match_history", narrow=narrow, hero_id=hero["hero_id"])


class Duo(Source):
    """The matches a named player and I both played, on either side (`ally`: on mine)."""

    def __init__(self) -> None:
        super().__init__(
            "duo",
            "match",
            ("matches", "games", "matches"),
            ("that {s_nick} and I both played", "I shared with {s_nick} (on either side)", "in which {s_nick} played too"),
            weight=0.8,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_nick",)

    def draw(self, d: Drafting) -> str:
        d.actor = _players_with_matches(d, "1", 30, 200, "player")
        busy = set(_world_column(d, "SELECT player_id FROM match_players GROUP BY player_id HAVING COUNT(*) > 200"))
        partners = _world_rows(
            d,
            "SELECT b.player_id AS other, p.nickname FROM match_players a JOIN match_players b "
            "ON b.match_id = a.match_id AND b.player_id != a.player_id JOIN players p ON p.id = b.player_id "
            "WHERE a.player_id = :actor GROUP BY b.player_id "
            "HAVING COUNT(*) BETWEEN 12 AND 60 AND SUM(a.side = b.side) BETWEEN 3 AND COUNT(*) - 3 ORDER BY b.player_id",
        )
        row = d.choice([r for r in partners if r["other"] not in busy], "partner")
        if "'" in row["nickname"]:
            raise NoTarget("a nickname with a quote")
        d.params["partner"] = row["other"]
        d.state("s_nick", row["nickname"], _quoted(row["nickname"]))
        return _my_matches_sql(
            columns=", o.side = mp.side AS ally", join="JOIN match_players o ON o.match_id = mp.match_id AND o.player_id = :partner"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        partner = find_one(s.listing("search_players", query=s.stated["s_nick"]), nickname=s.stated["s_nick"])["player_id"]
        shared = {k: v for k, v in narrow.items() if k in MATCH_LEVEL}
        theirs = {m["match_id"]: m["side"] for m in s.listing("list_match_history", narrow=shared, player_id=partner)}
        return [
            {**m, "ally": theirs[m["match_id"]] == m["side"]}
            for m in s.listing("list_match_history", narrow=narrow)
            if m["match_id"] in theirs
        ]


class FavouriteMatches(Source):
    """My favourite matches; each is opened (get_match) for what the favourites list leaves out."""

    def __init__(self) -> None:
        super().__init__(
            "fav_matches",
            "match",
            ("matches", "games", "matches"),
            ("saved in my favourites", "I have saved to my favourites", "in my favourites"),
            weight=0.3,
        )

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _world_column(d, "SELECT player_id FROM favourite_matches GROUP BY player_id HAVING COUNT(*) >= 6 ORDER BY player_id"),
                "player",
            )
        )
        return _my_matches_sql(
            columns=", f.favourited_at", join="JOIN favourite_matches f ON f.match_id = mp.match_id AND f.player_id = mp.player_id"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        out = []
        for item in s.listing("list_favourite_matches"):
            match = _match(s, item["match_id"])
            side, _ = _side_of(s, item["match_id"])
            out.append({**item, "side": side, "duration_sec": match.get("duration_sec"), "season_id": match.get("season_id")})
        return out


class Friends(Source):
    def __init__(self) -> None:
        super().__init__("friends", "friend", ("friends", "friends", "friends"), ("of mine", "on my friend list", "I have"), weight=1.4)

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _world_column(
                    d, "SELECT player_id FROM relations WHERE kind = 'friend' GROUP BY player_id HAVING COUNT(*) >= 9 ORDER BY player_id"
                ),
                "player with friends",
            )
        )
        return "SELECT other_id AS id, intimacy, since FROM relations WHERE player_id = :actor AND kind = 'friend'"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return [_person(i) for i in s.listing("list_friends", narrow=narrow)]


class Clan(Source):
    """The other players of my clan, every role (the wording says so: CLAN_READING)."""

    def __init__(self) -> None:
        super().__init__(
            "clan",
            "clanmate",
            ("players of any clan role", "players, whatever their clan role,", "players in every clan role"),
            ("in my clan besides me", "from my clan other than me", "of my clan apart from me"),
            readings=(CLAN_READING,),
            weight=1.1,
        )

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _world_column(
                    d,
                    "SELECT m.player_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.member_count >= 6 ORDER BY m.player_id",
                ),
                "player in a clan",
            )
        )
        return (
            "SELECT m.player_id AS id, m.role, m.contribution, m.joined_at FROM team_members m "
            "WHERE m.team_id = (SELECT team_id FROM team_members WHERE player_id = :actor) AND m.player_id != :actor"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        me = _me(s)
        members = [m for m in s.listing("get_team", within="members", team_id=me["clan"]["team_id"]) if m["player_id"] != me["player_id"]]
        chosen = s.api.reading(CLAN_READING.name, members, [m for m in members if m["role"] == "member"])
        return [_person(m) for m in chosen]


class Leaderboard(Source):
    """A season's whole leaderboard (every region), without me."""

    def __init__(self) -> None:
        super().__init__(
            "board",
            "ranked",
            ("players", "players", "players"),
            (
                "on the {s_season} leaderboard other than me",
                "ranked on the leaderboard of season {s_season}, apart from me",
                "listed on the {s_season} leaderboard besides me",
            ),
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_season",)

    def draw(self, d: Drafting) -> str:
        _today(d)
        season = _pick(
            d,
            f"SELECT id, name FROM seasons WHERE id <= {TODAY_SQL} AND id >= {TODAY_SQL} - 5 ORDER BY id",
            "season",
            today=d.params["today"],
        )
        d.actor = _any_actor(d)
        d.params["season"] = season["id"]
        d.state("s_season", season["name"])
        return (
            "SELECT r.player_id AS id, r.tier AS season_tier, r.stars AS season_stars, r.ranked_wins, r.ranked_matches, "
            "r.peak_tier, p.region AS season_region FROM season_ranks r JOIN players p ON p.id = r.player_id "
            "WHERE r.season_id = :season AND r.player_id != :actor"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        me = _me(s)["player_id"]
        board = s.listing("get_rank", within="leaderboard", narrow=narrow, season_id=_season_id(s, s.stated["s_season"]))
        return [_person(i) for i in board if i["player_id"] != me]


class RegionPlayers(Source):
    """The players of a region, without me (mostly my own region: my friends and clan are there)."""

    def __init__(self) -> None:
        super().__init__(
            "region",
            "player",
            ("players", "players", "players"),
            ("from {s_region} other than me", "of the {s_region} region besides me", "in {s_region} apart from me"),
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_region",)

    def draw(self, d: Drafting) -> str:
        d.actor = _any_actor(d)
        home = d.value("SELECT region FROM players WHERE id = :actor")
        region = home if d.rng.random() < 0.7 else d.choice(list(REGIONS), "region")
        d.params["region"] = region
        d.state("s_region", region)
        return "SELECT id FROM players WHERE region = :region AND id != :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        me = _me(s)["player_id"]
        return [_person(i) for i in s.listing("search_players", narrow=narrow, region=s.stated["s_region"]) if i["player_id"] != me]


RICH = "coins >= 25000 OR diamonds >= 900"  # who can buy a few heroes


BUYABLE_SQL = f"SELECT id FROM heroes WHERE availability = 'shop' AND release_date <= :today AND id NOT IN ({OWNED_SQL})"


def _buyable(s: Solving, narrow: Row, **args: Any) -> list[Row]:
    """The released shop heroes I do not own yet (search_heroes lists the announced ones too)."""
    return [_hero_item(h) for h in s.listing("search_heroes", narrow=narrow, availability="shop", owned=False, **args) if h["released"]]


class Shop(Source):
    """The heroes I could buy: released, in the shop, not mine yet (so "the 3 cheapest" are three I can buy)."""

    def __init__(self) -> None:
        super().__init__(
            "shop",
            "hero",
            ("heroes", "heroes", "shop heroes"),
            ("from the shop not yet mine", "I do not own yet from the shop", "I am still missing"),
            weight=0.8,
        )

    def draw(self, d: Drafting) -> str:
        _today(d)
        d.actor = _any_actor(d, RICH)
        return BUYABLE_SQL

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return _buyable(s, narrow)


class RoleShop(Source):
    def __init__(self) -> None:
        super().__init__(
            "role_shop",
            "hero",
            ("heroes I do not own yet", "heroes still missing from my collection", "heroes not yet mine"),
            (
                "in the shop with {s_role} as their main or secondary role",
                "from the shop whose main or secondary role is {s_role}",
                "in the shop having {s_role} as main or secondary role",
            ),
            weight=0.8,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_role",)

    def draw(self, d: Drafting) -> str:
        _today(d)
        role = d.choice(list(ROLES), "role")
        d.actor = _any_actor(d, RICH)
        d.params["role"] = role
        d.state("s_role", role)
        return f"{BUYABLE_SQL} AND (role = :role OR secondary_role = :role)"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return _buyable(s, narrow, role=s.stated["s_role"])


class Owned(Source):
    def __init__(self) -> None:
        super().__init__(
            "owned",
            "owned",
            ("heroes", "heroes", "heroes"),
            ("I own", "I have in my collection", "I currently own"),
            weight=0.7,
        )

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _world_column(
                    d, "SELECT player_id FROM player_heroes GROUP BY player_id HAVING COUNT(*) BETWEEN 12 AND 45 ORDER BY player_id"
                ),
                "player",
            )
        )
        return (
            "SELECT hero_id AS id, acquired_at, acquired_via, proficiency, matches_played, wins FROM player_heroes WHERE player_id = :actor"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return [_hero_item(h) for h in s.listing("list_my_heroes", narrow=narrow)]


# == predicates ===============================================================================


def _on(sources: Sequence[str], field: str, value: Callable[[Any], Any] = lambda v: v) -> Callable[[str, Any], Row | None]:
    """A listing's own filter for a stated term, on the sources whose listing takes it."""

    def narrow(source: str, stated: Any) -> Row | None:
        return {field: value(stated)} if source in sources else None

    return narrow


def _match_day(s: Solving, item: Row) -> str | None:
    return _day(item.get("started_at"))


def _kda(item: Row) -> float:
    kda: float = (item["kills"] + item["assists"]) / max(item["deaths"], 1)
    return kda


def _hero_role(s: Solving, item: Row) -> Any:
    return _hero_table(s).get(int(item["hero_id"]), {}).get("role")


def _bought(s: Solving, item: Row) -> bool:
    return _my_heroes(s).get(int(item["hero_id"]), {}).get("acquired_via") == "purchase"


MATCH_PREDICATES = [
    Equals(
        "mode",
        "match",
        "e.mode",
        "mode",
        ("were <v> games", "were played in <v> mode", "have <v> as their mode"),
        negated=("were not <v> games", "were played in a mode other than <v>", "do not have <v> as their mode"),
        values=lambda d: list(MODES),
        narrow=_on(HISTORY, "mode"),
    ),
    Flag(
        "won",
        "match",
        "src.result = 'win'",
        lambda s, i: i.get("result") == "win",
        ("I won", "ended in a win for my side", "my team won"),
        negated=("I lost", "ended in a loss for my side", "my team lost"),
        narrow=_on(HISTORY, "result", lambda _: "win"),
    ),
    Flag(
        "mvp",
        "match",
        "src.is_mvp",
        "is_mvp",
        ("I was MVP of", "made me MVP", "I earned the MVP title in"),
        negated=("I was not MVP of", "did not make me MVP", "I did not earn the MVP title in"),
    ),
    Equals(
        "side",
        "match",
        "src.side",
        "side",
        ("I played on the <v> side of", "had me on the <v> side", "saw me play for the <v> side"),
        values=lambda d: ["blue", "red"],
    ),
    Threshold(
        "played_since",
        "match",
        "substr(e.started_at, 1, 10)",
        _match_day,
        ("were played on or after <v>", "started on <v> or later", "date from <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
        narrow=_on(HISTORY, "start_date"),
    ),
    Threshold(
        "played_before",
        "match",
        "substr(e.started_at, 1, 10)",
        _match_day,
        ("were played before <v>", "started earlier than <v>", "date from before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        narrow=_on(HISTORY, "end_date"),  # through that day: a superset the solver narrows itself
    ),
    Threshold(
        "played_through",
        "match",
        "substr(e.started_at, 1, 10)",
        _match_day,
        ("were played on or before <v>", "started no later than <v>", "date from <v> or earlier"),
        op="<=",
        candidates=_dates,
        show=pretty_day,
        narrow=_on(HISTORY, "end_date"),
    ),
    Threshold(
        "long",
        "match",
        "e.duration_sec",
        "duration_sec",
        ("lasted at least <v>", "ran for <v> or longer", "went on for <v> or more"),
        op=">=",
        candidates=lambda _: [m * 60 for m in (10, 12, 15, 18, 20, 25, 30)],
        show=_minutes,
    ),
    Threshold(
        "short",
        "match",
        "e.duration_sec",
        "duration_sec",
        ("lasted at most <v>", "were over within <v>", "took <v> or less"),
        op="<=",
        candidates=lambda _: [m * 60 for m in (10, 12, 15, 18, 20, 25, 30)],
        show=_minutes,
    ),
    Threshold(
        "kills",
        "match",
        "src.kills",
        "kills",
        ("I got at least <v> kills in", "brought me <v> kills or more", "saw me score <v> or more kills"),
        op=">=",
        candidates=lambda _: [2, 3, 4, 5, 6, 8, 10],
    ),
    Threshold(
        "few_deaths",
        "match",
        "src.deaths",
        "deaths",
        ("I died at most <v> times in", "cost me <v> deaths or fewer", "saw me die no more than <v> times"),
        op="<=",
        candidates=lambda _: [2, 3, 4, 5, 6],
    ),
    Threshold(
        "assists",
        "match",
        "src.assists",
        "assists",
        ("I made at least <v> assists in", "gave me <v> assists or more", "saw me collect <v> or more assists"),
        op=">=",
        candidates=lambda _: [4, 5, 6, 8, 10, 12],
        private=True,
    ),
    Threshold(
        "score",
        "match",
        "src.score",
        "score",
        (
            "gave me a performance score of at least <v>",
            "earned me a score of <v> or more",
            "rated my performance at <v> or higher (by my score)",
        ),
        op=">=",
        candidates=lambda _: [6, 7, 7.5, 8, 8.5, 9, 9.5, 10, 11, 12],
        show=_number,
    ),
    Threshold(
        "kda",
        "match",
        "(src.kills + src.assists) * 1.0 / MAX(src.deaths, 1)",
        lambda s, i: _kda(i),
        (
            "gave me a KDA of at least <v> ((kills + assists) / deaths, a game without deaths dividing by 1)",
            "had my (kills + assists) / deaths at <v> or more (no deaths counting as 1)",
            "reached a KDA of <v> or higher for me, that is (kills + assists) over deaths with zero deaths taken as 1",
        ),
        op=">=",
        candidates=lambda _: [2, 2.5, 3, 3.5, 4, 5, 6, 8],
        show=_number,
        private=True,
    ),
    Equals(
        "hero_role",
        "match",
        "(SELECT role FROM heroes h WHERE h.id = src.hero_id)",
        _hero_role,
        (
            "I played with a hero whose main role is <v>",
            "saw me on a hero with <v> as its main role",
            "I played a hero with <v> as its main role",
        ),
        negated=(
            "I played with a hero whose main role is not <v>",
            "saw me on a hero whose main role is something other than <v>",
            "I played a hero without <v> as its main role",
        ),
        values=lambda d: list(ROLES),
        excluded_sources=("hero_matches",),
    ),
    Flag(
        "bought_hero",
        "match",
        f"src.hero_id IN ({OWNED_SQL} AND acquired_via = 'purchase')",
        _bought,
        (
            "I played with a hero I bought in the shop",
            "saw me on a hero I paid for in the shop",
            "I played with a hero I got by buying it",
        ),
        negated=(
            "I played with a hero I did not buy in the shop",
            "saw me on a hero I did not pay for in the shop",
            "I played with a hero I got without buying it",
        ),
        excluded_sources=("hero_matches",),
    ),
    Flag(
        "ally",
        "match",
        "src.ally",
        "ally",
        ("had {s_nick} on my side", "saw {s_nick} play on my team", "{s_nick} played on my team in"),
        negated=("had {s_nick} on the enemy side", "saw {s_nick} play against me", "{s_nick} played against me in"),
        sources=("duo",),
    ),
    Threshold(
        "fav_since",
        "match",
        "substr(src.favourited_at, 1, 10)",
        lambda s, i: _day(i.get("favourited_at")),
        ("I saved to my favourites on or after <v>", "went into my favourites on <v> or later", "I favourited on <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
        sources=("fav_matches",),
    ),
]


def _tier_name(index: int) -> str:
    return TIERS[index]


def _is_friend(s: Solving, item: Row) -> bool:
    return item.get("player_id") in _friend_ids(s)


def _in_clan(s: Solving, item: Row) -> bool:
    return item.get("player_id") in _clan_ids(s)


def _person_predicates(
    entity: str, p: str, *, tier: str = "current", region: bool = True, status: bool = True, level: bool = True
) -> list[Any]:
    """The predicates every player-shaped entity shares, keyed `<p>_...`: rank (current, or the
    season's on a leaderboard), level, status, region, and the relations to me."""
    out: list[Any] = []
    if tier == "current":
        out += [
            Threshold(
                f"{p}_tier",
                entity,
                tier_index("e.tier"),
                lambda s, i: _tier(i),
                (
                    "are currently ranked <v> or higher",
                    "hold a current rank of <v> or above",
                    "sit at <v> or better in the current ranking",
                ),
                op=">=",
                candidates=_present,  # the tiers present: one lands on the boundary
                show=_tier_name,
            ),
            Threshold(
                f"{p}_below",
                entity,
                tier_index("e.tier"),
                lambda s, i: _tier(i),
                ("are currently ranked below <v>", "hold a current rank lower than <v>", "sit under <v> in the current ranking"),
                op="<",
                candidates=_present,  # the tiers present: one lands on the boundary
                show=_tier_name,
                private=True,
            ),
        ]
    else:
        out += [
            Threshold(
                f"{p}_tier",
                entity,
                tier_index("src.season_tier"),
                lambda s, i: _tier(i),
                ("are at <v> or higher on that leaderboard", "hold <v> or better on that leaderboard", "reached <v> or above that season"),
                op=">=",
                candidates=_present,  # the tiers present: one lands on the boundary
                show=_tier_name,
            ),
            Threshold(
                f"{p}_below",
                entity,
                tier_index("src.season_tier"),
                lambda s, i: _tier(i),
                ("are below <v> on that leaderboard", "hold a tier lower than <v> on that leaderboard", "stayed under <v> that season"),
                op="<",
                candidates=_present,  # the tiers present: one lands on the boundary
                show=_tier_name,
            ),
            Threshold(
                f"{p}_peak",
                entity,
                tier_index("src.peak_tier"),
                lambda s, i: _tier(i, "peak_tier"),
                (
                    "peaked at <v> or higher that season",
                    "reached a peak tier of <v> or above that season",
                    "had <v> or better as their peak that season",
                ),
                op=">=",
                candidates=_present,  # the tiers present: one lands on the boundary
                show=_tier_name,
                private=True,
            ),
            Threshold(
                f"{p}_wins",
                entity,
                "src.ranked_wins",
                "ranked_wins",
                (
                    "have at least <v> ranked wins that season",
                    "won <v> or more ranked matches that season",
                    "count <v> ranked wins or more that season",
                ),
                op=">=",
                candidates=lambda _: [5, 10, 15, 20, 30, 40, 60],
            ),
            Threshold(
                f"{p}_games",
                entity,
                "src.ranked_matches",
                "ranked_matches",
                (
                    "played at least <v> ranked matches that season",
                    "have <v> or more ranked matches that season",
                    "count <v> ranked matches or more that season",
                ),
                op=">=",
                candidates=lambda _: [10, 20, 30, 40, 60, 80],
            ),
        ]
    if level:
        out.append(
            Threshold(
                f"{p}_level",
                entity,
                "e.level",
                "level",
                ("are at level <v> or higher", "have reached level <v>", "have a level of at least <v>"),
                op=">=",
                candidates=lambda _: list(range(10, 60, 5)),
            )
        )
    if status:
        out.append(
            Equals(
                f"{p}_status",
                entity,
                "e.status",
                "status",
                ("are <v> right now", "are currently <v>", "show as <v> at the moment"),
                negated=("are not <v> right now", "are currently not <v>", "do not show as <v> at the moment"),
                words=STATUS_WORDS,
                narrow=_on(("friends", "region"), "status"),
            )
        )
    if region:
        out.append(
            Equals(
                f"{p}_region",
                entity,
                "e.region",
                "region",
                ("are from <v>", "play in the <v> region", "have <v> as their region"),
                negated=("are not from <v>", "play outside the <v> region", "have a region other than <v>"),
                values=lambda d: list(REGIONS),
                narrow=_on(("board",), "region"),
            )
        )
    if entity != "friend":
        out.append(
            Flag(
                f"{p}_friend",
                entity,
                f"e.id IN ({FRIENDS_SQL})",
                _is_friend,
                ("are my friends", "are on my friend list", "I am already friends with"),
                negated=("are not my friends", "are not on my friend list", "I am not friends with yet"),
            )
        )
    if entity != "clanmate":
        out.append(
            Flag(
                f"{p}_clan",
                entity,
                f"e.id IN ({CLAN_SQL})",
                _in_clan,
                (
                    "are in my clan, whatever their clan role",
                    "belong to my clan in any clan role",
                    "are part of my clan, every clan role counting",
                ),
                negated=(
                    "are not in my clan, whatever their clan role",
                    "do not belong to my clan in any clan role",
                    "are not part of my clan in any clan role",
                ),
            )
        )
    return out


FRIEND_PREDICATES = [
    *_person_predicates("friend", "f", region=True),
    Threshold(
        "f_idle",
        "friend",
        "substr(e.last_login, 1, 10)",
        lambda s, i: _day(i.get("last_login")),
        ("last logged in before <v>", "have not logged in on or after <v>", "were last online before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "f_close",
        "friend",
        "src.intimacy",
        "intimacy",
        ("have an intimacy of at least <v> with me", "share <v> intimacy or more with me", "are at <v> intimacy or above with me"),
        op=">=",
        candidates=lambda _: [50, 100, 200, 300, 400, 500, 800, 1000, 2000],
    ),
    Threshold(
        "f_distant",
        "friend",
        "src.intimacy",
        "intimacy",
        ("have an intimacy below <v> with me", "share less than <v> intimacy with me", "are under <v> intimacy with me"),
        op="<",
        candidates=lambda _: [50, 100, 200, 300, 400, 500, 800, 1000],
    ),
    Threshold(
        "f_since",
        "friend",
        "substr(src.since, 1, 10)",
        lambda s, i: _day(i.get("friends_since")),
        ("became my friends on or after <v>", "have been my friends since <v> or later", "I befriended on <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "f_old",
        "friend",
        "substr(src.since, 1, 10)",
        lambda s, i: _day(i.get("friends_since")),
        ("became my friends before <v>", "have been my friends since before <v>", "I befriended before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        private=True,
    ),
]

CLAN_ROLE_WORDS = {"leader": "leader", "vice_leader": "vice leader", "elite": "elite", "member": "member"}

CLANMATE_PREDICATES = [
    *_person_predicates("clanmate", "c", region=True),
    Equals(
        "c_role",
        "clanmate",
        "src.role",
        "role",
        ("hold the clan role <v>", "have <v> as their clan role", "are listed with the clan role <v>"),
        negated=("do not hold the clan role <v>", "have a clan role other than <v>", "are not listed with the clan role <v>"),
        words=CLAN_ROLE_WORDS,
    ),
    Threshold(
        "c_contribution",
        "clanmate",
        "src.contribution",
        "contribution",
        ("have contributed at least <v> to the clan", "have a clan contribution of <v> or more", "count <v> contribution points or more"),
        op=">=",
        candidates=lambda _: [500, 1000, 2000, 3000, 4000, 5000, 8000, 10000],
        show=_number,
    ),
    Threshold(
        "c_joined",
        "clanmate",
        "substr(src.joined_at, 1, 10)",
        lambda s, i: _day(i.get("joined_at")),
        ("joined the clan before <v>", "have been in the clan since before <v>", "became part of the clan before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        private=True,
    ),
]

RANKED_PREDICATES = _person_predicates("ranked", "r", tier="season", status=False, level=False)
# A region's players: every one is from that region.
PLAYER_PREDICATES = _person_predicates("player", "p", region=False)


def _price(unit: str) -> Callable[[Any], str]:
    return lambda v: f"{v:,} {unit}"


HERO_PREDICATES = [
    Equals(
        "h_role",
        "hero",
        "e.role",
        "role",
        ("have <v> as their main role", "are <v> heroes by main role", "list <v> as their main role"),
        negated=("do not have <v> as their main role", "have a main role other than <v>", "do not list <v> as their main role"),
        values=lambda d: list(ROLES),
        narrow=_on(("shop",), "role"),  # main or secondary role: a superset (role_shop lists by its own role)
    ),
    Equals(
        "h_lane",
        "hero",
        "e.lane",
        "lane",
        ("are played in the <v> lane", "belong in the <v> lane", "have <v> as their lane"),
        negated=("are not played in the <v> lane", "belong in a lane other than <v>", "do not have <v> as their lane"),
        values=lambda d: list(LANES),
        narrow=_on(("shop", "role_shop"), "lane"),
    ),
    Equals(
        "h_difficulty",
        "hero",
        "e.difficulty",
        "difficulty",
        ("are rated <v> to play", "have the difficulty <v>", "count as <v> to play"),
        negated=("are not rated <v> to play", "have a difficulty other than <v>", "do not count as <v> to play"),
        narrow=_on(("shop", "role_shop"), "difficulty"),
    ),
    Threshold(
        "h_coins",
        "hero",
        "e.price_coins",
        "price_coins",
        ("cost at most <v>", "are priced at <v> or less", "sell for no more than <v>"),
        op="<=",
        candidates=lambda _: [6000, 7000, 9000, 10000, 12000, 14000, 15000, 19000],
        show=_price("coins"),
        narrow=_on(("shop", "role_shop"), "max_price_coins"),
    ),
    Threshold(
        "h_diamonds",
        "hero",
        "e.price_diamonds",
        "price_diamonds",
        ("cost at most <v>", "are priced at <v> or less", "sell for no more than <v>"),
        op="<=",
        candidates=lambda _: [300, 400, 500, 600, 700],
        show=_price("diamonds"),
        narrow=_on(("shop", "role_shop"), "max_price_diamonds"),
        private=True,
    ),
    Threshold(
        "h_new",
        "hero",
        "e.release_date",
        "release_date",
        ("have a release date of <v> or later", "came out on <v> or later", "were released on or after <v>"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "h_old",
        "hero",
        "e.release_date",
        "release_date",
        ("have a release date before <v>", "came out before <v>", "were released earlier than <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "h_owners",
        "hero",
        "e.owner_count",
        "owner_count",
        ("are owned by at least <v> players", "have <v> or more owners", "count <v> owners or more"),
        op=">=",
        candidates=lambda _: [5, 10, 15, 20, 25, 30],
    ),
    Flag(
        "h_solo_role",
        "hero",
        "e.secondary_role IS NULL",
        lambda s, i: i.get("secondary_role") is None,
        ("have no secondary role", "come without a secondary role", "list no secondary role"),
        negated=("have a secondary role", "come with a secondary role", "list a secondary role"),
    ),
]

OWNED_PREDICATES = [
    Equals(
        "o_role",
        "owned",
        "e.role",
        "role",
        ("have <v> as their main role", "are <v> heroes by main role", "list <v> as their main role"),
        negated=("do not have <v> as their main role", "have a main role other than <v>", "do not list <v> as their main role"),
        values=lambda d: list(ROLES),
        narrow=_on(("owned",), "role"),  # main or secondary role: a superset
    ),
    Equals(
        "o_lane",
        "owned",
        "e.lane",
        "lane",
        ("are played in the <v> lane", "belong in the <v> lane", "have <v> as their lane"),
        negated=("are not played in the <v> lane", "belong in a lane other than <v>", "do not have <v> as their lane"),
        values=lambda d: list(LANES),
    ),
    Equals(
        "o_via",
        "owned",
        "src.acquired_via",
        "acquired_via",
        ("I got <v>", "I acquired <v>", "I obtained <v>"),
        negated=("I did not get <v>", "I did not acquire <v>", "I did not obtain <v>"),
        words=VIA_WORDS,
    ),
    Threshold(
        "o_proficiency",
        "owned",
        "src.proficiency",
        "proficiency",
        ("I have at least <v> proficiency with", "give me a proficiency of <v> or more", "I have reached <v> proficiency or more with"),
        op=">=",
        candidates=lambda _: [500, 1000, 2000, 3000, 5000, 8000, 10000],
        show=_number,
    ),
    Threshold(
        "o_matches",
        "owned",
        "src.matches_played",
        "matches_played",
        ("I have played at least <v> matches with", "I have taken into <v> or more matches", "I have used in <v> matches or more"),
        op=">=",
        candidates=lambda _: [3, 5, 10, 15, 20, 30, 50],
    ),
    Threshold(
        "o_since",
        "owned",
        "substr(src.acquired_at, 1, 10)",
        lambda s, i: _day(i.get("acquired_at")),
        ("I acquired on or after <v>", "came to me on <v> or later", "have been mine since <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "o_before",
        "owned",
        "substr(src.acquired_at, 1, 10)",
        lambda s, i: _day(i.get("acquired_at")),
        ("I acquired before <v>", "came to me before <v>", "have been mine since before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        private=True,
    ),
]

# == reductions ===============================================================================

NEWER = "ties going to the more recent match"
BY_NICK = "ties going to the nickname first in the alphabet"
BY_NAME = "ties going to the name first in the alphabet"


class NoTieTopK(TopK):
    """A top k whose measure alone decides the cut (the tie-break is for order within it only)."""

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        values = sorted((r["r_m"] for r in rows), reverse=self.descending)
        fits = [k for k in self.k_choices if len(values) > k and values[k - 1] != values[k]]
        k = d.choice(fits, "clean top-k cut")
        if self.k_choices != (1,):
            d.state("r_k", k)


def _topk(key: str, entity: str, measure: tuple[str, str], tie: tuple[str, str], words: tuple[str, str], **options: Any) -> TopK:
    """A top k phrased from (how the k are named, the tie-break): "the {r_k} <best> (<tie>)"."""
    best, tie_words = words
    options.setdefault("k", (2, 3, 4))
    return TopK(
        key,
        entity,
        measure=measure,
        tie=tie,
        np=(
            f"the {{r_k}} {best} of the <sel> ({tie_words})",
            f"the {{r_k}} {best} among the <sel> (on a tie, {tie_words.removeprefix('ties going to ')})",
            f"the {{r_k}} {best} ({tie_words}) of all the <sel>",
        ),
        subject=(
            f"the {{r_k}} {best} ({tie_words})",
            f"the {{r_k}} {best}, {tie_words},",
            f"the {{r_k}} {best} of them (on a tie, {tie_words.removeprefix('ties going to ')})",
        ),
        take=(
            f"the {{r_k}} {best} ({tie_words})",
            f"the {{r_k}} {best} (on a tie, {tie_words.removeprefix('ties going to ')})",
            f"the {{r_k}} {best}, {tie_words},",
        ),
        **options,
    )


def _above(key: str, entity: str, measure: tuple[str, str], what: str, **options: Any) -> AboveAverage:
    """The items whose measure is above the selection's average ("whose <what> is above ...")."""
    return AboveAverage(
        key,
        entity,
        measure=measure,
        np=(
            f"those of the <sel> whose {what} is above the average {what} of that selection",
            f"every one of the <sel> with a {what} higher than the average of that selection",
            f"all of the <sel> whose {what} beats the average {what} of that selection",
        ),
        subject=(
            f"each one whose {what} is above the average {what} of that selection",
            f"every one with a {what} higher than the average of that selection",
            f"those whose {what} beats the average {what} of that selection",
        ),
        take=(
            f"those whose {what} is above the average {what} of that selection",
            f"every one with a {what} higher than the average of that selection",
            f"the ones whose {what} beats the average {what} of that selection",
        ),
        **options,
    )


class SideCount(Reduction):
    """The players who were on my side (or the enemy's) in at least n of the kept matches: the
    public half opens each match (get_match) and counts."""

    def __init__(self, key: str, out: str, *, ally: bool, phrases: dict[str, tuple[str, ...]], private: bool = False) -> None:
        super().__init__(key, "match", out, phrases["np"], phrases["subject"], phrases["take"], private=private)
        self.ally = ally
        self.thresholds = (2, 3, 4, 5)

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("r", "boundary", capability="aggregation_computation"),)

    def stated_keys(self) -> tuple[str, ...]:
        return ("r_n",)

    def _counts(self, d: Drafting, rows: list[Row]) -> Counter[int]:
        sides = _sides(d)
        return Counter(p for r in rows for p, same in sides.get(r["id"], ()) if same == self.ally)

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        counts = self._counts(d, rows)
        good = [n for n in self.thresholds if 0 < sum(c >= n for c in counts.values()) < len(counts)]
        d.state("r_n", d.choice(good, "player count threshold"))

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        counts = self._counts(d, rows)
        mode = lazy.mode if lazy.condition == "r" else None
        if mode == "ignore":
            return sorted(counts)
        bound = d.stated["r_n"]
        return sorted(p for p, c in counts.items() if (c > bound if mode == "off_by_one" else c >= bound))

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        counts: Counter[int] = Counter()
        me = _me(s)["player_id"]
        for item in items:
            side, players = _side_of(s, item["match_id"])
            counts.update(p["player_id"] for p in players if p["player_id"] != me and (p["side"] == side) == self.ally)
        return [{"player_id": p} for p in sorted(counts) if s.api.compare("r", counts[p], ">=", s.stated["r_n"])]


class SideTop(Reduction):
    """The k players who were on my side (or the enemy's) most often in the kept matches, ties
    going to the nickname first in the alphabet."""

    def __init__(self, key: str, out: str, *, ally: bool, phrases: dict[str, tuple[str, ...]], private: bool = False) -> None:
        super().__init__(key, "match", out, phrases["np"], phrases["subject"], phrases["take"], private=private)
        self.ally = ally
        self.k_choices = (2, 3, 4)

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("r", "ranking", capability="aggregation_computation", tie_break_stated=True),)

    def stated_keys(self) -> tuple[str, ...]:
        return ("r_k",)

    def _ranked(self, d: Drafting, rows: list[Row]) -> list[tuple[int, int, str]]:
        sides = _sides(d)
        counts = Counter(p for r in rows for p, same in sides.get(r["id"], ()) if same == self.ally)
        names = d.lookup("player", list(counts), "lower(e.nickname)")
        return sorted(((p, c, names[p]) for p, c in counts.items()), key=lambda x: (-x[1], x[2]))

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        ranked = self._ranked(d, rows)
        fits = [k for k in self.k_choices if len(ranked) > k and ranked[k - 1][1] != ranked[k][1]]
        d.state("r_k", d.choice(fits, "clean cut of players"))

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        ranked = [p for p, _, _ in self._ranked(d, rows)]
        k = int(d.stated["r_k"])
        if lazy.condition == "r":
            return ranked if lazy.mode == "ignore" else ranked[: k + 1]
        return ranked[:k]

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        counts: Counter[int] = Counter()
        names: dict[int, str] = {}
        me = _me(s)["player_id"]
        for item in items:
            side, players = _side_of(s, item["match_id"])
            for p in players:
                if p["player_id"] != me and (p["side"] == side) == self.ally:
                    counts[p["player_id"]] += 1
                    names[p["player_id"]] = _ascii_lower(p["nickname"])
        ranked = sorted(((p, c, names[p]) for p, c in counts.items()), key=lambda x: (-x[1], x[2]))
        return [{"player_id": p} for p, _, _ in s.api.top("r", ranked, int(s.stated["r_k"]), lambda x: (x[1], x[2]))]


def _side_phrases(side: str) -> dict[str, tuple[str, ...]]:
    """Phrases of a count of players met on `side` ("on my team", "on the enemy team")."""
    return {
        "np": (
            f"every player who was {side} in at least {{r_n}} of the <sel>",
            f"each player {side} in {{r_n}} or more of the <sel>",
            f"the players who played {side} in {{r_n}} or more of the <sel>",
        ),
        "subject": (
            f"every player who was {side} in at least {{r_n}} of them",
            f"each player {side} in {{r_n}} or more of them",
            f"the players found {side} in {{r_n}} or more of them",
        ),
        "take": (
            f"the players who were {side} in at least {{r_n}} of them",
            f"every player {side} in {{r_n}} or more of them",
            f"each player who played {side} in {{r_n}} or more of them",
        ),
    }


def _top_side_phrases(side: str) -> dict[str, tuple[str, ...]]:
    return {
        "np": (
            f"the {{r_k}} players who were {side} most often in the <sel> ({BY_NICK})",
            f"the top {{r_k}} players by how many of the <sel> they played {side} in ({BY_NICK})",
            f"the {{r_k}} players found {side} in the most of the <sel> (on a tie, the nickname first in the alphabet)",
        ),
        "subject": (
            f"the {{r_k}} players who were {side} most often in them ({BY_NICK})",
            f"the top {{r_k}} players by how many of them they played {side} in, {BY_NICK},",
            f"the {{r_k}} players found {side} in the most of them (on a tie, the nickname first in the alphabet)",
        ),
        "take": (
            f"the {{r_k}} players who were {side} most often in them ({BY_NICK})",
            f"the top {{r_k}} players by how many of them they played {side} in (on a tie, the nickname first in the alphabet)",
            f"the {{r_k}} players found {side} in the most of them, {BY_NICK},",
        ),
    }


MATCH_REDUCTIONS: list[Reduction] = [
    _topk(
        "m_top_score",
        "match",
        ("src.score", "score"),
        ("e.started_at", "started_at"),
        ("highest-scoring by my score", NEWER),
        k=(2, 3, 4, 5),
    ),
    _topk(
        "m_most_kills",
        "match",
        ("src.kills", "kills"),
        ("e.started_at", "started_at"),
        ("with the most kills for me", NEWER),
        k=(2, 3, 4, 5),
    ),
    _topk(
        "m_longest",
        "match",
        ("e.duration_sec", "duration_sec"),
        ("e.started_at", "started_at"),
        ("longest by duration", NEWER),
        k=(2, 3, 4),
    ),
    TopK(
        "m_best",
        "match",
        measure=("src.score", "score"),
        tie=("e.started_at", "started_at"),
        k=(1,),
        np=(
            "the single highest-scoring of the <sel> (by my score, " + NEWER + ")",
            "the one match with my best score among the <sel> (on a tie, the more recent match)",
            "my best-scoring match (by my score, " + NEWER + ") among the <sel>",
        ),
        subject=(
            "the single highest-scoring one (by my score, " + NEWER + ")",
            "the one with my best score (on a tie, the more recent match)",
            "the best of them by my score (" + NEWER + ")",
        ),
        take=(
            "the single highest-scoring one (by my score, " + NEWER + ")",
            "the one with my best score (on a tie, the more recent match)",
            "the best of them by my score (" + NEWER + ")",
        ),
    ),
    NoTieTopK(
        "m_recent",
        "match",
        measure=("e.started_at", "started_at"),
        tie=("e.id", "match_id"),
        k=(2, 3, 4, 5, 6),
        np=(
            "the {r_k} most recent of the <sel> (by start time)",
            "the {r_k} latest (by when they started) of the <sel>",
            "the {r_k} most recently started of the <sel>",
        ),
        subject=(
            "the {r_k} most recent ones (by start time)",
            "the {r_k} latest, by when they started,",
            "the {r_k} most recently started of them",
        ),
        take=(
            "the {r_k} most recent (by start time)",
            "the {r_k} latest, by when they started,",
            "the {r_k} most recently started",
        ),
    ),
    _above("m_above_score", "match", ("src.score", "score"), "score", private=True),
    SideCount("teammates_n", "player", ally=True, phrases=_side_phrases("on my team")),
    SideCount("opponents_n", "opponent", ally=False, phrases=_side_phrases("on the enemy team")),
    SideTop("top_teammates", "player", ally=True, phrases=_top_side_phrases("on my team")),
    SideTop("top_opponents", "opponent", ally=False, private=True, phrases=_top_side_phrases("on the enemy team")),
    _topk(
        "m_fewest_deaths",
        "match",
        ("src.deaths", "deaths"),
        ("e.started_at", "started_at"),
        ("with the fewest deaths for me", NEWER),
        descending=False,
        k=(2, 3, 4, 5),
    ),
    _topk(
        "m_shortest",
        "match",
        ("e.duration_sec", "duration_sec"),
        ("e.started_at", "started_at"),
        ("shortest by duration", NEWER),
        descending=False,
        private=True,
    ),
    # the heroes I played in the kept matches: "owned" heroes (I own every hero I have played)
    GroupTop(
        "top_hero",
        "match",
        "owned",
        group=("src.hero_id", "hero_id"),
        name=("(SELECT name FROM heroes h WHERE h.id = src.hero_id)", "hero"),
        out_field="hero_id",
        np=(
            "the hero I played in the most of the <sel> (" + BY_NAME + ")",
            "the one hero I picked most often among the <sel> (on a tie, the name first in the alphabet)",
            "whichever hero I played in the largest number of the <sel> (on a tie, the name first in the alphabet)",
        ),
        subject=(
            "the hero I played in the most of them (" + BY_NAME + ")",
            "the one hero I picked most often among them, on a tie the name first in the alphabet,",
            "whichever hero I played in the largest number of them (on a tie, the name first in the alphabet)",
        ),
        take=(
            "the hero I played in the most of them (" + BY_NAME + ")",
            "the one hero I picked most often among them (on a tie, the name first in the alphabet)",
            "whichever hero I played in the largest number of them, on a tie the name first in the alphabet,",
        ),
    ),
    GroupThreshold(
        "heroes_n",
        "match",
        "owned",
        group=("src.hero_id", "hero_id"),
        out_field="hero_id",
        thresholds=(2, 3, 4, 5),
        np=(
            "every hero I played in at least {r_n} of the <sel>",
            "each hero I picked in {r_n} or more of the <sel>",
            "the heroes I played in {r_n} or more of the <sel>",
        ),
        subject=(
            "every hero I played in at least {r_n} of them",
            "each hero I picked in {r_n} or more of them",
            "the heroes I played in {r_n} or more of them",
        ),
        take=(
            "the heroes I played in at least {r_n} of them",
            "every hero I picked in {r_n} or more of them",
            "each hero I played in {r_n} or more of them",
        ),
        private=True,
    ),
]


def _person_reductions(entity: str, p: str, *, current: bool = True) -> list[Reduction]:
    rank = rank_score("e.tier", "e.stars") if current else rank_score("src.season_tier", "src.season_stars")
    best = "highest-ranked by current tier and stars" if current else "highest on that leaderboard by tier and stars"
    out: list[Reduction] = [
        _topk(f"{p}_top_ranked", entity, (rank, "rank_score"), ("lower(e.nickname)", "nick_key"), (best, BY_NICK), tie_descending=False)
    ]
    if current:
        out.append(
            _topk(
                f"{p}_top_level",
                entity,
                ("e.level", "level"),
                ("lower(e.nickname)", "nick_key"),
                ("highest by level", BY_NICK),
                tie_descending=False,
            )
        )
    return out


PERSON_REDUCTIONS: list[Reduction] = [
    *_person_reductions("friend", "f"),
    _topk(
        "f_closest",
        "friend",
        ("src.intimacy", "intimacy"),
        ("lower(e.nickname)", "nick_key"),
        ("closest by intimacy", BY_NICK),
        tie_descending=False,
    ),
    _above("f_above_intimacy", "friend", ("src.intimacy", "intimacy"), "intimacy"),
    *_person_reductions("clanmate", "c"),
    _topk(
        "c_top_contribution",
        "clanmate",
        ("src.contribution", "contribution"),
        ("lower(e.nickname)", "nick_key"),
        ("biggest contributors by clan contribution", BY_NICK),
        tie_descending=False,
    ),
    *_person_reductions("ranked", "r", current=False),
    _topk(
        "r_most_wins",
        "ranked",
        ("src.ranked_wins", "ranked_wins"),
        ("lower(e.nickname)", "nick_key"),
        ("with the most ranked wins that season", BY_NICK),
        tie_descending=False,
        private=True,
    ),
    *_person_reductions("player", "p"),
]

HERO_REDUCTIONS: list[Reduction] = [
    _topk(
        "h_popular",
        "hero",
        ("e.owner_count", "owner_count"),
        ("lower(e.name)", "name_key"),
        ("most owned by players", BY_NAME),
        tie_descending=False,
    ),
    _topk(
        "h_cheapest",
        "hero",
        ("e.price_coins", "price_coins"),
        ("lower(e.name)", "name_key"),
        ("cheapest in coins", BY_NAME),
        descending=False,
        tie_descending=False,
    ),
    _topk(
        "h_newest",
        "hero",
        ("e.release_date", "release_date"),
        ("lower(e.name)", "name_key"),
        ("newest by release date", BY_NAME),
        tie_descending=False,
        private=True,
    ),
    _topk(
        "o_top_proficiency",
        "owned",
        ("src.proficiency", "proficiency"),
        ("lower(e.name)", "name_key"),
        ("I have the most proficiency with", BY_NAME),
        tie_descending=False,
    ),
    _topk(
        "o_most_played",
        "owned",
        ("src.matches_played", "matches_played"),
        ("lower(e.name)", "name_key"),
        ("I have played the most matches with", BY_NAME),
        tie_descending=False,
    ),
]

REDUCTIONS: list[Reduction] = [Every(), *MATCH_REDUCTIONS, *PERSON_REDUCTIONS, *HERO_REDUCTIONS]

# == actions ==================================================================================


LEAVE = " (it is fine to leave the room I am in now)"
MAX_WRITES = 30  # the writes of one action a request asks for, at most (favourites)
MAX_PEOPLE = 15  # friend requests or blocks one request sends, at most


def _writes(steps: list[Step], high: int = MAX_WRITES) -> list[Step]:
    """An action's writes: at least one (else that part of the request changes nothing, and a value
    it states is not written), at most `high`."""
    if not 1 <= len(steps) <= high:
        raise NoTarget(f"{len(steps)} writes for one action")
    return steps


class FavouriteMatchesAction(Action):
    """Favourite each match of the result with the note the request gives (a match already in my
    favourites is refused by the product: skipped, not said)."""

    def __init__(self) -> None:
        super().__init__(
            "favourite",
            "match",
            "match",
            (
                "Favourite <obj> with the note {<slot>_note}",
                "Save <obj> to my favourites, noting {<slot>_note}",
                "Put <obj> into my favourites with {<slot>_note} as the note",
            ),
            (
                "should go into my favourites with the note {<slot>_note}",
                "should be saved to my favourites, noted {<slot>_note}",
                "should end up among my favourites with the note {<slot>_note}",
            ),
            (
                "favourite <them> with the note {<slot>_note}",
                "save <them> to my favourites, noting {<slot>_note}",
                "put <them> into my favourites with {<slot>_note} as the note",
            ),
            writes="favourite",
            row_cost=1,
            excluded_sources=("fav_matches",),
        )

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_note",)

    def draw(self, d: Drafting, slot: str) -> None:
        note = d.choice(MATCH_NOTES, "note")
        d.state(f"{slot}_note", note, _quoted(note))

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return {t for t, v in d.lookup("match", targets, f"e.id IN ({FAVOURITES_SQL})").items() if v}

    def visible_refusals(self, d: Drafting, targets: list[int]) -> set[int]:
        return self.refused(d, targets)

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        return _writes([Step("favourite_match", {"match_id": t, "note": d.stated[f"{slot}_note"]}) for t in targets if t not in refused])

    def prepare(self, s: Solving, slot: str) -> None:
        s.remember("favourites", lambda: {i["match_id"] for i in s.listing("list_favourite_matches")})

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo["favourites"]
        done: set[Any] = set()
        for item in items:
            match = item.get("match_id")
            if match is None or match in present or match in done:
                continue
            done.add(match)
            s.api.call("favourite_match", match_id=match, note=s.stated[f"{slot}_note"])


class ToPlayers(Action):
    """A write to players: the result's own players, or those a match names (`people`: the SQL
    half; `listed_people`: the public half)."""

    def people(self, d: Drafting, targets: list[int]) -> list[int]:
        return list(dict.fromkeys(targets))

    def listed_people(self, s: Solving, items: list[Row]) -> list[int]:
        return list(dict.fromkeys(i["player_id"] for i in items if i.get("player_id") is not None))


class Teammates(ToPlayers):
    """...of each match of the result: the players who were on my team (get_match)."""

    def people(self, d: Drafting, targets: list[int]) -> list[int]:
        sides = _sides(d)
        return sorted({p for t in targets for p, same in sides.get(t, ()) if same})

    def listed_people(self, s: Solving, items: list[Row]) -> list[int]:
        me = _me(s)["player_id"]
        out: set[int] = set()
        for item in items:
            side, players = _side_of(s, item["match_id"])
            out |= {p["player_id"] for p in players if p["player_id"] != me and p["side"] == side}
        return sorted(out)

    def fits(self, source: Source, reduction: Reduction) -> bool:
        # a handful of matches: a room of ten, a few requests
        return super().fits(source, reduction) and isinstance(reduction, TopK)


def _request_forms(who: str, their: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Friend request phrases; `who` names the players from <obj> ("<obj>", "everyone on my team in <obj>")."""
    return (
        (
            f"Send {who} a friend request saying {{<slot>_msg}}",
            f"Send a friend request with the message {{<slot>_msg}} to {who}",
            f"Ask {who} to be my friends, with the message {{<slot>_msg}}",
        ),
        (
            f"should {their}get a friend request from me saying {{<slot>_msg}}",
            f"should {their}receive a friend request with the message {{<slot>_msg}}",
            f"should {their}be asked to be my friends, with the message {{<slot>_msg}}",
        ),
        (
            f"send {who.replace('<obj>', '<them>')} a friend request saying {{<slot>_msg}}",
            f"send a friend request with the message {{<slot>_msg}} to {who.replace('<obj>', '<them>')}",
            f"ask {who.replace('<obj>', '<them>')} to be my friends, with the message {{<slot>_msg}}",
        ),
    )


class FriendRequests(ToPlayers):
    """A friend request to each player (a friend, a block either way or a pending request is
    refused by the product, and skipped after reading get_player; one who asked me first would be
    accepted by a careful player rather than asked: not drawn)."""

    def __init__(self, key: str, entity: str, *, who: str = "<obj>", their: str = "", private: bool = False) -> None:
        super().__init__(key, entity, "player", *_request_forms(who, their), writes="request", row_cost=1, private=private)

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_msg",)

    def draw(self, d: Drafting, slot: str) -> None:
        msg = d.choice(FRIEND_MESSAGES, "message")
        d.state(f"{slot}_msg", msg, _quoted(msg))

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return {p for p, v in d.lookup("player", self.people(d, targets), REQUEST_REFUSED_SQL).items() if v}

    def visible_refusals(self, d: Drafting, targets: list[int]) -> set[int]:
        return self.refused(d, targets)

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        refused = self.refused(d, targets)
        return {(slot, p) for p in self.people(d, targets) if p not in refused}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        people = self.people(d, targets)
        if any(d.lookup("player", people, RECEIVED_SQL).values()):
            raise NoTarget("one of them asked me first")
        refused = self.refused(d, targets)
        return _writes(
            [Step("send_friend_request", {"player_id": p, "message": d.stated[f"{slot}_msg"]}) for p in people if p not in refused],
            MAX_PEOPLE,
        )

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        for player in self.listed_people(s, items):
            relation = _relation(s, player)
            if relation.get("is_friend") or _blocked(s, player) or relation.get("pending_request_id") is not None:
                continue
            s.api.call("send_friend_request", player_id=player, message=s.stated[f"{slot}_msg"])


class TeammateRequests(Teammates, FriendRequests):
    pass


def _room_forms(who: str, their: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Room phrases; `who` names the players from <obj>, `their` leads the predicate form ("have
    everyone on my team in <them> ")."""
    them = who.replace("<obj>", "<them>")
    room = "{<slot>_mode} room"
    return (
        (
            f"Open a new {room} called {{<slot>_name}}{{<slot>_leave}} and invite {who}",
            f"Create a {room} named {{<slot>_name}}{{<slot>_leave}}, then invite {who} to it",
            f"Invite {who} to a new {room} {{<slot>_name}} that I open{{<slot>_leave}}",
        ),
        (
            f"should {their}get an invitation to a new {room} called {{<slot>_name}} that I open{{<slot>_leave}}",
            f"should {their}be invited to a {room} named {{<slot>_name}} that I create{{<slot>_leave}}",
            f"should {their}be invited into a new {room} {{<slot>_name}}, opened by me{{<slot>_leave}}",
        ),
        (
            f"invite {them} to a new {room} called {{<slot>_name}} that I open{{<slot>_leave}}",
            f"open a {room} named {{<slot>_name}}{{<slot>_leave}} and invite {them}",
            f"create a new {room} {{<slot>_name}}{{<slot>_leave}} with an invitation for {them}",
        ),
    )


class NewRoom(ToPlayers):
    """Open a room (named, of a mode) and invite the players: the invitations use the id the
    create returned (cross-step dependency). A block either way is refused by the product."""

    def __init__(
        self, key: str, entity: str, *, who: str = "<obj>", their: str = "", writes: str = "social", private: bool = False
    ) -> None:
        super().__init__(key, entity, "player", *_room_forms(who, their), writes=writes, creates=True, row_cost=1, private=private)

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_name", f"{slot}_mode")

    def draw(self, d: Drafting, slot: str) -> None:
        rooms = d.rows(
            "SELECT r.status, r.owner_id FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = :actor AND r.status != 'closed'"
        )
        if any(r["status"] == "in_game" or r["owner_id"] == d.actor for r in rooms):
            raise NoTarget("in a running game, or owns an open room")
        d.words[f"{slot}_leave"] = LEAVE if rooms else ""
        name = d.choice(ROOM_NAMES, "room name")
        d.state(f"{slot}_name", name, _quoted(name))
        d.state(f"{slot}_mode", d.choice(ROOM_MODES, "mode"))

    def blocked_people(self, d: Drafting, targets: list[int]) -> set[int]:
        """The players a block stands between me and (the product refuses their invitation)."""
        return {p for p, v in d.lookup("player", self.people(d, targets), BLOCKED_SQL).items() if v}

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return self.blocked_people(d, targets)

    def visible_refusals(self, d: Drafting, targets: list[int]) -> set[int]:
        return self.refused(d, targets)

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        blocked = self.blocked_people(d, targets)
        return {(slot, "created")} | {(slot, p) for p in self.people(d, targets) if p not in blocked}

    def invited(self, d: Drafting, targets: list[int]) -> list[int]:
        blocked = self.blocked_people(d, targets)
        invited = [p for p in self.people(d, targets) if p not in blocked]
        if not 1 <= len(invited) <= MAX_INVITED:
            raise NoTarget(f"{len(invited)} players to invite to a room of ten")
        return invited

    def create(self, d: Drafting, slot: str) -> Step:
        return Step("create_room", {"name": d.stated[f"{slot}_name"], "mode": d.stated[f"{slot}_mode"]})

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        invites = [Step("invite_to_room", {"room_id": ref(at, "room_id"), "player_id": p}) for p in self.invited(d, targets)]
        return [self.create(d, slot), *invites]

    def open_room(self, s: Solving, slot: str) -> Any:
        return s.api.call("create_room", creates="room_id", name=s.stated[f"{slot}_name"], mode=s.stated[f"{slot}_mode"])

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        people = [p for p in self.listed_people(s, items) if not _blocked(s, p)]
        room = self.open_room(s, slot)
        if room is None:
            return
        for player in people:
            s.api.call("invite_to_room", room_id=room["room_id"], player_id=player)


class TeammatesRoom(Teammates, NewRoom):
    pass


class Capped(EachCall):
    """One write per target, at least one and at most `high` of them (a request a person would make)."""

    def __init__(self, *args: Any, high: int = 15, **options: Any) -> None:
        super().__init__(*args, **options)
        self.high = high

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        return _writes(super().steps(d, slot, targets, at), self.high)


class BuyTopHero(ToPlayers):
    """For each player, buy me the hero they have the most proficiency with (get_player's top
    hero; a chained read), paying the stated currency. A hero the shop does not sell, not yet
    released or already mine is refused by the product: skipped after reading get_hero."""

    def __init__(self, key: str, entity: str, *, private: bool = False) -> None:
        super().__init__(
            key,
            entity,
            "hero",
            (
                "Look up <obj> and buy me, with {<slot>_currency}, the hero each one has the most proficiency with",
                "Buy me the highest-proficiency hero of <obj>, one per player, paying {<slot>_currency}",
                "Pay {<slot>_currency} for the heroes that <obj> have the most proficiency with, one per player",
            ),
            (
                "should have their highest-proficiency hero bought for me with {<slot>_currency}",
                "should see the hero they have the most proficiency with bought for me, paid in {<slot>_currency}",
                "should get their top hero by proficiency bought for me with {<slot>_currency}",
            ),
            (
                "buy me, with {<slot>_currency}, the hero each of <them> has the most proficiency with",
                "buy me <their> highest-proficiency heroes, paying {<slot>_currency}",
                "pay {<slot>_currency} for the hero each of <them> has the highest proficiency with",
            ),
            writes="buy",
            row_cost=3,
            private=private,
        )

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_currency",)

    def draw(self, d: Drafting, slot: str) -> None:
        _today(d)
        d.state(f"{slot}_currency", _currency(d))

    def _tops(self, d: Drafting, players: list[int]) -> dict[int, tuple[int, bool]]:
        """Each player's hero with the most proficiency (the lower id first, as get_player lists
        it) and whether a second hero ties it."""
        out: dict[int, tuple[int, bool]] = {}
        for player in players:

            def make(player: int = player) -> tuple[int, bool] | None:
                top = _world_rows(
                    d,
                    "SELECT hero_id, proficiency FROM player_heroes WHERE player_id = :p ORDER BY proficiency DESC, hero_id LIMIT 2",
                    p=player,
                )
                if not top:
                    return None
                return top[0]["hero_id"], len(top) > 1 and top[0]["proficiency"] == top[1]["proficiency"]

            found = _memo(d, f"top_hero:{player}", make)
            if found is not None:
                out[player] = found
        return out

    def heroes(self, d: Drafting, targets: list[int]) -> list[int]:
        return list(dict.fromkeys(h for h, _ in self._tops(d, self.people(d, targets)).values()))

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return {h for h, v in d.lookup("hero", self.heroes(d, targets), NOT_FOR_SALE_SQL).items() if v}

    def visible_refusals(self, d: Drafting, targets: list[int]) -> set[int]:
        return self.refused(d, targets)

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        refused = self.refused(d, targets)
        return {(slot, h) for h in _affordable(d, [h for h in self.heroes(d, targets) if h not in refused], d.stated[f"{slot}_currency"])}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        if any(tied for _, tied in self._tops(d, self.people(d, targets)).values()):
            raise NoTarget("two heroes share a player's top proficiency")
        refused = self.refused(d, targets)
        heroes = sorted(h for h in self.heroes(d, targets) if h not in refused)
        return _writes(_purchases(d, heroes, d.stated[f"{slot}_currency"]))

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        heroes: list[int] = []
        for player in self.listed_people(s, items):
            found = s.api.call("get_player", player_id=player)
            if not found or not found["top_heroes"]:
                continue
            hero = s.api.call("get_hero", hero_id=found["top_heroes"][0]["hero_id"])
            if hero is not None and _for_sale(hero):
                heroes.append(hero["hero_id"])
        _buy_in_order(s, heroes, s.stated[f"{slot}_currency"])


def _for_sale(hero: Row) -> bool:
    return hero.get("availability") == "shop" and bool(hero.get("released")) and not hero.get("owned_by_me")


def _currency(d: Drafting) -> str:
    wallet = d.rows("SELECT coins, diamonds FROM players WHERE id = :actor")[0]
    # a currency that buys a hero or two: the shop's heroes cost 5,888 to 18,888 coins or 288 to 688 diamonds
    fits = [c for c, least in (("coins", 12000), ("diamonds", 600)) if wallet[c] >= least]
    return str(d.choice(fits, "a currency that buys a hero or two"))


def _purchases(d: Drafting, heroes: list[int], currency: str) -> list[Step]:
    """The purchases, refused as a draw when the wallet does not cover them all (in any order)."""
    if _affordable(d, heroes, currency) != set(heroes):
        raise NoTarget("the wallet does not cover every purchase")
    return [Step("buy_hero", {"hero_id": h, "currency": currency}) for h in heroes]


def _affordable(d: Drafting, heroes: list[int], currency: str) -> set[int]:
    """The heroes bought when buying in hero-id order (as the public half does) until the wallet
    refuses: a sloppy solver that buys more than asked runs out of money somewhere."""
    column = "price_coins" if currency == "coins" else "price_diamonds"
    prices = d.lookup("hero", heroes, f"e.{column}")
    left = int(d.value(f"SELECT {currency} FROM players WHERE id = :actor"))
    bought: set[int] = set()
    for hero in sorted(set(heroes)):
        price = prices.get(hero)
        if price is not None and price <= left:
            bought.add(hero)
            left -= price
    return bought


def _buy_in_order(s: Solving, heroes: list[int], currency: str) -> None:
    """Buy in hero-id order (the order the SQL half models the wallet in)."""
    for hero in sorted(set(heroes)):
        s.api.call("buy_hero", hero_id=hero, currency=currency)


class BuyHeroes(Action):
    """Buy the result's heroes with the stated currency (owned or unreleased ones are refused by the
    product: the public half sees it on the listed hero)."""

    def __init__(self) -> None:
        super().__init__(
            "buy",
            "hero",
            "hero",
            (
                "Buy <obj> with {<slot>_currency}",
                "Pay {<slot>_currency} for <obj>",
                "Get <obj> from the shop, paying with {<slot>_currency}",
            ),
            (
                "should be bought for me with {<slot>_currency}",
                "should be paid for with my {<slot>_currency}",
                "should be bought from the shop, paying {<slot>_currency}",
            ),
            ("buy <them> with {<slot>_currency}", "pay {<slot>_currency} for <them>", "get <them> from the shop with {<slot>_currency}"),
            writes="buy",
            row_cost=3,
        )

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_currency",)

    def draw(self, d: Drafting, slot: str) -> None:
        _today(d)
        d.state(f"{slot}_currency", _currency(d))

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return {h for h, v in d.lookup("hero", targets, NOT_FOR_SALE_SQL).items() if v}

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        refused = self.refused(d, targets)
        return {(slot, h) for h in _affordable(d, [t for t in targets if t not in refused], d.stated[f"{slot}_currency"])}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        return _writes(_purchases(d, sorted(t for t in set(targets) if t not in refused), d.stated[f"{slot}_currency"]))

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        _buy_in_order(s, [i["hero_id"] for i in items if _for_sale(i)], s.stated[f"{slot}_currency"])


class FavouriteWinsWith(Action):
    """Favourite every match I won with each hero of the result (list_match_history by hero: a
    read per hero), with the stated note; matches already in my favourites are refused."""

    def __init__(self) -> None:
        super().__init__(
            "favourite_wins_with",
            "owned",
            "match",
            (
                "Favourite every match I won with <obj>, with the note {<slot>_note}",
                "Save to my favourites each win I had with <obj>, noting {<slot>_note}",
                "Put every match I won playing <obj> into my favourites with {<slot>_note} as the note",
            ),
            (
                "should have every match I won with <them> saved to my favourites with the note {<slot>_note}",
                "should see each of my wins with <them> go into my favourites, noted {<slot>_note}",
                "should get every match I won with <them> favourited with the note {<slot>_note}",
            ),
            (
                "favourite every match I won with <them>, with the note {<slot>_note}",
                "save to my favourites each win I had with <them>, noting {<slot>_note}",
                "put every match I won playing <them> into my favourites with {<slot>_note} as the note",
            ),
            writes="favourite",
            row_cost=1,
        )

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_note",)

    def draw(self, d: Drafting, slot: str) -> None:
        note = d.choice(MATCH_NOTES, "note")
        d.state(f"{slot}_note", note, _quoted(note))

    def matches(self, d: Drafting, heroes: list[int]) -> list[int]:
        wins = _memo(
            d,
            "wins_by_hero",
            lambda: _world_rows(
                d,
                f"SELECT match_id, hero_id FROM match_players WHERE player_id = :actor AND result = 'win' "
                f"AND match_id NOT IN ({FAVOURITES_SQL}) ORDER BY match_id",
            ),
        )
        wanted = set(heroes)
        return [w["match_id"] for w in wins if w["hero_id"] in wanted]

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        return {(slot, m) for m in self.matches(d, targets)}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        return _writes([Step("favourite_match", {"match_id": m, "note": d.stated[f"{slot}_note"]}) for m in self.matches(d, targets)])

    def prepare(self, s: Solving, slot: str) -> None:
        s.remember("favourites", lambda: {i["match_id"] for i in s.listing("list_favourite_matches")})

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo["favourites"]
        done: set[Any] = set()
        for item in items:
            for match in s.listing("list_match_history", hero_id=item["hero_id"], result="win"):
                if match["match_id"] in present or match["match_id"] in done:
                    continue
                done.add(match["match_id"])
                s.api.call("favourite_match", match_id=match["match_id"], note=s.stated[f"{slot}_note"])


ACTIONS: list[Action] = [
    FavouriteMatchesAction(),
    Capped(
        "unfavourite",
        "match",
        "match",
        "unfavourite_match",
        "match_id",
        ("Unfavourite <obj>", "Remove <obj> from my favourites", "Take <obj> out of my favourites"),
        ("should be removed from my favourites", "should come out of my favourites", "should no longer be favourites"),
        ("unfavourite <them>", "remove <them> from my favourites", "take <them> out of my favourites"),
        writes="favourite",
        row_cost=1,
        sources=("fav_matches",),
    ),
    TeammateRequests("request_teammates", "match", who="everyone who was on my team in <obj>", their="have everyone on my team in <them> "),
    TeammatesRoom("room_teammates", "match", who="everyone who was on my team in <obj>", their="have everyone on my team in <them> "),
    Capped(
        "block",
        "opponent",
        "opponent",
        "block_player",
        "player_id",
        ("Block <obj>", "Put <obj> on my blacklist", "Add <obj> to my blacklist"),
        ("should be blocked", "should go on my blacklist", "should end up on my blacklist"),
        ("block <them>", "put <them> on my blacklist", "add <them> to my blacklist"),
        refused="e.id IN (SELECT other_id FROM relations WHERE player_id = :actor AND kind = 'blocked')",
        present=("list_blacklist", "player_id"),
        present_sql="e.id IN (SELECT other_id FROM relations WHERE player_id = :actor AND kind = 'blocked')",
        writes="relation",
        row_cost=1,
    ),
    Capped(
        "unfriend",
        "friend",
        "friend",
        "remove_friend",
        "player_id",
        ("Remove <obj> from my friends", "Unfriend <obj>", "Take <obj> off my friend list"),
        ("should be removed from my friends", "should be unfriended", "should come off my friend list"),
        ("remove <them> from my friends", "unfriend <them>", "take <them> off my friend list"),
        writes="social",
        row_cost=2,
    ),
    *[NewRoom(f"room_{e}", e) for e in PEOPLE],
    *[FriendRequests(f"request_{e}", e, private=e == "ranked") for e in PEOPLE if e != "friend"],
    *[BuyTopHero(f"buy_top_hero_{e}", e, private=e == "player") for e in PEOPLE],
    BuyHeroes(),
    FavouriteWinsWith(),
]

GRAMMAR = Grammar(
    domain="moba",
    entities=ENTITIES,
    sources=[
        History(),
        CurrentSeason(),
        PastSeason(),
        HeroMatches(),
        Duo(),
        FavouriteMatches(),
        Friends(),
        Clan(),
        Leaderboard(),
        RegionPlayers(),
        Shop(),
        RoleShop(),
        Owned(),
    ],
    predicates=[
        *MATCH_PREDICATES,
        *FRIEND_PREDICATES,
        *CLANMATE_PREDICATES,
        *RANKED_PREDICATES,
        *PLAYER_PREDICATES,
        *HERO_PREDICATES,
        *OWNED_PREDICATES,
    ],
    reductions=REDUCTIONS,
    actions=ACTIONS,
)

__all__ = ["GRAMMAR"]
