"""Fuzzing of every moba tool (the harness is in fuzzing.py), plus checks that the pools bite."""

from __future__ import annotations

from fuzzing import fuzz_suite

# The benchmark's actor (ebench/domains/moba/tool_cases.py ACTOR_SQL): a clan officer who owns an
# open room and has pending requests and invitations; the first test below checks it still is.
ACTOR = 164

# Mostly ids that make the product rules bite: the actor's friends, blocked players and players
# who blocked them, rooms they own and others' (full, in game, closed), their clan's applications
# and others', their own matches and others', heroes owned, unowned, starter, event, upcoming.
ID_POOLS = {
    "player_id": "SELECT id FROM players WHERE id IN (:a, 1, 2, 3) "
    "OR id IN (SELECT other_id FROM relations WHERE player_id = :a) "
    "OR id IN (SELECT player_id FROM relations WHERE other_id = :a AND kind = 'blocked') "
    "OR id IN (SELECT sender_id FROM friend_requests WHERE receiver_id = :a AND status = 'pending') "
    "OR id IN (SELECT receiver_id FROM friend_requests WHERE sender_id = :a AND status = 'pending') "
    "OR id IN (SELECT player_id FROM room_members WHERE room_id IN (SELECT id FROM rooms WHERE owner_id = :a))",
    "hero_id": "SELECT id FROM heroes WHERE id <= 12 OR availability != 'shop' OR release_date > '2026-10-15' "
    "OR id IN (SELECT hero_id FROM player_heroes WHERE player_id = :a AND hero_id > 100)",
    "season_id": "SELECT id FROM seasons",
    "team_id": "SELECT id FROM teams WHERE id <= 4 OR id IN (SELECT team_id FROM team_members WHERE player_id = :a) "
    "OR member_count >= capacity",
    "room_id": "SELECT id FROM rooms WHERE owner_id = :a OR status != 'closed' OR id <= 3",
    "match_id": "SELECT match_id FROM match_players WHERE player_id = :a AND match_id % 4 = 0 "
    "UNION SELECT match_id FROM favourite_matches WHERE player_id = :a UNION SELECT id FROM matches WHERE id <= 5",
    "request_id": "SELECT id FROM friend_requests WHERE receiver_id = :a OR sender_id = :a OR id <= 5",
    "invitation_id": "SELECT id FROM room_invitations WHERE invitee_id = :a OR inviter_id = :a OR id <= 5 OR status = 'pending'",
    "application_id": "SELECT id FROM team_applications WHERE team_id IN (SELECT team_id FROM team_members WHERE player_id = :a) "
    "OR id <= 5",
}

globals().update(
    fuzz_suite(
        "moba",
        actor=ACTOR,
        id_pools=ID_POOLS,
        odd_texts=[
            "2026-02-30",
            "2026-5-1",
            "2025-01-01",
            "2026-10-15",
            "1234",
            "123",
            "1234567",
            "abcd",
            "0000",
            "Mythic",
            "mage",
            "East Asia",
            "coins",
        ],
        boundary_lengths=[29, 30, 31, 99, 100, 101],  # room names stop at 30 characters, messages and notes at 100
    )
)


def test_the_fuzz_actor_makes_the_rules_bite(fuzz_world):
    conn, pools = fuzz_world
    one = lambda sql: conn.execute(sql, {"a": ACTOR}).fetchone()[0]  # noqa: E731
    assert one("SELECT role FROM team_members WHERE player_id = :a") in ("leader", "vice_leader")
    assert one("SELECT COUNT(*) FROM rooms WHERE owner_id = :a AND status = 'open'") == 1
    assert one("SELECT COUNT(*) FROM room_invitations WHERE invitee_id = :a AND status = 'pending'") >= 1
    assert one("SELECT COUNT(*) FROM friend_requests WHERE receiver_id = :a AND status = 'pending'") >= 1
    assert one("SELECT COUNT(*) FROM relations WHERE player_id = :a AND kind = 'blocked'") >= 1
    rooms = ",".join(map(str, pools["room_id"]))
    assert {r[0] for r in conn.execute(f"SELECT DISTINCT status FROM rooms WHERE id IN ({rooms})")} == {"open", "in_game", "closed"}
    heroes = ",".join(map(str, pools["hero_id"]))
    assert {r[0] for r in conn.execute(f"SELECT DISTINCT availability FROM heroes WHERE id IN ({heroes})")} == {"shop", "starter", "event"}
    matches = ",".join(map(str, pools["match_id"]))
    assert (
        one(f"SELECT COUNT(*) FROM matches WHERE id IN ({matches}) AND id NOT IN (SELECT match_id FROM match_players WHERE player_id = :a)")
        > 0
    )
