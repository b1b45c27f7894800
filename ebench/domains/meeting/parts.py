"""The meeting platform's task grammar: the parts composed tasks are built from (ebench/tasks/composition.py).

Sources are what an employee reaches from their account: the people of a team or department (the
directory), their direct reports, the members of a chat they own, the people invited to one of
their meetings, the meetings they organise or are invited to, and the rooms of a building or an
office city. Predicates are the fields the tools show (job family, level, office city, hire date,
a word of the job title, a meeting's status, start day, room, recurrence, a room's capacity and
equipment...) and relations to the employee's own world ("who report directly to me", "who share
a group chat with me", "organised by someone in my own team or department"). Reductions rank
(seniority by level, the earliest hires, the biggest meetings, the smallest room), count groups
(the managers of at least n of them, the organisers of at least n of them) and compare with the
selection's average; writes are the platform's: a new chat with a first message (whose id the
message uses), a new meeting, adding to a chat, inviting, transferring, removing, cancelling,
answering, booking.

An item's shape decides what can be said about it: the directory lists level, job family, office
and hire date (entity "employee"; a meeting's guest list adds each guest's role, answer and
attendance, and its public half reads each guest's directory entry with get_employee); a chat's
member list lists role and join date but no level ("member"). Both are the same people (the
employees table), so the writes to people take either.

Wording follows docs/wording.md and the domain's open terms (templates.OPEN_TERMS): a meeting of
mine says "I organise" or "I am invited", a chat's people say "admins included", a team's say
that its lead is included, and a guest list says "whatever their answer". Writes the product
refuses anyway (cancelling or answering a meeting that is over, answering twice, inviting or
adding someone already there, inviting oneself) are not conditions: the public half skips them as
a careful user would, and the SQL half predicts the same. Where skipping one would give the
request two readings ("book the 3 largest rooms" when one is taken: book two, or the 4th?), the
draw is not made: bookings, a meeting in a room and transfers are drawn only where the product
accepts every one, and cancels and answers only apply to every selected meeting. A title word is
matched as a whole word ("Engineer" is not in "Engineering").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from ...tasks.composition import Action, Drafting, Entity, Grammar, Reduction, Row, Solving, Source
from ...tasks.part_kinds import AboveAverage, EachCall, Equals, Every, Flag, GroupThreshold, GroupTop, Threshold, TopK
from ...tasks.public import find_one
from ...tasks.spec import Step
from ...tasks.template_api import NoTarget
from ...tasks.template_helpers import pretty_day, ref
from .templates import FIRST_DAY, MESSAGES, NOW, PROJECT_CHAT_NAMES, SLOTS, SOCIAL_CHAT_NAMES, WEEKDAYS

PERSONS = ("employee", "member")  # the shapes a person is listed in
ENTITIES = {
    "employee": Entity("employee", "employees", "employee_id", person=True),  # a directory entry
    "member": Entity("member", "employees", "employee_id", person=True),  # a chat's member list
    "meeting": Entity("meeting", "meetings", "meeting_id"),
    "room": Entity("room", "rooms", "room_id"),
}

LAST_NEW_DAY = "2026-11-12"  # new meetings and bookings go on the weekdays FIRST_DAY..LAST_NEW_DAY
TITLE_WORDS = (
    "Senior",
    "Manager",
    "Analyst",
    "Designer",
    "Product",
    "Data",
    "Specialist",
    "Sales",
    "Software",
    "Engineer",
    "Lead",
    "Staff",
)
MEETING_WORDS = (
    "planning",
    "review",
    "sync",
    "stand-up",
    "demo",
    "status",
    "workshop",
    "kick-off",
    "design",
    "weekly",
    "follow-up",
    "brainstorm",
    "vendor",
    "project",
    "interview",
)
MEETING_TITLES = (
    "Alignment session",
    "Working session",
    "Quarterly check-in",
    "Roadmap walkthrough",
    "Knowledge sharing",
    "Process review",
    "Open questions hour",
    "Cross-team huddle",
    "Planning catch-up",
    "Lessons learned",
)
PURPOSES = ("Candidate interviews", "Customer calls", "Quiet work", "Training prep", "Vendor demos", "Hackathon")
CANCEL_REASONS = ("Schedule change", "Project paused", "No longer needed", "Team offsite", "Moved to another date")
RESPONSES = ("accepted", "declined", "tentative")
ROOM_TYPES = {
    "huddle": "huddle rooms",
    "meeting": "standard meeting rooms",
    "conference": "conference rooms",
    "boardroom": "boardrooms",
    "training": "training rooms",
}
RECURRENCES = {"daily": "every day", "weekly": "every week", "biweekly": "every two weeks", "monthly": "every month"}
FAMILIES = ("Data", "Engineering", "Marketing", "Operations", "Product", "Sales")

STARTED = f"(e.status != 'scheduled' OR e.start_at <= '{NOW}')"  # a meeting nobody can change or answer any more
MY_UNIT_SQL = "(SELECT department_id FROM employees WHERE id = :actor)"
GUESTS_SQL = (
    "SELECT p.employee_id FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
    "WHERE m.organizer_id = :actor AND p.role != 'organiser'"
)
CHAT_MATES_SQL = (
    "SELECT b.employee_id FROM chat_members a JOIN chat_members b ON b.chat_id = a.chat_id "
    "WHERE a.employee_id = :actor AND b.employee_id != :actor"
)


# == helpers ==================================================================================


def _an(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _quoted(text: str) -> str:
    return f"'{text}'"


def _nice(day: str) -> str:
    """'2026-10-20' -> 'Tuesday, October 20, 2026'."""
    return f"{WEEKDAYS[datetime.strptime(day, '%Y-%m-%d').weekday()]}, {pretty_day(day)}"


@cache
def _weekdays_ahead() -> tuple[str, ...]:
    out, day = [], datetime.strptime(FIRST_DAY, "%Y-%m-%d")
    while day.strftime("%Y-%m-%d") <= LAST_NEW_DAY:
        if day.weekday() < 5:
            out.append(day.strftime("%Y-%m-%d"))
        day += timedelta(days=1)
    return tuple(out)


def _ts(day: str, hm: str) -> str:
    return f"{day} {hm}:00"


def _day_of(field: str) -> Callable[[Solving, Row], str | None]:
    def attribute(s: Solving, item: Row) -> str | None:
        value = item.get(field)
        return value[:10] if isinstance(value, str) else None

    return attribute


def _dates(attrs: list[Any]) -> list[Any]:
    """The data's own dates (a candidate lands on the boundary: its inclusivity is certified)."""
    return sorted({a for a in attrs if a})[1:-1]


def _present(attrs: list[Any]) -> list[Any]:
    return sorted({a for a in attrs if a is not None})


# The sources' candidate lists (teams, chats, actors), computed once per world connection: a draft
# draws its source many times, and these scans are the same every time. Only the latest
# connection's lists are kept (held, so that its identity cannot be reused meanwhile).
_LISTS: dict[str, Any] = {"conn": None, "lists": {}}


def _listed(d: Drafting, sql: str, **params: Any) -> list[Row]:
    if _LISTS["conn"] is not d.ctx.conn:
        _LISTS["conn"], _LISTS["lists"] = d.ctx.conn, {}
    key = repr((sql, sorted(params.items())))
    lists: dict[str, list[Row]] = _LISTS["lists"]
    if key not in lists:
        lists[key] = d.rows(sql, **params)
    return list(lists[key])


def _column(d: Drafting, sql: str, **params: Any) -> list[Any]:
    return [next(iter(row.values())) for row in _listed(d, sql, **params)]


def _me(s: Solving) -> Row:
    profile: Row = s.remember("me", lambda: s.api.call("get_my_profile"))
    return profile


def _employee(s: Solving, employee_id: int) -> Row:
    entry: Row = s.remember(f"employee:{employee_id}", lambda: s.api.call("get_employee", employee_id=employee_id) or {})
    return entry


def _unit(s: Solving, name: str) -> Row:
    """A team or department by its exact name, from the organisation listing."""
    return find_one(s.listing("list_sub_departments", recursive=True), name=name)


def _my_chat(s: Solving, name: str) -> Row:
    return find_one(s.listing("list_my_chats", query=name), name=name)


def _organised_meeting(s: Solving, title: str) -> Row:
    return find_one(s.listing("list_my_meetings", role="organiser"), title=title)


def _reports(s: Solving) -> set[Any]:
    ids: set[Any] = s.remember(
        "reports", lambda: {i["employee_id"] for i in s.listing("search_employees", manager_id=_me(s)["employee_id"])}
    )
    return ids


def _guests(s: Solving) -> set[Any]:
    """Everyone invited to a meeting I organise (any status), read meeting by meeting."""

    def read() -> set[Any]:
        out: set[Any] = set()
        for meeting in s.listing("list_my_meetings", role="organiser"):
            out |= {
                p["employee_id"]
                for p in s.listing("list_meeting_participants", meeting_id=meeting["meeting_id"])
                if p["role"] != "organiser"
            }
        return out

    ids: set[Any] = s.remember("guests", read)
    return ids


def _chat_mates(s: Solving) -> set[Any]:
    """Everyone who shares one of my group chats, read chat by chat."""

    def read() -> set[Any]:
        me = _me(s)["employee_id"]
        out: set[Any] = set()
        for chat in s.listing("list_my_chats"):
            out |= {m["employee_id"] for m in s.listing("list_chat_members", chat_id=chat["chat_id"]) if m["employee_id"] != me}
        return out

    ids: set[Any] = s.remember("chat_mates", read)
    return ids


def _my_unit_people(s: Solving) -> set[Any]:
    ids: set[Any] = s.remember(
        "my_unit", lambda: {i["employee_id"] for i in s.listing("list_department_members", department_id=_me(s)["department_id"])}
    )
    return ids


@cache
def _word_pattern(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)


def _whole_word(word: str, text: Any) -> bool:
    return isinstance(text, str) and _word_pattern(word).search(text) is not None


def _splits(n_in: int, n: int) -> bool:
    return 0 < n_in < n and 0.1 <= n_in / n <= 0.9


def _narrow_on(sources: Iterable[str], make: Callable[[Any], Row]) -> Callable[[str, Any], Row | None]:
    """The tools' own filter for a stated term, on the sources whose listing takes it."""
    allowed = frozenset(sources)

    def narrow(source: str, value: Any) -> Row | None:
        return make(value) if source in allowed else None

    return narrow


class HasWord(Equals):
    """A text (a job title, a meeting title) that has the stated word, as a whole word and in any case."""

    def choose(self, d: Drafting, attrs: list[Any]) -> Any:
        words = self._values(d) if self._values else ()
        good = sorted(w for w in words if _splits(sum(_whole_word(w, a) for a in attrs), len(attrs)))
        return d.choice(good, f"{self.key} value")

    def holds(self, attr: Any, value: Any, op: str | None = None) -> bool:
        return _whole_word(value, attr)

    def check(self, attr: Any, value: Any) -> bool:
        return _whole_word(value, attr)


# == sources ==================================================================================


def _exclude_me(s: Solving, items: list[Row]) -> list[Row]:
    me = _me(s)["employee_id"]
    return [i for i in items if i["employee_id"] != me]


class TeamPeople(Source):
    """The people of a team (its lead included); the employee is the head of the unit above it."""

    def __init__(self) -> None:
        super().__init__(
            "team",
            "employee",
            ("people", "colleagues", "members"),
            (
                "in the {s_team} team (its lead included)",
                "on the {s_team} team (the team lead too)",
                "of the {s_team} team (including its lead)",
            ),
            weight=1.4,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_team",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            _listed(
                d,
                "SELECT t.id, t.name, h.employee_id AS head FROM departments t JOIN department_heads h ON h.department_id = t.parent_id "
                "JOIN employees e ON e.id = h.employee_id WHERE t.kind = 'team' AND e.status = 'active' AND t.name NOT LIKE '%''%' "
                "ORDER BY t.id",
            ),
            "team",
        )
        d.actor = row["head"]
        d.params["unit"] = row["id"]
        d.state("s_team", row["name"])
        d.targets.append(("team", row["id"]))
        return "SELECT id FROM employees WHERE department_id = :unit AND id != :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        team = _unit(s, s.stated["s_team"])
        return _exclude_me(s, s.listing("list_department_members", narrow=narrow, department_id=team["department_id"]))


class DepartmentPeople(Source):
    """The people of a department and of its teams (heads included); the employee heads the division above."""

    def __init__(self) -> None:
        super().__init__(
            "dept",
            "employee",
            ("people", "colleagues", "employees"),
            (
                "in the {s_dept} department (its teams and heads included)",
                "anywhere in the {s_dept} department (its teams too, heads included)",
                "of the {s_dept} department or one of its teams (the heads included)",
            ),
            weight=1.2,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_dept",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            _listed(
                d,
                "SELECT t.id, t.name, h.employee_id AS head FROM departments t JOIN department_heads h ON h.department_id = t.parent_id "
                "JOIN employees e ON e.id = h.employee_id WHERE t.kind = 'department' AND e.status = 'active' "
                "AND t.name NOT LIKE '%''%' AND EXISTS (SELECT 1 FROM departments c WHERE c.parent_id = t.id) ORDER BY t.id",
            ),
            "department",
        )
        d.actor = row["head"]
        d.params["unit"] = row["id"]
        d.state("s_dept", row["name"])
        d.targets.append(("department", row["id"]))
        return (
            "WITH RECURSIVE sub(id) AS (SELECT :unit UNION ALL SELECT x.id FROM departments x JOIN sub ON x.parent_id = sub.id) "
            "SELECT id FROM employees WHERE department_id IN (SELECT id FROM sub) AND id != :actor"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        dept = _unit(s, s.stated["s_dept"])
        return _exclude_me(
            s, s.listing("list_department_members", narrow=narrow, department_id=dept["department_id"], include_sub_departments=True)
        )


class DirectReports(Source):
    def __init__(self) -> None:
        super().__init__(
            "reports",
            "employee",
            ("people", "direct reports", "colleagues"),
            ("who report directly to me", "of mine", "reporting directly to me"),
        )

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _column(
                    d,
                    "SELECT m.manager_id FROM employees m JOIN employees b ON b.id = m.manager_id WHERE b.status = 'active' "
                    "GROUP BY m.manager_id HAVING COUNT(*) BETWEEN 8 AND 30 ORDER BY m.manager_id",
                ),
                "manager",
            )
        )
        return "SELECT id FROM employees WHERE manager_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("search_employees", narrow=narrow, manager_id=_me(s)["employee_id"])


class ChatPeople(Source):
    """The members of a chat the employee owns, other than the employee (admins included)."""

    def __init__(self) -> None:
        super().__init__(
            "chat",
            "member",
            ("members", "people", "colleagues"),
            (
                "of the {s_chat} chat I own (admins included)",
                "in my chat {s_chat} other than me (I own it; admins included)",
                "in the {s_chat} group chat I own (its admins too)",
            ),
            weight=1.3,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_chat",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            _listed(
                d,
                "SELECT c.id, c.name, c.owner_id FROM chats c JOIN employees e ON e.id = c.owner_id WHERE e.status = 'active' "
                "AND c.member_count BETWEEN 9 AND 70 AND c.name NOT LIKE '%''%' AND (SELECT COUNT(*) FROM chats x "
                "JOIN chat_members m ON m.chat_id = x.id AND m.employee_id = c.owner_id WHERE x.name = c.name COLLATE NOCASE) = 1 "
                "ORDER BY c.id",
            ),
            "chat",
        )
        d.actor = row["owner_id"]
        d.params["chat"] = row["id"]
        d.state("s_chat", row["name"], _quoted(row["name"]))
        d.targets.append(("chat", row["id"]))
        return "SELECT employee_id AS id, joined_at, muted, role FROM chat_members WHERE chat_id = :chat AND employee_id != :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        chat = _my_chat(s, s.stated["s_chat"])
        return _exclude_me(s, s.listing("list_chat_members", narrow=narrow, chat_id=chat["chat_id"]))


class GuestList(Source):
    """The people invited to a meeting the employee organises (everyone but the organiser)."""

    def __init__(self, key: str, *, upcoming: bool, weight: float) -> None:
        when = "upcoming" if upcoming else "past"
        did = "organise" if upcoming else "organised"
        super().__init__(
            key,
            "employee",
            ("people", "colleagues", "invitees"),
            (
                f"invited to my {when} meeting {{s_meeting}} (I {did} it; whatever their answer)",
                f"on the guest list of {{s_meeting}}, {_an(when)} {when} meeting I {did} (whatever they answered)",
                f"of my {when} meeting {{s_meeting}}, which I {did} (however they answered)",
            ),
            weight=weight,
        )
        self.upcoming = upcoming
        self.least = 8 if upcoming else 10  # people invited: the guest lists that a few conditions can split

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_meeting",)

    def draw(self, d: Drafting) -> str:
        status = f"m.status = 'scheduled' AND m.start_at > '{NOW}'" if self.upcoming else "m.status = 'completed'"
        row = d.choice(
            _listed(
                d,
                f"SELECT m.id, m.title, m.organizer_id FROM meetings m JOIN employees e ON e.id = m.organizer_id WHERE {status} "
                f"AND e.status = 'active' AND m.participant_count BETWEEN {self.least} AND 60 AND m.title NOT LIKE '%''%' "
                "AND (SELECT COUNT(*) FROM meetings x JOIN meeting_participants p ON p.meeting_id = x.id "
                "AND p.employee_id = m.organizer_id "
                "WHERE x.title = m.title COLLATE NOCASE) = 1 ORDER BY m.id",
            ),
            "meeting",
        )
        d.actor = row["organizer_id"]
        d.params["meeting"] = row["id"]
        d.state("s_meeting", row["title"], _quoted(row["title"]))
        d.targets.append(("meeting", row["id"]))
        return (
            "SELECT employee_id AS id, role, response, attended FROM meeting_participants "
            "WHERE meeting_id = :meeting AND role != 'organiser'"
        )

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        meeting = _organised_meeting(s, s.stated["s_meeting"])
        guests = s.listing("list_meeting_participants", narrow=narrow, meeting_id=meeting["meeting_id"])
        # Each guest's directory entry (level, job family, office, manager...), read once per guest.
        return [{**_employee(s, g["employee_id"]), **g} for g in guests if g["role"] != "organiser"]


class Organised(Source):
    def __init__(self) -> None:
        super().__init__(
            "organised",
            "meeting",
            ("meetings", "meetings", "meetings"),
            (
                "I have organised (whatever their status)",
                "I organise or have organised (in any status)",
                "that I am the organiser of (any status)",
            ),
            weight=0.8,
        )

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _column(
                    d,
                    "SELECT m.organizer_id FROM meetings m JOIN employees e ON e.id = m.organizer_id WHERE e.status = 'active' "
                    "GROUP BY m.organizer_id HAVING COUNT(*) >= 7 ORDER BY m.organizer_id",
                ),
                "organiser",
            )
        )
        return "SELECT id FROM meetings WHERE organizer_id = :actor"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("list_my_meetings", narrow=narrow, role="organiser")


class Invited(Source):
    def __init__(self) -> None:
        super().__init__(
            "invited",
            "meeting",
            ("meetings", "meetings", "meetings"),
            (
                "I am invited to without organising them (whatever their status)",
                "I have been invited to, not as organiser (in any status)",
                "that I'm invited to but do not organise (any status)",
            ),
            weight=1.2,
        )

    def draw(self, d: Drafting) -> str:
        d.actor = int(
            d.choice(
                _column(
                    d,
                    "SELECT p.employee_id FROM meeting_participants p JOIN employees e ON e.id = p.employee_id WHERE e.status = 'active' "
                    "AND p.role != 'organiser' GROUP BY p.employee_id HAVING COUNT(*) BETWEEN 12 AND 90 ORDER BY p.employee_id",
                ),
                "invitee",
            )
        )
        return "SELECT meeting_id AS id FROM meeting_participants WHERE employee_id = :actor AND role != 'organiser'"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return [m for m in s.listing("list_my_meetings", narrow=narrow) if m["my_role"] != "organiser"]


class BuildingRooms(Source):
    def __init__(self) -> None:
        super().__init__(
            "building_rooms",
            "room",
            ("rooms", "meeting rooms", "rooms"),
            ("in {s_building}", "in the {s_building} building", "located in {s_building}"),
            weight=0.6,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_building",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(_listed(d, "SELECT id, name, location_id FROM buildings WHERE name NOT LIKE '%''%' ORDER BY id"), "building")
        d.actor = int(
            d.choice(
                _column(d, "SELECT id FROM employees WHERE location_id = :loc AND status = 'active' ORDER BY id", loc=row["location_id"]),
                "employee",
            )
        )
        d.params["building"] = row["id"]
        d.state("s_building", row["name"])
        d.targets.append(("building", row["id"]))
        return "SELECT id FROM rooms WHERE building_id = :building"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        name = s.stated["s_building"]
        return [r for r in s.listing("search_rooms", narrow=narrow, query=name) if r["building"].casefold() == name.casefold()]


class CityRooms(Source):
    def __init__(self) -> None:
        super().__init__(
            "city_rooms",
            "room",
            ("rooms", "meeting rooms", "rooms"),
            ("in our {s_city} office", "of the {s_city} office, every building", "across all buildings of the {s_city} office"),
            weight=0.6,
        )

    def stated_keys(self) -> tuple[str, ...]:
        return ("s_city",)

    def draw(self, d: Drafting) -> str:
        row = d.choice(
            _listed(
                d,
                "SELECT l.id, l.city FROM locations l WHERE (SELECT COUNT(*) FROM rooms r JOIN buildings b ON b.id = r.building_id "
                "WHERE b.location_id = l.id) >= 15 ORDER BY l.id",
            ),
            "office",
        )
        d.actor = int(
            d.choice(
                _column(d, "SELECT id FROM employees WHERE location_id = :loc AND status = 'active' ORDER BY id", loc=row["id"]), "employee"
            )
        )
        d.params["loc"] = row["id"]
        d.state("s_city", row["city"])
        d.targets.append(("office", row["id"]))
        return "SELECT r.id FROM rooms r JOIN buildings b ON b.id = r.building_id WHERE b.location_id = :loc"

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        return s.listing("search_rooms", narrow=narrow, location=s.stated["s_city"])


# == predicates ===============================================================================

DIRECTORY = ("team", "dept", "reports")
GUESTS = ("upcoming_guests", "past_guests")


EMPLOYEE_PREDICATES = [
    Equals(
        "family",
        "employee",
        "e.job_family",
        "job_family",
        ("are in the <v> job family", "belong to the <v> job family", "have <v> as their job family"),
        negated=("are not in the <v> job family", "do not belong to the <v> job family", "have a job family other than <v>"),
        values=lambda d: FAMILIES,
    ),
    Equals(
        "city",
        "employee",
        "(SELECT city FROM locations WHERE id = e.location_id)",
        "location",
        ("are based in <v>", "work out of the <v> office", "have <v> as their office city"),
        negated=("are not based in <v>", "do not work out of the <v> office", "have an office city other than <v>"),
        narrow=_narrow_on(("reports",), lambda v: {"location": v}),
    ),
    Threshold(
        "level_min",
        "employee",
        "e.level",
        "level",
        ("are at level <v> or above", "have a level of <v> or higher", "are level <v> and up"),
        op=">=",
        candidates=_present,
    ),
    Threshold(
        "level_max",
        "employee",
        "e.level",
        "level",
        ("are at level <v> or below", "have a level of <v> or lower", "are level <v> at most"),
        op="<=",
        candidates=_present,
    ),
    Threshold(
        "hired_since",
        "employee",
        "e.hire_date",
        "hire_date",
        ("joined the company on or after <v>", "were hired on <v> or later", "have a hire date of <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "hired_before",
        "employee",
        "e.hire_date",
        "hire_date",
        ("joined the company before <v>", "were hired before <v>", "have a hire date earlier than <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
    ),
    Equals(
        "hired_in",
        "employee",
        "substr(e.hire_date, 1, 4)",
        lambda s, i: (i.get("hire_date") or "")[:4] or None,
        ("joined the company in <v>", "were hired in <v>", "have a hire date in <v>"),
        negated=("did not join the company in <v>", "were not hired in <v>", "have a hire date outside <v>"),
        private=True,
    ),
    HasWord(
        "title_word",
        "employee",
        "e.title",
        "title",
        ("have the word '<v>' in their job title", "hold a job title with the word '<v>' in it", "carry the word '<v>' in their job title"),
        negated=(
            "do not have the word '<v>' in their job title",
            "hold a job title without the word '<v>'",
            "carry no word '<v>' in their job title",
        ),
        values=lambda d: TITLE_WORDS,
        narrow=_narrow_on(("reports",), lambda v: {"title": v}),
    ),
    Flag(
        "same_city",
        "employee",
        "e.location_id = (SELECT location_id FROM employees WHERE id = :actor)",
        lambda s, i: i.get("location") == _me(s)["location"],
        ("are based in the same office city as I am", "work out of my own office city", "share my office city"),
        negated=("are based in another office city than mine", "work out of an office city other than mine", "do not share my office city"),
    ),
    Equals(
        "manager_is",
        "employee",
        "(SELECT name FROM employees WHERE id = e.manager_id)",
        "manager",
        ("have <v> as their direct manager", "report directly to <v>", "are managed directly by <v>"),
        negated=("do not have <v> as their direct manager", "do not report directly to <v>", "are not managed directly by <v>"),
        excluded_sources=("reports", "team"),  # one manager for all, or for all but the lead
    ),
    Equals(
        "in_team",
        "employee",
        "(SELECT name FROM departments WHERE id = e.department_id)",
        "department",
        ("sit in the <v> team", "belong to the <v> team", "are part of the <v> team"),
        negated=("do not sit in the <v> team", "do not belong to the <v> team", "are not part of the <v> team"),
        values=lambda d: _column(d, "SELECT name FROM departments WHERE kind = 'team' ORDER BY name"),
        sources=("dept",),
    ),
    Flag(
        "is_head",
        "employee",
        "e.id IN (SELECT employee_id FROM department_heads WHERE department_id = e.department_id)",
        "is_department_head",
        ("head the team or department they sit in", "are the head of their own team or department", "lead the unit they belong to"),
        negated=(
            "do not head the team or department they sit in",
            "are not the head of their own team or department",
            "do not lead the unit they belong to",
        ),
        sources=("dept",),
    ),
    Flag(
        "my_guest",
        "employee",
        f"e.id IN ({GUESTS_SQL})",
        lambda s, i: i.get("employee_id") in _guests(s),
        (
            "I have invited to at least one meeting I organise (whatever its status)",
            "appear on the guest list of some meeting I organise (in any status)",
            "have been invited to a meeting I organise at some point (cancelled ones too)",
        ),
        negated=(
            "I have never invited to a meeting I organise (whatever its status)",
            "appear on the guest list of no meeting I organise (in any status)",
            "have never been invited to a meeting I organise (cancelled ones included)",
        ),
        sources=DIRECTORY,
    ),
    Flag(
        "chat_mate",
        "employee",
        f"e.id IN ({CHAT_MATES_SQL})",
        lambda s, i: i.get("employee_id") in _chat_mates(s),
        ("share a group chat with me", "are in at least one group chat I am in", "belong to some group chat I belong to"),
        negated=("share no group chat with me", "are in no group chat I am in", "belong to no group chat I belong to"),
        private=True,
    ),
]


def _person_relations(
    prefix: str, entity: str, *, private: Sequence[str] = (), only: Sequence[str] | None = None, sources: Iterable[str] | None = None
) -> list[Any]:
    """The relations to the employee's own world (and the fields) that any listing of people can be
    checked against: `only` these of them, on `sources`."""
    parts = [
        Flag(
            f"{prefix}report",
            entity,
            "e.manager_id = :actor",
            lambda s, i: i.get("employee_id") in _reports(s),
            ("report directly to me", "are my direct reports", "have me as their direct manager"),
            negated=("do not report directly to me", "are not my direct reports", "do not have me as their direct manager"),
            private="report" in private,
        ),
        Flag(
            f"{prefix}same_unit",
            entity,
            f"e.department_id = {MY_UNIT_SQL}",
            lambda s, i: i.get("employee_id") in _my_unit_people(s),
            ("sit in my own team or department", "belong to the same team or department as me", "are in my own unit"),
            negated=("do not sit in my own team or department", "belong to another team or department than mine", "are not in my own unit"),
            private="same_unit" in private,
        ),
        Flag(
            f"{prefix}chat_mate",
            entity,
            f"e.id IN ({CHAT_MATES_SQL})",
            lambda s, i: i.get("employee_id") in _chat_mates(s),
            ("share a group chat with me", "are in at least one group chat I am in", "belong to some group chat I belong to"),
            negated=("share no group chat with me", "are in no group chat I am in", "belong to no group chat I belong to"),
            private="chat_mate" in private,
        ),
        HasWord(
            f"{prefix}title_word",
            entity,
            "e.title",
            "title",
            (
                "have the word '<v>' in their job title",
                "hold a job title with the word '<v>' in it",
                "carry the word '<v>' in their job title",
            ),
            negated=(
                "do not have the word '<v>' in their job title",
                "hold a job title without the word '<v>'",
                "carry no word '<v>' in their job title",
            ),
            values=lambda d: TITLE_WORDS,
            private="title_word" in private,
        ),
        Equals(
            f"{prefix}unit",
            entity,
            "(SELECT name FROM departments WHERE id = e.department_id)",
            "department",
            ("sit in <v>", "belong to the unit <v>", "have <v> as their team or department"),
            negated=("do not sit in <v>", "do not belong to the unit <v>", "have a team or department other than <v>"),
            private="unit" in private,
        ),
    ]
    kept = [p for p in parts if only is None or p.key[len(prefix) :] in only]
    if sources is not None:
        for part in kept:
            part.sources = frozenset(sources)
    return kept


MEMBER_PREDICATES = [
    Flag(
        "m_admin",
        "member",
        "src.role = 'admin'",
        lambda s, i: i.get("role") == "admin",
        ("are admins of that chat", "have the admin role there", "help me run it as admins"),
        negated=("are not admins of that chat", "do not have the admin role there", "are not among its admins"),
    ),
    Threshold(
        "m_joined_since",
        "member",
        "substr(src.joined_at, 1, 10)",
        _day_of("joined_at"),
        ("joined that chat on or after <v>", "have been in it since <v> or later", "came into that chat on <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
    ),
    Threshold(
        "m_joined_before",
        "member",
        "substr(src.joined_at, 1, 10)",
        _day_of("joined_at"),
        ("joined that chat before <v>", "have been in it since before <v>", "came into that chat earlier than <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
    ),
    Flag(
        "m_muted",
        "member",
        "src.muted",
        lambda s, i: bool(i.get("muted")),
        ("have muted that chat", "have that chat on mute", "keep notifications of that chat muted"),
        negated=("have not muted that chat", "do not have that chat on mute", "keep notifications of that chat on"),
        private=True,
    ),
    *_person_relations("m_", "member", private=("chat_mate",)),
]

GUEST_PREDICATES = [
    Equals(
        "answer",
        "employee",
        "src.response",
        "response",
        ("have answered '<v>'", "gave the answer '<v>'", "show '<v>' as their answer"),
        negated=("have not answered '<v>'", "did not give the answer '<v>'", "show an answer other than '<v>' (or none yet)"),
        values=lambda d: RESPONSES,
        narrow=lambda source, value: {"response": value},
        sources=GUESTS,
    ),
    Flag(
        "unanswered",
        "employee",
        "src.response = 'invited'",
        lambda s, i: i.get("response") == "invited",
        ("have not answered yet", "have not replied to the invitation yet", "still owe an answer"),
        negated=("have answered already", "have replied to the invitation", "have given an answer"),
        narrow=lambda source, value: {"response": "invited"},
        sources=("upcoming_guests",),
    ),
    Equals(
        "guest_role",
        "employee",
        "src.role",
        "role",
        ("are <v> participants", "were invited as <v> participants", "have the role '<v>'"),
        negated=("are not <v> participants", "were not invited as <v> participants", "have a role other than '<v>'"),
        values=lambda d: ("required", "optional"),
        narrow=lambda source, value: {"role": value},
        sources=GUESTS,
    ),
    Flag(
        "attended",
        "employee",
        "src.attended = 1",
        lambda s, i: bool(i.get("attended")),
        ("actually attended it", "joined it in the end", "showed up to it"),
        negated=("did not attend it", "never joined it", "did not show up to it"),
        sources=("past_guests",),
    ),
    *_person_relations("", "employee", only=("report", "same_unit", "unit"), sources=GUESTS, private=("unit",)),
]


def _weekday(s: Solving, item: Row) -> str | None:
    start = item.get("start_at")
    return WEEKDAYS[datetime.strptime(start[:10], "%Y-%m-%d").weekday()] if isinstance(start, str) else None


def _minutes(s: Solving, item: Row) -> int | None:
    start, end = item.get("start_at"), item.get("end_at")
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    return int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() // 60)


WEEKDAY_SQL = (
    "CASE strftime('%w', e.start_at) WHEN '0' THEN 'Sunday' WHEN '1' THEN 'Monday' WHEN '2' THEN 'Tuesday' WHEN '3' THEN 'Wednesday' "
    "WHEN '4' THEN 'Thursday' WHEN '5' THEN 'Friday' ELSE 'Saturday' END"
)
MY_ROW = "(SELECT {col} FROM meeting_participants WHERE meeting_id = e.id AND employee_id = :actor)"
MEETING_SOURCES = ("organised", "invited")

MEETING_PREDICATES = [
    Equals(
        "status",
        "meeting",
        "e.status",
        "status",
        ("are <v>", "have the status '<v>'", "are marked <v>"),
        negated=("are not <v>", "have a status other than '<v>'", "are not marked <v>"),
        narrow=_narrow_on(MEETING_SOURCES, lambda v: {"status": v}),
    ),
    Threshold(
        "starts_since",
        "meeting",
        "substr(e.start_at, 1, 10)",
        _day_of("start_at"),
        ("start on or after <v>", "take place on <v> or later", "are held on <v> or later"),
        op=">=",
        candidates=_dates,
        show=pretty_day,
        narrow=_narrow_on(MEETING_SOURCES, lambda v: {"start_from": v}),
    ),
    Threshold(
        "starts_before",
        "meeting",
        "substr(e.start_at, 1, 10)",
        _day_of("start_at"),
        ("start before <v>", "take place earlier than <v>", "are held before <v>"),
        op="<",
        candidates=_dates,
        show=pretty_day,
        narrow=_narrow_on(MEETING_SOURCES, lambda v: {"start_to": v}),  # that day included: a superset the solver narrows itself
    ),
    Flag(
        "online",
        "meeting",
        "e.room_id IS NULL",
        lambda s, i: i.get("room_id") is None,
        ("are online only, with no room", "have no room booked (online only)", "take place online only"),
        negated=("have a room", "are held in a room as well as online", "have a room booked"),
    ),
    Flag(
        "recurring",
        "meeting",
        "e.recurrence != 'none'",
        lambda s, i: i.get("recurrence") not in (None, "none"),
        ("are recurring", "repeat on a schedule", "are part of a recurring series"),
        negated=("are one-off meetings", "do not repeat", "are not part of a recurring series"),
    ),
    Equals(
        "repeats",
        "meeting",
        "e.recurrence",
        "recurrence",
        ("repeat <v>", "recur <v>", "are set to repeat <v>"),
        negated=("do not repeat <v>", "do not recur <v>", "are not set to repeat <v>"),
        values=lambda d: tuple(RECURRENCES),
        words=RECURRENCES,
        private=True,
    ),
    Threshold(
        "crowd",
        "meeting",
        "e.participant_count",
        "participant_count",
        (
            "have at least <v> people invited, organiser included",
            "count <v> or more participants, the organiser among them",
            "invite <v> people or more, organiser included",
        ),
        op=">=",
        candidates=lambda attrs: [3, 4, 5, 6, 8, 10, 12, 15, 20],
    ),
    Flag(
        "morning",
        "meeting",
        "substr(e.start_at, 12, 5) < '12:00'",
        lambda s, i: isinstance(i.get("start_at"), str) and i["start_at"][11:16] < "12:00",
        ("start before noon", "begin in the morning, before 12:00", "start before 12:00"),
        negated=("start at noon or later", "begin at 12:00 or later", "do not start before noon"),
    ),
    Threshold(
        "starts_late",
        "meeting",
        "substr(e.start_at, 12, 5)",
        lambda s, i: i["start_at"][11:16] if isinstance(i.get("start_at"), str) else None,
        ("start at <v> or later in the day", "begin no earlier than <v>", "have a start time of <v> or later"),
        op=">=",
        candidates=lambda attrs: [t for t in ("10:00", "10:30", "11:00", "13:00", "14:00", "14:30", "15:00", "16:00") if t in attrs],
    ),
    Threshold(
        "ends_by",
        "meeting",
        "substr(e.end_at, 12, 5)",
        lambda s, i: i["end_at"][11:16] if isinstance(i.get("end_at"), str) else None,
        ("end by <v>", "are over by <v> at the latest", "have an end time of <v> or earlier"),
        op="<=",
        candidates=lambda attrs: [t for t in ("11:00", "11:30", "12:00", "15:00", "16:00", "16:30", "17:00") if t in attrs],
    ),
    Equals(
        "organiser",
        "meeting",
        "(SELECT name FROM employees WHERE id = e.organizer_id)",
        "organizer",
        ("are organised by <v>", "have <v> as their organiser", "were set up by <v>"),
        negated=("are not organised by <v>", "have an organiser other than <v>", "were not set up by <v>"),
        sources=("invited",),
    ),
    Threshold(
        "long_meeting",
        "meeting",
        "CAST(ROUND((julianday(e.end_at) - julianday(e.start_at)) * 1440) AS INTEGER)",
        _minutes,
        ("last at least <v>", "run for <v> or longer", "are scheduled for <v> or more"),
        op=">=",
        candidates=lambda attrs: [30, 45, 60, 90, 120],
        show=lambda v: f"{v} minutes",
    ),
    Equals(
        "in_building",
        "meeting",
        "(SELECT b.name FROM rooms r JOIN buildings b ON b.id = r.building_id WHERE r.id = e.room_id)",
        "building",
        ("are held in <v>", "take place in a room of <v>", "have their room in <v>"),
        negated=("are not held in <v> (online-only ones included)", "do not take place in a room of <v>", "do not have their room in <v>"),
    ),
    Equals(
        "weekday",
        "meeting",
        WEEKDAY_SQL,
        _weekday,
        ("take place on a <v>", "fall on a <v>", "are held on a <v>"),
        negated=("do not take place on a <v>", "do not fall on a <v>", "are held on a day other than <v>"),
        values=lambda d: WEEKDAYS[:5],
    ),
    HasWord(
        "meeting_word",
        "meeting",
        "e.title",
        "title",
        ("have the word '<v>' in their title", "carry a title with the word '<v>'", "are titled with the word '<v>' in it"),
        negated=("do not have the word '<v>' in their title", "carry a title without the word '<v>'", "have no word '<v>' in their title"),
        values=lambda d: MEETING_WORDS,
    ),
    Equals(
        "my_answer",
        "meeting",
        MY_ROW.format(col="response"),
        "my_response",
        ("I have answered '<v>'", "have my answer set to '<v>'", "show my answer as '<v>'"),
        negated=("I have not answered '<v>'", "do not have my answer set to '<v>'", "show my answer as something other than '<v>'"),
        values=lambda d: RESPONSES,
        narrow=_narrow_on(("invited",), lambda v: {"response": v}),
        sources=("invited",),
    ),
    Flag(
        "my_unanswered",
        "meeting",
        MY_ROW.format(col="response") + " = 'invited'",
        lambda s, i: i.get("my_response") == "invited",
        ("I have not answered yet", "still wait for my answer", "I have not replied to yet"),
        negated=("I have already answered", "have my answer already", "I have replied to"),
        narrow=_narrow_on(("invited",), lambda v: {"response": "invited"}),
        sources=("invited",),
    ),
    Equals(
        "my_role",
        "meeting",
        MY_ROW.format(col="role"),
        "my_role",
        ("I am a <v> participant of", "I was invited to as a <v> participant", "list me as a <v> participant"),
        negated=("I am not a <v> participant of", "I was not invited to as a <v> participant", "do not list me as a <v> participant"),
        values=lambda d: ("required", "optional"),
        narrow=_narrow_on(("invited",), lambda v: {"role": v}),
        sources=("invited",),
    ),
    Flag(
        "org_same_unit",
        "meeting",
        f"(SELECT department_id FROM employees WHERE id = e.organizer_id) = {MY_UNIT_SQL}",
        lambda s, i: i.get("organizer_id") in _my_unit_people(s),
        (
            "are organised by someone in my own team or department",
            "have an organiser from my own team or department",
            "were set up by a colleague of my own unit",
        ),
        negated=(
            "are organised by someone outside my own team or department",
            "have an organiser from another team or department",
            "were set up by someone from another unit",
        ),
        sources=("invited",),
    ),
]

ROOM_SOURCES = ("building_rooms", "city_rooms")


def _equipment(name: str, key: str, phrases: tuple[str, str, str], negated: tuple[str, str, str], **options: Any) -> Flag:
    column = {"projector": "has_projector", "video_conferencing": "has_video_conferencing"}.get(name, f"has_{name}")
    return Flag(
        key,
        "room",
        f"e.{column}",
        lambda s, i: name in (i.get("equipment") or []),
        phrases,
        negated=negated,
        narrow=_narrow_on(ROOM_SOURCES, lambda v: {"equipment": [name]}),
        **options,
    )


ROOM_PREDICATES = [
    Threshold(
        "seats_min",
        "room",
        "e.capacity",
        "capacity",
        ("seat at least <v> people", "hold <v> people or more", "have room for <v> or more"),
        op=">=",
        candidates=lambda attrs: [n for n in (4, 6, 8, 10, 12, 16, 20, 24, 30) if n in attrs],
        narrow=_narrow_on(ROOM_SOURCES, lambda v: {"min_capacity": v}),
    ),
    Threshold(
        "seats_max",
        "room",
        "e.capacity",
        "capacity",
        ("seat at most <v> people", "hold <v> people or fewer", "have room for no more than <v>"),
        op="<=",
        candidates=lambda attrs: [n for n in (2, 4, 6, 8, 10, 12, 16, 20) if n in attrs],
    ),
    Equals(
        "room_type",
        "room",
        "e.room_type",
        "room_type",
        ("are <v>", "count as <v>", "are classed as <v>"),
        negated=("are not <v>", "do not count as <v>", "are not classed as <v>"),
        words=ROOM_TYPES,
        narrow=_narrow_on(ROOM_SOURCES, lambda v: {"room_type": v}),
    ),
    _equipment(
        "projector",
        "projector",
        ("have a projector", "come with a projector", "are equipped with a projector"),
        ("have no projector", "come without a projector", "are not equipped with a projector"),
    ),
    _equipment(
        "video_conferencing",
        "video",
        ("have video conferencing", "come with video conferencing", "are equipped for video conferencing"),
        ("have no video conferencing", "come without video conferencing", "are not equipped for video conferencing"),
    ),
    _equipment(
        "whiteboard",
        "whiteboard",
        ("have a whiteboard", "come with a whiteboard", "are equipped with a whiteboard"),
        ("have no whiteboard", "come without a whiteboard", "are not equipped with a whiteboard"),
    ),
    _equipment(
        "phone",
        "phone",
        ("have a phone", "come with a conference phone", "are equipped with a phone"),
        ("have no phone", "come without a conference phone", "are not equipped with a phone"),
        private=True,
    ),
    Flag(
        "bookable",
        "room",
        "e.is_bookable",
        "is_bookable",
        ("can be booked", "are open for booking", "are bookable"),
        negated=("cannot be booked", "are not open for booking", "are not bookable"),
        narrow=_narrow_on(ROOM_SOURCES, lambda v: {"bookable_only": True}),
    ),
    Threshold(
        "floor_min",
        "room",
        "e.floor",
        "floor",
        ("are on floor <v> or higher", "sit on floor <v> or above", "are located on floor <v> or up"),
        op=">=",
        candidates=_present,
    ),
    Threshold(
        "floor_max",
        "room",
        "e.floor",
        "floor",
        ("are on floor <v> or lower", "sit on floor <v> or below", "are located no higher than floor <v>"),
        op="<=",
        candidates=_present,
    ),
    Equals(
        "room_building",
        "room",
        "(SELECT name FROM buildings WHERE id = e.building_id)",
        "building",
        ("are in <v>", "belong to <v>", "are located in <v>"),
        negated=("are not in <v>", "do not belong to <v>", "are located outside <v>"),
        sources=("city_rooms",),
    ),
    Equals(
        "on_floor",
        "room",
        "e.floor",
        "floor",
        ("are on floor <v>", "sit on floor <v>", "are located on floor <v>"),
        negated=("are not on floor <v>", "sit on a floor other than <v>", "are located on another floor than <v>"),
        narrow=_narrow_on(("building_rooms",), lambda v: {"floor": v}),
    ),
    Flag(
        "fully_equipped",
        "room",
        "e.has_projector AND e.has_video_conferencing AND e.has_whiteboard AND e.has_phone",
        lambda s, i: set(i.get("equipment") or []) >= {"projector", "video_conferencing", "whiteboard", "phone"},
        (
            "have all four: a projector, video conferencing, a whiteboard and a phone",
            "come fully equipped (projector, video conferencing, whiteboard and phone)",
            "are equipped with a projector, video conferencing, a whiteboard and a phone alike",
        ),
        negated=(
            "lack at least one of a projector, video conferencing, a whiteboard and a phone",
            "are not fully equipped (projector, video conferencing, whiteboard and phone)",
            "miss a projector, video conferencing, a whiteboard or a phone",
        ),
    ),
    Flag(
        "booked_before",
        "room",
        "e.id IN (SELECT room_id FROM room_bookings WHERE booker_id = :actor)",
        lambda s, i: i.get("room_id") in s.remember("my_rooms", lambda: {b["room_id"] for b in s.listing("list_room_bookings", mine=True)}),
        ("I have booked at some point", "appear among my room bookings, past or upcoming", "I have a booking of, past or upcoming"),
        negated=("I have never booked", "appear nowhere among my room bookings", "I have no booking of, past or upcoming"),
        private=True,
    ),
]


# == reductions ===============================================================================

REDUCTIONS: list[Reduction] = [
    Every(),
    TopK(
        "most_senior",
        "employee",
        measure=("e.level", "level"),
        tie=("e.hire_date", "hire_date"),
        tie_descending=False,
        k=(2, 3, 4, 5),
        np=(
            "the {r_k} most senior of the <sel> (by level; on a tie, the earlier hire date first)",
            "the top {r_k} by level among the <sel> (a tie going to the one hired first)",
            "the {r_k} with the highest levels among the <sel> (ties going to the earlier hire date)",
        ),
        subject=(
            "the {r_k} with the highest levels (ties going to the earlier hire date)",
            "the top {r_k} by level, a tie going to the one hired first,",
            "the {r_k} most senior of them (by level; on a tie, the earlier hire date first)",
        ),
        take=(
            "the {r_k} most senior (by level; on a tie, the earlier hire date first)",
            "the top {r_k} by level (a tie going to the one hired first)",
            "the {r_k} with the highest levels, ties going to the earlier hire date,",
        ),
    ),
    TopK(
        "longest_serving",
        "employee",
        measure=("e.hire_date", "hire_date"),
        tie=("e.level", "level"),
        descending=False,
        k=(2, 3, 4),
        np=(
            "the {r_k} longest-serving of the <sel> (by hire date, earliest first; on a tie, the higher level first)",
            "the {r_k} who joined the company first among the <sel> (a tie on the hire date going to the higher level)",
            "the {r_k} with the earliest hire dates among the <sel> (ties going to the higher level)",
        ),
        subject=(
            "the {r_k} with the earliest hire dates (ties going to the higher level)",
            "the {r_k} who joined the company first, a tie on the hire date going to the higher level,",
            "the {r_k} longest-serving of them (by hire date; on a tie, the higher level first)",
        ),
        take=(
            "the {r_k} longest-serving (by hire date, earliest first; on a tie, the higher level first)",
            "the {r_k} who joined the company first (a tie on the hire date going to the higher level)",
            "the {r_k} with the earliest hire dates, ties going to the higher level,",
        ),
    ),
    TopK(
        "newest_hires",
        "employee",
        measure=("e.hire_date", "hire_date"),
        tie=("e.level", "level"),
        k=(2, 3, 4),
        np=(
            "the {r_k} most recent hires among the <sel> (by hire date, latest first; on a tie, the higher level first)",
            "the {r_k} who joined the company last among the <sel> (a tie on the hire date going to the higher level)",
            "the {r_k} with the latest hire dates among the <sel> (ties going to the higher level)",
        ),
        subject=(
            "the {r_k} with the latest hire dates (ties going to the higher level)",
            "the {r_k} who joined the company last, a tie on the hire date going to the higher level,",
            "the {r_k} most recent hires of them (by hire date; on a tie, the higher level first)",
        ),
        take=(
            "the {r_k} most recent hires (by hire date, latest first; on a tie, the higher level first)",
            "the {r_k} who joined the company last (a tie on the hire date going to the higher level)",
            "the {r_k} with the latest hire dates, ties going to the higher level,",
        ),
        private=True,
    ),
    AboveAverage(
        "above_avg_level",
        "employee",
        measure=("e.level", "level"),
        np=(
            "those of the <sel> whose level is above the average level of that selection",
            "every one of the <sel> with a level higher than the average of that selection",
            "all of the <sel> above the average level of that selection",
        ),
        subject=(
            "each one whose level is above the average level of that selection",
            "every one with a level higher than the average of that selection",
            "those above the average level of that selection",
        ),
        take=(
            "those whose level is above the average level of that selection",
            "every one with a level higher than the average of that selection",
            "the ones above the average level of that selection",
        ),
    ),
    GroupThreshold(
        "managers_n",
        "employee",
        "employee",
        group=("e.manager_id", "manager_id"),
        out_field="employee_id",
        thresholds=(2, 3, 4, 5),
        np=(
            "every colleague who is the direct manager of at least {r_n} of the <sel>",
            "each manager with {r_n} or more of the <sel> as direct reports",
            "the direct managers of {r_n} or more of the <sel>",
        ),
        subject=(
            "every direct manager of at least {r_n} of them",
            "each colleague who directly manages {r_n} or more of them",
            "the direct managers of {r_n} or more of them",
        ),
        take=(
            "the direct managers of at least {r_n} of them",
            "every colleague who directly manages {r_n} or more of them",
            "each direct manager of {r_n} or more of them",
        ),
    ),
    GroupTop(
        "top_manager",
        "employee",
        "employee",
        group=("e.manager_id", "manager_id"),
        name=("(SELECT name FROM employees WHERE id = e.manager_id)", "manager"),
        out_field="employee_id",
        np=(
            "the colleague who directly manages the most of the <sel> (ties going to the name first in the alphabet)",
            "the one direct manager of the largest number of the <sel> (a tie going to the name that comes first alphabetically)",
            "whoever is direct manager of the most of the <sel> (on a tie, the first by name)",
        ),
        subject=(
            "the colleague who directly manages the most of them (ties going to the name first in the alphabet)",
            "the one direct manager of the largest number of them, a tie going to the name that comes first alphabetically,",
            "whoever is direct manager of the most of them (on a tie, the first by name)",
        ),
        take=(
            "the colleague who directly manages the most of them (ties going to the name first in the alphabet)",
            "the one direct manager of the largest number of them (a tie going to the name that comes first alphabetically)",
            "whoever is direct manager of the most of them (on a tie, the first by name)",
        ),
    ),
    TopK(
        "first_members",
        "member",
        measure=("src.joined_at", "joined_at"),
        tie=("e.name", "name"),
        descending=False,
        tie_descending=False,
        k=(2, 3, 4),
        np=(
            "the {r_k} earliest to join among the <sel> (by join time; on a tie, the name first in the alphabet)",
            "the {r_k} earliest members among the <sel> (by the time they joined, a tie going to the name that comes first alphabetically)",
            "the {r_k} longest-standing members among the <sel> (by join time; ties going to the first by name)",
        ),
        subject=(
            "the {r_k} who joined that chat first (by join time; on a tie, the name first in the alphabet)",
            "the {r_k} earliest to join, by join time, a tie going to the name that comes first alphabetically,",
            "the {r_k} longest in that chat (by join time; ties going to the first by name)",
        ),
        take=(
            "the {r_k} who joined that chat first (by join time; on a tie, the name first in the alphabet)",
            "the {r_k} earliest to join, by join time (a tie going to the name that comes first alphabetically)",
            "the {r_k} longest in that chat, by join time, ties going to the first by name,",
        ),
    ),
    TopK(
        "last_members",
        "member",
        measure=("src.joined_at", "joined_at"),
        tie=("e.name", "name"),
        tie_descending=False,
        k=(2, 3, 4),
        np=(
            "the {r_k} most recent to join among the <sel> (by join time; on a tie, the name first in the alphabet)",
            "the {r_k} newest members among the <sel> (by the time they joined, a tie going to the name that comes first alphabetically)",
            "the {r_k} latest joiners among the <sel> (by join time; ties going to the first by name)",
        ),
        subject=(
            "the {r_k} who joined that chat most recently (by join time; on a tie, the name first in the alphabet)",
            "the {r_k} newest members, by join time, a tie going to the name that comes first alphabetically,",
            "the {r_k} latest to join that chat (by join time; ties going to the first by name)",
        ),
        take=(
            "the {r_k} who joined that chat most recently (by join time; on a tie, the name first in the alphabet)",
            "the {r_k} newest members, by join time (a tie going to the name that comes first alphabetically)",
            "the {r_k} latest to join that chat, by join time, ties going to the first by name,",
        ),
    ),
    TopK(
        "most_invited",
        "meeting",
        measure=("e.participant_count", "participant_count"),
        tie=("e.start_at", "start_at"),
        tie_descending=False,
        k=(2, 3, 4),
        np=(
            "the {r_k} with the most people invited among the <sel> (by participant count; on a tie, the earlier start first)",
            "the top {r_k} by participant count among the <sel> (a tie going to the one that starts earlier)",
            "the {r_k} largest by participant count of the <sel> (ties going to the earlier start)",
        ),
        subject=(
            "the {r_k} with the most people invited (by participant count; on a tie, the earlier start first)",
            "the top {r_k} by participant count, a tie going to the one that starts earlier,",
            "the {r_k} largest of them by participant count (ties going to the earlier start)",
        ),
        take=(
            "the {r_k} with the most people invited (by participant count; on a tie, the earlier start first)",
            "the top {r_k} by participant count (a tie going to the one that starts earlier)",
            "the {r_k} largest by participant count, ties going to the earlier start,",
        ),
    ),
    TopK(
        "earliest",
        "meeting",
        measure=("e.start_at", "start_at"),
        tie=("e.title", "title"),
        descending=False,
        tie_descending=False,
        k=(2, 3, 4),
        np=(
            "the {r_k} earliest of the <sel> (by start time; on a tie, the title first in the alphabet)",
            "the first {r_k} by start time of the <sel> (a tie going to the title that comes first alphabetically)",
            "the {r_k} that start first among the <sel> (ties going to the first title alphabetically)",
        ),
        subject=(
            "the {r_k} earliest ones (by start time; on a tie, the title first in the alphabet)",
            "the first {r_k} by start time, a tie going to the title that comes first alphabetically,",
            "the {r_k} that start first (ties going to the first title alphabetically)",
        ),
        take=(
            "the {r_k} earliest (by start time; on a tie, the title first in the alphabet)",
            "the first {r_k} by start time (a tie going to the title that comes first alphabetically)",
            "the {r_k} that start first, ties going to the first title alphabetically,",
        ),
    ),
    TopK(
        "biggest_one",
        "meeting",
        measure=("e.participant_count", "participant_count"),
        tie=("e.start_at", "start_at"),
        tie_descending=False,
        k=(1,),
        np=(
            "the single meeting with the most people invited among the <sel> (by participant count; on a tie, the earlier one)",
            "the one of the <sel> with the highest participant count (a tie going to the earlier start)",
            "the largest by participant count of the <sel> (on a tie, the one that starts first)",
        ),
        subject=(
            "the single one with the most people invited (by participant count; on a tie, the earlier one)",
            "the one with the highest participant count (a tie going to the earlier start)",
            "the largest of them by participant count (on a tie, the one that starts first)",
        ),
        take=(
            "the single one with the most people invited (by participant count; on a tie, the earlier one)",
            "the one with the highest participant count (a tie going to the earlier start)",
            "the largest of them by participant count (on a tie, the one that starts first)",
        ),
        private=True,
    ),
    GroupThreshold(
        "organisers_n",
        "meeting",
        "employee",
        group=("e.organizer_id", "organizer_id"),
        out_field="employee_id",
        thresholds=(2, 3, 4),
        np=(
            "every colleague who organised at least {r_n} of the <sel>",
            "each organiser of {r_n} or more of the <sel>",
            "the organisers of {r_n} or more of the <sel>",
        ),
        subject=(
            "every colleague who organised at least {r_n} of them",
            "each organiser of {r_n} or more of them",
            "the organisers of {r_n} or more of them",
        ),
        take=(
            "the organisers of at least {r_n} of them",
            "every colleague who organised {r_n} or more of them",
            "each organiser of {r_n} or more of them",
        ),
    ),
    GroupTop(
        "top_organiser",
        "meeting",
        "employee",
        group=("e.organizer_id", "organizer_id"),
        name=("(SELECT name FROM employees WHERE id = e.organizer_id)", "organizer"),
        out_field="employee_id",
        np=(
            "the colleague who organised the most of the <sel> (ties going to the name first in the alphabet)",
            "the one organiser of the largest number of the <sel> (a tie going to the name that comes first alphabetically)",
            "whoever organised the most of the <sel> (on a tie, the first by name)",
        ),
        subject=(
            "the colleague who organised the most of them (ties going to the name first in the alphabet)",
            "the one organiser of the largest number of them, a tie going to the name that comes first alphabetically,",
            "whoever organised the most of them (on a tie, the first by name)",
        ),
        take=(
            "the colleague who organised the most of them (ties going to the name first in the alphabet)",
            "the one organiser of the largest number of them (a tie going to the name that comes first alphabetically)",
            "whoever organised the most of them (on a tie, the first by name)",
        ),
    ),
    TopK(
        "smallest_room",
        "room",
        measure=("e.capacity", "capacity"),
        tie=("e.name", "name"),
        descending=False,
        tie_descending=False,
        k=(1,),
        np=(
            "the smallest by capacity of the <sel> (on a tie, the name first in the alphabet)",
            "the one of the <sel> with the lowest capacity (a tie going to the name that comes first alphabetically)",
            "the single smallest by capacity of the <sel> (ties going to the first name alphabetically)",
        ),
        subject=(
            "the smallest one by capacity (on a tie, the name first in the alphabet)",
            "the one with the lowest capacity (a tie going to the name that comes first alphabetically)",
            "the single smallest by capacity (ties going to the first name alphabetically)",
        ),
        take=(
            "the smallest one by capacity (on a tie, the name first in the alphabet)",
            "the one with the lowest capacity (a tie going to the name that comes first alphabetically)",
            "the single smallest by capacity (ties going to the first name alphabetically)",
        ),
    ),
    TopK(
        "largest_rooms",
        "room",
        measure=("e.capacity", "capacity"),
        tie=("e.name", "name"),
        tie_descending=False,
        k=(2, 3),
        np=(
            "the {r_k} largest by capacity of the <sel> (on a tie, the name first in the alphabet)",
            "the top {r_k} by capacity among the <sel> (a tie going to the name that comes first alphabetically)",
            "the {r_k} with the most seats among the <sel> (ties going to the first name alphabetically)",
        ),
        subject=(
            "the {r_k} largest by capacity (on a tie, the name first in the alphabet)",
            "the top {r_k} by capacity, a tie going to the name that comes first alphabetically,",
            "the {r_k} with the most seats (ties going to the first name alphabetically)",
        ),
        take=(
            "the {r_k} largest by capacity (on a tie, the name first in the alphabet)",
            "the top {r_k} by capacity (a tie going to the name that comes first alphabetically)",
            "the {r_k} with the most seats, ties going to the first name alphabetically,",
        ),
    ),
]


# == actions ==================================================================================


# Groupings that say nothing on a source: my direct reports all have me as manager, the meetings I
# organise all have me as organiser. (Reductions take no `sources` option: the writes that follow
# them refuse the pair instead, so the sampler never draws it.)
NOT_AFTER = {
    "managers_n": frozenset({"reports"}),
    "top_manager": frozenset({"reports"}),
    "organisers_n": frozenset({"organised"}),
    "top_organiser": frozenset({"organised"}),
}


def _some(steps: list[Step]) -> list[Step]:
    """An action's writes; none at all (every one refused by the product) is no task: in a chain,
    its clause would bite nothing."""
    if not steps:
        raise NoTarget("an action that writes nothing")
    return steps


def _fits_people(action: Action, source: Source, reduction: Reduction, *, items: bool = False) -> bool:
    """An action on people fits whichever shape the result lists them in (directory, chat, guest list)."""
    if not reduction.takes(source.entity) or reduction.gives(source) not in PERSONS or source.key in action.excluded_sources:
        return False
    if source.key in NOT_AFTER.get(reduction.key, ()):
        return False
    if items and not reduction.keeps_items:
        return False
    return action.sources is None or source.key in action.sources


def _free_name(d: Drafting, names: Sequence[str], what: str) -> str:
    taken = {n.casefold() for n in d.column("SELECT name FROM chats WHERE owner_id = :actor")}
    taken |= {v.casefold() for v in d.stated.values() if isinstance(v, str)}
    return str(d.choice([n for n in names if n.casefold() not in taken], what))


class ToPeople(Action):
    """An action whose writes go to people: the result's own people, the result's `via` field (a
    meeting's organiser), or (`guests`) everyone invited to the result's meetings. The employee
    is never among them: the product refuses to add, invite or chat with oneself."""

    def __init__(
        self,
        key: str,
        entity: str,
        imperative: Sequence[str],
        predicate: Sequence[str],
        pronoun: Sequence[str],
        *,
        guests: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(key, entity, "employee", imperative, predicate, pronoun, **options)
        self.guests = guests

    def fits(self, source: Source, reduction: Reduction) -> bool:
        if self.entity in PERSONS:
            return _fits_people(self, source, reduction)
        return super().fits(source, reduction)

    def people(self, d: Drafting, targets: list[Any]) -> list[int]:
        """The people written to, for the result's targets (the SQL half)."""
        if self.guests:
            if not targets:
                return []
            marks = ",".join(str(int(t)) for t in targets)
            people = d.column(
                f"SELECT DISTINCT employee_id FROM meeting_participants WHERE meeting_id IN ({marks}) AND employee_id != :actor "
                "ORDER BY employee_id"
            )
            return [int(p) for p in people]
        return [int(t) for t in dict.fromkeys(targets) if t != d.actor]

    def listed_people(self, s: Solving, items: list[Row]) -> list[Any]:
        """The people written to, from the result's listed items (the public half)."""
        me = _me(s)["employee_id"]
        out: list[Any] = []
        for item in items:
            if self.guests:
                out += [p["employee_id"] for p in s.listing("list_meeting_participants", meeting_id=item["meeting_id"])]
            else:
                out.append(self.target_of(item, s.id_field))
        return [p for p in dict.fromkeys(out) if p is not None and p != me]


# Whose the people are, for the writes to people: (before <obj>/<them>, after "should have" in a predicate).
GROUPS = {
    "self": ("", ""),
    "organisers": ("the organisers of ", "<their> organiser"),
    "guests": ("everyone invited to ", "everyone invited to <them>"),
}


class NewChat(ToPeople):
    """A new group chat with the people, then a first message in it: the message uses the id the
    create returned (cross-step dependency)."""

    def __init__(self, key: str, entity: str = "employee", *, chat_type: str = "project", group: str = "self", **options: Any) -> None:
        chat = f"{chat_type} chat"
        of, whose = GROUPS[group]
        name, message = "{<slot>_name}", "{<slot>_message}"
        if whose:
            predicate = (
                f"should have {whose} go into a new {chat} {name}, where you then post {message}",
                f"should have {whose} join a new {chat} called {name}; send {message} there",
                f"should have {whose} added to a new {chat} named {name} with the first message {message}",
            )
        else:
            predicate = (
                f"should go into a new {chat} {name}, where you then post {message}",
                f"should join a new {chat} called {name}; send {message} there",
                f"should be added to a new {chat} named {name} with the first message {message}",
            )
        super().__init__(
            key,
            entity,
            (
                f"Create a new {chat} {name} with {of}<obj> and post {message} in it",
                f"Start a {chat} called {name} for {of}<obj>, then send {message} there",
                f"Put {of}<obj> into a new {chat} named {name} and write {message} in it",
            ),
            predicate,
            (
                f"put {of}<them> in a new {chat} {name} and post {message} there",
                f"start a {chat} called {name} with {of}<them> and send {message} in it",
                f"make a new {chat} named {name} for {of}<them>, first message {message}",
            ),
            guests=group == "guests",
            writes="chat",
            creates=True,
            row_cost=1,
            **options,
        )
        self.chat_type = chat_type

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_name", f"{slot}_message")

    def draw(self, d: Drafting, slot: str) -> None:
        name = _free_name(d, PROJECT_CHAT_NAMES if self.chat_type == "project" else SOCIAL_CHAT_NAMES, "chat name")
        d.state(f"{slot}_name", name, _quoted(name))
        message = d.rng.choice(MESSAGES)
        d.state(f"{slot}_message", message, _quoted(message))

    def effects(self, d: Drafting, slot: str, targets: list[Any]) -> set[tuple[Any, ...]]:
        people = self.people(d, targets)
        return {(slot, "created")} | {(slot, p) for p in people} if people else set()

    def steps(self, d: Drafting, slot: str, targets: list[Any], at: int) -> list[Step]:
        people = self.people(d, targets)
        if not people:
            raise NoTarget("nobody to chat with")
        if len(people) > 120:
            raise NoTarget("a chat of too many people")
        return [
            Step("create_chat", {"name": d.stated[f"{slot}_name"], "member_ids": people, "chat_type": self.chat_type}),
            Step("send_chat_message", {"chat_id": ref(at, "chat_id"), "content": d.stated[f"{slot}_message"]}),
        ]

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        people = self.listed_people(s, items)
        if not people:
            return
        chat = s.api.call("create_chat", creates="chat_id", name=s.stated[f"{slot}_name"], member_ids=people, chat_type=self.chat_type)
        if chat is not None:
            s.api.call("send_chat_message", chat_id=chat["chat_id"], content=s.stated[f"{slot}_message"])


class NewMeeting(ToPeople):
    """A new online meeting at a stated time with the people invited (required or optional)."""

    def __init__(self, key: str, entity: str = "employee", *, role: str = "required", group: str = "self", **options: Any) -> None:
        when = "{<slot>_day} from {<slot>_start} to {<slot>_end}"
        title = "{<slot>_title}"
        of, whose = GROUPS[group]
        invitation = f"{_an(role)} {role} invitation"
        if whose:
            predicate = (
                f"should have {whose} invited to a new online meeting {title} on {when}, with the {role} role",
                f"should see {whose} get {invitation} to {title}, a new online meeting on {when}",
                f"should have {whose} receive {invitation} to a new online meeting {title} on {when}",
            )
        else:
            predicate = (
                f"should be invited to a new online meeting {title} on {when}, with the {role} role",
                f"should get {invitation} to {title}, a new online meeting on {when}",
                f"should receive {invitation} to a new online meeting {title} on {when}",
            )
        super().__init__(
            key,
            entity,
            (
                f"Set up an online meeting {title} on {when} with {of}<obj> as {role} participants",
                f"Schedule {title}, online only, on {when}, inviting {of}<obj> as {role} participants",
                f"Invite {of}<obj> as {role} participants to a new online meeting {title} on {when}",
            ),
            predicate,
            (
                f"invite {of}<them> as {role} participants to a new online meeting {title} on {when}",
                f"schedule {title}, online only, on {when} with {of}<them> as {role} participants",
                f"set up an online meeting {title} on {when} for {of}<them>, all as {role} participants",
            ),
            guests=group == "guests",
            writes="meeting",
            row_cost=2,
            **options,
        )
        self.role = role

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_title", f"{slot}_day", f"{slot}_start", f"{slot}_end")

    def draw(self, d: Drafting, slot: str) -> None:
        title = str(d.choice([t for t in MEETING_TITLES if t not in d.stated.values()], "title"))
        day = str(d.choice(_weekdays_ahead(), "day"))
        start, end = d.rng.choice(SLOTS)
        d.state(f"{slot}_title", title, _quoted(title))
        d.state(f"{slot}_day", day, _nice(day))
        d.state(f"{slot}_start", start)
        d.state(f"{slot}_end", end)

    def effects(self, d: Drafting, slot: str, targets: list[Any]) -> set[tuple[Any, ...]]:
        people = self.people(d, targets)
        return {(slot, "created")} | {(slot, p) for p in people} if people else set()

    def _args(self, stated: dict[str, Any], slot: str, people: list[Any]) -> Row:
        day = stated[f"{slot}_day"]
        field = "participant_ids" if self.role == "required" else "optional_participant_ids"
        return {
            "title": stated[f"{slot}_title"],
            "start": f"{day} {stated[f'{slot}_start']}",
            "end": f"{day} {stated[f'{slot}_end']}",
            field: people,
        }

    def steps(self, d: Drafting, slot: str, targets: list[Any], at: int) -> list[Step]:
        people = self.people(d, targets)
        if not people or len(people) > 120:
            raise NoTarget("nobody, or too many people, to invite")
        return [Step("create_meeting", self._args(d.stated, slot, people))]

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        people = self.listed_people(s, items)
        if people:
            s.api.call("create_meeting", **self._args(s.stated, slot, people))


class AddToChat(ToPeople):
    """Add the people to a chat the employee owns or runs, named by the request (one call; those
    already in it are left out, since the product refuses the whole call otherwise)."""

    def __init__(self) -> None:
        super().__init__(
            "add_to_chat",
            "employee",
            ("Add <obj> to my chat {<slot>_chat}", "Bring <obj> into my chat {<slot>_chat}", "Make <obj> part of my chat {<slot>_chat}"),
            ("should be added to my chat {<slot>_chat}", "should join my chat {<slot>_chat}", "should end up in my chat {<slot>_chat}"),
            (
                "add <them> to my chat {<slot>_chat}",
                "bring <them> into my chat {<slot>_chat}",
                "make <them> part of my chat {<slot>_chat}",
            ),
            writes="chat_members",
            row_cost=1,
            excluded_sources=("chat",),
        )

    def scoping_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_chat",)

    def draw(self, d: Drafting, slot: str) -> None:
        row = d.choice(
            d.rows(
                "SELECT c.id, c.name FROM chats c JOIN chat_members m ON m.chat_id = c.id AND m.employee_id = :actor "
                "WHERE m.role IN ('owner', 'admin') AND c.chat_type != 'announcement' AND c.name NOT LIKE '%''%' "
                "AND (SELECT COUNT(*) FROM chats x JOIN chat_members y ON y.chat_id = x.id AND y.employee_id = :actor "
                "WHERE x.name = c.name COLLATE NOCASE) = 1 ORDER BY c.id"
            ),
            "chat I run",
        )
        d.params[f"{slot}_chat"] = row["id"]
        d.state(f"{slot}_chat", row["name"], _quoted(row["name"]))

    def _in_chat(self, d: Drafting, slot: str) -> set[int]:
        return set(d.column("SELECT employee_id FROM chat_members WHERE chat_id = :c", c=d.params[f"{slot}_chat"]))

    def effects(self, d: Drafting, slot: str, targets: list[Any]) -> set[tuple[Any, ...]]:
        inside = self._in_chat(d, slot)
        return {(slot, p) for p in self.people(d, targets) if p not in inside}

    def steps(self, d: Drafting, slot: str, targets: list[Any], at: int) -> list[Step]:
        inside = self._in_chat(d, slot)
        new = [p for p in self.people(d, targets) if p not in inside]
        if not new:
            raise NoTarget("everyone is in that chat already")
        return [Step("add_chat_members", {"chat_id": d.params[f"{slot}_chat"], "employee_ids": new})]

    def prepare(self, s: Solving, slot: str) -> None:
        chat = _my_chat(s, s.stated[f"{slot}_chat"])
        s.memo[f"{slot}:chat"] = chat["chat_id"]
        s.memo[f"{slot}:present"] = {m["employee_id"] for m in s.listing("list_chat_members", chat_id=chat["chat_id"])}

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo[f"{slot}:present"]
        new = [p for p in self.listed_people(s, items) if p not in present]
        if new:
            s.api.call("add_chat_members", chat_id=s.memo[f"{slot}:chat"], employee_ids=new)


class InviteToMeeting(ToPeople):
    """Invite the people to an upcoming meeting the employee organises, named by its title (one
    call; those already invited are left out, since the product refuses the whole call otherwise)."""

    def __init__(self, key: str, *, role: str, **options: Any) -> None:
        meeting = "my upcoming meeting {<slot>_meeting} (which I organise)"
        invitation = f"{_an(role)} {role} invitation"
        super().__init__(
            key,
            "employee",
            (
                f"Invite <obj> to {meeting} as {role} participants",
                f"Add <obj> to the guest list of {meeting} as {role} participants",
                f"Send <obj> {invitation} to {meeting}",
            ),
            (
                f"should be invited to {meeting}, with the {role} role",
                f"should get {invitation} to {meeting}",
                f"should be put on the guest list of {meeting}, with the {role} role",
            ),
            (
                f"invite <them> to {meeting} as {role} participants",
                f"add <them> to the guest list of {meeting} as {role} participants",
                f"send <them> {invitation} to {meeting}",
            ),
            writes="invite",
            row_cost=1,
            **options,
        )
        self.role = role

    def scoping_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_meeting",)

    def draw(self, d: Drafting, slot: str) -> None:
        _draw_my_meeting(d, slot)

    def _invited(self, d: Drafting, slot: str) -> set[int]:
        return set(d.column("SELECT employee_id FROM meeting_participants WHERE meeting_id = :m", m=d.params[f"{slot}_meeting"]))

    def effects(self, d: Drafting, slot: str, targets: list[Any]) -> set[tuple[Any, ...]]:
        invited = self._invited(d, slot)
        return {(slot, p) for p in self.people(d, targets) if p not in invited}

    def steps(self, d: Drafting, slot: str, targets: list[Any], at: int) -> list[Step]:
        invited = self._invited(d, slot)
        new = [p for p in self.people(d, targets) if p not in invited]
        if not new:
            raise NoTarget("everyone is invited already")
        meeting = d.params[f"{slot}_meeting"]
        room = d.value(
            "SELECT capacity - (SELECT COUNT(*) FROM meeting_participants WHERE meeting_id = :m AND response != 'declined') FROM rooms "
            "WHERE id = (SELECT room_id FROM meetings WHERE id = :m)",
            m=meeting,
        )
        if room is not None and len(new) > room:
            raise NoTarget("the meeting's room is too small")
        return [Step("invite_participants", {"meeting_id": meeting, "employee_ids": new, "role": self.role})]

    def prepare(self, s: Solving, slot: str) -> None:
        meeting = _organised_meeting(s, s.stated[f"{slot}_meeting"])
        s.memo[f"{slot}:meeting"] = meeting["meeting_id"]
        s.memo[f"{slot}:present"] = {p["employee_id"] for p in s.listing("list_meeting_participants", meeting_id=meeting["meeting_id"])}

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo[f"{slot}:present"]
        new = [p for p in self.listed_people(s, items) if p not in present]
        if new:
            s.api.call("invite_participants", meeting_id=s.memo[f"{slot}:meeting"], employee_ids=new, role=self.role)


class RemoveFromMyChat(ToPeople):
    """Take the people out of a chat the employee owns, named by the request (those not in it are
    left alone: there is nothing to remove)."""

    def __init__(self) -> None:
        chat = "my chat {<slot>_chat}"
        super().__init__(
            "remove_from_my_chat",
            "employee",
            (f"Remove <obj> from {chat}", f"Take <obj> out of {chat}", f"Drop <obj> from {chat}"),
            (f"should be removed from {chat}", f"should come out of {chat}", f"should no longer be in {chat}"),
            (f"remove <them> from {chat}", f"take <them> out of {chat}", f"drop <them> from {chat}"),
            writes="chat_members",
            row_cost=1,
            excluded_sources=("chat",),
        )

    def scoping_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_chat",)

    def draw(self, d: Drafting, slot: str) -> None:
        row = d.choice(
            d.rows(
                "SELECT c.id, c.name FROM chats c WHERE c.owner_id = :actor AND c.name NOT LIKE '%''%' "
                "AND (SELECT COUNT(*) FROM chats x JOIN chat_members y ON y.chat_id = x.id AND y.employee_id = :actor "
                "WHERE x.name = c.name COLLATE NOCASE) = 1 ORDER BY c.id"
            ),
            "chat I own",
        )
        d.params[f"{slot}_chat"] = row["id"]
        d.state(f"{slot}_chat", row["name"], _quoted(row["name"]))

    def _inside(self, d: Drafting, slot: str, targets: list[Any]) -> list[int]:
        members = set(d.column("SELECT employee_id FROM chat_members WHERE chat_id = :c", c=d.params[f"{slot}_chat"]))
        return [p for p in self.people(d, targets) if p in members]

    def effects(self, d: Drafting, slot: str, targets: list[Any]) -> set[tuple[Any, ...]]:
        return {(slot, p) for p in self._inside(d, slot, targets)}

    def steps(self, d: Drafting, slot: str, targets: list[Any], at: int) -> list[Step]:
        chat = d.params[f"{slot}_chat"]
        return _some([Step("remove_chat_member", {"chat_id": chat, "employee_id": p}) for p in self._inside(d, slot, targets)])

    def prepare(self, s: Solving, slot: str) -> None:
        chat = _my_chat(s, s.stated[f"{slot}_chat"])
        s.memo[f"{slot}:chat"] = chat["chat_id"]
        s.memo[f"{slot}:present"] = {m["employee_id"] for m in s.listing("list_chat_members", chat_id=chat["chat_id"])}

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo[f"{slot}:present"]
        for person in self.listed_people(s, items):
            if person in present:
                s.api.call("remove_chat_member", chat_id=s.memo[f"{slot}:chat"], employee_id=person)


class Uninvite(ToPeople):
    """Take the people off an upcoming meeting the employee organises, named by its title (those
    not invited are left alone)."""

    def __init__(self) -> None:
        meeting = "my upcoming meeting {<slot>_meeting} (which I organise)"
        super().__init__(
            "uninvite",
            "employee",
            (f"Take <obj> off {meeting}", f"Remove <obj> from the guest list of {meeting}", f"Uninvite <obj> from {meeting}"),
            (f"should be taken off {meeting}", f"should come off the guest list of {meeting}", f"should be uninvited from {meeting}"),
            (f"take <them> off {meeting}", f"remove <them> from the guest list of {meeting}", f"uninvite <them> from {meeting}"),
            writes="invite",
            row_cost=1,
            excluded_sources=("upcoming_guests",),
        )

    def scoping_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_meeting",)

    def draw(self, d: Drafting, slot: str) -> None:
        _draw_my_meeting(d, slot)

    def _invited(self, d: Drafting, slot: str, targets: list[Any]) -> list[int]:
        guests = set(d.column("SELECT employee_id FROM meeting_participants WHERE meeting_id = :m", m=d.params[f"{slot}_meeting"]))
        return [p for p in self.people(d, targets) if p in guests]

    def effects(self, d: Drafting, slot: str, targets: list[Any]) -> set[tuple[Any, ...]]:
        return {(slot, p) for p in self._invited(d, slot, targets)}

    def steps(self, d: Drafting, slot: str, targets: list[Any], at: int) -> list[Step]:
        meeting = d.params[f"{slot}_meeting"]
        return _some([Step("remove_participant", {"meeting_id": meeting, "employee_id": p}) for p in self._invited(d, slot, targets)])

    def prepare(self, s: Solving, slot: str) -> None:
        meeting = _organised_meeting(s, s.stated[f"{slot}_meeting"])
        s.memo[f"{slot}:meeting"] = meeting["meeting_id"]
        s.memo[f"{slot}:present"] = {p["employee_id"] for p in s.listing("list_meeting_participants", meeting_id=meeting["meeting_id"])}

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo[f"{slot}:present"]
        for person in self.listed_people(s, items):
            if person in present:
                s.api.call("remove_participant", meeting_id=s.memo[f"{slot}:meeting"], employee_id=person)


def _draw_my_meeting(d: Drafting, slot: str) -> None:
    """An upcoming meeting the employee organises, named by its title (which they have once, in any role)."""
    row = d.choice(
        d.rows(
            f"SELECT m.id, m.title FROM meetings m WHERE m.organizer_id = :actor AND m.status = 'scheduled' AND m.start_at > '{NOW}' "
            "AND m.title NOT LIKE '%''%' AND (SELECT COUNT(*) FROM meetings x JOIN meeting_participants p ON p.meeting_id = x.id "
            "AND p.employee_id = :actor WHERE x.title = m.title COLLATE NOCASE) = 1 ORDER BY m.id"
        ),
        "upcoming meeting I organise",
    )
    d.params[f"{slot}_meeting"] = row["id"]
    d.state(f"{slot}_meeting", row["title"], _quoted(row["title"]))


class Transfer(Action):
    """Move each person to a team the request names (the employee heads a unit above them).
    Department heads cannot be moved and a person already in that team stays: both are skipped,
    as the directory listing shows them."""

    def __init__(self) -> None:
        super().__init__(
            "transfer",
            "employee",
            "employee",
            (
                "Transfer <obj> to the {<slot>_team} team",
                "Move <obj> into the {<slot>_team} team",
                "Reassign <obj> to the {<slot>_team} team",
            ),
            (
                "should be transferred to the {<slot>_team} team",
                "should move into the {<slot>_team} team",
                "should be reassigned to the {<slot>_team} team",
            ),
            (
                "transfer <them> to the {<slot>_team} team",
                "move <them> into the {<slot>_team} team",
                "reassign <them> to the {<slot>_team} team",
            ),
            writes="transfer",
            row_cost=2,
            sources=("team", "dept"),
        )

    def fits(self, source: Source, reduction: Reduction) -> bool:
        return _fits_people(self, source, reduction, items=True) and reduction.gives(source) == "employee"

    def scoping_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_team",)

    def draw(self, d: Drafting, slot: str) -> None:
        row = d.choice(
            d.rows(
                "WITH RECURSIVE sub(id) AS (SELECT department_id FROM department_heads WHERE employee_id = :actor "
                "UNION ALL SELECT x.id FROM departments x JOIN sub ON x.parent_id = sub.id) "
                "SELECT t.id, t.name FROM departments t WHERE t.kind = 'team' AND t.id IN (SELECT id FROM sub) AND t.id != :unit "
                "AND t.name NOT LIKE '%''%' ORDER BY t.id"
            ),
            "team to move to",
        )
        d.params[f"{slot}_dest"] = row["id"]
        d.state(f"{slot}_team", row["name"])

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        slot = next(k[: -len("_dest")] for k in d.params if k.endswith("_dest"))
        sql = f"e.id IN (SELECT employee_id FROM department_heads) OR e.department_id = :{slot}_dest"
        return {t for t, v in d.lookup("employee", targets, sql).items() if v}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        if self.refused(d, targets):
            raise NoTarget("a head, or someone in that team already, among them")  # "the 3 most senior" would have two readings
        dest = d.params[f"{slot}_dest"]
        return _some([Step("transfer_employee", {"employee_id": t, "department_id": dest}) for t in targets])

    def prepare(self, s: Solving, slot: str) -> None:
        s.memo[f"{slot}:dest"] = _unit(s, s.stated[f"{slot}_team"])["department_id"]

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        dest = s.memo[f"{slot}:dest"]
        for item in items:
            if item.get("is_department_head") or item.get("department_id") == dest:
                continue
            s.api.call("transfer_employee", employee_id=item["employee_id"], department_id=dest)


class RemoveFromChat(Action):
    def __init__(self) -> None:
        super().__init__(
            "remove_from_chat",
            "member",
            "employee",
            ("Remove <obj> from that chat", "Take <obj> out of that chat", "Drop <obj> from that chat"),
            ("should be removed from that chat", "should come out of that chat", "should be dropped from that chat"),
            ("remove <them> from that chat", "take <them> out of that chat", "drop <them> from that chat"),
            writes="chat_members",
            row_cost=1,
            sources=("chat",),
        )

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        return _some([Step("remove_chat_member", {"chat_id": d.params["chat"], "employee_id": t}) for t in targets])

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        chat = _my_chat(s, s.stated["s_chat"])
        for item in items:
            s.api.call("remove_chat_member", chat_id=chat["chat_id"], employee_id=item["employee_id"])


class RemoveFromMeeting(Action):
    def __init__(self) -> None:
        super().__init__(
            "remove_from_meeting",
            "employee",
            "employee",
            ("Take <obj> off that meeting", "Remove <obj> from that meeting", "Uninvite <obj> from that meeting"),
            ("should be taken off that meeting", "should be removed from that meeting", "should be uninvited from that meeting"),
            ("take <them> off that meeting", "remove <them> from that meeting", "uninvite <them> from that meeting"),
            writes="invite",
            row_cost=1,
            sources=("upcoming_guests",),
        )

    def fits(self, source: Source, reduction: Reduction) -> bool:
        return super().fits(source, reduction) and reduction.keeps_items  # the guests themselves, not their managers

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        return _some([Step("remove_participant", {"meeting_id": d.params["meeting"], "employee_id": t}) for t in targets])

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        meeting = _organised_meeting(s, s.stated["s_meeting"])
        for item in items:
            s.api.call("remove_participant", meeting_id=meeting["meeting_id"], employee_id=item["employee_id"])


def _over(item: Row) -> bool:
    """A meeting nobody can change or answer any more (cancelled, or started)."""
    return item.get("status") != "scheduled" or str(item.get("start_at")) <= NOW


class CancelMeetings(Action):
    """Cancel the meetings, with a stated reason (the ones over already are skipped: the product
    refuses them)."""

    def __init__(self) -> None:
        super().__init__(
            "cancel",
            "meeting",
            "meeting",
            (
                "Cancel <obj> with the reason {<slot>_reason}",
                "Call off <obj>, giving {<slot>_reason} as the reason",
                "Cancel <obj> (reason: {<slot>_reason})",
            ),
            (
                "should be cancelled with the reason {<slot>_reason}",
                "should be called off, reason {<slot>_reason}",
                "should be cancelled, giving the reason {<slot>_reason}",
            ),
            (
                "cancel <them> with the reason {<slot>_reason}",
                "call <them> off, giving {<slot>_reason} as the reason",
                "cancel <them> (reason: {<slot>_reason})",
            ),
            writes="meeting_state",
            row_cost=2,
            sources=("organised",),
        )

    def fits(self, source: Source, reduction: Reduction) -> bool:
        return super().fits(source, reduction) and reduction.key == "every"  # skipping one of "the 2 earliest" has two readings

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_reason",)

    def draw(self, d: Drafting, slot: str) -> None:
        reason = d.rng.choice(CANCEL_REASONS)
        d.state(f"{slot}_reason", reason, _quoted(reason))

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return {t for t, v in d.lookup("meeting", targets, STARTED).items() if v}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        return _some([Step("cancel_meeting", {"meeting_id": t, "reason": d.stated[f"{slot}_reason"]}) for t in targets if t not in refused])

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        for item in items:
            if not _over(item):
                s.api.call("cancel_meeting", meeting_id=item["meeting_id"], reason=s.stated[f"{slot}_reason"])


class Answer(EachCall):
    """An answer to each meeting; a chained answer the product refuses for every meeting writes nothing, and is not drawn."""

    def fits(self, source: Source, reduction: Reduction) -> bool:
        return super().fits(source, reduction) and reduction.key == "every"  # skipping one of "the 2 earliest" has two readings

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        return _some(super().steps(d, slot, targets, at))


def _answer(key: str, response: str, phrases: tuple[Sequence[str], Sequence[str], Sequence[str]], **options: Any) -> EachCall:
    """Answer each meeting (only those not over and not already answered that way: the product refuses the rest)."""
    full = (
        "e.room_id IS NOT NULL AND " + MY_ROW.format(col="response") + " = 'declined' AND (SELECT COUNT(*) FROM meeting_participants "
        "WHERE meeting_id = e.id AND response != 'declined') >= (SELECT capacity FROM rooms WHERE id = e.room_id)"
    )
    refused = f"{STARTED} OR {MY_ROW.format(col='response')} = '{response}'" + (f" OR ({full})" if response != "declined" else "")
    return Answer(
        key,
        "meeting",
        "meeting",
        "respond_to_meeting",
        "meeting_id",
        *phrases,
        refused=refused,
        blocked=lambda item: _over(item) or item.get("my_response") == response,
        extra={"response": response},
        writes="answer",
        row_cost=2,
        sources=("invited",),
        **options,
    )


class BookRooms(Action):
    """Book each room for a stated time and purpose (a room that cannot be booked or is taken then
    is skipped: the product refuses it; the public half checks each room's availability)."""

    def __init__(self) -> None:
        when = "{<slot>_day} from {<slot>_start} to {<slot>_end}"
        super().__init__(
            "book",
            "room",
            "room",
            (
                f"On {when}, book <obj> for {{<slot>_purpose}}",
                f"Make bookings on {when} for {{<slot>_purpose}}: <obj>",
                f"For {{<slot>_purpose}} on {when}, reserve <obj>",
            ),
            (
                f"should be booked on {when} for {{<slot>_purpose}}",
                f"should be reserved for {{<slot>_purpose}} on {when}",
                f"should get a booking on {when}, purpose {{<slot>_purpose}}",
            ),
            (
                f"book <them> on {when} for {{<slot>_purpose}}",
                f"reserve <them> for {{<slot>_purpose}} on {when}",
                f"make a booking of <them> on {when}, purpose {{<slot>_purpose}}",
            ),
            writes="booking",
            row_cost=1,
        )

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_day", f"{slot}_start", f"{slot}_end", f"{slot}_purpose")

    def draw(self, d: Drafting, slot: str) -> None:
        _draw_slot(d, slot)
        purpose = d.rng.choice(PURPOSES)
        d.state(f"{slot}_purpose", purpose, _quoted(purpose))

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return _taken(d, targets)

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        if self.refused(d, targets):
            raise NoTarget("a room the product would not book")  # "the 3 largest" would have two readings
        start, end = _moments(d.stated, slot)
        return _some(
            [Step("book_room", {"room_id": t, "start": start, "end": end, "purpose": d.stated[f"{slot}_purpose"]}) for t in targets]
        )

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        start, end = _moments(s.stated, slot)
        for item in items:
            if _available(s, item, start, end):
                s.api.call("book_room", room_id=item["room_id"], start=start, end=end, purpose=s.stated[f"{slot}_purpose"])


class MeetingInRoom(Action):
    """A new meeting at a stated time in the one room the reduction picked (it books the room)."""

    def __init__(self, **options: Any) -> None:
        when = "{<slot>_day} from {<slot>_start} to {<slot>_end}"
        super().__init__(
            "meeting_in_room",
            "room",
            "room",
            (
                f"Set up a meeting {{<slot>_title}} on {when} in <obj>",
                f"Schedule {{<slot>_title}} on {when}, in <obj>",
                f"For a new meeting {{<slot>_title}} on {when}, book <obj>",
            ),
            (
                f"should host a new meeting {{<slot>_title}} on {when}",
                f"should be the room of a new meeting {{<slot>_title}} on {when}",
                f"should get a new meeting {{<slot>_title}} on {when}",
            ),
            (
                f"set up a meeting {{<slot>_title}} in <them> on {when}",
                f"schedule {{<slot>_title}} in <them> on {when}",
                f"book <them> for a new meeting {{<slot>_title}} on {when}",
            ),
            writes="booking",
            row_cost=3,
            **options,
        )

    def fits(self, source: Source, reduction: Reduction) -> bool:
        return super().fits(source, reduction) and not reduction.plural

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        return (f"{slot}_title", f"{slot}_day", f"{slot}_start", f"{slot}_end")

    def draw(self, d: Drafting, slot: str) -> None:
        title = str(d.choice(MEETING_TITLES, "title"))
        d.state(f"{slot}_title", title, _quoted(title))
        _draw_slot(d, slot)

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        return _taken(d, targets)

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        if self.refused(d, targets):
            raise NoTarget("a room the product would not book")  # "the smallest room" must be the one it books
        start, end = _moments(d.stated, slot)
        return _some(
            [Step("create_meeting", {"title": d.stated[f"{slot}_title"], "start": start, "end": end, "room_id": t}) for t in targets]
        )

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        start, end = _moments(s.stated, slot)
        for item in items:
            if _available(s, item, start, end):
                s.api.call("create_meeting", title=s.stated[f"{slot}_title"], start=start, end=end, room_id=item["room_id"])


def _draw_slot(d: Drafting, slot: str) -> None:
    day = str(d.choice(_weekdays_ahead(), "day"))
    start, end = d.rng.choice(SLOTS)
    d.state(f"{slot}_day", day, _nice(day))
    d.state(f"{slot}_start", start)
    d.state(f"{slot}_end", end)
    d.params[f"{slot}_from"], d.params[f"{slot}_to"] = _ts(day, start), _ts(day, end)


def _moments(stated: dict[str, Any], slot: str) -> tuple[str, str]:
    day = stated[f"{slot}_day"]
    return f"{day} {stated[f'{slot}_start']}", f"{day} {stated[f'{slot}_end']}"


def _taken(d: Drafting, targets: list[int]) -> set[int]:
    """Rooms the product will not book for the drawn time: not bookable, or an active booking overlaps."""
    slot = next(k[: -len("_from")] for k in d.params if k.endswith("_from"))
    sql = (
        f"NOT e.is_bookable OR EXISTS (SELECT 1 FROM room_bookings k WHERE k.room_id = e.id AND k.status = 'active' "
        f"AND k.start_at < :{slot}_to AND k.end_at > :{slot}_from)"
    )
    return {t for t, v in d.lookup("room", targets, sql).items() if v}


def _available(s: Solving, room: Row, start: str, end: str) -> bool:
    if not room.get("is_bookable"):
        return False
    check = s.api.call("check_room_availability", room_id=room["room_id"], start=start, end=end)
    return bool(check and check["available"])


PEOPLE_ACTIONS: list[Action] = [
    NewChat("new_chat", "employee"),
    NewChat("new_social_chat", "employee", chat_type="social", private=True),
    NewMeeting("new_meeting", "employee"),
    NewMeeting("new_optional_meeting", "employee", role="optional"),
    AddToChat(),
    InviteToMeeting("invite_optional", role="optional", excluded_sources=("upcoming_guests",)),
    InviteToMeeting("invite_required", role="required", excluded_sources=("upcoming_guests",)),
    RemoveFromMyChat(),
    Uninvite(),
    Transfer(),
    RemoveFromChat(),
    RemoveFromMeeting(),
]

MEETING_ACTIONS: list[Action] = [
    CancelMeetings(),
    _answer(
        "decline",
        "declined",
        (
            ("Decline <obj>", "Turn down <obj>", "Answer 'declined' to <obj>"),
            ("should be declined", "should get my answer 'declined'", "should be turned down"),
            ("decline <them>", "turn <them> down", "answer 'declined' to <them>"),
        ),
    ),
    _answer(
        "accept",
        "accepted",
        (
            ("Accept <obj>", "Say yes to <obj>", "Answer 'accepted' to <obj>"),
            ("should be accepted", "should get my answer 'accepted'", "should get a yes from me"),
            ("accept <them>", "say yes to <them>", "answer 'accepted' to <them>"),
        ),
    ),
    _answer(
        "tentative",
        "tentative",
        (
            ("Answer 'tentative' to <obj>", "Mark <obj> as tentative", "Reply tentatively to <obj>"),
            ("should get my answer 'tentative'", "should be marked as tentative", "should get a tentative reply"),
            ("answer 'tentative' to <them>", "mark <them> as tentative", "reply tentatively to <them>"),
        ),
        private=True,
    ),
    NewChat(
        "organisers_chat",
        "meeting",
        group="organisers",
        via="organizer_id",
        via_column="e.organizer_id",
        sources=("invited",),
    ),
    NewChat("guests_chat", "meeting", group="guests"),
    NewMeeting("guests_meeting", "meeting", group="guests"),
    NewMeeting(
        "organisers_meeting",
        "meeting",
        group="organisers",
        via="organizer_id",
        via_column="e.organizer_id",
        sources=("invited",),
        private=True,
    ),
]

ROOM_ACTIONS: list[Action] = [BookRooms(), MeetingInRoom(private=False)]

GRAMMAR = Grammar(
    domain="meeting",
    entities=ENTITIES,
    sources=[
        TeamPeople(),
        DepartmentPeople(),
        DirectReports(),
        ChatPeople(),
        GuestList("upcoming_guests", upcoming=True, weight=0.7),
        GuestList("past_guests", upcoming=False, weight=0.6),
        Organised(),
        Invited(),
        BuildingRooms(),
        CityRooms(),
    ],
    predicates=[*EMPLOYEE_PREDICATES, *MEMBER_PREDICATES, *GUEST_PREDICATES, *MEETING_PREDICATES, *ROOM_PREDICATES],
    reductions=REDUCTIONS,
    actions=[*PEOPLE_ACTIONS, *MEETING_ACTIONS, *ROOM_ACTIONS],
)

__all__ = ["GRAMMAR"]
