"""Task templates of the MOBA platform.

Each template inspects the world with SQL, picks a player and targets, and writes the reference
solution with the public tools. Values a player would type (a room's name, a password, a date, a
threshold, a note) are the player's and appear in the query; what the data decides (which
requests, which friends, how many heroes) does not. Every rule the query states can be checked
with the read tools: friends' intimacy and rank (list_friends), senders' rank and level
(list_friend_requests), applicants' level and clan (list_team_applications), the ten players of a
match (get_match), a player's most practised heroes (get_player), the leaderboard (get_rank).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...domains.moba.schema import rank_score, tier_index
from ...domains.moba.vocabulary import ROLES, TIERS
from ..generation import Draft, GenContext, NoTarget, Template
from ..spec import Step
from .common import bounded, days_ago, no_tie_at, pretty_day, ref, steps

ROOM_NAMES = [
    "Friday Night Stack", "Late Lobby", "Duo Queue Crew", "Practice Arena", "Sunday Scrims", "Rank Push",
    "Chill Customs", "No Tilt Zone", "Midnight Brawl", "Team Drills", "Warm-up Games", "Climb Together",
    "Jungle Gym", "Last Hit Club", "Tower Divers", "Weekend Warriors", "Lunch Break Lobby", "Draft Practice",
]
PASSWORDS = ["2468", "7391", "5050", "8642", "3579", "4826", "9317", "60606", "772211"]
FRIEND_MESSAGES = [
    "GG! Want to team up again?", "Good games lately, let's queue together.", "Nice plays, add me for ranked?", "Let's duo sometime.",
]
CLAN_MESSAGES = ["Hey clanmate, add me!", "Same clan, let's be friends.", "Clan duo tonight?"]
MATCH_NOTES = ["highlight", "MVP game", "rewatch this", "best of the season", "clip it", "great teamwork"]
MODES = ("ranked", "classic", "brawl")
ROOM_CAPACITY = {"ranked": 5, "classic": 10, "brawl": 10, "custom": 10}

TIER_P = tier_index("p.tier")
RANK_P = rank_score("p.tier", "p.stars")


def _today(ctx: GenContext) -> str:
    return ctx.now[:10]


def _current_season(ctx: GenContext) -> int:
    return ctx.value("SELECT id FROM seasons WHERE start_date <= ? AND end_date >= ?", _today(ctx), _today(ctx))


def _player(ctx: GenContext, sql: str, *params: Any) -> int:
    return ctx.choice(ctx.column(sql, *params), "player")


def _relation(ctx: GenContext, me: int, other: int) -> str:
    """How two players stand: 'friend', 'blocked' (either way), 'sent' (my request pending),
    'received' (their request pending) or 'free'."""
    kinds = ctx.column("SELECT kind FROM relations WHERE (player_id = ? AND other_id = ?) OR (player_id = ? AND other_id = ?)",
                       me, other, other, me)
    if "blocked" in kinds:
        return "blocked"
    if "friend" in kinds:
        return "friend"
    pending = ctx.one("SELECT id, sender_id FROM friend_requests WHERE status = 'pending' AND ((sender_id = ? AND receiver_id = ?) "
                      "OR (sender_id = ? AND receiver_id = ?))", me, other, other, me)
    if pending is None:
        return "free"
    return "sent" if pending["sender_id"] == me else "received"


def _befriend(ctx: GenContext, me: int, others: list[int], message: str) -> tuple[list[Step], list[int], bool]:
    """Steps that make `others` my friends where possible: accept their pending request, else send one
    (skipping friends, blocks either way and requests I already sent). Returns (steps, targets, any_accepted)."""
    out: list[Step] = []
    targets: list[int] = []
    accepted = False
    for other in others:
        state = _relation(ctx, me, other)
        if state == "free":
            out.append(Step("send_friend_request", {"player_id": other, "message": message}))
        elif state == "received":
            request = ctx.value("SELECT id FROM friend_requests WHERE status = 'pending' AND sender_id = ? AND receiver_id = ?", other, me)
            out.append(Step("answer_friend_request", {"request_id": request, "accept": True}))
            accepted = True
        else:
            continue
        targets.append(other)
    return out, targets, accepted


def _free_to_host(ctx: GenContext, player: int) -> bool:
    """Not in a room whose game is running (such a player cannot open another room)."""
    return not ctx.value("SELECT COUNT(*) FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = ? "
                         "AND r.status = 'in_game'", player)


def _hide(values: list[Any], *stated: Any) -> list[Any]:
    """Derived values the query must not state, minus those equal to a number the user states anyway
    (the count of "my top 4 friends" is 4 by definition)."""
    return [v for v in values if v not in stated]


def _room_name(ctx: GenContext) -> str:
    return ctx.rng.choice(ROOM_NAMES)


class MobaTemplate(Template):
    """A template that draws again (same seeded RNG, further along) when a draw finds no target,
    so that every template contributes even where the world offers few suitable players."""

    tries: ClassVar[int] = 20
    # Bulk templates draw this many tasks and keep the one with the most steps (bigger, rarer tasks).
    best_of: ClassVar[int] = 1

    def draft(self, ctx: GenContext) -> Draft:
        reason: NoTarget | None = None
        found: list[Draft] = []
        for _ in range(self.tries):
            try:
                found.append(self.attempt(ctx))
            except NoTarget as exc:
                reason = exc
            if len(found) == self.best_of:
                break
        if found:
            return max(found, key=lambda d: len(d.steps))  # the first of the largest
        assert reason is not None
        raise reason

    def attempt(self, ctx: GenContext) -> Draft:
        raise NotImplementedError


class AnswerFriendRequestsByRank(MobaTemplate):
    name = "answer_friend_requests_by_rank"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "precise_boundary_judgement")
    phrasings = (
        "Go through my pending friend requests: accept the ones from players currently ranked {tier} or higher, and reject all the others.",
        "I only want friends at {tier} rank or above. Accept every pending friend request from someone who is {tier} or higher "
        "right now ({tier} itself counts) and reject the rest of my pending requests.",
        "Handle my friend requests that are still pending: senders whose current rank is {tier} and up get accepted, "
        "everyone below {tier} gets rejected.",
    )
    level_phrasings = (
        "Go through my pending friend requests: accept the ones from players of level {level} or higher, and reject all the others.",
        "Accept every pending friend request from a player at level {level} or above (exactly {level} counts) and reject the other pending ones.",
    )
    block_phrasings = (
        "I'm getting spammed with friend requests. Accept the pending ones from players ranked {tier} or higher; reject every other "
        "pending request and block its sender.",
        "Sort out my pending friend requests: senders currently at {tier} or above ({tier} included) become friends, everyone else gets "
        "rejected and put on my blacklist.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT receiver_id FROM friend_requests WHERE status = 'pending' GROUP BY receiver_id "
                            "HAVING COUNT(*) >= 2 ORDER BY receiver_id")
        requests = ctx.rows(
            f"SELECT f.id, f.sender_id, {TIER_P} AS tier, p.level FROM friend_requests f JOIN players p ON p.id = f.sender_id "
            "WHERE f.receiver_id = ? AND f.status = 'pending' ORDER BY f.sent_at, f.id", user)
        variant = ctx.rng.choice(["tier", "tier", "level", "block"])
        by_level = variant == "level"
        key = "level" if by_level else "tier"
        values = sorted({r[key] for r in requests})
        if len(values) < 2:
            raise NoTarget("senders all alike")
        cut = ctx.rng.choice(values[1:])  # a sender sits exactly on the cut, and someone is below it
        accept = [r["id"] for r in requests if r[key] >= cut]
        answers = [Step("answer_friend_request", {"request_id": r["id"], "accept": r[key] >= cut}) for r in requests]
        if variant == "block":
            answers += [Step("block_player", {"player_id": r["sender_id"]}) for r in requests if r[key] < cut]
            query = ctx.rng.choice(self.block_phrasings).format(tier=TIERS[cut])
        elif by_level:
            query = ctx.rng.choice(self.level_phrasings).format(level=cut)
        else:
            query = self.phrase(ctx, tier=TIERS[cut])
        return Draft(user, query, answers, hidden=[len(accept), len(requests)], params={key: cut, "block": variant == "block"})


class PruneDistantFriends(MobaTemplate):
    name = "prune_distant_friends"
    best_of = 2
    capabilities = ("multi_condition_filtering", "precise_boundary_judgement", "cross_entity_cascade")
    phrasings = (
        "My friend list is too long. Remove every friend whose intimacy with me is below {n}.",
        "Unfriend everyone on my friends list with an intimacy score under {n} (a friend at exactly {n} stays).",
        "Clean up my friends: anyone I have less than {n} intimacy with should be removed.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT player_id FROM relations WHERE kind = 'friend' GROUP BY player_id HAVING COUNT(*) >= 6 ORDER BY player_id")
        friends = ctx.rows("SELECT r.other_id, r.intimacy, m.team_id FROM relations r LEFT JOIN team_members m ON m.player_id = r.other_id "
                           "WHERE r.player_id = ? AND r.kind = 'friend' ORDER BY r.intimacy, r.other_id", user)
        values = sorted({f["intimacy"] for f in friends})
        if len(values) < 4:
            raise NoTarget("few intimacy values")
        n = ctx.rng.choice(values[max(2, len(values) // 3): -1])  # a friend at exactly n is kept
        my_team = ctx.value("SELECT team_id FROM team_members WHERE player_id = ?", user)
        low = [f for f in friends if f["intimacy"] < n]
        spare_clan = my_team is not None and any(f["team_id"] == my_team for f in low)
        targets = [f["other_id"] for f in low if not (spare_clan and f["team_id"] == my_team)]
        bounded(targets, 2, 20, "friends")
        query = self.phrase(ctx, n=n)
        if spare_clan:
            query += " Keep the ones who are in my clan, though."
        return Draft(user, query, [Step("remove_friend", {"player_id": p}) for p in targets], hidden=[len(targets)],
                     params={"below": n, "spare_clan": spare_clan})


class BlockRepeatOpponents(MobaTemplate):
    name = "block_repeat_opponents"
    best_of = 2
    capabilities = ("complete_data_acquisition", "aggregation_computation", "precise_boundary_judgement", "cross_entity_cascade")
    phrasings = (
        "I keep losing to the same people. Look at every match I lost since {date} (that day included) and block each player who was "
        "on the enemy team in at least {k} of those losses.",
        "Block everyone who beat me {k} or more times in matches starting on or after {date}: go through all my losses from that day on "
        "and count how often each opponent was on the winning side against me.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        span = ctx.rng.choice([14, 21, 30, 45, 60, 90])
        start = days_ago(ctx, span)
        user = _player(ctx, "SELECT mp.player_id FROM match_players mp JOIN matches m ON m.id = mp.match_id WHERE mp.result = 'loss' "
                            "AND m.started_at >= ? GROUP BY mp.player_id HAVING COUNT(*) >= 10 ORDER BY mp.player_id", start)
        k = ctx.rng.choice([2, 2, 3, 3, 4])
        counts = ctx.rows(
            "SELECT o.player_id, COUNT(*) AS n FROM match_players mp JOIN matches m ON m.id = mp.match_id "
            "JOIN match_players o ON o.match_id = mp.match_id AND o.side != mp.side WHERE mp.player_id = ? AND mp.result = 'loss' "
            "AND m.started_at >= ? GROUP BY o.player_id ORDER BY o.player_id", user, start)
        if not any(c["n"] == k for c in counts):
            raise NoTarget("nobody exactly at the threshold")
        blocked = set(ctx.column("SELECT other_id FROM relations WHERE player_id = ? AND kind = 'blocked'", user))
        targets = [c["player_id"] for c in counts if c["n"] >= k and c["player_id"] not in blocked]
        bounded(targets, 2, 30, "opponents")
        query = self.phrase(ctx, date=pretty_day(start), k=k)
        if any(c["n"] >= k and c["player_id"] in blocked for c in counts):
            query += " Some may already be on my blacklist; that's fine."
        if any(_relation(ctx, user, p) == "friend" for p in targets):
            query += " Friends are no exception."
        return Draft(user, query, [Step("block_player", {"player_id": p}) for p in targets], hidden=_hide([len(targets)], k),
                     params={"since": start, "k": k})


class FavouriteStandoutMatches(MobaTemplate):
    name = "favourite_standout_matches"
    best_of = 2
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "precise_boundary_judgement")
    mvp_phrasings = (
        "Save to my favourites every {mode}match I played from {start} through {end} in which I was MVP, with the note '{note}'. "
        "Leave alone the ones already saved.",
        "Favourite all my {mode}games between {start} and {end} (both days included) where I got MVP; note '{note}' on each. "
        "Skip any that are already favourites.",
    )
    kills_phrasings = (
        "Favourite every match I won from {start} through {end} where I had at least {kills} kills, with the note '{note}'. "
        "Leave alone the ones already saved.",
        "Save my big games: all wins between {start} and {end} (both days included) with {kills} or more kills go to my favourites "
        "with the note '{note}', unless they're already there.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT player_id FROM match_players GROUP BY player_id HAVING COUNT(*) >= 25 ORDER BY player_id")
        note = ctx.rng.choice(MATCH_NOTES)
        saved = set(ctx.column("SELECT match_id FROM favourite_matches WHERE player_id = ?", user))
        if ctx.rng.random() < 0.5:
            mode = ctx.rng.choice([*MODES, None])
            matches = ctx.rows("SELECT m.id, substr(m.started_at, 1, 10) AS day FROM match_players mp JOIN matches m ON m.id = mp.match_id "
                               "WHERE mp.player_id = ? AND m.mode = coalesce(?, m.mode) AND mp.is_mvp = 1 ORDER BY m.started_at, m.id",
                               user, mode)
            values: dict[str, Any] = {"mode": f"{mode} " if mode else ""}
            phrasings = self.mvp_phrasings
        else:
            wins = ctx.rows("SELECT m.id, substr(m.started_at, 1, 10) AS day, mp.kills FROM match_players mp JOIN matches m "
                            "ON m.id = mp.match_id WHERE mp.player_id = ? AND mp.result = 'win' ORDER BY m.started_at, m.id", user)
            kills = sorted({w["kills"] for w in wins})
            if len(kills) < 4:
                raise NoTarget("few kill counts")
            cut = ctx.rng.choice(kills[len(kills) // 4: len(kills) // 2 + 1])  # a real kill count: "at least" includes it
            matches = [w for w in wins if w["kills"] >= cut]
            values = {"kills": cut}
            phrasings = self.kills_phrasings
        fresh = [m for m in matches if m["id"] not in saved]
        if len(fresh) < 3:
            raise NoTarget("few matches")
        # Both ends are days of matches that count, so "through" and "from" matter.
        if ctx.rng.random() < 0.4:
            i, j = 0, len(fresh) - 1
        else:
            i = ctx.rng.randrange(0, max(1, len(fresh) // 3))
            j = ctx.rng.randrange(max(i + 2, 2 * len(fresh) // 3), len(fresh))
        start, end = fresh[i]["day"], fresh[j]["day"]
        targets = [m["id"] for m in fresh if start <= m["day"] <= end]
        bounded(targets, 3, 70, "matches")
        query = ctx.rng.choice(phrasings).format(start=pretty_day(start), end=pretty_day(end), note=note, **values)
        return Draft(user, query, [Step("favourite_match", {"match_id": m, "note": note}) for m in targets],
                     hidden=_hide([len(targets)], *values.values()), params={"start": start, "end": end, **values})


class TidyFavouriteMatches(MobaTemplate):
    name = "tidy_favourite_matches"
    capabilities = ("aggregation_computation", "multi_condition_filtering", "complete_data_acquisition")
    phrasings = (
        "Tidy my favourite matches: unfavourite every saved match that I lost. Then make sure my {k} highest-scoring wins of the "
        "current season are all in my favourites; add the missing ones with the note '{note}'.",
        "I only want wins in my saved matches. Remove the losses from my favourites, and favourite whichever of my top {k} wins this "
        "season (by my score) aren't saved yet, noting '{note}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        user = _player(ctx, "SELECT f.player_id FROM favourite_matches f JOIN match_players mp ON mp.match_id = f.match_id "
                            "AND mp.player_id = f.player_id WHERE mp.result = 'loss' GROUP BY f.player_id ORDER BY f.player_id")
        k = ctx.rng.choice([4, 5, 6, 8, 10])
        ranked = [(r["id"], r["score"]) for r in ctx.rows(
            "SELECT m.id, mp.score FROM match_players mp JOIN matches m ON m.id = mp.match_id WHERE mp.player_id = ? "
            "AND mp.result = 'win' AND m.season_id = ? ORDER BY mp.score DESC, m.id", user, season)]
        top = no_tie_at(ranked, k)
        if len(ranked) > k and ranked[0][1] == ranked[-1][1]:
            raise NoTarget("flat scores")
        saved = set(ctx.column("SELECT match_id FROM favourite_matches WHERE player_id = ?", user))
        losses = ctx.column("SELECT f.match_id FROM favourite_matches f JOIN match_players mp ON mp.match_id = f.match_id "
                            "AND mp.player_id = f.player_id WHERE f.player_id = ? AND mp.result = 'loss' ORDER BY f.match_id", user)
        add = [m for m in top if m not in saved]
        if len(losses) + len(add) < 3 or not add:
            raise NoTarget("little to do")
        note = ctx.rng.choice(MATCH_NOTES)
        return Draft(user, self.phrase(ctx, k=k, note=note),
                     steps([Step("unfavourite_match", {"match_id": m}) for m in losses],
                           [Step("favourite_match", {"match_id": m, "note": note}) for m in add]),
                     hidden=_hide([len(losses), len(add)], k), params={"k": k})


class BuyHeroesOnBudget(MobaTemplate):
    name = "buy_heroes_on_budget"
    best_of = 2
    capabilities = ("aggregation_computation", "cross_step_dependency", "multi_condition_filtering", "precise_boundary_judgement")
    phrasings = (
        "I want to try more {roles}. Buy {role} heroes I don't own yet (main or secondary role; released shop heroes only) "
        "with {currency}, cheapest first (alphabetically when prices are equal), and stop before the first one that would take my "
        "{currency} below {reserve}.",
        "Spend {currency} on {role} heroes (main or secondary role) that I don't have: start with the cheapest released shop hero, "
        "going by name among equal prices, and keep buying in that order as long as my {unit} balance stays at {reserve} or more.",
    )
    all_in_phrasings = (
        "I want to try more {roles}. Buy {role} heroes I don't own yet (main or secondary role; released shop heroes only) "
        "with {currency}, cheapest first (alphabetically when prices are equal), until the next one costs more than I have left.",
        "Spend my {currency} on {role} heroes (main or secondary role) I don't have: cheapest released shop hero first, going by name "
        "among equal prices, then the next, and stop at the first one I can no longer afford.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        role = ctx.rng.choice(ROLES)
        currency = ctx.rng.choice(["coins", "coins", "diamonds"])
        column = "price_coins" if currency == "coins" else "price_diamonds"
        floor = 25000 if currency == "coins" else 900
        user = _player(ctx, f"SELECT id FROM players WHERE {currency} >= ? ORDER BY id", floor)
        balance = ctx.value(f"SELECT {currency} FROM players WHERE id = ?", user)
        heroes = ctx.rows(
            f"SELECT id, {column} AS price FROM heroes WHERE availability = 'shop' AND release_date <= ? AND (role = ? OR secondary_role = ?) "
            "AND id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = ?) ORDER BY price, name COLLATE NOCASE",
            _today(ctx), role, role, user)
        steps_: list[int] = []
        step = 1000 if currency == "coins" else 100
        reserve = ctx.rng.choice([0, 0, 1, 2, 5, 10]) * step
        left = balance - reserve
        if left < 0:
            raise NoTarget("reserve above balance")
        spent = 0
        for hero in heroes:
            if spent + hero["price"] > left:
                break
            spent += hero["price"]
            steps_.append(hero["id"])
        bounded(steps_, 2, 14, "heroes")
        m = len(steps_)
        phrasings = self.phrasings if reserve else self.all_in_phrasings
        query = ctx.rng.choice(phrasings).format(role=role, roles="marksmen" if role == "marksman" else f"{role}s", currency=currency,
                                                 unit=currency[:-1], reserve=reserve)
        return Draft(user, query, [Step("buy_hero", {"hero_id": h, "currency": currency}) for h in steps_],
                     hidden=[m, spent, balance], params={"role": role, "currency": currency, "reserve": reserve})


class BuyFriendsSignatureHeroes(MobaTemplate):
    name = "buy_friends_signature_heroes"
    capabilities = ("cross_entity_cascade", "cross_step_dependency", "complete_data_acquisition", "aggregation_computation")
    phrasings = (
        "Take my {k} closest friends (highest intimacy). For each of them, find the hero they've practised most (top of their profile) "
        "and buy it for me with {currency} if the shop sells it and I don't own it yet.",
        "I want to play what my best friends play. Look at my top {k} friends by intimacy, and buy me each one's most practised hero "
        "with {currency}, skipping heroes I already have and ones the shop doesn't sell.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT player_id FROM relations WHERE kind = 'friend' GROUP BY player_id HAVING COUNT(*) >= 5 ORDER BY player_id")
        k = ctx.rng.choice([3, 4, 5, 6])
        ranked = [(r["other_id"], r["intimacy"]) for r in ctx.rows(
            "SELECT other_id, intimacy FROM relations WHERE player_id = ? AND kind = 'friend' ORDER BY intimacy DESC, other_id", user)]
        friends = no_tie_at(ranked, k)
        heroes: list[int] = []
        for friend in friends:
            top = ctx.rows("SELECT hero_id, proficiency FROM player_heroes WHERE player_id = ? ORDER BY proficiency DESC, hero_id LIMIT 2", friend)
            if len(top) == 2 and top[0]["proficiency"] == top[1]["proficiency"]:
                raise NoTarget("two most practised heroes")
            if top and top[0]["hero_id"] not in heroes:
                heroes.append(top[0]["hero_id"])
        buy = ctx.rows(
            f"SELECT id, price_coins, price_diamonds FROM heroes WHERE id IN ({','.join('?' * len(heroes))}) AND availability = 'shop' "
            "AND release_date <= ? AND id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = ?) ORDER BY id",
            *heroes, _today(ctx), user)
        bounded(buy, 1, 6, "heroes")
        wallet = ctx.one("SELECT coins, diamonds FROM players WHERE id = ?", user) or {}
        affordable = [c for c in ("coins", "diamonds") if sum(h[f"price_{c}"] for h in buy) <= wallet[c]]
        currency = ctx.choice(affordable, "currency that covers it")
        order = [h for h in heroes if h in {b["id"] for b in buy}]
        return Draft(user, self.phrase(ctx, k=k, currency=currency),
                     [Step("buy_hero", {"hero_id": h, "currency": currency}) for h in order],
                     hidden=_hide([len(order)], k), params={"k": k, "currency": currency})


class HostRoomForFriends(MobaTemplate):
    name = "host_room_for_friends"
    capabilities = ("cross_step_dependency", "multi_condition_filtering", "precise_boundary_judgement")
    phrasings = (
        "Open a {mode} room called '{name}' and invite every friend of mine who is currently ranked {tier} or higher "
        "and isn't in a match right now.",
        "Create a {mode} room named '{name}', then send an invitation to each of my friends at {tier} rank or above ({tier} counts) "
        "who is not currently in a match.",
    )
    ranked_phrasings = (
        "Open a ranked room called '{name}' and invite my 4 highest-ranked friends (by tier, then stars).",
        "I want to climb with my strongest friends: create a ranked room '{name}' and invite the 4 friends with the best current rank "
        "(tier first, then stars).",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT player_id FROM relations WHERE kind = 'friend' GROUP BY player_id HAVING COUNT(*) >= 5 ORDER BY player_id")
        if not _free_to_host(ctx, user):
            raise NoTarget("in a running game")
        name = _room_name(ctx)
        friends = ctx.rows(f"SELECT p.id, {TIER_P} AS tier, {RANK_P} AS rank, p.status FROM relations r JOIN players p ON p.id = r.other_id "
                           "WHERE r.player_id = ? AND r.kind = 'friend' ORDER BY rank DESC, p.id", user)
        mode = ctx.rng.choice(["ranked", "classic", "brawl", "classic"])
        if mode == "ranked":
            invitees = no_tie_at([(f["id"], f["rank"]) for f in friends], 4)
            query = ctx.rng.choice(self.ranked_phrasings).format(name=name)
            params: dict[str, Any] = {"mode": mode}
            hidden: list[Any] = []
        else:
            free = [f for f in friends if f["status"] != "in_match"]
            tiers = sorted({f["tier"] for f in free})
            if len(tiers) < 2:
                raise NoTarget("friends all alike")
            cut = ctx.rng.choice(tiers[1:])
            invitees = [f["id"] for f in free if f["tier"] >= cut]
            bounded(invitees, 2, 9, "friends")
            query = self.phrase(ctx, mode=mode, name=name, tier=TIERS[cut])
            params = {"mode": mode, "tier": TIERS[cut]}
            hidden = [len(invitees)]
        if ctx.value("SELECT COUNT(*) FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = ? AND r.status = 'open'", user):
            query += " It's fine to leave the room I'm in now."
        return Draft(user, query,
                     steps(Step("create_room", {"name": name, "mode": mode}),
                           [Step("invite_to_room", {"room_id": ref(0, "room_id"), "player_id": p}) for p in invitees]),
                     hidden=hidden, params=params)


class ClanPracticeRoom(MobaTemplate):
    name = "clan_practice_room"
    capabilities = ("aggregation_computation", "cross_step_dependency", "cross_entity_cascade")
    phrasings = (
        "Set up a clan practice: open a custom room '{name}' with password {pw}, exactly big enough for me plus every member of my "
        "clan who isn't in a match right now, and invite all of those clanmates.",
        "Create a password-protected custom room called '{name}' (password {pw}). Its capacity should be the number of my clanmates "
        "who are not currently in a match, plus one for me. Then invite each of them.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT m.player_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.member_count >= 3 "
                            "ORDER BY m.player_id")
        if not _free_to_host(ctx, user):
            raise NoTarget("in a running game")
        team = ctx.value("SELECT team_id FROM team_members WHERE player_id = ?", user)
        mates = ctx.column("SELECT p.id FROM team_members m JOIN players p ON p.id = m.player_id WHERE m.team_id = ? AND p.id != ? "
                           "AND p.status != 'in_match' ORDER BY p.id", team, user)
        bounded(mates, 2, 9, "clanmates")
        if any(_relation(ctx, user, p) == "blocked" for p in mates):
            raise NoTarget("a block inside the clan")
        name, pw = _room_name(ctx), ctx.rng.choice(PASSWORDS)
        query = self.phrase(ctx, name=name, pw=pw)
        return Draft(user, query,
                     steps(Step("create_room", {"name": name, "mode": "custom", "capacity": len(mates) + 1, "password": pw}),
                           [Step("invite_to_room", {"room_id": ref(0, "room_id"), "player_id": p}) for p in mates]),
                     hidden=[len(mates), len(mates) + 1], params={"team_id": team})


class ReviewClanApplications(MobaTemplate):
    name = "review_clan_applications"
    best_of = 2
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "precise_boundary_judgement", "cross_entity_cascade")
    level_phrasings = (
        "Review the pending applications to my clan, oldest first: approve applicants of level {level} or higher who aren't in another "
        "clan, as long as we still have free places. Reject every other pending application, including any we can't take.",
        "Go through my clan's pending applications in the order they came in. Anyone at level {level} or above who is not already in a "
        "clan gets approved while there is room; everything else that is pending gets rejected.",
    )
    tier_phrasings = (
        "Review the pending applications to my clan, oldest first: approve applicants currently ranked {tier} or higher who aren't in "
        "another clan, as long as we still have free places. Reject every other pending application, including any we can't take.",
        "Go through my clan's pending applications in the order they came in. Anyone ranked {tier} or above ({tier} counts) who is not "
        "already in a clan gets approved while there is room; everything else that is pending gets rejected.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        officer = ctx.choice(ctx.rows(
            "SELECT m.player_id, m.team_id FROM team_members m WHERE m.role IN ('leader', 'vice_leader') AND "
            "(SELECT COUNT(*) FROM team_applications a WHERE a.team_id = m.team_id AND a.status = 'pending') >= 2 "
            "ORDER BY m.player_id"), "clan officer")
        team = ctx.one("SELECT member_count, capacity FROM teams WHERE id = ?", officer["team_id"]) or {}
        apps = ctx.rows(
            f"SELECT a.id, p.level, {TIER_P} AS tier, (SELECT COUNT(*) FROM team_members m WHERE m.player_id = a.player_id) AS in_clan "
            "FROM team_applications a JOIN players p ON p.id = a.player_id WHERE a.team_id = ? AND a.status = 'pending' "
            "ORDER BY a.applied_at, a.id", officer["team_id"])
        key = ctx.rng.choice(["level", "tier"])
        free = sorted({a[key] for a in apps if not a["in_clan"]})
        cut = ctx.rng.choice(free[1:] or free) if free else ctx.rng.choice(sorted({a[key] for a in apps}))
        places = team["capacity"] - team["member_count"]
        out, approved = [], 0
        for a in apps:
            ok = not a["in_clan"] and a[key] >= cut and approved < places
            approved += ok
            out.append(Step("approve_team_application" if ok else "reject_team_application", {"application_id": a["id"]}))
        if not approved:  # a full clan, or nobody qualifies: the filter would never be tested
            raise NoTarget("nobody to approve")
        if key == "level":
            query = ctx.rng.choice(self.level_phrasings).format(level=cut)
        else:
            query = ctx.rng.choice(self.tier_phrasings).format(tier=TIERS[cut])
        return Draft(officer["player_id"], query, out, hidden=[approved, len(apps), places],
                     params={"team_id": officer["team_id"], key: cut})


class BefriendClanmates(MobaTemplate):
    name = "befriend_clanmates"
    best_of = 2
    capabilities = ("cross_entity_cascade", "multi_condition_filtering", "complete_data_acquisition")
    phrasings = (
        "Send a friend request saying '{msg}' to everyone in my clan who isn't my friend yet. If one of them has already sent me a "
        "request, accept it instead. Skip anyone I've already sent a request to and anyone with a block between us.",
        "I want to be friends with my whole clan. For each clanmate who isn't on my friend list: accept their pending request if "
        "they sent me one, otherwise send them a request with the message '{msg}' (unless mine is already pending or one of us "
        "blocked the other).",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _player(ctx, "SELECT m.player_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.member_count >= 4 "
                            "ORDER BY m.player_id")
        team = ctx.value("SELECT team_id FROM team_members WHERE player_id = ?", user)
        mates = ctx.column("SELECT player_id FROM team_members WHERE team_id = ? AND player_id != ? ORDER BY joined_at, player_id", team, user)
        msg = ctx.rng.choice(CLAN_MESSAGES)
        out, targets, _ = _befriend(ctx, user, mates, msg)
        bounded(targets, 2, 40, "clanmates")
        return Draft(user, self.phrase(ctx, msg=msg), out, hidden=[len(targets)], params={"team_id": team})


class BefriendFrequentTeammates(MobaTemplate):
    name = "befriend_frequent_teammates"
    best_of = 2
    capabilities = ("complete_data_acquisition", "aggregation_computation", "cross_step_dependency", "precise_boundary_judgement")
    phrasings = (
        "Find everyone who played on my side in at least {k} of my matches since {date} (that day included) and add them as friends "
        "with the message '{msg}'. If one of them already sent me a request, accept it; skip my friends, players with a block "
        "between us, and ones I've already sent a request to.",
        "Go through all my matches from {date} on and count how often each player was on my team. Everyone who was my teammate "
        "{k} or more times should become my friend: accept their pending request if there is one, otherwise send a request "
        "('{msg}'). Leave out existing friends, blocks either way, and requests I already sent.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        span = ctx.rng.choice([14, 21, 30, 45, 60])
        start = days_ago(ctx, span)
        user = _player(ctx, "SELECT mp.player_id FROM match_players mp JOIN matches m ON m.id = mp.match_id WHERE m.started_at >= ? "
                            "GROUP BY mp.player_id HAVING COUNT(*) BETWEEN 12 AND 80 ORDER BY mp.player_id", start)
        k = ctx.rng.choice([2, 2, 3, 4])
        counts = ctx.rows(
            "SELECT o.player_id, COUNT(*) AS n FROM match_players mp JOIN matches m ON m.id = mp.match_id "
            "JOIN match_players o ON o.match_id = mp.match_id AND o.side = mp.side AND o.player_id != mp.player_id "
            "WHERE mp.player_id = ? AND m.started_at >= ? GROUP BY o.player_id ORDER BY MIN(m.started_at), o.player_id", user, start)
        if not any(c["n"] == k for c in counts):
            raise NoTarget("nobody exactly at the threshold")
        msg = ctx.rng.choice(FRIEND_MESSAGES)
        out, targets, _ = _befriend(ctx, user, [c["player_id"] for c in counts if c["n"] >= k], msg)
        bounded(targets, 3, 60, "teammates")
        return Draft(user, self.phrase(ctx, k=k, date=pretty_day(start), msg=msg), out, hidden=_hide([len(targets)], k),
                     params={"since": start, "k": k})


class LeaderboardFriendRequests(MobaTemplate):
    name = "leaderboard_friend_requests"
    capabilities = ("aggregation_computation", "multi_condition_filtering", "cross_step_dependency")
    phrasings = (
        "I want strong friends from home. On {season}'s leaderboard for my region, send a friend request ('{msg}') to the top {n} players "
        "I can still add: skip me, my friends, anyone with a block between us and anyone with a request already pending between us.",
        "Go down my region's leaderboard for {season} from the top and send friend requests with the message '{msg}' until {n} have "
        "gone out. Don't count players who are already my friends, who have a block with me either way, or with whom a friend request "
        "is already pending.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        current = _current_season(ctx)
        season, label = ctx.rng.choice([(current, "this season"), (current - 1, "last season")])
        user = _player(ctx, "SELECT id FROM players ORDER BY id")
        region = ctx.value("SELECT region FROM players WHERE id = ?", user)
        board = ctx.column(
            f"SELECT r.player_id FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE r.season_id = ? AND p.region = ? "
            f"ORDER BY {rank_score('r.tier', 'r.stars')} DESC, r.ranked_wins DESC, r.player_id", season, region)
        n = ctx.rng.choice([3, 4, 5, 6, 8, 10])
        msg = ctx.rng.choice(FRIEND_MESSAGES)
        targets: list[int] = []
        skipped = 0
        for other in board:
            if len(targets) == n:
                break
            if other != user and _relation(ctx, user, other) == "free":
                targets.append(other)
            else:
                skipped += 1
        if len(targets) < n or not skipped:
            raise NoTarget("short board or nothing to skip")
        return Draft(user, self.phrase(ctx, season=label, n=n, msg=msg),
                     [Step("send_friend_request", {"player_id": p, "message": msg}) for p in targets],
                     params={"season_id": season, "n": n})


class ReopenRoom(MobaTemplate):
    name = "reopen_room"
    capabilities = ("cross_step_dependency", "cross_entity_cascade", "complete_data_acquisition")
    phrasings = (
        "Close the room I currently own and open a new {mode} room called '{name}' instead. Invite everyone who was in my old room, plus "
        "everyone who had a pending invitation to it.",
        "I want to switch my room to {mode}: dissolve my current room, create a {mode} room named '{name}', and invite all the "
        "people from the old room (members and those still invited) to the new one.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        room = ctx.choice(ctx.rows("SELECT id, owner_id, mode FROM rooms WHERE status = 'open' ORDER BY id"), "open room")
        user = room["owner_id"]
        members = ctx.column("SELECT player_id FROM room_members WHERE room_id = ? AND player_id != ? ORDER BY joined_at, player_id",
                             room["id"], user)
        invited = ctx.column("SELECT invitee_id FROM room_invitations WHERE room_id = ? AND status = 'pending' ORDER BY sent_at, id",
                             room["id"])
        people = members + [p for p in invited if p not in members and p != user]
        bounded(people, 2, 15, "people")
        if any(_relation(ctx, user, p) == "blocked" for p in people):
            raise NoTarget("a block in the way")
        modes = [m for m in ROOM_CAPACITY if m != room["mode"] and ROOM_CAPACITY[m] > len(people)]
        mode = ctx.choice(modes, "mode")
        name = _room_name(ctx)
        return Draft(user, self.phrase(ctx, mode=mode, name=name),
                     steps(Step("dissolve_room", {"room_id": room["id"]}), Step("create_room", {"name": name, "mode": mode}),
                           [Step("invite_to_room", {"room_id": ref(1, "room_id"), "player_id": p}) for p in people]),
                     hidden=[len(people)], params={"old_room": room["id"], "mode": mode})


class FavouriteSharedMatches(MobaTemplate):
    name = "favourite_shared_matches"
    best_of = 2
    capabilities = ("complete_data_acquisition", "cross_entity_cascade", "multi_condition_filtering")
    with_phrasings = (
        "Favourite every match of the current season in which {nick} and I played on the same team, with the note '{note}'. "
        "Skip the ones already in my favourites.",
        "{nick} and I have been duoing a lot. Save to my favourites all matches this season where we were teammates (same side), "
        "noting '{note}', except those I've already saved.",
    )
    against_phrasings = (
        "Favourite every match of the current season that I won with {nick} on the enemy team, with the note '{note}'. "
        "Skip the ones already in my favourites.",
        "Revenge collection: save to my favourites all my wins this season where {nick} played against me, noting '{note}' "
        "(leave the ones already saved alone).",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        together = ctx.rng.random() < 0.6
        side = "b.side = a.side" if together else "b.side != a.side AND a.result = 'win'"
        pair = ctx.choice(ctx.rows(
            "SELECT a.player_id AS me, b.player_id AS other FROM match_players a JOIN match_players b ON b.match_id = a.match_id "
            f"AND b.player_id != a.player_id AND {side} JOIN matches m ON m.id = a.match_id WHERE m.season_id = ? "
            "GROUP BY a.player_id, b.player_id HAVING COUNT(*) >= 6 ORDER BY a.player_id, b.player_id", season), "pair")
        user, other = pair["me"], pair["other"]
        targets = ctx.column(
            "SELECT a.match_id FROM match_players a JOIN match_players b ON b.match_id = a.match_id AND b.player_id = ? "
            f"AND {side} JOIN matches m ON m.id = a.match_id WHERE a.player_id = ? AND m.season_id = ? AND a.match_id NOT IN "
            "(SELECT match_id FROM favourite_matches WHERE player_id = ?) ORDER BY m.started_at, a.match_id", other, user, season, user)
        bounded(targets, 3, 70, "matches")
        nick = ctx.value("SELECT nickname FROM players WHERE id = ?", other)
        note = ctx.rng.choice(MATCH_NOTES)
        query = ctx.rng.choice(self.with_phrasings if together else self.against_phrasings).format(nick=nick, note=note)
        return Draft(user, query, [Step("favourite_match", {"match_id": m, "note": note}) for m in targets], hidden=[len(targets)],
                     params={"other": other, "together": together})


TEMPLATES = [
    AnswerFriendRequestsByRank, PruneDistantFriends, BlockRepeatOpponents, FavouriteStandoutMatches, TidyFavouriteMatches,
    BuyHeroesOnBudget, BuyFriendsSignatureHeroes, HostRoomForFriends, ClanPracticeRoom, ReviewClanApplications,
    BefriendClanmates, BefriendFrequentTeammates, LeaderboardFriendRequests, ReopenRoom, FavouriteSharedMatches,
]
