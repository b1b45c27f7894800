"""Seeded row generators for the meeting world, one per table.

Two plans are drawn once per build and shared by the generators that need them, each from its
own seeded stream: the organisation (employees and who heads which department) and the
calendar (meetings, participants, room bookings). The calendar plan keeps a per-room list of
occupied intervals, so active bookings never overlap; a meeting only gets a room that is free
and large enough for everyone invited. Stored aggregates (headcounts, member and participant
counts) are left at zero: the repair rules in checks.py compute them after the fill.
"""

from __future__ import annotations

import bisect
import hashlib
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from random import Random
from typing import Any, TypeVar

from ...engine.fill import FillContext, Row, derive_seed
from ...engine.moments import DAY_FMT, between, clock, ts
from . import vocabulary as V

HISTORY_DAYS = 183  # meetings go back about six months
FUTURE_DAYS = 28  # and forward about four weeks
EMPLOYEE_COUNT = 995
DURATIONS = [15, 30, 45, 60, 90, 120]
DURATION_WEIGHTS = [8, 34, 14, 30, 9, 5]
# Public holidays in the window (no meetings): Labour Day and National Day weeks of 2026.
HOLIDAYS = {date(2026, 5, d) for d in range(1, 6)} | {date(2026, 10, d) for d in range(1, 9)}


P = TypeVar("P")


def _plan(ctx: FillContext, name: str, build: Callable[[FillContext, Random], P]) -> P:
    """A plan shared by several generators of one build, drawn once from its own stream."""
    key = f"plan:{name}"
    if key not in ctx.shared:
        ctx.shared[key] = build(ctx, Random(derive_seed(ctx.seed, "plan", name)))
    plan: P = ctx.shared[key]  # what `build` made for this name
    return plan


# -- places --------------------------------------------------------------------------------


def locations(ctx: FillContext) -> Iterable[Row]:
    for i, (city, country, office, address, hq) in enumerate(V.LOCATIONS, start=1):
        yield {"id": i, "city": city, "country": country, "office_name": office, "address": address, "is_headquarters": hq}


def buildings(ctx: FillContext) -> Iterable[Row]:
    rng = ctx.rng
    city_ids = {r["city"]: r["id"] for r in ctx.rows("locations", "id, city")}
    bid = 0
    for city, items in V.BUILDINGS.items():
        for name, code, floors in items:
            bid += 1
            yield {
                "id": bid,
                "location_id": city_ids[city],
                "name": name,
                "code": code,
                "address": f"{rng.randint(1, 999)} {rng.choice(['Science', 'Innovation', 'Century', 'Harbour', 'Garden'])} "
                f"{rng.choice(['Road', 'Avenue', 'Street', 'Boulevard'])}, {city}",
                "floors": floors,
            }


def rooms(ctx: FillContext) -> Iterable[Row]:
    rng = ctx.rng
    types, capacities, weights = zip(*[(t, c, w) for t, c, w in V.ROOM_TYPES])
    rid = 0
    for b in ctx.rows("buildings", "id, floors, location_id"):
        theme = list(V.ROOM_THEMES[(b["id"] - 1) % len(V.ROOM_THEMES)])
        rng.shuffle(theme)
        count = {1: 16, 2: 11, 3: 10, 4: 9, 5: 9, 6: 10}.get(b["location_id"], 8)
        floors = sorted(rng.sample(range(2, b["floors"] + 1), min(5, b["floors"] - 1)))
        for name in theme[:count]:
            rid += 1
            kind_i = rng.choices(range(len(types)), weights=weights)[0]
            kind = types[kind_i]
            capacity = rng.choice(capacities[kind_i])
            big = kind in ("conference", "boardroom", "training")
            yield {
                "id": rid,
                "building_id": b["id"],
                "name": name,
                "floor": rng.choice(floors),
                "capacity": capacity,
                "room_type": kind,
                "has_projector": int(rng.random() < (0.9 if big else 0.35)),
                "has_video_conferencing": int(rng.random() < (0.95 if big else 0.6 if kind == "meeting" else 0.25)),
                "has_whiteboard": int(rng.random() < (0.5 if kind == "training" else 0.75)),
                "has_phone": int(rng.random() < 0.45),
                "is_bookable": int(rng.random() < (0.6 if kind == "boardroom" else 0.95)),
            }


# -- the organisation ----------------------------------------------------------------------


@dataclass
class Dept:
    id: int
    name: str
    kind: str
    parent: int | None
    family: str
    location: int


def _departments_tree(rng: Random) -> list[Dept]:
    """The tree in breadth-first order (parents before children): company, divisions, departments, teams."""
    hq = 1
    depts = [Dept(1, V.COMPANY, "company", None, "Operations", hq)]
    level2: list[tuple[Dept, dict[str, list[str]]]] = []
    for division, (family, departments) in V.ORG.items():
        d = Dept(len(depts) + 1, division, "division", 1, family, rng.choices(range(1, 7), weights=[50, 16, 14, 8, 8, 4])[0])
        depts.append(d)
        level2.append((d, departments))
    level3: list[tuple[Dept, list[str]]] = []
    for div, departments in level2:
        for name, teams in departments.items():
            loc = div.location if rng.random() < 0.7 else rng.randint(1, 6)
            d = Dept(len(depts) + 1, name, "department", div.id, div.family, loc)
            depts.append(d)
            level3.append((d, teams))
    for department, teams in level3:
        for name in teams:
            loc = department.location if rng.random() < 0.75 else rng.randint(1, 6)
            depts.append(Dept(len(depts) + 1, name, "team", department.id, department.family, loc))
    return depts


def departments(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    for d in _departments_tree(Random(derive_seed(ctx.seed, "departments-tree"))):
        words = [w for w in d.name.replace("&", " ").replace(",", " ").split() if w[0].isalpha()]
        code = "QY" if d.kind == "company" else f"{''.join(w[0] for w in words).upper()}{d.id:02d}"
        founded = {"company": 2009, "division": 2012, "department": 2015, "team": 2018}[d.kind]
        yield {
            "id": d.id,
            "name": d.name,
            "code": code,
            "kind": d.kind,
            "parent_id": d.parent,
            "location_id": d.location,
            "cost_center": f"CC-{1000 + d.id * 7}",
            "headcount": 0,
            "founded_on": between(rng, datetime(founded, 1, 1), min(now, datetime(founded + 6, 12, 31))).strftime(DAY_FMT),
        }


@dataclass
class Org:
    employees: list[dict[str, Any]] = field(default_factory=list)
    heads: dict[int, int] = field(default_factory=dict)  # department -> employee
    appointed: dict[int, str] = field(default_factory=dict)


_PHONE_PREFIXES = ["130", "131", "132", "135", "136", "137", "138", "139", "150", "151", "158", "159", "166", "176", "186", "188", "199"]


def _org(ctx: FillContext, rng: Random) -> Org:
    now = clock(ctx)
    faker = ctx.faker
    faker.seed_instance(derive_seed(ctx.seed, "org", "faker"))
    depts = _departments_tree(Random(derive_seed(ctx.seed, "departments-tree")))
    # Members per department: teams carry most people, departments and divisions a few staff.
    non_heads = EMPLOYEE_COUNT - len(depts)
    weights = {d.id: {"company": 6, "division": 3, "department": 2.5, "team": 18}[d.kind] * rng.uniform(0.6, 1.4) for d in depts}
    total = sum(weights.values())
    sizes = {d: int(w / total * non_heads) for d, w in weights.items()}
    leftovers = non_heads - sum(sizes.values())
    teams = [d.id for d in depts if d.kind == "team"]
    for d in rng.sample(teams, leftovers):
        sizes[d] += 1
    org = Org()
    emails: set[str] = set()
    numbers = sorted(rng.sample(range(10000, 99999), EMPLOYEE_COUNT))
    seen_names: set[str] = set()

    def person(dept: Dept, head: bool) -> dict[str, Any]:
        eid = len(org.employees) + 1
        location = dept.location if rng.random() < 0.85 or head else rng.randint(1, 6)
        locale = rng.choices(["zh_CN", "en_US", "en_GB", "en_IN"], weights=[84, 6, 4, 6])[0]
        if location == 6:  # Singapore
            locale = rng.choices(["zh_CN", "en_US", "en_GB", "en_IN"], weights=[45, 20, 15, 20])[0]
        for _ in range(4):
            if locale == "zh_CN":
                first, last = faker[locale].first_romanized_name(), faker[locale].last_romanized_name()
            else:
                first, last = faker[locale].first_name(), faker[locale].last_name()
            name = f"{first} {last}"
            if name not in seen_names:
                break
        seen_names.add(name)
        base = f"{first}.{last}".lower().replace(" ", "").replace("'", "")
        email = f"{base}@qingyun.tech"
        n = 2
        while email in emails:
            email = f"{base}{n}@qingyun.tech"
            n += 1
        emails.add(email)
        if head:
            level = {"company": 10, "division": 9, "department": 8, "team": 7}[dept.kind]
            title = V.HEAD_TITLES[dept.kind].format(name=dept.name)
            family = "Management" if dept.kind == "company" else dept.family
            hired = between(rng, datetime(2010, 1, 1), now - timedelta(days=700))
        else:
            level = rng.choices([1, 2, 3, 4, 5, 6], weights=[10, 24, 26, 20, 13, 7])[0]
            family = dept.family if rng.random() < 0.85 else rng.choice(sorted(V.TITLES))
            titles = V.TITLES[family]
            title = titles[min(len(titles) - 1, max(0, int((level - 1) / 6 * len(titles) + rng.uniform(-1.5, 1.5))))]
            if rng.random() < 0.06:  # recent hires: they only appear in the latest months
                hired = between(rng, now - timedelta(days=150), now - timedelta(days=3))
            else:
                hired = between(rng, datetime(2013, 1, 1) + timedelta(days=300 * (6 - level)), now - timedelta(days=160))
        if location == 6:
            phone = f"+65 {rng.choice('689')}{rng.randint(100, 999)} {rng.randint(1000, 9999)}"
        else:
            phone = f"+86 {rng.choice(_PHONE_PREFIXES)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
        manager = None
        if head:
            if dept.parent:
                manager = org.heads[dept.parent]
        else:
            manager = org.heads[dept.id]
        row = {
            "id": eid,
            "employee_no": f"QY{numbers[eid - 1]}",
            "name": name,
            "email": email,
            "phone": phone,
            "title": title,
            "job_family": family,
            "level": level,
            "manager_id": manager,
            "department_id": dept.id,
            "location_id": location,
            "hire_date": hired.strftime(DAY_FMT),
            "status": "on_leave" if rng.random() < 0.04 and not (head and dept.kind != "team") else "active",
        }
        org.employees.append(row)
        return row

    for dept in depts:  # breadth-first: a department's head exists before its members and sub-heads
        head = person(dept, head=True)
        org.heads[dept.id] = head["id"]
        hired = datetime.fromisoformat(head["hire_date"])
        org.appointed[dept.id] = between(rng, hired + timedelta(days=30), now - timedelta(days=60)).strftime(DAY_FMT)
        for _ in range(sizes[dept.id]):
            person(dept, head=False)
    return org


def employees(ctx: FillContext) -> Iterable[Row]:
    return iter(_plan(ctx, "org", _org).employees)


def department_heads(ctx: FillContext) -> Iterable[Row]:
    org = _plan(ctx, "org", _org)
    for dept_id in sorted(org.heads):
        yield {"department_id": dept_id, "employee_id": org.heads[dept_id], "appointed_on": org.appointed[dept_id]}


# -- the calendar --------------------------------------------------------------------------


class Occupancy:
    """Active bookings per room as sorted (start, end) lists: is a slot free, take it."""

    def __init__(self) -> None:
        self.slots: dict[int, list[tuple[str, str]]] = defaultdict(list)

    def free(self, room: int, start: str, end: str) -> bool:
        slots = self.slots[room]
        i = bisect.bisect_left(slots, (start, ""))
        if i < len(slots) and slots[i][0] < end:
            return False
        return not (i > 0 and slots[i - 1][1] > start)

    def take(self, room: int, start: str, end: str) -> None:
        bisect.insort(self.slots[room], (start, end))


@dataclass
class Calendar:
    meetings: list[dict[str, Any]] = field(default_factory=list)
    participants: list[dict[str, Any]] = field(default_factory=list)
    bookings: list[dict[str, Any]] = field(default_factory=list)


def _working_days(now: datetime) -> list[date]:
    first = (now - timedelta(days=HISTORY_DAYS)).date()
    days = [first + timedelta(days=i) for i in range(HISTORY_DAYS + FUTURE_DAYS + 1)]
    return [d for d in days if d.weekday() < 5 and d not in HOLIDAYS]


def _slot(rng: Random, day: date, minutes: int, hour: int | None = None) -> tuple[datetime, datetime]:
    if hour is None:
        hour = rng.choices(range(8, 19), weights=[3, 14, 16, 12, 4, 8, 14, 14, 10, 4, 1])[0]
    minute = rng.choices([0, 15, 30, 45], weights=[55, 8, 32, 5])[0]
    start = datetime(day.year, day.month, day.day, hour, minute)
    return start, start + timedelta(minutes=minutes)


def _code(seed: int, mid: int) -> str:
    digits = int(hashlib.sha256(f"{seed}:meeting:{mid}".encode()).hexdigest()[:12], 16) % 900_000_000 + 100_000_000
    return str(digits)


@dataclass
class Staff:
    """Who is who, as the calendar plan needs it: read from the organisation already filled."""

    ids: list[int]
    hired: dict[int, str]  # hire date, YYYY-MM-DD
    location: dict[int, int]
    department: dict[int, int]
    names: dict[int, str]
    seniors: list[int]  # level 4 and up: who organises recurring series
    department_names: dict[int, str]
    parent: dict[int, int | None]
    divisions: list[int]
    division_of: dict[int, int]  # a department's division (the division itself for a division)
    members: dict[int, list[int]]  # a department's people, with the head of the department above
    division_members: dict[int, list[int]]
    heads: dict[int, int]  # department -> its head


def _staff(ctx: FillContext) -> Staff:
    emps = ctx.rows("employees", "id, name, department_id, location_id, hire_date, level")
    dept_rows = ctx.rows("departments", "id, name, kind, parent_id")
    parent = {d["id"]: d["parent_id"] for d in dept_rows}
    members: dict[int, list[int]] = defaultdict(list)
    for e in emps:
        members[e["department_id"]].append(e["id"])
    heads = {r["department_id"]: r["employee_id"] for r in ctx.rows("department_heads", "department_id, employee_id")}
    for dept_id, head in heads.items():  # a head also belongs with the teams right under them
        for child in [d for d, p in parent.items() if p == dept_id]:
            members[child].append(head)
    division_of: dict[int, int] = {}
    for d in dept_rows:
        cur = d["id"]
        while parent[cur] is not None and parent[parent[cur]] is not None:
            cur = parent[cur]
        division_of[d["id"]] = cur
    division_members: dict[int, list[int]] = defaultdict(list)
    for e in emps:
        division_members[division_of[e["department_id"]]].append(e["id"])
    return Staff(
        ids=[e["id"] for e in emps],
        hired={e["id"]: e["hire_date"] for e in emps},
        location={e["id"]: e["location_id"] for e in emps},
        department={e["id"]: e["department_id"] for e in emps},
        names={e["id"]: e["name"] for e in emps},
        seniors=[e["id"] for e in emps if e["level"] >= 4],
        department_names={d["id"]: d["name"] for d in dept_rows},
        parent=parent,
        divisions=[d["id"] for d in dept_rows if d["kind"] == "division"],
        division_of=division_of,
        members=members,
        division_members=division_members,
        heads=heads,
    )


def _bookable_rooms(ctx: FillContext) -> dict[int, list[dict[str, Any]]]:
    """The bookable rooms of each location, smallest first."""
    rooms_by_loc: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in ctx.rows(
        "rooms", "rooms.id AS id, capacity, is_bookable, (SELECT location_id FROM buildings b WHERE b.id = rooms.building_id) AS loc"
    ):
        if r["is_bookable"]:
            rooms_by_loc[r["loc"]].append(dict(r))
    for loc in rooms_by_loc:
        rooms_by_loc[loc].sort(key=lambda r: (r["capacity"], r["id"]))
    return rooms_by_loc


class MeetingDrafts:
    """Meeting drafts (organiser, title, time, invitees, room wanted), before they get ids and rooms.

    Every draw comes from the one calendar stream, in a fixed order: the plan depends on it.
    """

    def __init__(self, rng: Random, staff: Staff, days: list[date]) -> None:
        self.rng = rng
        self.staff = staff
        self.days = days
        self.drafts: list[dict[str, Any]] = []

    def invitees(self, organizer: int, size: int, day: date, pool: list[int] | None = None) -> list[int]:
        """The organiser and up to size - 1 colleagues hired before the day, mostly from their team."""
        rng, staff = self.rng, self.staff
        stamp = day.isoformat()
        dept = staff.department[organizer]
        above = staff.parent[dept]
        near = staff.members[dept] + (staff.members[above] if above else [])
        chosen: dict[int, None] = {organizer: None}
        tries = 0
        while len(chosen) < size and tries < size * 15:
            tries += 1
            roll = rng.random()
            source = pool if pool else (staff.members[dept] if roll < 0.6 else near if roll < 0.85 else staff.ids)
            pick = rng.choice(source or staff.ids)
            if staff.hired[pick] < stamp:
                chosen[pick] = None
        return list(chosen)

    def add(
        self,
        organizer: int,
        title: str,
        day: date,
        minutes: int,
        people: list[int],
        recurrence: str,
        hour: int | None = None,
        want_room: bool | None = None,
    ) -> None:
        start, end = _slot(self.rng, day, minutes, hour)
        self.drafts.append(
            {
                "organizer": organizer,
                "title": title,
                "start": start,
                "end": end,
                "people": people,
                "recurrence": recurrence,
                "want_room": (self.rng.random() < 0.68) if want_room is None else want_room,
            }
        )

    def title(self, pattern: str, organizer: int) -> str:
        rng, staff = self.rng, self.staff
        dept = staff.department[organizer]
        other = rng.choice(staff.members[dept]) if staff.members[dept] else organizer
        return pattern.format(
            team=staff.department_names[dept],
            topic=rng.choice(V.TOPICS),
            project=rng.choice(V.PROJECTS),
            customer=rng.choice(V.CUSTOMERS),
            person=staff.names[other] if other != organizer else staff.names[staff.heads.get(staff.parent[dept] or 1, 1)],
            quarter=rng.choice(["Q3", "Q4", "2027"]),
            division=staff.department_names[staff.division_of[dept]],
        )


def _draft_series(drafts: MeetingDrafts) -> None:
    """Recurring series: a team's weekly sync, 1:1s, project status meetings."""
    rng, staff, days = drafts.rng, drafts.staff, drafts.days
    for _ in range(46):
        organizer = rng.choice(staff.seniors)
        recurrence = rng.choices(["weekly", "biweekly", "monthly", "daily"], weights=[45, 30, 20, 5])[0]
        pattern = rng.choice(V.RECURRING_TITLES)
        title = drafts.title(pattern, organizer)
        size = 2 if pattern.startswith("1:1") else rng.randint(3, 9)
        minutes = 15 if recurrence == "daily" else rng.choice([30, 30, 45, 60, 60])
        first = rng.randrange(len(days) - 20)
        hired_day = staff.hired[organizer]
        while days[first].isoformat() < hired_day and first < len(days) - 21:
            first += 5
        people = drafts.invitees(organizer, size, days[first])
        step = {"daily": 1, "weekly": 5, "biweekly": 10, "monthly": 21}[recurrence]
        count = {"daily": rng.randint(6, 10), "weekly": rng.randint(5, 12), "biweekly": rng.randint(4, 8), "monthly": rng.randint(3, 6)}[
            recurrence
        ]
        hour = rng.choice([9, 10, 11, 14, 15, 16])
        want_room = rng.random() < 0.6
        for k in range(count):
            i = first + k * step
            if i >= len(days):
                break
            drafts.add(organizer, title, days[i], minutes, people, recurrence, hour=hour, want_room=want_room)


def _draft_all_hands(drafts: MeetingDrafts) -> None:
    """Large online meetings: all-hands and town halls."""
    rng, staff = drafts.rng, drafts.staff
    for _ in range(10):
        division = rng.choice(staff.divisions)
        organizer = staff.heads[division]
        day = rng.choice(drafts.days)
        title = rng.choice(V.ALL_HANDS_TITLES).format(
            division=staff.department_names[division], quarter=rng.choice(["Q3", "Q4"]), topic=rng.choice(V.TOPICS)
        )
        people = drafts.invitees(organizer, rng.randint(20, 40), day, pool=staff.division_members[division])
        drafts.add(organizer, title, day, rng.choice([60, 90]), people, "none", hour=rng.choice([10, 16]), want_room=False)


def _draft_one_offs(drafts: MeetingDrafts) -> None:
    """One-off meetings, a fifth of them organised by department heads."""
    rng, staff = drafts.rng, drafts.staff
    head_ids = sorted(staff.heads.values())
    for _ in range(1220):
        organizer = rng.choice(head_ids if rng.random() < 0.2 else staff.ids)
        day = rng.choice(drafts.days)
        if staff.hired[organizer] >= day.isoformat():
            continue
        size = rng.choices([2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20], weights=[25, 17, 15, 12, 9, 7, 5, 4, 3, 2, 1])[0]
        minutes = rng.choices(DURATIONS, weights=DURATION_WEIGHTS)[0]
        drafts.add(
            organizer, drafts.title(rng.choice(V.ONE_OFF_TITLES), organizer), day, minutes, drafts.invitees(organizer, size, day), "none"
        )


def _schedule_meetings(
    ctx: FillContext,
    rng: Random,
    drafts: list[dict[str, Any]],
    staff: Staff,
    rooms_by_loc: dict[int, list[dict[str, Any]]],
    occupancy: Occupancy,
    now: datetime,
) -> Calendar:
    """The drafts in time order become meetings with ids, status, a free room that fits (when one
    is wanted), answered invitations and the room's booking."""
    drafts.sort(key=lambda m: (m["start"], m["organizer"], m["title"]))
    cal = Calendar()
    for mid, m in enumerate(drafts, start=1):
        start_s, end_s = ts(m["start"]), ts(m["end"])
        past = m["end"] <= now
        created = m["start"] - timedelta(minutes=rng.randint(60, 21 * 24 * 60))
        if created > now:
            created = now - timedelta(minutes=rng.randint(10, 5 * 24 * 60))
        cancelled = rng.random() < 0.07
        cancelled_at = between(rng, created, min(m["start"], now)) if cancelled else None
        room = _meeting_room(rng, m, staff, rooms_by_loc, occupancy, cancelled) if m["want_room"] else None
        if room is not None and not cancelled:
            occupancy.take(room, start_s, end_s)
        status = "cancelled" if cancelled else ("completed" if past else "scheduled")
        code = _code(ctx.seed, mid)
        lines = rng.sample(V.AGENDA_LINES, rng.randint(0, 4))
        cal.meetings.append(
            {
                "id": mid,
                "title": m["title"][:100],
                "agenda": "\n".join(f"{n}. {line}" for n, line in enumerate(lines, start=1)),
                "organizer_id": m["organizer"],
                "room_id": room,
                "start_at": start_s,
                "end_at": end_s,
                "status": status,
                "recurrence": m["recurrence"],
                "meeting_code": code,
                "join_url": f"https://meeting.qingyun.tech/j/{code}",
                "participant_count": 0,
                "created_at": ts(created),
                "cancelled_at": ts(cancelled_at) if cancelled_at else None,
                "cancel_reason": rng.choice(V.CANCEL_REASONS) if cancelled else None,
            }
        )
        cal.participants += _participants(rng, mid, m, created, status, now)
        if room is not None:
            cal.bookings.append(
                {
                    "room_id": room,
                    "booker_id": m["organizer"],
                    "meeting_id": mid,
                    "start_at": start_s,
                    "end_at": end_s,
                    "status": "cancelled" if cancelled else "active",
                    "purpose": m["title"][:100],
                    "created_at": ts(created),
                    "cancelled_at": ts(cancelled_at) if cancelled_at else None,
                }
            )
    return cal


def _meeting_room(
    rng: Random,
    m: dict[str, Any],
    staff: Staff,
    rooms_by_loc: dict[int, list[dict[str, Any]]],
    occupancy: Occupancy,
    cancelled: bool,
) -> int | None:
    """A room for a meeting that wants one: the first free one among the few smallest that fit (a
    cancelled meeting keeps the first it tried), or None."""
    start_s, end_s = ts(m["start"]), ts(m["end"])
    fitting = [r for r in rooms_by_loc[staff.location[m["organizer"]]] if r["capacity"] >= len(m["people"])]
    for candidate in fitting[: rng.randint(2, 6)]:  # the smallest rooms that fit, tried in order
        if cancelled or occupancy.free(candidate["id"], start_s, end_s):
            room: int = candidate["id"]
            return room
    return None


def _participants(rng: Random, mid: int, m: dict[str, Any], created: datetime, status: str, now: datetime) -> list[dict[str, Any]]:
    """A meeting's invitations: the organiser's, and each invitee's role, answer (given by the
    start, or by now) and, once the meeting is over, attendance."""
    past = m["end"] <= now
    answered_by = min(m["start"], now)
    rows: list[dict[str, Any]] = []
    for person in m["people"]:
        responded: datetime | None
        if person == m["organizer"]:
            role, response, responded = "organiser", "accepted", created
        else:
            role = "optional" if rng.random() < 0.15 else "required"
            weights = [5, 80, 10, 5] if past else [27, 55, 8, 10]
            response = rng.choices(["invited", "accepted", "declined", "tentative"], weights=weights)[0]
            responded = None if response == "invited" else between(rng, created, answered_by)
        attended = None
        if status == "completed":
            share = {"accepted": 0.92, "tentative": 0.5, "invited": 0.2, "declined": 0.0}[response]
            attended = 1 if role == "organiser" else int(rng.random() < share)
        rows.append(
            {
                "meeting_id": mid,
                "employee_id": person,
                "role": role,
                "response": response,
                "invited_at": ts(created),
                "responded_at": ts(responded) if responded else None,
                "attended": attended,
            }
        )
    return rows


def _book_standalone(
    cal: Calendar,
    rng: Random,
    staff: Staff,
    rooms_by_loc: dict[int, list[dict[str, Any]]],
    occupancy: Occupancy,
    days: list[date],
    now: datetime,
) -> None:
    """Standalone bookings: interviews, calls, quiet rooms; a third of them still ahead."""
    head_ids = sorted(staff.heads.values())
    upcoming = [d for d in days if d > now.date()]
    for _ in range(330):
        booker = rng.choice(head_ids if rng.random() < 0.4 else staff.ids)  # managers book interview rooms
        loc_rooms = rooms_by_loc[staff.location[booker]]
        if not loc_rooms:
            continue
        room = rng.choice(loc_rooms[: max(3, len(loc_rooms) * 2 // 3)])  # small rooms are booked most
        day = rng.choice(upcoming if rng.random() < 0.35 else days)
        start, end = _slot(rng, day, rng.choice([30, 45, 60, 60, 90, 120]))
        start_s, end_s = ts(start), ts(end)
        created = start - timedelta(minutes=rng.randint(30, 10 * 24 * 60))
        if created > now:
            created = now - timedelta(minutes=rng.randint(10, 3 * 24 * 60))
        if staff.hired[booker] >= created.date().isoformat():
            continue
        cancelled = rng.random() < 0.14
        if not cancelled:
            if not occupancy.free(room["id"], start_s, end_s):
                continue
            occupancy.take(room["id"], start_s, end_s)
        cancelled_at = between(rng, created, min(start, now)) if cancelled else None
        cal.bookings.append(
            {
                "room_id": room["id"],
                "booker_id": booker,
                "meeting_id": None,
                "start_at": start_s,
                "end_at": end_s,
                "status": "cancelled" if cancelled else "active",
                "purpose": rng.choice(V.BOOKING_PURPOSES),
                "created_at": ts(created),
                "cancelled_at": ts(cancelled_at) if cancelled_at else None,
            }
        )


def _calendar(ctx: FillContext, rng: Random) -> Calendar:
    """The calendar plan: meetings drafted, then scheduled into rooms, then standalone bookings,
    all from one stream (the order of the steps is part of the plan)."""
    now = clock(ctx)
    staff = _staff(ctx)
    rooms_by_loc = _bookable_rooms(ctx)
    days = _working_days(now)
    occupancy = Occupancy()
    drafts = MeetingDrafts(rng, staff, days)
    _draft_series(drafts)
    _draft_all_hands(drafts)
    _draft_one_offs(drafts)
    cal = _schedule_meetings(ctx, rng, drafts.drafts, staff, rooms_by_loc, occupancy, now)
    _book_standalone(cal, rng, staff, rooms_by_loc, occupancy, days, now)
    cal.bookings.sort(key=lambda b: (b["created_at"], b["room_id"], b["start_at"]))
    for bid, booking in enumerate(cal.bookings, start=1):
        booking["id"] = bid
    assert ctx.now  # the clock is part of the plan's key
    return cal


def meetings(ctx: FillContext) -> Iterable[Row]:
    return iter(_plan(ctx, "calendar", _calendar).meetings)


def meeting_participants(ctx: FillContext) -> Iterable[Row]:
    return iter(_plan(ctx, "calendar", _calendar).participants)


def room_bookings(ctx: FillContext) -> Iterable[Row]:
    return iter(_plan(ctx, "calendar", _calendar).bookings)


def schedule_entries(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    entries: list[dict[str, Any]] = []
    # Accepted meetings that still take place are on the participant's calendar.
    for row in ctx.conn.execute(
        "SELECT p.employee_id, m.id, m.title, m.start_at, m.end_at, p.responded_at FROM meeting_participants p "
        "JOIN meetings m ON m.id = p.meeting_id WHERE p.response = 'accepted' AND m.status != 'cancelled' "
        "ORDER BY m.id, p.employee_id"
    ):
        employee, meeting, title, start, end, responded = row
        entries.append(
            {
                "employee_id": employee,
                "meeting_id": meeting,
                "kind": "meeting",
                "title": title,
                "start_at": start,
                "end_at": end,
                "is_private": 0,
                "note": "",
                "created_at": responded,
            }
        )
    emps = ctx.rows("employees", "id, hire_date, status, location_id")
    cities = [r["city"] for r in ctx.rows("locations", "city")]
    days = _working_days(now)
    upcoming = [d for d in days if d > now.date()]
    kinds = sorted(V.PERSONAL_ENTRIES)
    kind_weights = {"focus": 34, "leave": 14, "personal": 20, "training": 14, "travel": 18}
    for _ in range(1250):
        e = rng.choice(emps)
        kind = rng.choices(kinds, weights=[kind_weights[k] for k in kinds])[0]
        titles, durations, private_share = V.PERSONAL_ENTRIES[kind]
        day = rng.choice(upcoming if rng.random() < 0.3 else days)  # people plan ahead
        if day.isoformat() <= e["hire_date"]:
            continue
        if kind == "leave":
            start = datetime(day.year, day.month, day.day, 9, 0)
            end = datetime(day.year, day.month, day.day, 18, 0) + timedelta(days=rng.choice([0, 0, 0, 1, 2, 4]))
        else:
            start, end = _slot(rng, day, rng.choice(durations), hour=rng.choice([8, 9, 10, 13, 14, 15, 16]))
        created = start - timedelta(hours=rng.randint(2, 24 * 20))
        if created > now:
            created = now - timedelta(hours=rng.randint(1, 24 * 4))
        entries.append(
            {
                "employee_id": e["id"],
                "meeting_id": None,
                "kind": kind,
                "title": rng.choice(titles).format(city=rng.choice(cities)),
                "start_at": ts(start),
                "end_at": ts(end),
                "is_private": int(rng.random() < private_share),
                "note": rng.choice(["", "", "", "Reachable on mobile", "Back online after lunch", "Booked via travel desk"]),
                "created_at": ts(created),
            }
        )
    # Employees on leave have a leave entry that covers today.
    for e in emps:
        if e["status"] == "on_leave":
            start = (now - timedelta(days=rng.randint(3, 40))).replace(hour=9, minute=0, second=0)
            end = (now + timedelta(days=rng.randint(5, 60))).replace(hour=18, minute=0, second=0)
            entries.append(
                {
                    "employee_id": e["id"],
                    "meeting_id": None,
                    "kind": "leave",
                    "title": rng.choice(["Parental leave", "Extended sick leave", "Sabbatical", "Long leave"]),
                    "start_at": ts(start),
                    "end_at": ts(end),
                    "is_private": 1,
                    "note": "",
                    "created_at": ts(start - timedelta(days=rng.randint(5, 30))),
                }
            )
    entries.sort(key=lambda r: (r["start_at"], r["employee_id"], r["kind"], r["title"]))
    for i, entry in enumerate(entries, start=1):
        yield {"id": i, **entry}


# -- chats ---------------------------------------------------------------------------------


@dataclass
class ChatPlan:
    """The chats and their members as they are drawn (in order: ids follow)."""

    rng: Random
    now: datetime
    hired: dict[int, datetime]
    chats: list[dict[str, Any]] = field(default_factory=list)
    members: list[dict[str, Any]] = field(default_factory=list)

    def add(self, name: str, kind: str, owner: int, people: list[int], department: int | None, earliest: datetime) -> None:
        """One chat owned by `owner` with `people` (some of them admins), created after `earliest`."""
        rng, now, hired = self.rng, self.now, self.hired
        cid = len(self.chats) + 1
        created = between(rng, max(earliest, hired[owner]), now - timedelta(days=2))
        self.chats.append(
            {
                "id": cid,
                "name": name[:60],
                "description": V.CHAT_DESCRIPTIONS[kind].format(name=name),
                "chat_type": kind,
                "owner_id": owner,
                "department_id": department,
                "created_at": ts(created),
                "member_count": 0,
                "message_count": 0,
                "last_message_at": None,
            }
        )
        admins = set(rng.sample([p for p in people if p != owner], min(len(people) - 1, rng.choice([0, 1, 1, 2]))))
        for person in sorted(set(people) | {owner}):
            joined = created if person == owner else between(rng, max(created, hired[person]), now - timedelta(days=1))
            if rng.random() < 0.6 and person != owner:
                joined = max(created, hired[person]) + timedelta(minutes=rng.randint(1, 120))
                joined = min(joined, now - timedelta(hours=1))
            role = "owner" if person == owner else "admin" if person in admins else "member"
            self.members.append(
                {
                    "chat_id": cid,
                    "employee_id": person,
                    "role": role,
                    "joined_at": ts(joined),
                    "muted": int(rng.random() < (0.35 if kind == "announcement" else 0.12)),
                }
            )


def _chat_plan(ctx: FillContext, rng: Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    now = clock(ctx)
    emps = ctx.rows("employees", "id, department_id, location_id, hire_date, level")
    dept_rows = ctx.rows("departments", "id, name, kind, parent_id")
    heads = {r["department_id"]: r["employee_id"] for r in ctx.rows("department_heads", "department_id, employee_id")}
    parent: dict[int, int | None] = {d["id"]: d["parent_id"] for d in dept_rows}
    subtree = _subtrees(emps, parent)
    plan = ChatPlan(rng, now, {e["id"]: datetime.fromisoformat(e["hire_date"]) for e in emps})
    start = now - timedelta(days=900)
    for d in dept_rows:
        if d["kind"] == "team" or (d["kind"] == "department" and rng.random() < 0.5):
            plan.add(f"{d['name']} team", "department", heads[d["id"]], subtree[d["id"]], d["id"], start)
        elif d["kind"] == "division":
            audience = [p for p in subtree[d["id"]] if rng.random() < 0.6]  # not everyone joins
            plan.add(f"{d['name']} announcements", "announcement", heads[d["id"]], audience, d["id"], start)
    _project_chats(plan, emps, subtree, parent)
    _social_chats(plan, emps, {r["id"]: r["city"] for r in ctx.rows("locations", "id, city")}, start)
    return plan.chats, plan.members


def _subtrees(emps: list[sqlite3.Row], parent: dict[int, int | None]) -> dict[int, list[int]]:
    """Department -> the employees in it and below."""
    subtree: dict[int, list[int]] = defaultdict(list)
    for e in emps:
        cur = e["department_id"]
        while cur is not None:
            subtree[cur].append(e["id"])
            cur = parent[cur]
    return subtree


def _project_chats(plan: ChatPlan, emps: list[sqlite3.Row], subtree: dict[int, list[int]], parent: dict[int, int | None]) -> None:
    """Project chats: owned by a senior employee, with people mostly from near them in the org."""
    rng = plan.rng
    all_ids = [e["id"] for e in emps]
    fillers = {"project": V.PROJECTS, "customer": V.CUSTOMERS, "topic": V.TOPICS}
    for _ in range(58):
        owner = rng.choice([e["id"] for e in emps if e["level"] >= 3])
        dept = next(e["department_id"] for e in emps if e["id"] == owner)
        near = subtree[parent[dept] or dept]
        people = [rng.choice(near if rng.random() < 0.7 else all_ids) for _ in range(rng.randint(3, 14))]
        name = rng.choice(V.CHAT_PROJECT_NAMES).format(
            project=rng.choice(fillers["project"]),
            project2=rng.choice(fillers["project"]),
            customer=rng.choice(fillers["customer"]),
            topic=rng.choice(fillers["topic"]).capitalize(),
        )
        plan.add(name, "project", owner, people, None, plan.now - timedelta(days=300))


def _social_chats(plan: ChatPlan, emps: list[sqlite3.Row], cities: dict[int, str], start: datetime) -> None:
    """Social chats: anyone's, with people mostly from the owner's office."""
    rng = plan.rng
    all_ids = [e["id"] for e in emps]
    by_location: dict[int, list[int]] = defaultdict(list)
    for e in emps:
        by_location[e["location_id"]].append(e["id"])
    for _ in range(26):
        owner = rng.choice(all_ids)
        loc = next(e["location_id"] for e in emps if e["id"] == owner)
        people = [rng.choice(by_location[loc] if rng.random() < 0.8 else all_ids) for _ in range(rng.randint(6, 36))]
        name = rng.choice(V.CHAT_SOCIAL_NAMES).format(city=cities[loc], year=rng.choice([2024, 2025, 2026]))
        plan.add(name, "social", owner, people, None, start)


def chats(ctx: FillContext) -> Iterable[Row]:
    return iter(_plan(ctx, "chats", _chat_plan)[0])


def chat_members(ctx: FillContext) -> Iterable[Row]:
    return iter(_plan(ctx, "chats", _chat_plan)[1])


MESSAGE_COUNT = 4800


def chat_messages(ctx: FillContext) -> Iterable[Row]:
    rng, now = ctx.rng, clock(ctx)
    roster: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for r in ctx.rows("chat_members", "chat_id, employee_id, joined_at"):
        roster[r["chat_id"]].append((r["employee_id"], r["joined_at"]))
    chat_rows = ctx.rows("chats", "id, chat_type")
    weights = [{"department": 3.0, "project": 4.0, "social": 1.5, "announcement": 1.0}[c["chat_type"]] for c in chat_rows]
    cumulative = [sum(weights[: i + 1]) for i in range(len(weights))]
    organized: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for r in ctx.rows("meetings", "id, organizer_id, created_at", "status != 'cancelled'"):
        organized[r["organizer_id"]].append((r["created_at"], r["id"]))
    titles = {r["id"]: r["title"] for r in ctx.rows("meetings", "id, title")}
    room_names = [r["name"] for r in ctx.rows("rooms", "name")]
    drafts = []
    for _ in range(MESSAGE_COUNT):
        chat = rng.choices(chat_rows, cum_weights=cumulative)[0]
        sender, joined = rng.choice(roster[chat["id"]])
        since = datetime.fromisoformat(joined)
        if rng.random() < 0.4:
            since = max(since, now - timedelta(days=30))
        drafts.append((ts(between(rng, since, now)), chat["id"], sender))
    drafts.sort()
    per_chat: dict[int, list[int]] = defaultdict(list)
    for mid, (sent, chat_id, sender) in enumerate(drafts, start=1):
        fill = {
            "topic": rng.choice(V.TOPICS),
            "project": rng.choice(V.PROJECTS),
            "customer": rng.choice(V.CUSTOMERS),
            "room": rng.choice(room_names),
            "q": rng.randint(1, 4),
            "day": sent[:10],
            "year": sent[:4],
        }
        kind = rng.choices(["text", "file", "image", "meeting_link"], weights=[80, 9, 6, 5])[0]
        meeting = None
        attachment = None
        if kind == "meeting_link":
            mine = [m for created, m in organized[sender] if created <= sent]
            if mine:
                meeting = rng.choice(mine[-5:])
                content = f"Meeting invite: {titles[meeting]}"
            else:
                kind = "text"
        if kind == "text":
            content = rng.choice(V.MESSAGE_TEMPLATES).format(**fill)
        elif kind == "file":
            attachment = rng.choice(V.FILE_NAMES).format(**fill).replace(" ", "_")
            content = f"[File] {attachment}"
        elif kind == "image":
            attachment = f"IMG_{rng.randint(1000, 9999)}.jpg"
            content = "[Image]"
        earlier = per_chat[chat_id]
        reply_to = rng.choice(earlier[-8:]) if earlier and rng.random() < 0.14 else None
        per_chat[chat_id].append(mid)
        sent_dt = datetime.fromisoformat(sent)
        edited = ts(min(now, sent_dt + timedelta(minutes=rng.randint(1, 90)))) if kind == "text" and rng.random() < 0.05 else None
        yield {
            "id": mid,
            "chat_id": chat_id,
            "sender_id": sender,
            "reply_to_id": reply_to,
            "meeting_id": meeting,
            "message_type": kind,
            "content": content,
            "attachment_name": attachment,
            "sent_at": sent,
            "edited_at": edited,
            "is_recalled": int(rng.random() < 0.02),
            "reaction_count": rng.choices([0, 1, 2, 3, 5, 8], weights=[70, 12, 8, 5, 3, 2])[0],
        }


GENERATORS = {
    "locations": locations,
    "departments": departments,
    "employees": employees,
    "department_heads": department_heads,
    "buildings": buildings,
    "rooms": rooms,
    "meetings": meetings,
    "meeting_participants": meeting_participants,
    "room_bookings": room_bookings,
    "schedule_entries": schedule_entries,
    "chats": chats,
    "chat_members": chat_members,
    "chat_messages": chat_messages,
}
