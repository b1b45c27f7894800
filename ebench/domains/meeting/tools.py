"""The meeting platform's tools: what an employee can do in the app, acting as the current employee.

Every tool is declared once here; its JSON schema comes from its signature and docstring.
Results speak product language (names next to ids), lists come in pages of 20, and a refused
action raises ToolError, which the registry turns into an error result with nothing changed.

Times are "YYYY-MM-DD HH:MM" or "YYYY-MM-DD HH:MM:SS" in the platform's time zone (UTC+8);
they are stored with seconds. Rules the write tools enforce (each refusal changes nothing):
- a meeting, booking or calendar entry ends after it starts (invalid_value), does not start in
  the past (invalid_value) and lasts at most 24 hours (calendar entries: 31 days);
- a room is never double-booked: an overlapping active booking is a conflict; rooms that are not
  bookable are refused (forbidden);
- everyone invited to an in-person meeting who has not declined must fit in the room: more is a
  conflict;
- only the organiser changes a meeting (forbidden); cancelled meetings and meetings that have
  already started cannot be changed or answered (conflict);
- adding what is already there (an invitee, a chat member, the same answer, the same calendar
  entry, a chat name the user already owns) is a conflict;
- transfer_employee: the current employee must head the employee's department or a department
  above it; department heads cannot be transferred; the transferred employee's manager becomes
  the head of the new department and both headcounts are updated.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Any, Literal

from ...engine.query import Where, bool_columns, check_text, require
from ...engine.search import like_pattern
from ...engine.tools import ErrorCode, ToolEnv, ToolError, ToolRegistry, not_found, paginate

TOOLS = ToolRegistry("meeting")

MAX_MEETING_HOURS = 24
MAX_ENTRY_DAYS = 31
MAX_INVITEES = 300  # an online meeting's limit
MAX_CHAT_MEMBERS = 500
Equipment = Literal["projector", "video_conferencing", "whiteboard", "phone"]
EQUIPMENT_COLUMNS = {
    "projector": "has_projector",
    "video_conferencing": "has_video_conferencing",
    "whiteboard": "has_whiteboard",
    "phone": "has_phone",
}

EMPLOYEE_SELECT = """
SELECT e.id AS employee_id, e.name, e.employee_no, e.title, e.level, e.job_family, e.status, e.email, e.phone,
       e.department_id, d.name AS department, e.manager_id, mg.name AS manager, l.city AS location, e.hire_date
FROM employees e
CROSS JOIN departments d ON d.id = e.department_id
CROSS JOIN locations l ON l.id = e.location_id
LEFT JOIN employees mg ON mg.id = e.manager_id
"""

DEPARTMENT_SELECT = """
SELECT d.id AS department_id, d.name, d.code, d.kind, d.parent_id, p.name AS parent, d.headcount,
       h.employee_id AS head_id, he.name AS head, l.city AS location
FROM departments d
LEFT JOIN departments p ON p.id = d.parent_id
LEFT JOIN department_heads h ON h.department_id = d.id
LEFT JOIN employees he ON he.id = h.employee_id
CROSS JOIN locations l ON l.id = d.location_id
"""

ROOM_SELECT = """
SELECT r.id AS room_id, r.name, b.name AS building, b.id AS building_id, l.city, r.floor, r.capacity, r.room_type,
       r.has_projector, r.has_video_conferencing, r.has_whiteboard, r.has_phone, r.is_bookable
FROM rooms r
CROSS JOIN buildings b ON b.id = r.building_id
CROSS JOIN locations l ON l.id = b.location_id
"""

MEETING_COLUMNS = """m.id AS meeting_id, m.title, m.start_at, m.end_at, m.status, m.recurrence, m.organizer_id,
       o.name AS organizer, m.room_id, r.name AS room, b.name AS building, m.meeting_code, m.join_url, m.participant_count"""
MEETING_JOINS = """CROSS JOIN employees o ON o.id = m.organizer_id
LEFT JOIN rooms r ON r.id = m.room_id
LEFT JOIN buildings b ON b.id = r.building_id"""

BOOKING_SELECT = """
SELECT k.id AS booking_id, k.room_id, r.name AS room, b.name AS building, k.start_at, k.end_at, k.status, k.purpose,
       k.booker_id, e.name AS booked_by, k.meeting_id, m.title AS meeting, k.created_at, k.cancelled_at
FROM room_bookings k
CROSS JOIN rooms r ON r.id = k.room_id
CROSS JOIN buildings b ON b.id = r.building_id
CROSS JOIN employees e ON e.id = k.booker_id
LEFT JOIN meetings m ON m.id = k.meeting_id
"""

# One statement: the subtree's headcount and the path from the company come from recursive
# subqueries that walk the parent index.
DEPARTMENT_DETAIL = (
    DEPARTMENT_SELECT.replace(
        "SELECT ",
        """SELECT d.cost_center, d.founded_on,
 (WITH RECURSIVE sub(id) AS (SELECT d.id UNION ALL SELECT x.id FROM departments x JOIN sub ON x.parent_id = sub.id)
  SELECT SUM(x.headcount) FROM sub JOIN departments x ON x.id = sub.id) AS total_headcount,
 (SELECT COUNT(*) FROM departments x WHERE x.parent_id = d.id) AS sub_departments,
 (WITH RECURSIVE up(id, name, depth) AS (SELECT d.parent_id, NULL, 0 UNION ALL
    SELECT x.parent_id, x.name, up.depth + 1 FROM departments x JOIN up ON x.id = up.id)
  SELECT group_concat(name, ' > ') FROM (SELECT name FROM up WHERE name IS NOT NULL ORDER BY depth DESC)) AS above, """,
        1,
    )
    + " WHERE d.id = ?"
)

CHAT_SELECT = """
SELECT c.id AS chat_id, c.name, c.chat_type, c.description, c.owner_id, o.name AS owner, c.department_id,
       c.member_count, c.message_count, c.last_message_at, c.created_at
FROM chats c
CROSS JOIN employees o ON o.id = c.owner_id
"""


# -- shared helpers ------------------------------------------------------------------------

_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _moment(value: str, name: str) -> str:
    """A time given as 'YYYY-MM-DD HH:MM' or 'YYYY-MM-DD HH:MM:SS', stored with seconds."""
    text = value.strip() if isinstance(value, str) else value
    try:
        if not _MOMENT.fullmatch(text):
            raise ValueError(text)
        if len(text) == 16:
            text += ":00"
        datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise ToolError(ErrorCode.INVALID_VALUE, f"{name} must be a time like 2026-10-20 14:30, got {value!r}.") from None
    return text


def _bound(value: str | None, name: str, upper: bool) -> tuple[str, str] | None:
    """A range filter: a time or a whole day. Returns (comparison, value) for `column <op> ?`:
    a lower bound is inclusive; an upper bound includes the given time, or the whole given day."""
    if value is None:
        return None
    text = value.strip()
    if _DAY.fullmatch(text):
        try:
            day = datetime.strptime(text, "%Y-%m-%d")
        except ValueError:
            raise ToolError(
                ErrorCode.INVALID_VALUE, f"{name} must be a date like 2026-10-20 or a time like 2026-10-20 14:30, got {value!r}."
            ) from None
        if upper:
            return "<", (day + timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
        return ">=", text + " 00:00:00"
    try:
        moment = _moment(text, name)
    except ToolError:
        raise ToolError(
            ErrorCode.INVALID_VALUE, f"{name} must be a date like 2026-10-20 or a time like 2026-10-20 14:30, got {value!r}."
        ) from None
    return ("<=" if upper else ">="), moment


def _ordered(low: tuple[str, str] | None, high: tuple[str, str] | None, low_name: str, high_name: str) -> None:
    """Refuse a range filter whose end comes before its start (it could match nothing)."""
    if low and high and (high[1] <= low[1] if high[0] == "<" else high[1] < low[1]):
        raise ToolError(ErrorCode.INVALID_VALUE, f"{low_name} is after {high_name}.")


def _time_range(env: ToolEnv, start: str, end: str, max_duration: timedelta, what: str) -> tuple[str, str]:
    """Start and end of something new: end after start, not in the past, not too long."""
    start_s, end_s = _moment(start, "start"), _moment(end, "end")
    if end_s <= start_s:
        raise ToolError(ErrorCode.INVALID_VALUE, f"The end ({end_s}) must be after the start ({start_s}).")
    if start_s < env.now:
        raise ToolError(ErrorCode.INVALID_VALUE, f"The start ({start_s}) is in the past; it is now {env.now}.")
    if datetime.fromisoformat(end_s) - datetime.fromisoformat(start_s) > max_duration:
        raise ToolError(ErrorCode.INVALID_VALUE, f"{what} can last at most {_span(max_duration)}.")
    return start_s, end_s


def _span(delta: timedelta) -> str:
    return f"{delta.days} days" if delta.days > 1 else f"{int(delta.total_seconds() // 3600)} hours"


def _optional_text(value: str, name: str, longest: int) -> str:
    """A text argument that may be empty (check_text for one that may not)."""
    text = value.strip()
    if len(text) > longest:
        raise ToolError(ErrorCode.INVALID_VALUE, f"{name} must be {longest} characters long at most.")
    return text


def _employee(env: ToolEnv, employee_id: int) -> dict[str, Any]:
    row = env.one("SELECT id, name, department_id, manager_id, status FROM employees WHERE id = ?", (employee_id,))
    if row is None:
        raise not_found("employee", employee_id)
    return row


def _people(env: ToolEnv, ids: list[int], name: str, allow_self: bool = False) -> list[dict[str, Any]]:
    """Distinct, existing employees, in the order given."""
    if len(set(ids)) != len(ids):
        raise ToolError(ErrorCode.INVALID_VALUE, f"{name} lists someone twice.")
    if not allow_self and env.actor_id in ids:
        raise ToolError(ErrorCode.INVALID_VALUE, f"{name} must not include yourself.")
    return [_employee(env, i) for i in ids]


def _subtree(department_id: int) -> tuple[str, list[Any]]:
    """SQL for the ids of a department and every department below it."""
    return (
        "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT d.id FROM departments d JOIN sub ON d.parent_id = sub.id) SELECT id FROM sub",
        [department_id],
    )


def _location(env: ToolEnv, city: str) -> int:
    loc: int | None = env.scalar("SELECT id FROM locations WHERE city = ? COLLATE NOCASE", (city.strip(),))
    if loc is None:
        cities = ", ".join(r["city"] for r in env.all("SELECT city FROM locations ORDER BY id"))
        raise ToolError(ErrorCode.INVALID_VALUE, f"No office in {city!r}; the offices are in: {cities}.")
    return loc


def _room_shape(row: dict[str, Any]) -> dict[str, Any]:
    row["equipment"] = [name for name, column in EQUIPMENT_COLUMNS.items() if row.pop(column)]
    row["is_bookable"] = bool(row["is_bookable"])
    return row


def _room(env: ToolEnv, room_id: int) -> dict[str, Any]:
    row = env.one(ROOM_SELECT + " WHERE r.id = ?", (room_id,))
    if row is None:
        raise not_found("room", room_id)
    return _room_shape(row)


def _conflicts(env: ToolEnv, room_id: int, start: str, end: str) -> list[dict[str, Any]]:
    """Active bookings of the room that overlap [start, end)."""
    return env.all(
        "SELECT k.id AS booking_id, k.start_at, k.end_at, e.name AS booked_by, k.meeting_id, k.purpose FROM room_bookings k "
        "JOIN employees e ON e.id = k.booker_id WHERE k.room_id = ? AND k.status = 'active' AND k.start_at < ? AND k.end_at > ? "
        "ORDER BY k.start_at, k.id",
        (room_id, end, start),
    )


def _bookable(env: ToolEnv, room_id: int, start: str, end: str, people: int | None = None) -> dict[str, Any]:
    """The room, refused when it cannot be booked, is too small, or is taken for the time."""
    room = _room(env, room_id)
    if not room["is_bookable"]:
        raise ToolError(ErrorCode.FORBIDDEN, f"Room {room['name']} ({room['building']}) is not bookable.")
    if people is not None and people > room["capacity"]:
        raise ToolError(ErrorCode.CONFLICT, f"Room {room['name']} holds {room['capacity']} people; this meeting would have {people}.")
    taken = _conflicts(env, room_id, start, end)
    if taken:
        first = taken[0]
        raise ToolError(
            ErrorCode.CONFLICT,
            f"Room {room['name']} is already booked from {first['start_at']} to {first['end_at']} "
            f"by {first['booked_by']} (booking {first['booking_id']}).",
        )
    return room


def _my_part(env: ToolEnv, meeting_id: int) -> dict[str, Any]:
    """The meeting, visible only to its participants."""
    meeting = require(env, "meetings", meeting_id, "meeting")
    part = env.one("SELECT role, response FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", (meeting_id, env.actor_id))
    if part is None:
        raise ToolError(ErrorCode.FORBIDDEN, f"You are not invited to meeting {meeting_id}; only its participants can see it.")
    return {**meeting, "my_role": part["role"], "my_response": part["response"]}


def _changeable(env: ToolEnv, meeting: dict[str, Any]) -> None:
    if meeting["status"] == "cancelled":
        raise ToolError(ErrorCode.CONFLICT, f"Meeting {meeting['id']} ('{meeting['title']}') is cancelled and cannot be changed.")
    if meeting["start_at"] <= env.now:
        raise ToolError(
            ErrorCode.CONFLICT,
            f"Meeting {meeting['id']} ('{meeting['title']}') started at {meeting['start_at']}; it can no longer be changed.",
        )


def _organised(env: ToolEnv, meeting_id: int) -> dict[str, Any]:
    """A meeting the current employee organises and that can still be changed."""
    meeting = require(env, "meetings", meeting_id, "meeting")
    if meeting["organizer_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Only the organiser of meeting {meeting_id} can change it.")
    _changeable(env, meeting)
    return meeting


def _attending(env: ToolEnv, meeting_id: int) -> int:
    attending: int = env.scalar("SELECT COUNT(*) FROM meeting_participants WHERE meeting_id = ? AND response != 'declined'", (meeting_id,))
    return attending


def _recount(env: ToolEnv, meeting_id: int) -> int:
    env.conn.execute(
        "UPDATE meetings SET participant_count = (SELECT COUNT(*) FROM meeting_participants WHERE meeting_id = :m) WHERE id = :m",
        {"m": meeting_id},
    )
    count: int = env.scalar("SELECT participant_count FROM meetings WHERE id = ?", (meeting_id,))
    return count


def _add_entry(env: ToolEnv, meeting: dict[str, Any], employee_id: int) -> None:
    env.conn.execute(
        "INSERT OR IGNORE INTO schedule_entries (employee_id, meeting_id, kind, title, start_at, end_at, is_private, note, created_at) "
        "VALUES (?, ?, 'meeting', ?, ?, ?, 0, '', ?)",
        (employee_id, meeting["id"], meeting["title"], meeting["start_at"], meeting["end_at"], env.now),
    )


def _meeting_summary(env: ToolEnv, meeting_id: int) -> dict[str, Any]:
    return env.one(f"SELECT {MEETING_COLUMNS} FROM meetings m {MEETING_JOINS} WHERE m.id = ?", (meeting_id,))  # type: ignore[return-value]


def _my_chat(env: ToolEnv, chat_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chat and the current employee's membership; only members see a group chat."""
    chat = require(env, "chats", chat_id, "chat")
    me = env.one("SELECT role, muted, joined_at FROM chat_members WHERE chat_id = ? AND employee_id = ?", (chat_id, env.actor_id))
    if me is None:
        raise ToolError(ErrorCode.FORBIDDEN, f"You are not a member of chat {chat_id} ('{chat['name']}').")
    return chat, me


def _managed_chat(env: ToolEnv, chat_id: int) -> tuple[dict[str, Any], dict[str, Any]]:
    chat, me = _my_chat(env, chat_id)
    if me["role"] not in ("owner", "admin"):
        raise ToolError(ErrorCode.FORBIDDEN, f"Only the owner or an admin of '{chat['name']}' can manage its members.")
    return chat, me


def _recount_chat(env: ToolEnv, chat_id: int) -> int:
    env.conn.execute("UPDATE chats SET member_count = (SELECT COUNT(*) FROM chat_members WHERE chat_id = :c) WHERE id = :c", {"c": chat_id})
    count: int = env.scalar("SELECT member_count FROM chats WHERE id = ?", (chat_id,))
    return count


# -- me and colleagues ---------------------------------------------------------------------


@TOOLS.read
def get_my_profile(env: ToolEnv) -> dict[str, Any]:
    """Show the current employee: name, title, department, manager, office, and what needs attention
    (meeting invitations not yet answered, upcoming meetings), plus the current time.
    """
    me = env.one(EMPLOYEE_SELECT + " WHERE e.id = ?", (env.actor_id,))
    assert me is not None
    counts = env.one(
        "SELECT (SELECT department_id FROM department_heads WHERE employee_id = :u) AS heads_department_id, "
        "(SELECT COUNT(*) FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = :u "
        " AND p.response = 'invited' AND m.status = 'scheduled' AND m.start_at > :now) AS pending_invitations, "
        "(SELECT COUNT(*) FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = :u "
        " AND p.response IN ('accepted', 'tentative') AND m.status = 'scheduled' AND m.start_at > :now) AS upcoming_meetings",
        {"u": env.actor_id, "now": env.now},
    )
    return {**me, **(counts or {}), "now": env.now}


@TOOLS.read
def search_employees(
    env: ToolEnv,
    query: str = "",
    department_id: int | None = None,
    include_sub_departments: bool = False,
    title: str | None = None,
    manager_id: int | None = None,
    location: str | None = None,
    status: Literal["active", "on_leave"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """Search the company directory, sorted by name.

    Returns one page (20 employees) with the total: id, name, employee number, title, level,
    department, manager, office city, email, phone, hire date and status.

    Args:
        query: Text to find in the name, email or employee number (case-insensitive); empty matches everyone.
        department_id: Only employees of this department.
        include_sub_departments: With department_id, also employees of every department below it.
        title: Text to find in the job title, e.g. "engineer".
        manager_id: Only the direct reports of this employee.
        location: Only employees based in this office city, e.g. "Beijing".
        status: Only active employees, or only those on leave.
        page: Page number, from 1.
    """
    where = Where()
    text = query.strip()
    if text:
        where.add(
            "(e.name LIKE ? ESCAPE '\\' OR e.email LIKE ? ESCAPE '\\' OR e.employee_no LIKE ? ESCAPE '\\')", *[like_pattern(text)] * 3
        )
    if department_id is not None:
        require(env, "departments", department_id, "department")
        if include_sub_departments:
            sql, sub = _subtree(department_id)
            where.add(f"e.department_id IN ({sql})", *sub)
        else:
            where.add("e.department_id = ?", department_id)
    if title is not None and title.strip():
        where.add("e.title LIKE ? ESCAPE '\\'", like_pattern(title.strip()))
    if manager_id is not None:
        _employee(env, manager_id)
        where.add("e.manager_id = ?", manager_id)
    if location is not None:
        where.add("e.location_id = ?", _location(env, location))
    if status is not None:
        where.add("e.status = ?", status)
    condition, params = where.clause, where.params
    return paginate(
        env,
        EMPLOYEE_SELECT + condition,
        params,
        page,
        "e.name COLLATE NOCASE, e.id",
        count=(f"SELECT COUNT(*) FROM employees e{condition}", params),
    )


@TOOLS.read
def get_employee(env: ToolEnv, employee_id: int) -> dict[str, Any]:
    """Show a colleague: title, level, department, manager, office, contact details, the department
    they head (if any) and how many people report to them.

    Args:
        employee_id: The employee's id.
    """
    row = env.one(
        EMPLOYEE_SELECT.replace(
            "SELECT ",
            "SELECT (SELECT h.department_id FROM department_heads h WHERE h.employee_id = e.id) "
            "AS heads_department_id, (SELECT COUNT(*) FROM employees r WHERE r.manager_id = e.id) AS direct_reports, ",
            1,
        )
        + " WHERE e.id = ?",
        (employee_id,),
    )
    if row is None:
        raise not_found("employee", employee_id)
    return row


# -- the organisation ----------------------------------------------------------------------


@TOOLS.read
def get_department(env: ToolEnv, department_id: int) -> dict[str, Any]:
    """Show a department: its kind (company, division, department, team), head, where it sits in
    the organisation (the path from the company down), its direct headcount, the headcount of it
    and everything below it, and how many sub-departments it has.

    Args:
        department_id: The department's id.
    """
    dept = env.one(DEPARTMENT_DETAIL, (department_id,))
    if dept is None:
        raise not_found("department", department_id)
    above = dept.pop("above")
    dept["path"] = f"{above} > {dept['name']}" if above else dept["name"]
    return dept


@TOOLS.read
def list_sub_departments(env: ToolEnv, department_id: int | None = None, recursive: bool = False, page: int = 1) -> dict[str, Any]:
    """List the departments right under a department (or everything below it), with their head
    and direct headcount, in organisation order.

    Args:
        department_id: The department whose sub-departments to list; default: the company, whose sub-departments are the divisions.
        recursive: True to list every department below, at any depth, not only the direct ones.
        page: Page number, from 1.
    """
    if department_id is None:
        department_id = env.scalar("SELECT id FROM departments WHERE parent_id IS NULL ORDER BY id LIMIT 1")
    else:
        require(env, "departments", department_id, "department")
    if recursive:
        sql, sub = _subtree(department_id)
        where = Where().add(f"d.id IN ({sql})", *sub).add("d.id != ?", department_id)
    else:
        where = Where().add("d.parent_id = ?", department_id)
    return paginate(env, DEPARTMENT_SELECT + where.clause, where.params, page, "d.id")


@TOOLS.read
def list_department_members(
    env: ToolEnv,
    department_id: int,
    include_sub_departments: bool = False,
    status: Literal["active", "on_leave"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List the employees of a department, sorted by name, with the head flagged.

    Args:
        department_id: The department's id.
        include_sub_departments: True to include the employees of every department below it.
        status: Only active employees, or only those on leave.
        page: Page number, from 1.
    """
    require(env, "departments", department_id, "department")
    if include_sub_departments:
        sql, sub = _subtree(department_id)
        where = Where().add(f"e.department_id IN ({sql})", *sub)
    else:
        where = Where().add("e.department_id = ?", department_id)
    if status is not None:
        where.add("e.status = ?", status)
    select = (
        EMPLOYEE_SELECT.replace(
            "SELECT ",
            "SELECT EXISTS (SELECT 1 FROM department_heads h WHERE h.employee_id = e.id AND h.department_id = e.department_id) "
            "AS is_department_head, ",
            1,
        )
        + where.clause
    )
    count = (f"SELECT COUNT(*) FROM employees e{where.clause}", where.params)
    return paginate(env, select, where.params, page, "e.name COLLATE NOCASE, e.id", bool_columns("is_department_head"), count=count)


# -- rooms ---------------------------------------------------------------------------------


def _room_filters(
    env: ToolEnv, location: str | None, building_id: int | None, min_capacity: int | None, equipment: list[Any] | None
) -> Where:
    where = Where()
    if location is not None:
        where.add("b.location_id = ?", _location(env, location))
    if building_id is not None:
        if env.scalar("SELECT 1 FROM buildings WHERE id = ?", (building_id,)) is None:
            raise not_found("building", building_id)
        where.add("r.building_id = ?", building_id)
    if min_capacity is not None:
        where.add("r.capacity >= ?", min_capacity)
    for item in sorted(set(equipment or [])):
        where.add(f"r.{EQUIPMENT_COLUMNS[item]} = 1")
    return where


@TOOLS.read
def search_rooms(
    env: ToolEnv,
    query: str = "",
    location: str | None = None,
    building_id: int | None = None,
    floor: int | None = None,
    min_capacity: int | None = None,
    equipment: list[Equipment] | None = None,
    room_type: Literal["huddle", "meeting", "conference", "boardroom", "training"] | None = None,
    bookable_only: bool = False,
    page: int = 1,
) -> dict[str, Any]:
    """Search meeting rooms, smallest first: each with its building, city, floor, capacity, type,
    equipment and whether it can be booked.

    Args:
        query: Text to find in the room's name or its building's name (case-insensitive).
        location: Only rooms in this office city, e.g. "Shenzhen".
        building_id: Only rooms in this building.
        floor: Only rooms on this floor.
        min_capacity: Only rooms for at least this many people.
        equipment: Only rooms with all of this equipment.
        room_type: Only rooms of this type.
        bookable_only: True to leave out rooms that cannot be booked.
        page: Page number, from 1.
    """
    where = _room_filters(env, location, building_id, min_capacity, equipment)
    if query.strip():
        pattern = like_pattern(query.strip())
        where.add("(r.name LIKE ? ESCAPE '\\' OR b.name LIKE ? ESCAPE '\\')", pattern, pattern)
    if floor is not None:
        where.add("r.floor = ?", floor)
    if room_type is not None:
        where.add("r.room_type = ?", room_type)
    if bookable_only:
        where.add("r.is_bookable = 1")
    return paginate(env, ROOM_SELECT + where.clause, where.params, page, "r.capacity, r.name, r.id", _room_shape)


@TOOLS.read
def check_room_availability(env: ToolEnv, room_id: int, start: str, end: str) -> dict[str, Any]:
    """Check whether a room is free for a time range, and which bookings are in the way.

    Args:
        room_id: The room's id.
        start: Start of the range, "YYYY-MM-DD HH:MM".
        end: End of the range, "YYYY-MM-DD HH:MM" (a booking ending exactly at start, or starting exactly at end, is no conflict).
    """
    start_s, end_s = _moment(start, "start"), _moment(end, "end")
    if end_s <= start_s:
        raise ToolError(ErrorCode.INVALID_VALUE, f"The end ({end_s}) must be after the start ({start_s}).")
    room = _room(env, room_id)
    conflicts = _conflicts(env, room_id, start_s, end_s)
    return {
        "room": room,
        "start": start_s,
        "end": end_s,
        "available": room["is_bookable"] and not conflicts,
        "is_bookable": room["is_bookable"],
        "conflicts": conflicts,
    }


@TOOLS.read
def find_available_rooms(
    env: ToolEnv,
    start: str,
    end: str,
    min_capacity: int | None = None,
    equipment: list[Equipment] | None = None,
    location: str | None = None,
    building_id: int | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """Find bookable rooms that are free for the whole time range, smallest first.

    Args:
        start: Start of the range, "YYYY-MM-DD HH:MM".
        end: End of the range, "YYYY-MM-DD HH:MM".
        min_capacity: Only rooms for at least this many people.
        equipment: Only rooms with all of this equipment.
        location: Only rooms in this office city, e.g. "Shanghai".
        building_id: Only rooms in this building.
        page: Page number, from 1.
    """
    start_s, end_s = _moment(start, "start"), _moment(end, "end")
    if end_s <= start_s:
        raise ToolError(ErrorCode.INVALID_VALUE, f"The end ({end_s}) must be after the start ({start_s}).")
    where = _room_filters(env, location, building_id, min_capacity, equipment).add("r.is_bookable = 1")
    where.add(
        "NOT EXISTS (SELECT 1 FROM room_bookings k WHERE k.room_id = r.id AND k.status = 'active' AND k.start_at < ? AND k.end_at > ?)",
        end_s,
        start_s,
    )
    return paginate(env, ROOM_SELECT + where.clause, where.params, page, "r.capacity, r.name, r.id", _room_shape)


@TOOLS.read
def list_room_bookings(
    env: ToolEnv,
    room_id: int | None = None,
    mine: bool = False,
    start: str | None = None,
    end: str | None = None,
    status: Literal["active", "cancelled"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List room bookings in time order: a room's bookings, or the current employee's own, with who
    booked, for which meeting (if any) and the booking's status.

    Args:
        room_id: Only bookings of this room.
        mine: True for only the bookings the current employee made.
        start: Only bookings that end after this time ("YYYY-MM-DD HH:MM", or a date for its start).
        end: Only bookings that start before this time ("YYYY-MM-DD HH:MM", or a date for the whole day).
        status: Only active or only cancelled bookings.
        page: Page number, from 1.
    """
    low, high = _bound(start, "start", upper=False), _bound(end, "end", upper=True)
    _ordered(low, high, "start", "end")
    where = Where()
    if room_id is not None:
        _room(env, room_id)
        where.add("k.room_id = ?", room_id)
    if mine:
        where.add("k.booker_id = ?", env.actor_id)
    if low:
        where.add("k.end_at > ?", low[1])
    if high:
        where.add("k.start_at < ?", high[1])
    if status is not None:
        where.add("k.status = ?", status)
    return paginate(
        env,
        BOOKING_SELECT + where.clause,
        where.params,
        page,
        "k.start_at, k.id",
        count=(f"SELECT COUNT(*) FROM room_bookings k{where.clause}", where.params),
    )


# -- meetings ------------------------------------------------------------------------------


@TOOLS.read
def list_my_meetings(
    env: ToolEnv,
    start_from: str | None = None,
    start_to: str | None = None,
    status: Literal["scheduled", "completed", "cancelled"] | None = None,
    role: Literal["organiser", "required", "optional"] | None = None,
    response: Literal["invited", "accepted", "declined", "tentative"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List the meetings the current employee is invited to (or organises), in start order, with
    their role and answer.

    Args:
        start_from: Only meetings starting at or after this time ("YYYY-MM-DD HH:MM", or a date for its 00:00).
        start_to: Only meetings starting at or before this time ("YYYY-MM-DD HH:MM", or a date for the whole day).
        status: Only scheduled, completed or cancelled meetings.
        role: Only meetings where the current employee has this role.
        response: Only meetings the current employee has answered this way (invited = not answered yet).
        page: Page number, from 1.
    """
    low, high = _bound(start_from, "start_from", upper=False), _bound(start_to, "start_to", upper=True)
    _ordered(low, high, "start_from", "start_to")
    where = Where().add("p.employee_id = ?", env.actor_id)
    if low:
        where.add("m.start_at >= ?", low[1])
    if high:
        where.add(f"m.start_at {high[0]} ?", high[1])
    if status is not None:
        where.add("m.status = ?", status)
    if role is not None:
        where.add("p.role = ?", role)
    if response is not None:
        where.add("p.response = ?", response)
    select = (
        f"SELECT p.role AS my_role, p.response AS my_response, {MEETING_COLUMNS} FROM meeting_participants p "
        f"CROSS JOIN meetings m ON m.id = p.meeting_id {MEETING_JOINS}{where.clause}"
    )
    count = (f"SELECT COUNT(*) FROM meeting_participants p CROSS JOIN meetings m ON m.id = p.meeting_id{where.clause}", where.params)
    return paginate(env, select, where.params, page, "m.start_at, m.id", count=count)


PARTICIPANT_SELECT = """
SELECT p.employee_id, e.name, e.title, d.name AS department, p.role, p.response, p.invited_at, p.responded_at, p.attended
FROM meeting_participants p
CROSS JOIN employees e ON e.id = p.employee_id
CROSS JOIN departments d ON d.id = e.department_id
"""
PARTICIPANT_ORDER = "(p.role = 'organiser') DESC, e.name COLLATE NOCASE, p.employee_id"


_participant = bool_columns("attended")


@TOOLS.read
def get_meeting(env: ToolEnv, meeting_id: int, page: int = 1) -> dict[str, Any]:
    """Show a meeting the current employee is invited to: time, room and building (or online
    only), join link and code, agenda, status, the room booking, how many answered each way, the
    current employee's own role and answer, and the participants (organiser first, then by name),
    20 per page.

    Args:
        meeting_id: The meeting's id.
        page: Page of the participant list, from 1.
    """
    mine = _my_part(env, meeting_id)
    meeting = _meeting_summary(env, meeting_id)
    meeting.update(
        agenda=mine["agenda"],
        created_at=mine["created_at"],
        cancelled_at=mine["cancelled_at"],
        cancel_reason=mine["cancel_reason"],
        my_role=mine["my_role"],
        my_response=mine["my_response"],
    )
    meeting["booking_id"] = env.scalar(
        "SELECT id FROM room_bookings WHERE meeting_id = ? ORDER BY status = 'active' DESC, id DESC LIMIT 1", (meeting_id,)
    )
    answers = dict(
        env.conn.execute(
            "SELECT response, COUNT(*) FROM meeting_participants WHERE meeting_id = ? GROUP BY response", (meeting_id,)
        ).fetchall()
    )
    meeting["responses"] = {r: answers.get(r, 0) for r in ("accepted", "tentative", "declined", "invited")}
    meeting["participants"] = paginate(
        env, PARTICIPANT_SELECT + " WHERE p.meeting_id = ?", [meeting_id], page, PARTICIPANT_ORDER, _participant
    )
    return meeting


@TOOLS.read
def list_meeting_participants(
    env: ToolEnv,
    meeting_id: int,
    response: Literal["invited", "accepted", "declined", "tentative"] | None = None,
    role: Literal["organiser", "required", "optional"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List who is invited to a meeting the current employee is invited to: organiser first, then
    by name, with role, answer and (for completed meetings) attendance.

    Args:
        meeting_id: The meeting's id.
        response: Only participants who answered this way (invited = not answered yet).
        role: Only participants with this role.
        page: Page number, from 1.
    """
    _my_part(env, meeting_id)
    where = Where().add("p.meeting_id = ?", meeting_id)
    if response is not None:
        where.add("p.response = ?", response)
    if role is not None:
        where.add("p.role = ?", role)
    return paginate(env, PARTICIPANT_SELECT + where.clause, where.params, page, PARTICIPANT_ORDER, _participant)


@TOOLS.read
def get_schedule(
    env: ToolEnv,
    employee_id: int | None = None,
    start: str | None = None,
    end: str | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """Show a calendar: the entries (accepted meetings, focus time, travel, leave...) that overlap
    a time range, in start order. A colleague's private entries show only as "Busy".

    Args:
        employee_id: Whose calendar; default: the current employee's.
        start: Start of the range ("YYYY-MM-DD HH:MM", or a date for its 00:00); default: today 00:00.
        end: End of the range, exclusive ("YYYY-MM-DD HH:MM", or a date to include that whole day); default: 7 days after the start.
        page: Page number, from 1.
    """
    who = env.actor_id if employee_id is None else employee_id
    person = _employee(env, who)
    low = _bound(start, "start", upper=False) or (">=", env.now[:10] + " 00:00:00")
    high = _bound(end, "end", upper=True)
    window_end = high[1] if high else (datetime.fromisoformat(low[1]) + timedelta(days=7)).strftime("%Y-%m-%d %H:%M:%S")
    if window_end <= low[1]:
        raise ToolError(ErrorCode.INVALID_VALUE, f"The end of the range ({window_end}) is not after its start ({low[1]}).")
    hidden = "s.is_private = 1 AND s.employee_id != ?"
    select = (
        f"SELECT s.id AS entry_id, s.start_at, s.end_at, CASE WHEN {hidden} THEN 'busy' ELSE s.kind END AS kind, "
        f"CASE WHEN {hidden} THEN 'Busy' ELSE s.title END AS title, "
        f"CASE WHEN {hidden} THEN NULL ELSE s.meeting_id END AS meeting_id, "
        f"CASE WHEN {hidden} THEN '' ELSE s.note END AS note, s.is_private "
        "FROM schedule_entries s WHERE s.employee_id = ? AND s.start_at < ? AND s.end_at > ?"
    )
    params = [env.actor_id] * 4 + [who, window_end, low[1]]
    result = paginate(
        env,
        select,
        params,
        page,
        "s.start_at, s.id",
        bool_columns("is_private"),
        count=(
            "SELECT COUNT(*) FROM schedule_entries s WHERE s.employee_id = ? AND s.start_at < ? AND s.end_at > ?",
            [who, window_end, low[1]],
        ),
    )
    return {"employee_id": who, "name": person["name"], "start": low[1], "end": window_end, **result}


# -- chats ---------------------------------------------------------------------------------


@TOOLS.read
def list_my_chats(
    env: ToolEnv,
    query: str = "",
    chat_type: Literal["department", "project", "social", "announcement"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List the group chats the current employee belongs to, most recently active first, with
    their role in each and whether they muted it.

    Args:
        query: Text to find in the chat's name (case-insensitive).
        chat_type: Only chats of this type.
        page: Page number, from 1.
    """
    where = Where().add("cm.employee_id = ?", env.actor_id)
    if query.strip():
        where.add("c.name LIKE ? ESCAPE '\\'", like_pattern(query.strip()))
    if chat_type is not None:
        where.add("c.chat_type = ?", chat_type)
    select = (
        CHAT_SELECT.replace("SELECT ", "SELECT cm.role AS my_role, cm.muted, cm.joined_at, ", 1).replace(
            "FROM chats c", "FROM chat_members cm CROSS JOIN chats c ON c.id = cm.chat_id"
        )
        + where.clause
    )
    return paginate(env, select, where.params, page, "c.last_message_at IS NULL, c.last_message_at DESC, c.id", bool_columns("muted"))


@TOOLS.read
def get_chat(env: ToolEnv, chat_id: int) -> dict[str, Any]:
    """Show a group chat the current employee belongs to: owner, admins, member and message
    counts, the department of a department chat, and the current employee's role.

    Args:
        chat_id: The chat's id.
    """
    _, me = _my_chat(env, chat_id)
    chat = env.one(
        CHAT_SELECT.replace("SELECT ", "SELECT (SELECT name FROM departments WHERE id = c.department_id) AS department, ", 1)
        + " WHERE c.id = ?",
        (chat_id,),
    )
    assert chat is not None
    chat["admins"] = env.all(
        "SELECT cm.employee_id, e.name FROM chat_members cm JOIN employees e ON e.id = cm.employee_id "
        "WHERE cm.chat_id = ? AND cm.role = 'admin' ORDER BY e.name, e.id",
        (chat_id,),
    )
    chat.update(my_role=me["role"], muted=bool(me["muted"]), joined_at=me["joined_at"])
    return chat


@TOOLS.read
def list_chat_members(
    env: ToolEnv,
    chat_id: int,
    role: Literal["owner", "admin", "member"] | None = None,
    page: int = 1,
) -> dict[str, Any]:
    """List the members of a group chat the current employee belongs to: owner and admins first,
    then by name, with their title, department and when they joined.

    Args:
        chat_id: The chat's id.
        role: Only members with this role.
        page: Page number, from 1.
    """
    _my_chat(env, chat_id)
    where = Where().add("cm.chat_id = ?", chat_id)
    if role is not None:
        where.add("cm.role = ?", role)
    select = (
        "SELECT cm.employee_id, e.name, e.title, d.name AS department, cm.role, cm.joined_at, cm.muted FROM chat_members cm "
        "CROSS JOIN employees e ON e.id = cm.employee_id CROSS JOIN departments d ON d.id = e.department_id" + where.clause
    )
    order = "CASE cm.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, e.name COLLATE NOCASE, cm.employee_id"
    return paginate(env, select, where.params, page, order, bool_columns("muted"))


@TOOLS.read
def list_chat_messages(env: ToolEnv, chat_id: int, page: int = 1) -> dict[str, Any]:
    """List the messages of a group chat the current employee belongs to, newest first. Recalled
    messages show as recalled, without their content.

    Args:
        chat_id: The chat's id.
        page: Page number, from 1 (page 1 has the newest messages).
    """
    chat, _ = _my_chat(env, chat_id)
    select = (
        "SELECT x.id AS message_id, x.sent_at, x.sender_id, e.name AS sender, x.message_type, "
        "CASE WHEN x.is_recalled THEN '(message recalled)' ELSE x.content END AS content, "
        "CASE WHEN x.is_recalled THEN NULL ELSE x.attachment_name END AS attachment_name, "
        "x.reply_to_id AS reply_to_message_id, x.meeting_id, x.edited_at, x.is_recalled, x.reaction_count "
        "FROM chat_messages x CROSS JOIN employees e ON e.id = x.sender_id WHERE x.chat_id = ?"
    )
    return paginate(
        env, select, [chat_id], page, "x.sent_at DESC, x.id DESC", bool_columns("is_recalled"), count=chat["message_count"]
    )  # a stored aggregate the tools keep exact


# -- writes: meetings ----------------------------------------------------------------------


def _code(*parts: Any) -> str:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()
    return str(int(digest[:12], 16) % 900_000_000 + 100_000_000)


@TOOLS.write
def create_meeting(
    env: ToolEnv,
    title: str,
    start: str,
    end: str,
    participant_ids: list[int] | None = None,
    optional_participant_ids: list[int] | None = None,
    room_id: int | None = None,
    agenda: str = "",
) -> dict[str, Any]:
    """Schedule a meeting organised by the current employee. Every meeting gets an online join
    link and code; with a room it is also in person and the room is booked for the meeting's
    time. Invitees receive an invitation to answer; the organiser has accepted and the meeting is
    on their calendar.

    Refused when the time is in the past, the end is not after the start, it lasts over 24 hours,
    the room is not bookable, already booked for an overlapping time, or too small for the
    organiser and everyone invited.

    Args:
        title: The meeting's title, 1 to 100 characters.
        start: Start time, "YYYY-MM-DD HH:MM".
        end: End time, "YYYY-MM-DD HH:MM".
        participant_ids: Employees invited as required participants (not the organiser).
        optional_participant_ids: Employees invited as optional participants.
        room_id: A room to book for the meeting; leave out for an online-only meeting.
        agenda: The agenda, free text.
    """
    title = check_text(title, "The title", 100)
    start_s, end_s = _time_range(env, start, end, timedelta(hours=MAX_MEETING_HOURS), "A meeting")
    required, optional = participant_ids or [], optional_participant_ids or []
    _people(env, required + optional, "The participants")
    invitees = [(p, "required") for p in required] + [(p, "optional") for p in optional]
    if len(invitees) + 1 > MAX_INVITEES:
        raise ToolError(ErrorCode.INVALID_VALUE, f"A meeting can have at most {MAX_INVITEES} participants.")
    if room_id is not None:
        _bookable(env, room_id, start_s, end_s, people=len(invitees) + 1)
    next_id = (env.scalar("SELECT MAX(id) FROM meetings") or 0) + 1
    code = _code(next_id, env.actor_id, start_s, title)
    cur = env.conn.execute(
        "INSERT INTO meetings (title, agenda, organizer_id, room_id, start_at, end_at, status, recurrence, meeting_code, join_url, "
        "participant_count, created_at) VALUES (?, ?, ?, ?, ?, ?, 'scheduled', 'none', ?, ?, ?, ?)",
        (
            title,
            agenda.strip(),
            env.actor_id,
            room_id,
            start_s,
            end_s,
            code,
            f"https://meeting.qingyun.tech/j/{code}",
            len(invitees) + 1,
            env.now,
        ),
    )
    meeting_id = cur.lastrowid
    env.conn.execute(
        "INSERT INTO meeting_participants (meeting_id, employee_id, role, response, invited_at, responded_at) "
        "VALUES (?, ?, 'organiser', 'accepted', ?, ?)",
        (meeting_id, env.actor_id, env.now, env.now),
    )
    env.conn.executemany(
        "INSERT INTO meeting_participants (meeting_id, employee_id, role, response, invited_at) VALUES (?, ?, ?, 'invited', ?)",
        [(meeting_id, p, role, env.now) for p, role in invitees],
    )
    meeting = require(env, "meetings", meeting_id, "meeting")  # type: ignore[arg-type]
    _add_entry(env, meeting, env.actor_id)
    booking_id = None
    if room_id is not None:
        booking_id = env.conn.execute(
            "INSERT INTO room_bookings (room_id, booker_id, meeting_id, start_at, end_at, status, purpose, created_at) "
            "VALUES (?, ?, ?, ?, ?, 'active', ?, ?)",
            (room_id, env.actor_id, meeting_id, start_s, end_s, title, env.now),
        ).lastrowid
    return {**_meeting_summary(env, meeting_id), "booking_id": booking_id}  # type: ignore[arg-type]


@TOOLS.write
def cancel_meeting(env: ToolEnv, meeting_id: int, reason: str = "") -> dict[str, Any]:
    """Cancel a meeting the current employee organises that has not started yet. Its room booking
    is released and it is taken off every participant's calendar; the participants stay on record.

    Args:
        meeting_id: The meeting's id.
        reason: Why it is cancelled, shown to the participants.
    """
    meeting = _organised(env, meeting_id)
    env.conn.execute(
        "UPDATE meetings SET status = 'cancelled', cancelled_at = ?, cancel_reason = ? WHERE id = ?",
        (env.now, reason.strip() or None, meeting_id),
    )
    released = env.conn.execute(
        "UPDATE room_bookings SET status = 'cancelled', cancelled_at = ? WHERE meeting_id = ? AND status = 'active'", (env.now, meeting_id)
    ).rowcount
    removed = env.conn.execute("DELETE FROM schedule_entries WHERE meeting_id = ?", (meeting_id,)).rowcount
    return {
        "meeting_id": meeting_id,
        "title": meeting["title"],
        "status": "cancelled",
        "room_released": bool(released),
        "calendar_entries_removed": removed,
    }


@TOOLS.write
def invite_participants(
    env: ToolEnv,
    meeting_id: int,
    employee_ids: list[int],
    role: Literal["required", "optional"] = "required",
) -> dict[str, Any]:
    """Invite more employees to a meeting the current employee organises (before it starts). For an
    in-person meeting, everyone who has not declined must still fit in the room.

    Args:
        meeting_id: The meeting's id.
        employee_ids: The employees to invite (at least one; none already invited).
        role: Whether they are required or optional participants.
    """
    meeting = _organised(env, meeting_id)
    if not employee_ids:
        raise ToolError(ErrorCode.INVALID_VALUE, "Give at least one employee to invite.")
    people = _people(env, employee_ids, "employee_ids")
    already = [
        p["name"]
        for p in people
        if env.scalar("SELECT 1 FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", (meeting_id, p["id"]))
    ]
    if already:
        raise ToolError(ErrorCode.CONFLICT, f"Already invited to '{meeting['title']}': {', '.join(already)}.")
    total = meeting["participant_count"] + len(people)
    if total > MAX_INVITEES:
        raise ToolError(ErrorCode.INVALID_VALUE, f"A meeting can have at most {MAX_INVITEES} participants.")
    if meeting["room_id"] is not None:
        capacity = env.scalar("SELECT capacity FROM rooms WHERE id = ?", (meeting["room_id"],))
        coming = _attending(env, meeting_id) + len(people)
        if coming > capacity:
            raise ToolError(ErrorCode.CONFLICT, f"The room holds {capacity} people; with these invitees {coming} would come.")
    env.conn.executemany(
        "INSERT INTO meeting_participants (meeting_id, employee_id, role, response, invited_at) VALUES (?, ?, ?, 'invited', ?)",
        [(meeting_id, p["id"], role, env.now) for p in people],
    )
    count = _recount(env, meeting_id)
    return {
        "meeting_id": meeting_id,
        "title": meeting["title"],
        "invited": [{"employee_id": p["id"], "name": p["name"]} for p in people],
        "role": role,
        "participant_count": count,
    }


@TOOLS.write
def remove_participant(env: ToolEnv, meeting_id: int, employee_id: int) -> dict[str, Any]:
    """Take someone off a meeting the current employee organises (before it starts); it leaves
    their calendar. The organiser cannot be removed.

    Args:
        meeting_id: The meeting's id.
        employee_id: The participant to remove.
    """
    meeting = _organised(env, meeting_id)
    if employee_id == env.actor_id:
        raise ToolError(ErrorCode.INVALID_VALUE, "The organiser cannot be removed; cancel the meeting instead.")
    person = _employee(env, employee_id)
    if not env.conn.execute(
        "DELETE FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", (meeting_id, employee_id)
    ).rowcount:
        raise ToolError(ErrorCode.NOT_FOUND, f"{person['name']} is not invited to '{meeting['title']}'.")
    removed = env.conn.execute("DELETE FROM schedule_entries WHERE meeting_id = ? AND employee_id = ?", (meeting_id, employee_id)).rowcount
    count = _recount(env, meeting_id)
    return {
        "meeting_id": meeting_id,
        "title": meeting["title"],
        "removed_employee_id": employee_id,
        "name": person["name"],
        "calendar_entry_removed": bool(removed),
        "participant_count": count,
    }


@TOOLS.write
def respond_to_meeting(env: ToolEnv, meeting_id: int, response: Literal["accepted", "declined", "tentative"]) -> dict[str, Any]:
    """Answer a meeting invitation as the current employee (before the meeting starts). Accepting
    puts the meeting on the calendar; declining or a tentative answer takes it off. Accepting an
    in-person meeting after declining needs a free place in the room.

    Args:
        meeting_id: The meeting's id.
        response: accepted, declined or tentative.
    """
    mine = _my_part(env, meeting_id)
    if mine["my_role"] == "organiser":
        raise ToolError(ErrorCode.INVALID_VALUE, "You organise this meeting; the organiser always attends.")
    _changeable(env, mine)
    if mine["my_response"] == response:
        raise ToolError(ErrorCode.CONFLICT, f"You have already answered '{response}' to '{mine['title']}'.")
    if mine["my_response"] == "declined" and mine["room_id"] is not None:
        capacity = env.scalar("SELECT capacity FROM rooms WHERE id = ?", (mine["room_id"],))
        if _attending(env, meeting_id) + 1 > capacity:
            raise ToolError(ErrorCode.CONFLICT, f"The room of '{mine['title']}' is full ({capacity} people).")
    env.conn.execute(
        "UPDATE meeting_participants SET response = ?, responded_at = ? WHERE meeting_id = ? AND employee_id = ?",
        (response, env.now, meeting_id, env.actor_id),
    )
    if response == "accepted":
        _add_entry(env, mine, env.actor_id)
    else:
        env.conn.execute("DELETE FROM schedule_entries WHERE meeting_id = ? AND employee_id = ?", (meeting_id, env.actor_id))
    return {
        "meeting_id": meeting_id,
        "title": mine["title"],
        "response": response,
        "previous_response": mine["my_response"],
        "on_calendar": response == "accepted",
    }


# -- writes: room bookings -----------------------------------------------------------------


@TOOLS.write
def book_room(env: ToolEnv, room_id: int, start: str, end: str, purpose: str = "") -> dict[str, Any]:
    """Book a room for the current employee without a meeting (an interview, a call, quiet work).

    Refused when the time is in the past, the end is not after the start, it lasts over 24 hours,
    the room is not bookable or is already booked for an overlapping time.

    Args:
        room_id: The room's id.
        start: Start time, "YYYY-MM-DD HH:MM".
        end: End time, "YYYY-MM-DD HH:MM".
        purpose: What the room is for, up to 100 characters.
    """
    start_s, end_s = _time_range(env, start, end, timedelta(hours=MAX_MEETING_HOURS), "A booking")
    purpose = _optional_text(purpose, "The purpose", 100)
    _bookable(env, room_id, start_s, end_s)
    cur = env.conn.execute(
        "INSERT INTO room_bookings (room_id, booker_id, meeting_id, start_at, end_at, status, purpose, created_at) "
        "VALUES (?, ?, NULL, ?, ?, 'active', ?, ?)",
        (room_id, env.actor_id, start_s, end_s, purpose, env.now),
    )
    return env.one(BOOKING_SELECT + " WHERE k.id = ?", (cur.lastrowid,))  # type: ignore[return-value]


@TOOLS.write
def release_room(env: ToolEnv, booking_id: int) -> dict[str, Any]:
    """Cancel one of the current employee's standalone room bookings before it starts, freeing the
    room. A meeting's booking is released by cancelling the meeting.

    Args:
        booking_id: The booking's id.
    """
    booking = require(env, "room_bookings", booking_id, "booking")
    if booking["booker_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Booking {booking_id} was made by someone else; you can only release your own bookings.")
    if booking["status"] == "cancelled":
        raise ToolError(ErrorCode.CONFLICT, f"Booking {booking_id} is already cancelled.")
    if booking["meeting_id"] is not None:
        raise ToolError(
            ErrorCode.CONFLICT, f"Booking {booking_id} belongs to meeting {booking['meeting_id']}; cancel the meeting to free the room."
        )
    if booking["start_at"] <= env.now:
        raise ToolError(ErrorCode.CONFLICT, f"Booking {booking_id} started at {booking['start_at']}; it can no longer be released.")
    env.conn.execute("UPDATE room_bookings SET status = 'cancelled', cancelled_at = ? WHERE id = ?", (env.now, booking_id))
    return env.one(BOOKING_SELECT + " WHERE k.id = ?", (booking_id,))  # type: ignore[return-value]


# -- writes: calendar ----------------------------------------------------------------------


@TOOLS.write
def create_schedule_entry(
    env: ToolEnv,
    title: str,
    start: str,
    end: str,
    kind: Literal["focus", "travel", "leave", "personal", "training"] = "personal",
    is_private: bool = False,
    note: str = "",
) -> dict[str, Any]:
    """Add an entry to the current employee's own calendar (focus time, travel, leave...). A private
    entry shows to colleagues as "Busy" only. Meetings get on the calendar by accepting them.

    Args:
        title: The entry's title, 1 to 100 characters.
        start: Start time, "YYYY-MM-DD HH:MM" (not in the past).
        end: End time, "YYYY-MM-DD HH:MM"; at most 31 days after the start.
        kind: What kind of entry it is.
        is_private: True to hide the title and note from colleagues.
        note: A note, up to 500 characters.
    """
    title = check_text(title, "The title", 100)
    note = _optional_text(note, "The note", 500)
    start_s, end_s = _time_range(env, start, end, timedelta(days=MAX_ENTRY_DAYS), "A calendar entry")
    if env.scalar(
        "SELECT 1 FROM schedule_entries WHERE employee_id = ? AND title = ? AND start_at = ? AND end_at = ?",
        (env.actor_id, title, start_s, end_s),
    ):
        raise ToolError(ErrorCode.CONFLICT, f"Your calendar already has '{title}' from {start_s} to {end_s}.")
    cur = env.conn.execute(
        "INSERT INTO schedule_entries (employee_id, meeting_id, kind, title, start_at, end_at, is_private, note, created_at) "
        "VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?)",
        (env.actor_id, kind, title, start_s, end_s, int(is_private), note, env.now),
    )
    return {
        "entry_id": cur.lastrowid,
        "kind": kind,
        "title": title,
        "start_at": start_s,
        "end_at": end_s,
        "is_private": is_private,
        "note": note,
    }


@TOOLS.write
def delete_schedule_entry(env: ToolEnv, entry_id: int) -> dict[str, Any]:
    """Delete an entry from the current employee's own calendar. A meeting leaves the calendar by
    declining it (or, for its organiser, cancelling it).

    Args:
        entry_id: The calendar entry's id.
    """
    entry = require(env, "schedule_entries", entry_id, "calendar entry")
    if entry["employee_id"] != env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, f"Calendar entry {entry_id} is on someone else's calendar.")
    if entry["meeting_id"] is not None:
        raise ToolError(
            ErrorCode.INVALID_VALUE, f"Entry {entry_id} is the meeting '{entry['title']}'; decline the meeting (or cancel it) instead."
        )
    env.conn.execute("DELETE FROM schedule_entries WHERE id = ?", (entry_id,))
    return {"deleted_entry_id": entry_id, "title": entry["title"], "start_at": entry["start_at"], "end_at": entry["end_at"]}


# -- writes: chats -------------------------------------------------------------------------


@TOOLS.write
def create_chat(
    env: ToolEnv,
    name: str,
    member_ids: list[int],
    description: str = "",
    chat_type: Literal["project", "social"] = "project",
) -> dict[str, Any]:
    """Create a group chat owned by the current employee, with the given colleagues as members.
    Chat names are unique among the chats the current employee owns.

    Args:
        name: The chat's name, 1 to 60 characters.
        member_ids: The colleagues to add (at least one, not the current employee).
        description: What the chat is for.
        chat_type: A project (work) chat or a social chat.
    """
    name = check_text(name, "The chat name", 60)
    if not member_ids:
        raise ToolError(ErrorCode.INVALID_VALUE, "A group chat needs at least one other member.")
    people = _people(env, member_ids, "member_ids")
    if len(people) + 1 > MAX_CHAT_MEMBERS:
        raise ToolError(ErrorCode.INVALID_VALUE, f"A group chat has at most {MAX_CHAT_MEMBERS} members.")
    if env.scalar("SELECT 1 FROM chats WHERE owner_id = ? AND name = ? COLLATE NOCASE", (env.actor_id, name)):
        raise ToolError(ErrorCode.CONFLICT, f"You already own a chat named {name!r}.")
    cur = env.conn.execute(
        "INSERT INTO chats (name, description, chat_type, owner_id, department_id, created_at, member_count, message_count) "
        "VALUES (?, ?, ?, ?, NULL, ?, ?, 0)",
        (name, description.strip(), chat_type, env.actor_id, env.now, len(people) + 1),
    )
    chat_id = cur.lastrowid
    env.conn.executemany(
        "INSERT INTO chat_members (chat_id, employee_id, role, joined_at, muted) VALUES (?, ?, ?, ?, 0)",
        [(chat_id, env.actor_id, "owner", env.now)] + [(chat_id, p["id"], "member", env.now) for p in people],
    )
    return env.one(CHAT_SELECT + " WHERE c.id = ?", (chat_id,))  # type: ignore[return-value]


@TOOLS.write
def add_chat_members(env: ToolEnv, chat_id: int, employee_ids: list[int]) -> dict[str, Any]:
    """Add colleagues to a group chat; the current employee must be its owner or an admin.

    Args:
        chat_id: The chat's id.
        employee_ids: The colleagues to add (at least one; none already a member).
    """
    chat, _ = _managed_chat(env, chat_id)
    if not employee_ids:
        raise ToolError(ErrorCode.INVALID_VALUE, "Give at least one employee to add.")
    people = _people(env, employee_ids, "employee_ids")
    already = [
        p["name"] for p in people if env.scalar("SELECT 1 FROM chat_members WHERE chat_id = ? AND employee_id = ?", (chat_id, p["id"]))
    ]
    if already:
        raise ToolError(ErrorCode.CONFLICT, f"Already in '{chat['name']}': {', '.join(already)}.")
    if chat["member_count"] + len(people) > MAX_CHAT_MEMBERS:
        raise ToolError(ErrorCode.CONFLICT, f"A group chat has at most {MAX_CHAT_MEMBERS} members.")
    env.conn.executemany(
        "INSERT INTO chat_members (chat_id, employee_id, role, joined_at, muted) VALUES (?, ?, 'member', ?, 0)",
        [(chat_id, p["id"], env.now) for p in people],
    )
    count = _recount_chat(env, chat_id)
    return {
        "chat_id": chat_id,
        "name": chat["name"],
        "added": [{"employee_id": p["id"], "name": p["name"]} for p in people],
        "member_count": count,
    }


@TOOLS.write
def remove_chat_member(env: ToolEnv, chat_id: int, employee_id: int) -> dict[str, Any]:
    """Remove a member from a group chat; the current employee must be its owner or an admin.
    Nobody can remove the owner, and only the owner can remove an admin.

    Args:
        chat_id: The chat's id.
        employee_id: The member to remove.
    """
    chat, me = _managed_chat(env, chat_id)
    if employee_id == env.actor_id:
        raise ToolError(ErrorCode.INVALID_VALUE, "To leave the chat yourself, use leave_chat.")
    person = _employee(env, employee_id)
    role = env.scalar("SELECT role FROM chat_members WHERE chat_id = ? AND employee_id = ?", (chat_id, employee_id))
    if role is None:
        raise ToolError(ErrorCode.NOT_FOUND, f"{person['name']} is not a member of '{chat['name']}'.")
    if role == "owner":
        raise ToolError(ErrorCode.FORBIDDEN, "The owner of a chat cannot be removed.")
    if role == "admin" and me["role"] != "owner":
        raise ToolError(ErrorCode.FORBIDDEN, "Only the owner can remove an admin.")
    env.conn.execute("DELETE FROM chat_members WHERE chat_id = ? AND employee_id = ?", (chat_id, employee_id))
    count = _recount_chat(env, chat_id)
    return {"chat_id": chat_id, "name": chat["name"], "removed_employee_id": employee_id, "removed": person["name"], "member_count": count}


@TOOLS.write
def leave_chat(env: ToolEnv, chat_id: int) -> dict[str, Any]:
    """Leave a group chat as the current employee. The owner cannot leave their own chat.

    Args:
        chat_id: The chat's id.
    """
    chat, me = _my_chat(env, chat_id)
    if me["role"] == "owner":
        raise ToolError(ErrorCode.FORBIDDEN, f"You own '{chat['name']}'; the owner cannot leave it.")
    env.conn.execute("DELETE FROM chat_members WHERE chat_id = ? AND employee_id = ?", (chat_id, env.actor_id))
    count = _recount_chat(env, chat_id)
    return {"chat_id": chat_id, "name": chat["name"], "left": True, "member_count": count}


@TOOLS.write
def send_chat_message(env: ToolEnv, chat_id: int, content: str, reply_to_message_id: int | None = None) -> dict[str, Any]:
    """Post a text message in a group chat the current employee belongs to, optionally as a reply.

    Args:
        chat_id: The chat's id.
        content: The message, 1 to 2000 characters.
        reply_to_message_id: The message this one answers; it must be in the same chat.
    """
    chat, _ = _my_chat(env, chat_id)
    content = check_text(content, "A message", 2000)
    if reply_to_message_id is not None:
        target = env.scalar("SELECT chat_id FROM chat_messages WHERE id = ?", (reply_to_message_id,))
        if target is None:
            raise not_found("message", reply_to_message_id)
        if target != chat_id:
            raise ToolError(ErrorCode.INVALID_VALUE, f"Message {reply_to_message_id} is in another chat, not in '{chat['name']}'.")
    cur = env.conn.execute(
        "INSERT INTO chat_messages (chat_id, sender_id, reply_to_id, meeting_id, message_type, content, sent_at, is_recalled, reaction_count) "
        "VALUES (?, ?, ?, NULL, 'text', ?, ?, 0, 0)",
        (chat_id, env.actor_id, reply_to_message_id, content, env.now),
    )
    env.conn.execute("UPDATE chats SET message_count = message_count + 1, last_message_at = ? WHERE id = ?", (env.now, chat_id))
    return {
        "message_id": cur.lastrowid,
        "chat_id": chat_id,
        "chat": chat["name"],
        "content": content,
        "sent_at": env.now,
        "reply_to_message_id": reply_to_message_id,
    }


# -- writes: the organisation --------------------------------------------------------------


@TOOLS.write
def transfer_employee(env: ToolEnv, employee_id: int, department_id: int) -> dict[str, Any]:
    """Move an employee to another department. Allowed when the current employee heads the
    employee's current department or a department above it. Department heads cannot be moved
    this way. The employee's new manager is the head of the new department; both departments'
    headcounts are updated. Office, title, chats and meetings stay as they are.

    Args:
        employee_id: The employee to move.
        department_id: The department they move to.
    """
    person = _employee(env, employee_id)
    target = require(env, "departments", department_id, "department")
    if employee_id == env.actor_id:
        raise ToolError(ErrorCode.FORBIDDEN, "You cannot transfer yourself; ask the head of a department above yours.")
    authority = env.scalar(
        "WITH RECURSIVE up(id) AS (SELECT ? UNION ALL SELECT d.parent_id FROM departments d JOIN up ON d.id = up.id "
        "WHERE d.parent_id IS NOT NULL) SELECT 1 FROM department_heads h WHERE h.employee_id = ? AND h.department_id IN (SELECT id FROM up)",
        (person["department_id"], env.actor_id),
    )
    if not authority:
        raise ToolError(
            ErrorCode.FORBIDDEN, f"Only the head of {person['name']}'s department or of a department above it can transfer them."
        )
    heads = env.scalar("SELECT department_id FROM department_heads WHERE employee_id = ?", (employee_id,))
    if heads is not None:
        raise ToolError(ErrorCode.CONFLICT, f"{person['name']} heads a department; a department head cannot be transferred.")
    if person["department_id"] == department_id:
        raise ToolError(ErrorCode.CONFLICT, f"{person['name']} is already in {target['name']}.")
    new_manager = env.scalar("SELECT employee_id FROM department_heads WHERE department_id = ?", (department_id,))
    env.conn.execute("UPDATE employees SET department_id = ?, manager_id = ? WHERE id = ?", (department_id, new_manager, employee_id))
    env.conn.execute("UPDATE departments SET headcount = headcount - 1 WHERE id = ?", (person["department_id"],))
    env.conn.execute("UPDATE departments SET headcount = headcount + 1 WHERE id = ?", (department_id,))
    old_name = env.scalar("SELECT name FROM departments WHERE id = ?", (person["department_id"],))
    return {
        "employee_id": employee_id,
        "name": person["name"],
        "from_department_id": person["department_id"],
        "from_department": old_name,
        "to_department_id": department_id,
        "to_department": target["name"],
        "manager_id": new_manager,
        "manager": env.scalar("SELECT name FROM employees WHERE id = ?", (new_manager,)),
    }
