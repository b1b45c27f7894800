"""Task templates of the MOBA platform.

Each template has two halves (see ebench/tasks/generation.py): `draft` inspects the world with
SQL, picks a player and targets and writes the expected writes; `solve` reaches the same end
state through the public tools from what the query states. Values a player would type (a room's
name, a password, a date, a threshold, a note, a nickname) are the player's and appear in the
query; what the data decides (which requests, which friends, how many heroes) does not. Wording
follows docs/wording.md.

Drafts check in SQL that every stated condition excludes something, computing the outcome of
each way a sloppy solver gets it wrong (`_differs`, `_conditions_bite`), and raise NoTarget
otherwise, so that certification rarely has to reject. Numeric thresholds are values a player would
write (a round intimacy, reserve, KDA, score or level), chosen first and then checked to bite when
ignored; their inclusivity need not bite (certify.optional_bite). Every template declares its
`clauses`; a clause that could not change the answer (the product refuses the wrong write anyway)
is not in the wording. Solvers hand listings the tools' own filters for the stated conditions
(`narrow=`). A template acts for a player at most once (`_once`), and a room, clan or pair of
players is never the subject of two tasks of one template.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, ClassVar

from ...tasks.public import WRITTEN, Condition, PublicAPI, PublicSolverFailed, Reading, find_one
from ...tasks.spec import Step
from ...tasks.template_api import Draft, GenContext, NoTarget, Template
from ...tasks.template_helpers import pretty_day, ref
from ...tasks.vocabulary import OpenTerm
from .schema import rank_score, tier_index
from .vocabulary import ROLES, TIERS

ROOM_NAMES = [
    "Friday Night Stack",
    "Late Lobby",
    "Duo Queue Crew",
    "Practice Arena",
    "Sunday Scrims",
    "Rank Push",
    "Chill Customs",
    "No Tilt Zone",
    "Midnight Brawl",
    "Team Drills",
    "Warm-up Games",
    "Climb Together",
    "Jungle Gym",
    "Last Hit Club",
    "Tower Divers",
    "Weekend Warriors",
    "Lunch Break Lobby",
    "Draft Practice",
    "Gank Squad",
    "Dragon Pit",
    "River Control",
    "Lane Swap Lab",
    "Base Race",
    "Full Send",
]
PASSWORDS = ["2468", "7391", "5050", "8642", "3579", "4826", "9317", "60606", "772211", "1357", "2580", "90210"]
FRIEND_MESSAGES = [  # no apostrophes: the query quotes them in single quotes
    "GG! Want to team up again?",
    "Good games lately, want to queue together?",
    "Nice plays, add me for ranked?",
    "We should duo sometime.",
    "You were great on my team!",
    "Add me, we can climb together.",
]
MATCH_NOTES = [
    "highlight",
    "MVP game",
    "rewatch this",
    "best of the season",
    "clip it",
    "great teamwork",
    "comeback",
    "clean win",
    "study this",
    "hall of fame",
]
MODES = ("ranked", "classic", "brawl")

# Terms whose reading the game leaves open: a request that uses one says which reading it means.
CLAN_ROLES = r"whatever (?:their|the) (?:clan )?role|any clan role|every clan role"
OPEN_TERMS = (
    OpenTerm(
        "clan members",
        "get_team lists the leader, vice leaders and elites beside plain members (role 'member'): is the leader a member?",
        decided_by=CLAN_ROLES,
        pattern=r"\bclan ?mates?\b|\bclan members?\b|\bmembers? of (?:my|the|our) clan\b|\b(?:everyone|anyone|players?|people) (?:else )?in my clan\b",
    ),
    OpenTerm(
        "my heroes",
        "list_my_heroes shows starter heroes and event or season rewards beside the ones bought: are those 'my heroes'?",
        decided_by=r"\bheroes? I (?:own|have|bought|paid for)\b|\bI (?:own|bought)\b|\bstarter\b",
        pattern=r"\bmy heroes\b|\bmy own heroes\b",
    ),
)
# The reading a template takes of "everyone in my clan": every role, as its wording says.
CLAN_READING = Reading("clan roles", decided_by=CLAN_ROLES)

TIER_P = tier_index("p.tier")
RANK_P = rank_score("p.tier", "p.stars")
RIGHT, OFF, IGNORED = "correct", "off_by_one", "ignore"


# -- the SQL side ----------------------------------------------------------------------------


def _today(ctx: GenContext) -> str:
    return ctx.now[:10]


def _current_season(ctx: GenContext) -> int:
    season: int = ctx.value("SELECT id FROM seasons WHERE start_date <= ? AND end_date >= ?", _today(ctx), _today(ctx))
    return season


def _once(*targets: Any) -> tuple[Any, ...]:
    """Targets counted twice: the generator allows two tasks of a template per target, so each
    target (a player acting, a room, a clan) is the subject of one task of the template only."""
    return tuple(t for target in targets for t in (target, target))


def _hide(values: Iterable[Any], *stated: Any) -> list[Any]:
    """Derived values the query must not state, minus those equal to a number it states anyway."""
    said = {s for s in stated if isinstance(s, (int, float)) and not isinstance(s, bool)}
    return [v for v in values if v not in said]


def _bounded(items: list[Any], low: int, high: int, what: str) -> list[Any]:
    if not low <= len(items) <= high:
        raise NoTarget(f"{len(items)} {what}, wanted {low}-{high}")
    return items


def _differs(correct: Any, *variants: Any) -> None:
    """Every way of getting a stated condition wrong must end elsewhere than the correct answer."""
    if any(v == correct for v in variants):
        raise NoTarget("a stated condition would exclude nothing")


SLIPPED = (OFF, IGNORED)  # the sloppy readings of a boundary: one day or unit off, or ignored
# A natural threshold (a round number the user chose) must bite when ignored; one step off need
# not (certify.optional_bite): mostly no candidate lands on a round value.
ROUND = (IGNORED,)
DROPPED = (False,)  # the sloppy reading of a filter: left out


def _conditions_bite(correct: Any, outcome: Callable[..., Any], *args: Any, **slips: tuple[Any, ...]) -> None:
    """`_differs` over the sloppy readings: `outcome(*args)` with one condition (a keyword) read
    each way its slips give, in the order given."""
    _differs(correct, *(outcome(*args, **{condition: slip}) for condition, ways in slips.items() for slip in ways))


# Players in a clan of four or more.
CLAN_MEMBERS = "SELECT m.player_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.member_count >= 4 ORDER BY m.player_id"
# Players with five friends or more.
FRIENDLY_HOSTS = "SELECT player_id FROM relations WHERE kind = 'friend' GROUP BY player_id HAVING COUNT(*) >= 5 ORDER BY player_id"


def _players_whose_matches(where: str, having: str) -> str:
    """The SQL of the players whose matches (`m`, with their own row `mp`) meeting `where` satisfy `having`."""
    return (
        f"SELECT mp.player_id FROM match_players mp JOIN matches m ON m.id = mp.match_id WHERE {where} "
        f"GROUP BY mp.player_id HAVING {having} ORDER BY mp.player_id"
    )


def _draw(ctx: GenContext, what: str, sql: str, *params: Any) -> Any:
    """One of the ids the query selects (a player to act for, mostly)."""
    return ctx.choice(ctx.column(sql, *params), what)


def _player_draft(user: int, query: str, steps: list[Step], stated: dict[str, Any], hidden: list[Any]) -> Draft:
    """A draft acting for `user`, who is the subject of no other task of its template."""
    return Draft(user, query, steps, stated=stated, hidden=hidden, targets=_once(("player", user)))


def _matches_to_save(
    ctx: GenContext, chosen: Callable[..., list[int]], low: int, high: int, **slips: tuple[Any, ...]
) -> tuple[list[int], str]:
    """The matches `chosen()` picks, between `low` and `high` of them and each stated condition biting
    (see `_conditions_bite`), with a note to save them under."""
    targets = _bounded(chosen(), low, high, "matches")
    _conditions_bite(targets, chosen, **slips)
    return targets, ctx.rng.choice(MATCH_NOTES)


def _favourite_steps(matches: Iterable[int], note: str) -> list[Step]:
    return [Step("favourite_match", {"match_id": m, "note": note}) for m in matches]


def _weighted(ctx: GenContext, items: list[Any], weights: list[float], what: str) -> Any:
    if not items:
        raise NoTarget(f"no {what}")
    return ctx.rng.choices(items, weights=weights, k=1)[0]


def _relation(ctx: GenContext, me: int, other: int) -> str:
    """How two players stand: 'friend', 'blocked' (either way), 'sent' (my request pending),
    'received' (their request pending) or 'free'."""
    kinds = ctx.column(
        "SELECT kind FROM relations WHERE (player_id = ? AND other_id = ?) OR (player_id = ? AND other_id = ?)", me, other, other, me
    )
    if "blocked" in kinds:
        return "blocked"
    if "friend" in kinds:
        return "friend"
    pending = ctx.one(
        "SELECT sender_id FROM friend_requests WHERE status = 'pending' AND ((sender_id = ? AND receiver_id = ?) "
        "OR (sender_id = ? AND receiver_id = ?))",
        me,
        other,
        other,
        me,
    )
    if pending is None:
        return "free"
    return "sent" if pending["sender_id"] == me else "received"


def _blocked_either_way(ctx: GenContext, me: int, other: int) -> bool:
    return bool(
        ctx.value(
            "SELECT COUNT(*) FROM relations WHERE kind = 'blocked' AND ((player_id = ? AND other_id = ?) "
            "OR (player_id = ? AND other_id = ?))",
            me,
            other,
            other,
            me,
        )
    )


def _befriend_steps(ctx: GenContext, me: int, others: Iterable[int], message: str) -> dict[int, Step]:
    """What makes each of `others` my friend: accept their pending request, else send one;
    nothing for friends, blocks either way and requests I already sent (the product refuses)."""
    out: dict[int, Step] = {}
    for other in others:
        state = _relation(ctx, me, other)
        if state == "free":
            out[other] = Step("send_friend_request", {"player_id": other, "message": message})
        elif state == "received":
            request = ctx.value("SELECT id FROM friend_requests WHERE status = 'pending' AND sender_id = ? AND receiver_id = ?", other, me)
            out[other] = Step("answer_friend_request", {"request_id": request, "accept": True})
    return out


def _befriend_step(ctx: GenContext, me: int, message: str) -> Callable[[int], Step | None]:
    """What makes a given player my friend (see `_befriend_steps`), looked up once per player."""
    cache: dict[int, Step | None] = {}

    def step(other: int) -> Step | None:
        if other not in cache:
            cache[other] = _befriend_steps(ctx, me, [other], message).get(other)
        return cache[other]

    return step


def _accepts(steps: Iterable[Step]) -> int:
    """How many of the befriending steps accept a request of theirs (they asked first)."""
    return sum(step.tool == "answer_friend_request" for step in steps)


def _befrienders(counts: Counter[int], enough: Callable[[int], bool], befriend: Callable[[int], Step | None]) -> list[tuple[int, Step]]:
    """The counted players, by id, whose count is enough and whom befriending changes, each with the step that does it."""
    return [(p, step) for p in sorted(counts) if enough(counts[p]) and (step := befriend(p)) is not None]


def _free_to_host(ctx: GenContext, player: int) -> bool:
    """Not in a room whose game is running (such a player cannot open or join another room)."""
    return not ctx.value(
        "SELECT COUNT(*) FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = ? AND r.status = 'in_game'", player
    )


def _nickname(ctx: GenContext, player: int) -> str:
    nickname: str = ctx.value("SELECT nickname FROM players WHERE id = ?", player)
    return nickname


def _clan_of(ctx: GenContext, player: int) -> int:
    clan: int = ctx.value("SELECT team_id FROM team_members WHERE player_id = ?", player)
    return clan


def _room_name(ctx: GenContext) -> str:
    return ctx.rng.choice(ROOM_NAMES)


def _favourited(ctx: GenContext, player: int) -> set[int]:
    return set(ctx.column("SELECT match_id FROM favourite_matches WHERE player_id = ?", player))


def _my_matches(ctx: GenContext, player: int) -> list[dict[str, Any]]:
    """A player's matches, newest first, with what list_match_history shows."""
    return ctx.rows(
        "SELECT m.id, substr(m.started_at, 1, 10) AS day, m.started_at, m.mode, m.season_id, mp.side, mp.result, mp.kills, "
        "mp.deaths, mp.assists, mp.score, mp.is_mvp, mp.hero_id FROM match_players mp JOIN matches m ON m.id = mp.match_id "
        "WHERE mp.player_id = ? ORDER BY m.started_at DESC, m.id DESC",
        player,
    )


def _sides(ctx: GenContext, player: int, result: str | None = None) -> dict[int, list[tuple[int, bool]]]:
    """For each match of `player` (only its wins or losses when `result` is given): the other nine
    players, each with whether they were on the player's side."""
    out: dict[int, list[tuple[int, bool]]] = {}
    for row in ctx.rows(
        "SELECT mp.match_id, o.player_id, o.side = mp.side AS same FROM match_players mp JOIN match_players o "
        "ON o.match_id = mp.match_id AND o.player_id != mp.player_id WHERE mp.player_id = ? "
        "AND mp.result = coalesce(?, mp.result) ORDER BY mp.match_id, o.player_id",
        player,
        result,
    ):
        out.setdefault(row["match_id"], []).append((row["player_id"], bool(row["same"])))
    return out


def _at_or_after(mode: str) -> Callable[[str, str], bool]:
    """A day boundary "on or after" taken correctly, one day off, or ignored."""
    return {RIGHT: lambda day, bound: day >= bound, OFF: lambda day, bound: day > bound, IGNORED: lambda day, bound: True}[mode]


def _at_least(mode: str) -> Callable[[Any, Any], bool]:
    return {RIGHT: lambda v, bound: v >= bound, OFF: lambda v, bound: v > bound, IGNORED: lambda v, bound: True}[mode]


def _below(mode: str) -> Callable[[Any, Any], bool]:
    return {RIGHT: lambda v, bound: v < bound, OFF: lambda v, bound: v <= bound, IGNORED: lambda v, bound: True}[mode]


def _at_most(mode: str) -> Callable[[Any, Any], bool]:
    return {RIGHT: lambda v, bound: v <= bound, OFF: lambda v, bound: v < bound, IGNORED: lambda v, bound: True}[mode]


# -- the public side -------------------------------------------------------------------------


def _profile(api: PublicAPI) -> dict[str, Any]:
    profile: dict[str, Any] = api.call("get_my_profile")
    return profile


def _player_id(api: PublicAPI, nickname: str) -> int:
    """A player, by the exact nickname the query gives."""
    player: int = find_one(api.all_pages("search_players", query=nickname), nickname=nickname)["player_id"]
    return player


def _favourite_ids(api: PublicAPI) -> set[int]:
    return {f["match_id"] for f in api.all_pages("list_favourite_matches")}


def _tier(name: str) -> int:
    return TIERS.index(name)


def _befriend(api: PublicAPI, player: int, message: str, asked_first: str | None = None) -> None:
    """Send a friend request; nothing for friends, blocks and my pending requests (the product
    refuses those). Where the wording says "accept theirs if they asked first" (the condition
    `asked_first`), a pending request of theirs is accepted; the sloppy solver sends one anyway,
    which the product refuses."""
    relation = api.call("get_player", player_id=player)["relation"]
    if relation["is_friend"] or relation["blocked_by_me"] or relation["has_blocked_me"]:
        return
    if relation["pending_request_id"] is not None:
        if relation["pending_request_from"] == "them":
            if asked_first is None or api.heeds(asked_first):
                api.call("answer_friend_request", request_id=relation["pending_request_id"], accept=True)
            else:
                api.call("send_friend_request", player_id=player, message=message)
        return
    api.call("send_friend_request", player_id=player, message=message)


def _favourite(api: PublicAPI, match: dict[str, Any], stated: dict[str, Any]) -> None:
    api.call("favourite_match", match_id=match["match_id"], note=stated["note"])


def _befriend_frequent(api: PublicAPI, counts: Counter[int], stated: dict[str, Any], asked_first: str | None = None) -> None:
    """Befriend each player counted at least the stated number of times (the `times` condition)."""
    for player in sorted(counts):
        if api.compare("times", counts[player], ">=", stated["k"]):
            _befriend(api, player, stated["message"], asked_first)


def _season_id(api: PublicAPI, name: str) -> int:
    season: int = find_one(api.call("get_rank")["seasons"], name=name)["season_id"]
    return season


def _clan_mates(api: PublicAPI, me: dict[str, Any]) -> list[dict[str, Any]]:
    """The other players of my clan, every role (the wording says so: `CLAN_READING`)."""
    members = [m for m in api.all_pages("get_team", within="members", team_id=me["clan"]["team_id"]) if m["player_id"] != me["player_id"]]
    mates: list[dict[str, Any]] = api.reading(CLAN_READING.name, members, [m for m in members if m["role"] == "member"])
    return mates


class MobaTemplate(Template):
    """A template that draws again (the same seeded RNG, further along) when a draw finds nothing
    suitable, so that templates whose targets are rare still contribute their share. It also
    draws again when a draw's targets were the subject of one of its earlier drafts in this
    generation run (one run = one privileged connection), instead of handing the generator a
    draft it must reject: the memory is deterministic, since the generator's draws are."""

    # Light tasks set fewer tries: drawn less eagerly, so that the suite leans on larger ones.
    tries: ClassVar[int] = 12

    def draft(self, ctx: GenContext) -> Draft:
        if getattr(self, "_run", None) is not ctx.conn:
            self._run, self._drafted = ctx.conn, set[Any]()
        reason = NoTarget("no draw")
        for _ in range(self.tries):
            try:
                draft = self.attempt(ctx)
            except NoTarget as exc:
                reason = exc
                continue
            if any(t in self._drafted for t in draft.targets):
                reason = NoTarget("a target of an earlier draft")
                continue
            self._drafted.update(draft.targets)
            return draft
        raise reason

    def attempt(self, ctx: GenContext) -> Draft:
        raise NotImplementedError

    def drafted(self, target: Any) -> bool:
        """Whether an earlier draft of this run was about `target` (to draw among the others)."""
        return target in getattr(self, "_drafted", ())


# -- friend requests and friends -------------------------------------------------------------


class AcceptRequestsByRank(MobaTemplate):
    name = "accept_requests_by_rank"
    tries = 2
    conditions = (Condition("tier", "boundary"),)
    clauses = {"tier": "tier", "mode": WRITTEN, "name": WRITTEN}
    phrasings = (
        "Go through my pending friend requests: accept the ones from players currently ranked {tier} or higher "
        "and reject the rest. Then open a {mode} room called '{name}' and invite everyone I just accepted.",
        "I'd like to play with some new friends. Answer my pending friend requests (senders whose current rank is {tier} or above "
        "get accepted, everyone below {tier} gets rejected), then create a {mode} room named '{name}' and invite each player "
        "whose request you accepted.",
        "Two things. First, every friend request waiting for me: yes to senders at {tier} rank or higher right now, no to the "
        "others. Second, a {mode} room '{name}' with an invitation for each newly accepted friend.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(
            ctx,
            "receiver",
            "SELECT receiver_id FROM friend_requests WHERE status = 'pending' GROUP BY receiver_id "
            "HAVING COUNT(*) >= 3 ORDER BY receiver_id",
        )
        if not _free_to_host(ctx, user):
            raise NoTarget("in a running game")
        requests = ctx.rows(
            f"SELECT f.id, f.sender_id, {TIER_P} AS tier FROM friend_requests f JOIN players p ON p.id = f.sender_id "
            "WHERE f.receiver_id = ? AND f.status = 'pending' ORDER BY f.sent_at DESC, f.id DESC",
            user,
        )
        if any(_relation(ctx, user, r["sender_id"]) != "received" for r in requests):
            raise NoTarget("a relation in the way")
        tiers = sorted({r["tier"] for r in requests})
        if len(tiers) < 2:
            raise NoTarget("senders all of one tier")
        cut = ctx.rng.choice(tiers[1:])  # a sender sits exactly on the cut, and someone is below it
        accepted = [r["sender_id"] for r in requests if r["tier"] >= cut]
        mode = ctx.rng.choice(["classic", "brawl", "custom"] + (["ranked"] if len(accepted) <= 4 else []))
        name = _room_name(ctx)
        steps = [Step("answer_friend_request", {"request_id": r["id"], "accept": r["tier"] >= cut}) for r in requests]
        steps += _room_steps(len(steps), accepted, name=name, mode=mode)
        query = self.phrase(ctx, tier=TIERS[cut], mode=mode, name=name) + _leave_note(ctx, user)
        return _player_draft(user, query, steps, {"tier": TIERS[cut], "mode": mode, "name": name}, [len(accepted), len(requests)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        accepted = []
        for request in api.all_pages("list_friend_requests", direction="received", status="pending"):
            ok = api.compare("tier", _tier(request["other_tier"]), ">=", _tier(stated["tier"]))
            api.call("answer_friend_request", request_id=request["request_id"], accept=ok)
            if ok:
                accepted.append(request["sender_id"])
        _host_room(api, accepted, name=stated["name"], mode=stated["mode"])


class PruneInactiveFriends(MobaTemplate):
    name = "prune_inactive_friends"
    tries = 2
    conditions = (Condition("intimacy", "boundary"), Condition("last_login", "boundary"))
    clauses = {"intimacy": "intimacy", "before": "last_login"}
    phrasings = (
        "My friend list is too long. Remove every friend whose intimacy with me is below {n} and whose last login was before {date}.",
        "Unfriend the people I've drifted apart from: anyone on my friend list who last logged in before {date} and with "
        "whom my intimacy is under {n}.",
        "Clean up my friends: a friend goes if both hold, intimacy lower than {n} and no login on or after {date}.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(
            ctx,
            "player with friends",
            "SELECT player_id FROM relations WHERE kind = 'friend' GROUP BY player_id HAVING COUNT(*) >= 6 ORDER BY player_id",
        )
        friends = ctx.rows(
            "SELECT r.other_id, r.intimacy, substr(p.last_login, 1, 10) AS day FROM relations r "
            "JOIN players p ON p.id = r.other_id WHERE r.player_id = ? AND r.kind = 'friend' ORDER BY r.other_id",
            user,
        )

        def removed(n: int, date: str, by_n: str = RIGHT, by_date: str = RIGHT) -> list[int]:
            return [f["other_id"] for f in friends if _below(by_n)(f["intimacy"], n) and _below(by_date)(f["day"], date)]

        # A round intimacy (the user's), and a day one of the friends last logged in on.
        levels = [n for n in (50, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000) if n <= max(f["intimacy"] for f in friends)]
        days = sorted({f["day"] for f in friends})[1:]
        pairs = []
        for n in levels:
            for date in days:
                targets = removed(n, date)
                if not 3 <= len(targets) <= 12:
                    continue
                try:
                    _conditions_bite(targets, removed, n, date, by_n=ROUND, by_date=SLIPPED)
                except NoTarget:
                    continue
                pairs.append((n, date))
        n, date = ctx.choice(pairs, "intimacy and date that both bite")
        targets = removed(n, date)
        query = self.phrase(ctx, n=n, date=pretty_day(date))
        return _player_draft(
            user,
            query,
            [Step("remove_friend", {"player_id": p}) for p in targets],
            {"intimacy": n, "before": date},
            _hide([len(targets)], n),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        for friend in api.all_pages("list_friends"):
            low = api.compare("intimacy", friend["intimacy"], "<", stated["intimacy"])
            idle = api.compare("last_login", friend["last_login"][:10], "<", stated["before"])
            if low and idle:
                api.call("remove_friend", player_id=friend["player_id"])


class BlockRepeatOpponents(MobaTemplate):
    name = "block_repeat_opponents"
    conditions = (Condition("since", "boundary"), Condition("times", "boundary", capability="aggregation_computation"))
    clauses = {"since": "since", "k": "times"}
    phrasings = (
        "I keep losing to the same people. Look at every match I lost on or after {date} and block each player who was on "
        "the enemy team in at least {k} of those losses.",
        "Block everyone who has beaten me {k} or more times from {date} on: count, over all my losses starting that day, "
        "how often each player was on the winning side against me.",
        "Go through my losses starting {date}. Anyone who played against me in {k} or more of them goes on my blacklist.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        start = ctx.rng.choice([14, 21, 30, 45, 60])
        user = _draw(
            ctx,
            "player with losses",
            _players_whose_matches("mp.result = 'loss' AND m.started_at >= date(?, ?)", "COUNT(*) BETWEEN 6 AND 60"),
            _today(ctx),
            f"-{start} days",
        )
        losses = {m["id"]: m["day"] for m in _my_matches(ctx, user) if m["result"] == "loss"}
        sides = _sides(ctx, user, "loss")
        days = sorted({d for d in losses.values() if d >= ctx.value("SELECT date(?, ?)", _today(ctx), f"-{start} days")})
        since = ctx.choice(days[1:] if len(days) > 1 else [], "loss day")
        k = ctx.rng.choice([2, 2, 3, 3, 4])
        blocked = set(ctx.column("SELECT other_id FROM relations WHERE player_id = ? AND kind = 'blocked'", user))

        def chosen(by_day: str = RIGHT, by_k: str = RIGHT) -> list[int]:
            counts = Counter(p for m, day in losses.items() if _at_or_after(by_day)(day, since) for p, same in sides[m] if not same)
            return sorted(p for p, n in counts.items() if _at_least(by_k)(n, k) and p not in blocked)

        targets = _bounded(chosen(), 6, 30, "opponents")
        _conditions_bite(targets, chosen, by_day=SLIPPED, by_k=SLIPPED)
        query = self.phrase(ctx, date=pretty_day(since), k=k)
        return _player_draft(
            user, query, [Step("block_player", {"player_id": p}) for p in targets], {"since": since, "k": k}, _hide([len(targets)], k)
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        blocked = {p["player_id"] for p in api.all_pages("list_blacklist")}
        counts: Counter[int] = Counter()
        for match in api.all_pages("list_match_history", narrow={"start_date": stated["since"]}, result="loss"):
            if api.compare("since", match["started_at"][:10], ">=", stated["since"]):
                for player in api.call("get_match", match_id=match["match_id"])["players"]:
                    if player["side"] != match["side"]:
                        counts[player["player_id"]] += 1
        for player in sorted(counts):
            if api.compare("times", counts[player], ">=", stated["k"]) and player not in blocked:
                api.call("block_player", player_id=player)


class BefriendFrequentTeammates(MobaTemplate):
    name = "befriend_frequent_teammates"
    conditions = (
        Condition("since", "boundary"),
        Condition("times", "boundary", capability="aggregation_computation"),
        Condition("asked_first", "filter"),
    )
    clauses = {"since": "since", "k": "times", "message": WRITTEN, "asked_first": "asked_first"}
    phrasings = (
        "Find everyone who played on my side in at least {k} of my matches on or after {date} and add them as friends with "
        "the message '{msg}'. If one of them already sent me a request, accept it instead.",
        "Go through all my matches from {date} on and count how often each player was on my team. Everyone who was my "
        "teammate {k} or more times should become my friend: accept their pending request if there is one, otherwise send "
        "a request saying '{msg}'.",
        "I want to befriend my regular teammates: the players who were on my team in {k} or more of my games played on or after "
        "{date}. Send each a friend request ('{msg}'), or accept theirs if they asked first.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        start = ctx.rng.choice([14, 21, 30, 45])
        user = _draw(
            ctx,
            "player asked by a teammate",
            _players_whose_matches(
                "m.started_at >= date(?, ?) AND mp.player_id IN (SELECT receiver_id FROM friend_requests WHERE status = 'pending')",
                "COUNT(*) BETWEEN 8 AND 70 AND (SELECT COUNT(*) FROM match_players a WHERE a.player_id = mp.player_id) <= 300",
            ),
            _today(ctx),
            f"-{start} days",
        )
        played = {m["id"]: m["day"] for m in _my_matches(ctx, user)}
        sides = _sides(ctx, user)
        first = ctx.value("SELECT date(?, ?)", _today(ctx), f"-{start} days")
        days = sorted({d for d in played.values() if d >= first})
        msg = ctx.rng.choice(FRIEND_MESSAGES)
        befriend = _befriend_step(ctx, user, msg)

        def chosen(since: str, k: int, by_day: str = RIGHT, by_k: str = RIGHT) -> list[tuple[int, Step]]:
            counts = Counter(p for m, day in played.items() if _at_or_after(by_day)(day, since) for p, same in sides[m] if same)
            return _befrienders(counts, lambda n: _at_least(by_k)(n, k), befriend)

        options = []
        for since in days[1:]:
            for k in (2, 3, 4):
                targets = chosen(since, k)
                if not 8 <= len(targets) <= 40 or not _accepts(step for _, step in targets):
                    continue  # a teammate who asked first is among them: the clause bites
                try:
                    _conditions_bite(targets, chosen, since, k, by_day=SLIPPED, by_k=SLIPPED)
                except NoTarget:
                    continue
                options.append((since, k))
        since, k = ctx.choice(options, "a day and a count at which a teammate asked first")
        targets = chosen(since, k)
        query = self.phrase(ctx, k=k, date=pretty_day(since), msg=msg)
        return _player_draft(user, query, [step for _, step in targets], {"since": since, "k": k, "message": msg}, _hide([len(targets)], k))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        counts: Counter[int] = Counter()
        me = _profile(api)["player_id"]
        for match in api.all_pages("list_match_history", narrow={"start_date": stated["since"]}):
            if api.compare("since", match["started_at"][:10], ">=", stated["since"]):
                for player in api.call("get_match", match_id=match["match_id"])["players"]:
                    if player["side"] == match["side"] and player["player_id"] != me:
                        counts[player["player_id"]] += 1
        _befriend_frequent(api, counts, stated, "asked_first")


# -- favourite matches -----------------------------------------------------------------------


class FavouriteMvpWindow(MobaTemplate):
    name = "favourite_mvp_window"
    conditions = (Condition("mode", "filter"), Condition("mvp", "filter"), Condition("start", "boundary"), Condition("end", "boundary"))
    clauses = {"mode": "mode", "start": "start", "end": "end", "note": WRITTEN, "mvp": "mvp"}
    phrasings = (
        "Save to my favourites every {mode} match I played from {start} through {end} in which I was MVP, with the note '{note}'.",
        "Favourite all my MVP games in {mode} mode played from {start} up to and including {end}; note '{note}' on each.",
        "I was MVP in some {mode} matches played on or after {start} and no later than {end}. Put each of them in my "
        "favourites with the note '{note}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        stars = ctx.rows(
            "SELECT player_id, SUM(is_mvp) AS n FROM match_players GROUP BY player_id HAVING SUM(is_mvp) >= 15 ORDER BY player_id"
        )
        user = _weighted(ctx, [s["player_id"] for s in stars], [s["n"] for s in stars], "player")
        saved = _favourited(ctx, user)
        matches = [m for m in _my_matches(ctx, user) if m["id"] not in saved]
        by_mode = Counter(m["mode"] for m in matches if m["is_mvp"])
        modes = sorted(by_mode)
        mode = _weighted(ctx, modes, [by_mode[m] ** 2 for m in modes], "mode")
        qualifying = sorted({m["day"] for m in matches if m["mode"] == mode and m["is_mvp"]})
        if len(qualifying) < 10:
            raise NoTarget("few MVP days")
        third = len(qualifying) // 3
        start = qualifying[ctx.rng.randrange(1, third)]
        end = qualifying[ctx.rng.randrange(len(qualifying) - third, len(qualifying) - 1)]

        def chosen(by_mode: bool = True, by_mvp: bool = True, by_start: str = RIGHT, by_end: str = RIGHT) -> list[int]:
            return [
                m["id"]
                for m in matches
                if (m["mode"] == mode or not by_mode)
                and (m["is_mvp"] or not by_mvp)
                and _at_or_after(by_start)(m["day"], start)
                and _at_most(by_end)(m["day"], end)
            ]

        targets, note = _matches_to_save(ctx, chosen, 15, 70, by_mode=DROPPED, by_mvp=DROPPED, by_start=SLIPPED, by_end=SLIPPED)
        query = self.phrase(ctx, mode=mode, start=pretty_day(start), end=pretty_day(end), note=note)
        return _player_draft(
            user, query, _favourite_steps(targets, note), {"mode": mode, "start": start, "end": end, "note": note}, [len(targets)]
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        saved = _favourite_ids(api)
        narrow = {"mode": stated["mode"], "start_date": stated["start"], "end_date": stated["end"]}
        for match in api.all_pages("list_match_history", narrow=narrow):
            day = match["started_at"][:10]
            wanted = [
                api.keep("mode", match["mode"] == stated["mode"]),
                api.keep("mvp", match["is_mvp"]),
                api.compare("start", day, ">=", stated["start"]),
                api.compare("end", day, "<=", stated["end"]),
            ]
            if all(wanted) and match["match_id"] not in saved:
                _favourite(api, match, stated)


def _kda(kills: int, deaths: int, assists: int) -> Fraction:
    return Fraction(kills + assists, max(deaths, 1))


class FavouriteHighKdaWins(MobaTemplate):
    name = "favourite_high_kda_wins"
    conditions = (Condition("season", "filter"), Condition("won", "filter"), Condition("kda", "boundary"))
    clauses = {"kda": "kda", "note": WRITTEN, "season": "season", "won": "won"}
    phrasings = (
        "Favourite every match of the current season that I won with a KDA of at least {kda}, with the note '{note}'. KDA "
        "here is (kills + assists) divided by deaths, with deaths counted as 1 when I didn't die.",
        "This season's wins where my (kills + assists) / deaths reached {kda} or more (a game with no deaths divides by 1) "
        "deserve a place in my favourites: save each with '{note}' as the note.",
        "Note '{note}' on every win of mine in the current season whose KDA, (kills + assists) over deaths with zero deaths "
        "treated as one, is {kda} or higher: put those matches in my favourites.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        user = _draw(ctx, "player", _players_whose_matches("m.season_id = ? AND mp.result = 'win'", "COUNT(*) >= 15"), season)
        saved = _favourited(ctx, user)
        matches = [{**m, "kda": _kda(m["kills"], m["deaths"], m["assists"])} for m in _my_matches(ctx, user) if m["id"] not in saved]

        def chosen(cut: Fraction, by_season: bool = True, by_win: bool = True, by_kda: str = RIGHT) -> list[int]:
            return [
                m["id"]
                for m in matches
                if (m["season_id"] == season or not by_season) and (m["result"] == "win" or not by_win) and _at_least(by_kda)(m["kda"], cut)
            ]

        # A KDA a player would type: a whole number, or a half below 5.
        cuts = [Fraction(c) for c in ("2", "2.5", "3", "3.5", "4", "4.5", "5", "6", "7", "8", "10")]
        fits = []
        for cut in cuts:
            try:
                _bounded(chosen(cut), 15, 80, "matches")
                _conditions_bite(chosen(cut), chosen, cut, by_season=DROPPED, by_win=DROPPED, by_kda=ROUND)
            except NoTarget:
                continue
            fits.append(cut)
        cut = ctx.choice(fits, "a KDA that bites")
        targets, note = chosen(cut), ctx.rng.choice(MATCH_NOTES)
        kda = f"{float(cut):g}"
        query = self.phrase(ctx, kda=kda, note=note)
        return _player_draft(user, query, _favourite_steps(targets, note), {"kda": kda, "note": note}, _hide([len(targets)], float(cut)))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        season = _profile(api)["current_season"]["season_id"]
        saved = _favourite_ids(api)
        bound = Fraction(stated["kda"])
        for match in api.all_pages("list_match_history", narrow={"season_id": season, "result": "win"}):
            kda = _kda(match["kills"], match["deaths"], match["assists"])
            wanted = [
                api.keep("season", match["season_id"] == season),
                api.keep("won", match["result"] == "win"),
                api.compare("kda", kda, ">=", bound),
            ]
            if all(wanted) and match["match_id"] not in saved:
                _favourite(api, match, stated)


class TidyFavourites(MobaTemplate):
    name = "tidy_favourites"
    conditions = (
        Condition("losses", "filter"),
        Condition("season", "filter"),
        Condition("won", "filter"),
        Condition("top_k", "ranking", tie_break_stated=True),
    )
    clauses = {"k": "top_k", "note": WRITTEN, "losses": "losses", "season": "season", "won": "won"}
    phrasings = (
        "Tidy my favourite matches: unfavourite every saved match that I lost. Then make sure my {k} highest-scoring wins of "
        "the current season (by my score; between equal scores the more recent match ranks higher) are all in my "
        "favourites, adding the missing ones with the note '{note}'.",
        "I only want wins among my saved matches, so remove the losses from my favourites. After that, favourite whichever of "
        "my top {k} wins this season by score aren't saved yet, noting '{note}'; when two wins have the same score, the later "
        "one comes first.",
        "Rank my wins of this season by my score, best first and newer first on equal scores, and keep the first {k}: those "
        "should all end up in my favourites (add any that are missing with the note '{note}'). Also drop every lost match "
        "from my favourites.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        user = _draw(
            ctx,
            "player with saved wins and losses",
            "SELECT f.player_id FROM favourite_matches f JOIN match_players mp ON mp.match_id = f.match_id "
            "AND mp.player_id = f.player_id GROUP BY f.player_id HAVING SUM(mp.result = 'loss') >= 1 AND SUM(mp.result = 'win') >= 1 "
            "ORDER BY f.player_id",
        )
        saved = _favourited(ctx, user)
        matches = _my_matches(ctx, user)
        result = {m["id"]: m["result"] for m in matches}
        losses = sorted(m for m in saved if result[m] == "loss")

        def chosen(
            k: int, by_losses: bool = True, by_season: bool = True, by_win: bool = True, by_k: str = RIGHT
        ) -> tuple[tuple[int, ...], tuple[int, ...]]:
            dropped = sorted(m for m in saved if result[m] == "loss" or not by_losses)
            ranked = sorted(
                (m for m in matches if (m["season_id"] == season or not by_season) and (m["result"] == "win" or not by_win)),
                key=lambda m: (m["score"], m["started_at"], m["id"]),
                reverse=True,
            )
            top = ranked if by_k == IGNORED else ranked[: k + 1] if by_k == OFF else ranked[:k]
            kept = saved - set(dropped)
            return tuple(dropped), tuple(m["id"] for m in top if m["id"] not in kept)

        wins = [m for m in matches if m["season_id"] == season and m["result"] == "win"]
        ks = [k for k in range(5, 16) if k < len(wins)]
        ctx.rng.shuffle(ks)
        for k in ks:  # the first k at which every condition bites
            dropped, add = chosen(k)
            try:
                _conditions_bite((dropped, add), chosen, k, by_losses=DROPPED, by_season=DROPPED, by_win=DROPPED, by_k=SLIPPED)
            except NoTarget:
                continue
            if add:
                break
        else:
            raise NoTarget("no k at which every condition bites")
        note = ctx.rng.choice(MATCH_NOTES)
        query = self.phrase(ctx, k=k, note=note)
        return _player_draft(
            user,
            query,
            [Step("unfavourite_match", {"match_id": m}) for m in dropped] + _favourite_steps(add, note),
            {"k": k, "note": note},
            _hide([len(losses), len(add)], k),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        season = _profile(api)["current_season"]["season_id"]
        for saved in api.all_pages("list_favourite_matches"):
            if api.keep("losses", saved["result"] == "loss"):
                api.call("unfavourite_match", match_id=saved["match_id"])
        kept = _favourite_ids(api)
        wins = [
            m
            for m in api.all_pages("list_match_history", narrow={"season_id": season, "result": "win"})
            if api.keep("season", m["season_id"] == season) and api.keep("won", m["result"] == "win")
        ]
        ranked = sorted(wins, key=lambda m: (m["score"], m["started_at"], m["match_id"]), reverse=True)
        for match in api.top("top_k", ranked, stated["k"], lambda m: m["score"]):
            if match["match_id"] not in kept:
                _favourite(api, match, stated)


class FavouriteSharedWins(MobaTemplate):
    name = "favourite_shared_wins"
    conditions = (
        Condition("partner", "filter"),
        Condition("since", "boundary"),
        Condition("same_team", "filter"),
        Condition("won", "filter"),
    )
    clauses = {"nickname": "partner", "since": "since", "note": WRITTEN, "same_team": "same_team", "won": "won"}
    phrasings = (
        "Favourite every match on or after {date} that '{nick}' and I won together on the same team, with the note '{note}'.",
        "'{nick}' and I have been duoing a lot. Save to my favourites all matches from {date} on where we were teammates "
        "(same side) and our side won, noting '{note}'.",
        "Look for matches played on or after {date} in which '{nick}' was on my side and we got the win; each one goes into my "
        "favourites with the note '{note}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        pairs = ctx.rows(
            "SELECT a.player_id AS me, b.player_id AS other, COUNT(*) AS n FROM match_players a JOIN match_players b "
            "ON b.match_id = a.match_id AND b.player_id != a.player_id AND b.side = a.side WHERE a.result = 'win' "
            "GROUP BY a.player_id, b.player_id HAVING COUNT(*) >= 12 ORDER BY a.player_id, b.player_id"
        )
        pair = _weighted(ctx, pairs, [p["n"] for p in pairs], "pair")
        user, other = pair["me"], pair["other"]
        saved = _favourited(ctx, user)
        together = {
            s["id"]: s["same"]
            for s in ctx.rows(
                "SELECT a.match_id AS id, a.side = b.side AS same FROM match_players a JOIN match_players b "
                "ON b.match_id = a.match_id AND b.player_id = ? WHERE a.player_id = ? ORDER BY a.match_id",
                other,
                user,
            )
        }
        mine = [m for m in _my_matches(ctx, user) if m["id"] not in saved]
        days = sorted({m["day"] for m in mine if together.get(m["id"]) and m["result"] == "win"})
        if len(days) < 8:
            raise NoTarget("few shared wins")
        since = ctx.rng.choice(days[1 : len(days) // 2])

        def chosen(by_partner: bool = True, by_since: str = RIGHT, by_side: bool = True, by_win: bool = True) -> list[int]:
            return [
                m["id"]
                for m in mine
                if (m["id"] in together or not by_partner)
                and _at_or_after(by_since)(m["day"], since)
                and (together.get(m["id"], True) or not by_side)
                and (m["result"] == "win" or not by_win)
            ]

        targets, note = _matches_to_save(ctx, chosen, 15, 80, by_partner=DROPPED, by_since=SLIPPED, by_side=DROPPED, by_win=DROPPED)
        nick = _nickname(ctx, other)
        query = self.phrase(ctx, nick=nick, note=note, date=pretty_day(since))
        return Draft(
            user,
            query,
            _favourite_steps(targets, note),
            stated={"nickname": nick, "since": since, "note": note},
            hidden=[len(targets)],
            targets=_once(("player", user), ("pair", min(user, other), max(user, other))),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        other = _player_id(api, stated["nickname"])
        saved = _favourite_ids(api)
        since = {"start_date": stated["since"]}
        theirs = {m["match_id"]: m for m in api.all_pages("list_match_history", narrow=since, player_id=other)}
        for match in api.all_pages("list_match_history", narrow={**since, "result": "win"}):
            shared = theirs.get(match["match_id"])
            if not api.keep("partner", shared is not None):
                continue
            wanted = [
                api.compare("since", match["started_at"][:10], ">=", stated["since"]),
                api.keep("same_team", shared is None or shared["side"] == match["side"]),
                api.keep("won", match["result"] == "win"),
            ]
            if all(wanted) and match["match_id"] not in saved:
                _favourite(api, match, stated)


class FavouriteModeWinsSince(MobaTemplate):
    name = "favourite_mode_wins_since"
    conditions = (Condition("mode", "filter"), Condition("won", "filter"), Condition("since", "boundary"))
    clauses = {"mode": "mode", "since": "since", "note": WRITTEN, "won": "won"}
    phrasings = (
        "Save every {mode} match I won on or after {date} to my favourites with the note '{note}'.",
        "I'm building an archive of my {mode} victories: favourite each {mode} game I won from {date} on, noting '{note}'.",
        "Go through my whole match history starting {date} and put every win in {mode} mode into my favourites with '{note}' as the note.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        # The busiest players are drawn far more often: their archives are the suite's largest tasks.
        heavy = [
            h
            for h in ctx.rows(
                "SELECT player_id, COUNT(*) AS n FROM match_players WHERE result = 'win' GROUP BY player_id "
                "HAVING COUNT(*) >= 40 ORDER BY player_id"
            )
            if not self.drafted(("player", h["player_id"]))
        ]
        user = _weighted(ctx, [h["player_id"] for h in heavy], [h["n"] ** 6 for h in heavy], "player")
        saved = _favourited(ctx, user)
        matches = [m for m in _my_matches(ctx, user) if m["id"] not in saved]
        by_mode = Counter(m["mode"] for m in matches if m["result"] == "win")
        mode = max(sorted(by_mode), key=lambda m: by_mode[m])  # the mode they win most in
        days = sorted({m["day"] for m in matches if m["mode"] == mode and m["result"] == "win"})
        if len(days) < 8:
            raise NoTarget("few winning days")
        since = ctx.rng.choice(days[1 : max(2, len(days) // 8)])

        def chosen(by_mode: bool = True, by_win: bool = True, by_since: str = RIGHT) -> list[int]:
            return [
                m["id"]
                for m in matches
                if (m["mode"] == mode or not by_mode) and (m["result"] == "win" or not by_win) and _at_or_after(by_since)(m["day"], since)
            ]

        targets, note = _matches_to_save(ctx, chosen, 30, 200, by_mode=DROPPED, by_win=DROPPED, by_since=SLIPPED)
        query = self.phrase(ctx, mode=mode, date=pretty_day(since), note=note)
        return _player_draft(user, query, _favourite_steps(targets, note), {"mode": mode, "since": since, "note": note}, [len(targets)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        saved = _favourite_ids(api)
        narrow = {"mode": stated["mode"], "result": "win", "start_date": stated["since"]}
        for match in api.all_pages("list_match_history", narrow=narrow):
            wanted = [
                api.keep("mode", match["mode"] == stated["mode"]),
                api.keep("won", match["result"] == "win"),
                api.compare("since", match["started_at"][:10], ">=", stated["since"]),
            ]
            if all(wanted) and match["match_id"] not in saved:
                _favourite(api, match, stated)


# -- the hero shop ---------------------------------------------------------------------------


def _price_column(currency: str) -> str:
    return "price_coins" if currency == "coins" else "price_diamonds"


def _shop(ctx: GenContext, user: int) -> list[dict[str, Any]]:
    """Released shop heroes the player does not own, in the catalogue's name order."""
    return ctx.rows(
        "SELECT id, name, role, secondary_role, price_coins, price_diamonds, owner_count FROM heroes WHERE availability = 'shop' "
        "AND release_date <= ? AND id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = ?) ORDER BY name COLLATE NOCASE, id",
        _today(ctx),
        user,
    )


def _plays(hero: dict[str, Any], role: str) -> bool:
    return role in (hero["role"], hero["secondary_role"])


def _role_plural(role: str) -> str:
    return "marksmen" if role == "marksman" else f"{role}s"


class BuyHeroesOnBudget(MobaTemplate):
    name = "buy_heroes_on_budget"
    tries = 2
    conditions = (Condition("role", "filter"), Condition("cheapest_first", "ordering"), Condition("reserve", "boundary"))
    clauses = {"role": "role", "currency": WRITTEN, "reserve": "reserve", "cheapest_first": "cheapest_first"}
    phrasings = (
        "I want to try more {roles}. Buy {role} heroes I don't own yet (main or secondary role) with {currency}, cheapest "
        "first and alphabetically among equal prices, as long as I still have at least {reserve} {currency} after each "
        "purchase; stop at the first one that would take me below that.",
        "Spend {currency} on {role} heroes from the shop that I don't have (main or secondary role counts): start with the "
        "cheapest, go by name among equal prices, and keep buying in that order while my balance stays at {reserve} "
        "{currency} or more once the hero is paid for.",
        "Keep {reserve} {currency} in reserve and use the rest on {role} heroes (main or secondary role) I don't own, buying "
        "the cheapest first, alphabetical on ties, until the next one would take my balance below the reserve.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        currency = ctx.rng.choice(["coins", "coins", "diamonds"])
        floor = 20000 if currency == "coins" else 900
        user = _draw(ctx, "player with money", f"SELECT id FROM players WHERE {currency} >= ? ORDER BY id", floor)
        role = ctx.rng.choice(ROLES)
        balance = ctx.value(f"SELECT {currency} FROM players WHERE id = ?", user)
        column = _price_column(currency)
        shop = _shop(ctx, user)

        def bought(reserve: int, by_role: bool = True, by_price: bool = True, by_reserve: str = RIGHT) -> list[int]:
            heroes = [h for h in shop if _plays(h, role) or not by_role]
            if by_price:
                heroes = sorted(heroes, key=lambda h: (h[column], h["name"].casefold()))
            left, out = balance, []
            for hero in heroes:
                if by_reserve == IGNORED:
                    if hero[column] <= left:  # the shop refuses what the balance does not cover; a sloppy buyer goes on
                        out.append(hero["id"])
                        left -= hero[column]
                    continue
                if not _at_least(by_reserve)(left - hero[column], reserve):
                    break
                out.append(hero["id"])
                left -= hero[column]
            return out

        # A reserve the player would choose: whole thousands of coins, hundreds of diamonds.
        step = 1000 if currency == "coins" else 100
        prices = {h[column] for h in shop}
        options = []
        for reserve in range(step, balance, step):
            targets = bought(reserve)
            spent = sum(h[column] for h in shop if h["id"] in targets)
            if len(targets) < 2 or reserve in prices or reserve in (spent, balance - spent):
                continue  # a reserve that the purchases reach exactly is the answer's number, not the user's
            try:
                _conditions_bite(targets, bought, reserve, by_role=DROPPED, by_price=DROPPED, by_reserve=ROUND)
            except NoTarget:
                continue
            options.append(reserve)
        reserve = ctx.choice(options, "reserve")
        targets = bought(reserve)
        query = self.phrase(ctx, role=role, roles=_role_plural(role), currency=currency, reserve=reserve)
        return _player_draft(
            user,
            query,
            [Step("buy_hero", {"hero_id": h, "currency": currency}) for h in targets],
            {"role": role, "currency": currency, "reserve": reserve},
            _hide([len(targets), balance], reserve),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        currency, column = stated["currency"], _price_column(stated["currency"])
        left = _profile(api)["wallet"][currency]
        narrow = {"role": stated["role"], **({"sort_by": "price"} if currency == "coins" else {})}
        heroes = [
            h
            for h in api.all_pages("search_heroes", narrow=narrow, availability="shop", owned=False, sort_by="name")
            if h["released"] and api.keep("role", stated["role"] in (h["role"], h["secondary_role"]))
        ]
        for hero in api.order("cheapest_first", heroes, key=lambda h: (h[column], h["name"].casefold())):
            if not api.compare("reserve", left - hero[column], ">=", stated["reserve"]):
                break
            if api.call("buy_hero", hero_id=hero["hero_id"], currency=currency) is not None:
                left -= hero[column]


def _top_hero(ctx: GenContext, player: int) -> int | None:
    """The player's hero with the most proficiency; None when two share the top."""
    top = ctx.rows("SELECT hero_id, proficiency FROM player_heroes WHERE player_id = ? ORDER BY proficiency DESC, hero_id LIMIT 2", player)
    if not top or (len(top) == 2 and top[0]["proficiency"] == top[1]["proficiency"]):
        return None
    hero: int | None = top[0]["hero_id"]
    return hero


class BuyFriendsTopHeroes(MobaTemplate):
    name = "buy_friends_top_heroes"
    conditions = (Condition("closest", "ranking"),)
    clauses = {"k": "closest", "currency": WRITTEN, "mode": WRITTEN, "name": WRITTEN}
    phrasings = (
        "Take my {k} closest friends (highest intimacy). For each of them, find the hero they have the most proficiency with "
        "and buy it for me with {currency}. Then open a {mode} room called '{name}' and invite those {k} friends.",
        "I want to play what my best friends play, with them. For each of the {k} friends I have the highest intimacy with, "
        "buy me the hero with their highest proficiency, paying {currency}; afterwards create a {mode} room named '{name}' "
        "and invite the same friends.",
        "Open a {mode} room '{name}' for my {k} most intimate friends and invite them, but first get me, with {currency}, "
        "each hero that one of them has their top proficiency with.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _host_candidates(ctx, FRIENDLY_HOSTS)
        friends = ctx.rows(
            "SELECT other_id, intimacy FROM relations WHERE player_id = ? AND kind = 'friend' ORDER BY intimacy DESC, other_id", user
        )
        shop = {h["id"]: h for h in _shop(ctx, user)}
        ks = [k for k in range(2, 6) if k < len(friends) and friends[k - 1]["intimacy"] != friends[k]["intimacy"]]
        k = ctx.choice(ks, "k without a tie")
        heroes: list[int] = []
        for friend in friends[: k + 1]:
            hero = _top_hero(ctx, friend["other_id"])
            if hero is None:
                raise NoTarget("a friend with two top heroes")
            heroes.append(hero)
        bought: list[int] = []
        for hero in heroes[:k]:
            if hero in shop and hero not in bought:
                bought.append(hero)
        _bounded(bought, 1, 6, "heroes")
        wallet = ctx.one("SELECT coins, diamonds FROM players WHERE id = ?", user) or {}
        currency = ctx.choice(
            [c for c in ("coins", "diamonds") if sum(shop[h][_price_column(c)] for h in bought) <= wallet[c]], "currency that covers it"
        )
        mode = ctx.rng.choice(["classic", "brawl", "custom"] + (["ranked"] if k <= 4 else []))
        name = _room_name(ctx)
        query = self.phrase(ctx, k=k, currency=currency, mode=mode, name=name) + _leave_note(ctx, user)
        steps = [Step("buy_hero", {"hero_id": h, "currency": currency}) for h in bought]
        steps += _room_steps(len(steps), [f["other_id"] for f in friends[:k]], name=name, mode=mode)
        return _player_draft(user, query, steps, {"k": k, "currency": currency, "mode": mode, "name": name}, _hide([len(bought)], k))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        friends = sorted(api.all_pages("list_friends", sort_by="intimacy"), key=lambda f: (-f["intimacy"], f["player_id"]))
        closest = api.top("closest", friends, stated["k"], lambda f: f["intimacy"])
        done: set[int] = set()
        for friend in closest:
            top = api.call("get_player", player_id=friend["player_id"])["top_heroes"]
            if not top or top[0]["hero_id"] in done:
                continue
            hero = api.call("get_hero", hero_id=top[0]["hero_id"])
            if hero["availability"] == "shop" and hero["released"] and not hero["owned_by_me"]:
                api.call("buy_hero", hero_id=hero["hero_id"], currency=stated["currency"])
                done.add(hero["hero_id"])
        _host_room(api, [f["player_id"] for f in closest], name=stated["name"], mode=stated["mode"])


class BuyPopularHeroes(MobaTemplate):
    name = "buy_popular_heroes"
    tries = 4
    conditions = (Condition("role", "filter"), Condition("not_owned", "filter"), Condition("most_owned", "ranking", tie_break_stated=True))
    clauses = {"k": "most_owned", "role": "role", "currency": WRITTEN, "not_owned": "not_owned"}
    phrasings = (
        "Buy me, with {currency}, the {k} most popular {role} heroes in the shop (most owners first, alphabetical on equal "
        "counts) among those I don't own yet; main or secondary role counts.",
        "Which {roles} do most players own? Of the shop's {role} heroes (main or secondary role) that I don't have, take the "
        "{k} with the highest number of owners, breaking ties by name, and buy them with {currency}.",
        "Pay {currency} for {k} heroes: the shop heroes with {role} as their main or secondary role that I'm missing and that "
        "the most players own (if owner counts tie, go alphabetically).",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        currency = ctx.rng.choice(["coins", "diamonds"])
        user = _draw(
            ctx, "player with money", f"SELECT id FROM players WHERE {currency} >= ? ORDER BY id", 15000 if currency == "coins" else 700
        )
        owned = set(ctx.column("SELECT hero_id FROM player_heroes WHERE player_id = ?", user))
        catalogue = ctx.rows(
            "SELECT id, name, role, secondary_role, owner_count, price_coins, price_diamonds FROM heroes "
            "WHERE availability = 'shop' AND release_date <= ? ORDER BY id",
            _today(ctx),
        )
        balance = ctx.value(f"SELECT {currency} FROM players WHERE id = ?", user)
        column = _price_column(currency)

        def bought(role: str, k: int, by_role: bool = True, by_owned: bool = True, by_k: str = RIGHT) -> list[int]:
            heroes = sorted(
                (h for h in catalogue if (_plays(h, role) or not by_role) and (h["id"] not in owned or not by_owned)),
                key=lambda h: (-h["owner_count"], h["name"].casefold()),
            )
            top = heroes if by_k == IGNORED else heroes[: k + 1] if by_k == OFF else heroes[:k]
            out, left = [], balance
            for hero in top:
                if hero["id"] not in owned and hero[column] <= left:
                    out.append(hero["id"])
                    left -= hero[column]
            return out

        options = [(role, k) for role in ROLES for k in (2, 3, 4, 5, 6)]
        ctx.rng.shuffle(options)
        for role, k in options:
            targets = bought(role, k)
            if len(targets) < k:
                continue  # not affordable
            try:
                _conditions_bite(targets, bought, role, k, by_role=DROPPED, by_owned=DROPPED, by_k=SLIPPED)
            except NoTarget:
                continue
            break
        else:
            raise NoTarget("no role and k that bite and are affordable")
        query = self.phrase(ctx, k=k, role=role, roles=_role_plural(role), currency=currency)
        return _player_draft(
            user,
            query,
            [Step("buy_hero", {"hero_id": h, "currency": currency}) for h in targets],
            {"k": k, "role": role, "currency": currency},
            [balance],
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        heroes = [
            h
            for h in api.all_pages(
                "search_heroes", narrow={"role": stated["role"], "owned": False}, availability="shop", sort_by="popularity"
            )
            if h["released"]
            and api.keep("role", stated["role"] in (h["role"], h["secondary_role"]))
            and api.keep("not_owned", not h["owned_by_me"])
        ]
        ranked = sorted(heroes, key=lambda h: (-h["owner_count"], h["name"].casefold()))
        for hero in api.top("most_owned", ranked, stated["k"], lambda h: h["owner_count"]):
            if not hero["owned_by_me"]:
                api.call("buy_hero", hero_id=hero["hero_id"], currency=stated["currency"])


# -- rooms -----------------------------------------------------------------------------------


def _leave_note(ctx: GenContext, user: int) -> str:
    """Opening a room leaves the one the player is in (dissolving it if theirs): the query says so."""
    if ctx.value("SELECT COUNT(*) FROM room_members m JOIN rooms r ON r.id = m.room_id WHERE m.player_id = ? AND r.status = 'open'", user):
        return " It's fine to leave the room I'm in now (closing it if it's mine)."
    return ""


def _room_steps(at: int, players: Iterable[int], **room: Any) -> list[Step]:
    """Create a room (step `at` of the draft) and invite `players` to it."""
    return [Step("create_room", room)] + [Step("invite_to_room", {"room_id": ref(at, "room_id"), "player_id": p}) for p in players]


def _host_room(api: PublicAPI, players: Iterable[int], **room: Any) -> None:
    """Create a room and invite `players` to it."""
    created = api.call("create_room", creates="room_id", **room)
    for player in players:
        api.call("invite_to_room", room_id=created["room_id"], player_id=player)


def _host_candidates(ctx: GenContext, sql: str, *params: Any) -> int:
    user: int = _draw(ctx, "host", sql, *params)
    if not _free_to_host(ctx, user):
        raise NoTarget("in a running game")
    return user


class HostRoomForFriends(MobaTemplate):
    name = "host_room_for_friends"
    tries = 2
    conditions = (Condition("tier", "boundary"), Condition("not_in_match", "filter"))
    clauses = {"tier": "tier", "mode": WRITTEN, "name": WRITTEN, "not_in_match": "not_in_match"}
    phrasings = (
        "Open a {mode} room called '{name}' and invite every friend of mine who is currently ranked {tier} or higher "
        "and isn't in a match right now.",
        "Create a {mode} room named '{name}', then send an invitation to each of my friends at {tier} rank or above who is "
        "not currently in a match.",
        "I'm hosting: a {mode} room '{name}'. Invite all friends whose current rank is at least {tier}, leaving out anyone "
        "who is playing a match at the moment.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _host_candidates(ctx, FRIENDLY_HOSTS)
        friends = ctx.rows(
            f"SELECT p.id, {TIER_P} AS tier, p.status FROM relations r JOIN players p ON p.id = r.other_id "
            "WHERE r.player_id = ? AND r.kind = 'friend' ORDER BY p.id",
            user,
        )

        def invited(cut: int, by_tier: str = RIGHT, by_status: bool = True) -> list[int]:
            return [f["id"] for f in friends if _at_least(by_tier)(f["tier"], cut) and (f["status"] != "in_match" or not by_status)]

        cuts = sorted({f["tier"] for f in friends if f["status"] != "in_match"})
        cut = ctx.choice(cuts[1 : max(2, len(cuts) // 2 + 1)], "tier cut")
        targets = _bounded(invited(cut), 3, 9, "friends")
        _conditions_bite(targets, invited, cut, by_tier=SLIPPED, by_status=DROPPED)
        mode = ctx.rng.choice(["classic", "brawl", "custom"] + (["ranked"] if len(targets) <= 4 else []))
        name = _room_name(ctx)
        query = self.phrase(ctx, mode=mode, name=name, tier=TIERS[cut]) + _leave_note(ctx, user)
        return _player_draft(
            user,
            query,
            _room_steps(0, targets, name=name, mode=mode),
            {"mode": mode, "name": name, "tier": TIERS[cut]},
            [len(targets)],
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        friends = [
            f
            for f in api.all_pages("list_friends")
            if api.compare("tier", _tier(f["tier"]), ">=", _tier(stated["tier"])) & api.keep("not_in_match", f["status"] != "in_match")
        ]
        _host_room(api, [f["player_id"] for f in friends], name=stated["name"], mode=stated["mode"])


class ClanPracticeRoom(MobaTemplate):
    name = "clan_practice_room"
    tries = 2
    conditions = (Condition("not_in_match", "filter"),)
    readings = (CLAN_READING,)
    clauses = {"name": WRITTEN, "password": WRITTEN, "not_in_match": "not_in_match"}
    phrasings = (
        "Set up a clan practice: open a custom room '{name}' with password {pw}, exactly big enough for me plus every member of "
        "my clan, whatever their role, who isn't in a match right now, and invite all of those clanmates.",
        "Create a password-protected custom room called '{name}' (password {pw}). Its capacity should be the number of my "
        "clanmates (any clan role) who are not currently in a match, plus one for me. Then invite each of them.",
        "My clanmates who aren't playing a match at the moment, whatever their clan role, should all get an invitation to a "
        "new custom room '{name}' (password {pw}) that has room for them and me and not a single place more.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _host_candidates(ctx, CLAN_MEMBERS)
        team = _clan_of(ctx, user)
        mates = ctx.rows(
            "SELECT p.id, p.status FROM team_members m JOIN players p ON p.id = m.player_id WHERE m.team_id = ? "
            "AND p.id != ? ORDER BY p.id",
            team,
            user,
        )
        free = [m["id"] for m in mates if m["status"] != "in_match"]
        _bounded(free, 2, 9, "free clanmates")
        if len(free) == len(mates):
            raise NoTarget("every clanmate is free: the filter would exclude nothing")
        if any(_blocked_either_way(ctx, user, m["id"]) for m in mates):
            raise NoTarget("a block inside the clan")
        name, pw = _room_name(ctx), ctx.rng.choice(PASSWORDS)
        query = self.phrase(ctx, name=name, pw=pw) + _leave_note(ctx, user)
        return Draft(
            user,
            query,
            _room_steps(0, free, name=name, mode="custom", capacity=len(free) + 1, password=pw),
            stated={"name": name, "password": pw},
            hidden=[len(free), len(free) + 1],
            targets=_once(("player", user), ("clan", team)),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        mates = [m for m in _clan_mates(api, _profile(api)) if api.keep("not_in_match", m["status"] != "in_match")]
        _host_room(
            api, [m["player_id"] for m in mates], name=stated["name"], mode="custom", capacity=len(mates) + 1, password=stated["password"]
        )


class ReopenRoom(MobaTemplate):
    name = "reopen_room"
    conditions = (Condition("invited_too", "filter"),)
    clauses = {"mode": WRITTEN, "name": WRITTEN, "invited_too": "invited_too"}
    phrasings = (
        "Close the room I currently own and open a new {mode} room called '{name}' instead. Invite everyone who was in my old "
        "room, plus everyone who had a pending invitation to it.",
        "I want to switch my room to {mode}: dissolve my current room, create a {mode} room named '{name}', and invite all the "
        "people from the old room (members and those still invited) to the new one.",
        "Move my group to a fresh {mode} room '{name}': everyone in the room I own now and everyone I or others invited to it "
        "but who hasn't answered yet gets an invitation to the new room, and the old room is dissolved.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        room = ctx.choice(ctx.rows("SELECT id, owner_id, mode FROM rooms WHERE status = 'open' ORDER BY id"), "open room")
        user = room["owner_id"]
        members = ctx.column(
            "SELECT player_id FROM room_members WHERE room_id = ? AND player_id != ? ORDER BY joined_at, player_id", room["id"], user
        )
        invited = ctx.column(
            "SELECT invitee_id FROM room_invitations WHERE room_id = ? AND status = 'pending' ORDER BY sent_at, id", room["id"]
        )
        extra = [p for p in invited if p not in members and p != user]
        if not extra:
            raise NoTarget("nobody invited who is not in the room: the clause would add nobody")
        people = members + extra
        _bounded(people, 2, 15, "people")
        if any(_blocked_either_way(ctx, user, p) for p in people):
            raise NoTarget("a block in the way")
        mode = ctx.choice([m for m in ("ranked", "classic", "brawl", "custom") if m != room["mode"]], "mode")
        name = _room_name(ctx)
        query = self.phrase(ctx, mode=mode, name=name)
        return Draft(
            user,
            query,
            [Step("dissolve_room", {"room_id": room["id"]})] + _room_steps(1, people, name=name, mode=mode),
            stated={"mode": mode, "name": name},
            hidden=[len(people)],
            targets=_once(("player", user), ("room", room["id"])),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        old = _profile(api)["room"]["room_id"]
        room = api.call("get_room", room_id=old)
        people = [m["player_id"] for m in room["members"] if not m["is_owner"]]
        if api.heeds("invited_too"):
            people += [i["invitee_id"] for i in room["pending_invitations"] if i["invitee_id"] not in people]
        api.call("dissolve_room", room_id=old)
        _host_room(api, people, name=stated["name"], mode=stated["mode"])


class RoomForFrequentTeammates(MobaTemplate):
    name = "room_for_frequent_teammates"
    conditions = (Condition("season", "filter"), Condition("most_often", "ranking"))
    clauses = {"k": "most_often", "mode": WRITTEN, "name": WRITTEN, "season": "season"}
    phrasings = (
        "Open a {mode} room called '{name}' and invite the {k} players who were on my team most often in my matches of the current season.",
        "Count, over my matches this season, how many times each player was on my side; the {k} with the highest counts get "
        "an invitation to a new {mode} room named '{name}'.",
        "Who have I teamed up with most this season? Create a {mode} room '{name}' and invite the top {k} of them by number of "
        "matches played on my team.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        user = _host_candidates(ctx, _players_whose_matches("m.season_id = ?", "COUNT(*) BETWEEN 8 AND 120"), season)
        played = {m["id"]: m["season_id"] for m in _my_matches(ctx, user)}
        sides = _sides(ctx, user)

        def ranking(by_season: bool = True) -> list[tuple[int, int]]:
            counts = Counter(p for m, s in played.items() if s == season or not by_season for p, same in sides[m] if same)
            return sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))

        ranked, everyone = ranking(), ranking(by_season=False)
        ks = [
            k
            for k in (3, 4, 5, 6, 7, 8)
            if k < len(ranked) and ranked[k - 1][1] != ranked[k][1] and (k >= len(everyone) or everyone[k - 1][1] != everyone[k][1])
        ]
        k = ctx.choice(ks, "k without a tie")
        if any(_blocked_either_way(ctx, user, p) for p, _ in ranked[: k + 1] + everyone[:k]):
            raise NoTarget("a block in the way")

        def invited(by_season: bool = True, by_k: str = RIGHT) -> list[int]:
            pool = ranked if by_season else everyone
            top = pool if by_k == IGNORED else pool[: k + 1] if by_k == OFF else pool[:k]
            return sorted(p for p, _ in top)

        targets = invited()
        _conditions_bite(targets, invited, by_season=DROPPED, by_k=SLIPPED)
        mode = ctx.rng.choice(["classic", "brawl", "custom"] + (["ranked"] if k <= 4 else []))
        name = _room_name(ctx)
        query = self.phrase(ctx, k=k, mode=mode, name=name) + _leave_note(ctx, user)
        return _player_draft(
            user,
            query,
            _room_steps(0, targets, name=name, mode=mode),
            {"k": k, "mode": mode, "name": name},
            [],
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)
        season = me["current_season"]["season_id"]
        counts: Counter[int] = Counter()
        for match in api.all_pages("list_match_history", narrow={"season_id": season}):
            if api.keep("season", match["season_id"] == season):
                for player in api.call("get_match", match_id=match["match_id"])["players"]:
                    if player["side"] == match["side"] and player["player_id"] != me["player_id"]:
                        counts[player["player_id"]] += 1
        ranked = sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))
        chosen = api.top("most_often", ranked, stated["k"], lambda pc: pc[1])
        _host_room(api, [p for p, _ in chosen], name=stated["name"], mode=stated["mode"])


class JoinRoomAndInvite(MobaTemplate):
    name = "join_room_and_invite"
    conditions = (Condition("online", "filter"), Condition("tier", "boundary"))
    clauses = {"tier": "tier", "online": "online"}
    phrasings = (
        "Accept the room invitation that is waiting for me, then invite to that room every friend of mine whose status is "
        "online (not offline, not in a match) and who is currently ranked {tier} or higher.",
        "I'm joining the room I've been invited to: accept my pending room invitation. Once I'm in, invite my friends whose "
        "status is online and whose rank is {tier} or above.",
        "Say yes to my one pending room invitation. After that, every friend with the status online (a friend in a match "
        "doesn't count) at {tier} rank or higher should get an invitation to the same room from me.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        invitation = ctx.choice(
            ctx.rows(
                "SELECT i.id, i.invitee_id, i.room_id FROM room_invitations i JOIN rooms r ON r.id = i.room_id "
                "WHERE i.status = 'pending' AND r.status = 'open' AND r.member_count + 1 < r.capacity AND (SELECT COUNT(*) "
                "FROM room_invitations o WHERE o.invitee_id = i.invitee_id AND o.status = 'pending') = 1 ORDER BY i.id"
            ),
            "invitation",
        )
        user, room = invitation["invitee_id"], invitation["room_id"]
        if not _free_to_host(ctx, user):
            raise NoTarget("in a running game")
        taken = set(
            ctx.column(
                "SELECT player_id FROM room_members WHERE room_id = ? UNION SELECT invitee_id FROM room_invitations "
                "WHERE room_id = ? AND status = 'pending'",
                room,
                room,
            )
        )
        friends = ctx.rows(
            f"SELECT p.id, {TIER_P} AS tier, p.status FROM relations r JOIN players p ON p.id = r.other_id "
            "WHERE r.player_id = ? AND r.kind = 'friend' ORDER BY p.id",
            user,
        )
        friends = [f for f in friends if f["id"] not in taken]
        capacity = ctx.value("SELECT capacity - member_count - 1 FROM rooms WHERE id = ?", room)

        def invited(cut: int, by_online: bool = True, by_tier: str = RIGHT) -> list[int]:
            return [f["id"] for f in friends if (f["status"] == "online" or not by_online) and _at_least(by_tier)(f["tier"], cut)]

        cuts = []
        for cut in sorted({f["tier"] for f in friends if f["status"] == "online"})[1:]:
            try:
                _bounded(invited(cut), 1, 9, "friends")
                _conditions_bite(invited(cut), invited, cut, by_online=DROPPED, by_tier=SLIPPED)
            except NoTarget:
                continue
            cuts.append(cut)
        cut = ctx.choice(cuts, "tier cut")
        targets = invited(cut)
        if capacity < 1:
            raise NoTarget("no place to invite to")
        query = self.phrase(ctx, tier=TIERS[cut]) + _leave_note(ctx, user)
        return Draft(
            user,
            query,
            [Step("answer_room_invitation", {"invitation_id": invitation["id"], "accept": True})]
            + [Step("invite_to_room", {"room_id": room, "player_id": p}) for p in targets],
            stated={"tier": TIERS[cut]},
            hidden=[len(targets)],
            targets=_once(("player", user), ("room", room)),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        invitations = api.all_pages("list_room_invitations", direction="received", status="pending")
        if len(invitations) != 1:
            raise PublicSolverFailed(f"{len(invitations)} pending room invitations, not one")
        invitation = invitations[0]
        api.call("answer_room_invitation", invitation_id=invitation["invitation_id"], accept=True)
        room = api.call("get_room", room_id=invitation["room_id"])
        taken = {m["player_id"] for m in room["members"]} | {i["invitee_id"] for i in room["pending_invitations"]}
        for friend in api.all_pages("list_friends", narrow={"status": "online"}):
            online = api.keep("online", friend["status"] == "online")
            ranked = api.compare("tier", _tier(friend["tier"]), ">=", _tier(stated["tier"]))
            if online and ranked and friend["player_id"] not in taken:
                api.call("invite_to_room", room_id=invitation["room_id"], player_id=friend["player_id"])


# -- clans -----------------------------------------------------------------------------------


class ReviewClanApplications(MobaTemplate):
    name = "review_clan_applications"
    conditions = (Condition("level", "boundary"), Condition("tier", "boundary"))
    clauses = {"level": "level", "tier": "tier"}
    phrasings = (
        "Review the pending applications to my clan: approve every applicant at level {level} or higher who is currently "
        "ranked {tier} or above, and reject all the other pending ones.",
        "Go through my clan's pending applications. Applicants who have reached level {level} and hold a {tier} rank or "
        "better get approved; everyone else who is waiting gets rejected.",
        "Clear my clan's application queue: yes to players ranked {tier} or higher with a level of at least {level}, no to "
        "every other pending application.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        officer = ctx.choice(
            ctx.rows(
                "SELECT m.player_id, m.team_id FROM team_members m JOIN teams t ON t.id = m.team_id WHERE m.role IN ('leader', 'vice_leader') "
                "AND t.member_count < t.capacity AND (SELECT COUNT(*) FROM team_applications a WHERE a.team_id = m.team_id "
                "AND a.status = 'pending') >= 4 ORDER BY m.player_id"
            ),
            "clan officer",
        )
        team = ctx.one("SELECT member_count, capacity FROM teams WHERE id = ?", officer["team_id"]) or {}
        apps = ctx.rows(
            f"SELECT a.id, p.level, {TIER_P} AS tier, (SELECT COUNT(*) FROM team_members m WHERE m.player_id = a.player_id) AS in_clan "
            "FROM team_applications a JOIN players p ON p.id = a.player_id WHERE a.team_id = ? AND a.status = 'pending' "
            "ORDER BY a.applied_at, a.id",
            officer["team_id"],
        )
        places = team["capacity"] - team["member_count"]

        def approved(level: int, tier: int, by_level: str = RIGHT, by_tier: str = RIGHT) -> list[int]:
            return [a["id"] for a in apps if _at_least(by_level)(a["level"], level) and _at_least(by_tier)(a["tier"], tier)]

        options = []
        for level in range(10, 60, 5):  # a level a player would name: a multiple of five
            for tier in sorted({a["tier"] for a in apps})[1:]:
                chosen = approved(level, tier)
                if not chosen or len(chosen) > places or any(a["in_clan"] for a in apps if a["id"] in chosen):
                    continue  # every approval must go through: a free place each, nobody already in a clan
                try:
                    _conditions_bite(chosen, approved, level, tier, by_level=ROUND, by_tier=SLIPPED)
                except NoTarget:
                    continue
                options.append((level, tier))
        level, tier = ctx.choice(options, "level and tier that both bite")
        chosen = approved(level, tier)
        steps = [
            Step("approve_team_application" if a["id"] in chosen else "reject_team_application", {"application_id": a["id"]}) for a in apps
        ]
        query = self.phrase(ctx, level=level, tier=TIERS[tier])
        return Draft(
            officer["player_id"],
            query,
            steps,
            stated={"level": level, "tier": TIERS[tier]},
            hidden=_hide([len(chosen), len(apps), places], level),
            targets=_once(("player", officer["player_id"]), ("clan", officer["team_id"])),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        for application in api.all_pages("list_team_applications", status="pending"):
            high = api.compare("level", application["level"], ">=", stated["level"])
            ranked = api.compare("tier", _tier(application["tier"]), ">=", _tier(stated["tier"]))
            if high and ranked:
                api.call("approve_team_application", application_id=application["application_id"])
            else:
                api.call("reject_team_application", application_id=application["application_id"])


class ClanTopContributor(MobaTemplate):
    name = "clan_top_contributor"
    conditions = (Condition("top_contributor", "ranking"), Condition("since", "boundary"), Condition("same_team", "filter"))
    readings = (CLAN_READING,)
    clauses = {"since": "since", "note": WRITTEN, "message": WRITTEN, "same_team": "same_team"}
    phrasings = (
        "Find the member of my clan with the highest contribution apart from me, whatever their role. Favourite every match "
        "on or after {date} in which they played on my team, with the note '{note}', and send them a friend request saying "
        "'{msg}'.",
        "Our clan's top contributor (not counting me; any clan role) deserves some love: save to my favourites all matches "
        "from {date} on where we were on the same side, noting '{note}', and send them a friend request with the message "
        "'{msg}'.",
        "Who contributes most to my clan apart from me (any clan role counts)? Add them as a friend ('{msg}'), then "
        "put every match played on or after {date} where they were my teammate into my favourites with '{note}' as the note.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(ctx, "clan member", CLAN_MEMBERS)
        team = _clan_of(ctx, user)
        mates = ctx.rows(
            "SELECT player_id, contribution FROM team_members WHERE team_id = ? AND player_id != ? ORDER BY contribution DESC, player_id",
            team,
            user,
        )
        if len(mates) < 3 or mates[0]["contribution"] == mates[1]["contribution"]:
            raise NoTarget("no single top contributor")
        top = mates[0]["player_id"]
        if _relation(ctx, user, top) != "free":
            raise NoTarget("already friends, a pending request or a block with the top contributor")
        saved = _favourited(ctx, user)
        note, msg = ctx.rng.choice(MATCH_NOTES), ctx.rng.choice(FRIEND_MESSAGES)
        shared = {
            m["player_id"]: ctx.rows(
                "SELECT a.match_id AS id, substr(x.started_at, 1, 10) AS day, a.side = b.side AS same FROM match_players a "
                "JOIN match_players b ON b.match_id = a.match_id AND b.player_id = ? JOIN matches x ON x.id = a.match_id "
                "WHERE a.player_id = ? ORDER BY a.match_id",
                m["player_id"],
                user,
            )
            for m in mates
        }
        days = sorted({s["day"] for s in shared[top] if s["same"] and s["id"] not in saved})
        if len(days) < 4:
            raise NoTarget("few matches together")
        since = ctx.rng.choice(days[1 : max(2, len(days) // 2)])
        befriend = _befriend_steps(ctx, user, [m["player_id"] for m in mates], msg)

        def chosen(n: int | None = 1, by_since: str = RIGHT, by_side: bool = True) -> tuple[tuple[int, ...], tuple[int, ...]]:
            who = [m["player_id"] for m in (mates if n is None else mates[:n])]
            games = sorted(
                {
                    s["id"]
                    for p in who
                    for s in shared[p]
                    if _at_or_after(by_since)(s["day"], since) and (s["same"] or not by_side) and s["id"] not in saved
                }
            )
            return tuple(games), tuple(p for p in who if p in befriend)

        games, asked = chosen()
        _bounded(list(games), 10, 70, "matches")
        _differs((games, asked), chosen(2), chosen(None), chosen(by_since=OFF), chosen(by_since=IGNORED), chosen(by_side=False))
        steps = _favourite_steps(games, note) + [befriend[p] for p in asked]
        query = self.phrase(ctx, note=note, msg=msg, date=pretty_day(since))
        return Draft(
            user,
            query,
            steps,
            stated={"since": since, "note": note, "message": msg},
            hidden=[len(games)],
            targets=_once(("player", user), ("player", top)),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)
        ranked = sorted(_clan_mates(api, me), key=lambda m: (-m["contribution"], m["player_id"]))
        chosen = api.top("top_contributor", ranked, 1, lambda m: m["contribution"])
        saved = _favourite_ids(api)
        since = {"start_date": stated["since"]}
        mine = api.all_pages("list_match_history", narrow=since)
        for mate in chosen:
            theirs = {m["match_id"]: m for m in api.all_pages("list_match_history", narrow=since, player_id=mate["player_id"])}
            for match in mine:
                shared = theirs.get(match["match_id"])
                if shared is None or match["match_id"] in saved:
                    continue
                recent = api.compare("since", match["started_at"][:10], ">=", stated["since"])
                if recent & api.keep("same_team", shared["side"] == match["side"]):
                    _favourite(api, match, stated)
                    saved.add(match["match_id"])
        for mate in chosen:
            _befriend(api, mate["player_id"], stated["message"])


# -- leaderboards ----------------------------------------------------------------------------


class LeaderboardFriendRequests(MobaTemplate):
    name = "leaderboard_friend_requests"
    conditions = (Condition("season", "filter"), Condition("region", "filter"), Condition("tier", "boundary"))
    clauses = {"season": "season", "tier": "tier", "message": WRITTEN, "region": "region"}
    phrasings = (
        "I want strong friends from home. Send a friend request saying '{msg}' to every player of my region who finished "
        "{season} ranked {tier} or higher.",
        "Go through the {season} leaderboard: everyone from my region whose final rank that season was {tier} or above should "
        "get a friend request from me ('{msg}').",
        "Players in my region who ended {season} at {tier} or better: send them all a friend request with the message '{msg}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        current = _current_season(ctx)
        season = ctx.rng.choice([current - 1, current - 2, current - 3])
        user = _draw(ctx, "player", "SELECT id FROM players ORDER BY id")
        region = ctx.value("SELECT region FROM players WHERE id = ?", user)
        msg = ctx.rng.choice(FRIEND_MESSAGES)

        def board(of: int) -> list[dict[str, Any]]:
            return ctx.rows(
                f"SELECT r.player_id, {tier_index('r.tier')} AS tier, p.region FROM season_ranks r "
                "JOIN players p ON p.id = r.player_id WHERE r.season_id = ? AND r.player_id != ? ORDER BY r.player_id",
                of,
                user,
            )

        boards = {season: board(season), current: board(current)}
        cuts = sorted({b["tier"] for b in boards[season] if b["region"] == region})
        cut = ctx.choice(cuts[2:], "tier cut")
        befriend = _befriend_step(ctx, user, msg)

        def chosen(by_season: bool = True, by_region: bool = True, by_tier: str = RIGHT) -> list[Step]:
            rows = boards[season if by_season else current]
            picked = [b["player_id"] for b in rows if (b["region"] == region or not by_region) and _at_least(by_tier)(b["tier"], cut)]
            return [step for p in picked if (step := befriend(p)) is not None]

        targets = _bounded(chosen(), 10, 30, "players")
        if _accepts(targets):
            raise NoTarget("one of them asked first: the request would be refused")
        _conditions_bite(targets, chosen, by_season=DROPPED, by_region=DROPPED, by_tier=SLIPPED)
        name = ctx.value("SELECT name FROM seasons WHERE id = ?", season)
        query = self.phrase(ctx, season=name, tier=TIERS[cut], msg=msg)
        return _player_draft(user, query, targets, {"season": name, "tier": TIERS[cut], "message": msg}, [len(targets)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)
        season = _season_id(api, stated["season"]) if api.heeds("season") else me["current_season"]["season_id"]
        for row in api.all_pages("get_rank", within="leaderboard", narrow={"region": me["region"]}, season_id=season):
            if row["player_id"] == me["player_id"]:
                continue
            if api.keep("region", row["region"] == me["region"]) & api.compare("tier", _tier(row["tier"]), ">=", _tier(stated["tier"])):
                _befriend(api, row["player_id"], stated["message"])


class ScoutRegionLeader(MobaTemplate):
    name = "scout_region_leader"
    conditions = (Condition("region", "filter"), Condition("against", "filter"))
    clauses = {"message": WRITTEN, "currency": WRITTEN, "note": WRITTEN, "region": "region", "against": "against"}
    phrasings = (
        "Look up the player at the top of this season's leaderboard for my region. Send them a friend request saying '{msg}', "
        "buy the hero they have the most proficiency with (paying {currency}), and favourite every match where they played "
        "against me, with the note '{note}'.",
        "I want to learn from the best player in my region: whoever leads my region's leaderboard this season. Favourite all "
        "matches in which we were on opposite teams (note '{note}'), get me their highest-proficiency hero with {currency}, "
        "and ask them to be my friend ('{msg}').",
        "Three things about the current season's number one of my region's leaderboard: a friend request from me with the "
        "message '{msg}'; their top hero by proficiency, bought with {currency}; and every match of ours where they were on "
        "the enemy team saved to my favourites as '{note}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        board = ctx.rows(
            f"SELECT r.player_id, p.region FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE r.season_id = ? "
            f"ORDER BY {rank_score('r.tier', 'r.stars')} DESC, r.ranked_wins DESC, r.player_id",
            season,
        )
        # Outside the overall leader's region, so that reading the whole leaderboard's top would be wrong.
        user = _draw(ctx, "player", "SELECT id FROM players WHERE region != ? ORDER BY id", board[0]["region"])
        region = ctx.value("SELECT region FROM players WHERE id = ?", user)
        leader = next(b["player_id"] for b in board if b["region"] == region)
        if leader == user:
            raise NoTarget("the leader is me")
        if _relation(ctx, user, leader) != "free":
            raise NoTarget("not free to befriend")
        hero = _top_hero(ctx, leader)
        shop = {h["id"]: h for h in _shop(ctx, user)}
        if hero is None or hero not in shop:
            raise NoTarget("no hero to buy")
        wallet = ctx.one("SELECT coins, diamonds FROM players WHERE id = ?", user) or {}
        currency = ctx.choice([c for c in ("coins", "diamonds") if shop[hero][_price_column(c)] <= wallet[c]], "currency")
        saved = _favourited(ctx, user)
        shared = ctx.rows(
            "SELECT a.match_id AS id, a.side != b.side AS against FROM match_players a JOIN match_players b "
            "ON b.match_id = a.match_id AND b.player_id = ? WHERE a.player_id = ? ORDER BY a.match_id",
            leader,
            user,
        )
        games = [s["id"] for s in shared if s["against"] and s["id"] not in saved]
        _bounded(games, 10, 60, "matches")
        if all(s["against"] or s["id"] in saved for s in shared):
            raise NoTarget("never on the same team: the filter would exclude nothing")
        note, msg = ctx.rng.choice(MATCH_NOTES), ctx.rng.choice(FRIEND_MESSAGES)
        query = self.phrase(ctx, msg=msg, currency=currency, note=note)
        steps = [
            Step("send_friend_request", {"player_id": leader, "message": msg}),
            Step("buy_hero", {"hero_id": hero, "currency": currency}),
        ]
        steps += _favourite_steps(games, note)
        return _player_draft(user, query, steps, {"message": msg, "currency": currency, "note": note}, [len(games)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)
        board = api.all_pages("get_rank", within="leaderboard", narrow={"region": me["region"]})
        leader = next(r for r in board if api.keep("region", r["region"] == me["region"]))["player_id"]
        relation = api.call("get_player", player_id=leader)
        if not relation["relation"]["is_friend"]:
            api.call("send_friend_request", player_id=leader, message=stated["message"])
        if relation["top_heroes"]:
            hero = api.call("get_hero", hero_id=relation["top_heroes"][0]["hero_id"])
            if not hero["owned_by_me"]:
                api.call("buy_hero", hero_id=hero["hero_id"], currency=stated["currency"])
        saved = _favourite_ids(api)
        theirs = {m["match_id"]: m for m in api.all_pages("list_match_history", player_id=leader)}
        for match in api.all_pages("list_match_history"):
            shared = theirs.get(match["match_id"])
            if shared and api.keep("against", shared["side"] != match["side"]) and match["match_id"] not in saved:
                _favourite(api, match, stated)


# -- blocks ----------------------------------------------------------------------------------


class UnblockAndReconnect(MobaTemplate):
    name = "unblock_and_reconnect"
    tries = 2
    conditions = (Condition("blocked_before", "boundary"),)
    clauses = {"before": "blocked_before", "message": WRITTEN, "name": WRITTEN}
    phrasings = (
        "I want to make peace with the players I blocked before {date}: take them off my blacklist, send each a friend "
        "request saying '{msg}', and invite them all to a new custom room '{name}'.",
        "Everyone I blocked before {date} gets a second chance: unblock them, ask each to be my friend with the "
        "message '{msg}', then open a custom room named '{name}' and invite them.",
        "Open a custom room '{name}' for a fresh start with the people I blocked earlier than {date}: unblock each of them, "
        "send them a friend request ('{msg}') and an invitation to that room.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _host_candidates(
            ctx,
            "SELECT player_id FROM relations WHERE kind = 'blocked' GROUP BY player_id "
            "HAVING COUNT(DISTINCT substr(since, 1, 10)) >= 2 ORDER BY player_id",
        )
        blocked = ctx.rows(
            "SELECT other_id, substr(since, 1, 10) AS day FROM relations WHERE player_id = ? AND kind = 'blocked' ORDER BY other_id", user
        )
        date = ctx.choice(sorted({b["day"] for b in blocked})[1:], "block day")
        freed = [b["other_id"] for b in blocked if b["day"] < date]
        if any(
            _relation(ctx, user, p) != "blocked"
            or ctx.value("SELECT COUNT(*) FROM relations WHERE player_id = ? AND other_id = ?", p, user)
            for p in freed
        ):
            raise NoTarget("they blocked me too")
        msg, name = ctx.rng.choice(FRIEND_MESSAGES), _room_name(ctx)
        steps = [
            s
            for p in freed
            for s in (Step("unblock_player", {"player_id": p}), Step("send_friend_request", {"player_id": p, "message": msg}))
        ]
        steps += _room_steps(len(steps), freed, name=name, mode="custom")
        query = self.phrase(ctx, date=pretty_day(date), msg=msg, name=name) + _leave_note(ctx, user)
        return _player_draft(user, query, steps, {"before": date, "message": msg, "name": name}, [len(freed)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        freed = [
            b["player_id"]
            for b in api.all_pages("list_blacklist")
            if api.compare("blocked_before", b["blocked_at"][:10], "<", stated["before"])
        ]
        for player in freed:
            api.call("unblock_player", player_id=player)
            api.call("send_friend_request", player_id=player, message=stated["message"])
        _host_room(api, freed, name=stated["name"], mode="custom")


class BlockToxicTeammates(MobaTemplate):
    name = "block_toxic_teammates"
    tries = 6
    conditions = (Condition("since", "boundary"), Condition("deaths", "boundary"), Condition("teammate", "filter"))
    clauses = {"since": "since", "deaths": "deaths", "teammate": "teammate"}
    phrasings = (
        "Block every player who was on my team in a match I lost on or after {date} and died {d} or more times in that match.",
        "My losses from {date} on were full of feeders. Anyone who played on my side in one of those losses with at least "
        "{d} deaths goes on my blacklist.",
        "Go through the matches I lost starting {date} and find the teammates (my side, not the enemies) who died {d} times "
        "or more in them; block each of them.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        start = ctx.rng.choice([14, 21, 30, 45])
        user = _draw(
            ctx,
            "player with losses",
            _players_whose_matches("mp.result = 'loss' AND m.started_at >= date(?, ?)", "COUNT(*) BETWEEN 4 AND 40"),
            _today(ctx),
            f"-{start} days",
        )
        rows = ctx.rows(
            "SELECT substr(m.started_at, 1, 10) AS day, o.player_id, o.side = mp.side AS same, o.deaths FROM match_players mp "
            "JOIN matches m ON m.id = mp.match_id JOIN match_players o ON o.match_id = mp.match_id AND o.player_id != mp.player_id "
            "WHERE mp.player_id = ? AND mp.result = 'loss' ORDER BY m.id, o.player_id",
            user,
        )
        first = ctx.value("SELECT date(?, ?)", _today(ctx), f"-{start} days")
        since = ctx.choice(sorted({r["day"] for r in rows if r["day"] >= first})[1:], "loss day")
        blocked = set(ctx.column("SELECT other_id FROM relations WHERE player_id = ? AND kind = 'blocked'", user))
        window = [r["deaths"] for r in rows if r["day"] >= since and r["same"]]
        d = ctx.choice([x for x in range(4, 13) if sum(w >= x for w in window) >= 2], "deaths")

        def chosen(by_day: str = RIGHT, by_deaths: str = RIGHT, by_side: bool = True) -> list[int]:
            return sorted(
                {
                    r["player_id"]
                    for r in rows
                    if _at_or_after(by_day)(r["day"], since)
                    and _at_least(by_deaths)(r["deaths"], d)
                    and (r["same"] or not by_side)
                    and r["player_id"] not in blocked
                }
            )

        targets = _bounded(chosen(), 4, 30, "teammates")
        _conditions_bite(targets, chosen, by_day=SLIPPED, by_deaths=ROUND, by_side=DROPPED)
        query = self.phrase(ctx, date=pretty_day(since), d=d)
        return _player_draft(
            user, query, [Step("block_player", {"player_id": p}) for p in targets], {"since": since, "deaths": d}, _hide([len(targets)], d)
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)["player_id"]
        blocked = {p["player_id"] for p in api.all_pages("list_blacklist")}
        chosen: set[int] = set()
        for match in api.all_pages("list_match_history", narrow={"start_date": stated["since"]}, result="loss"):
            if not api.compare("since", match["started_at"][:10], ">=", stated["since"]):
                continue
            for player in api.call("get_match", match_id=match["match_id"])["players"]:
                if player["player_id"] == me:
                    continue
                if api.keep("teammate", player["side"] == match["side"]) & api.compare("deaths", player["deaths"], ">=", stated["deaths"]):
                    chosen.add(player["player_id"])
        for player in sorted(chosen - blocked):
            api.call("block_player", player_id=player)


# -- heroes and matches together -------------------------------------------------------------


class FavouriteTopHeroMatches(MobaTemplate):
    name = "favourite_top_hero_matches"
    conditions = (
        Condition("role", "filter"),
        Condition("top_hero", "ranking"),
        Condition("since", "boundary"),
        Condition("min_score", "boundary"),
    )
    clauses = {"role": "role", "since": "since", "score": "min_score", "note": WRITTEN, "top_hero": "top_hero"}
    phrasings = (
        "Take the {role} hero I have the most proficiency with (main or secondary role). Favourite every match I played with "
        "it on or after {date} in which my score was at least {score}, with the note '{note}'.",
        "Among the heroes I own that play {role} (main or secondary role), find the one with my highest proficiency, then "
        "save to my favourites each of my games with that hero from {date} on where I scored {score} or more; note '{note}'.",
        "My best {role} by proficiency (main or secondary role counts) deserves a highlight reel: every match with that hero "
        "starting {date} with a score of {score} or higher goes into my favourites as '{note}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(ctx, "player", "SELECT player_id FROM match_players GROUP BY player_id HAVING COUNT(*) >= 60 ORDER BY player_id")
        heroes = ctx.rows(
            "SELECT h.id, h.role, h.secondary_role, ph.proficiency FROM player_heroes ph JOIN heroes h ON h.id = ph.hero_id "
            "WHERE ph.player_id = ? ORDER BY ph.proficiency DESC, h.id",
            user,
        )
        if len(heroes) < 2 or heroes[0]["proficiency"] == heroes[1]["proficiency"]:
            raise NoTarget("a tie overall")
        saved = _favourited(ctx, user)
        matches = [m for m in _my_matches(ctx, user) if m["id"] not in saved]
        played = Counter(m["hero_id"] for m in matches)

        def single_top(role: str) -> bool:
            """The role has one hero of highest proficiency, not the overall top one, with matches to save."""
            pool = [h for h in heroes if _plays(h, role)]
            return (
                len(pool) >= 2
                and pool[0]["proficiency"] != pool[1]["proficiency"]
                and pool[0]["id"] != heroes[0]["id"]
                and played[pool[0]["id"]] >= 10
            )

        role = ctx.choice([r for r in ROLES if single_top(r)], "role with a single top hero")
        mine = [h for h in heroes if _plays(h, role)]
        own = [m for m in matches if m["hero_id"] == mine[0]["id"]]
        days = sorted({m["day"] for m in own})
        since = ctx.rng.choice(days[1 : max(2, len(days) // 3)])
        scores = [m["score"] for m in own if m["day"] >= since]
        # A whole-number score the player would name, one that some of those games miss.
        score = ctx.choice([s for s in range(4, 16) if 0 < sum(x < s for x in scores) < len(scores)], "score")

        def chosen(by_role: bool = True, by_top: str = RIGHT, by_since: str = RIGHT, by_score: str = RIGHT) -> list[int]:
            pool = mine if by_role else heroes
            picked = pool if by_top == IGNORED else pool[:2] if by_top == OFF else pool[:1]
            ids = {h["id"] for h in picked}
            return [
                m["id"]
                for m in matches
                if m["hero_id"] in ids and _at_or_after(by_since)(m["day"], since) and _at_least(by_score)(m["score"], score)
            ]

        targets, note = _matches_to_save(ctx, chosen, 15, 70, by_role=DROPPED, by_top=SLIPPED, by_since=SLIPPED, by_score=ROUND)
        query = self.phrase(ctx, role=role, date=pretty_day(since), score=score, note=note)
        return _player_draft(
            user,
            query,
            _favourite_steps(targets, note),
            {"role": role, "since": since, "score": score, "note": note},
            _hide([len(targets)], score),
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        heroes = [
            h
            for h in api.all_pages("list_my_heroes", narrow={"role": stated["role"]}, sort_by="proficiency")
            if api.keep("role", stated["role"] in (h["role"], h["secondary_role"]))
        ]
        ranked = sorted(heroes, key=lambda h: (-h["proficiency"], h["hero_id"]))
        saved = _favourite_ids(api)
        for hero in api.top("top_hero", ranked, 1, lambda h: h["proficiency"]):
            for match in api.all_pages("list_match_history", narrow={"start_date": stated["since"]}, hero_id=hero["hero_id"]):
                recent = api.compare("since", match["started_at"][:10], ">=", stated["since"])
                good = api.compare("min_score", match["score"], ">=", stated["score"])
                if recent and good and match["match_id"] not in saved:
                    _favourite(api, match, stated)


class FavouriteCarryGames(MobaTemplate):
    name = "favourite_carry_games"
    conditions = (
        Condition("since", "boundary"),
        Condition("won", "filter"),
        Condition("top_damage", "filter", capability="aggregation_computation"),
    )
    clauses = {"since": "since", "note": WRITTEN, "won": "won", "top_damage": "top_damage"}
    phrasings = (
        "Favourite every match on or after {date} that I won and in which nobody on my team dealt more damage than me, with "
        "the note '{note}'.",
        "I carried a few games lately. Find my wins from {date} on where my damage dealt was the highest on my side (no "
        "teammate above me) and save each one to my favourites with '{note}' as the note.",
        "Go through the matches I won starting {date} and open each one: if no teammate out-damaged me, put it in my "
        "favourites noting '{note}'.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(
            ctx, "player", "SELECT player_id FROM match_players GROUP BY player_id HAVING SUM(result = 'win') >= 25 ORDER BY player_id"
        )
        saved = _favourited(ctx, user)
        rows = ctx.rows(
            "SELECT m.id, substr(m.started_at, 1, 10) AS day, mp.result, mp.damage_dealt >= (SELECT MAX(o.damage_dealt) "
            "FROM match_players o WHERE o.match_id = mp.match_id AND o.side = mp.side) AS top FROM match_players mp "
            "JOIN matches m ON m.id = mp.match_id WHERE mp.player_id = ? ORDER BY m.started_at DESC, m.id DESC",
            user,
        )
        rows = [r for r in rows if r["id"] not in saved]
        carried = sorted({r["day"] for r in rows if r["result"] == "win" and r["top"]}, reverse=True)
        if len(carried) < 8:
            raise NoTarget("few carried wins")
        since = ctx.rng.choice(carried[6:30])
        if sum(r["result"] == "win" and r["day"] >= since for r in rows) > 90:
            raise NoTarget("too many matches to open")

        def chosen(by_since: str = RIGHT, by_win: bool = True, by_top: bool = True) -> list[int]:
            return [
                r["id"]
                for r in rows
                if _at_or_after(by_since)(r["day"], since) and (r["result"] == "win" or not by_win) and (r["top"] or not by_top)
            ]

        targets, note = _matches_to_save(ctx, chosen, 12, 50, by_since=SLIPPED, by_win=DROPPED, by_top=DROPPED)
        query = self.phrase(ctx, note=note, date=pretty_day(since))
        return _player_draft(user, query, _favourite_steps(targets, note), {"since": since, "note": note}, [len(targets)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)["player_id"]
        saved = _favourite_ids(api)
        for match in api.all_pages("list_match_history", narrow={"start_date": stated["since"], "result": "win"}):
            recent = api.compare("since", match["started_at"][:10], ">=", stated["since"])
            if not (recent & api.keep("won", match["result"] == "win")) or match["match_id"] in saved:
                continue
            players = api.call("get_match", match_id=match["match_id"])["players"]
            mine = next(p for p in players if p["player_id"] == me)
            best = max(p["damage_dealt"] for p in players if p["side"] == match["side"])
            if api.keep("top_damage", mine["damage_dealt"] >= best):
                _favourite(api, match, stated)


class SeasonMvpRecap(MobaTemplate):
    name = "season_mvp_recap"
    conditions = (
        Condition("season", "filter"),
        Condition("mvp", "filter"),
        Condition("times", "boundary", capability="aggregation_computation"),
    )
    clauses = {"note": WRITTEN, "k": "times", "message": WRITTEN, "season": "season", "mvp": "mvp"}
    phrasings = (
        "Favourite every match of the current season in which I was MVP, with the note '{note}'. Then send a friend request "
        "saying '{msg}' to everyone who was on my team in at least {k} of those MVP matches.",
        "My MVP games this season: save each to my favourites (note '{note}'), and count how often each player was on my "
        "side in them. Whoever shows up {k} or more times gets a friend request from me with the message '{msg}'.",
        "Go through the current season's matches where I got MVP. Each one goes into my favourites as '{note}', and each "
        "teammate who shared {k} or more of those games with me gets a friend request ('{msg}').",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        user = _draw(ctx, "player with MVPs", _players_whose_matches("m.season_id = ?", "SUM(mp.is_mvp) BETWEEN 6 AND 60"), season)
        matches = _my_matches(ctx, user)
        saved = _favourited(ctx, user)
        sides = _sides(ctx, user)
        msg, note = ctx.rng.choice(FRIEND_MESSAGES), ctx.rng.choice(MATCH_NOTES)
        befriend = _befriend_step(ctx, user, msg)

        def chosen(
            k: int, by_season: bool = True, by_mvp: bool = True, by_k: str = RIGHT
        ) -> tuple[tuple[int, ...], tuple[tuple[int, Step], ...]]:
            picked = [m["id"] for m in matches if (m["season_id"] == season or not by_season) and (m["is_mvp"] or not by_mvp)]
            counts = Counter(p for m in picked for p, same in sides[m] if same)
            friends = tuple(_befrienders(counts, lambda n: _at_least(by_k)(n, k), befriend))
            return tuple(m for m in picked if m not in saved), friends

        for k in ctx.rng.sample([2, 3, 4], 3):
            games, friends = chosen(k)
            if len(games) < 12 or len(friends) < 1 or _accepts(step for _, step in friends):
                continue  # (a teammate who asked first would need another step than the request the wording asks for)
            try:
                _conditions_bite((games, friends), chosen, k, by_season=DROPPED, by_mvp=DROPPED, by_k=SLIPPED)
            except NoTarget:
                continue
            break
        else:
            raise NoTarget("no threshold at which every condition bites")
        query = self.phrase(ctx, note=note, k=k, msg=msg)
        steps = _favourite_steps(games, note) + [step for _, step in friends]
        return _player_draft(user, query, steps, {"note": note, "k": k, "message": msg}, _hide([len(games), len(friends)], k))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)
        season = me["current_season"]["season_id"]
        saved = _favourite_ids(api)
        counts: Counter[int] = Counter()
        for match in api.all_pages("list_match_history", narrow={"season_id": season}):
            if not (api.keep("season", match["season_id"] == season) & api.keep("mvp", match["is_mvp"])):
                continue
            if match["match_id"] not in saved:
                _favourite(api, match, stated)
            for player in api.call("get_match", match_id=match["match_id"])["players"]:
                if player["side"] == match["side"] and player["player_id"] != me["player_id"]:
                    counts[player["player_id"]] += 1
        _befriend_frequent(api, counts, stated)


class ClanSquadMatches(MobaTemplate):
    name = "clan_squad_matches"
    conditions = (Condition("since", "boundary"), Condition("clanmates", "boundary", capability="aggregation_computation"))
    readings = (CLAN_READING,)
    clauses = {"since": "since", "n": "clanmates", "note": WRITTEN}
    phrasings = (
        "Favourite every match on or after {date} in which {who} played on my team (whatever their clan role), with the note '{note}'.",
        "I want a record of our clan games: each match of mine from {date} on where {who} played on my side goes into my "
        "favourites noting '{note}'. Every clan role counts, leader and officers too.",
        "Look through the matches I played starting {date}; whenever {who}, whatever their role, played on my team, save "
        "the match to my favourites with '{note}' as the note.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(ctx, "clan member", CLAN_MEMBERS)
        team = _clan_of(ctx, user)
        mates = set(ctx.column("SELECT player_id FROM team_members WHERE team_id = ? AND player_id != ?", team, user))
        saved = _favourited(ctx, user)
        played = {m["id"]: m["day"] for m in _my_matches(ctx, user)}
        sides = _sides(ctx, user)
        together = {m: sum(1 for p, same in sides[m] if same and p in mates) for m in played}
        n = ctx.rng.choice([1, 1, 2, 2, 3])
        days = sorted({played[m] for m in played if together[m] >= n and m not in saved}, reverse=True)
        if len(days) < 8:
            raise NoTarget("few clan games")
        since = ctx.rng.choice(days[5:40])
        if sum(day >= since for day in played.values()) > 100:
            raise NoTarget("too many matches to open")

        def chosen(by_since: str = RIGHT, by_n: str = RIGHT) -> list[int]:
            return sorted(
                m for m, day in played.items() if _at_or_after(by_since)(day, since) and _at_least(by_n)(together[m], n) and m not in saved
            )

        targets, note = _matches_to_save(ctx, chosen, 15, 70, by_since=SLIPPED, by_n=SLIPPED)
        who = "any of my clanmates" if n == 1 else f"at least {n} of my clanmates"
        query = self.phrase(ctx, date=pretty_day(since), who=who, note=note)
        return _player_draft(user, query, _favourite_steps(targets, note), {"since": since, "n": n, "note": note}, _hide([len(targets)], n))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        mates = {m["player_id"] for m in _clan_mates(api, _profile(api))}
        saved = _favourite_ids(api)
        for match in api.all_pages("list_match_history", narrow={"start_date": stated["since"]}):
            if not api.compare("since", match["started_at"][:10], ">=", stated["since"]) or match["match_id"] in saved:
                continue
            players = api.call("get_match", match_id=match["match_id"])["players"]
            together = sum(1 for p in players if p["side"] == match["side"] and p["player_id"] in mates)
            if api.compare("clanmates", together, ">=", stated["n"]):
                _favourite(api, match, stated)


class FavouriteBoughtHeroWins(MobaTemplate):
    name = "favourite_bought_hero_wins"
    conditions = (Condition("bought", "filter"), Condition("since", "boundary"), Condition("won", "filter"))
    clauses = {"since": "since", "note": WRITTEN, "bought": "bought", "won": "won"}
    phrasings = (
        "Favourite every match I won with a hero that I bought in the shop on or after {date} (heroes I got as a starter, "
        "from an event or as a season reward don't count), with the note '{note}'.",
        "Which of my recent purchases pay off? Take the heroes I paid for in the shop from {date} on and save to my "
        "favourites each match I won with one of them, noting '{note}'.",
        "For each hero I bought with coins or diamonds starting {date}, put every win I had with it into my favourites as "
        "'{note}'. Heroes I didn't buy are left out.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        user = _draw(ctx, "player", "SELECT player_id FROM match_players GROUP BY player_id HAVING COUNT(*) >= 50 ORDER BY player_id")
        heroes = ctx.rows(
            "SELECT hero_id, acquired_via, substr(acquired_at, 1, 10) AS day FROM player_heroes WHERE player_id = ? ORDER BY hero_id", user
        )
        saved = _favourited(ctx, user)
        matches = [m for m in _my_matches(ctx, user) if m["id"] not in saved]
        wins = Counter(m["hero_id"] for m in matches if m["result"] == "win")
        days = sorted({h["day"] for h in heroes if h["acquired_via"] == "purchase" and wins[h["hero_id"]]})
        if len(days) < 4:
            raise NoTarget("few bought heroes with wins")
        since = ctx.rng.choice(days[1 : max(2, len(days) * 2 // 3)])

        def chosen(by_bought: bool = True, by_since: str = RIGHT, by_win: bool = True) -> list[int]:
            picked = {
                h["hero_id"]
                for h in heroes
                if (h["acquired_via"] == "purchase" or not by_bought) and _at_or_after(by_since)(h["day"], since)
            }
            return sorted(m["id"] for m in matches if m["hero_id"] in picked and (m["result"] == "win" or not by_win))

        targets, note = _matches_to_save(ctx, chosen, 10, 70, by_bought=DROPPED, by_since=SLIPPED, by_win=DROPPED)
        query = self.phrase(ctx, date=pretty_day(since), note=note)
        return _player_draft(user, query, _favourite_steps(targets, note), {"since": since, "note": note}, [len(targets)])

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        saved = _favourite_ids(api)
        for hero in api.all_pages("list_my_heroes", sort_by="recent"):
            bought = api.keep("bought", hero["acquired_via"] == "purchase")
            recent = api.compare("since", hero["acquired_at"][:10], ">=", stated["since"])
            if not (bought and recent):
                continue
            for match in api.all_pages("list_match_history", narrow={"result": "win"}, hero_id=hero["hero_id"]):
                if api.keep("won", match["result"] == "win") and match["match_id"] not in saved:
                    _favourite(api, match, stated)
                    saved.add(match["match_id"])


class FavouriteGamesAgainstLeaders(MobaTemplate):
    name = "favourite_games_against_leaders"
    conditions = (
        Condition("region", "filter"),
        Condition("top_k", "ranking", tie_break_stated=True),
        Condition("season", "filter"),
        Condition("against", "filter"),
    )
    clauses = {"k": "top_k", "note": WRITTEN, "region": "region", "season": "season", "against": "against"}
    phrasings = (
        "Favourite every match of the current season in which I played against one of the top {k} players of my region's "
        "leaderboard for this season (in the leaderboard's own order), with the note '{note}'.",
        "Take the first {k} players from my region on this season's leaderboard, as the leaderboard ranks them. Every match "
        "this season where at least one of them was on the enemy team goes into my favourites as '{note}'.",
        "I want to study the best of my region: find the {k} highest-placed players from my region on the current season's "
        "leaderboard (leaderboard order), then save to my favourites, noting '{note}', each of my current-season matches in "
        "which any of them played on the other side.",
    )

    def attempt(self, ctx: GenContext) -> Draft:
        season = _current_season(ctx)
        user = _draw(ctx, "player", _players_whose_matches("m.season_id = ?", "COUNT(*) BETWEEN 15 AND 120"), season)
        region = ctx.value("SELECT region FROM players WHERE id = ?", user)
        board = ctx.rows(
            f"SELECT r.player_id, p.region FROM season_ranks r JOIN players p ON p.id = r.player_id WHERE r.season_id = ? "
            f"ORDER BY {rank_score('r.tier', 'r.stars')} DESC, r.ranked_wins DESC, r.player_id",
            season,
        )
        saved = _favourited(ctx, user)
        played = {m["id"]: m["season_id"] for m in _my_matches(ctx, user)}
        sides = _sides(ctx, user)

        def chosen(k: int, by_region: bool = True, by_k: str = RIGHT, by_season: bool = True, by_side: bool = True) -> list[int]:
            pool = [b["player_id"] for b in board if (b["region"] == region or not by_region) and b["player_id"] != user]
            top = set(pool if by_k == IGNORED else pool[: k + 1] if by_k == OFF else pool[:k])
            return sorted(
                m
                for m, s in played.items()
                if (s == season or not by_season) and m not in saved and any(p in top and (not same or not by_side) for p, same in sides[m])
            )

        mine = [b["player_id"] for b in board if b["region"] == region]
        for k in ctx.rng.sample([3, 4, 5, 6, 8], 5):
            if user in mine[: k + 2]:
                continue  # whether "the top k" counts me would change who they are
            targets = chosen(k)
            if not 8 <= len(targets) <= 60:
                continue
            try:
                _conditions_bite(targets, chosen, k, by_region=DROPPED, by_k=SLIPPED, by_season=DROPPED, by_side=DROPPED)
            except NoTarget:
                continue
            break
        else:
            raise NoTarget("no k at which every condition bites")
        note = ctx.rng.choice(MATCH_NOTES)
        query = self.phrase(ctx, k=k, note=note)
        return _player_draft(user, query, _favourite_steps(targets, note), {"k": k, "note": note}, _hide([len(targets)], k))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _profile(api)
        season = me["current_season"]["season_id"]
        board = [
            r
            for r in api.all_pages("get_rank", within="leaderboard", narrow={"region": me["region"]}, season_id=season)
            if r["player_id"] != me["player_id"] and api.keep("region", r["region"] == me["region"])
        ]
        leaders = {r["player_id"] for r in api.top("top_k", board, stated["k"], lambda r: r["position"])}
        saved = _favourite_ids(api)
        for match in api.all_pages("list_match_history", narrow={"season_id": season}):
            if not api.keep("season", match["season_id"] == season) or match["match_id"] in saved:
                continue
            players = api.call("get_match", match_id=match["match_id"])["players"]
            if any(p["player_id"] in leaders and api.keep("against", p["side"] != match["side"]) for p in players):
                _favourite(api, match, stated)


TEMPLATES = [
    AcceptRequestsByRank,
    PruneInactiveFriends,
    BlockRepeatOpponents,
    BefriendFrequentTeammates,
    FavouriteMvpWindow,
    FavouriteHighKdaWins,
    TidyFavourites,
    FavouriteSharedWins,
    FavouriteModeWinsSince,
    BuyHeroesOnBudget,
    BuyFriendsTopHeroes,
    BuyPopularHeroes,
    HostRoomForFriends,
    ClanPracticeRoom,
    ReopenRoom,
    RoomForFrequentTeammates,
    JoinRoomAndInvite,
    ReviewClanApplications,
    ClanTopContributor,
    LeaderboardFriendRequests,
    ScoutRegionLeader,
    UnblockAndReconnect,
    BlockToxicTeammates,
    FavouriteTopHeroMatches,
    FavouriteCarryGames,
    SeasonMvpRecap,
    ClanSquadMatches,
    FavouriteBoughtHeroWins,
    FavouriteGamesAgainstLeaders,
]

# Scenario turns (ebench/tasks/scenario_generation.py). The entities a later turn may refer to by
# description ("the room you just opened"): table -> (name column, noun, what making one is called).
SCENARIO_ENTITIES = {"rooms": ("name", "room", "opened")}
# Chat turns that need no change, filled with the player's own data (`:actor`) or the game's.
SCENARIO_CHATS = (
    (
        "SELECT h.name AS hero, h.role AS role FROM player_heroes ph JOIN heroes h ON h.id = ph.hero_id WHERE ph.player_id = :actor "
        "ORDER BY ph.proficiency DESC, h.id LIMIT 15",
        (
            "{hero} feels so strong this season, right?",
            "Is {hero} really a {role}? I keep playing them differently.",
            "What's my win rate with {hero}? Just curious, don't buy anything.",
        ),
    ),
    (
        "SELECT p.nickname AS friend FROM relations r JOIN players p ON p.id = r.other_id WHERE r.player_id = :actor "
        "AND r.kind = 'friend' ORDER BY r.intimacy DESC, p.id LIMIT 15",
        ("{friend} carried me last night, haha. Anyway, thanks!", "Is {friend} online right now? No need to invite them."),
    ),
    (
        "SELECT name AS season FROM seasons ORDER BY number",
        ("What was the theme of {season} again?", "When did {season} end? I lose track."),
    ),
    (
        "SELECT DISTINCT mode FROM matches ORDER BY mode",
        ("Do you think {mode} games are good for practising a new hero?", "How long does a {mode} match usually take?"),
    ),
)
