"""The MOBA platform's tables (16 tables, 26 foreign keys).

Design decisions (documented here because tools and checks rely on them):
- A friendship is stored as two rows of `relations`, one per direction, with the same `since`
  and `intimacy`; a blacklist entry is one row of `relations` from the blocker (kind 'blocked').
  The key (player_id, other_id) makes "friend and blocked at once" impossible for one side, and
  the symmetry rule makes it impossible for the pair.
- A hero purchase is recorded on the owned-hero row itself (acquired_via 'purchase', currency,
  price_paid): one ownership, one acquisition.
- Each side of a match has exactly one MVP: its player with the best score.
- The hero a player used in a match is one they owned when the match started (no free trials).
"""

from __future__ import annotations

from ...engine.schema import INTEGER, REAL, TEXT, Column, Schema, Table
from .vocabulary import LANES, ROLES, TIERS

C = Column


def pk() -> Column:
    return C("id", INTEGER, primary_key=True)


_TS_GLOB = "'[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]'"


def ts(name: str, doc: str = "", nullable: bool = False, volatile: bool = False) -> Column:
    check = f"{name} GLOB {_TS_GLOB}" if not nullable else f"{name} IS NULL OR {name} GLOB {_TS_GLOB}"
    return C(name, TEXT, not_null=not nullable, check=check, doc=doc, volatile=volatile)


def day(name: str, doc: str = "") -> Column:
    return C(name, TEXT, not_null=True, check=f"{name} GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'", doc=doc)


def one_of(name: str, values: tuple[str, ...], nullable: bool = False) -> str:
    listed = ",".join(f"'{v}'" for v in values)
    return f"{name} IN ({listed})" + (f" OR {name} IS NULL" if nullable else "")


def tier_index(expr: str) -> str:
    """SQL: the position of a tier name in TIERS (Bronze = 0 ... Mythic = 7)."""
    return "(CASE " + expr + " " + " ".join(f"WHEN '{t}' THEN {i}" for i, t in enumerate(TIERS)) + " END)"


def rank_score(tier: str, stars: str) -> str:
    """SQL: a comparable rank value (a higher tier beats any number of stars in a lower one)."""
    return f"({tier_index(tier)} * 1000 + {stars})"


MODES = ("ranked", "classic", "brawl")
ROOM_MODES = ("ranked", "classic", "brawl", "custom")
ROOM_CAPACITY = {"ranked": 5, "classic": 10, "brawl": 10, "custom": 10}
DIFFICULTIES = ("easy", "normal", "hard")
AVAILABILITY = ("shop", "starter", "event")
ACQUIRED_VIA = ("starter", "purchase", "event", "season_reward")
CURRENCIES = ("coins", "diamonds")
PLAYER_STATUSES = ("online", "offline", "in_match")
MEMBER_ROLES = ("leader", "vice_leader", "elite", "member")
REQUEST_STATUSES = ("pending", "accepted", "rejected")
APPLICATION_STATUSES = ("pending", "approved", "rejected")
ROOM_STATUSES = ("open", "in_game", "closed")
INVITATION_STATUSES = ("pending", "accepted", "declined", "expired")
SIDES = ("blue", "red")

SCHEMA = Schema(
    (
        Table(
            "seasons",
            "Ranked seasons of about twelve weeks; the current one contains now, the next is announced.",
            (
                pk(),
                C("name", TEXT, not_null=True, unique=True),
                C("number", INTEGER, not_null=True, unique=True),
                day("start_date"),
                day("end_date", "last day of the season, inclusive"),
                C("theme", TEXT, not_null=True),
            ),
            checks=("end_date > start_date",),
        ),
        Table(
            "heroes",
            "Playable heroes with their role, lane, shop prices and release date.",
            (
                pk(),
                C("name", TEXT, not_null=True, unique=True),
                C("title", TEXT, not_null=True, doc="epithet shown under the name"),
                C("role", TEXT, not_null=True, check=one_of("role", ROLES)),
                C("secondary_role", TEXT, check=one_of("secondary_role", ROLES, nullable=True)),
                C("lane", TEXT, not_null=True, check=one_of("lane", LANES)),
                C("difficulty", TEXT, not_null=True, check=one_of("difficulty", DIFFICULTIES)),
                C(
                    "availability",
                    TEXT,
                    not_null=True,
                    check=one_of("availability", AVAILABILITY),
                    doc="shop: sold for coins or diamonds; starter: given to every new player; event: events and rewards only",
                ),
                C("price_coins", INTEGER, check="price_coins IS NULL OR price_coins > 0", doc="NULL unless sold in the shop"),
                C("price_diamonds", INTEGER, check="price_diamonds IS NULL OR price_diamonds > 0", doc="NULL unless sold in the shop"),
                day("release_date"),
                C("lore", TEXT, not_null=True),
                C("owner_count", INTEGER, not_null=True, default=0, doc="players who own the hero"),
            ),
            checks=(
                "(availability = 'shop') = (price_coins IS NOT NULL AND price_diamonds IS NOT NULL)",
                "(availability = 'shop') OR (price_coins IS NULL AND price_diamonds IS NULL)",
            ),
            indexes=(("role",),),
        ),
        Table(
            "players",
            "Player accounts (the actors), with their wallet and current rank.",
            (
                pk(),
                C("nickname", TEXT, not_null=True, unique=True, check="length(nickname) BETWEEN 2 AND 24"),
                C("level", INTEGER, not_null=True, check="level BETWEEN 1 AND 60"),
                C("tier", TEXT, not_null=True, check=one_of("tier", TIERS), doc="rank in the current season"),
                C("stars", INTEGER, not_null=True, check="stars >= 0"),
                C("region", TEXT, not_null=True),
                C("server", TEXT, not_null=True),
                C("coins", INTEGER, not_null=True, check="coins >= 0"),
                C("diamonds", INTEGER, not_null=True, check="diamonds >= 0"),
                ts("created_at"),
                ts("last_login"),
                C("status", TEXT, not_null=True, check=one_of("status", PLAYER_STATUSES)),
                C("signature", TEXT, not_null=True, default=""),
                C("hero_count", INTEGER, not_null=True, default=0),
                C("total_matches", INTEGER, not_null=True, default=0),
                C("total_wins", INTEGER, not_null=True, default=0),
                C("mvp_count", INTEGER, not_null=True, default=0),
            ),
            indexes=(("region",), ("nickname COLLATE NOCASE",)),
        ),
        Table(
            "player_heroes",
            "Heroes a player owns: how and when acquired (a purchase records its price), mastery.",
            (
                C("player_id", INTEGER, not_null=True, references="players"),
                C("hero_id", INTEGER, not_null=True, references="heroes"),
                ts("acquired_at"),
                C("acquired_via", TEXT, not_null=True, check=one_of("acquired_via", ACQUIRED_VIA)),
                C("currency", TEXT, check=one_of("currency", CURRENCIES, nullable=True), doc="purchases only"),
                C("price_paid", INTEGER, check="price_paid IS NULL OR price_paid > 0", doc="purchases only"),
                C("proficiency", INTEGER, not_null=True, check="proficiency >= 0", doc="mastery points"),
                C("matches_played", INTEGER, not_null=True, default=0),
                C("wins", INTEGER, not_null=True, default=0),
            ),
            primary_key=("player_id", "hero_id"),
            checks=("(acquired_via = 'purchase') = (currency IS NOT NULL)", "(currency IS NULL) = (price_paid IS NULL)"),
        ),
        Table(
            "season_ranks",
            "A player's rank in each season they played (current, peak, ranked record).",
            (
                C("player_id", INTEGER, not_null=True, references="players"),
                C("season_id", INTEGER, not_null=True, references="seasons"),
                C("tier", TEXT, not_null=True, check=one_of("tier", TIERS)),
                C("stars", INTEGER, not_null=True, check="stars >= 0"),
                C("peak_tier", TEXT, not_null=True, check=one_of("peak_tier", TIERS)),
                C("peak_stars", INTEGER, not_null=True, check="peak_stars >= 0"),
                C("ranked_matches", INTEGER, not_null=True, default=0),
                C("ranked_wins", INTEGER, not_null=True, default=0),
            ),
            primary_key=("player_id", "season_id"),
        ),
        Table(
            "relations",
            "Friends (two rows per friendship, one per direction) and blacklist entries (one row, from the blocker).",
            (
                C("player_id", INTEGER, not_null=True, references="players"),
                C("other_id", INTEGER, not_null=True, references="players"),
                C("kind", TEXT, not_null=True, check="kind IN ('friend','blocked')"),
                ts("since"),
                C("intimacy", INTEGER, not_null=True, default=0, check="intimacy >= 0", doc="friends only; 0 for a block"),
            ),
            primary_key=("player_id", "other_id"),
            checks=("player_id != other_id", "kind = 'friend' OR intimacy = 0"),
        ),
        Table(
            "friend_requests",
            "Friend requests with an optional message.",
            (
                pk(),
                C("sender_id", INTEGER, not_null=True, references="players"),
                C("receiver_id", INTEGER, not_null=True, references="players"),
                C("message", TEXT, not_null=True, default="", check="length(message) <= 100"),
                C("status", TEXT, not_null=True, check=one_of("status", REQUEST_STATUSES)),
                ts("sent_at"),
                ts("answered_at", nullable=True),
            ),
            checks=("sender_id != receiver_id", "(status = 'pending') = (answered_at IS NULL)"),
        ),
        Table(
            "teams",
            "Clans: a leader, a level, a capacity and a notice board.",
            (
                pk(),
                C("name", TEXT, not_null=True, unique=True),
                C("leader_id", INTEGER, not_null=True, unique=True, references="players"),
                C("region", TEXT, not_null=True),
                C("level", INTEGER, not_null=True, check="level BETWEEN 1 AND 10"),
                C("capacity", INTEGER, not_null=True, check="capacity BETWEEN 5 AND 50"),
                C("member_count", INTEGER, not_null=True, default=0, check="member_count <= capacity"),
                C("notice", TEXT, not_null=True, default=""),
                ts("created_at"),
                C("total_contribution", INTEGER, not_null=True, default=0),
            ),
        ),
        Table(
            "team_members",
            "Clan members; a player belongs to at most one clan.",
            (
                C("team_id", INTEGER, not_null=True, references="teams"),
                C("player_id", INTEGER, not_null=True, references="players"),
                C("role", TEXT, not_null=True, check=one_of("role", MEMBER_ROLES)),
                ts("joined_at"),
                C("contribution", INTEGER, not_null=True, default=0, check="contribution >= 0"),
            ),
            primary_key=("team_id", "player_id"),
            unique=(("player_id",),),
        ),
        Table(
            "team_applications",
            "Applications to join a clan, reviewed by its leader or a vice leader.",
            (
                pk(),
                C("team_id", INTEGER, not_null=True, references="teams"),
                C("player_id", INTEGER, not_null=True, references="players"),
                C("message", TEXT, not_null=True, default=""),
                C("status", TEXT, not_null=True, check=one_of("status", APPLICATION_STATUSES)),
                ts("applied_at"),
                ts("reviewed_at", nullable=True),
                C("reviewed_by", INTEGER, references="players"),
            ),
            checks=("(status = 'pending') = (reviewed_at IS NULL)", "(reviewed_at IS NULL) = (reviewed_by IS NULL)"),
        ),
        Table(
            "rooms",
            "Game lobbies: a mode, a capacity, an owner, optionally a password.",
            (
                pk(),
                C("name", TEXT, not_null=True, check="length(name) BETWEEN 1 AND 30"),
                C("owner_id", INTEGER, not_null=True, references="players"),
                C("mode", TEXT, not_null=True, check=one_of("mode", ROOM_MODES)),
                C("capacity", INTEGER, not_null=True, check="capacity BETWEEN 2 AND 10"),
                C("status", TEXT, not_null=True, check=one_of("status", ROOM_STATUSES)),
                C("password", TEXT, doc="NULL for a public room"),
                ts("created_at"),
                ts("closed_at", nullable=True),
                C("member_count", INTEGER, not_null=True, default=0, check="member_count <= capacity"),
            ),
            checks=("(status = 'closed') = (closed_at IS NOT NULL)",),
            indexes=(("status", "mode"),),
        ),
        Table(
            "room_members",
            "Players currently in a room.",
            (
                C("room_id", INTEGER, not_null=True, references="rooms"),
                C("player_id", INTEGER, not_null=True, references="players"),
                ts("joined_at"),
            ),
            primary_key=("room_id", "player_id"),
        ),
        Table(
            "room_invitations",
            "Invitations to a room, sent by a member to another player.",
            (
                pk(),
                C("room_id", INTEGER, not_null=True, references="rooms"),
                C("inviter_id", INTEGER, not_null=True, references="players"),
                C("invitee_id", INTEGER, not_null=True, references="players"),
                C("status", TEXT, not_null=True, check=one_of("status", INVITATION_STATUSES)),
                ts("sent_at"),
                ts("answered_at", nullable=True, doc="when accepted or declined"),
            ),
            checks=("inviter_id != invitee_id", "(status IN ('accepted','declined')) = (answered_at IS NOT NULL)"),
        ),
        Table(
            "matches",
            "Finished matches: mode, season, start, duration, the winning side and kills per side.",
            (
                pk(),
                C("season_id", INTEGER, not_null=True, references="seasons"),
                C("mode", TEXT, not_null=True, check=one_of("mode", MODES)),
                ts("started_at"),
                C("duration_sec", INTEGER, not_null=True, check="duration_sec BETWEEN 300 AND 2700"),
                C("winner_side", TEXT, not_null=True, check=one_of("winner_side", SIDES)),
                C("blue_kills", INTEGER, not_null=True, default=0),
                C("red_kills", INTEGER, not_null=True, default=0),
            ),
            indexes=(("started_at",),),
        ),
        Table(
            "match_players",
            "Each player's slot in a match: side, hero and full statistics (10 per match).",
            (
                C("match_id", INTEGER, not_null=True, references="matches"),
                C("player_id", INTEGER, not_null=True, references="players"),
                C("side", TEXT, not_null=True, check=one_of("side", SIDES)),
                C("hero_id", INTEGER, not_null=True, references="heroes"),
                C("lane", TEXT, not_null=True, check=one_of("lane", LANES)),
                C("kills", INTEGER, not_null=True, check="kills >= 0"),
                C("deaths", INTEGER, not_null=True, check="deaths >= 0"),
                C("assists", INTEGER, not_null=True, check="assists >= 0"),
                C("gold", INTEGER, not_null=True, check="gold >= 0"),
                C("damage_dealt", INTEGER, not_null=True, check="damage_dealt >= 0"),
                C("damage_taken", INTEGER, not_null=True, check="damage_taken >= 0"),
                C("healing", INTEGER, not_null=True, check="healing >= 0"),
                C("tower_damage", INTEGER, not_null=True, check="tower_damage >= 0"),
                C("score", REAL, not_null=True, check="score BETWEEN 0 AND 20", doc="performance rating, one decimal"),
                C("result", TEXT, not_null=True, check="result IN ('win','loss')"),
                C("is_mvp", INTEGER, not_null=True, check="is_mvp IN (0,1)", doc="the best score of its side"),
                C("rating_change", INTEGER, not_null=True, doc="stars won or lost (ranked only; 0 otherwise)"),
            ),
            primary_key=("match_id", "player_id"),
            unique=(("match_id", "hero_id"),),
        ),
        Table(
            "favourite_matches",
            "Matches a player saved from their match history.",
            (
                C("player_id", INTEGER, not_null=True, references="players"),
                C("match_id", INTEGER, not_null=True, references="matches"),
                ts("favourited_at"),
                C("note", TEXT, not_null=True, default="", check="length(note) <= 100"),
            ),
            primary_key=("player_id", "match_id"),
        ),
    )
)
