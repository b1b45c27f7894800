"""Task templates of the meeting platform (Qingyun Technology's collaboration app).

Each template inspects the world with SQL, picks an employee and targets, and writes the
reference solution with the public tools. What a person would type (a meeting title, a date and
time, a chat name, a message, a threshold) is the user's and appears in the query; what the data
decides (which colleagues, which room, how many) does not.

The world's "now" is frozen (Thursday 2026-10-15 09:30); new meetings, bookings and calendar
entries are always placed from the next day on, so nothing is refused for starting in the past.
Every value a tool stores from its arguments (a cancel reason, an entry's kind, a booking's
purpose) is stated in the query, so exactly one set of changes is right.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..generation import Draft, GenContext, NoTarget, Template
from ..spec import Step
from .common import bounded, pretty_day, ref, steps

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
FIRST_DAY = "2026-10-16"  # the day after "now": everything new starts on or after it
LAST_DAY = "2026-11-20"
SLOTS = (("09:00", "10:00"), ("10:00", "11:00"), ("10:30", "11:30"), ("11:00", "12:00"), ("14:00", "15:00"),
         ("15:00", "16:00"), ("15:30", "16:30"), ("16:00", "17:00"))
CHAT_NAMES = (
    "Coffee Roulette", "Friday Lunch Club", "Newcomers Corner", "Badminton After Work", "Book Swap", "Hiking Crew",
    "Hot Pot Fridays", "Board Game Night", "Running Buddies", "Photography Walks", "Tea Break", "Karaoke Squad",
)
PROJECT_CHAT_NAMES = (
    "Retro Follow-ups", "Core Crew", "Regulars", "Action Items", "Working Group", "Inner Circle", "Follow-up Squad",
    "Standing Members", "Keep-in-the-loop", "Core Attendees",
)


# -- helpers ---------------------------------------------------------------------------------


def _day(value: str) -> datetime:
    return datetime.strptime(value[:10], "%Y-%m-%d")


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def _shift(value: str, days: int) -> str:
    return _iso(_day(value) + timedelta(days=days))


def _weekday(value: str) -> str:
    return WEEKDAYS[_day(value).weekday()]


def _nice(value: str) -> str:
    """'2026-10-20' -> 'Tuesday, October 20, 2026'."""
    return f"{_weekday(value)}, {pretty_day(value)}"


def _hm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _minutes(hm: str) -> int:
    return int(hm[:2]) * 60 + int(hm[3:5])


def _at(day: str, hm: str) -> str:
    """A tool argument: 'YYYY-MM-DD HH:MM'."""
    return f"{day} {hm}"


def _stored(day: str, hm: str) -> str:
    """The same moment as the database stores it (with seconds)."""
    return f"{day} {hm}:00"


def _weekdays_between(first: str, last: str) -> list[str]:
    out, current = [], _day(first)
    while current <= _day(last):
        if current.weekday() < 5:
            out.append(_iso(current))
        current += timedelta(days=1)
    return out


def _future_weekday(ctx: GenContext, earliest: str = FIRST_DAY, latest: str = "2026-11-13") -> str:
    return ctx.choice(_weekdays_between(earliest, latest), "weekday")


def _room_free(ctx: GenContext, room_id: int, start: str, end: str) -> bool:
    return not ctx.value("SELECT 1 FROM room_bookings WHERE room_id = ? AND status = 'active' AND start_at < ? AND end_at > ?",
                         room_id, end, start)


def _smallest(rooms: list[dict[str, Any]]) -> dict[str, Any]:
    """The smallest room of a list sorted by capacity, refusing a tie for smallest."""
    if not rooms:
        raise NoTarget("no free room")
    if len(rooms) > 1 and rooms[0]["capacity"] == rooms[1]["capacity"]:
        raise NoTarget("two smallest rooms")
    return rooms[0]


def _smallest_then_name(rooms: list[dict[str, Any]]) -> dict[str, Any]:
    """The smallest room, and among equally small ones the first by name (case-insensitive)."""
    if not rooms:
        raise NoTarget("no free room")
    return min(rooms, key=lambda r: (r["capacity"], r["name"].lower(), r["id"]))


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _words(n: int) -> str:
    """Small numbers as a person writes them in a sentence."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def _unique_names(rows: list[dict[str, Any]]) -> None:
    names = [r["name"].lower() for r in rows]
    if len(set(names)) != len(names):
        raise NoTarget("two people with the same name")


def _subtree_ids(ctx: GenContext, department_id: int) -> list[int]:
    return ctx.column("WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT d.id FROM departments d JOIN sub ON d.parent_id = sub.id) "
                      "SELECT id FROM sub ORDER BY id", department_id)


def _in(ids: list[int]) -> str:
    return "(" + ",".join(str(int(i)) for i in ids) + ")"


def _free_chat_name(ctx: GenContext, owner: int, names: tuple[str, ...]) -> str:
    taken = {n.lower() for n in ctx.column("SELECT name FROM chats WHERE owner_id = ?", owner)}
    return ctx.choice([n for n in names if n.lower() not in taken], "free chat name")


# -- meetings: series and bulk invitations ---------------------------------------------------


class WeeklyTeamSeries(Template):
    name = "weekly_team_series"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "aggregation_computation", "cross_step_dependency")
    phrasings = (
        "Set up a weekly '{title}' for my team: {n} meetings, every {weekday} from {first} on, {start} to {end}, with everyone else "
        "in my team who isn't on leave as required participants. Use the same room for all of them: the smallest bookable room in "
        "{building} that holds all of us (me included) and is free at all {n} times.",
        "I want {n} weekly team meetings, '{title}', one each {weekday} {start}-{end}, starting {first}. Invite my "
        "whole team (skip anyone on leave) as required. Book the smallest room in {building} that can be booked, fits everyone "
        "including me, and is free every one of those weeks; all {n} meetings go in that room.",
        "Please schedule {n} weekly sessions of '{title}' for my team, {start} to {end} on {weekday}s, the first on {first}. "
        "Everyone in my team except people on leave is required. Room: in {building}, the smallest bookable one big enough for "
        "the whole group with me, free for every session.",
    )
    titles = ("{team} weekly sync", "{team} planning", "{team} team meeting", "{team} weekly check-in")

    def draft(self, ctx: GenContext) -> Draft:
        team = ctx.choice(ctx.rows(
            "SELECT d.id, d.name, d.location_id, h.employee_id AS head FROM departments d JOIN department_heads h ON h.department_id = d.id "
            "WHERE d.kind = 'team' ORDER BY d.id"), "team")
        members = ctx.column("SELECT id FROM employees WHERE department_id = ? AND status = 'active' ORDER BY id", team["id"])
        actor = team["head"] if ctx.rng.random() < 0.6 else ctx.choice(members, "member")
        if actor not in members:
            raise NoTarget("actor on leave")
        invitees = [m for m in members if m != actor]
        bounded(invitees, 5, 60, "team members")
        need = len(invitees) + 1
        city = ctx.value("SELECT location_id FROM employees WHERE id = ?", actor)
        building = ctx.choice(ctx.rows(
            "SELECT b.id, b.name FROM buildings b WHERE b.location_id = ? AND EXISTS (SELECT 1 FROM rooms r WHERE r.building_id = b.id "
            "AND r.is_bookable = 1 AND r.capacity >= ?) ORDER BY b.id", city, need), "building")
        n = ctx.rng.choice([3, 4, 5, 6, 8])
        first = _future_weekday(ctx, "2026-10-19", "2026-10-30")
        dates = [_shift(first, 7 * i) for i in range(n)]
        start, end = ctx.rng.choice(SLOTS)
        rooms = ctx.rows("SELECT id, name, capacity FROM rooms WHERE building_id = ? AND is_bookable = 1 AND capacity >= ? "
                         "ORDER BY capacity, name, id", building["id"], need)
        free = [r for r in rooms if all(_room_free(ctx, r["id"], _stored(d, start), _stored(d, end)) for d in dates)]
        room = _smallest(free)
        title = ctx.rng.choice(self.titles).format(team=team["name"])
        query = self.phrase(ctx, title=title, n=n, weekday=_weekday(first), first=pretty_day(first), start=start, end=end,
                            building=building["name"])
        plan = [Step("create_meeting", {"title": title, "start": _at(d, start), "end": _at(d, end), "participant_ids": invitees,
                                        "room_id": room["id"]}) for d in dates]
        return Draft(actor, query, plan, hidden=[room["name"], len(invitees)],
                     params={"team_id": team["id"], "room_id": room["id"], "dates": dates})


class OneOnOnes(Template):
    name = "one_on_ones"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "cross_step_dependency")
    phrasings = (
        "Set up 1:1s with each of my direct reports on {day}: {minutes} minutes each, back to back from {start}, in alphabetical "
        "order of their names. Title each one '1:1 ' followed by the person's full name. Skip anyone who is on leave. {where}",
        "I'd like a round of one-on-ones on {day}. Every direct report of mine who isn't on leave gets a {minutes}-minute slot, "
        "one right after the other starting at {start}, ordered by name (A to Z). Call each meeting '1:1 <their full name>'. {where}",
    )

    def draft(self, ctx: GenContext) -> Draft:
        actor = ctx.choice(ctx.column(
            "SELECT h.employee_id FROM department_heads h JOIN employees e ON e.id = h.employee_id WHERE e.status = 'active' "
            "AND (SELECT COUNT(*) FROM employees r WHERE r.manager_id = h.employee_id AND r.status = 'active') BETWEEN 4 AND 24 "
            "ORDER BY h.employee_id"), "manager")
        reports = ctx.rows("SELECT id, name FROM employees WHERE manager_id = ? AND status = 'active' ORDER BY name COLLATE NOCASE, id", actor)
        _unique_names(reports)
        minutes = 30 if len(reports) <= 12 else 20
        first = _minutes(ctx.rng.choice(["09:00", "09:30", "10:00"]) if len(reports) * minutes > 240
                         else ctx.rng.choice(["09:00", "10:00", "13:30", "14:00"]))
        day = _future_weekday(ctx)
        span_start, span_end = _stored(day, _hm(first)), _stored(day, _hm(first + minutes * len(reports)))
        room = None
        if ctx.rng.random() < 0.7:
            city = ctx.value("SELECT location_id FROM employees WHERE id = ?", actor)
            candidates = [r for r in ctx.rows(
                "SELECT r.id, r.name, b.name AS building FROM rooms r JOIN buildings b ON b.id = r.building_id WHERE b.location_id = ? "
                "AND r.is_bookable = 1 AND r.capacity <= 6 ORDER BY r.id", city) if _room_free(ctx, r["id"], span_start, span_end)]
            room = ctx.choice(candidates, "free small room")
        where = (f"Hold them all in room {room['name']} in {room['building']}." if room
                 else "They're online only, no room.")
        query = self.phrase(ctx, day=_nice(day), minutes=minutes, start=_hm(first), where=where)
        plan = []
        for i, person in enumerate(reports):
            args: dict[str, Any] = {"title": f"1:1 {person['name']}", "start": _at(day, _hm(first + i * minutes)),
                                    "end": _at(day, _hm(first + (i + 1) * minutes)), "participant_ids": [person["id"]]}
            if room:
                args["room_id"] = room["id"]
            plan.append(Step("create_meeting", args))
        return Draft(actor, query, plan, hidden=[len(reports)], params={"day": day, "room_id": room["id"] if room else None})


class DepartmentAllHands(Template):
    name = "department_all_hands"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "cross_entity_cascade")
    phrasings = (
        "Schedule an online meeting '{title}' on {day} from {start} to {end} for everyone in {scope} and every department and team "
        "under it, except people on leave. The heads of the departments and teams under {scope} are required participants; "
        "everyone else is optional. No room, it's online only.",
        "I'm running '{title}' online on {day}, {start}-{end}. Invite the whole of {scope}, all levels below it included, but not "
        "colleagues who are on leave. Make the heads of the units below {scope} required and all the others optional.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        scope = ctx.choice(ctx.rows(
            "SELECT d.id, d.name, d.kind, h.employee_id AS head FROM departments d JOIN department_heads h ON h.department_id = d.id "
            "JOIN employees e ON e.id = h.employee_id WHERE d.kind IN ('division', 'department') AND e.status = 'active' "
            "AND EXISTS (SELECT 1 FROM departments c WHERE c.parent_id = d.id) ORDER BY d.id"), "division or department")
        actor = scope["head"]
        below = [d for d in _subtree_ids(ctx, scope["id"]) if d != scope["id"]]
        people = ctx.column(f"SELECT id FROM employees WHERE department_id IN {_in([scope['id'], *below])} AND status = 'active' "
                            "AND id != ? ORDER BY id", actor)
        heads = set(ctx.column(f"SELECT employee_id FROM department_heads WHERE department_id IN {_in(below)}"))
        required = [p for p in people if p in heads]
        optional = [p for p in people if p not in heads]
        bounded(people, 10, 290, "people")
        if not required or not optional:
            raise NoTarget("no heads below")
        day = _future_weekday(ctx)
        start, end = ctx.rng.choice(SLOTS)
        title = ctx.rng.choice(["{s} all-hands", "{s} quarterly town hall", "{s} kick-off", "{s} strategy update"]).format(s=scope["name"])
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, scope=scope["name"])
        plan = [Step("create_meeting", {"title": title, "start": _at(day, start), "end": _at(day, end), "participant_ids": required,
                                        "optional_participant_ids": optional})]
        return Draft(actor, query, plan, hidden=[len(people), len(required)], params={"department_id": scope["id"], "day": day})


class TeamReviewsBackToBack(Template):
    name = "team_reviews_back_to_back"
    capabilities = ("complete_data_acquisition", "cross_entity_cascade", "cross_step_dependency")
    phrasings = (
        "On {day}, hold a one-hour '<team name> {kind}' for each team in my department, back to back from {start}, teams in "
        "alphabetical order. Each one is online and has everyone in that team who isn't on leave as required participants.",
        "I need {a_kind} with every team of my department on {day}: one hour per team, one after the other starting at {start}, "
        "going through the teams alphabetically by name. Title each '<team name> {kind}', invite the team's members (not those "
        "on leave) as required, online only.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        dept = ctx.choice(ctx.rows(
            "SELECT d.id, h.employee_id AS head FROM departments d JOIN department_heads h ON h.department_id = d.id "
            "JOIN employees e ON e.id = h.employee_id WHERE d.kind = 'department' AND e.status = 'active' "
            "AND (SELECT COUNT(*) FROM departments t WHERE t.parent_id = d.id) >= 2 ORDER BY d.id"), "department")
        teams = ctx.rows("SELECT id, name FROM departments WHERE parent_id = ? ORDER BY name COLLATE NOCASE, id", dept["id"])
        kind = ctx.rng.choice(["quarterly review", "OKR review", "roadmap review", "health check"])
        start = _minutes(ctx.rng.choice(["09:00", "10:00", "13:00", "14:00"]))
        day = _future_weekday(ctx)
        plan, total = [], 0
        for i, team in enumerate(teams):
            members = ctx.column("SELECT id FROM employees WHERE department_id = ? AND status = 'active' ORDER BY id", team["id"])
            total += len(members)
            plan.append(Step("create_meeting", {"title": f"{team['name']} {kind}", "start": _at(day, _hm(start + 60 * i)),
                                                "end": _at(day, _hm(start + 60 * (i + 1))), "participant_ids": members}))
        a_kind = ("an " if kind[0] in "AEIOU" else "a ") + kind
        query = self.phrase(ctx, day=_nice(day), kind=kind, a_kind=a_kind, start=_hm(start))
        return Draft(dept["head"], query, plan, hidden=[len(teams), total], params={"department_id": dept["id"], "day": day})


class InviteTeamToMeeting(Template):
    name = "invite_team_to_meeting"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "cross_entity_cascade")
    phrasings = (
        "For my meeting '{title}' on {day}: {remove}invite everyone in the {team} team who isn't on it yet as optional "
        "participants (skip anyone on leave).",
        "I want the {team} team at '{title}' ({day}). {remove_cap} all of its members who aren't invited yet, as optional, "
        "leaving out people on leave.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        meeting = ctx.choice(ctx.rows(
            "SELECT m.* FROM meetings m WHERE m.status = 'scheduled' AND m.start_at >= ? "
            "AND (SELECT COUNT(*) FROM meetings x WHERE x.organizer_id = m.organizer_id AND x.title = m.title "
            "     AND substr(x.start_at, 1, 10) = substr(m.start_at, 1, 10)) = 1 "
            "AND (m.room_id IS NULL OR (SELECT capacity FROM rooms r WHERE r.id = m.room_id) - (SELECT COUNT(*) FROM meeting_participants p "
            "     WHERE p.meeting_id = m.id AND p.response != 'declined') >= 3) ORDER BY m.id", f"{FIRST_DAY} 00:00:00"), "meeting")
        actor = meeting["organizer_id"]
        own_team = ctx.value("SELECT department_id FROM employees WHERE id = ?", actor)
        invited = set(ctx.column("SELECT employee_id FROM meeting_participants WHERE meeting_id = ?", meeting["id"]))
        declined = ctx.column("SELECT employee_id FROM meeting_participants WHERE meeting_id = ? AND response = 'declined' "
                              "AND role != 'organiser' ORDER BY employee_id", meeting["id"])
        room_left = None
        if meeting["room_id"] is not None:
            capacity = ctx.value("SELECT capacity FROM rooms WHERE id = ?", meeting["room_id"])
            room_left = capacity - ctx.value("SELECT COUNT(*) FROM meeting_participants WHERE meeting_id = ? AND response != 'declined'",
                                             meeting["id"])
        options = []
        for team in ctx.rows("SELECT id, name FROM departments WHERE kind = 'team' ORDER BY id"):
            members = ctx.column("SELECT id FROM employees WHERE department_id = ? AND status = 'active' ORDER BY id", team["id"])
            if set(declined) & set(members):
                continue  # "not on it yet" would be ambiguous for a decliner just taken off
            new = [m for m in members if m not in invited and m != actor]
            if 3 <= len(new) <= 40 and (room_left is None or len(new) <= room_left):
                options.append((team, new))
        own = [o for o in options if o[0]["id"] == own_team]
        team, new = own[0] if own and ctx.rng.random() < 0.4 else ctx.choice(options, "team that fits")
        remove = "take off everyone who declined, then " if declined else ""
        remove_cap = "Take off everyone who declined it, then add" if declined else "Add"
        query = self.phrase(ctx, title=meeting["title"], day=_nice(meeting["start_at"]), team=team["name"], remove=remove,
                            remove_cap=remove_cap)
        plan = steps([Step("remove_participant", {"meeting_id": meeting["id"], "employee_id": e}) for e in declined],
                     Step("invite_participants", {"meeting_id": meeting["id"], "employee_ids": new, "role": "optional"}))
        return Draft(actor, query, plan, hidden=[len(new), len(declined)], params={"meeting_id": meeting["id"], "team_id": team["id"]})


class ChatRoleMeeting(Template):
    name = "chat_role_meeting"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "cross_entity_cascade", "cross_step_dependency")
    phrasings = (
        "Schedule an online meeting '{title}' on {day}, {start} to {end}, and invite as required participants every member of "
        "the '{chat}' chat whose job title contains '{word}', except people on leave. Then post '{message}' in that chat.",
        "From the '{chat}' group chat, I want everyone with '{word}' in their job title (not those on leave) in an online "
        "meeting '{title}' on {day} from {start} to {end}, all required. Once it's set up, write '{message}' in the chat.",
    )
    words = ("Engineer", "Manager", "Analyst", "Designer", "Senior", "Product", "Data", "Sales", "Specialist")

    def draft(self, ctx: GenContext) -> Draft:
        chat = ctx.choice(ctx.rows("SELECT id, name FROM chats WHERE member_count >= 15 ORDER BY id"), "chat")
        actor = ctx.choice(ctx.column("SELECT cm.employee_id FROM chat_members cm JOIN employees e ON e.id = cm.employee_id "
                                      "WHERE cm.chat_id = ? AND e.status = 'active' ORDER BY cm.employee_id", chat["id"]), "member")
        if ctx.value("SELECT COUNT(*) FROM chats c JOIN chat_members cm ON cm.chat_id = c.id AND cm.employee_id = ? "
                     "WHERE c.name = ? COLLATE NOCASE", actor, chat["name"]) != 1:
            raise NoTarget("chat name not unique for the actor")
        options = []
        for word in self.words:
            people = ctx.column("SELECT e.id FROM chat_members cm JOIN employees e ON e.id = cm.employee_id WHERE cm.chat_id = ? "
                                "AND e.status = 'active' AND e.id != ? AND e.title LIKE ? ORDER BY e.id", chat["id"], actor, f"%{word}%")
            if 3 <= len(people) <= 80:
                options.append((word, people))
        word, people = ctx.choice(options, "title word")
        day = _future_weekday(ctx)
        start, end = ctx.rng.choice(SLOTS)
        title = ctx.rng.choice(["{w} sync", "{w} roundtable", "{w} community of practice", "{w} knowledge sharing"]).format(w=word)
        message = ctx.rng.choice(["Invites are out, please check your calendar.", f"Sent invites for '{title}', see you there!",
                                  "Meeting invitations sent, please respond."])
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, chat=chat["name"], word=word, message=message)
        plan = [Step("create_meeting", {"title": title, "start": _at(day, start), "end": _at(day, end), "participant_ids": people}),
                Step("send_chat_message", {"chat_id": chat["id"], "content": message})]
        return Draft(actor, query, plan, hidden=[len(people)], params={"chat_id": chat["id"], "word": word})


class HeadsSync(Template):
    name = "heads_sync"
    capabilities = ("multi_condition_filtering", "aggregation_computation", "cross_step_dependency", "cross_entity_cascade")
    phrasings = (
        "Set up '{title}' on {day}, {start} to {end}, with the heads of every department and team under my division as required "
        "participants. Book the smallest bookable room in {building} that has video conferencing, fits all of us and is free then.",
        "I want all the unit heads below my division (every department and team, at any level) in '{title}' on {day} from {start} "
        "to {end}. Put it in {building}: the smallest room there with video conferencing that can be booked, holds everyone "
        "including me, and is free at that time.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        division = ctx.choice(ctx.rows(
            "SELECT d.id, d.name, h.employee_id AS head, e.location_id FROM departments d JOIN department_heads h ON h.department_id = d.id "
            "JOIN employees e ON e.id = h.employee_id WHERE d.kind = 'division' AND e.status = 'active' ORDER BY d.id"), "division")
        below = [d for d in _subtree_ids(ctx, division["id"]) if d != division["id"]]
        heads = ctx.column(f"SELECT h.employee_id FROM department_heads h JOIN employees e ON e.id = h.employee_id "
                           f"WHERE h.department_id IN {_in(below)} ORDER BY h.employee_id")
        bounded(heads, 3, 40, "heads")
        need = len(heads) + 1
        building = ctx.choice(ctx.rows(
            "SELECT b.id, b.name FROM buildings b WHERE b.location_id = ? AND EXISTS (SELECT 1 FROM rooms r WHERE r.building_id = b.id "
            "AND r.is_bookable = 1 AND r.has_video_conferencing = 1 AND r.capacity >= ?) ORDER BY b.id", division["location_id"], need),
            "building")
        rooms = ctx.rows("SELECT id, name, capacity FROM rooms WHERE building_id = ? AND is_bookable = 1 AND has_video_conferencing = 1 "
                         "AND capacity >= ? ORDER BY capacity, name, id", building["id"], need)
        # Half of the time, meet exactly when the smallest candidate is taken, so availability decides.
        taken = ctx.rows("SELECT start_at, end_at FROM room_bookings WHERE room_id = ? AND status = 'active' AND start_at >= ? "
                         "AND substr(start_at, 1, 10) = substr(end_at, 1, 10) ORDER BY start_at, id", rooms[0]["id"], f"{FIRST_DAY} 00:00:00")
        if taken and ctx.rng.random() < 0.5:
            slot = ctx.choice(taken)
            day, start, end = slot["start_at"][:10], slot["start_at"][11:16], slot["end_at"][11:16]
        else:
            day = _future_weekday(ctx)
            start, end = ctx.rng.choice(SLOTS)
        room = _smallest([r for r in rooms if _room_free(ctx, r["id"], _stored(day, start), _stored(day, end))])
        title = ctx.rng.choice(["{d} leadership sync", "{d} heads meeting", "{d} planning with leads"]).format(d=division["name"])
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, building=building["name"])
        plan = [Step("create_meeting", {"title": title, "start": _at(day, start), "end": _at(day, end), "participant_ids": heads,
                                        "room_id": room["id"]})]
        return Draft(division["head"], query, plan, hidden=[room["name"], len(heads)],
                     params={"division_id": division["id"], "room_id": room["id"]})


# -- meetings: changes and cancellations -----------------------------------------------------


class RescheduleMeeting(Template):
    name = "reschedule_meeting"
    capabilities = ("cross_step_dependency", "cross_entity_cascade", "complete_data_acquisition")
    phrasings = (
        "My meeting '{title}' on {day} has to move to {new_day}, same time. Cancel it with the reason '{reason}' and schedule it "
        "again on the new day with the same title, agenda and {room}, inviting the same people in the same roles (required or "
        "optional), except those who declined the original.",
        "Please move '{title}' from {day} to {new_day} (same hours): cancel the current one (reason: '{reason}') and create a "
        "new one with the same title and agenda, {room}, and the same required and optional participants minus anyone who "
        "declined.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        meeting = ctx.choice(ctx.rows(
            "SELECT m.* FROM meetings m WHERE m.status = 'scheduled' AND m.start_at >= ? "
            "AND (SELECT COUNT(*) FROM meetings x WHERE x.organizer_id = m.organizer_id AND x.title = m.title "
            "     AND substr(x.start_at, 1, 10) = substr(m.start_at, 1, 10)) = 1 ORDER BY m.id", f"{FIRST_DAY} 00:00:00"), "meeting")
        actor, day = meeting["organizer_id"], meeting["start_at"][:10]
        shift = ctx.rng.choice([1, 2, 3, 7, 14])
        new_day = _shift(day, shift)
        while _day(new_day).weekday() >= 5:
            new_day = _shift(new_day, 1)
        if ctx.value("SELECT 1 FROM meetings WHERE organizer_id = ? AND title = ? AND substr(start_at, 1, 10) = ?",
                     actor, meeting["title"], new_day):
            raise NoTarget("the series already meets that day")
        start, end = meeting["start_at"][11:16], meeting["end_at"][11:16]
        if meeting["end_at"][:10] != day:
            raise NoTarget("meeting spans midnight")
        if meeting["room_id"] is not None:
            room = ctx.one("SELECT r.name, r.is_bookable, b.name AS building FROM rooms r JOIN buildings b ON b.id = r.building_id "
                           "WHERE r.id = ?", meeting["room_id"])
            assert room is not None
            if not room["is_bookable"] or not _room_free(ctx, meeting["room_id"], _stored(new_day, start), _stored(new_day, end)):
                raise NoTarget("room taken on the new day")
            room_text = f"the same room ({room['name']})"
        else:
            room_text = "online only as before"
        people = ctx.rows("SELECT employee_id, role FROM meeting_participants WHERE meeting_id = ? AND role != 'organiser' "
                          "AND response != 'declined' ORDER BY employee_id", meeting["id"])
        required = [p["employee_id"] for p in people if p["role"] == "required"]
        optional = [p["employee_id"] for p in people if p["role"] == "optional"]
        if not people:
            raise NoTarget("nobody left to invite")
        reason = f"Moved to {pretty_day(new_day).rsplit(',', 1)[0]}"
        query = self.phrase(ctx, title=meeting["title"], day=_nice(day), new_day=_nice(new_day), reason=reason, room=room_text)
        args: dict[str, Any] = {"title": meeting["title"], "start": _at(new_day, start), "end": _at(new_day, end)}
        if required:
            args["participant_ids"] = required
        if optional:
            args["optional_participant_ids"] = optional
        if meeting["room_id"] is not None:
            args["room_id"] = meeting["room_id"]
        if meeting["agenda"]:
            args["agenda"] = meeting["agenda"]
        plan = [Step("cancel_meeting", {"meeting_id": meeting["id"], "reason": reason}), Step("create_meeting", args)]
        return Draft(actor, query, plan, hidden=[len(people)], params={"meeting_id": meeting["id"], "new_day": new_day})


class LeaveCleanup(Template):
    name = "leave_cleanup"
    capabilities = ("precise_boundary_judgement", "complete_data_acquisition", "multi_condition_filtering", "cross_entity_cascade")
    phrasings = (
        "I'm taking leave from {first} to {last} (both days included). Put a leave entry '{title}' on my calendar from 09:00 on "
        "{first} to 18:00 on {last}, cancel every meeting I organise that starts on any of those days with the reason '{reason}', "
        "and decline every other meeting starting in that period that I haven't declined yet.",
        "Out of office {first} through {last}. Please: add '{title}' as a leave entry from {first} 09:00 until {last} 18:00; "
        "cancel the meetings I organise starting on those days (reason: '{reason}'); and decline all the meetings I'm invited "
        "to that start in that time, unless I've already declined them.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        actor = ctx.choice(ctx.column(
            "SELECT p.employee_id FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE m.status = 'scheduled' "
            "AND m.start_at >= ? AND p.response != 'declined' GROUP BY p.employee_id HAVING COUNT(*) >= 2 ORDER BY p.employee_id",
            f"{FIRST_DAY} 00:00:00"), "busy employee")
        days = ctx.column(
            "SELECT substr(m.start_at, 1, 10) FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = ? "
            "AND m.status = 'scheduled' AND m.start_at >= ? AND p.response != 'declined' ORDER BY m.start_at, m.id",
            actor, f"{FIRST_DAY} 00:00:00")
        pairs = [(a, b) for i, a in enumerate(days) for b in days[i + 1:] if (_day(b) - _day(a)).days <= 21]
        first, last = ctx.choice(pairs, "window")
        if ctx.rng.random() < 0.4:
            first = max(FIRST_DAY, _shift(first, -ctx.rng.choice([1, 2])))
        if ctx.rng.random() < 0.4:
            last = _shift(last, ctx.rng.choice([1, 2]))
        rows = ctx.rows(
            "SELECT m.id, p.role, p.response FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = ? "
            "AND m.status = 'scheduled' AND m.start_at >= ? AND m.start_at < ? ORDER BY m.start_at, m.id",
            actor, f"{first} 00:00:00", f"{_shift(last, 1)} 00:00:00")
        cancel = [r["id"] for r in rows if r["role"] == "organiser"]
        decline = [r["id"] for r in rows if r["role"] != "organiser" and r["response"] != "declined"]
        if len(cancel) + len(decline) < 2:
            raise NoTarget("too few meetings")
        title = ctx.rng.choice(["Annual leave", "Family trip", "Vacation", "Out of office"])
        reason = ctx.rng.choice(["I'm on leave", "Organiser on annual leave", "Cancelled: I'm out of office"])
        query = self.phrase(ctx, first=pretty_day(first), last=pretty_day(last), title=title, reason=reason)
        plan = steps(Step("create_schedule_entry", {"title": title, "start": _at(first, "09:00"), "end": _at(last, "18:00"),
                                                     "kind": "leave"}),
                     [Step("cancel_meeting", {"meeting_id": m, "reason": reason}) for m in cancel],
                     [Step("respond_to_meeting", {"meeting_id": m, "response": "declined"}) for m in decline])
        return Draft(actor, query, plan, hidden=[len(cancel), len(decline)], params={"first": first, "last": last})


# -- calendar and rooms ------------------------------------------------------------------------


class FocusBlocks(Template):
    name = "focus_blocks"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "precise_boundary_judgement")
    phrasings = (
        "Block {start}-{end} as private focus time titled '{title}' on every weekday from {first} to {last} (both included), "
        "but only on the days where nothing on my calendar overlaps that slot. Something ending exactly at {start} or starting "
        "exactly at {end} doesn't overlap.",
        "I need '{title}' focus blocks, {start} to {end}, on each weekday between {first} and {last} inclusive. Make them private "
        "focus entries, and skip any day where my calendar already has something overlapping those hours (touching at {start} "
        "or {end} is fine).",
    )

    def draft(self, ctx: GenContext) -> Draft:
        # Anchor the slot on an entry's end, so an entry that merely touches the slot decides a day.
        anchor = ctx.choice(ctx.rows(
            "SELECT employee_id, start_at, end_at FROM schedule_entries WHERE start_at >= ? AND start_at < '2026-11-14' "
            "AND substr(start_at, 1, 10) = substr(end_at, 1, 10) AND substr(end_at, 12, 8) BETWEEN '09:00:00' AND '15:30:00' "
            "AND substr(end_at, 15, 5) IN ('00:00', '30:00') ORDER BY id", f"{FIRST_DAY} 00:00:00"), "anchor entry")
        if _day(anchor["start_at"]).weekday() >= 5:
            raise NoTarget("weekend anchor")
        actor = anchor["employee_id"]
        start = anchor["end_at"][11:16]
        end = _hm(_minutes(start) + ctx.rng.choice([60, 90, 120]))
        day = anchor["start_at"][:10]
        first = max(FIRST_DAY, _shift(day, -ctx.rng.randint(0, 7)))
        last = _shift(day, ctx.rng.randint(2, 14))
        free = [d for d in _weekdays_between(first, last)
                if not ctx.value("SELECT 1 FROM schedule_entries WHERE employee_id = ? AND start_at < ? AND end_at > ?",
                                 actor, _stored(d, end), _stored(d, start))]
        bounded(free, 3, 25, "free days")
        title = ctx.rng.choice(["Deep work", "Heads-down time", "No meetings please", "Writing time"])
        query = self.phrase(ctx, start=start, end=end, title=title, first=pretty_day(first), last=pretty_day(last))
        plan = [Step("create_schedule_entry", {"title": title, "start": _at(d, start), "end": _at(d, end), "kind": "focus",
                                               "is_private": True}) for d in free]
        return Draft(actor, query, plan, hidden=[len(free)], params={"first": first, "last": last, "slot": [start, end]})


class WeekOfRoomBookings(Template):
    name = "week_of_room_bookings"
    capabilities = ("cross_step_dependency", "aggregation_computation", "multi_condition_filtering")
    phrasings = (
        "Book room {room} in {building} for '{purpose}' from {start} to {end} on every weekday (Monday to Friday) of {weeks}. On a day it's already taken, book instead the smallest bookable room in {building} that is free "
        "then and holds at least as many people as {room} (between equally small ones, the first by name in alphabetical order).",
        "I need {room} ({building}) {start}-{end}, Monday through Friday, {weeks}, purpose '{purpose}'. If "
        "{room} is taken on a day, take the smallest other bookable room in the same building with at least its capacity that "
        "is free at that time; if several are equally small, pick the one whose name comes first alphabetically.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        busy = ctx.choice(ctx.rows(
            "SELECT k.room_id, k.start_at, k.end_at, r.name, r.capacity, r.building_id, b.name AS building, b.location_id "
            "FROM room_bookings k JOIN rooms r ON r.id = k.room_id JOIN buildings b ON b.id = r.building_id "
            "WHERE k.status = 'active' AND k.start_at >= '2026-10-19 00:00:00' AND r.is_bookable = 1 "
            "AND substr(k.start_at, 1, 10) = substr(k.end_at, 1, 10) AND substr(k.start_at, 15, 5) IN ('00:00', '30:00') "
            "AND substr(k.end_at, 15, 5) IN ('00:00', '30:00') ORDER BY k.id"), "booking")
        if _day(busy["start_at"]).weekday() >= 5:
            raise NoTarget("weekend booking")
        if ctx.value("SELECT COUNT(*) FROM rooms WHERE building_id = ? AND name = ?", busy["building_id"], busy["name"]) != 1:
            raise NoTarget("room name not unique")
        day = busy["start_at"][:10]
        monday = _shift(day, -_day(day).weekday())
        two = ctx.rng.random() < 0.5
        if two and ctx.rng.random() < 0.5 and monday >= "2026-10-26":
            monday = _shift(monday, -7)  # the taken day falls in the second week
        days = _weekdays_between(monday, _shift(monday, 11 if two else 4))
        weeks = (f"the two weeks starting Monday, {pretty_day(monday)}" if two
                 else f"the week starting Monday, {pretty_day(monday)}")
        start, end = busy["start_at"][11:16], busy["end_at"][11:16]
        others = ctx.rows("SELECT id, name, capacity FROM rooms WHERE building_id = ? AND is_bookable = 1 AND capacity >= ? AND id != ? "
                          "ORDER BY capacity, name, id", busy["building_id"], busy["capacity"], busy["room_id"])
        plan, rooms = [], []
        for d in days:
            s, e = _stored(d, start), _stored(d, end)
            room = busy["room_id"] if _room_free(ctx, busy["room_id"], s, e) else \
                _smallest_then_name([r for r in others if _room_free(ctx, r["id"], s, e)])["id"]
            rooms.append(room)
        actor = ctx.choice(ctx.column("SELECT id FROM employees WHERE location_id = ? AND status = 'active' ORDER BY id",
                                      busy["location_id"]), "employee")
        purpose = ctx.rng.choice(["Candidate interviews", "Customer calls", "Quiet work", "Training prep", "Vendor demos"])
        for d, room in zip(days, rooms):
            plan.append(Step("book_room", {"room_id": room, "start": _at(d, start), "end": _at(d, end), "purpose": purpose}))
        query = self.phrase(ctx, room=busy["name"], building=busy["building"], purpose=purpose, start=start, end=end, weeks=weeks)
        names = sorted({r["name"] for r in others if r["id"] in rooms})
        return Draft(actor, query, plan, hidden=names, params={"room_id": busy["room_id"], "monday": monday, "rooms": rooms})


# -- chats -----------------------------------------------------------------------------------


class AttendanceChat(Template):
    name = "attendance_chat"
    capabilities = ("aggregation_computation", "precise_boundary_judgement", "cross_step_dependency", "complete_data_acquisition")
    phrasings = (
        "Create a project chat '{name}' with everyone (besides me) who actually attended at least {n} of the past '{title}' "
        "meetings I organised, then post '{message}' in it.",
        "Look at the completed '{title}' meetings I ran and count who joined each one. Everyone other than me who attended {n} "
        "or more of them goes into a new project chat called '{name}'; then send '{message}' there.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        series = ctx.choice(ctx.rows(
            "SELECT organizer_id, title FROM meetings WHERE status = 'completed' GROUP BY organizer_id, title HAVING COUNT(*) >= 3 "
            "ORDER BY organizer_id, title"), "series")
        actor = series["organizer_id"]
        counts = ctx.rows(
            "SELECT p.employee_id, SUM(p.attended = 1) AS n FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
            "WHERE m.organizer_id = ? AND m.title = ? AND m.status = 'completed' AND p.employee_id != ? "
            "GROUP BY p.employee_id ORDER BY p.employee_id", actor, series["title"], actor)
        levels = sorted({r["n"] for r in counts if r["n"] >= 2 and sum(c["n"] >= r["n"] for c in counts) >= 2})
        if not levels:
            raise NoTarget("nobody attended twice")
        n = ctx.rng.choice(levels)  # a real attendance count: "at least" must include it
        members = [r["employee_id"] for r in counts if r["n"] >= n]
        bounded(members, 2, 60, "attendees")
        name = _free_chat_name(ctx, actor, PROJECT_CHAT_NAMES)
        message = ctx.rng.choice(["Thanks for showing up every time! Let's keep follow-ups here.",
                                  "Welcome! This is our space between meetings.", "Hi all, please post action items here."])
        query = self.phrase(ctx, name=name, n=_words(n), title=series["title"], message=message)
        plan = [Step("create_chat", {"name": name, "member_ids": members, "chat_type": "project"}),
                Step("send_chat_message", {"chat_id": ref(0, "chat_id"), "content": message})]
        return Draft(actor, query, plan, hidden=[len(members)], params={"title": series["title"], "min_attended": n})


class NewcomerChat(Template):
    name = "newcomer_chat"
    capabilities = ("complete_data_acquisition", "multi_condition_filtering", "precise_boundary_judgement", "cross_step_dependency")
    phrasings = (
        "Create a social chat '{name}' for the newcomers of the {division} division: everyone in it (any department or team below it included) "
        "who joined the company on or after {date}, leaving out anyone on leave. Then post '{message}' in it.",
        "Start a social group chat called '{name}' with everyone in the {division} division, at any level below it too, hired on "
        "{date} or later (that day counts) who isn't on leave, and send '{message}' to it.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        division = ctx.choice(ctx.rows("SELECT id, name FROM departments WHERE kind = 'division' ORDER BY id"), "division")
        units = _subtree_ids(ctx, division["id"])
        dates = sorted(set(ctx.column(f"SELECT hire_date FROM employees WHERE department_id IN {_in(units)} AND status = 'active'")))
        cut = ctx.choice(dates[-40:-3], "hire date")  # a real hire date: "on or after" must include that person
        people = ctx.column(f"SELECT id FROM employees WHERE department_id IN {_in(units)} AND status = 'active' AND hire_date >= ? "
                            "ORDER BY id", cut)
        actor = ctx.choice(ctx.column(f"SELECT id FROM employees WHERE department_id IN {_in(units)} AND status = 'active' ORDER BY id"),
                           "employee")
        members = [p for p in people if p != actor]
        bounded(members, 3, 45, "newcomers")
        name = _free_chat_name(ctx, actor, CHAT_NAMES)
        message = ctx.rng.choice(["Welcome aboard, everyone!", "Hi all, lunch together this Friday?", "Welcome! Ask anything here."])
        query = self.phrase(ctx, name=name, division=division["name"], date=pretty_day(cut), message=message)
        if actor in people:  # the owner is in the chat anyway and cannot be listed as a member
            query += " I'm one of those newcomers myself; I'm in the chat anyway as its owner."
        plan = [Step("create_chat", {"name": name, "member_ids": members, "chat_type": "social"}),
                Step("send_chat_message", {"chat_id": ref(0, "chat_id"), "content": message})]
        return Draft(actor, query, plan, hidden=[len(members)], params={"division_id": division["id"], "hired_since": cut})


class PruneQuietChatMembers(Template):
    name = "prune_quiet_chat_members"
    capabilities = ("complete_data_acquisition", "aggregation_computation", "precise_boundary_judgement", "multi_condition_filtering")
    phrasings = (
        "Clean up my chat '{chat}': remove every member (admins included) who hasn't posted anything there on or after {date}, "
        "including people who never posted at all.",
        "In '{chat}', which I own, keep only the people who have sent a message there since {date} (that day counts). Remove "
        "everyone else, admins too.",
    )

    def draft(self, ctx: GenContext) -> Draft:
        chat = ctx.choice(ctx.rows(
            "SELECT c.id, c.name, c.owner_id FROM chats c WHERE c.chat_type IN ('project', 'social') AND c.member_count >= 8 "
            "AND (SELECT COUNT(*) FROM chats x JOIN chat_members y ON y.chat_id = x.id AND y.employee_id = c.owner_id "
            "     WHERE x.name = c.name COLLATE NOCASE) = 1 ORDER BY c.id"), "chat")
        members = ctx.column("SELECT employee_id FROM chat_members WHERE chat_id = ? AND role != 'owner' ORDER BY employee_id", chat["id"])
        last_any = {r["sender_id"]: r["d"] for r in ctx.rows(
            "SELECT sender_id, MAX(substr(sent_at, 1, 10)) AS d FROM chat_messages WHERE chat_id = ? GROUP BY sender_id", chat["id"])}
        last_kept = {r["sender_id"]: r["d"] for r in ctx.rows(
            "SELECT sender_id, MAX(substr(sent_at, 1, 10)) AS d FROM chat_messages WHERE chat_id = ? AND is_recalled = 0 "
            "GROUP BY sender_id", chat["id"])}
        dates = sorted({last_any[m] for m in members if m in last_any})
        cut = ctx.choice(dates[1:], "cut date")  # a member's last post day: "on or after" keeps them

        def quiet(last: dict[int, str]) -> list[int]:
            return [m for m in members if last.get(m, "") < cut]

        out = quiet(last_any)
        if out != quiet(last_kept):
            raise NoTarget("a recalled message decides")  # does a recalled message count as posting? avoid the question
        bounded(out, 2, 40, "quiet members")
        if len(out) == len(members):
            raise NoTarget("everyone goes")
        query = self.phrase(ctx, chat=chat["name"], date=pretty_day(cut))
        plan = [Step("remove_chat_member", {"chat_id": chat["id"], "employee_id": m}) for m in out]
        return Draft(chat["owner_id"], query, plan, hidden=[len(out)], params={"chat_id": chat["id"], "since": cut})


# -- the organisation ------------------------------------------------------------------------


class TransferSeniorStaff(Template):
    name = "transfer_senior_staff"
    capabilities = ("multi_condition_filtering", "precise_boundary_judgement", "cross_entity_cascade")
    phrasings = (
        "Move everyone in the {team_a} team whose job family is {family} and whose level is {level} or higher to the {team_b} "
        "team (the team lead stays where they are).{post}",
        "Reorganisation: everyone in the {team_a} team in the {family} job family at level {level} and above (level {level} "
        "included; not the team head) transfers to {team_b}.{post}",
    )

    def draft(self, ctx: GenContext) -> Draft:
        dept = ctx.choice(ctx.rows(
            "SELECT d.id, d.name, h.employee_id AS head FROM departments d JOIN department_heads h ON h.department_id = d.id "
            "WHERE d.kind IN ('department', 'division') AND (SELECT COUNT(*) FROM departments t WHERE t.parent_id = d.id) >= 2 "
            "ORDER BY d.id"), "department")
        units = [u for u in _subtree_ids(ctx, dept["id"]) if u != dept["id"]]
        teams = ctx.rows(f"SELECT id, name FROM departments WHERE id IN {_in(units)} AND kind = 'team' ORDER BY id")
        if len(teams) < 2:
            raise NoTarget("two teams")
        team_a, team_b = ctx.rng.sample(teams, 2)
        staff = ctx.rows("SELECT id, job_family, level FROM employees WHERE department_id = ? "
                         "AND id NOT IN (SELECT employee_id FROM department_heads) ORDER BY id", team_a["id"])
        options = []
        for family in sorted({s["job_family"] for s in staff}):
            levels = sorted({s["level"] for s in staff if s["job_family"] == family})
            for level in levels[1:]:  # a real level, with someone of the family below it
                movers = [s["id"] for s in staff if s["job_family"] == family and s["level"] >= level]
                if 2 <= len(movers) <= 15:
                    options.append((family, level, movers))
        family, level, movers = ctx.choice(options, "family and level")
        chat = ctx.rows("SELECT id, name FROM chats WHERE chat_type = 'department' AND department_id = ? AND owner_id = ? ORDER BY id",
                        dept["id"], dept["head"])
        message = ctx.rng.choice([f"Welcome to the {team_b['name']} team, new joiners!", "Heads-up: some team changes took effect today.",
                                  "Org update: a few colleagues changed teams today."])
        post = ""
        if len(chat) == 1 and ctx.value("SELECT COUNT(*) FROM chats WHERE owner_id = ? AND name = ?", dept["head"], chat[0]["name"]) == 1:
            post = ctx.rng.choice([f" Then post '{message}' in the '{chat[0]['name']}' chat.",
                                   f" Afterwards, announce it in our department chat '{chat[0]['name']}' with the message '{message}'."])
        query = self.phrase(ctx, team_a=team_a["name"], team_b=team_b["name"], family=family, level=level, post=post)
        plan = steps([Step("transfer_employee", {"employee_id": m, "department_id": team_b["id"]}) for m in movers],
                     [Step("send_chat_message", {"chat_id": chat[0]["id"], "content": message})] if post else [])
        return Draft(dept["head"], query, plan, hidden=[len(movers)],
                     params={"from": team_a["id"], "to": team_b["id"], "family": family, "min_level": level})


TEMPLATES = [
    WeeklyTeamSeries, OneOnOnes, DepartmentAllHands, TeamReviewsBackToBack, InviteTeamToMeeting, ChatRoleMeeting, HeadsSync,
    RescheduleMeeting, LeaveCleanup, FocusBlocks, WeekOfRoomBookings, AttendanceChat, NewcomerChat,
    PruneQuietChatMembers, TransferSeniorStaff,
]
