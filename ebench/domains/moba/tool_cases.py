"""Benchmark arguments for the moba tools (used by benchmarks/tool_calls.py)."""

from __future__ import annotations

import sqlite3
from typing import Any

# The actor measured: a clan leader or vice leader with a pending application from a clanless
# player to a clan with room, who owns an open room with a free place, has a pending room
# invitation and a pending friend request, friends, a blacklist and favourite matches; among
# those, the one with the longest match history.
ACTOR_SQL = """
SELECT p.id FROM players p JOIN team_members tm ON tm.player_id = p.id AND tm.role IN ('leader', 'vice_leader')
JOIN teams t ON t.id = tm.team_id AND t.member_count < t.capacity
WHERE EXISTS (SELECT 1 FROM team_applications a WHERE a.team_id = t.id AND a.status = 'pending'
              AND a.player_id NOT IN (SELECT player_id FROM team_members))
  AND EXISTS (SELECT 1 FROM rooms r WHERE r.owner_id = p.id AND r.status = 'open' AND r.member_count < r.capacity)
  AND EXISTS (SELECT 1 FROM room_invitations i JOIN rooms r ON r.id = i.room_id WHERE i.invitee_id = p.id
              AND i.status = 'pending' AND r.member_count < r.capacity)
  AND EXISTS (SELECT 1 FROM friend_requests f WHERE f.receiver_id = p.id AND f.status = 'pending')
  AND EXISTS (SELECT 1 FROM relations b WHERE b.player_id = p.id AND b.kind = 'blocked')
  AND EXISTS (SELECT 1 FROM relations b WHERE b.player_id = p.id AND b.kind = 'friend')
  AND EXISTS (SELECT 1 FROM favourite_matches f WHERE f.player_id = p.id)
ORDER BY p.total_matches DESC, p.id LIMIT 1
"""

# get_match returns ten players' statistics, get_room its members and invitations, get_team a
# page of members and get_rank a leaderboard page: they are held to the list goal.
LOOKUPS = {"get_my_profile", "get_player", "get_hero"}


def cases(conn: sqlite3.Connection, actor: int) -> dict[str, dict[str, Any]]:
    def one(sql: str, *params: Any) -> Any:
        row = conn.execute(sql, params).fetchone()
        assert row is not None, f"no benchmark data for: {sql}"
        return row[0]

    team = one("SELECT team_id FROM team_members WHERE player_id = ? AND role IN ('leader', 'vice_leader')", actor)
    application = one(
        "SELECT id FROM team_applications WHERE team_id = ? AND status = 'pending' "
        "AND player_id NOT IN (SELECT player_id FROM team_members) ORDER BY id LIMIT 1",
        team,
    )
    my_room = one("SELECT id FROM rooms WHERE owner_id = ? AND status = 'open'", actor)
    invitation = one(
        "SELECT i.id FROM room_invitations i JOIN rooms r ON r.id = i.room_id WHERE i.invitee_id = ? "
        "AND i.status = 'pending' AND r.member_count < r.capacity ORDER BY i.id LIMIT 1",
        actor,
    )
    request = one("SELECT id FROM friend_requests WHERE receiver_id = ? AND status = 'pending' ORDER BY id LIMIT 1", actor)
    friend = one("SELECT other_id FROM relations WHERE player_id = ? AND kind = 'friend' ORDER BY intimacy DESC LIMIT 1", actor)
    blocked = one("SELECT other_id FROM relations WHERE player_id = ? AND kind = 'blocked' ORDER BY other_id LIMIT 1", actor)
    stranger = one(
        "SELECT p.id FROM players p WHERE p.id != :a AND NOT EXISTS (SELECT 1 FROM relations r WHERE "
        "(r.player_id = :a AND r.other_id = p.id) OR (r.player_id = p.id AND r.other_id = :a)) AND NOT EXISTS (SELECT 1 FROM "
        "friend_requests f WHERE f.status = 'pending' AND ((f.sender_id = :a AND f.receiver_id = p.id) OR (f.sender_id = p.id "
        "AND f.receiver_id = :a))) AND NOT EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = :r AND m.player_id = p.id) "
        "AND NOT EXISTS (SELECT 1 FROM room_invitations i WHERE i.room_id = :r AND i.invitee_id = p.id AND i.status = 'pending') "
        "ORDER BY p.id LIMIT 1".replace(":a", str(actor)).replace(":r", str(my_room))
    )
    favourite = one("SELECT match_id FROM favourite_matches WHERE player_id = ? ORDER BY match_id LIMIT 1", actor)
    played = one(
        "SELECT match_id FROM match_players WHERE player_id = ? AND match_id NOT IN "
        "(SELECT match_id FROM favourite_matches WHERE player_id = ?) ORDER BY match_id DESC LIMIT 1",
        actor,
        actor,
    )
    hero = one("SELECT hero_id FROM player_heroes WHERE player_id = ? ORDER BY matches_played DESC LIMIT 1", actor)
    to_buy = one(
        "SELECT h.id FROM heroes h WHERE h.availability = 'shop' AND h.release_date <= '2026-10-15' "
        "AND h.id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = ?) "
        "AND h.price_coins <= (SELECT coins FROM players WHERE id = ?) ORDER BY h.price_coins LIMIT 1",
        actor,
        actor,
    )
    busy_room = one("SELECT id FROM rooms WHERE status != 'closed' ORDER BY member_count DESC, id LIMIT 1")
    return {
        "get_my_profile": {},
        "search_players": {},
        "search_players(query)": {"query": "a", "sort_by": "rank"},
        "search_players(filters)": {"region": "East Asia", "tier": "Diamond", "sort_by": "level"},
        "get_player": {"player_id": friend},
        "search_heroes": {},
        "search_heroes(filters)": {"role": "mage", "owned": False, "max_price_coins": 13888, "sort_by": "price"},
        "search_heroes(page 5)": {"page": 5, "sort_by": "popularity"},
        "get_hero": {"hero_id": hero},
        "list_my_heroes": {},
        "list_my_heroes(win rate)": {"sort_by": "win_rate"},
        "get_rank": {},
        "get_rank(region, past)": {"season_id": 10, "region": "Southeast Asia", "page": 2},
        "list_friends": {},
        "list_friends(rank)": {"sort_by": "rank"},
        "list_friend_requests": {},
        "list_friend_requests(sent)": {"direction": "sent", "status": "pending"},
        "list_blacklist": {},
        "search_teams": {},
        "search_teams(filters)": {"query": "a", "has_space": True, "sort_by": "members"},
        "get_team": {"team_id": team},
        "list_team_applications": {},
        "list_rooms": {},
        "list_rooms(closed)": {"status": "closed", "page": 2},
        "get_room": {"room_id": busy_room},
        "list_room_invitations": {},
        "list_room_invitations(sent)": {"direction": "sent"},
        "list_match_history": {},
        "list_match_history(filters)": {"mode": "ranked", "result": "win", "start_date": "2026-01-01", "end_date": "2026-10-15"},
        "list_match_history(hero, page 2)": {"hero_id": hero, "page": 2},
        "get_match": {"match_id": played},
        "list_favourite_matches": {},
        "send_friend_request": {"player_id": stranger, "message": "GG, add me!"},
        "answer_friend_request": {"request_id": request, "accept": True},
        "answer_friend_request(reject)": {"request_id": request, "accept": False},
        "remove_friend": {"player_id": friend},
        "block_player": {"player_id": friend},
        "unblock_player": {"player_id": blocked},
        "create_room": {"name": "Benchmark room", "mode": "custom", "capacity": 6, "password": "1234"},
        "dissolve_room": {"room_id": my_room},
        "invite_to_room": {"room_id": my_room, "player_id": stranger},
        "answer_room_invitation": {"invitation_id": invitation, "accept": True},
        "answer_room_invitation(decline)": {"invitation_id": invitation, "accept": False},
        "approve_team_application": {"application_id": application},
        "reject_team_application": {"application_id": application},
        "favourite_match": {"match_id": played, "note": "benchmark"},
        "unfavourite_match": {"match_id": favourite},
        "buy_hero": {"hero_id": to_buy, "currency": "coins"},
    }
