"""The built moba world: sizes, no orphans, every repair rule settled, the game's rules in the
data (matches, friendships, clans, rooms, wallet, ranks, chronology), variety, a future, and
byte-identical rebuilds."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from ebench.domains.moba.schema import rank_score
from ebench.engine.domain_registry import get_domain
from ebench.engine.world import build_world, content_hash, world_stats

NOW = get_domain("moba").now


def val(conn: sqlite3.Connection, sql: str, *params) -> object:
    return conn.execute(sql, params).fetchone()[0]


@pytest.fixture(scope="module")
def stats(moba, moba_world):
    return world_stats(moba, moba_world)


def test_sizes_meet_the_requirements(stats):
    assert 12 <= stats.tables <= 16
    assert 16 <= stats.foreign_keys <= 29
    assert 72 <= stats.columns <= 168
    assert 21_000 <= stats.rows <= 28_000
    assert stats.cells >= 230_000
    assert 160 <= stats.users <= 180
    assert 25 <= stats.tools <= 33 and stats.write_tools >= 8
    assert all(t.rows > 0 for t in stats.per_table), [t.name for t in stats.per_table if not t.rows]
    assert {t.name: t.rows for t in stats.per_table}["match_players"] == 10 * {t.name: t.rows for t in stats.per_table}["matches"]


def test_no_orphans_and_no_violated_constraints(moba_world):
    conn = sqlite3.connect(moba_world)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize("index", range(len(get_domain("moba").checks)))
def test_every_check_holds_after_build(index, moba, moba_conn):
    check = moba.checks[index]
    assert check.violations(moba_conn, moba.now) == 0, check.name


# -- matches ------------------------------------------------------------------------------


def test_ten_players_five_per_side_one_winner(moba_conn):
    sides = moba_conn.execute(
        "SELECT match_id, side, COUNT(*), COUNT(DISTINCT player_id), COUNT(DISTINCT hero_id), "
        "SUM(result = 'win'), SUM(is_mvp) FROM match_players GROUP BY match_id, side"
    ).fetchall()
    assert len(sides) == 2 * val(moba_conn, "SELECT COUNT(*) FROM matches")
    assert {(n, players, heroes, mvp) for _, _, n, players, heroes, _, mvp in sides} == {(5, 5, 5, 1)}
    winners = dict(moba_conn.execute("SELECT id, winner_side FROM matches"))
    for match_id, side, _, _, _, wins, _ in sides:
        assert wins == (5 if winners[match_id] == side else 0)
    # A player appears once per match and a hero is picked once per match (both sides together).
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM (SELECT match_id FROM match_players GROUP BY match_id "
            "HAVING COUNT(DISTINCT player_id) != 10 OR COUNT(DISTINCT hero_id) != 10)",
        )
        == 0
    )
    both = moba_conn.execute("SELECT winner_side, COUNT(*) FROM matches GROUP BY 1").fetchall()
    assert {side for side, _ in both} == {"blue", "red"} and min(n for _, n in both) > 500


def test_mvp_is_the_best_score_of_its_side(moba_conn):
    wrong = val(
        moba_conn,
        """SELECT COUNT(*) FROM match_players mp WHERE mp.is_mvp = 1 AND EXISTS (SELECT 1 FROM match_players o
              WHERE o.match_id = mp.match_id AND o.side = mp.side AND (o.score > mp.score OR (o.score = mp.score AND o.player_id < mp.player_id)))""",
    )
    assert wrong == 0


def test_heroes_played_were_owned_at_the_match_start(moba_conn):
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM match_players mp JOIN matches m ON m.id = mp.match_id
              LEFT JOIN player_heroes ph ON ph.player_id = mp.player_id AND ph.hero_id = mp.hero_id
              WHERE ph.acquired_at IS NULL OR ph.acquired_at > m.started_at""",
        )
        == 0
    )
    # Unreleased heroes are owned and played by nobody.
    assert (
        val(moba_conn, "SELECT COUNT(*) FROM player_heroes ph JOIN heroes h ON h.id = ph.hero_id WHERE h.release_date > ?", NOW[:10]) == 0
    )


def test_matches_lie_in_their_season_before_now(moba_conn):
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM matches m JOIN seasons s ON s.id = m.season_id
              WHERE substr(m.started_at, 1, 10) NOT BETWEEN s.start_date AND s.end_date""",
        )
        == 0
    )
    assert val(moba_conn, "SELECT MAX(datetime(started_at, '+' || duration_sec || ' seconds')) FROM matches") <= NOW
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM match_players mp JOIN matches m ON m.id = mp.match_id JOIN players p ON p.id = mp.player_id
              WHERE p.created_at > m.started_at""",
        )
        == 0
    )


def test_stored_records_agree_with_the_slots(moba_conn):
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM players p WHERE total_matches != (SELECT COUNT(*) FROM match_players WHERE player_id = p.id)
              OR total_wins != (SELECT COUNT(*) FROM match_players WHERE player_id = p.id AND result = 'win')""",
        )
        == 0
    )
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM matches m WHERE blue_kills != (SELECT SUM(kills) FROM match_players WHERE match_id = m.id AND side = 'blue')
              OR red_kills != (SELECT SUM(kills) FROM match_players WHERE match_id = m.id AND side = 'red')""",
        )
        == 0
    )
    ranked = val(moba_conn, "SELECT SUM(ranked_matches) FROM season_ranks")
    assert ranked == 10 * val(moba_conn, "SELECT COUNT(*) FROM matches WHERE mode = 'ranked'") > 0


# -- friends ------------------------------------------------------------------------------


def test_friendships_are_symmetric_and_never_with_oneself(moba_conn):
    friends = set(moba_conn.execute("SELECT player_id, other_id, since, intimacy FROM relations WHERE kind = 'friend'"))
    assert len(friends) > 1000
    assert all((b, a, since, intimacy) in friends for a, b, since, intimacy in friends)
    assert val(moba_conn, "SELECT COUNT(*) FROM relations WHERE player_id = other_id") == 0


def test_blocked_pairs_are_not_friends(moba_conn):
    assert val(moba_conn, "SELECT COUNT(*) FROM relations WHERE kind = 'blocked'") > 50
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM relations b JOIN relations f ON f.kind = 'friend'
              AND ((f.player_id = b.player_id AND f.other_id = b.other_id) OR (f.player_id = b.other_id AND f.other_id = b.player_id))
              WHERE b.kind = 'blocked'""",
        )
        == 0
    )


def test_friend_requests_agree_with_friendships(moba_conn):
    statuses = dict(moba_conn.execute("SELECT status, COUNT(*) FROM friend_requests GROUP BY 1"))
    assert set(statuses) == {"pending", "accepted", "rejected"} and min(statuses.values()) > 50
    friends = "EXISTS (SELECT 1 FROM relations f WHERE f.player_id = r.sender_id AND f.other_id = r.receiver_id AND f.kind = 'friend')"
    assert val(moba_conn, f"SELECT COUNT(*) FROM friend_requests r WHERE r.status = 'accepted' AND NOT {friends}") == 0
    assert val(moba_conn, f"SELECT COUNT(*) FROM friend_requests r WHERE r.status = 'pending' AND {friends}") == 0
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM friend_requests r JOIN relations b ON b.kind = 'blocked' AND
              ((b.player_id = r.sender_id AND b.other_id = r.receiver_id) OR (b.player_id = r.receiver_id AND b.other_id = r.sender_id))
              WHERE r.status = 'pending'""",
        )
        == 0
    )
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM friend_requests a JOIN friend_requests b ON a.id < b.id AND a.status = 'pending'
              AND b.status = 'pending' AND min(a.sender_id, a.receiver_id) = min(b.sender_id, b.receiver_id)
              AND max(a.sender_id, a.receiver_id) = max(b.sender_id, b.receiver_id)""",
        )
        == 0
    )
    assert val(moba_conn, "SELECT COUNT(*) FROM friend_requests WHERE answered_at < sent_at OR sent_at > ?", NOW) == 0


# -- clans --------------------------------------------------------------------------------


def test_clans_membership_counts_and_leaders(moba_conn):
    assert val(moba_conn, "SELECT COUNT(*) FROM (SELECT player_id FROM team_members GROUP BY player_id HAVING COUNT(*) > 1)") == 0
    rows = moba_conn.execute("""SELECT t.id, t.member_count, t.capacity, t.leader_id,
              (SELECT COUNT(*) FROM team_members m WHERE m.team_id = t.id),
              (SELECT group_concat(player_id) FROM team_members m WHERE m.team_id = t.id AND m.role = 'leader') FROM teams t""").fetchall()
    for team, count, capacity, leader, members, leaders in rows:
        assert count == members <= capacity, team
        assert leaders == str(leader), team
    assert sum(count == capacity for _, count, capacity, *_ in rows) >= 2  # some clans are full
    assert sum(count < capacity for _, count, capacity, *_ in rows) >= 10


def test_approved_applications_are_memberships(moba_conn):
    statuses = dict(moba_conn.execute("SELECT status, COUNT(*) FROM team_applications GROUP BY 1"))
    assert set(statuses) == {"pending", "approved", "rejected"}
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM team_applications a WHERE a.status = 'approved' AND NOT EXISTS
              (SELECT 1 FROM team_members m WHERE m.team_id = a.team_id AND m.player_id = a.player_id)""",
        )
        == 0
    )
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM team_applications a WHERE a.status = 'pending' AND EXISTS
              (SELECT 1 FROM team_members m WHERE m.team_id = a.team_id AND m.player_id = a.player_id)""",
        )
        == 0
    )
    # The rules bite: pending applications from players already in another clan, and to full clans.
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM team_applications a WHERE a.status = 'pending' AND a.player_id IN (SELECT player_id FROM team_members)",
        )
        > 5
    )
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM team_applications a JOIN teams t ON t.id = a.team_id "
            "WHERE a.status = 'pending' AND t.member_count >= t.capacity",
        )
        > 5
    )


# -- rooms --------------------------------------------------------------------------------


def test_rooms_capacity_owners_and_invitations(moba_conn):
    statuses = dict(moba_conn.execute("SELECT status, COUNT(*) FROM rooms GROUP BY 1"))
    assert set(statuses) == {"open", "in_game", "closed"}
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM rooms r WHERE member_count != (SELECT COUNT(*) FROM room_members WHERE room_id = r.id) "
            "OR member_count > capacity",
        )
        == 0
    )
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM rooms r WHERE status != 'closed' AND NOT EXISTS "
            "(SELECT 1 FROM room_members m WHERE m.room_id = r.id AND m.player_id = r.owner_id)",
        )
        == 0
    )
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM room_invitations i JOIN rooms r ON r.id = i.room_id WHERE r.status = 'closed' AND i.status = 'pending'",
        )
        == 0
    )
    assert val(moba_conn, "SELECT COUNT(*) FROM rooms WHERE status = 'open' AND member_count = capacity") >= 2  # full rooms exist
    assert val(moba_conn, "SELECT COUNT(*) FROM room_invitations WHERE status = 'pending'") > 10
    # Nobody is in two active rooms; players in a running game show as in a match.
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM (SELECT m.player_id FROM room_members m JOIN rooms r ON r.id = m.room_id "
            "WHERE r.status != 'closed' GROUP BY m.player_id HAVING COUNT(*) > 1)",
        )
        == 0
    )
    in_game = {
        r[0]
        for r in moba_conn.execute("SELECT m.player_id FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE r.status = 'in_game'")
    }
    assert in_game == {r[0] for r in moba_conn.execute("SELECT id FROM players WHERE status = 'in_match'")} != set()


# -- wallet, heroes, ranks ----------------------------------------------------------------


def test_purchases_match_the_shop_and_balances_are_not_negative(moba_conn):
    assert val(moba_conn, "SELECT COUNT(*) FROM players WHERE coins < 0 OR diamonds < 0") == 0
    bought = moba_conn.execute("""SELECT ph.currency, ph.price_paid, h.availability, h.price_coins, h.price_diamonds
              FROM player_heroes ph JOIN heroes h ON h.id = ph.hero_id WHERE ph.acquired_via = 'purchase'""").fetchall()
    assert len(bought) > 1000 and {c for c, *_ in bought} == {"coins", "diamonds"}
    for currency, paid, availability, coins, diamonds in bought:
        assert availability == "shop" and paid == (coins if currency == "coins" else diamonds)
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM player_heroes WHERE acquired_via != 'purchase' AND (currency IS NOT NULL OR price_paid IS NOT NULL)",
        )
        == 0
    )
    # Everyone has the starter heroes; owner counts are exact.
    starters = val(moba_conn, "SELECT COUNT(*) FROM heroes WHERE availability = 'starter'")
    assert val(moba_conn, "SELECT COUNT(*) FROM player_heroes WHERE acquired_via = 'starter'") == starters * val(
        moba_conn, "SELECT COUNT(*) FROM players"
    )
    assert (
        val(moba_conn, "SELECT COUNT(*) FROM heroes h WHERE owner_count != (SELECT COUNT(*) FROM player_heroes WHERE hero_id = h.id)") == 0
    )
    # Some players cannot afford the cheapest hero in coins: the balance rule bites.
    assert val(moba_conn, "SELECT COUNT(*) FROM players WHERE coins < (SELECT MIN(price_coins) FROM heroes)") > 5


def test_current_ranks_match_the_profiles(moba_conn):
    current = val(moba_conn, "SELECT id FROM seasons WHERE start_date <= ? AND end_date >= ?", NOW[:10], NOW[:10])
    assert current is not None
    assert (
        val(
            moba_conn,
            "SELECT COUNT(*) FROM players p LEFT JOIN season_ranks r ON r.player_id = p.id AND r.season_id = ? "
            "WHERE r.tier IS NOT p.tier OR r.stars IS NOT p.stars",
            current,
        )
        == 0
    )
    assert (
        val(moba_conn, f"SELECT COUNT(*) FROM season_ranks WHERE {rank_score('peak_tier', 'peak_stars')} < {rank_score('tier', 'stars')}")
        == 0
    )
    assert val(moba_conn, "SELECT COUNT(*) FROM season_ranks r JOIN seasons s ON s.id = r.season_id WHERE s.start_date > ?", NOW[:10]) == 0


# -- chronology ---------------------------------------------------------------------------

# (table, timestamp column, the player column it must not precede)
AFTER_CREATION = [
    ("player_heroes", "acquired_at", "player_id"),
    ("relations", "since", "player_id"),
    ("relations", "since", "other_id"),
    ("friend_requests", "sent_at", "sender_id"),
    ("friend_requests", "sent_at", "receiver_id"),
    ("teams", "created_at", "leader_id"),
    ("team_members", "joined_at", "player_id"),
    ("team_applications", "applied_at", "player_id"),
    ("rooms", "created_at", "owner_id"),
    ("room_members", "joined_at", "player_id"),
    ("room_invitations", "sent_at", "invitee_id"),
    ("favourite_matches", "favourited_at", "player_id"),
    ("players", "last_login", "id"),
]


@pytest.mark.parametrize("table, column, player", AFTER_CREATION, ids=[f"{t}.{c}" for t, c, _ in AFTER_CREATION])
def test_everything_after_the_players_creation_and_before_now(table, column, player, moba_conn):
    assert val(moba_conn, f"SELECT COUNT(*) FROM {table} x JOIN players p ON p.id = x.{player} WHERE x.{column} < p.created_at") == 0
    assert val(moba_conn, f"SELECT COUNT(*) FROM {table} WHERE {column} > ?", NOW) == 0


def test_favourites_are_own_matches_saved_after_they_ended(moba_conn):
    assert val(moba_conn, "SELECT COUNT(*) FROM favourite_matches") > 200
    assert (
        val(
            moba_conn,
            """SELECT COUNT(*) FROM favourite_matches f JOIN matches m ON m.id = f.match_id
              WHERE f.favourited_at < datetime(m.started_at, '+' || m.duration_sec || ' seconds')
              OR NOT EXISTS (SELECT 1 FROM match_players mp WHERE mp.match_id = f.match_id AND mp.player_id = f.player_id)""",
        )
        == 0
    )


# -- variety and the future ---------------------------------------------------------------


def test_data_is_varied(moba_conn):
    assert val(moba_conn, "SELECT COUNT(DISTINCT lower(nickname)) FROM players") == val(moba_conn, "SELECT COUNT(*) FROM players")
    assert val(moba_conn, "SELECT COUNT(DISTINCT tier) FROM players") >= 7
    assert val(moba_conn, "SELECT COUNT(DISTINCT region) FROM players") == 5
    assert val(moba_conn, "SELECT COUNT(DISTINCT status) FROM players") == 3
    assert val(moba_conn, "SELECT COUNT(DISTINCT role) FROM heroes") == 6
    assert val(moba_conn, "SELECT COUNT(DISTINCT title) FROM heroes") == val(moba_conn, "SELECT COUNT(*) FROM heroes") > 100
    assert val(moba_conn, "SELECT COUNT(DISTINCT name) FROM teams") == val(moba_conn, "SELECT COUNT(*) FROM teams")
    modes = dict(moba_conn.execute("SELECT mode, COUNT(*) FROM matches GROUP BY 1"))
    assert set(modes) == {"ranked", "classic", "brawl"}
    assert val(moba_conn, "SELECT COUNT(DISTINCT season_id) FROM matches") >= 6
    assert val(moba_conn, "SELECT COUNT(DISTINCT substr(created_at, 1, 4)) FROM players") >= 6
    assert val(moba_conn, "SELECT COUNT(DISTINCT kills) FROM match_players") > 10
    # Matches lean to the evening, as players do.
    evening = val(moba_conn, "SELECT COUNT(*) FROM matches WHERE CAST(substr(started_at, 12, 2) AS INTEGER) BETWEEN 18 AND 23")
    assert evening / val(moba_conn, "SELECT COUNT(*) FROM matches") > 0.35


def test_there_is_a_future(moba_conn):
    assert val(moba_conn, "SELECT COUNT(*) FROM seasons WHERE start_date > ?", NOW[:10]) >= 1
    assert val(moba_conn, "SELECT COUNT(*) FROM seasons WHERE start_date <= ? AND end_date >= ?", NOW[:10], NOW[:10]) == 1
    assert val(moba_conn, "SELECT COUNT(*) FROM heroes WHERE release_date > ? AND availability = 'shop'", NOW[:10]) >= 1
    # Recent activity: matches in the current season and rooms open right now.
    assert val(moba_conn, "SELECT COUNT(*) FROM matches WHERE started_at > datetime(?, '-7 days')", NOW) > 30
    assert val(moba_conn, "SELECT COUNT(*) FROM rooms WHERE status = 'open'") > 10


# -- determinism --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def twin_builds(moba, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("moba-twins")
    return [
        build_world(moba, seed=seed, path=tmp / f"{name}.sqlite")
        for name, seed in (("a", moba.default_seed), ("b", moba.default_seed), ("c", moba.default_seed + 1))
    ]


def test_same_seed_builds_byte_identical_worlds_and_another_seed_differs(twin_builds):
    a, b, c = (Path(r.path) for r in twin_builds)
    digest = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    assert digest(a) == digest(b)
    with sqlite3.connect(a) as ca, sqlite3.connect(c) as cc:
        assert content_hash(ca) != content_hash(cc)
    assert twin_builds[0].repaired > 0  # the generators leave aggregates to the repair rules, and the report says so
    other = sqlite3.connect(c)
    assert other.execute("PRAGMA foreign_key_check").fetchall() == []  # another seed settles too
