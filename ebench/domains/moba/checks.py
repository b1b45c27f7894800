"""Validation and repair rules of the MOBA world (run after the fill, in this order, until settled).

Some rules only verify what the generators guarantee by construction (ten players per match,
one MVP per side): their repair cannot invent the missing rows, so a violation fails the build.
"""

from __future__ import annotations

from ...engine.repair import Aggregate, Check, NotAfterNow, NotBefore, Rule
from .schema import rank_score

# The season that contains the clock (each `?` is the clock).
CURRENT_SEASON = "(SELECT s.id FROM seasons s WHERE s.start_date <= substr(?, 1, 10) AND s.end_date >= substr(?, 1, 10))"
NO_FIX = None  # verified only: the generators guarantee it (a violation fails the build)

_TIMESTAMPS = [
    ("players", "created_at"),
    ("players", "last_login"),
    ("player_heroes", "acquired_at"),
    ("relations", "since"),
    ("friend_requests", "sent_at"),
    ("friend_requests", "answered_at"),
    ("teams", "created_at"),
    ("team_members", "joined_at"),
    ("team_applications", "applied_at"),
    ("team_applications", "reviewed_at"),
    ("rooms", "created_at"),
    ("rooms", "closed_at"),
    ("room_members", "joined_at"),
    ("room_invitations", "sent_at"),
    ("room_invitations", "answered_at"),
    ("matches", "started_at"),
    ("favourite_matches", "favourited_at"),
]

_MATCH_END = "datetime(m.started_at, '+' || m.duration_sec || ' seconds')"
_OWNED_AT_START = (
    "EXISTS (SELECT 1 FROM player_heroes ph JOIN matches m ON m.id = match_players.match_id "
    "WHERE ph.player_id = match_players.player_id AND ph.hero_id = match_players.hero_id AND ph.acquired_at <= m.started_at)"
)
# Slots whose MVP flag disagrees with "best score of the side" (one window pass over the table).
_MVP_WRONG = (
    "SELECT rid FROM (SELECT rowid AS rid, is_mvp, ROW_NUMBER() OVER (PARTITION BY match_id, side "
    "ORDER BY score DESC, player_id) AS n FROM match_players) WHERE is_mvp != (n = 1)"
)
_RANKED_RECORD = (
    "SELECT mp.player_id, m.season_id, COUNT(*) AS n, SUM(mp.result = 'win') AS w FROM match_players mp "
    "JOIN matches m ON m.id = mp.match_id WHERE m.mode = 'ranked' GROUP BY mp.player_id, m.season_id"
)
_HERO_RECORD = "SELECT player_id, hero_id, COUNT(*) AS n, SUM(result = 'win') AS w FROM match_players GROUP BY player_id, hero_id"


_REVERSE_FRIEND = (
    "(SELECT r.since, r.intimacy FROM relations r WHERE r.player_id = relations.other_id "
    "AND r.other_id = relations.player_id AND r.kind = 'friend')"
)


_FRIENDS = "EXISTS (SELECT 1 FROM relations f WHERE f.player_id = {a} AND f.other_id = {b} AND f.kind = 'friend')"
_BLOCKED_EITHER = (
    "EXISTS (SELECT 1 FROM relations x WHERE x.kind = 'blocked' AND "
    "((x.player_id = {a} AND x.other_id = {b}) OR (x.player_id = {b} AND x.other_id = {a})))"
)

CHECKS: list[Check] = [
    # -- matches: slots, result, MVP, heroes ------------------------------------------------
    Rule(
        "ten players per match, five per side",
        "every match has exactly 5 blue and 5 red player slots (verified; the generator staffs matches)",
        "matches",
        "(SELECT COUNT(*) FROM match_players p WHERE p.match_id = matches.id AND p.side = 'blue') != 5 "
        "OR (SELECT COUNT(*) FROM match_players p WHERE p.match_id = matches.id AND p.side = 'red') != 5",
        NO_FIX,
    ),
    Rule(
        "winners win",
        "a slot's result is 'win' exactly when its side is the match's winner side",
        "match_players",
        "result != CASE WHEN side = (SELECT m.winner_side FROM matches m WHERE m.id = match_players.match_id) THEN 'win' ELSE 'loss' END",
        "UPDATE match_players SET result = CASE WHEN side = (SELECT m.winner_side FROM matches m WHERE m.id = match_players.match_id) "
        "THEN 'win' ELSE 'loss' END",
    ),
    Rule(
        "one MVP per side, the best score",
        "each side's MVP is its player with the highest score (ties: the lower player id), and only that player",
        "match_players",
        f"rowid IN ({_MVP_WRONG})",
        f"UPDATE match_players SET is_mvp = 1 - is_mvp WHERE rowid IN ({_MVP_WRONG})",
    ),
    Rule(
        "rating change follows the result",
        "ranked slots win stars (MVP +2, others +1) or lose one (an MVP loses none); other modes change nothing",
        "match_players",
        "rating_change != CASE WHEN (SELECT m.mode FROM matches m WHERE m.id = match_players.match_id) != 'ranked' THEN 0 "
        "WHEN result = 'win' THEN 1 + is_mvp ELSE is_mvp - 1 END",
        "UPDATE match_players SET rating_change = CASE WHEN (SELECT m.mode FROM matches m WHERE m.id = match_players.match_id) != 'ranked' "
        "THEN 0 WHEN result = 'win' THEN 1 + is_mvp ELSE is_mvp - 1 END",
    ),
    Rule(
        "hero owned at the match start",
        "the hero a player used was in their collection when the match started (no free trials)",
        "match_players",
        f"NOT {_OWNED_AT_START}",
        NO_FIX,
        kind="chronology",
    ),
    Rule(
        "match in its season",
        "a match belongs to the season whose dates contain its start",
        "matches",
        "season_id != (SELECT s.id FROM seasons s WHERE s.start_date <= substr(matches.started_at, 1, 10) "
        "AND s.end_date >= substr(matches.started_at, 1, 10))",
        "UPDATE matches SET season_id = (SELECT s.id FROM seasons s WHERE s.start_date <= substr(matches.started_at, 1, 10) "
        "AND s.end_date >= substr(matches.started_at, 1, 10))",
        kind="chronology",
    ),
    Rule(
        "players existed when they played",
        "a player's account was created before each match they played",
        "match_players",
        "(SELECT p.created_at FROM players p WHERE p.id = match_players.player_id) > "
        "(SELECT m.started_at FROM matches m WHERE m.id = match_players.match_id)",
        NO_FIX,
        kind="chronology",
    ),
    # -- ranks -----------------------------------------------------------------------------
    Rule(
        "a rank row for every ranked match",
        "a player who played a ranked match in a season has a rank row for that season",
        "match_players",
        "(SELECT m.mode FROM matches m WHERE m.id = match_players.match_id) = 'ranked' AND NOT EXISTS (SELECT 1 FROM season_ranks r "
        "WHERE r.player_id = match_players.player_id AND r.season_id = (SELECT m.season_id FROM matches m WHERE m.id = match_players.match_id))",
        "INSERT OR IGNORE INTO season_ranks (player_id, season_id, tier, stars, peak_tier, peak_stars) "
        "SELECT DISTINCT mp.player_id, m.season_id, 'Bronze', 0, 'Bronze', 0 FROM match_players mp JOIN matches m ON m.id = mp.match_id "
        "WHERE m.mode = 'ranked'",
    ),
    Rule(
        "everyone ranked this season",
        "every player has a rank row for the current season",
        "players",
        f"NOT EXISTS (SELECT 1 FROM season_ranks r WHERE r.player_id = players.id AND r.season_id = {CURRENT_SEASON})",
        f"INSERT OR IGNORE INTO season_ranks (player_id, season_id, tier, stars, peak_tier, peak_stars) "
        f"SELECT id, {CURRENT_SEASON}, tier, stars, tier, stars FROM players",
    ),
    Rule(
        "profile shows the current rank",
        "a player's tier and stars are their rank row's in the current season",
        "players",
        f"(tier, stars) IS NOT (SELECT r.tier, r.stars FROM season_ranks r WHERE r.player_id = players.id AND r.season_id = {CURRENT_SEASON})",
        f"UPDATE players SET tier = r.tier, stars = r.stars FROM season_ranks r WHERE r.player_id = players.id "
        f"AND r.season_id = {CURRENT_SEASON} AND (players.tier, players.stars) IS NOT (r.tier, r.stars)",
    ),
    Rule(
        "peak not below the final rank",
        "a season's peak rank is at least the rank the player holds in it",
        "season_ranks",
        f"{rank_score('peak_tier', 'peak_stars')} < {rank_score('tier', 'stars')}",
        f"UPDATE season_ranks SET peak_tier = tier, peak_stars = stars WHERE {rank_score('peak_tier', 'peak_stars')} < {rank_score('tier', 'stars')}",
    ),
    Rule(
        "ranked record per season",
        "a rank row's ranked matches and wins count the player's ranked slots of that season",
        "season_ranks",
        f"rowid IN (SELECT r.rowid FROM season_ranks r LEFT JOIN ({_RANKED_RECORD}) x ON x.player_id = r.player_id "
        "AND x.season_id = r.season_id WHERE (r.ranked_matches, r.ranked_wins) IS NOT (COALESCE(x.n, 0), COALESCE(x.w, 0)))",
        (
            "UPDATE season_ranks SET ranked_matches = 0, ranked_wins = 0",
            f"UPDATE season_ranks SET ranked_matches = x.n, ranked_wins = x.w FROM ({_RANKED_RECORD}) x "
            "WHERE x.player_id = season_ranks.player_id AND x.season_id = season_ranks.season_id",
        ),
    ),
    # -- heroes, purchases -----------------------------------------------------------------
    Rule(
        "purchases paid the shop price",
        "a purchased hero is sold in the shop and its price paid is the hero's price in that currency; "
        "starter heroes come only as starters, shop heroes never as event prizes",
        "player_heroes",
        "(SELECT CASE WHEN player_heroes.acquired_via = 'purchase' THEN h.availability != 'shop' OR player_heroes.price_paid IS NOT "
        "CASE player_heroes.currency WHEN 'coins' THEN h.price_coins ELSE h.price_diamonds END "
        "ELSE (h.availability = 'starter') != (player_heroes.acquired_via = 'starter') OR "
        "(h.availability = 'shop' AND player_heroes.acquired_via = 'event') END FROM heroes h WHERE h.id = player_heroes.hero_id)",
        "UPDATE player_heroes SET price_paid = (SELECT CASE player_heroes.currency WHEN 'coins' THEN h.price_coins ELSE h.price_diamonds END "
        "FROM heroes h WHERE h.id = player_heroes.hero_id) WHERE acquired_via = 'purchase'",
    ),
    Rule(
        "hero record",
        "an owned hero's matches played and wins count the player's slots with that hero",
        "player_heroes",
        f"rowid IN (SELECT r.rowid FROM player_heroes r LEFT JOIN ({_HERO_RECORD}) x ON x.player_id = r.player_id "
        "AND x.hero_id = r.hero_id WHERE (r.matches_played, r.wins) IS NOT (COALESCE(x.n, 0), COALESCE(x.w, 0)))",
        (
            "UPDATE player_heroes SET matches_played = 0, wins = 0",
            f"UPDATE player_heroes SET matches_played = x.n, wins = x.w FROM ({_HERO_RECORD}) x "
            "WHERE x.player_id = player_heroes.player_id AND x.hero_id = player_heroes.hero_id",
        ),
        kind="aggregate",
    ),
    Rule(
        "proficiency earned by playing",
        "every match played with a hero earns at least 50 proficiency points",
        "player_heroes",
        "proficiency < 50 * matches_played",
        "UPDATE player_heroes SET proficiency = 50 * matches_played + proficiency % 50 WHERE proficiency < 50 * matches_played",
    ),
    # -- social ----------------------------------------------------------------------------
    Rule(
        "friendships are mutual",
        "a friend row has its reverse row, with the same date and intimacy",
        "relations",
        f"kind = 'friend' AND (since, intimacy) IS NOT {_REVERSE_FRIEND}",
        (
            "DELETE FROM relations WHERE kind = 'friend' AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.player_id = relations.other_id "
            "AND r.other_id = relations.player_id AND r.kind = 'friend')",
            f"UPDATE relations SET (since, intimacy) = {_REVERSE_FRIEND} WHERE kind = 'friend' AND player_id > other_id "
            f"AND (since, intimacy) IS NOT {_REVERSE_FRIEND}",
        ),
    ),
    Rule(
        "accepted requests made friends",
        "an accepted friend request's two players are friends",
        "friend_requests",
        "status = 'accepted' AND NOT " + _FRIENDS.format(a="friend_requests.sender_id", b="friend_requests.receiver_id"),
        "UPDATE friend_requests SET status = 'rejected' WHERE status = 'accepted' AND NOT "
        + _FRIENDS.format(a="friend_requests.sender_id", b="friend_requests.receiver_id"),
    ),
    Rule(
        "no pending request between friends or blocked players",
        "a pending friend request is between players who are not friends and neither of whom blocked the other",
        "friend_requests",
        "status = 'pending' AND ("
        + _FRIENDS.format(a="sender_id", b="receiver_id")
        + " OR "
        + _BLOCKED_EITHER.format(a="sender_id", b="receiver_id")
        + ")",
        "UPDATE friend_requests SET status = 'rejected', answered_at = ? WHERE status = 'pending' AND ("
        + _FRIENDS.format(a="sender_id", b="receiver_id")
        + " OR "
        + _BLOCKED_EITHER.format(a="sender_id", b="receiver_id")
        + ")",
    ),
    Rule(
        "one pending request per pair",
        "two players have at most one pending friend request between them, in either direction",
        "friend_requests",
        "status = 'pending' AND EXISTS (SELECT 1 FROM friend_requests o WHERE o.status = 'pending' AND o.id < friend_requests.id "
        "AND ((o.sender_id = friend_requests.sender_id AND o.receiver_id = friend_requests.receiver_id) "
        "OR (o.sender_id = friend_requests.receiver_id AND o.receiver_id = friend_requests.sender_id)))",
        "UPDATE friend_requests SET status = 'rejected', answered_at = ? WHERE status = 'pending' AND EXISTS (SELECT 1 FROM friend_requests o "
        "WHERE o.status = 'pending' AND o.id < friend_requests.id AND ((o.sender_id = friend_requests.sender_id AND o.receiver_id = "
        "friend_requests.receiver_id) OR (o.sender_id = friend_requests.receiver_id AND o.receiver_id = friend_requests.sender_id)))",
    ),
    # -- clans -----------------------------------------------------------------------------
    Rule(
        "one leader, the clan's leader",
        "a member's role is 'leader' exactly when they are their clan's leader",
        "team_members",
        "(role = 'leader') != (player_id = (SELECT t.leader_id FROM teams t WHERE t.id = team_members.team_id))",
        "UPDATE team_members SET role = CASE WHEN player_id = (SELECT t.leader_id FROM teams t WHERE t.id = team_members.team_id) "
        "THEN 'leader' ELSE 'member' END WHERE (role = 'leader') != (player_id = (SELECT t.leader_id FROM teams t WHERE t.id = team_members.team_id))",
    ),
    Rule(
        "leaders are members",
        "a clan's leader is a member of it",
        "teams",
        "NOT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = teams.id AND m.player_id = teams.leader_id)",
        NO_FIX,
    ),
    Rule(
        "approved applicants are members",
        "an approved application's player is a member of that clan",
        "team_applications",
        "status = 'approved' AND NOT EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = team_applications.team_id "
        "AND m.player_id = team_applications.player_id)",
        "UPDATE team_applications SET status = 'rejected' WHERE status = 'approved' AND NOT EXISTS (SELECT 1 FROM team_members m "
        "WHERE m.team_id = team_applications.team_id AND m.player_id = team_applications.player_id)",
    ),
    Rule(
        "no pending application from a member",
        "nobody has a pending application to the clan they are in, nor two pending applications to one clan",
        "team_applications",
        "status = 'pending' AND (EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = team_applications.team_id "
        "AND m.player_id = team_applications.player_id) OR EXISTS (SELECT 1 FROM team_applications o WHERE o.status = 'pending' "
        "AND o.team_id = team_applications.team_id AND o.player_id = team_applications.player_id AND o.id < team_applications.id))",
        NO_FIX,
    ),
    # -- rooms -----------------------------------------------------------------------------
    Rule(
        "owners are in their open rooms",
        "the owner of an open or in-game room is one of its members; a closed room has no members",
        "rooms",
        "(status != 'closed' AND NOT EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = rooms.id AND m.player_id = rooms.owner_id)) "
        "OR (status = 'closed' AND EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = rooms.id))",
        "DELETE FROM room_members WHERE room_id IN (SELECT id FROM rooms WHERE status = 'closed')",
    ),
    Rule(
        "one active room per player",
        "a player is a member of at most one open or in-game room",
        "room_members",
        "(SELECT COUNT(*) FROM room_members o JOIN rooms r ON r.id = o.room_id WHERE o.player_id = room_members.player_id "
        "AND r.status != 'closed') > 1",
        NO_FIX,
    ),
    Rule(
        "pending invitations only to open rooms",
        "invitations to rooms that are in game or closed are no longer pending, and nobody is invited to a room they are in",
        "room_invitations",
        "status = 'pending' AND ((SELECT r.status FROM rooms r WHERE r.id = room_invitations.room_id) != 'open' "
        "OR EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = room_invitations.room_id AND m.player_id = room_invitations.invitee_id))",
        "UPDATE room_invitations SET status = 'expired' WHERE status = 'pending' AND ((SELECT r.status FROM rooms r "
        "WHERE r.id = room_invitations.room_id) != 'open' OR EXISTS (SELECT 1 FROM room_members m WHERE m.room_id = room_invitations.room_id "
        "AND m.player_id = room_invitations.invitee_id))",
    ),
    Rule(
        "in a match means in a game room",
        "a player's status is 'in_match' exactly when they are in a room whose game is running",
        "players",
        "(status = 'in_match') != EXISTS (SELECT 1 FROM room_members m JOIN rooms r ON r.id = m.room_id "
        "WHERE m.player_id = players.id AND r.status = 'in_game')",
        (
            "UPDATE players SET status = 'online' WHERE status = 'in_match' AND NOT EXISTS (SELECT 1 FROM room_members m "
            "JOIN rooms r ON r.id = m.room_id WHERE m.player_id = players.id AND r.status = 'in_game')",
            "UPDATE players SET status = 'in_match' WHERE status != 'in_match' AND EXISTS (SELECT 1 FROM room_members m "
            "JOIN rooms r ON r.id = m.room_id WHERE m.player_id = players.id AND r.status = 'in_game')",
        ),
    ),
    # -- chronology ------------------------------------------------------------------------
    NotBefore("player_heroes", "acquired_at", "player_id", "players", "created_at"),
    NotBefore("player_heroes", "acquired_at", "hero_id", "heroes", "release_date"),
    NotBefore("relations", "since", "player_id", "players", "created_at"),
    NotBefore("relations", "since", "other_id", "players", "created_at"),
    NotBefore("friend_requests", "sent_at", "sender_id", "players", "created_at", key="id"),
    NotBefore("friend_requests", "sent_at", "receiver_id", "players", "created_at", key="id"),
    NotBefore("teams", "created_at", "leader_id", "players", "created_at", key="id"),
    NotBefore("team_members", "joined_at", "team_id", "teams", "created_at"),
    NotBefore("team_members", "joined_at", "player_id", "players", "created_at"),
    NotBefore("team_applications", "applied_at", "player_id", "players", "created_at", key="id"),
    NotBefore("team_applications", "applied_at", "team_id", "teams", "created_at", key="id"),
    NotBefore("rooms", "created_at", "owner_id", "players", "created_at", key="id"),
    NotBefore("room_members", "joined_at", "room_id", "rooms", "created_at"),
    NotBefore("room_members", "joined_at", "player_id", "players", "created_at"),
    NotBefore("room_invitations", "sent_at", "room_id", "rooms", "created_at", key="id"),
    NotBefore("room_invitations", "sent_at", "invitee_id", "players", "created_at", key="id"),
    NotBefore("favourite_matches", "favourited_at", "player_id", "players", "created_at"),
    Rule(
        "answers after questions",
        "a friend request, application or invitation is answered after it was sent, a room closes after it opened",
        "friend_requests",
        "answered_at < sent_at",
        "UPDATE friend_requests SET answered_at = sent_at WHERE answered_at < sent_at",
        kind="chronology",
    ),
    Rule(
        "applications reviewed after applying",
        "a clan application is reviewed after it was sent",
        "team_applications",
        "reviewed_at < applied_at",
        "UPDATE team_applications SET reviewed_at = applied_at WHERE reviewed_at < applied_at",
        kind="chronology",
    ),
    Rule(
        "invitations answered after sending",
        "a room invitation is answered after it was sent",
        "room_invitations",
        "answered_at < sent_at",
        "UPDATE room_invitations SET answered_at = sent_at WHERE answered_at < sent_at",
        kind="chronology",
    ),
    Rule(
        "rooms close after opening",
        "a closed room's closing time is after its creation",
        "rooms",
        "closed_at < created_at",
        "UPDATE rooms SET closed_at = created_at WHERE closed_at < created_at",
        kind="chronology",
    ),
    Rule(
        "favourites after the match",
        "a match is favourited after it ended",
        "favourite_matches",
        f"favourited_at < (SELECT {_MATCH_END} FROM matches m WHERE m.id = favourite_matches.match_id)",
        f"UPDATE favourite_matches SET favourited_at = (SELECT {_MATCH_END} FROM matches m WHERE m.id = favourite_matches.match_id) "
        f"WHERE favourited_at < (SELECT {_MATCH_END} FROM matches m WHERE m.id = favourite_matches.match_id)",
        kind="chronology",
    ),
    Rule(
        "favourites are own matches",
        "a player favourites only matches they played",
        "favourite_matches",
        "NOT EXISTS (SELECT 1 FROM match_players mp WHERE mp.match_id = favourite_matches.match_id AND mp.player_id = favourite_matches.player_id)",
        NO_FIX,
    ),
    Rule(
        "last login after the last match",
        "a player's last login is not before their account's creation nor before the start of their latest match",
        "players",
        "last_login < max(created_at, COALESCE((SELECT MAX(m.started_at) FROM match_players mp JOIN matches m ON m.id = mp.match_id "
        "WHERE mp.player_id = players.id), ''))",
        "UPDATE players SET last_login = max(created_at, COALESCE((SELECT MAX(m.started_at) FROM match_players mp JOIN matches m "
        "ON m.id = mp.match_id WHERE mp.player_id = players.id), '')) WHERE last_login < max(created_at, COALESCE((SELECT MAX(m.started_at) "
        "FROM match_players mp JOIN matches m ON m.id = mp.match_id WHERE mp.player_id = players.id), ''))",
        kind="chronology",
    ),
    Rule(
        "online players logged in lately",
        "a player who is online or in a match logged in within the last six hours",
        "players",
        "status != 'offline' AND last_login < datetime(?, '-6 hours')",
        "UPDATE players SET last_login = datetime(?, '-' || (id % 300 + 1) || ' minutes') "
        "WHERE status != 'offline' AND last_login < datetime(?, '-6 hours')",
        kind="status",
    ),
    # The frozen clock: nothing after now (heroes and seasons may be announced ahead).
    *(NotAfterNow(table, column) for table, column in _TIMESTAMPS),
    # -- stored aggregates -----------------------------------------------------------------
    Aggregate("heroes", "owner_count", "player_heroes", "hero_id"),
    Aggregate("players", "hero_count", "player_heroes", "player_id"),
    Aggregate("players", "total_matches", "match_players", "player_id"),
    Aggregate("players", "total_wins", "match_players", "player_id", expr="SUM(c.result = 'win')"),
    Aggregate("players", "mvp_count", "match_players", "player_id", expr="SUM(c.is_mvp)"),
    Aggregate("teams", "member_count", "team_members", "team_id"),
    Aggregate("teams", "total_contribution", "team_members", "team_id", expr="SUM(c.contribution)"),
    Aggregate("rooms", "member_count", "room_members", "room_id"),
    Aggregate("matches", "blue_kills", "match_players", "match_id", expr="SUM(CASE WHEN c.side = 'blue' THEN c.kills ELSE 0 END)"),
    Aggregate("matches", "red_kills", "match_players", "match_id", expr="SUM(CASE WHEN c.side = 'red' THEN c.kills ELSE 0 END)"),
]
