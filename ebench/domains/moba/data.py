"""Seeded row generators for the MOBA world, one per table.

Generators draw parents from rows that exist (ctx.ids / ctx.rows) and aim for plausible data:
players have a hidden skill that shapes their rank across seasons and favourite roles that
shape the heroes they own and play; matchmaking keeps most matches within one region; a player
only plays heroes they owned when the match started. Aggregates (hero counts, kills per side,
ranked records) are left at zero or approximate: the repair rules in checks.py settle them.
"""

from __future__ import annotations

import math
import sqlite3
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from itertools import accumulate
from random import Random

from ...engine.fill import FillContext, Row, derive_seed
from ...engine.moments import DAY_FMT, between, clock, recent, ts
from . import vocabulary as V
from .schema import ROOM_CAPACITY

SEASON_ONE = datetime(2023, 9, 7)
SEASON_DAYS = 84
SEASON_COUNT = 15  # season 14 contains the clock, season 15 is announced
THEMES = [
    "Dawn of Embers",
    "Jade Tide",
    "Frost Crown",
    "Lantern Festival",
    "Storm of Blades",
    "Sunken Court",
    "Crimson Moon",
    "Azure Dragon",
    "Hollow Star",
    "Iron Lotus",
    "Veiled Isles",
    "Amber Wastes",
    "Thunder Gate",
    "Celestial Duel",
    "Rising Phoenix",
]
PLAYER_COUNT = 170
MATCH_COUNT = 1520


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text)  # "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS"


def season_bounds(number: int) -> tuple[datetime, datetime]:
    """First and last day of season `number` (1-based)."""
    start = SEASON_ONE + timedelta(days=SEASON_DAYS * (number - 1))
    return start, start + timedelta(days=SEASON_DAYS - 1)


def season_of(moment: datetime) -> int:
    return min(SEASON_COUNT, max(1, (moment - SEASON_ONE).days // SEASON_DAYS + 1))


def _profiles(ctx: FillContext) -> dict[int, tuple[float, list[str], float]]:
    """Each player's hidden skill (0-7.9, a tier scale), two favourite roles and activity
    weight, from a stream of its own so every table sees the same players."""
    rng = Random(derive_seed(ctx.seed, "player-profiles"))
    out = {}
    for pid in range(1, PLAYER_COUNT + 1):
        skill = min(7.9, max(0.0, rng.gauss(3.6, 1.7)))
        roles = rng.sample(V.ROLES, 2)
        activity = math.exp(rng.gauss(0, 0.8))
        out[pid] = (skill, roles, activity)
    return out


def season_rank(seed: int, player_id: int, season: int, skill: float) -> tuple[str, int, str, int]:
    """(tier, stars, peak tier, peak stars) of a player in a season; deterministic, shared by
    the players table (current rank) and season_ranks."""
    rng = Random(derive_seed(seed, "rank", str(player_id), str(season)))
    level = min(7.99, max(0.0, skill + rng.gauss(0, 0.6) - (0.4 if season < 8 else 0)))
    index = int(level)
    stars = rng.randint(0, 40) if index == 7 else rng.randint(0, V.STARS_PER_TIER - 1)
    peak_index = min(7, index + (1 if rng.random() < 0.3 else 0))
    if peak_index == index:
        peak_stars = stars + (rng.randint(0, 6) if index == 7 else rng.randint(0, V.STARS_PER_TIER - 1 - stars))
    else:
        peak_stars = rng.randint(0, 12) if peak_index == 7 else rng.randint(0, V.STARS_PER_TIER - 1)
    return V.TIERS[index], stars, V.TIERS[peak_index], peak_stars


# -- catalogue -----------------------------------------------------------------------------


def seasons(ctx: FillContext) -> Iterable[Row]:
    for n in range(1, SEASON_COUNT + 1):
        start, end = season_bounds(n)
        theme = THEMES[n - 1]
        yield {
            "id": n,
            "name": f"S{n} {theme}",
            "number": n,
            "start_date": start.strftime(DAY_FMT),
            "end_date": end.strftime(DAY_FMT),
            "theme": theme,
        }


def heroes(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    titles: set[str] = set()
    upcoming_days = iter([14, 36])
    for i, (name, role, secondary) in enumerate(V.HEROES, start=1):
        if name in V.STARTER_HEROES:
            availability, released = "starter", datetime(2019, 1, 15)
        else:
            availability = "event" if name in V.EVENT_HEROES else "shop"
            # The roster grows over the years: later ids are newer heroes.
            released = datetime(2019, 1, 15) + timedelta(days=int((i / len(V.HEROES)) ** 0.9 * 2750) + rng.randint(-40, 40))
            released = min(released, now - timedelta(days=20))
        if name in V.UPCOMING_HEROES:
            released = now + timedelta(days=next(upcoming_days))
        while True:
            word = rng.choice(V.TITLE_WORDS[role])
            title = f"{word} of {rng.choice(V.TITLE_PLACES)}"
            if title not in titles:
                break
        titles.add(title)
        age_years = (now - released).days / 365
        coins = diamonds = None
        if availability == "shop":
            coins = 18888 if age_years < 1 else 13888 if age_years < 3 else rng.choice([5888, 8888])
            diamonds = {18888: 688, 13888: 588, 8888: 388, 5888: 288}[coins]
        difficulty = rng.choices(
            ["easy", "normal", "hard"],
            weights=[1, 3, 4] if role in ("assassin", "mage") else [4, 4, 1] if role in ("tank", "support") else [2, 4, 2],
        )[0]
        lore = rng.choice(V.HERO_LORE).format(word=title.split(" of ")[0].lower(), place=title.split(" of ", 1)[1])
        yield {
            "id": i,
            "name": name,
            "title": title,
            "role": role,
            "secondary_role": secondary,
            "lane": rng.choice(V.ROLE_LANES[role]),
            "difficulty": difficulty,
            "availability": availability,
            "price_coins": coins,
            "price_diamonds": diamonds,
            "release_date": released.strftime(DAY_FMT),
            "lore": lore,
            "owner_count": 0,
        }


# -- players -------------------------------------------------------------------------------


def _nickname(ctx: FillContext, rng: Random, region: str) -> str:
    roll = rng.random()
    if roll < 0.35:
        name = f"{rng.choice(V.NICK_PREFIXES)}{rng.choice(V.NICK_WORDS)}{rng.choice(V.NICK_SUFFIXES)}"
    elif roll < 0.75:
        locale = rng.choice(V.REGION_LOCALES[region])
        first = ctx.faker[locale].first_name().replace(" ", "")
        name = (
            f"{first}{rng.choice(V.NICK_WORDS)}"
            if rng.random() < 0.5
            else f"{rng.choice(V.NICK_WORDS)}{first}{rng.choice(V.NICK_SUFFIXES)}"
        )
    else:
        name = (
            f"{rng.choice(V.NICK_WORDS)}{rng.choice(['', '_', '.'])}{ctx.faker['en_US'].word().capitalize()}{rng.choice(V.NICK_SUFFIXES)}"
        )
    return name[:24]


def players(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    profiles = _profiles(ctx)
    seen: set[str] = set()
    current = season_of(now)
    for pid in range(1, PLAYER_COUNT + 1):
        region = rng.choices(V.REGIONS, weights=V.REGION_WEIGHTS)[0]
        nickname = _nickname(ctx, rng, region)
        while nickname.lower() in seen or len(nickname) < 2:
            nickname = _nickname(ctx, rng, region)[:21] + str(rng.randint(10, 999))
        seen.add(nickname.lower())
        roll = rng.random()
        if roll < 0.06:  # newcomers of the last weeks
            created = between(rng, now - timedelta(days=40), now - timedelta(days=3))
        elif roll < 0.25:
            created = between(rng, datetime(2025, 6, 1), now - timedelta(days=40))
        else:
            created = between(rng, datetime(2019, 3, 1), datetime(2025, 6, 1))
        age_days = (now - created).days
        online = rng.random() < 0.3
        last_login = between(rng, now - timedelta(hours=5), now) if online else recent(rng, now, created, 14, 0.7)
        skill, _, activity = profiles[pid]
        tier, stars, _, _ = season_rank(ctx.seed, pid, current, skill)
        coins = int(math.exp(rng.gauss(9.4, 1.2))) if rng.random() > 0.1 else rng.randint(0, 2500)
        diamonds = int(math.exp(rng.gauss(5.5, 1.3))) if rng.random() > 0.15 else rng.randint(0, 90)
        yield {
            "id": pid,
            "nickname": nickname,
            "level": max(1, min(60, int(4 + age_days / 30 * activity**0.3 + rng.gauss(0, 3)))),
            "tier": tier,
            "stars": stars,
            "region": region,
            "server": rng.choice(V.SERVERS[region]),
            "coins": min(coins, 250000),
            "diamonds": min(diamonds, 20000),
            "created_at": ts(created),
            "last_login": ts(max(last_login, created)),
            "status": "online" if online else "offline",
            "signature": rng.choice(V.SIGNATURES),
            "hero_count": 0,
            "total_matches": 0,
            "total_wins": 0,
            "mvp_count": 0,
        }


def player_heroes(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    profiles = _profiles(ctx)
    hero_rows = ctx.rows("heroes", "id, name, role, availability, price_coins, price_diamonds, release_date")
    starters = [h for h in hero_rows if h["availability"] == "starter"]
    others = [h for h in hero_rows if h["availability"] != "starter" and h["release_date"] <= ctx.now[:10]]
    for player in ctx.rows("players", "id, created_at"):
        created = _parse(player["created_at"])
        _, roles, activity = profiles[player["id"]]
        for hero in starters:
            yield {
                "player_id": player["id"],
                "hero_id": hero["id"],
                "acquired_at": ts(created),
                "acquired_via": "starter",
                "currency": None,
                "price_paid": None,
                "proficiency": rng.randint(0, 400),
                "matches_played": 0,
                "wins": 0,
            }
        age = (now - created).days
        n = max(1, min(len(others), int(rng.gauss(4 + min(age, 1500) / 80, 5) * activity**0.3)))
        weights = [5 if h["role"] in roles else 1 for h in others]
        chosen: dict[int, sqlite3.Row] = {}
        while len(chosen) < n:
            pick = rng.choices(others, weights=weights)[0]
            chosen[pick["id"]] = pick
        for hero in sorted(chosen.values(), key=lambda h: h["id"]):
            start = max(created, _parse(hero["release_date"]) + timedelta(hours=10))
            acquired = recent(rng, now, start, 60, 0.15)
            if hero["availability"] == "event":
                via, currency, price = rng.choice(["event", "season_reward"]), None, None
            elif rng.random() < 0.12:
                via, currency, price = "season_reward", None, None
            else:
                currency = "coins" if rng.random() < 0.72 else "diamonds"
                via, price = "purchase", hero["price_coins"] if currency == "coins" else hero["price_diamonds"]
            favourite = hero["role"] in roles
            proficiency = int(math.exp(rng.gauss(7.2 if favourite else 6.0, 1.0)))
            yield {
                "player_id": player["id"],
                "hero_id": hero["id"],
                "acquired_at": ts(acquired),
                "acquired_via": via,
                "currency": currency,
                "price_paid": price,
                "proficiency": proficiency,
                "matches_played": 0,
                "wins": 0,
            }


def season_ranks(ctx: FillContext) -> Iterable[Row]:
    now = clock(ctx)
    profiles = _profiles(ctx)
    current = season_of(now)
    for player in ctx.rows("players", "id, created_at"):
        first = season_of(_parse(player["created_at"]))
        skill = profiles[player["id"]][0]
        for season in range(first, current + 1):
            tier, stars, peak_tier, peak_stars = season_rank(ctx.seed, player["id"], season, skill)
            yield {
                "player_id": player["id"],
                "season_id": season,
                "tier": tier,
                "stars": stars,
                "peak_tier": peak_tier,
                "peak_stars": peak_stars,
                "ranked_matches": 0,
                "ranked_wins": 0,
            }


# -- social --------------------------------------------------------------------------------


def _player_info(ctx: FillContext) -> dict[int, tuple[datetime, str]]:
    return {r["id"]: (_parse(r["created_at"]), r["region"]) for r in ctx.rows("players", "id, created_at, region")}


def _leaders(ctx: FillContext) -> list[int]:
    """The players who will lead a clan (the clans generator picks them from the same stream)."""
    rng = Random(derive_seed(ctx.seed, "clan-leaders"))
    return sorted(rng.sample([r["id"] for r in ctx.rows("players", "id", "level >= 12")], TEAM_COUNT))


def relations(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    ids = sorted(info)
    by_region: dict[str, list[int]] = defaultdict(list)
    for pid in ids:
        by_region[info[pid][1]].append(pid)
    pairs: dict[tuple[int, int], None] = {}
    for pid in ids:
        want = max(1, int(rng.gauss(4.5, 2.5)))
        for _ in range(want):
            pool = by_region[info[pid][1]] if rng.random() < 0.75 else ids
            other = rng.choice(pool)
            if other != pid:
                pairs[(min(pid, other), max(pid, other))] = None
    rows = []
    for a, b in pairs:
        since = recent(rng, now, max(info[a][0], info[b][0]) + timedelta(hours=1), 90, 0.2)
        intimacy = int(math.exp(rng.gauss(5.0, 1.4)))
        rows.append({"player_id": a, "other_id": b, "kind": "friend", "since": ts(since), "intimacy": intimacy})
        rows.append({"player_id": b, "other_id": a, "kind": "friend", "since": ts(since), "intimacy": intimacy})
    leaders = _leaders(ctx)
    blocked: set[tuple[int, int]] = set()
    while len(blocked) < 115:
        a, b = rng.sample(ids, 2)
        if len(blocked) < len(leaders):  # clan leaders keep a blacklist too
            a = leaders[len(blocked)]
            if a == b:
                continue
        if (min(a, b), max(a, b)) in pairs or (a, b) in blocked:
            continue
        blocked.add((a, b))
        since = recent(rng, now, max(info[a][0], info[b][0]) + timedelta(hours=1), 60, 0.3)
        rows.append({"player_id": a, "other_id": b, "kind": "blocked", "since": ts(since), "intimacy": 0})
    rows.sort(key=lambda r: (r["player_id"], r["other_id"]))
    return rows


def friend_requests(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    ids = sorted(info)
    nick = {r["id"]: r["nickname"] for r in ctx.rows("players", "id, nickname")}
    hero_names = [h[0] for h in V.HEROES]
    friends: dict[tuple[int, int], datetime] = {}
    blocked: set[tuple[int, int]] = set()
    for r in ctx.rows("relations", "player_id, other_id, kind, since"):
        if r["kind"] == "friend" and r["player_id"] < r["other_id"]:
            friends[(r["player_id"], r["other_id"])] = _parse(r["since"])
        elif r["kind"] == "blocked":
            blocked.add((min(r["player_id"], r["other_id"]), max(r["player_id"], r["other_id"])))

    def message(sender: int) -> str:
        return rng.choice(V.FRIEND_MESSAGES).format(name=nick[sender], hero=rng.choice(hero_names))

    rows: list[tuple[datetime, int, int, str, str, str | None]] = []
    for (a, b), since in friends.items():
        if rng.random() < 0.45:
            sender, receiver = (a, b) if rng.random() < 0.5 else (b, a)
            sent = max(since - timedelta(minutes=rng.randint(5, 4000)), max(info[a][0], info[b][0]))
            rows.append((sent, sender, receiver, message(sender), "accepted", ts(since)))
    used = set(friends) | blocked
    leaders = _leaders(ctx)
    for status, count in (("rejected", 170), ("pending", 200)):
        made = 0
        while made < count:
            sender, receiver = rng.sample(ids, 2)
            if status == "pending" and made < len(leaders):  # popular players: clan leaders get requests
                receiver = leaders[made]
                if sender == receiver:
                    continue
            pair = (min(sender, receiver), max(sender, receiver))
            if pair in used:
                continue
            used.add(pair)
            made += 1
            start = max(info[sender][0], info[receiver][0]) + timedelta(minutes=30)
            if status == "pending":
                sent = between(rng, max(start, now - timedelta(days=21)), now - timedelta(minutes=5))
                answered = None
            else:
                sent = between(rng, start, now - timedelta(days=1))
                answered = ts(min(now, sent + timedelta(minutes=rng.randint(2, 5000))))
            rows.append((sent, sender, receiver, message(sender), status, answered))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))  # ids follow time
    for i, (sent, sender, receiver, text, status, answered) in enumerate(rows, start=1):
        yield {
            "id": i,
            "sender_id": sender,
            "receiver_id": receiver,
            "message": text,
            "status": status,
            "sent_at": ts(sent),
            "answered_at": answered,
        }


# -- clans ---------------------------------------------------------------------------------

TEAM_COUNT = 20


def teams(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    by_id = {r["id"]: r for r in ctx.rows("players", "id, region, created_at, level")}
    names: set[str] = set()
    for i, leader in enumerate([by_id[p] for p in _leaders(ctx)], start=1):
        while True:
            first, second = V.TEAM_NAME_PARTS
            name = f"{rng.choice(first)} {rng.choice(second)}"
            if name not in names:
                break
        names.add(name)
        size = max(2, min(16, int(rng.gauss(7, 3.5))))
        level = max(1, min(10, int(rng.gauss(4, 2.2))))
        full = i % 5 == 0  # every fifth clan is full: applications to it must wait
        capacity = max(5, size) if full else min(50, max(size + 2, 10 + 3 * level + rng.randint(-3, 3)))
        size = capacity if full else size
        created = between(rng, _parse(leader["created_at"]) + timedelta(days=1), now - timedelta(days=30))
        yield {
            "id": i,
            "name": name,
            "leader_id": leader["id"],
            "region": leader["region"],
            "level": level,
            "capacity": capacity,
            "member_count": size,
            "notice": rng.choice(V.TEAM_NOTICES),
            "created_at": ts(created),
            "total_contribution": 0,
        }


def team_members(ctx: FillContext) -> Iterable[Row]:
    """Fills each clan up to the member_count the clans generator planned (same region first)."""
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    team_rows = ctx.rows("teams", "id, leader_id, region, member_count, created_at")
    taken = {t["leader_id"] for t in team_rows}
    free_by_region: dict[str, list[int]] = defaultdict(list)
    for pid in sorted(info):
        if pid not in taken:
            free_by_region[info[pid][1]].append(pid)
    for team in team_rows:
        created = _parse(team["created_at"])
        yield {
            "team_id": team["id"],
            "player_id": team["leader_id"],
            "role": "leader",
            "joined_at": team["created_at"],
            "contribution": rng.randint(2000, 9000),
        }
        others = []
        for _ in range(team["member_count"] - 1):
            pool = (
                free_by_region[team["region"]]
                if free_by_region[team["region"]] and rng.random() < 0.85
                else [p for region in sorted(free_by_region) for p in free_by_region[region]]
            )
            pid = rng.choice(pool)
            free_by_region[info[pid][1]].remove(pid)
            others.append(pid)
        for n, pid in enumerate(sorted(others)):
            role = (
                "vice_leader"
                if n < (2 if len(others) >= 8 else 1 if len(others) >= 3 else 0)
                else "elite"
                if rng.random() < 0.25
                else "member"
            )
            joined = recent(rng, now, max(created, info[pid][0]) + timedelta(hours=2), 45, 0.2)
            tenure = (now - joined).days
            yield {
                "team_id": team["id"],
                "player_id": pid,
                "role": role,
                "joined_at": ts(joined),
                "contribution": int(tenure * rng.uniform(2, 25)),
            }


def team_applications(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    team_rows = {t["id"]: t for t in ctx.rows("teams", "id, leader_id, created_at, member_count, capacity")}
    members = ctx.rows("team_members", "team_id, player_id, role, joined_at")
    team_of = {m["player_id"]: m["team_id"] for m in members}
    reviewers: dict[int, list[int]] = defaultdict(list)
    for m in members:
        if m["role"] in ("leader", "vice_leader"):
            reviewers[m["team_id"]].append(m["player_id"])
    rows = []
    for m in members:
        if m["role"] != "leader" and rng.random() < 0.6:
            joined = _parse(m["joined_at"])
            applied = max(
                joined - timedelta(minutes=rng.randint(10, 3000)), info[m["player_id"]][0], _parse(team_rows[m["team_id"]]["created_at"])
            )
            reviewer = team_rows[m["team_id"]]["leader_id"]
            rows.append((applied, m["team_id"], m["player_id"], "approved", m["joined_at"], reviewer))
    ids = sorted(info)
    team_ids = sorted(team_rows)
    used = {(r[1], r[2]) for r in rows}
    full = [t for t in team_ids if team_rows[t]["member_count"] >= team_rows[t]["capacity"]]
    for status, count in (("rejected", 60), ("pending", 85)):
        made = 0
        while made < count:
            team = rng.choice(full) if status == "pending" and made < 15 else rng.choice(team_ids)
            pid = rng.choice(ids)
            if team_of.get(pid) == team or (team, pid) in used:
                continue
            if status == "pending" and pid in team_of and rng.random() < 0.6:
                continue  # most applicants are clanless; some are in another clan
            used.add((team, pid))
            made += 1
            start = max(info[pid][0], _parse(team_rows[team]["created_at"])) + timedelta(hours=1)
            if status == "pending":
                applied = between(rng, max(start, now - timedelta(days=14)), now - timedelta(minutes=10))
                rows.append((applied, team, pid, status, None, None))
            else:
                applied = between(rng, start, now - timedelta(days=2))
                reviewed = ts(min(now, applied + timedelta(minutes=rng.randint(30, 4000))))
                rows.append((applied, team, pid, status, reviewed, rng.choice(reviewers[team])))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    nick = {r["id"]: r["nickname"] for r in ctx.rows("players", "id, nickname")}
    for i, (applied, team, pid, status, reviewed, reviewer) in enumerate(rows, start=1):
        text = rng.choice(V.APPLICATION_MESSAGES).format(name=nick[team_rows[team]["leader_id"]])
        yield {
            "id": i,
            "team_id": team,
            "player_id": pid,
            "message": text,
            "status": status,
            "applied_at": ts(applied),
            "reviewed_at": reviewed,
            "reviewed_by": reviewer,
        }


# -- rooms ---------------------------------------------------------------------------------

ROOMS = {"closed": 48, "open": 18, "in_game": 5}


def rooms(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    nick = {r["id"]: r["nickname"] for r in ctx.rows("players", "id, nickname")}
    team_names = [r["name"] for r in ctx.rows("teams", "id, name")]
    ids = sorted(info)
    # Half the open rooms belong to clan leaders (who also review applications and get invited).
    leaders = sorted(r["leader_id"] for r in ctx.rows("teams", "leader_id"))
    hosts = rng.sample(leaders, ROOMS["open"] // 2)
    active_owners = hosts + rng.sample([p for p in ids if p not in hosts], ROOMS["open"] - len(hosts) + ROOMS["in_game"])
    plan = (
        [("closed", None)] * ROOMS["closed"]
        + [("open", o) for o in active_owners[: ROOMS["open"]]]
        + [("in_game", o) for o in active_owners[ROOMS["open"] :]]
    )
    rows = []
    for n, (status, owner) in enumerate(plan):
        mode = rng.choices(["ranked", "classic", "brawl", "custom"], weights=[35, 30, 20, 15])[0]
        capacity = ROOM_CAPACITY[mode] if mode != "custom" else rng.choice([2, 4, 6, 8, 10])
        if status == "closed":
            created = recent(rng, now, now - timedelta(days=60), 7, 0.3) - timedelta(hours=3)
            owner = rng.choice([p for p in ids if info[p][0] < created - timedelta(days=1)])
            closed_at, size = ts(created + timedelta(minutes=rng.randint(8, 150))), 0
        else:
            hours = 3 if status == "open" else 2
            created = between(rng, now - timedelta(hours=hours), now - timedelta(minutes=10))
            closed_at = None
            full = status == "open" and n % 5 == 0
            size = capacity if full else rng.randint(1 if status == "open" else 2, capacity)
        name = rng.choice(V.ROOM_NAMES).format(n=rng.randint(1, 9), team=rng.choice(team_names), name=nick[owner])[:30]
        rows.append(
            (
                created,
                {
                    "name": name,
                    "owner_id": owner,
                    "mode": mode,
                    "capacity": capacity,
                    "status": status,
                    "password": f"{rng.randint(0, 9999):04d}" if rng.random() < 0.3 else None,
                    "created_at": ts(created),
                    "closed_at": closed_at,
                    "member_count": size,
                },
            )
        )
    rows.sort(key=lambda r: (r[0], r[1]["owner_id"]))
    for i, (_, row) in enumerate(rows, start=1):
        yield {"id": i, **row}


def room_members(ctx: FillContext) -> Iterable[Row]:
    """Each active room gets its owner and member_count - 1 players in no other active room."""
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    active = ctx.rows("rooms", "id, owner_id, member_count, created_at", "status != 'closed'")
    busy = {r["owner_id"] for r in active}
    free = [p for p in sorted(info) if p not in busy]
    for room in active:
        created = _parse(room["created_at"])
        yield {"room_id": room["id"], "player_id": room["owner_id"], "joined_at": room["created_at"]}
        for pid in sorted(rng.sample(free, room["member_count"] - 1)):
            free.remove(pid)
            yield {"room_id": room["id"], "player_id": pid, "joined_at": ts(between(rng, created, now - timedelta(minutes=2)))}


def room_invitations(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    info = _player_info(ctx)
    ids = sorted(info)
    blocked = {(r["player_id"], r["other_id"]) for r in ctx.rows("relations", "player_id, other_id", "kind = 'blocked'")}
    members: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for m in ctx.rows("room_members", "room_id, player_id, joined_at"):
        members[m["room_id"]].append((m["player_id"], m["joined_at"]))
    # Open rooms invite a clan leader, preferably one hosting another open room.
    hosts = sorted(r["owner_id"] for r in ctx.rows("rooms", "owner_id", "status = 'open' AND owner_id IN (SELECT leader_id FROM teams)"))
    rows: list[tuple[datetime, int, int, int, str, str | None]] = []
    for room in ctx.rows("rooms", "id, owner_id, status, created_at, closed_at"):
        leaders = [h for h in hosts if h != room["owner_id"]]
        created = _parse(room["created_at"])
        end = _parse(room["closed_at"]) if room["closed_at"] else now
        inside = {p for p, _ in members[room["id"]]}
        invited: set[int] = set()
        for pid, joined in members[room["id"]]:  # members invited by the owner
            if pid != room["owner_id"] and rng.random() < 0.7:
                sent = max(created, _parse(joined) - timedelta(seconds=rng.randint(20, 400)))
                rows.append((sent, room["id"], room["owner_id"], pid, "accepted", joined))
                invited.add(pid)
        extra = rng.randint(0, 4) if room["status"] != "in_game" else rng.randint(0, 2)
        for n in range(extra + (room["status"] == "open")):
            invitee = rng.choice(leaders) if n == extra else rng.choice(ids)
            inviter = rng.choice(sorted(inside)) if inside else room["owner_id"]
            if invitee in inside or invitee in invited or _estranged(invitee, inviter, blocked) or info[invitee][0] >= created:
                continue
            invited.add(invitee)
            sent = between(rng, created, end - timedelta(minutes=1))
            status, answered = _invitation_answer(rng, room["status"], sent, end)
            rows.append((sent, room["id"], inviter, invitee, status, answered))
    rows.sort(key=lambda r: (r[0], r[1], r[3]))
    for i, (sent, room_id, inviter, invitee, status, answered) in enumerate(rows, start=1):
        yield {
            "id": i,
            "room_id": room_id,
            "inviter_id": inviter,
            "invitee_id": invitee,
            "status": status,
            "sent_at": ts(sent),
            "answered_at": answered,
        }


def _estranged(invitee: int, inviter: int, blocked: set[tuple[int, int]]) -> bool:
    """Whether `inviter` cannot invite `invitee`: the same player, or one blocks the other."""
    return invitee == inviter or (invitee, inviter) in blocked or (inviter, invitee) in blocked


def _invitation_answer(rng: Random, room_status: str, sent: datetime, end: datetime) -> tuple[str, str | None]:
    """An invitation's status (as its room's state allows) and when it was answered (None: not)."""
    if room_status == "open":
        status = rng.choices(["pending", "declined"], weights=[75, 25])[0]
    elif room_status == "in_game":
        status = rng.choice(["declined", "expired"])
    else:
        status = rng.choices(["accepted", "declined", "expired"], weights=[50, 25, 25])[0]
    answered = None if status in ("pending", "expired") else ts(min(end, sent + timedelta(seconds=rng.randint(10, 600))))
    return status, answered


# -- matches -------------------------------------------------------------------------------


def matches(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    current_start = season_bounds(season_of(now))[0]
    hours = list(range(24))
    hour_weights = [3, 2, 1, 1, 1, 1, 1, 2, 3, 3, 4, 5, 7, 6, 5, 5, 6, 7, 9, 12, 14, 14, 11, 6]
    rows = []
    for _ in range(MATCH_COUNT):
        if rng.random() < 0.3:
            day = between(rng, current_start, now - timedelta(hours=1))
        else:
            day = between(rng, now - timedelta(days=600), current_start)
        started = day.replace(hour=rng.choices(hours, weights=hour_weights)[0], minute=rng.randint(0, 59), second=rng.randint(0, 59))
        mode = rng.choices(["ranked", "classic", "brawl"], weights=[50, 35, 15])[0]
        duration = int(rng.uniform(420, 900)) if mode == "brawl" else int(min(2400, max(540, rng.gauss(1080, 240))))
        if started + timedelta(seconds=duration) > now - timedelta(minutes=5):
            started = now - timedelta(seconds=duration, minutes=rng.randint(6, 600))
        rows.append((started, mode, duration, rng.choice(["blue", "red"])))
    rows.sort()
    for i, (started, mode, duration, winner) in enumerate(rows, start=1):
        yield {
            "id": i,
            "season_id": season_of(started),
            "mode": mode,
            "started_at": ts(started),
            "duration_sec": duration,
            "winner_side": winner,
            "blue_kills": 0,
            "red_kills": 0,
        }


# Per role: kills, deaths, assists per 18 minutes; damage dealt, taken, healing, tower damage per minute.
ROLE_STATS = {
    "tank": (1.8, 4.0, 9.0, 2100, 6200, 380, 220),
    "fighter": (4.0, 4.2, 6.0, 3900, 4400, 520, 420),
    "assassin": (6.8, 4.5, 5.0, 4200, 2900, 150, 160),
    "mage": (5.2, 4.0, 6.5, 5000, 2500, 120, 180),
    "marksman": (6.0, 3.8, 5.5, 5600, 2300, 90, 650),
    "support": (1.4, 4.4, 11.0, 1500, 2800, 1800, 80),
}


Pools = list[tuple[list[int], list[float]]]  # (players, cumulative weights): the region's, then everyone eligible
Owned = dict[int, list[tuple[str, int, int]]]  # player -> (acquired_at, hero, proficiency) in time order


def match_players(ctx: FillContext) -> Iterable[Row]:
    rng = ctx.rng
    profiles = _profiles(ctx)
    info = _player_info(ctx)
    heroes = {r["id"]: (r["role"], r["lane"]) for r in ctx.rows("heroes", "id, role, lane")}
    owned: Owned = defaultdict(list)
    for r in ctx.rows("player_heroes", "player_id, hero_id, acquired_at, proficiency"):
        owned[r["player_id"]].append((r["acquired_at"], r["hero_id"], r["proficiency"]))
    for items in owned.values():
        items.sort()
    acquired_at = {pid: [a for a, _, _ in items] for pid, items in owned.items()}
    by_created = sorted(info, key=lambda p: (info[p][0], p))
    created_list = [info[p][0] for p in by_created]
    pool_cache: dict[tuple[int, str], Pools] = {}
    for match in ctx.rows("matches", "id, mode, started_at, duration_sec, winner_side"):
        start = match["started_at"]
        moment = _parse(start)
        eligible = by_created[: bisect_right(created_list, moment - timedelta(hours=1))]
        region = rng.choices(V.REGIONS, weights=V.REGION_WEIGHTS)[0]
        key = (len(eligible), region)
        if key not in pool_cache:
            local = [p for p in eligible if info[p][1] == region]
            pool_cache[key] = [(pool, list(accumulate(profiles[p][2] for p in pool))) for pool in (local, eligible)]
        picks = _pick_players(rng, pool_cache[key], owned, acquired_at, start)
        assert len(picks) == 10, f"match {match['id']} could not be staffed"
        slots = [_stat_line(rng, match, n, (pid, hero), heroes[hero], profiles[pid][0]) for n, (pid, hero) in enumerate(picks)]
        _award(slots, match["mode"])
        slots.sort(key=lambda s: s["player_id"])
        yield from slots


def _pick_players(rng: Random, pools: Pools, owned: Owned, acquired_at: dict[int, list[str]], start: str) -> list[tuple[int, int]]:
    """Up to ten (player, hero) picks, mostly from the region when it has players enough, each
    hero once and owned by its player when the match starts."""
    local = pools[0][0]
    chosen: list[int] = []
    used_heroes: set[int] = set()
    picks: list[tuple[int, int]] = []
    tries = 0
    while len(picks) < 10 and tries < 400:
        tries += 1
        pool, cumulative = pools[0] if len(local) >= 14 and rng.random() < 0.85 else pools[1]
        pid = rng.choices(pool, cum_weights=cumulative)[0]
        if pid in chosen:
            continue
        have = owned[pid][: bisect_right(acquired_at[pid], start)]  # heroes owned when the match starts
        available = [(h, prof) for _, h, prof in have if h not in used_heroes]
        if not available:
            continue
        hero = rng.choices([h for h, _ in available], weights=[prof + 200 for _, prof in available])[0]
        chosen.append(pid)
        used_heroes.add(hero)
        picks.append((pid, hero))
    return picks


def _stat_line(rng: Random, match: sqlite3.Row, n: int, pick: tuple[int, int], hero: tuple[str, str], skill: float) -> Row:
    """Pick `n`'s line of a match (the first five play blue): stats drawn from the hero's role
    (`hero`: role, lane), the player's skill and the result."""
    pid, hero_id = pick
    minutes = match["duration_sec"] / 60
    scale = minutes / 18
    side = "blue" if n < 5 else "red"
    win = side == match["winner_side"]
    role, lane = hero
    k, d, a, dmg, taken, heal, tower = ROLE_STATS[role]
    boost = (1.3 if win else 0.8) * (0.8 + skill / 16)
    kills = max(0, int(rng.gauss(k * scale * boost, 1.6)))
    deaths = max(0, int(rng.gauss(d * scale * (0.75 if win else 1.3), 1.6)))
    assists = max(0, int(rng.gauss(a * scale * boost, 2.2)))
    gold = int(minutes * rng.uniform(380, 520) + kills * 160 + assists * 45)
    damage = int(dmg * minutes * rng.uniform(0.7, 1.3) * boost)
    score = 3.5 + kills * 0.55 + assists * 0.3 - deaths * 0.35 + damage / (minutes * 4000) + (1.5 if win else 0) + rng.uniform(0, 1.5)
    return {
        "match_id": match["id"],
        "player_id": pid,
        "side": side,
        "hero_id": hero_id,
        "lane": lane,
        "kills": kills,
        "deaths": deaths,
        "assists": assists,
        "gold": gold,
        "damage_dealt": damage,
        "damage_taken": int(taken * minutes * rng.uniform(0.7, 1.3)),
        "healing": int(heal * minutes * rng.uniform(0.5, 1.5)),
        "tower_damage": int(tower * minutes * rng.uniform(0.3, 1.7) * (1.4 if win else 0.7)),
        "score": round(min(16.0, max(1.0, score)), 1),
        "result": "win" if win else "loss",
        "is_mvp": 0,
        "rating_change": 0,
    }


def _award(slots: list[Row], mode: str) -> None:
    """Each side's best score is its MVP; a ranked match moves ratings (an MVP's more)."""
    for side in ("blue", "red"):
        team = [s for s in slots if s["side"] == side]
        best = max(team, key=lambda s: (s["score"], -s["player_id"]))
        best["is_mvp"] = 1
    for s in slots:
        if mode == "ranked":
            s["rating_change"] = (2 if s["is_mvp"] else 1) if s["result"] == "win" else (0 if s["is_mvp"] else -1)


def favourite_matches(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    notes = [
        "",
        "",
        "",
        "Pentakill!",
        "Best comeback ever",
        "Clutch baron steal",
        "Carried by my support",
        "Replay for the clan",
        "My first MVP with this hero",
        "Insane teamfight at 14:00",
    ]
    played: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for r in ctx.rows("match_players", "match_id, player_id, is_mvp"):
        played[r["player_id"]].append((r["match_id"], r["is_mvp"]))
    ends = {
        r["id"]: _parse(r["started_at"]) + timedelta(seconds=r["duration_sec"]) for r in ctx.rows("matches", "id, started_at, duration_sec")
    }
    for pid in sorted(played):
        if rng.random() < 0.35:
            continue
        games = played[pid]
        n = min(len(games), rng.randint(1, 7))
        weights = [4 if mvp else 1 for _, mvp in games]
        chosen: dict[int, None] = {}
        while len(chosen) < n:
            chosen[rng.choices(games, weights=weights)[0][0]] = None
        for match_id in sorted(chosen):
            end = ends[match_id]
            yield {
                "player_id": pid,
                "match_id": match_id,
                "favourited_at": ts(between(rng, end, min(now, end + timedelta(days=3)))),
                "note": rng.choice(notes),
            }


GENERATORS = {
    "seasons": seasons,
    "heroes": heroes,
    "players": players,
    "player_heroes": player_heroes,
    "season_ranks": season_ranks,
    "relations": relations,
    "friend_requests": friend_requests,
    "teams": teams,
    "team_members": team_members,
    "team_applications": team_applications,
    "rooms": rooms,
    "room_members": room_members,
    "room_invitations": room_invitations,
    "matches": matches,
    "match_players": match_players,
    "favourite_matches": favourite_matches,
}
