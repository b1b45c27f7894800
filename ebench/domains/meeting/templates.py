"""Task templates of the meeting platform (Qingyun Technology's collaboration app).

Each template has two halves (see ebench/tasks/generation.py): `draft` inspects the world with
SQL, picks an employee and targets and writes the expected writes with the ids it found; `solve`
reaches the same end state through the public tools from what the query states. What a person
would type (a meeting title, a date and time, a chat name, a message, a threshold) is the user's
and appears in the query; what the data decides (which colleagues, which room, how many) does not.
Wording follows docs/wording.md.

The world's "now" is frozen (Thursday 2026-10-15 09:30); new meetings, bookings and calendar
entries are placed from the next day on, so nothing is refused for starting in the past. Every
value a tool stores from its arguments (a cancel reason, an entry's kind, a booking's purpose) is
stated in the query, so exactly one set of changes is right.

Every condition a query states is drawn so that it excludes someone: a "not on leave" is only
said when a candidate is on leave (and would otherwise be written), a calendar check only when a
candidate is busy at that time. Thresholds are values a person would write (a level, a number of
meetings); a candidate may or may not sit exactly on one. Every clause of a wording is declared in
the template's `clauses`: the condition it feeds (a team or chat named as the scope feeds the
condition applied to its people), or WRITTEN for a value the task writes. Where a tool offers a
filter that states a condition exactly (a status, an office city, a job-title word, a day), the
public solver hands it over as `narrow` (the careful filtered plan) and still checks every item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from ...tasks.public import WRITTEN, Condition, PublicAPI, PublicSolverFailed, Reading, find_one
from ...tasks.spec import Step
from ...tasks.template_api import Draft, GenContext, NoTarget, Template
from ...tasks.template_helpers import pretty_day, ref
from ...tasks.vocabulary import OpenTerm

NOW = "2026-10-15 09:30:00"
FIRST_DAY = "2026-10-16"  # the day after "now": everything new starts on or after it
LAST_DAY = "2026-11-13"  # the calendar's data runs to November 12
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SLOTS = (
    ("09:00", "10:00"),
    ("10:00", "11:00"),
    ("10:30", "11:30"),
    ("11:00", "12:00"),
    ("13:30", "14:30"),
    ("14:00", "15:00"),
    ("14:00", "15:30"),
    ("15:00", "16:00"),
    ("15:30", "16:30"),
    ("16:00", "17:00"),
)
MESSAGES = (
    "Hi all, welcome! We will keep the follow-ups here.",
    "Welcome aboard, everyone!",
    "Invites are out, please check your calendars.",
    "Hello team, this is our space between meetings.",
    "Please post action items and questions here.",
    "Quick heads-up: some changes took effect today.",
    "Thanks everyone, see you at the next session!",
)
SOCIAL_CHAT_NAMES = (
    "Coffee Roulette",
    "Friday Lunch Club",
    "Newcomers Corner",
    "Badminton After Work",
    "Book Swap",
    "Hiking Crew",
    "Hot Pot Fridays",
    "Board Game Night",
    "Running Buddies",
    "Photography Walks",
    "Tea Break",
    "Karaoke Squad",
)
PROJECT_CHAT_NAMES = (
    "Retro Follow-ups",
    "Core Crew",
    "Working Group",
    "Action Items",
    "Inner Circle",
    "Follow-up Squad",
    "Standing Members",
    "Keep-in-the-loop",
    "Core Attendees",
    "Architecture Guild",
    "Launch Room",
    "Tiger Team",
)


# Terms whose reading the product leaves open: a request that uses one says which reading it means.
OPEN_TERMS = (
    OpenTerm(
        "my meetings",
        "list_my_meetings lists the meetings the employee organises together with those they are only invited to",
        decided_by=r"\bI (?:organi[sz]e|organi[sz]ed|ran|run)\b|\bI(?:'m| am| was) (?:only )?invited\b|\borgani[sz]er\b",
        pattern=r"\bmy (?:[\w-]+ )?meetings?\b|\bmy '[^']*' meetings?\b",
    ),
    OpenTerm(
        "chat members",
        "list_chat_members lists a chat's owner and admins together with its other members",
        decided_by=r"\bowner\b|\bI own\b|\badmins?\b",
        pattern=r"\bmembers? of (?:the |my |our |that |this )?(?:'[^']*' )?(?:group )?chat\b|\bchat(?:'s)? members\b|\bmembers of (?:it|that chat)\b",
    ),
)


# -- dates and times -------------------------------------------------------------------------


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


def _ts(day: str, hm: str) -> str:
    """The same moment as the database stores it (with seconds)."""
    return f"{day} {hm}:00"


def _back_to_back(first: str, i: int, length: int) -> tuple[str, str]:
    """Start and end of the i-th (from 0) of meetings of `length` minutes held back to back from `first`."""
    return _hm(_minutes(first) + length * i), _hm(_minutes(first) + length * (i + 1))


def _days_between(first: str, last: str) -> list[str]:
    out, current = [], _day(first)
    while current <= _day(last):
        out.append(_iso(current))
        current += timedelta(days=1)
    return out


def _weekdays_between(first: str = FIRST_DAY, last: str = "2026-11-12") -> list[str]:
    return [d for d in _days_between(first, last) if _day(d).weekday() < 5]


def _overlaps(spans: Iterable[tuple[str, str]], start: str, end: str) -> bool:
    return any(s < end and e > start for s, e in spans)


# -- SQL side --------------------------------------------------------------------------------


def _any_slot(ctx: GenContext) -> tuple[str, str, str]:
    """A weekday ahead and one of the usual slots on it: (day, start, end)."""
    day = ctx.choice(_weekdays_between())
    start, end = ctx.rng.choice(SLOTS)
    return day, start, end


T = TypeVar("T")


def _pick(ctx: GenContext, items: Iterable[T], build: Callable[[T], Draft], what: str, tries: int = 30) -> Draft:
    """`build(item)` for the first of the items, in a random order, that makes a task (NoTarget: the next one)."""
    pool = list(items)
    ctx.rng.shuffle(pool)
    for item in pool[:tries]:
        try:
            return build(item)
        except NoTarget:
            continue
    raise NoTarget(f"no {what}")


def _in(ids: Iterable[int]) -> str:
    return "(" + ",".join(str(int(i)) for i in ids) + ")"


def _teams_alphabetically(ctx: GenContext, dept: Any) -> tuple[list[Any], list[Any]]:
    """The teams of `dept` in listing order and A to Z: a task that orders them must be able to
    get it wrong, so the two orders have to differ."""
    teams = ctx.rows("SELECT id, name FROM departments WHERE parent_id = ? ORDER BY id", dept["id"])
    ordered = sorted(teams, key=lambda t: (t["name"].casefold(), t["id"]))
    if ordered == teams:
        raise NoTarget("alphabetical order is the listing order")
    return teams, ordered


def _headed_units(kind: str, min_units: int = 0) -> str:
    """SQL for the units of a kind, each with its head (with `min_units`: only those with that many units right below)."""
    below = f"AND (SELECT COUNT(*) FROM departments t WHERE t.parent_id = d.id) >= {min_units} " if min_units else ""
    return (
        "SELECT d.id, d.name, d.kind, h.employee_id AS head FROM departments d JOIN department_heads h ON h.department_id = d.id "
        f"WHERE d.kind = '{kind}' {below}ORDER BY d.id"
    )


def _subtree(ctx: GenContext, department_id: int) -> list[int]:
    return ctx.column(
        "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT d.id FROM departments d JOIN sub ON d.parent_id = sub.id) "
        "SELECT id FROM sub ORDER BY id",
        department_id,
    )


def _heads(ctx: GenContext) -> dict[int, int]:
    """employee id -> the department they head."""
    return {r["employee_id"]: r["department_id"] for r in ctx.rows("SELECT employee_id, department_id FROM department_heads")}


def _people(ctx: GenContext, department_ids: Iterable[int]) -> list[dict[str, Any]]:
    return ctx.rows(
        f"SELECT id, name, title, job_family, level, status, hire_date, location_id, department_id, manager_id "
        f"FROM employees WHERE department_id IN {_in(department_ids)} ORDER BY id"
    )


def _calendars(ctx: GenContext, ids: Iterable[int], first: str = FIRST_DAY, last: str = LAST_DAY) -> dict[int, list[tuple[str, str]]]:
    """Every calendar entry of these employees that overlaps the days first..last."""
    out: dict[int, list[tuple[str, str]]] = {i: [] for i in ids}
    if not out:
        return out
    for r in ctx.rows(
        f"SELECT employee_id, start_at, end_at FROM schedule_entries WHERE employee_id IN {_in(out)} "
        "AND start_at < ? AND end_at > ? ORDER BY start_at, id",
        f"{_shift(last, 1)} 00:00:00",
        f"{first} 00:00:00",
    ):
        out[r["employee_id"]].append((r["start_at"], r["end_at"]))
    return out


def _room_free(ctx: GenContext, room_id: int, start: str, end: str) -> bool:
    return not ctx.value(
        "SELECT 1 FROM room_bookings WHERE room_id = ? AND status = 'active' AND start_at < ? AND end_at > ?", room_id, end, start
    )


def _location(ctx: GenContext, employee_id: int) -> int:
    location: int = ctx.value("SELECT location_id FROM employees WHERE id = ?", employee_id)
    return location


def _active(ctx: GenContext, employee_id: int) -> bool:
    active: bool = ctx.value("SELECT status FROM employees WHERE id = ?", employee_id) == "active"
    return active


def _two_words(names: Iterable[str]) -> bool:
    return all(len(n.split()) == 2 for n in names)


def _surname_key(name: str) -> tuple[str, str]:
    first, last = name.split()
    return (last.casefold(), first.casefold())


def _directory_key(person: dict[str, Any]) -> tuple[str, int]:
    """How the directory sorts people: by full name (case-insensitive), then id."""
    return (person["name"].casefold(), person.get("id", person.get("employee_id", 0)))


def _chat_name(ctx: GenContext, owner: int, names: tuple[str, ...]) -> str:
    taken = {n.casefold() for n in ctx.column("SELECT name FROM chats WHERE owner_id = ?", owner)}
    return ctx.choice([n for n in names if n.casefold() not in taken], "free chat name")


def _new_chat(ctx: GenContext, owner: int, names: tuple[str, ...]) -> tuple[str, str]:
    """A name for a new chat of the owner's and the first message to post in it."""
    return _chat_name(ctx, owner, names), ctx.rng.choice(MESSAGES)


def _unique_chat_for(ctx: GenContext, employee_id: int, name: str) -> bool:
    """The chat name picks out exactly one of the employee's chats (and can be quoted: no quote in it)."""
    return (
        "'" not in name
        and ctx.value(
            "SELECT COUNT(*) FROM chats c JOIN chat_members m ON m.chat_id = c.id AND m.employee_id = ? WHERE c.name = ? COLLATE NOCASE",
            employee_id,
            name,
        )
        == 1
    )


def _meetings_titled(ctx: GenContext, employee_id: int, title: str) -> int:
    """How many of the employee's meetings (organised or invited to, any status) have this title."""
    count: int = ctx.value(
        "SELECT COUNT(*) FROM meetings m JOIN meeting_participants p ON p.meeting_id = m.id AND p.employee_id = ? "
        "WHERE m.title = ? COLLATE NOCASE",
        employee_id,
        title,
    )
    return count


def _named_by_title(ctx: GenContext, employee_id: int, title: str) -> None:
    """The query names the meeting by its title alone: refuse a title the employee has more than once (or that holds a
    quote)."""
    if "'" in title or _meetings_titled(ctx, employee_id, title) != 1:
        raise NoTarget("title not unique")


def _meeting_args(title: str, day: str, start: str, end: str, required: list[int], optional: list[int] | None) -> dict[str, Any]:
    """The arguments of create_meeting every new meeting has (the participant lists only when not empty)."""
    args: dict[str, Any] = {"title": title, "start": _at(day, start), "end": _at(day, end)}
    if required:
        args["participant_ids"] = required
    if optional:
        args["optional_participant_ids"] = optional
    return args


def _meeting_step(
    title: str,
    day: str,
    start: str,
    end: str,
    required: list[int],
    optional: list[int] | None = None,
    room: int | None = None,
    agenda: str = "",
) -> Step:
    args = _meeting_args(title, day, start, end, required, optional)
    if room is not None:
        args["room_id"] = room
    if agenda:
        args["agenda"] = agenda
    return Step("create_meeting", args)


def _chat_steps(name: str, members: list[int], chat_type: str, message: str, chat_step: int = 0) -> list[Step]:
    """Create a chat and post a first message in it (`chat_step`: the index of the create_chat step)."""
    return [
        Step("create_chat", {"name": name, "member_ids": members, "chat_type": chat_type}),
        Step("send_chat_message", {"chat_id": ref(chat_step, "chat_id"), "content": message}),
    ]


def _slots_ahead() -> Iterator[tuple[str, str, str]]:
    """Every usual slot on every weekday ahead: (day, start, end)."""
    for day in _weekdays_between():
        for start, end in SLOTS:
            yield day, start, end


def _calendar_check(
    people: list[dict[str, Any]], cal: dict[int, list[tuple[str, str]]], start: str, end: str
) -> tuple[list[int], bool, bool]:
    """Who of the people can be invited for [start, end) (active, nothing on the calendar overlapping), whether the
    calendar check bites (someone active is busy) and whether the leave check does (someone on leave is free)."""
    busy = {p["id"] for p in people if _overlaps(cal[p["id"]], start, end)}
    free = [p["id"] for p in people if p["status"] == "active" and p["id"] not in busy]
    calendar_bites = any(p["status"] == "active" and p["id"] in busy for p in people)
    leave_bites = any(p["status"] == "on_leave" and p["id"] not in busy for p in people)
    return free, calendar_bites, leave_bites


def _levels(people: Iterable[dict[str, Any]]) -> range:
    """The levels a person could ask for ("level 5 or above") over these people: every whole level above the lowest
    one up to the highest (whether or not someone sits exactly on it)."""
    levels = [p["level"] for p in people]
    return range(min(levels) + 1, max(levels) + 1) if levels else range(0)


def _family_level_options(people: list[dict[str, Any]], low: int, high: int) -> list[tuple[str, int, list[int]]]:
    """(job family, level, ids of that family at that level or above) where both conditions bite (someone of the family
    is below the level, someone of another family is at or above it) and low..high people qualify."""
    options = []
    for family in sorted({p["job_family"] for p in people}):
        for level in _levels(people):
            chosen = [p["id"] for p in people if p["job_family"] == family and p["level"] >= level]
            if (
                low <= len(chosen) <= high
                and any(p["job_family"] == family and p["level"] < level for p in people)
                and any(p["job_family"] != family and p["level"] >= level for p in people)
            ):
                options.append((family, level, chosen))
    return options


def _group_options(people: list[dict[str, Any]], key: str, low: int, high: int) -> list[tuple[Any, list[int]]]:
    """(value, ids of the active people with that value of `key`) where both conditions bite (someone with the value is
    on leave, someone active has another value) and low..high people qualify."""
    options = []
    for value in sorted({p[key] for p in people}):
        chosen = [p["id"] for p in people if p[key] == value and p["status"] == "active"]
        if (
            low <= len(chosen) <= high
            and any(p[key] == value and p["status"] == "on_leave" for p in people)
            and any(p[key] != value and p["status"] == "active" for p in people)
        ):
            options.append((value, chosen))
    return options


# -- public side ------------------------------------------------------------------------------


def _me(api: PublicAPI) -> dict[str, Any]:
    me: dict[str, Any] = api.call("get_my_profile")
    return me


def _department(api: PublicAPI, name: str) -> dict[str, Any]:
    """A department or team, by its exact name, from the organisation listing."""
    return find_one(api.all_pages("list_sub_departments", recursive=True), name=name)


def _members(api: PublicAPI, department_id: int, sub: bool = False, active: bool = False) -> list[dict[str, Any]]:
    """The unit's members (with `sub`, of the units below it too). `active`: the query leaves out people on leave, so
    the careful plan asks the directory for active people only (the solver still checks each one)."""
    narrow = {"status": "active"} if active else None
    return api.all_pages("list_department_members", narrow=narrow, department_id=department_id, include_sub_departments=sub)


def _busy(api: PublicAPI, employee_id: int | None, start: str, end: str) -> bool:
    """Whether anything on the calendar overlaps [start, end) (an entry that only touches it does not)."""
    args: dict[str, Any] = {"start": start[:10], "end": end[:10]}
    if employee_id is not None:
        args["employee_id"] = employee_id
    entries = api.all_pages("get_schedule", **args)
    return _overlaps(((e["start_at"], e["end_at"]) for e in entries), start, end)


def _present_colleagues(api: PublicAPI, people: Iterable[dict[str, Any]], me: int) -> Iterator[dict[str, Any]]:
    """The people other than me who are not on leave (the "leave" condition), checked one by one as they are taken."""
    for person in people:
        if person["employee_id"] != me and api.keep("leave", person["status"] != "on_leave"):
            yield person


def _free_ones(api: PublicAPI, people: Iterable[dict[str, Any]], start: str, end: str) -> Iterator[dict[str, Any]]:
    """The people whose calendar has nothing overlapping [start, end) (the "free" condition)."""
    for person in people:
        if api.keep("free", not _busy(api, person["employee_id"], start, end)):
            yield person


def _colleagues_in(api: PublicAPI, name: str, narrow: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Everyone in the named department or team and in the units below it, except me, from the directory (`narrow`: its
    filters for the stated conditions, for the careful plan)."""
    unit = _department(api, name)
    me = _me(api)["employee_id"]
    people = api.all_pages("search_employees", narrow=narrow, department_id=unit["department_id"], include_sub_departments=True)
    return [p for p in people if p["employee_id"] != me]


def _start_chat(api: PublicAPI, stated: dict[str, Any], members: list[int], chat_type: str) -> None:
    """Create the chat the query names with these members and post the query's message in it."""
    chat = api.call("create_chat", creates="chat_id", name=stated["name"], member_ids=members, chat_type=chat_type)
    api.call("send_chat_message", chat_id=chat["chat_id"], content=stated["message"])


def _not_declined(api: PublicAPI, participants: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A meeting's invitees who did not decline it (the "declined" condition), the organiser left out."""
    for p in participants:
        if p["role"] != "organiser" and api.keep("declined", p["response"] != "declined"):
            yield p


def _head_below(person: dict[str, Any], unit: dict[str, Any]) -> bool:
    """Whether the person heads a department or team below the unit (not the unit itself)."""
    heads: bool = person["is_department_head"] and person["department_id"] != unit["department_id"]
    return heads


def _by_role(people: Iterable[dict[str, Any]], required_if: Callable[[dict[str, Any]], bool]) -> tuple[list[int], list[int]]:
    """The people's ids split into required and optional participants, in their order."""
    required: list[int] = []
    optional: list[int] = []
    for person in people:
        (required if required_if(person) else optional).append(person["employee_id"])
    return required, optional


def _room(api: PublicAPI, name: str, building: str) -> dict[str, Any]:
    return find_one(api.all_pages("search_rooms", query=name), name=name, building=building)


def _building_id(api: PublicAPI, name: str) -> int:
    for room in api.all_pages("search_rooms", query=name):
        if room["building"].casefold() == name.casefold():
            building: int = room["building_id"]
            return building
    raise PublicSolverFailed(f"no building {name!r}")


def _meeting_titled(api: PublicAPI, title: str, narrow: dict[str, Any] | None = None) -> dict[str, Any]:
    """The one meeting of mine with this title (the "title" condition: the query names the meeting by its title alone,
    which the employee has once). `narrow`: the listing's filter for what the query says (I organise it)."""
    found = [m for m in api.all_pages("list_my_meetings", narrow=narrow) if api.keep("title", m["title"].casefold() == title.casefold())]
    if len(found) != 1:
        raise PublicSolverFailed(f"{len(found)} meetings match {title!r}")
    meeting: dict[str, Any] = found[0]
    return meeting


def _my_chat(api: PublicAPI, name: str) -> dict[str, Any]:
    return find_one(api.all_pages("list_my_chats", query=name), name=name)


def _create_stated_meeting(
    api: PublicAPI, stated: dict[str, Any], required: list[int], optional: list[int] | None = None, **extra: Any
) -> Any:
    """The meeting whose title, day and hours the query states."""
    return _create_meeting(api, stated["title"], stated["day"], stated["start"], stated["end"], required, optional, **extra)


def _create_meeting(
    api: PublicAPI, title: str, day: str, start: str, end: str, required: list[int], optional: list[int] | None = None, **extra: Any
) -> Any:
    args = _meeting_args(title, day, start, end, required, optional)
    args.update(extra)
    return api.call("create_meeting", **args)


# -- drafting from candidate rows --------------------------------------------------------------


class _CandidateTemplate(Template):
    """A template drafted from one candidate row: the rows of `candidates_sql` are tried in a random order until one
    makes a task (see `_pick`)."""

    candidates_sql: ClassVar[str]
    candidates_params: ClassVar[tuple[Any, ...]] = ()
    candidate: ClassVar[str]  # what a row is, for the "no ..." message

    def draft(self, ctx: GenContext) -> Draft:
        return _pick(ctx, ctx.rows(self.candidates_sql, *self.candidates_params), lambda row: self._draft(ctx, row), self.candidate)

    def _draft(self, ctx: GenContext, row: Any) -> Draft:
        raise NotImplementedError


# -- meetings with a calendar check -----------------------------------------------------------


class TeamMeetingFreeMembers(_CandidateTemplate):
    name = "team_meeting_free_members"
    conditions = (Condition("leave", "filter"), Condition("free", "filter"))
    # The two teams are the scope the calendar check runs over.
    clauses = {"title": WRITTEN, "teams": "free", "day": WRITTEN, "start": WRITTEN, "end": WRITTEN, "leave": "leave", "free": "free"}
    phrasings = (
        "Set up '{title}' on {day} from {start} to {end}{where}. Invite, as required participants, every member of the {team_a} "
        "team and of the {team_b} team who is not on leave and whose calendar has nothing overlapping that time (an entry that "
        "ends at {start} or starts at {end} is fine).",
        "Check the calendar of each person in the {team_a} and {team_b} teams for {day}, {start}-{end}. Those who are free for that "
        "whole time and not on leave get a required invitation to a new meeting '{title}' then{where}.",
        "I want to meet the {team_a} team together with the {team_b} team on {day}, {start} to {end}{where}; call it '{title}'. Skip "
        "colleagues on leave and anyone whose calendar already has something overlapping those hours (merely touching them is "
        "fine), and invite everyone else in the two teams as required participants.",
    )
    titles = ("{a} and {b} sync", "Joint planning: {a} and {b}", "{a} x {b} design review", "{a} and {b} interface review")

    candidates_sql = (
        "SELECT a.id AS a_id, a.name AS a_name, b.id AS b_id, b.name AS b_name, a.parent_id, h.employee_id AS head "
        "FROM departments a JOIN departments b ON b.parent_id = a.parent_id AND b.id > a.id "
        "JOIN department_heads h ON h.department_id = a.parent_id WHERE a.kind = 'team' ORDER BY a.id, b.id"
    )
    candidate = "pair of teams"

    def _draft(self, ctx: GenContext, pair: dict[str, Any]) -> Draft:
        actor = pair["head"]
        members = _people(ctx, [pair["a_id"], pair["b_id"]])
        if not any(m["status"] == "on_leave" for m in members):
            raise NoTarget("nobody on leave")
        cal = _calendars(ctx, [m["id"] for m in members])
        options = []
        for day, start, end in _slots_ahead():
            invite, calendar_bites, leave_bites = _calendar_check(members, cal, _ts(day, start), _ts(day, end))
            if calendar_bites and leave_bites:
                options.append((day, start, end, invite))
        day, start, end, invite = ctx.choice(options, "slot")
        title = ctx.rng.choice(self.titles).format(a=pair["a_name"], b=pair["b_name"])
        a, b = (pair["a_name"], pair["b_name"]) if ctx.rng.random() < 0.5 else (pair["b_name"], pair["a_name"])
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, team_a=a, team_b=b, where=", online only")
        stated = {"title": title, "teams": [a, b], "day": day, "start": start, "end": end}
        steps = [_meeting_step(title, day, start, end, invite)]
        return Draft(actor, query, steps, stated=stated, hidden=[len(invite)], targets=(("team", pair["a_id"]), ("team", pair["b_id"])))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)["employee_id"]
        start, end = _ts(stated["day"], stated["start"]), _ts(stated["day"], stated["end"])
        invite: list[int] = []
        for name in stated["teams"]:
            team = _department(api, name)
            present = _present_colleagues(api, _members(api, team["department_id"], active=True), me)
            invite.extend(person["employee_id"] for person in _free_ones(api, present, start, end))
        _create_stated_meeting(api, stated, invite)


class DepartmentFreeMeeting(_CandidateTemplate):
    name = "department_free_meeting"
    conditions = (Condition("leave", "filter"), Condition("free", "filter"), Condition("leads", "filter"))
    clauses = {
        "title": WRITTEN,
        "dept": "free",
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "leave": "leave",
        "free": "free",
        "leads": "leads",
    }
    phrasings = (
        "Schedule an online meeting '{title}' on {day} from {start} to {end} for the {dept} department. Go through everyone in it "
        "and in its teams: leave out people on leave and people whose calendar has anything overlapping that time, and invite the "
        "rest - the team leads as required participants, everyone else as optional.",
        "For '{title}' ({day}, {start}-{end}, online) I want every colleague in the {dept} department, its teams included, who is "
        "free then according to their calendar and is not on leave. The leads of its teams are required; all other invitees optional.",
        "Invite the {dept} department (all of its teams too) to an online '{title}' on {day}, {start} to {end}: check each person's "
        "calendar and skip anyone busy at some point of that time or on leave. Make the team leads required participants and the "
        "others optional.",
    )
    titles = ("{dept} town hall", "{dept} planning day", "{dept} quarterly review", "{dept} demo hour")

    candidates_sql = _headed_units("department")
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        actor = dept["head"]
        units = _subtree(ctx, dept["id"])
        leads = {e for e, d in _heads(ctx).items() if d in units and d != dept["id"]}
        people = [p for p in _people(ctx, units) if p["id"] != actor]
        if not any(p["status"] == "on_leave" for p in people) or len(people) < 40:
            raise NoTarget("nobody on leave, or a small department")
        cal = _calendars(ctx, [p["id"] for p in people])
        options = []
        for day, start, end in _slots_ahead():
            free, calendar_bites, leave_bites = _calendar_check(people, cal, _ts(day, start), _ts(day, end))
            required = [i for i in free if i in leads]
            if required and len(required) < len(free) and calendar_bites and leave_bites:
                options.append((day, start, end, required, [i for i in free if i not in leads]))
        day, start, end, required, optional = ctx.choice(options, "slot")
        title = ctx.rng.choice(self.titles).format(dept=dept["name"])
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, dept=dept["name"])
        stated = {"title": title, "dept": dept["name"], "day": day, "start": start, "end": end}
        steps = [_meeting_step(title, day, start, end, required, optional)]
        return Draft(actor, query, steps, stated=stated, hidden=[len(required) + len(optional)], targets=(("department", dept["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        dept = _department(api, stated["dept"])
        me = _me(api)["employee_id"]
        start, end = _ts(stated["day"], stated["start"]), _ts(stated["day"], stated["end"])
        present = _present_colleagues(api, _members(api, dept["department_id"], sub=True, active=True), me)
        required, optional = _by_role(_free_ones(api, present, start, end), lambda p: api.keep("leads", _head_below(p, dept)))
        _create_stated_meeting(api, stated, required, optional)


class TeamReviews(_CandidateTemplate):
    name = "team_reviews_back_to_back"
    conditions = (Condition("leave", "filter"), Condition("free", "filter"), Condition("alphabetical", "ordering"))
    clauses = {
        "dept": "free",
        "day": WRITTEN,
        "start": WRITTEN,
        "kind": WRITTEN,
        "leave": "leave",
        "free": "free",
        "alphabetical": "alphabetical",
    }
    phrasings = (
        "On {day}, hold a one-hour '<team name> {kind}' for each team of the {dept} department, back to back from {start}, taking "
        "the teams in alphabetical order of their names. Invite to each, as required, the members of that team who are not on "
        "leave and whose calendar is free during that team's hour. All of them online.",
        "Plan {kind}s for the {dept} department's teams on {day}: one hour per team, one after another starting at {start}, teams "
        "sorted A to Z by name. Each meeting is titled '<team name> {kind}' and is online; invite the team's members as required, "
        "except those on leave and those with something on their calendar during that hour.",
        "Starting at {start} on {day}, give every team in {dept} an hour-long online meeting titled '<team name> {kind}', in "
        "alphabetical order of team name. For each, check its members' calendars for that hour and invite the free ones who are "
        "not on leave, as required participants.",
    )
    kinds = ("quarterly review", "roadmap review", "health check", "OKR review", "retrospective")

    candidates_sql = _headed_units("department", min_units=3)
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        teams, ordered = _teams_alphabetically(ctx, dept)
        members = {t["id"]: _people(ctx, [t["id"]]) for t in teams}
        cal = _calendars(ctx, [p["id"] for t in teams for p in members[t["id"]]])
        options = []
        for day in _weekdays_between():
            for first in ("09:00", "10:00", "13:00", "14:00"):
                if _minutes(first) + 60 * len(teams) > 18 * 60:
                    continue
                plan, busy_active, free_on_leave = [], False, False
                for i, team in enumerate(ordered):
                    s, e = (_ts(day, hm) for hm in _back_to_back(first, i, 60))
                    free, calendar_bites, leave_bites = _calendar_check(members[team["id"]], cal, s, e)
                    busy_active |= calendar_bites
                    free_on_leave |= leave_bites
                    plan.append(free)
                if busy_active and free_on_leave and all(len(p) >= 2 for p in plan):
                    options.append((day, first, plan))
        day, first, plan = ctx.choice(options, "day")
        kind = ctx.rng.choice(self.kinds)
        steps = [_meeting_step(f"{team['name']} {kind}", day, *_back_to_back(first, i, 60), plan[i]) for i, team in enumerate(ordered)]
        query = self.phrase(ctx, day=_nice(day), kind=kind, start=first, dept=dept["name"])
        stated = {"dept": dept["name"], "day": day, "start": first, "kind": kind}
        return Draft(dept["head"], query, steps, stated=stated, hidden=[len(teams)], targets=(("department", dept["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        dept = _department(api, stated["dept"])
        teams = api.all_pages("list_sub_departments", department_id=dept["department_id"])
        me = _me(api)["employee_id"]
        for i, team in enumerate(api.order("alphabetical", teams, key=lambda t: t["name"].casefold())):
            start, end = _back_to_back(stated["start"], i, 60)
            present = _present_colleagues(api, _members(api, team["department_id"], active=True), me)
            invite = [p["employee_id"] for p in _free_ones(api, present, _ts(stated["day"], start), _ts(stated["day"], end))]
            _create_meeting(api, f"{team['name']} {stated['kind']}", stated["day"], start, end, invite)


class CommonFreeSlot(_CandidateTemplate):
    name = "common_free_slot"
    conditions = (Condition("leave", "filter"), Condition("free", "filter"), Condition("earliest", "ranking"))
    clauses = {"day": WRITTEN, "title": WRITTEN, "leave": "leave", "free": "free", "earliest": "earliest"}
    phrasings = (
        "Find the earliest time on {day} when a one-hour meeting fits into the calendars of me and everyone in my department "
        "(its teams included) who is not on leave - starting on the hour or half hour, no earlier than 09:00 and ending by 18:00 - "
        "and schedule '{title}' then, online, with all those colleagues as required participants.",
        "Schedule '{title}' (one hour, online) on {day} at the first slot that suits everybody: me plus every member of my "
        "department and of its teams, except anyone on leave. Candidate starts are 09:00, 09:30, 10:00 and so on up to 17:00; a "
        "slot suits someone when nothing on their calendar overlaps it.",
        "Check the calendars for {day} of everyone in my department and its teams (leaving out colleagues on leave) and mine, and "
        "book '{title}' as an online one-hour meeting at the earliest half-hour start between 09:00 and 17:00 where nobody has a "
        "clash. Invite all of them as required.",
    )
    titles = ("Department sync", "All-hands prep", "Planning session", "Incident review", "Budget walkthrough")

    candidates_sql = _headed_units("department")
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        actor = dept["head"]
        people = _people(ctx, _subtree(ctx, dept["id"]))
        if not _active(ctx, actor) or not any(p["status"] == "on_leave" for p in people) or len(people) < 40:
            raise NoTarget("nobody on leave, or a small department")
        cal = _calendars(ctx, [p["id"] for p in people])
        active = [p["id"] for p in people if p["status"] == "active"]
        options = []
        for day in _weekdays_between():
            starts = [_hm(m) for m in range(9 * 60, 17 * 60 + 1, 30)]
            free = [s for s in starts if not any(_overlaps(cal[i], _ts(day, s), _ts(day, _hm(_minutes(s) + 60))) for i in active)]
            if len(free) >= 2 and free[0] != "09:00":
                options.append((day, free[0]))
        day, start = ctx.choice(options, "day")
        invite = [i for i in active if i != actor]
        if len(invite) > 150:
            raise NoTarget("too many people")
        title = ctx.rng.choice(self.titles)
        query = self.phrase(ctx, day=_nice(day), title=title)
        end = _hm(_minutes(start) + 60)
        stated = {"day": day, "title": title}
        steps = [_meeting_step(title, day, start, end, invite)]
        return Draft(actor, query, steps, stated=stated, hidden=[len(invite)], targets=(("department", dept["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)
        day = stated["day"]
        people = [
            p
            for p in _members(api, me["heads_department_id"], sub=True, active=True)
            if p["employee_id"] == me["employee_id"] or api.keep("leave", p["status"] != "on_leave")
        ]
        calendars = [api.all_pages("get_schedule", employee_id=p["employee_id"], start=day, end=day) for p in people]
        spans = [(e["start_at"], e["end_at"]) for entries in calendars for e in entries]
        starts = [_hm(m) for m in range(9 * 60, 17 * 60 + 1, 30)]
        free = [s for s in starts if api.keep("free", not _overlaps(spans, _ts(day, s), _ts(day, _hm(_minutes(s) + 60))))]
        invite = [p["employee_id"] for p in people if p["employee_id"] != me["employee_id"]]
        for start in api.top("earliest", free, 1, lambda s: s):
            _create_meeting(api, stated["title"], day, start, _hm(_minutes(start) + 60), invite)


class DivisionAllHands(_CandidateTemplate):
    name = "division_all_hands"
    conditions = (Condition("leave", "filter"), Condition("heads", "filter"))
    clauses = {
        "title": WRITTEN,
        "scope": "heads",
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "leave": "leave",
        "heads": "heads",
    }
    phrasings = (
        "Schedule an online meeting '{title}' on {day} from {start} to {end} for everyone in {scope}, every department and team "
        "under it included, except colleagues on leave. The heads of the departments and teams under {scope} are required "
        "participants; everyone else is optional.",
        "I'm running '{title}' online on {day}, {start}-{end}. Invite the whole of {scope} at every level below it, but not people "
        "who are on leave: heads of the units below {scope} as required, all others as optional.",
        "Everyone in {scope} and its sub-units who is not on leave should get an invitation to '{title}' ({day}, {start} to {end}, "
        "online only). Make it required for those who head a department or team under {scope}, optional for the rest.",
    )
    titles = ("{name} all-hands", "{name} quarterly town hall", "{name} kick-off", "{name} strategy update")

    candidates_sql = _headed_units("division")
    candidate = "division"

    def _draft(self, ctx: GenContext, scope: dict[str, Any]) -> Draft:
        actor = scope["head"]
        units = _subtree(ctx, scope["id"])
        heads = {e for e, d in _heads(ctx).items() if d in units and d != scope["id"]}
        people = [p for p in _people(ctx, units) if p["id"] != actor]
        if not any(p["status"] == "on_leave" for p in people) or not 150 <= len(people) <= 290:
            raise NoTarget("nobody on leave, or not a large division")  # the big meetings of the suite
        required = [p["id"] for p in people if p["status"] == "active" and p["id"] in heads]
        optional = [p["id"] for p in people if p["status"] == "active" and p["id"] not in heads]
        day, start, end = _any_slot(ctx)
        title = ctx.rng.choice(self.titles).format(name=scope["name"])
        scope_text = f"the {scope['name']} {scope['kind']}"
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, scope=scope_text)
        stated = {"title": title, "scope": scope["name"], "day": day, "start": start, "end": end}
        steps = [_meeting_step(title, day, start, end, required, optional)]
        return Draft(actor, query, steps, stated=stated, hidden=[len(required) + len(optional)], targets=(("department", scope["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        scope = _department(api, stated["scope"])
        me = _me(api)["employee_id"]
        present = _present_colleagues(api, _members(api, scope["department_id"], sub=True, active=True), me)
        required, optional = _by_role(present, lambda p: api.keep("heads", _head_below(p, scope)))
        _create_stated_meeting(api, stated, required, optional)


class OneOnOnes(_CandidateTemplate):
    name = "one_on_ones"
    conditions = (Condition("leave", "filter"), Condition("level", "boundary"), Condition("surname", "ordering"))
    clauses = {"day": WRITTEN, "level": "level", "start": WRITTEN, "leave": "leave", "surname": "surname"}
    phrasings = (
        "Set up 30-minute 1:1s on {day} with each of my direct reports at level {level} or above who is not on leave: back to "
        "back from {start}, in order of surname (same surname: by first name), each titled '1:1 ' followed by the person's full "
        "name, all online only.",
        "I'd like a round of one-on-ones on {day} starting at {start}. Take my direct reports who are level {level} or higher and "
        "not on leave, sort them by surname (then first name), and give each a 30-minute online slot in that order, one right "
        "after the other. Title each '1:1 <full name>'.",
        "Book back-to-back online 1:1 meetings for {day}, 30 minutes each, the first at {start}. Who: every direct report of mine "
        "at level {level} and up, except anyone on leave. Order: alphabetical by surname, ties by first name. Name each meeting "
        "'1:1 <their full name>'.",
    )

    candidates_sql = (
        "SELECT h.employee_id FROM department_heads h JOIN departments d ON d.id = h.department_id JOIN employees e "
        "ON e.id = h.employee_id WHERE d.kind = 'team' AND e.status = 'active' ORDER BY h.employee_id"
    )
    candidate = "team lead"

    def _draft(self, ctx: GenContext, row: dict[str, Any]) -> Draft:
        lead = row["employee_id"]
        reports = ctx.rows("SELECT id, name, level, status FROM employees WHERE manager_id = ? ORDER BY id", lead)
        active = [r for r in reports if r["status"] == "active"]
        options = []
        for level in range(min((r["level"] for r in active), default=0) + 1, max((r["level"] for r in active), default=0) + 1):
            chosen = [r for r in active if r["level"] >= level]
            if not (
                any(r["level"] < level for r in active)
                and 3 <= len(chosen) <= 10
                and any(r["status"] == "on_leave" and r["level"] >= level for r in reports)
                and _two_words(r["name"] for r in chosen)
            ):
                continue
            by_surname = sorted(chosen, key=lambda r: _surname_key(r["name"]))
            if by_surname != sorted(chosen, key=_directory_key) and len({_surname_key(r["name"]) for r in chosen}) == len(chosen):
                options.append((level, by_surname))
        level, ordered = ctx.choice(options, "level")
        day = ctx.choice(_weekdays_between())
        first = ctx.rng.choice([s for s in ("09:00", "09:30", "10:00", "13:30", "14:00") if _minutes(s) + 30 * len(ordered) <= 18 * 60])
        steps = [_meeting_step(f"1:1 {r['name']}", day, *_back_to_back(first, i, 30), [r["id"]]) for i, r in enumerate(ordered)]
        query = self.phrase(ctx, day=_nice(day), level=level, start=first)
        stated = {"day": day, "level": level, "start": first}
        return Draft(lead, query, steps, stated=stated, targets=(("lead", lead),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)["employee_id"]
        reports = [
            r
            for r in api.all_pages("search_employees", narrow={"status": "active"}, manager_id=me)
            if api.keep("leave", r["status"] != "on_leave") and api.compare("level", r["level"], ">=", stated["level"])
        ]
        for i, person in enumerate(api.order("surname", reports, key=lambda r: _surname_key(r["name"]))):
            _create_meeting(api, f"1:1 {person['name']}", stated["day"], *_back_to_back(stated["start"], i, 30), [person["employee_id"]])


class InviteTeamToMeeting(_CandidateTemplate):
    name = "invite_team_to_meeting"
    conditions = (Condition("title", "filter"), Condition("declined", "filter"), Condition("leave", "filter"))
    clauses = {"title": "title", "team": "leave", "declined": "declined", "leave": "leave"}
    phrasings = (
        "For the meeting '{title}' that I organise: take off everyone who declined it, then invite as optional participants all "
        "members of the {team} team who are not on leave.",
        "Tidy up '{title}', which I organise. First remove the participants who declined. Then add the {team} team as "
        "optional participants - everyone in it except people on leave.",
        "I want the {team} team at '{title}', a meeting I organise, as optional attendees (leave out colleagues on leave). "
        "Before that, remove from the meeting every participant whose answer is 'declined'.",
    )

    candidates_sql = (
        "SELECT m.* FROM meetings m WHERE m.status = 'scheduled' AND m.start_at >= ? AND EXISTS (SELECT 1 FROM meeting_participants p "
        "WHERE p.meeting_id = m.id AND p.response = 'declined') ORDER BY m.id"
    )
    candidates_params = (_ts(FIRST_DAY, "00:00"),)
    candidate = "meeting"

    def _draft(self, ctx: GenContext, meeting: Any) -> Draft:
        actor = meeting["organizer_id"]
        _named_by_title(ctx, actor, meeting["title"])
        parts = ctx.rows("SELECT employee_id, response FROM meeting_participants WHERE meeting_id = ? ORDER BY employee_id", meeting["id"])
        invited = {p["employee_id"] for p in parts}
        declined = [p["employee_id"] for p in parts if p["response"] == "declined"]
        room_left = None
        if meeting["room_id"] is not None:
            room_left = ctx.value("SELECT capacity FROM rooms WHERE id = ?", meeting["room_id"]) - sum(
                p["response"] != "declined" for p in parts
            )
        options = []
        for team in ctx.rows("SELECT id, name FROM departments WHERE kind = 'team' ORDER BY id"):
            members = _people(ctx, [team["id"]])
            if set(declined) & {m["id"] for m in members}:
                continue  # "not invited yet" would be ambiguous for a decliner just taken off
            new = [m["id"] for m in members if m["status"] == "active" and m["id"] not in invited and m["id"] != actor]
            if (
                3 <= len(new) <= 25
                and (room_left is None or len(new) <= room_left)
                and any(m["status"] == "on_leave" and m["id"] not in invited for m in members)
            ):
                options.append((team, new))
        own = [o for o in options if o[0]["id"] == ctx.value("SELECT department_id FROM employees WHERE id = ?", actor)]
        team, new = own[0] if own and ctx.rng.random() < 0.5 else ctx.choice(options, "team")
        query = self.phrase(ctx, title=meeting["title"], team=team["name"])
        steps = [Step("remove_participant", {"meeting_id": meeting["id"], "employee_id": e}) for e in declined]
        steps.append(Step("invite_participants", {"meeting_id": meeting["id"], "employee_ids": new, "role": "optional"}))
        stated = {"title": meeting["title"], "team": team["name"]}
        return Draft(actor, query, steps, stated=stated, hidden=[len(new), len(declined)], targets=(("meeting", meeting["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        meeting = _meeting_titled(api, stated["title"], narrow={"role": "organiser"})
        parts = api.all_pages("list_meeting_participants", meeting_id=meeting["meeting_id"])
        kept = set()
        for p in parts:
            if p["role"] != "organiser" and api.keep("declined", p["response"] == "declined"):
                api.call("remove_participant", meeting_id=meeting["meeting_id"], employee_id=p["employee_id"])
            else:
                kept.add(p["employee_id"])
        team = _department(api, stated["team"])
        me = _me(api)["employee_id"]
        new = [
            m["employee_id"]
            for m in _members(api, team["department_id"], active=True)
            if m["employee_id"] not in kept and m["employee_id"] != me and api.keep("leave", m["status"] != "on_leave")
        ]
        api.call("invite_participants", meeting_id=meeting["meeting_id"], employee_ids=new, role="optional")


class ChatTitleMeeting(_CandidateTemplate):
    name = "chat_title_meeting"
    conditions = (Condition("word", "filter"), Condition("city", "filter"))
    readings = (Reading("chat owner", decided_by=r"\bowner\b"),)  # the chat's owner is one of its members
    clauses = {
        "title": WRITTEN,
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "chat": "word",
        "word": "word",
        "city": "city",
        "message": WRITTEN,
    }
    phrasings = (
        "Schedule an online meeting '{title}' on {day}, {start} to {end}, and invite as required participants every member of the "
        "'{chat}' chat (its owner too) whose job title contains '{word}' and who is based in {city}. Then post '{message}' in "
        "that chat.",
        "From the '{chat}' group chat, owner included, I want the people based in the {city} office with '{word}' in their job "
        "title in an online meeting '{title}' on {day} from {start} to {end}, all required. Once it's set up, write '{message}' "
        "in the chat.",
        "Post '{message}' in '{chat}' after you've created '{title}' ({day}, {start}-{end}, online) for those members of that chat "
        "who work out of {city} and whose job title includes '{word}', whether or not they are its owner; they are all required "
        "participants.",
    )
    words = ("Engineer", "Manager", "Analyst", "Designer", "Senior", "Product", "Data", "Specialist", "Account", "Research")

    candidates_sql = "SELECT id, name FROM chats WHERE member_count >= 10 ORDER BY id"
    candidate = "chat"

    def _draft(self, ctx: GenContext, chat: Any) -> Draft:
        actor = ctx.choice(
            ctx.column(
                "SELECT cm.employee_id FROM chat_members cm JOIN employees e ON e.id = cm.employee_id "
                "WHERE cm.chat_id = ? AND e.status = 'active' ORDER BY cm.employee_id",
                chat["id"],
            ),
            "member",
        )
        if not _unique_chat_for(ctx, actor, chat["name"]):
            raise NoTarget("chat name not unique for the actor")
        members = ctx.rows(
            "SELECT e.id, e.title, e.location_id, l.city FROM chat_members cm JOIN employees e ON e.id = cm.employee_id "
            "JOIN locations l ON l.id = e.location_id WHERE cm.chat_id = ? AND e.id != ? ORDER BY e.id",
            chat["id"],
            actor,
        )
        options = []
        for word in self.words:
            for city in sorted({m["city"] for m in members}):
                people = [m["id"] for m in members if word.casefold() in m["title"].casefold() and m["city"] == city]
                if (
                    2 <= len(people) <= 30
                    and any(word.casefold() in m["title"].casefold() and m["city"] != city for m in members)
                    and any(word.casefold() not in m["title"].casefold() and m["city"] == city for m in members)
                ):
                    options.append((word, city, people))
        word, city, people = ctx.choice(options, "title word")
        day, start, end = _any_slot(ctx)
        title = ctx.rng.choice(["{w} sync", "{w} roundtable", "{w} community of practice", "{w} knowledge sharing"]).format(w=word)
        message = ctx.rng.choice(
            [
                "Invites are out, please check your calendar.",
                f"Sent invites for '{title}', see you there!",
                "Meeting invitations sent, please respond.",
            ]
        ).replace("'", "")
        stated = {
            "title": title,
            "day": day,
            "start": start,
            "end": end,
            "chat": chat["name"],
            "word": word,
            "city": city,
            "message": message,
        }
        query = self.phrase(ctx, **stated | {"day": _nice(day)})
        steps = [_meeting_step(title, day, start, end, people), Step("send_chat_message", {"chat_id": chat["id"], "content": message})]
        return Draft(actor, query, steps, stated=stated, hidden=[len(people)], targets=(("chat", chat["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        chat = _my_chat(api, stated["chat"])
        me = _me(api)["employee_id"]
        owner_counts = api.reading("chat owner", True, False)
        people = []
        for m in api.all_pages("list_chat_members", chat_id=chat["chat_id"]):
            if m["employee_id"] == me or (m["role"] == "owner" and not owner_counts):
                continue
            if not api.keep("word", stated["word"].casefold() in m["title"].casefold()):
                continue
            if api.keep("city", api.call("get_employee", employee_id=m["employee_id"])["location"].casefold() == stated["city"].casefold()):
                people.append(m["employee_id"])
        _create_stated_meeting(api, stated, people)
        api.call("send_chat_message", chat_id=chat["chat_id"], content=stated["message"])


class HeadsSyncRoom(_CandidateTemplate):
    name = "heads_sync_room"
    conditions = (Condition("free", "filter"), Condition("video", "filter"), Condition("smallest", "ranking", tie_break_stated=True))
    clauses = {
        "title": WRITTEN,
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "building": "smallest",
        "free": "free",
        "video": "video",
        "smallest": "smallest",
    }
    phrasings = (
        "Set up '{title}' on {day}, {start} to {end}, with the heads of every department and team under my division as required "
        "participants, leaving out any head whose calendar has something overlapping that time. Book the smallest (by capacity) room in "
        "{building} that has video conferencing, is free then and holds all of us (if two are equally small, the first by name).",
        "I want the unit heads below my division (departments and teams, every level) in '{title}' on {day} from {start} to {end}, "
        "but only those free at that time according to their calendars. Put it in {building}: "
        "the smallest (by capacity) free room with video "
        "conferencing that fits everyone including me; break a tie in size by room name, alphabetically.",
        "Check the calendars of all department and team heads in my division for {day}, {start}-{end}. Invite the free ones as "
        "required to '{title}' then, in the smallest (by capacity) available room of {building} with video conferencing that fits us all "
        "(equal sizes: alphabetical by name).",
    )

    candidates_sql = _headed_units("division")
    candidate = "division"

    def _draft(self, ctx: GenContext, division: Any) -> Draft:
        actor = division["head"]
        below = [d for d in _subtree(ctx, division["id"]) if d != division["id"]]
        heads = sorted(e for e, d in _heads(ctx).items() if d in below)
        cal = _calendars(ctx, heads)
        building = ctx.choice(
            ctx.rows("SELECT id, name FROM buildings WHERE location_id = ? ORDER BY id", _location(ctx, actor)), "building"
        )
        rooms = ctx.rows(
            "SELECT id, name, capacity, has_video_conferencing AS vc FROM rooms WHERE building_id = ? AND is_bookable = 1", building["id"]
        )
        options = []
        for day, start, end in _slots_ahead():
            s, e = _ts(day, start), _ts(day, end)
            free = [h for h in heads if not _overlaps(cal[h], s, e)]
            if len(free) == len(heads) or len(free) < 3:
                continue
            fits = sorted(
                (r for r in rooms if r["capacity"] >= len(free) + 1 and _room_free(ctx, r["id"], s, e)),
                key=lambda r: (r["capacity"], r["name"].casefold(), r["id"]),
            )
            video = [r for r in fits if r["vc"]]
            if len(video) >= 2 and not fits[0]["vc"]:
                options.append((day, start, end, free, video[0]))
        day, start, end, free, room = ctx.choice(options, "slot")
        title = ctx.rng.choice(["{d} leadership sync", "{d} heads meeting", "{d} planning with leads"]).format(d=division["name"])
        query = self.phrase(ctx, title=title, day=_nice(day), start=start, end=end, building=building["name"])
        stated = {"title": title, "day": day, "start": start, "end": end, "building": building["name"]}
        steps = [_meeting_step(title, day, start, end, free, room=room["id"])]
        return Draft(actor, query, steps, stated=stated, hidden=[room["name"], len(free)], targets=(("division", division["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)
        start, end = _ts(stated["day"], stated["start"]), _ts(stated["day"], stated["end"])
        units = api.all_pages("list_sub_departments", department_id=me["heads_department_id"], recursive=True)
        heads = [u["head_id"] for u in units if api.keep("free", not _busy(api, u["head_id"], start, end))]
        building = _building_id(api, stated["building"])
        rooms = [
            r
            for r in api.all_pages(
                "find_available_rooms",
                narrow={"equipment": ["video_conferencing"]},
                start=_at(stated["day"], stated["start"]),
                end=_at(stated["day"], stated["end"]),
                min_capacity=len(heads) + 1,
                building_id=building,
            )
            if api.keep("video", "video_conferencing" in r["equipment"])
        ]
        ranked = sorted(rooms, key=lambda r: (r["capacity"], r["name"].casefold()))
        for room in api.top("smallest", ranked, 1, lambda r: r["capacity"]):
            _create_stated_meeting(api, stated, heads, room_id=room["room_id"])


class RescheduleMeeting(_CandidateTemplate):
    name = "reschedule_meeting"
    conditions = (Condition("title", "filter"), Condition("declined", "filter"))
    clauses = {"title": "title", "new_day": WRITTEN, "reason": WRITTEN, "declined": "declined"}
    phrasings = (
        "My meeting '{title}', which I organise, has to move to {new_day}, same time. Cancel it with the reason '{reason}' and "
        "schedule it again on the new day with the same title and agenda, inviting the same people in the same roles (required "
        "or optional), except those who declined the original. {room}",
        "Please move the '{title}' meeting I organise to {new_day} (same hours): cancel it (reason: '{reason}') and create a new "
        "one with the same title and agenda and the same required and optional participants, minus anyone who declined. {room}",
        "Recreate '{title}', a meeting I organise, on {new_day} at the same hours: same title, agenda and participants with the "
        "same roles, but drop those who declined. {room} Then cancel the original, giving '{reason}' as the reason.",
    )

    candidates_sql = (
        "SELECT m.* FROM meetings m WHERE m.status = 'scheduled' AND m.start_at >= ? AND substr(m.start_at, 1, 10) = substr(m.end_at, 1, 10) "
        "AND EXISTS (SELECT 1 FROM meeting_participants p WHERE p.meeting_id = m.id AND p.response = 'declined') ORDER BY m.id"
    )
    candidates_params = (_ts(FIRST_DAY, "00:00"),)
    candidate = "meeting"

    def _draft(self, ctx: GenContext, meeting: Any) -> Draft:
        actor, day = meeting["organizer_id"], meeting["start_at"][:10]
        _named_by_title(ctx, actor, meeting["title"])
        new_day = _shift(day, ctx.rng.choice([1, 2, 3, 7, 14, -1, -2, -7]))
        if new_day < FIRST_DAY or _day(new_day).weekday() >= 5 or new_day > LAST_DAY:
            raise NoTarget("new day")
        if ctx.value(
            "SELECT 1 FROM meetings m JOIN meeting_participants p ON p.meeting_id = m.id AND p.employee_id = ? "
            "WHERE m.title = ? COLLATE NOCASE AND substr(m.start_at, 1, 10) = ?",
            actor,
            meeting["title"],
            new_day,
        ):
            raise NoTarget("the series already meets that day")
        start, end = meeting["start_at"][11:16], meeting["end_at"][11:16]
        people = ctx.rows(
            "SELECT employee_id, role FROM meeting_participants WHERE meeting_id = ? AND role != 'organiser' "
            "AND response != 'declined' ORDER BY employee_id",
            meeting["id"],
        )
        if not people:
            raise NoTarget("nobody left")
        if meeting["room_id"] is not None:
            if not _room_free(ctx, meeting["room_id"], _ts(new_day, start), _ts(new_day, end)):
                raise NoTarget("room taken on the new day")
            room_text = "It stays in the same room."
        else:
            room_text = "It stays online only, as before."
        reason = f"Moved to {pretty_day(new_day).rsplit(',', 1)[0]}"
        query = self.phrase(ctx, title=meeting["title"], new_day=_nice(new_day), reason=reason, room=room_text)
        steps = [
            Step("cancel_meeting", {"meeting_id": meeting["id"], "reason": reason}),
            _meeting_step(
                meeting["title"],
                new_day,
                start,
                end,
                [p["employee_id"] for p in people if p["role"] == "required"],
                [p["employee_id"] for p in people if p["role"] == "optional"],
                meeting["room_id"],
                meeting["agenda"],
            ),
        ]
        stated = {"title": meeting["title"], "new_day": new_day, "reason": reason}
        return Draft(actor, query, steps, stated=stated, hidden=[len(people)], targets=(("meeting", meeting["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        found = _meeting_titled(api, stated["title"], narrow={"role": "organiser"})
        meeting = api.call("get_meeting", meeting_id=found["meeting_id"])
        invited = _not_declined(api, api.all_pages("list_meeting_participants", meeting_id=found["meeting_id"]))
        required, optional = _by_role(invited, lambda p: p["role"] == "required")
        api.call("cancel_meeting", meeting_id=found["meeting_id"], reason=stated["reason"])
        extra: dict[str, Any] = {}
        if meeting["room_id"] is not None:
            extra["room_id"] = meeting["room_id"]
        if meeting["agenda"]:
            extra["agenda"] = meeting["agenda"]
        _create_meeting(
            api, stated["title"], stated["new_day"], meeting["start_at"][11:16], meeting["end_at"][11:16], required, optional, **extra
        )


# -- calendar and rooms -----------------------------------------------------------------------


class OutOfOffice(Template):
    name = "out_of_office"
    conditions = (Condition("from", "boundary"), Condition("to", "boundary"))
    clauses = {"first": "from", "last": "to", "title": WRITTEN, "reason": WRITTEN}
    phrasings = (
        "I'm on leave from {first} to {last}, both days included. Put a leave entry '{title}' on my calendar from 09:00 on {first} "
        "to 18:00 on {last}. For everything starting on any of those days: cancel the meetings I organise (reason '{reason}'), "
        "decline the meetings I'm invited to, release my standalone room bookings, and delete my own focus, personal and "
        "training calendar entries.",
        "Out of office {first} through {last} (inclusive). Clear those days: meetings I organise that start then get cancelled "
        "with the reason '{reason}', the ones I'm only invited to get declined, room bookings I made that aren't for a meeting get "
        "released, and my focus, personal and training entries starting then are deleted. Finally add a leave entry '{title}' "
        "from {first} 09:00 until {last} 18:00.",
        "Add '{title}' as a leave entry from {first} at 09:00 to {last} at 18:00. Anything of mine that starts between those two "
        "days, or on either of them, has to go: cancel what I organise (reason: '{reason}'), decline other "
        "meetings, release my room bookings that aren't for a meeting, and delete my focus, personal and training entries.",
    )

    @staticmethod
    def _items(ctx: GenContext) -> dict[int, list[tuple[str, str, int]]]:
        """Per employee: (start, action, id) of everything ahead that the task could clear."""
        out: dict[int, list[tuple[str, str, int]]] = {}
        rows = ctx.rows(
            "SELECT organizer_id AS emp, start_at, 'cancel' AS act, id FROM meetings WHERE status = 'scheduled' AND start_at > ? "
            "UNION ALL SELECT p.employee_id, m.start_at, 'decline', m.id FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
            "WHERE m.status = 'scheduled' AND m.start_at > ? AND p.role != 'organiser' AND p.response != 'declined' "
            "UNION ALL SELECT booker_id, start_at, 'release', id FROM room_bookings WHERE meeting_id IS NULL AND status = 'active' "
            "AND start_at > ? UNION ALL SELECT employee_id, start_at, 'delete', id FROM schedule_entries "
            "WHERE kind IN ('focus', 'personal', 'training') AND start_at > ? ORDER BY 1, 2, 3, 4",
            NOW,
            NOW,
            NOW,
            NOW,
        )
        for r in rows:
            out.setdefault(r["emp"], []).append((r["start_at"], r["act"], r["id"]))
        return out

    def draft(self, ctx: GenContext) -> Draft:
        items = self._items(ctx)
        release = ctx.rng.random() < 0.8  # most of the time, a standalone room booking is among what goes
        return _pick(
            ctx,
            sorted(
                e
                for e, its in items.items()
                if len({i[0][:10] for i in its}) >= 4
                and any(i[1] == "cancel" for i in its)
                and (not release or any(i[1] == "release" for i in its))
            ),
            lambda actor: self._draft(ctx, actor, items[actor], release),
            "busy employee",
        )

    def _draft(self, ctx: GenContext, actor: int, mine: list[tuple[str, str, int]], release: bool) -> Draft:
        first, last = ctx.choice(self._windows(mine, release), "window")
        inside = [i for i in mine if first <= i[0][:10] <= last]
        if len(inside) < 3:
            raise NoTarget("little to clear")
        acts = {a: [i[2] for i in inside if i[1] == a] for a in ("cancel", "decline", "release", "delete")}
        title = ctx.rng.choice(["Annual leave", "Family trip", "Vacation", "Out of office"])
        reason = ctx.rng.choice(["Organiser on annual leave", "Organiser out of office", "Away on leave, will reschedule"])
        query = self.phrase(ctx, first=pretty_day(first), last=pretty_day(last), title=title, reason=reason)
        steps = (
            [Step("cancel_meeting", {"meeting_id": m, "reason": reason}) for m in acts["cancel"]]
            + [Step("respond_to_meeting", {"meeting_id": m, "response": "declined"}) for m in acts["decline"]]
            + [Step("release_room", {"booking_id": b}) for b in acts["release"]]
            + [Step("delete_schedule_entry", {"entry_id": e}) for e in acts["delete"]]
            + [Step("create_schedule_entry", {"title": title, "start": _at(first, "09:00"), "end": _at(last, "18:00"), "kind": "leave"})]
        )
        stated = {"first": first, "last": last, "title": title, "reason": reason}
        return Draft(actor, query, steps, stated=stated, hidden=[len(inside)], targets=(("employee", actor),))

    @staticmethod
    def _windows(mine: list[tuple[str, str, int]], release: bool) -> list[tuple[str, str]]:
        """The leaves (first day, last day) to draw from: at most three weeks strictly inside the
        actor's busy days, holding something to cancel (and a booking to release, when `release`)."""
        days = sorted({i[0][:10] for i in mine})
        windows = [
            (a, b)
            for i, a in enumerate(days)
            for b in days[i + 1 :]
            if a >= FIRST_DAY and days[0] < a and b < days[-1] and (_day(b) - _day(a)).days <= 21
        ]

        def holds(a: str, b: str, act: str) -> bool:
            return any(i[1] == act and a <= i[0][:10] <= b for i in mine)

        if release:
            windows = [(a, b) for a, b in windows if holds(a, b, "release")]
        # the cancel reason is said, so something is cancelled with it
        return [(a, b) for a, b in windows if holds(a, b, "cancel")]

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        first, last = stated["first"], stated["last"]

        def inside(start_at: str) -> bool:
            return api.compare("from", start_at[:10], ">=", first) and api.compare("to", start_at[:10], "<=", last)

        now = api.now[:16]
        meetings = api.all_pages("list_my_meetings", narrow={"start_from": first, "start_to": last}, status="scheduled", start_from=now)
        bookings = api.all_pages("list_room_bookings", narrow={"start": first, "end": last}, mine=True, status="active", start=now)
        entries = api.all_pages("get_schedule", narrow={"start": first, "end": last}, start=now[:10], end=_shift(last, 31))
        for m in meetings:
            if not inside(m["start_at"]):
                continue
            if m["my_role"] == "organiser":
                api.call("cancel_meeting", meeting_id=m["meeting_id"], reason=stated["reason"])
            elif m["my_response"] != "declined":
                api.call("respond_to_meeting", meeting_id=m["meeting_id"], response="declined")
        for b in bookings:
            if b["meeting_id"] is None and inside(b["start_at"]):
                api.call("release_room", booking_id=b["booking_id"])
        for e in entries:
            if e["kind"] in ("focus", "personal", "training") and inside(e["start_at"]):
                api.call("delete_schedule_entry", entry_id=e["entry_id"])
        api.call("create_schedule_entry", title=stated["title"], start=_at(first, "09:00"), end=_at(last, "18:00"), kind="leave")


class FocusBlocks(_CandidateTemplate):
    name = "focus_blocks"
    conditions = (Condition("weekday", "filter"), Condition("free", "filter"), Condition("touching", "boundary"))
    # The days from first to last are the range the calendar check runs over.
    clauses = {
        "first": "free",
        "last": "free",
        "start": WRITTEN,
        "end": WRITTEN,
        "title": WRITTEN,
        "weekday": "weekday",
        "free": "free",
        "touching": "touching",
    }
    phrasings = (
        "Block {start}-{end} as private focus time titled '{title}' on every weekday (Monday to Friday) from {first} to {last}, "
        "both included, but only on the days where nothing on my calendar overlaps that slot. Something ending exactly at {start} "
        "or starting exactly at {end} doesn't overlap.",
        "I need '{title}' focus blocks, {start} to {end}, on each weekday between {first} and {last} inclusive, no weekends. Make "
        "them private focus entries, and skip any day where my calendar already has something overlapping those hours (an entry "
        "that only touches {start} or {end} is fine).",
        "Look at my calendar from {first} through {last}. On every Monday-to-Friday day where the {start}-{end} window is completely "
        "free (entries that end at {start} or begin at {end} don't count as clashes), add a private focus entry '{title}' for "
        "that window.",
    )

    candidates_sql = (
        "SELECT s.employee_id, s.start_at, s.end_at FROM schedule_entries s JOIN employees e ON e.id = s.employee_id "
        "WHERE e.status = 'active' AND s.start_at >= ? AND s.start_at < ? AND substr(s.start_at, 1, 10) = substr(s.end_at, 1, 10) "
        "AND substr(s.end_at, 12, 8) BETWEEN '09:00:00' AND '16:00:00' AND substr(s.end_at, 15, 5) IN ('00:00', '30:00') "
        "ORDER BY s.id"
    )
    candidates_params = (
        _ts(FIRST_DAY, "00:00"),
        _ts("2026-11-10", "00:00"),
    )
    candidate = "anchor entry"

    def _draft(self, ctx: GenContext, anchor: Any) -> Draft:
        actor, d0 = anchor["employee_id"], anchor["start_at"][:10]
        if _day(d0).weekday() >= 5:
            raise NoTarget("weekend anchor")
        start = anchor["end_at"][11:16]
        end = _hm(min(_minutes(start) + ctx.rng.choice([60, 90, 120]), 18 * 60))
        cal = _calendars(ctx, [actor])[actor]
        if _overlaps(cal, _ts(d0, start), _ts(d0, end)):
            raise NoTarget("the anchor day is busy anyway")
        first = max(FIRST_DAY, _shift(d0, -ctx.rng.randint(0, 6)))
        last = min("2026-11-12", _shift(first, ctx.rng.randint(9, 16)))
        days = _days_between(first, last)
        weekdays = [d for d in days if _day(d).weekday() < 5]
        free = [d for d in weekdays if not _overlaps(cal, _ts(d, start), _ts(d, end))]
        weekend_free = [d for d in days if _day(d).weekday() >= 5 and not _overlaps(cal, _ts(d, start), _ts(d, end))]
        if len(free) == len(weekdays) or not weekend_free or not 3 <= len(free) <= 14:
            raise NoTarget("no busy weekday")
        title = ctx.rng.choice(["Deep work", "Heads-down time", "No meetings please", "Writing time", "Focus block"])
        query = self.phrase(ctx, start=start, end=end, title=title, first=pretty_day(first), last=pretty_day(last))
        steps = [
            Step("create_schedule_entry", {"title": title, "start": _at(d, start), "end": _at(d, end), "kind": "focus", "is_private": True})
            for d in free
        ]
        stated = {"first": first, "last": last, "start": start, "end": end, "title": title}
        return Draft(actor, query, steps, stated=stated, hidden=[len(free)], targets=(("employee", actor),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        entries = api.all_pages("get_schedule", start=stated["first"], end=stated["last"])
        for day in _days_between(stated["first"], stated["last"]):
            if not api.keep("weekday", _day(day).weekday() < 5):
                continue
            start, end = _ts(day, stated["start"]), _ts(day, stated["end"])
            clash = any(
                api.compare("touching", e["end_at"], ">", start) and api.compare("touching", e["start_at"], "<", end) for e in entries
            )
            if api.keep("free", not clash):
                api.call(
                    "create_schedule_entry",
                    title=stated["title"],
                    start=_at(day, stated["start"]),
                    end=_at(day, stated["end"]),
                    kind="focus",
                    is_private=True,
                )


class WeekOfRoomBookings(_CandidateTemplate):
    name = "week_of_room_bookings"
    conditions = (Condition("capacity", "boundary"), Condition("smallest", "ranking", tie_break_stated=True))
    # The room named is the one to book and the capacity to match; the week(s) and the building are the scope of the
    # ranking.
    clauses = {
        "room": "capacity",
        "building": "smallest",
        "purpose": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "monday": WRITTEN,
        "weeks": "smallest",
        "capacity": "capacity",
        "smallest": "smallest",
    }
    phrasings = (
        "Book room {room} in {building} for '{purpose}' from {start} to {end} on every weekday (Monday to Friday) of {weeks}. On a "
        "day it's already taken, book instead the smallest (by capacity) bookable room in "
        "{building} that is free then and holds at least as "
        "many people as {room} (between equally small ones, the first by name in alphabetical order).",
        "I need {room} ({building}) {start}-{end}, Monday through Friday, {weeks}, purpose '{purpose}'. If {room} is taken on a "
        "day, take the smallest (by capacity) other bookable room in the same building with at "
        "least its capacity that is free at that time; "
        "if several are equally small, pick the one whose name comes first alphabetically.",
        "For {weeks}, every Monday to Friday from {start} to {end}, reserve a room in {building} for '{purpose}': {room} whenever "
        "it is free, otherwise the smallest (by capacity) free bookable room there seating at least as many as {room} (ties go to the "
        "alphabetically first name).",
    )

    candidates_sql = (
        "SELECT k.room_id, k.start_at, k.end_at, r.name, r.capacity, r.building_id, b.name AS building, b.location_id "
        "FROM room_bookings k JOIN rooms r ON r.id = k.room_id JOIN buildings b ON b.id = r.building_id "
        "WHERE k.status = 'active' AND k.start_at >= '2026-10-19 00:00:00' AND r.is_bookable = 1 "
        "AND substr(k.start_at, 1, 10) = substr(k.end_at, 1, 10) AND substr(k.start_at, 15, 5) IN ('00:00', '30:00') "
        "AND substr(k.end_at, 15, 5) IN ('00:00', '30:00') AND EXISTS (SELECT 1 FROM rooms s WHERE s.building_id = r.building_id "
        "AND s.is_bookable = 1 AND s.capacity < r.capacity) ORDER BY k.id"
    )
    candidate = "booking"

    def _draft(self, ctx: GenContext, busy: Any) -> Draft:
        day = busy["start_at"][:10]
        if _day(day).weekday() >= 5:
            raise NoTarget("weekend booking")
        monday = _shift(day, -_day(day).weekday())
        two = ctx.rng.random() < 0.5
        if two and ctx.rng.random() < 0.5 and monday >= "2026-10-26":
            monday = _shift(monday, -7)  # the taken day falls in the second week
        days = _weekdays_between(monday, _shift(monday, 11 if two else 4))
        start, end = busy["start_at"][11:16], busy["end_at"][11:16]
        others = ctx.rows(
            "SELECT id, name, capacity FROM rooms WHERE building_id = ? AND is_bookable = 1 AND id != ? ORDER BY capacity, id",
            busy["building_id"],
            busy["room_id"],
        )
        rooms, capacity_bites = [], False
        for d in days:
            s, e = _ts(d, start), _ts(d, end)
            if _room_free(ctx, busy["room_id"], s, e):
                rooms.append(busy["room_id"])
                continue
            free = sorted(
                (r for r in others if _room_free(ctx, r["id"], s, e)), key=lambda r: (r["capacity"], r["name"].casefold(), r["id"])
            )
            big = [r for r in free if r["capacity"] >= busy["capacity"]]
            if len(big) < 2:
                raise NoTarget("no choice of room")
            capacity_bites |= free[0]["capacity"] < busy["capacity"]
            rooms.append(big[0]["id"])
        if not capacity_bites:
            raise NoTarget("no smaller room free on a taken day")
        actor = ctx.choice(
            ctx.column("SELECT id FROM employees WHERE location_id = ? AND status = 'active' ORDER BY id", busy["location_id"]), "employee"
        )
        purpose = ctx.rng.choice(["Candidate interviews", "Customer calls", "Quiet work", "Training prep", "Vendor demos"])
        weeks = f"the two weeks starting Monday, {pretty_day(monday)}" if two else f"the week starting Monday, {pretty_day(monday)}"
        query = self.phrase(ctx, room=busy["name"], building=busy["building"], purpose=purpose, start=start, end=end, weeks=weeks)
        steps = [
            Step("book_room", {"room_id": r, "start": _at(d, start), "end": _at(d, end), "purpose": purpose}) for d, r in zip(days, rooms)
        ]
        names = sorted({r["name"] for r in others if r["id"] in rooms})
        stated = {
            "room": busy["name"],
            "building": busy["building"],
            "purpose": purpose,
            "start": start,
            "end": end,
            "monday": monday,
            "weeks": 2 if two else 1,
        }
        return Draft(actor, query, steps, stated=stated, hidden=names, targets=(("room", busy["room_id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        room = _room(api, stated["room"], stated["building"])
        days = _weekdays_between(stated["monday"], _shift(stated["monday"], 7 * stated["weeks"] - 1))
        for day in days:
            start, end = _at(day, stated["start"]), _at(day, stated["end"])
            if api.call("check_room_availability", room_id=room["room_id"], start=start, end=end)["available"]:
                chosen = [room]
            else:
                free = [
                    r
                    for r in api.all_pages(
                        "find_available_rooms",
                        narrow={"min_capacity": room["capacity"]},
                        start=start,
                        end=end,
                        building_id=room["building_id"],
                    )
                    if r["room_id"] != room["room_id"] and api.compare("capacity", r["capacity"], ">=", room["capacity"])
                ]
                ranked = sorted(free, key=lambda r: (r["capacity"], r["name"].casefold()))
                chosen = api.top("smallest", ranked, 1, lambda r: r["capacity"])
            for r in chosen:
                api.call("book_room", room_id=r["room_id"], start=start, end=end, purpose=stated["purpose"])


# -- chats -------------------------------------------------------------------------------------


class AttendanceChat(_CandidateTemplate):
    name = "attendance_chat"
    conditions = (Condition("min_attended", "boundary", capability="aggregation_computation"),)
    clauses = {"name": WRITTEN, "n": "min_attended", "title": "min_attended", "message": WRITTEN}
    phrasings = (
        "Create a project chat '{name}' with everyone (besides me) who actually attended at least {n} of the completed '{title}' "
        "meetings I organised, then post '{message}' in it.",
        "Look at the completed '{title}' meetings I ran and count, per person, how many of them they actually joined. Everyone "
        "other than me who joined {n} or more goes into a new project chat called '{name}'; then send '{message}' there.",
        "Post '{message}' in a new project chat '{name}' whose members are the colleagues who attended {n} or more of the past "
        "'{title}' meetings I organised that took place.",
    )

    candidates_sql = (
        "SELECT organizer_id, title FROM meetings WHERE status = 'completed' GROUP BY organizer_id, title HAVING COUNT(*) >= 3 "
        "ORDER BY organizer_id, title"
    )
    candidate = "series"

    def _draft(self, ctx: GenContext, series: Any) -> Draft:
        actor = series["organizer_id"]
        if not _active(ctx, actor):
            raise NoTarget("organiser on leave")
        counts = ctx.rows(
            "SELECT p.employee_id, SUM(p.attended = 1) AS n FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
            "WHERE m.organizer_id = ? AND m.title = ? AND m.status = 'completed' AND p.employee_id != ? "
            "GROUP BY p.employee_id ORDER BY p.employee_id",
            actor,
            series["title"],
            actor,
        )
        most = max((r["n"] for r in counts), default=0)
        levels = [n for n in range(2, most + 1) if any(c["n"] < n for c in counts)]
        n = ctx.choice(levels, "attendance level")  # any number of meetings a person would ask for
        members = [r["employee_id"] for r in counts if r["n"] >= n]
        if not 2 <= len(members) <= 40:
            raise NoTarget("members")
        name, message = _new_chat(ctx, actor, PROJECT_CHAT_NAMES)
        query = self.phrase(ctx, name=name, n=n, title=series["title"], message=message)
        steps = _chat_steps(name, members, "project", message)
        stated = {"name": name, "n": n, "title": series["title"], "message": message}
        return Draft(actor, query, steps, stated=stated, hidden=[len(members)], targets=(("series", actor, series["title"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)["employee_id"]
        attended: dict[int, int] = {}
        for m in api.all_pages("list_my_meetings", status="completed", role="organiser"):
            if m["title"].casefold() != stated["title"].casefold():
                continue
            for p in api.all_pages("list_meeting_participants", meeting_id=m["meeting_id"]):
                if p["employee_id"] != me:
                    attended[p["employee_id"]] = attended.get(p["employee_id"], 0) + (1 if p["attended"] else 0)
        members = [e for e, n in attended.items() if api.compare("min_attended", n, ">=", stated["n"])]
        _start_chat(api, stated, members, "project")


class NewcomerChat(_CandidateTemplate):
    name = "newcomer_chat"
    conditions = (Condition("hired", "boundary"), Condition("city", "filter"))
    clauses = {"name": WRITTEN, "division": "city", "city": "city", "since": "hired", "message": WRITTEN}
    phrasings = (
        "Create a social chat '{name}' for the newcomers of the {division} division in {city}: everyone in the division (any "
        "department or team below it included) who works out of the {city} office and joined the company on or after {date}. "
        "Then post '{message}' in it.",
        "Start a social group chat called '{name}' with every {city}-based colleague in the {division} division, at any level below "
        "it too, hired on {date} or later, and send '{message}' to it.",
        "Welcome the recent joiners: in the {division} division and all its units, find the people in the {city} office whose "
        "hire date is {date} or later, put them in a new social chat '{name}', and post '{message}' there.",
    )

    candidates_sql = "SELECT id, name FROM departments WHERE kind = 'division' ORDER BY id"
    candidate = "division"

    def _draft(self, ctx: GenContext, division: Any) -> Draft:
        people = _people(ctx, _subtree(ctx, division["id"]))
        actor = ctx.choice([p["id"] for p in people if p["status"] == "active"], "employee")
        cities = {r["id"]: r["city"] for r in ctx.rows("SELECT id, city FROM locations")}
        others = [p for p in people if p["id"] != actor]
        options = []
        for loc in sorted({p["location_id"] for p in others}):
            here = [p for p in others if p["location_id"] == loc]
            for cut in sorted({p["hire_date"] for p in here if p["hire_date"] >= "2024-01-01"}):
                chosen = [p["id"] for p in here if p["hire_date"] >= cut]
                if (
                    3 <= len(chosen) <= 30
                    and any(p["hire_date"] < cut for p in here)
                    and any(p["location_id"] != loc and p["hire_date"] >= cut for p in others)
                ):
                    options.append((loc, cut, chosen))
        loc, cut, chosen = ctx.choice(options, "city and date")
        name, message = _new_chat(ctx, actor, SOCIAL_CHAT_NAMES)
        query = self.phrase(ctx, name=name, division=division["name"], city=cities[loc], date=pretty_day(cut), message=message)
        steps = _chat_steps(name, chosen, "social", message)
        stated = {"name": name, "division": division["name"], "city": cities[loc], "since": cut, "message": message}
        return Draft(actor, query, steps, stated=stated, hidden=[len(chosen)], targets=(("division", division["id"], loc),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        members = [
            p["employee_id"]
            for p in _colleagues_in(api, stated["division"], narrow={"location": stated["city"]})
            if api.keep("city", p["location"].casefold() == stated["city"].casefold())
            and api.compare("hired", p["hire_date"], ">=", stated["since"])
        ]
        _start_chat(api, stated, members, "social")


class PruneQuietChat(_CandidateTemplate):
    name = "prune_quiet_chat"
    conditions = (Condition("since", "boundary"), Condition("admins", "filter"))
    clauses = {"chat": "since", "since": "since", "message": WRITTEN, "admins": "admins"}
    phrasings = (
        "Clean up the '{chat}' chat I own: remove every member who hasn't posted anything there on or after {date}, including "
        "people who never posted at all, but leave its admins in. Then post '{message}' in it.",
        "In '{chat}', which I own, keep the admins and the people who have sent a message there on {date} or later, and remove "
        "everyone else; afterwards post '{message}' for those who remain.",
        "Post '{message}' in my '{chat}' chat once you have removed from it everyone except the admins whose latest message there "
        "is from before {date} or who never wrote anything there.",
    )

    candidates_sql = (
        "SELECT c.id, c.name, c.owner_id FROM chats c WHERE c.chat_type IN ('project', 'social', 'department') AND c.member_count >= 8 "
        "ORDER BY c.id"
    )
    candidate = "chat"

    def _draft(self, ctx: GenContext, chat: Any) -> Draft:
        actor = chat["owner_id"]
        if not _unique_chat_for(ctx, actor, chat["name"]) or not _active(ctx, actor):
            raise NoTarget("chat name not unique")
        roles = {
            r["employee_id"]: r["role"]
            for r in ctx.rows(
                "SELECT employee_id, role FROM chat_members WHERE chat_id = ? AND role != 'owner' ORDER BY employee_id", chat["id"]
            )
        }
        members = sorted(roles)
        last_any = {
            r["sender_id"]: r["d"]
            for r in ctx.rows(
                "SELECT sender_id, MAX(substr(sent_at, 1, 10)) AS d FROM chat_messages WHERE chat_id = ? GROUP BY sender_id", chat["id"]
            )
        }
        last_kept = {
            r["sender_id"]: r["d"]
            for r in ctx.rows(
                "SELECT sender_id, MAX(substr(sent_at, 1, 10)) AS d FROM chat_messages WHERE chat_id = ? AND is_recalled = 0 "
                "GROUP BY sender_id",
                chat["id"],
            )
        }
        dates = sorted({last_any[m] for m in members if m in last_any})
        cut = ctx.choice(dates[1:], "cut date")  # a member's last post day: "on or after" keeps them

        def quiet(last: dict[int, str]) -> list[int]:
            return [m for m in members if last.get(m, "") < cut]

        if quiet(last_any) != quiet(last_kept):
            raise NoTarget("a recalled message decides")
        out = [m for m in quiet(last_any) if roles[m] != "admin"]
        if not any(roles[m] == "admin" for m in quiet(last_any)):
            raise NoTarget("no quiet admin")
        if not 2 <= len(out) <= 40 or not any(roles[m] != "admin" and m not in out for m in members):
            raise NoTarget("quiet members")
        message = ctx.rng.choice(MESSAGES)
        query = self.phrase(ctx, chat=chat["name"], date=pretty_day(cut), message=message)
        steps = [Step("remove_chat_member", {"chat_id": chat["id"], "employee_id": m}) for m in out]
        steps.append(Step("send_chat_message", {"chat_id": chat["id"], "content": message}))
        stated = {"chat": chat["name"], "since": cut, "message": message}
        return Draft(actor, query, steps, stated=stated, hidden=[len(out)], targets=(("chat", chat["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        chat = _my_chat(api, stated["chat"])
        last: dict[int, str] = {}
        for message in api.all_pages("list_chat_messages", chat_id=chat["chat_id"]):
            last[message["sender_id"]] = max(last.get(message["sender_id"], ""), message["sent_at"][:10])
        for m in api.all_pages("list_chat_members", narrow={"role": "member"}, chat_id=chat["chat_id"]):
            if m["role"] == "owner" or not api.keep("admins", m["role"] != "admin"):
                continue
            if not api.compare("since", last.get(m["employee_id"], ""), ">=", stated["since"]):
                api.call("remove_chat_member", chat_id=chat["chat_id"], employee_id=m["employee_id"])
        api.call("send_chat_message", chat_id=chat["chat_id"], content=stated["message"])


# -- the organisation ----------------------------------------------------------------------------


class TransferSeniorStaff(_CandidateTemplate):
    name = "transfer_senior_staff"
    conditions = (Condition("family", "filter"), Condition("level", "boundary"))
    # team_a is the scope the conditions run over; team_b where its people go, the chat where the news goes.
    clauses = {"team_a": "family", "team_b": "family", "family": "family", "level": "level", "chat": "family", "message": WRITTEN}
    phrasings = (
        "Move everyone in the {team_a} team whose job family is {family} and whose level is {level} or higher to the {team_b} "
        "team. Then post '{message}' in the '{chat}' chat.",
        "Reorganisation: the {team_a} team's people in the {family} job family at level {level} and above transfer to "
        "{team_b}. Announce it afterwards in our '{chat}' chat with the message '{message}'.",
        "Post '{message}' in '{chat}' after transferring to the {team_b} team every member of {team_a} who is in the {family} job "
        "family at level {level} or more.",
    )

    candidates_sql = (
        "SELECT d.id, d.name, h.employee_id AS head, c.id AS chat_id, c.name AS chat FROM departments d "
        "JOIN department_heads h ON h.department_id = d.id JOIN chats c ON c.department_id = d.id AND c.owner_id = h.employee_id "
        "AND c.chat_type = 'department' WHERE d.kind IN ('department', 'division') ORDER BY d.id"
    )
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        if not _unique_chat_for(ctx, dept["head"], dept["chat"]):
            raise NoTarget("chat name")
        teams = ctx.rows(f"SELECT id, name FROM departments WHERE id IN {_in(_subtree(ctx, dept['id']))} AND kind = 'team' ORDER BY id")
        if len(teams) < 2:
            raise NoTarget("two teams")
        team_a, team_b = ctx.rng.sample(teams, 2)
        heads = _heads(ctx)
        staff = [p for p in _people(ctx, [team_a["id"]]) if p["id"] not in heads]
        family, level, movers = ctx.choice(_family_level_options(staff, 2, 12), "family and level")
        message = ctx.rng.choice(
            [
                f"Welcome to the {team_b['name']} team, new joiners!",
                "Heads-up: some team changes took effect today.",
                "Org update: a few colleagues changed teams today.",
            ]
        )
        stated = {
            "team_a": team_a["name"],
            "team_b": team_b["name"],
            "family": family,
            "level": level,
            "chat": dept["chat"],
            "message": message,
        }
        query = self.phrase(ctx, **stated)
        steps = [Step("transfer_employee", {"employee_id": m, "department_id": team_b["id"]}) for m in movers]
        steps.append(Step("send_chat_message", {"chat_id": dept["chat_id"], "content": message}))
        return Draft(dept["head"], query, steps, stated=stated, targets=(("team", team_a["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        team_a, team_b = _department(api, stated["team_a"]), _department(api, stated["team_b"])
        for person in _members(api, team_a["department_id"]):
            if person["is_department_head"]:
                continue  # the product never transfers a head
            if api.keep("family", person["job_family"].casefold() == stated["family"].casefold()) and api.compare(
                "level", person["level"], ">=", stated["level"]
            ):
                api.call("transfer_employee", employee_id=person["employee_id"], department_id=team_b["department_id"])
        api.call("send_chat_message", chat_id=_my_chat(api, stated["chat"])["chat_id"], content=stated["message"])


class TeamSplitTransfer(_CandidateTemplate):
    name = "team_split_transfer"
    conditions = (Condition("word", "filter"), Condition("level", "boundary"))
    clauses = {"word": "word", "level": "level", "team_b": "word", "chat": "word", "message": WRITTEN}
    phrasings = (
        "Move every member of my team whose job title contains '{word}' and whose level is {level} or higher to the {team_b} team. "
        "Take each of them out of our '{chat}' chat, and then post '{message}' there.",
        "Team change: the people in my team with '{word}' in their job title at level {level} and up join {team_b}. Transfer "
        "them, remove them from the '{chat}' chat, and post '{message}' in it afterwards.",
        "Post '{message}' in '{chat}' once you have transferred to {team_b}, and removed from that chat, each person in my team "
        "with '{word}' in their job title at level {level} or above.",
    )
    words = ("Engineer", "Senior", "Manager", "Analyst", "Specialist", "Designer", "Account", "Research", "Product", "Data", "Marketing")

    candidates_sql = (
        "SELECT d.id, d.name, d.parent_id, h.employee_id AS head, c.id AS chat_id, c.name AS chat FROM departments d "
        "JOIN department_heads h ON h.department_id = d.id JOIN employees e ON e.id = h.employee_id "
        "JOIN chats c ON c.department_id = d.id AND c.owner_id = h.employee_id WHERE d.kind = 'team' AND e.status = 'active' "
        "ORDER BY d.id"
    )
    candidate = "team"

    def _draft(self, ctx: GenContext, team: Any) -> Draft:
        if not _unique_chat_for(ctx, team["head"], team["chat"]):
            raise NoTarget("chat name")
        team_b = ctx.choice(
            ctx.rows("SELECT id, name FROM departments WHERE parent_id = ? AND id != ? ORDER BY id", team["parent_id"], team["id"]),
            "sister team",
        )
        in_chat = set(ctx.column("SELECT employee_id FROM chat_members WHERE chat_id = ?", team["chat_id"]))
        staff = [p for p in _people(ctx, [team["id"]]) if p["id"] != team["head"]]
        options = []
        for word in self.words:
            has = [s for s in staff if word.casefold() in s["title"].casefold()]
            for level in _levels(has):
                movers = [s["id"] for s in has if s["level"] >= level]
                if (
                    2 <= len(movers) <= 8
                    and set(movers) <= in_chat
                    and any(s["level"] < level for s in has)
                    and any(word.casefold() not in s["title"].casefold() and s["level"] >= level for s in staff)
                ):
                    options.append((word, level, movers))
        word, level, movers = ctx.choice(options, "title word and level")
        message = ctx.rng.choice(
            [
                f"Please welcome our colleagues to {team_b['name']}, and thanks for everything!",
                "Team update: a few of us moved to a sister team today.",
                "Org update: the team changes took effect today.",
            ]
        )
        query = self.phrase(ctx, word=word, level=level, team_b=team_b["name"], chat=team["chat"], message=message)
        steps = (
            [Step("transfer_employee", {"employee_id": m, "department_id": team_b["id"]}) for m in movers]
            + [Step("remove_chat_member", {"chat_id": team["chat_id"], "employee_id": m}) for m in movers]
            + [Step("send_chat_message", {"chat_id": team["chat_id"], "content": message})]
        )
        stated = {"word": word, "level": level, "team_b": team_b["name"], "chat": team["chat"], "message": message}
        return Draft(team["head"], query, steps, stated=stated, targets=(("team", team["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)
        team_b = _department(api, stated["team_b"])
        moved = []
        for person in api.all_pages("search_employees", narrow={"title": stated["word"]}, department_id=me["department_id"]):
            if person["employee_id"] == me["employee_id"]:
                continue  # the team's lead: nobody transfers themselves
            if api.keep("word", stated["word"].casefold() in person["title"].casefold()) and api.compare(
                "level", person["level"], ">=", stated["level"]
            ):
                api.call("transfer_employee", employee_id=person["employee_id"], department_id=team_b["department_id"])
                moved.append(person["employee_id"])
        chat = _my_chat(api, stated["chat"])
        for person in moved:
            api.call("remove_chat_member", chat_id=chat["chat_id"], employee_id=person)
        api.call("send_chat_message", chat_id=chat["chat_id"], content=stated["message"])


class AddTeamToChat(_CandidateTemplate):
    name = "add_team_to_chat"
    conditions = (Condition("level", "boundary"), Condition("leave", "filter"))
    clauses = {"chat": "level", "team": "level", "level": "level", "message": WRITTEN, "leave": "leave"}
    phrasings = (
        "Add to my '{chat}' chat every member of the {team} team at level {level} or above, leaving out anyone on leave. Then "
        "post '{message}' in the chat.",
        "Bring the {team} team's people of level {level} or higher into '{chat}' (skip those on leave), "
        "and welcome them with the message '{message}'.",
        "Post '{message}' in '{chat}' after adding the members of the {team} team whose level is at least {level} and who are not "
        "on leave.",
    )

    candidates_sql = (
        "SELECT c.id, c.name, cm.employee_id AS actor FROM chats c JOIN chat_members cm ON cm.chat_id = c.id AND cm.role IN ('owner', 'admin') "
        "JOIN employees e ON e.id = cm.employee_id WHERE c.chat_type IN ('project', 'social') AND e.status = 'active' "
        "ORDER BY c.id, cm.employee_id"
    )
    candidate = "chat"

    def _draft(self, ctx: GenContext, chat: Any) -> Draft:
        actor = chat["actor"]
        if not _unique_chat_for(ctx, actor, chat["name"]):
            raise NoTarget("chat name")
        in_chat = set(ctx.column("SELECT employee_id FROM chat_members WHERE chat_id = ?", chat["id"]))
        options = []
        for team in ctx.rows("SELECT id, name FROM departments WHERE kind = 'team' ORDER BY id"):
            out = [p for p in _people(ctx, [team["id"]]) if p["id"] not in in_chat and p["id"] != actor]
            active = [p for p in out if p["status"] == "active"]
            for level in _levels(active):
                chosen = [p["id"] for p in active if p["level"] >= level]
                if (
                    2 <= len(chosen) <= 15
                    and any(p["level"] < level for p in active)
                    and any(p["status"] == "on_leave" and p["level"] >= level for p in out)
                ):
                    options.append((team, level, chosen))
        team, level, chosen = ctx.choice(options, "team and level")
        message = ctx.rng.choice(MESSAGES)
        query = self.phrase(ctx, chat=chat["name"], team=team["name"], level=level, message=message)
        steps = [
            Step("add_chat_members", {"chat_id": chat["id"], "employee_ids": chosen}),
            Step("send_chat_message", {"chat_id": chat["id"], "content": message}),
        ]
        stated = {"chat": chat["name"], "team": team["name"], "level": level, "message": message}
        return Draft(actor, query, steps, stated=stated, targets=(("chat", chat["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        chat = _my_chat(api, stated["chat"])
        already = {m["employee_id"] for m in api.all_pages("list_chat_members", chat_id=chat["chat_id"])}
        team = _department(api, stated["team"])
        new = [
            p["employee_id"]
            for p in _members(api, team["department_id"], active=True)
            if p["employee_id"] not in already
            and api.compare("level", p["level"], ">=", stated["level"])
            and api.keep("leave", p["status"] != "on_leave")
        ]
        api.call("add_chat_members", chat_id=chat["chat_id"], employee_ids=new)
        api.call("send_chat_message", chat_id=chat["chat_id"], content=stated["message"])


class CitySocialChat(_CandidateTemplate):
    name = "city_social_chat"
    conditions = (Condition("city", "filter"), Condition("leave", "filter"))
    clauses = {"name": WRITTEN, "dept": "city", "city": "city", "message": WRITTEN, "leave": "leave"}
    phrasings = (
        "Create a social chat '{name}' with my colleagues in the {dept} {kind} (all its sub-units included) who are based in "
        "{city}, leaving out anyone on leave, and post '{message}' in it.",
        "Start a social group '{name}' for the {city} office people of the {dept} {kind} and everything under it, not those "
        "currently on leave, then send '{message}' to the group.",
        "Post '{message}' in a new social chat '{name}' whose members are everyone in the {dept} {kind} or one of its sub-units "
        "who works out of {city} and is not on leave.",
    )

    candidates_sql = "SELECT id, name, kind FROM departments WHERE kind IN ('division', 'department') ORDER BY id"
    candidate = "scope"

    def _draft(self, ctx: GenContext, scope: Any) -> Draft:
        people = _people(ctx, _subtree(ctx, scope["id"]))
        actor = ctx.choice([p["id"] for p in people if p["status"] == "active"], "employee")
        others = [p for p in people if p["id"] != actor]
        cities = {r["id"]: r["city"] for r in ctx.rows("SELECT id, city FROM locations")}
        loc, chosen = ctx.choice(_group_options(others, "location_id", 3, 40), "city")
        name, message = _new_chat(ctx, actor, SOCIAL_CHAT_NAMES)
        query = self.phrase(ctx, name=name, dept=scope["name"], kind=scope["kind"], city=cities[loc], message=message)
        steps = _chat_steps(name, chosen, "social", message)
        stated = {"name": name, "dept": scope["name"], "city": cities[loc], "message": message}
        return Draft(actor, query, steps, stated=stated, hidden=[len(chosen)], targets=(("scope", scope["id"], loc),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        members = [
            p["employee_id"]
            for p in _colleagues_in(api, stated["dept"], narrow={"location": stated["city"], "status": "active"})
            if api.keep("city", p["location"].casefold() == stated["city"].casefold()) and api.keep("leave", p["status"] != "on_leave")
        ]
        _start_chat(api, stated, members, "social")


class ProjectKickoff(_CandidateTemplate):
    name = "project_kickoff"
    conditions = (Condition("family", "filter"), Condition("level", "boundary"))
    clauses = {
        "name": WRITTEN,
        "family": "family",
        "level": "level",
        "dept": "family",
        "message": WRITTEN,
        "title": WRITTEN,
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
    }
    phrasings = (
        "Create a project chat '{name}' with every {family} colleague at level {level} or above in the "
        "{dept} department and its teams, post '{message}' in it, and then schedule an online kickoff '{title}' on {day} from "
        "{start} to {end} with the same people as required participants.",
        "I'm starting a working group: everyone in {dept} (teams included) whose job family is {family} and whose level is at "
        "least {level}. Make them a project chat called '{name}', send '{message}' there, and invite them all as required to "
        "'{title}', online, {day}, {start}-{end}.",
        "Schedule '{title}' for {day}, {start} to {end} (online), for the {family} people of level {level} or higher in the {dept} "
        "department or any of its teams, all required; before that, put the same people in a new project chat '{name}' and post "
        "'{message}' in it.",
    )

    candidates_sql = _headed_units("department")
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        actor = dept["head"]
        people = [p for p in _people(ctx, _subtree(ctx, dept["id"])) if p["id"] != actor]
        family, level, chosen = ctx.choice(_family_level_options(people, 3, 20), "family and level")
        name, message = _new_chat(ctx, actor, PROJECT_CHAT_NAMES)
        day, start, end = _any_slot(ctx)
        title = f"{name} kickoff"
        stated = {
            "name": name,
            "family": family,
            "level": level,
            "dept": dept["name"],
            "message": message,
            "title": title,
            "day": day,
            "start": start,
            "end": end,
        }
        query = self.phrase(ctx, **stated | {"day": _nice(day)})
        steps = [
            *_chat_steps(name, chosen, "project", message),
            _meeting_step(title, day, start, end, chosen),
        ]
        return Draft(actor, query, steps, stated=stated, targets=(("department", dept["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        people = [
            p["employee_id"]
            for p in _colleagues_in(api, stated["dept"])
            if api.keep("family", p["job_family"].casefold() == stated["family"].casefold())
            and api.compare("level", p["level"], ">=", stated["level"])
        ]
        _start_chat(api, stated, people, "project")
        _create_stated_meeting(api, stated, people)


class SabbaticalChats(_CandidateTemplate):
    name = "sabbatical_chats"
    conditions = (Condition("project", "filter"), Condition("owned", "filter"))
    clauses = {"first": WRITTEN, "last": WRITTEN, "title": WRITTEN, "message": WRITTEN, "project": "project", "owned": "owned"}
    phrasings = (
        "I'm going on leave from {first} to {last}. Add a leave entry '{title}' for that time (09:00 on {first} to 18:00 on {last}), "
        "and in every project chat I'm in but don't own, post '{message}' and then leave the chat.",
        "Before my sabbatical: for each project chat I belong to (not ones I own), say '{message}' in it and leave it; also block my "
        "calendar with a leave entry '{title}' from {first} 09:00 until {last} 18:00.",
        "Put '{title}' on my calendar as leave from {first}, 09:00, to {last}, 18:00. Then go through my chats: in the project chats "
        "owned by someone else, post '{message}' and leave; keep every other chat.",
    )

    candidates_sql = (
        "SELECT cm.employee_id FROM chat_members cm JOIN chats c ON c.id = cm.chat_id JOIN employees e ON e.id = cm.employee_id "
        "WHERE c.chat_type = 'project' AND cm.role != 'owner' AND e.status = 'active' AND EXISTS (SELECT 1 FROM chats o "
        "WHERE o.owner_id = cm.employee_id AND o.chat_type = 'project') GROUP BY cm.employee_id ORDER BY cm.employee_id"
    )
    candidate = "chat member"

    def _draft(self, ctx: GenContext, row: dict[str, Any]) -> Draft:
        actor = row["employee_id"]
        chats = ctx.rows(
            "SELECT c.id, c.chat_type, cm.role FROM chat_members cm JOIN chats c ON c.id = cm.chat_id WHERE cm.employee_id = ? "
            "ORDER BY c.id",
            actor,
        )
        leave = [c["id"] for c in chats if c["chat_type"] == "project" and c["role"] != "owner"]
        if not any(c["chat_type"] != "project" and c["role"] != "owner" for c in chats):
            raise NoTarget("no other chat")
        first = ctx.choice(_weekdays_between(FIRST_DAY, "2026-11-20"))
        last = _shift(first, ctx.rng.choice([4, 7, 11, 14, 21]))
        title = ctx.rng.choice(["Sabbatical", "Parental leave", "Study leave", "Long vacation"])
        message = ctx.rng.choice(
            [
                "I am off for a while; please reach my manager in the meantime. Bye for now!",
                "Leaving this chat before my leave. Thanks all, and good luck with the project!",
                "Signing off from this group for my time away. Take care!",
            ]
        )
        query = self.phrase(ctx, first=pretty_day(first), last=pretty_day(last), title=title, message=message)
        steps = [Step("create_schedule_entry", {"title": title, "start": _at(first, "09:00"), "end": _at(last, "18:00"), "kind": "leave"})]
        for chat in leave:
            steps += [Step("send_chat_message", {"chat_id": chat, "content": message}), Step("leave_chat", {"chat_id": chat})]
        stated = {"first": first, "last": last, "title": title, "message": message}
        return Draft(actor, query, steps, stated=stated, hidden=[len(leave)], targets=(("employee", actor),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        api.call(
            "create_schedule_entry",
            title=stated["title"],
            start=_at(stated["first"], "09:00"),
            end=_at(stated["last"], "18:00"),
            kind="leave",
        )
        for chat in api.all_pages("list_my_chats", narrow={"chat_type": "project"}):
            if not api.keep("project", chat["chat_type"] == "project") or not api.keep("owned", chat["my_role"] != "owner"):
                continue
            api.call("send_chat_message", chat_id=chat["chat_id"], content=stated["message"])
            api.call("leave_chat", chat_id=chat["chat_id"])


class SeniorPanel(_CandidateTemplate):
    name = "senior_panel"
    conditions = (Condition("top", "ranking", tie_break_stated=True), Condition("leave", "filter"), Condition("heads", "filter"))
    clauses = {"k": "top", "dept": "top", "title": WRITTEN, "day": WRITTEN, "start": WRITTEN, "leave": "leave", "heads": "heads"}
    phrasings = (
        "Set up a 30-minute online '{title}: <full name>' meeting with each of the {k} most senior people of the {dept} department "
        "(all its teams included) on {day}, back to back from {start}, most senior first. Seniority is level, highest first, ties "
        "broken by the earlier hire date; department and team heads don't count, and skip anyone on leave.",
        "Who are the {k} highest-level people in {dept} (teams included) who are not a department or team head and not on leave? "
        "Break level ties by the earlier hire date. On {day}, starting at {start}, give each of them a 30-minute online meeting "
        "with me titled '{title}: ' followed by their full name, one after the other in that order.",
        "On {day} I'd like back-to-back 30-minute online talks, the first at {start}, with the {k} most senior colleagues of the {dept} "
        "department and its teams, highest level first (equal levels: the one hired first goes first), leaving out the heads of "
        "departments and teams and anyone on leave. Title each '{title}: <their full name>'.",
    )
    titles = ("Calibration", "Career conversation", "Architecture interview", "Mentoring kick-off")

    candidates_sql = _headed_units("department")
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        heads = _heads(ctx)
        staff = [p for p in _people(ctx, _subtree(ctx, dept["id"])) if p["id"] not in heads]

        def ranked(people: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return sorted(people, key=lambda p: (-p["level"], p["hire_date"], p["id"]))

        active = ranked([p for p in staff if p["status"] == "active"])
        options = [
            k
            for k in (3, 4, 5, 6)
            if len(active) > k + 1
            and len({(p["level"], p["hire_date"]) for p in active[: k + 1]}) == k + 1
            and any(p["status"] == "on_leave" for p in ranked(staff)[:k])
        ]
        k = ctx.choice(options, "k")
        chosen = active[:k]
        day = ctx.choice(_weekdays_between())
        first = ctx.rng.choice(["09:00", "10:00", "13:30", "15:00"])
        title = ctx.rng.choice(self.titles)
        query = self.phrase(ctx, k=k, dept=dept["name"], title=title, day=_nice(day), start=first)
        steps = [_meeting_step(f"{title}: {p['name']}", day, *_back_to_back(first, i, 30), [p["id"]]) for i, p in enumerate(chosen)]
        stated = {"k": k, "dept": dept["name"], "title": title, "day": day, "start": first}
        return Draft(dept["head"], query, steps, stated=stated, targets=(("department", dept["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        dept = _department(api, stated["dept"])
        me = _me(api)["employee_id"]
        people = [
            p
            for p in _members(api, dept["department_id"], sub=True, active=True)
            if p["employee_id"] != me and api.keep("heads", not p["is_department_head"]) and api.keep("leave", p["status"] != "on_leave")
        ]
        ranked = sorted(people, key=lambda p: (-p["level"], p["hire_date"]))
        for i, person in enumerate(api.top("top", ranked, stated["k"], lambda p: (p["level"], p["hire_date"]))):
            _create_meeting(
                api,
                f"{stated['title']}: {person['name']}",
                stated["day"],
                *_back_to_back(stated["start"], i, 30),
                [person["employee_id"]],
            )


class SkipLevelMeetings(_CandidateTemplate):
    name = "skip_level_meetings"
    conditions = (Condition("top", "ranking", tie_break_stated=True), Condition("leave", "filter"), Condition("alphabetical", "ordering"))
    clauses = {"day": WRITTEN, "start": WRITTEN, "top": "top", "leave": "leave", "alphabetical": "alphabetical"}
    phrasings = (
        "On {day}, starting at {start}, set up back-to-back 30-minute skip-level meetings, one per team of my department, teams "
        "in alphabetical order of name. For each team invite its highest-level member other than the team lead (ties broken by the "
        "earlier hire date), skipping anyone on leave. Title each 'Skip-level: <team name>'; all online.",
        "I want a skip-level chat with one person from each team of my department on {day}: 30 minutes each, back to back from "
        "{start}, teams taken A to Z. The person is the team's highest-level member who is neither its lead nor on leave "
        "(equal levels: earliest hire date). Titles 'Skip-level: <team name>', online.",
        "For each team under me, alphabetically by team name, book a 30-minute online meeting 'Skip-level: <team name>' on {day}, "
        "the first at {start} and each next one right after, with the team member of the highest level who is not the lead and "
        "not on leave (if levels tie, the earlier hire date wins).",
    )

    candidates_sql = _headed_units("department", min_units=2)
    candidate = "department"

    def _draft(self, ctx: GenContext, dept: Any) -> Draft:
        teams, ordered = _teams_alphabetically(ctx, dept)
        heads = _heads(ctx)
        chosen, leave_bites = [], False
        for team in ordered:
            staff = sorted(
                (p for p in _people(ctx, [team["id"]]) if p["id"] not in heads), key=lambda p: (-p["level"], p["hire_date"], p["id"])
            )
            active = [p for p in staff if p["status"] == "active"]
            if (active[0]["level"], active[0]["hire_date"]) == (active[1]["level"], active[1]["hire_date"]):
                raise NoTarget("a tie the tie-break does not settle")
            leave_bites |= staff[0]["status"] == "on_leave"
            chosen.append(active[0]["id"])
        if not leave_bites:
            raise NoTarget("nobody on leave at the top")
        day = ctx.choice(_weekdays_between())
        first = ctx.rng.choice(["09:00", "10:00", "14:00", "15:30"])
        steps = [
            _meeting_step(f"Skip-level: {t['name']}", day, *_back_to_back(first, i, 30), [c])
            for i, (t, c) in enumerate(zip(ordered, chosen))
        ]
        query = self.phrase(ctx, day=_nice(day), start=first)
        return Draft(dept["head"], query, steps, stated={"day": day, "start": first}, targets=(("department", dept["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)
        teams = api.all_pages("list_sub_departments", department_id=me["heads_department_id"])
        for i, team in enumerate(api.order("alphabetical", teams, key=lambda t: t["name"].casefold())):
            staff = [
                p
                for p in _members(api, team["department_id"], active=True)
                if not p["is_department_head"] and api.keep("leave", p["status"] != "on_leave")
            ]
            ranked = sorted(staff, key=lambda p: (-p["level"], p["hire_date"]))
            chosen = api.top("top", ranked, 1, lambda p: (p["level"], p["hire_date"]))
            _create_meeting(
                api,
                f"Skip-level: {team['name']}",
                stated["day"],
                *_back_to_back(stated["start"], i, 30),
                [p["employee_id"] for p in chosen],
            )


class WeeklyTeamSeries(_CandidateTemplate):
    name = "weekly_team_series"
    conditions = (Condition("leave", "filter"), Condition("smallest", "ranking", tie_break_stated=True))
    clauses = {
        "title": WRITTEN,
        "n": "smallest",
        "first": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "building": "smallest",
        "leave": "leave",
        "smallest": "smallest",
    }
    phrasings = (
        "Set up a weekly '{title}' for my team: {n} meetings, every {weekday} from {first} on, {start} to {end}, with everyone else "
        "in my team who is not on leave as required participants. Use the same room for all of "
        "them: the smallest (by capacity) bookable room in "
        "{building} that holds all of us (me included) and is free at all {n} times; if two are equally small, the first by name.",
        "I want {n} weekly team meetings, '{title}', one each {weekday} {start}-{end}, starting {first}. Invite my whole team except "
        "people on leave, as required. Book the smallest (by capacity) room in {building} that "
        "can be booked, fits everyone including me, and is "
        "free every one of those weeks (equal sizes: alphabetical by name); all {n} meetings go in that room.",
        "Please schedule {n} weekly sessions of '{title}' for my team, {start} to {end} on {weekday}s, the first on {first}. Everyone "
        "in my team except people on leave is required. Room: in {building}, the smallest (by "
        "capacity) bookable one big enough for the whole "
        "group with me and free for every session, ties broken alphabetically by room name.",
    )
    titles = ("{team} weekly sync", "{team} planning", "{team} team meeting", "{team} weekly check-in")

    candidates_sql = (
        "SELECT d.id, d.name FROM departments d WHERE d.kind = 'team' AND d.headcount <= 16 AND EXISTS (SELECT 1 FROM employees e "
        "WHERE e.department_id = d.id AND e.status = 'on_leave') ORDER BY d.id"
    )
    candidate = "team"

    def _draft(self, ctx: GenContext, team: Any) -> Draft:
        members = _people(ctx, [team["id"]])
        actor = ctx.choice([m["id"] for m in members if m["status"] == "active"], "member")
        invitees = [m["id"] for m in members if m["status"] == "active" and m["id"] != actor]
        need = len(invitees) + 1
        building = ctx.choice(
            ctx.rows("SELECT id, name FROM buildings WHERE location_id = ? ORDER BY id", _location(ctx, actor)), "building"
        )
        n = ctx.rng.choice([3, 4])
        first = ctx.choice(_weekdays_between(FIRST_DAY, _shift("2026-11-13", -7 * n)))
        dates = [_shift(first, 7 * i) for i in range(n)]
        start, end = ctx.rng.choice(SLOTS)
        rooms = ctx.rows(
            "SELECT id, name, capacity FROM rooms WHERE building_id = ? AND is_bookable = 1 AND capacity >= ?", building["id"], need
        )
        free = sorted(
            (r for r in rooms if all(_room_free(ctx, r["id"], _ts(d, start), _ts(d, end)) for d in dates)),
            key=lambda r: (r["capacity"], r["name"].casefold(), r["id"]),
        )
        if len(free) < 2:
            raise NoTarget("no choice of room")
        title = ctx.rng.choice(self.titles).format(team=team["name"])
        stated = {"title": title, "n": n, "first": first, "start": start, "end": end, "building": building["name"]}
        query = self.phrase(ctx, **stated | {"weekday": _weekday(first), "first": pretty_day(first)})
        steps = [_meeting_step(title, d, start, end, invitees, room=free[0]["id"]) for d in dates]
        return Draft(actor, query, steps, stated=stated, hidden=[free[0]["name"], len(invitees)], targets=(("team", team["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        me = _me(api)
        invitees = [
            p["employee_id"]
            for p in _members(api, me["department_id"], active=True)
            if p["employee_id"] != me["employee_id"] and api.keep("leave", p["status"] != "on_leave")
        ]
        building = _building_id(api, stated["building"])
        dates = [_shift(stated["first"], 7 * i) for i in range(stated["n"])]
        free: dict[int, dict[str, Any]] | None = None
        for day in dates:
            rooms = {
                r["room_id"]: r
                for r in api.all_pages(
                    "find_available_rooms",
                    start=_at(day, stated["start"]),
                    end=_at(day, stated["end"]),
                    min_capacity=len(invitees) + 1,
                    building_id=building,
                )
            }
            free = rooms if free is None else {i: r for i, r in free.items() if i in rooms}
        ranked = sorted((free or {}).values(), key=lambda r: (r["capacity"], r["name"].casefold()))
        for room in api.top("smallest", ranked, 1, lambda r: r["capacity"]):
            for day in dates:
                _create_meeting(api, stated["title"], day, stated["start"], stated["end"], invitees, room_id=room["room_id"])


class FollowupMeeting(_CandidateTemplate):
    name = "followup_meeting"
    conditions = (Condition("title", "filter"), Condition("attended", "filter"), Condition("declined", "filter"))
    clauses = {
        "title": "title",
        "new_title": WRITTEN,
        "new_day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "name": WRITTEN,
        "message": WRITTEN,
        "attended": "attended",
        "declined": "declined",
    }
    phrasings = (
        "Schedule a follow-up to the meeting '{title}' that I organised: '{new_title}' on {new_day} from {start} to {end}, online. "
        "Invite as required everyone who attended the original, and as optional those who were invited but did not attend, "
        "except anyone who had declined it. Also create a project chat '{name}' with just the people who attended, and post "
        "'{message}' there.",
        "'{title}', a meeting I organised, is done. Put the people who actually attended it in a new project chat '{name}' and "
        "post '{message}' in it; then set up '{new_title}' for {new_day}, {start}-{end}, online only, where the attendees are "
        "required and the invitees who did not show up are optional, unless they had declined.",
        "For the people of my '{title}' meeting (I was the organiser): whoever actually joined gets a required invitation to "
        "'{new_title}' on {new_day} at {start}-{end} (online) and goes into a new project chat '{name}', where you post "
        "'{message}'; whoever was invited but missed it gets an optional invitation only, and those who declined get nothing.",
    )

    candidates_sql = (
        "SELECT m.id, m.title, m.organizer_id, m.start_at FROM meetings m JOIN employees e ON e.id = m.organizer_id "
        "WHERE m.status = 'completed' AND e.status = 'active' AND length(m.title) <= 80 "
        "AND EXISTS (SELECT 1 FROM meeting_participants p WHERE p.meeting_id = m.id AND p.response = 'declined') "
        "AND EXISTS (SELECT 1 FROM meeting_participants p WHERE p.meeting_id = m.id AND p.response != 'declined' AND p.attended = 0) "
        "ORDER BY m.id"
    )
    candidate = "meeting"

    def _draft(self, ctx: GenContext, meeting: Any) -> Draft:
        actor = meeting["organizer_id"]
        _named_by_title(ctx, actor, meeting["title"])
        parts = ctx.rows(
            "SELECT employee_id, response, attended FROM meeting_participants WHERE meeting_id = ? AND role != 'organiser' "
            "ORDER BY employee_id",
            meeting["id"],
        )
        required = [p["employee_id"] for p in parts if p["response"] != "declined" and p["attended"]]
        optional = [p["employee_id"] for p in parts if p["response"] != "declined" and not p["attended"]]
        if not required:
            raise NoTarget("nobody attended")
        new_day, start, end = _any_slot(ctx)
        new_title = f"{meeting['title']} follow-up"
        name, message = _new_chat(ctx, actor, PROJECT_CHAT_NAMES)
        stated = {
            "title": meeting["title"],
            "new_title": new_title,
            "new_day": new_day,
            "start": start,
            "end": end,
            "name": name,
            "message": message,
        }
        query = self.phrase(ctx, **stated | {"new_day": _nice(new_day)})
        steps = [
            *_chat_steps(name, required, "project", message),
            _meeting_step(new_title, new_day, start, end, required, optional),
        ]
        return Draft(actor, query, steps, stated=stated, hidden=[len(required), len(optional)], targets=(("meeting", meeting["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        meeting = _meeting_titled(api, stated["title"], narrow={"role": "organiser"})
        invited = _not_declined(api, api.all_pages("list_meeting_participants", meeting_id=meeting["meeting_id"]))
        required, optional = _by_role(invited, lambda p: api.keep("attended", bool(p["attended"])))
        _start_chat(api, stated, required, "project")
        _create_meeting(api, stated["new_title"], stated["new_day"], stated["start"], stated["end"], required, optional)


class ManagerPeersMeeting(_CandidateTemplate):
    name = "manager_peers_meeting"
    conditions = (Condition("level", "boundary"), Condition("free", "filter"))
    # The person named is how the manager (and so the reports the conditions run over) is found.
    clauses = {
        "title": WRITTEN,
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "person": "level",
        "level": "level",
        "free": "free",
    }
    phrasings = (
        "Set up '{title}' on {day} from {start} to {end}{where}. Invite {person}'s manager as a required participant, and as "
        "optional every direct report of that manager ({person} included) who is at level {level} or above and has nothing on "
        "their calendar overlapping that time.",
        "Find out who {person} reports to. That manager is required at '{title}' ({day}, {start}-{end}{where}); their direct "
        "reports of level {level} or higher, {person} among them, are optional invitees, but only those free at that time "
        "according to their calendars.",
        "I need '{title}' on {day}, {start} to {end}{where}: the manager of {person} as required, plus, as optional, all of that "
        "manager's direct reports at level {level} and up whose calendars are clear for that slot (touching entries are fine); "
        "{person} is one of those reports.",
    )

    candidates_sql = (
        "SELECT h.employee_id AS id, h.department_id FROM department_heads h JOIN departments d ON d.id = h.department_id "
        "JOIN employees e ON e.id = h.employee_id WHERE d.kind = 'team' AND e.status = 'active' ORDER BY h.employee_id"
    )
    candidate = "manager"

    def _draft(self, ctx: GenContext, lead: Any) -> Draft:
        reports = ctx.rows("SELECT id, name, level, status FROM employees WHERE manager_id = ? ORDER BY id", lead["id"])
        actor = ctx.choice(
            ctx.column(
                "SELECT id FROM employees WHERE status = 'active' AND level >= 4 AND department_id != ? "
                "AND location_id = (SELECT location_id FROM employees WHERE id = ?) ORDER BY id",
                lead["department_id"],
                lead["id"],
            ),
            "organiser",
        )
        cal = _calendars(ctx, [r["id"] for r in reports])
        options = []
        for day, start, end in _slots_ahead():
            s, e = _ts(day, start), _ts(day, end)
            free = [r for r in reports if not _overlaps(cal[r["id"]], s, e)]
            for level in _levels(free):
                chosen = [r for r in free if r["level"] >= level]
                if (
                    2 <= len(chosen) <= 15
                    and any(r["level"] < level for r in free)
                    and any(r["level"] >= level and r not in free for r in reports)
                ):
                    options.append((day, start, end, level, chosen))
        day, start, end, level, chosen = ctx.choice(options, "slot")
        person = ctx.choice([r for r in chosen if ctx.value("SELECT COUNT(*) FROM employees WHERE name = ?", r["name"]) == 1], "person")
        title = ctx.rng.choice(["Cross-team alignment", "Integration planning", "Dependency review", "Joint roadmap session"])
        stated = {"title": title, "day": day, "start": start, "end": end, "person": person["name"], "level": level}
        query = self.phrase(ctx, **stated | {"day": _nice(day), "where": ", online"})
        step = _meeting_step(title, day, start, end, [lead["id"]], [r["id"] for r in chosen])
        return Draft(actor, query, [step], stated=stated, targets=(("manager", lead["id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        person = find_one(api.all_pages("search_employees", query=stated["person"]), name=stated["person"])
        manager = person["manager_id"]
        start, end = _ts(stated["day"], stated["start"]), _ts(stated["day"], stated["end"])
        optional = [
            r["employee_id"]
            for r in api.all_pages("search_employees", manager_id=manager)
            if api.compare("level", r["level"], ">=", stated["level"]) and api.keep("free", not _busy(api, r["employee_id"], start, end))
        ]
        _create_stated_meeting(api, stated, [manager], optional)


class OrganiserTeamMeeting(_CandidateTemplate):
    name = "organiser_team_meeting"
    conditions = (Condition("title", "filter"), Condition("family", "filter"), Condition("leave", "filter"))
    clauses = {
        "other": "title",
        "title": WRITTEN,
        "day": WRITTEN,
        "start": WRITTEN,
        "end": WRITTEN,
        "family": "family",
        "name": WRITTEN,
        "message": WRITTEN,
        "leave": "leave",
    }
    phrasings = (
        "Who organised '{other}' (a meeting I was invited to)? Schedule an online meeting '{title}' on {day} from "
        "{start} to {end} with everyone in that person's own department or team who is in the {family} job family and not on "
        "leave, all as required participants. Then create a project chat '{name}' with the same people and post '{message}' in it.",
        "Set up '{title}' ({day}, {start}-{end}, online) for the {family} people of the department or team that the organiser of my "
        "meeting '{other}' belongs to, the organiser included if they qualify; skip anyone on leave. Everyone "
        "invited is required. Put the same people in a new project chat '{name}' and send '{message}' there.",
        "Look up the organiser of '{other}', a meeting I'm invited to. Every member of the organiser's department or team whose job family is "
        "{family}, except people on leave, goes into a new project chat '{name}' (post '{message}' in it) and gets a required "
        "invitation to a new online meeting '{title}' on {day}, {start} to {end}.",
    )

    candidates_sql = (
        "SELECT p.employee_id AS actor, m.title, m.start_at, m.organizer_id, e.department_id FROM meeting_participants p "
        "JOIN meetings m ON m.id = p.meeting_id JOIN employees e ON e.id = m.organizer_id JOIN employees a ON a.id = p.employee_id "
        "WHERE p.role != 'organiser' AND a.status = 'active' AND m.start_at >= '2026-09-01' AND m.start_at < ? "
        "AND length(m.title) <= 80 ORDER BY m.id, p.employee_id"
    )
    candidates_params = (_ts(LAST_DAY, "00:00"),)
    candidate = "meeting"

    def _draft(self, ctx: GenContext, row: Any) -> Draft:
        actor = row["actor"]
        _named_by_title(ctx, actor, row["title"])
        people = [p for p in _people(ctx, [row["department_id"]]) if p["id"] != actor]
        family, chosen = ctx.choice(_group_options(people, "job_family", 2, 25), "family")
        day, start, end = _any_slot(ctx)
        title = ctx.rng.choice(["Handover session", "Knowledge transfer", "Process walkthrough", "Joint planning"])
        name, message = _new_chat(ctx, actor, PROJECT_CHAT_NAMES)
        stated = {
            "other": row["title"],
            "title": title,
            "day": day,
            "start": start,
            "end": end,
            "family": family,
            "name": name,
            "message": message,
        }
        query = self.phrase(ctx, **stated | {"day": _nice(day)})
        steps = [
            _meeting_step(title, day, start, end, chosen),
            *_chat_steps(name, chosen, "project", message, chat_step=1),
        ]
        return Draft(actor, query, steps, stated=stated, hidden=[len(chosen)], targets=(("department", row["department_id"]),))

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        meeting = _meeting_titled(api, stated["other"])
        organiser = api.call("get_employee", employee_id=meeting["organizer_id"])
        me = _me(api)["employee_id"]
        chosen = [
            p["employee_id"]
            for p in _members(api, organiser["department_id"], active=True)
            if p["employee_id"] != me
            and api.keep("family", p["job_family"].casefold() == stated["family"].casefold())
            and api.keep("leave", p["status"] != "on_leave")
        ]
        _create_stated_meeting(api, stated, chosen)
        _start_chat(api, stated, chosen, "project")


TEMPLATES = [
    TeamMeetingFreeMembers,
    DepartmentFreeMeeting,
    TeamReviews,
    CommonFreeSlot,
    DivisionAllHands,
    OneOnOnes,
    InviteTeamToMeeting,
    ChatTitleMeeting,
    HeadsSyncRoom,
    RescheduleMeeting,
    OutOfOffice,
    FocusBlocks,
    WeekOfRoomBookings,
    AttendanceChat,
    NewcomerChat,
    PruneQuietChat,
    TransferSeniorStaff,
    TeamSplitTransfer,
    AddTeamToChat,
    CitySocialChat,
    ProjectKickoff,
    SabbaticalChats,
    SeniorPanel,
    SkipLevelMeetings,
    WeeklyTeamSeries,
    FollowupMeeting,
    ManagerPeersMeeting,
    OrganiserTeamMeeting,
]

# Scenario turns (ebench/tasks/scenario_generation.py). The entities a later turn may refer to by
# description ("the chat you just created"): table -> (name column, noun, what making one is called).
SCENARIO_ENTITIES = {"chats": ("name", "chat", "created"), "meetings": ("title", "meeting", "set up")}
# Chat turns that need no change, filled with the employee's own data (`:actor`) or the company's.
SCENARIO_CHATS = (
    (
        "SELECT e.name AS colleague FROM employees e WHERE e.department_id = (SELECT department_id FROM employees WHERE id = :actor) "
        "AND e.id != :actor ORDER BY e.id LIMIT 30",
        (
            "Is {colleague} in the office today, do you know? No need to invite anyone.",
            "{colleague} just asked me about lunch. Anyway, thanks for the help so far.",
            "What's {colleague}'s job title again?",
        ),
    ),
    (
        "SELECT DISTINCT m.title AS meeting FROM meetings m JOIN meeting_participants p ON p.meeting_id = m.id "
        "WHERE p.employee_id = :actor AND m.status = 'scheduled' ORDER BY m.start_at LIMIT 20",
        ("When does '{meeting}' start again? Don't change anything.", "Who organises '{meeting}'? Just curious."),
    ),
    (
        "SELECT b.name AS building, l.city AS city FROM buildings b JOIN locations l ON l.id = b.location_id ORDER BY b.id",
        (
            "Is {building} the one with the big cafeteria in {city}?",
            "How many floors does {building} have? I'm still finding my way around {city}.",
        ),
    ),
    (
        "SELECT c.name AS chat FROM chats c JOIN chat_members m ON m.chat_id = c.id WHERE m.employee_id = :actor ORDER BY c.id LIMIT 20",
        (
            "The '{chat}' chat has been busy today. Anything I should know? Don't post anything.",
            "How many people are in '{chat}' now? Just wondering.",
        ),
    ),
)
