"""The meeting platform's tables (13 tables, 24 foreign keys).

Times are "YYYY-MM-DD HH:MM:SS" in the platform's single time zone (every office is on UTC+8);
dates are "YYYY-MM-DD".
"""

from __future__ import annotations

from ...engine.schema import INTEGER, TEXT, Column, Schema, Table

C = Column

_TS_GLOB = "'[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9]'"


def pk() -> Column:
    return C("id", INTEGER, primary_key=True)


def ts(name: str, doc: str = "", nullable: bool = False, volatile: bool = False) -> Column:
    check = f"{name} GLOB {_TS_GLOB}"
    if nullable:
        check = f"{name} IS NULL OR {check}"
    return C(name, TEXT, not_null=not nullable, check=check, doc=doc, volatile=volatile)


def day(name: str, doc: str = "") -> Column:
    return C(name, TEXT, not_null=True, check=f"{name} GLOB '[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]'", doc=doc)


def flag(name: str, doc: str = "") -> Column:
    return C(name, INTEGER, not_null=True, default=0, check=f"{name} IN (0,1)", doc=doc)


DEPARTMENT_KINDS = ("company", "division", "department", "team")
EMPLOYEE_STATUSES = ("active", "on_leave")
ROOM_TYPES = ("huddle", "meeting", "conference", "boardroom", "training")
MEETING_STATUSES = ("scheduled", "completed", "cancelled")
RECURRENCES = ("none", "daily", "weekly", "biweekly", "monthly")
PARTICIPANT_ROLES = ("organiser", "required", "optional")
RESPONSES = ("invited", "accepted", "declined", "tentative")
BOOKING_STATUSES = ("active", "cancelled")
ENTRY_KINDS = ("meeting", "focus", "travel", "leave", "personal", "training")
CHAT_TYPES = ("department", "project", "social", "announcement")
CHAT_ROLES = ("owner", "admin", "member")
MESSAGE_TYPES = ("text", "file", "image", "meeting_link")


def _in(name: str, values: tuple[str, ...]) -> str:
    return f"{name} IN ({', '.join(repr(v) for v in values)})"


SCHEMA = Schema(
    (
        Table(
            "locations",
            "Office cities of the company.",
            (
                pk(),
                C("city", TEXT, not_null=True, unique=True),
                C("country", TEXT, not_null=True),
                C("office_name", TEXT, not_null=True),
                C("address", TEXT, not_null=True),
                C("is_headquarters", INTEGER, not_null=True, default=0, check="is_headquarters IN (0,1)"),
            ),
        ),
        Table(
            "departments",
            "The organisation tree: company -> divisions -> departments -> teams.",
            (
                pk(),
                C("name", TEXT, not_null=True),
                C("code", TEXT, not_null=True, unique=True),
                C("kind", TEXT, not_null=True, check=_in("kind", DEPARTMENT_KINDS)),
                C("parent_id", INTEGER, references="departments", doc="NULL for the company itself"),
                C("location_id", INTEGER, not_null=True, references="locations", doc="where the department mostly sits"),
                C("cost_center", TEXT, not_null=True),
                C("headcount", INTEGER, not_null=True, default=0, doc="employees directly in this department"),
                day("founded_on"),
            ),
            unique=(("parent_id", "name"),),
        ),
        Table(
            "employees",
            "Employees (the actors).",
            (
                pk(),
                C("employee_no", TEXT, not_null=True, unique=True),
                C("name", TEXT, not_null=True),
                C("email", TEXT, not_null=True, unique=True),
                C("phone", TEXT, not_null=True),
                C("title", TEXT, not_null=True),
                C("job_family", TEXT, not_null=True),
                C("level", INTEGER, not_null=True, check="level BETWEEN 1 AND 10"),
                C("manager_id", INTEGER, references="employees", doc="NULL only for the chief executive"),
                C("department_id", INTEGER, not_null=True, references="departments"),
                C("location_id", INTEGER, not_null=True, references="locations"),
                day("hire_date"),
                C("status", TEXT, not_null=True, check=_in("status", EMPLOYEE_STATUSES)),
            ),
            checks=("manager_id IS NULL OR manager_id != id",),
            indexes=(("name COLLATE NOCASE",),),
        ),
        Table(
            "department_heads",
            "Who heads each department (one head per department, one department per head).",
            (
                C("department_id", INTEGER, primary_key=True, references="departments"),
                C("employee_id", INTEGER, not_null=True, unique=True, references="employees"),
                day("appointed_on"),
            ),
        ),
        Table(
            "buildings",
            "Office buildings; each stands in one office city.",
            (
                pk(),
                C("location_id", INTEGER, not_null=True, references="locations"),
                C("name", TEXT, not_null=True, unique=True),
                C("code", TEXT, not_null=True, unique=True),
                C("address", TEXT, not_null=True),
                C("floors", INTEGER, not_null=True, check="floors BETWEEN 1 AND 60"),
            ),
        ),
        Table(
            "rooms",
            "Meeting rooms with their capacity and equipment.",
            (
                pk(),
                C("building_id", INTEGER, not_null=True, references="buildings"),
                C("name", TEXT, not_null=True),
                C("floor", INTEGER, not_null=True),
                C("capacity", INTEGER, not_null=True, check="capacity BETWEEN 2 AND 200"),
                C("room_type", TEXT, not_null=True, check=_in("room_type", ROOM_TYPES)),
                flag("has_projector"),
                flag("has_video_conferencing"),
                flag("has_whiteboard"),
                flag("has_phone"),
                flag("is_bookable", "0 for rooms reserved for executives or under renovation"),
            ),
            unique=(("building_id", "name"),),
            indexes=(("capacity",),),
        ),
        Table(
            "meetings",
            "Meetings: online (every meeting has a link and code) and, when a room is set, in person too.",
            (
                pk(),
                C("title", TEXT, not_null=True, check="length(title) BETWEEN 1 AND 100"),
                C("agenda", TEXT, not_null=True, default=""),
                C("organizer_id", INTEGER, not_null=True, references="employees"),
                C("room_id", INTEGER, references="rooms", doc="NULL for an online-only meeting"),
                ts("start_at"),
                ts("end_at"),
                C("status", TEXT, not_null=True, check=_in("status", MEETING_STATUSES)),
                C("recurrence", TEXT, not_null=True, default="none", check=_in("recurrence", RECURRENCES)),
                C("meeting_code", TEXT, not_null=True, volatile=True, doc="9-digit join code, random"),
                C("join_url", TEXT, not_null=True, volatile=True, doc="derived from the code"),
                C("participant_count", INTEGER, not_null=True, default=0, doc="invited people, organiser included"),
                ts("created_at"),
                ts("cancelled_at", nullable=True),
                C("cancel_reason", TEXT),
            ),
            checks=("end_at > start_at",),
            indexes=(("start_at",), ("organizer_id", "start_at")),
        ),
        Table(
            "meeting_participants",
            "Who is invited to a meeting, in which role, and their answer.",
            (
                C("meeting_id", INTEGER, not_null=True, references="meetings"),
                C("employee_id", INTEGER, not_null=True, references="employees"),
                C("role", TEXT, not_null=True, check=_in("role", PARTICIPANT_ROLES)),
                C("response", TEXT, not_null=True, check=_in("response", RESPONSES)),
                ts("invited_at"),
                ts("responded_at", nullable=True),
                C("attended", INTEGER, check="attended IN (0,1)", doc="whether they joined; NULL until the meeting is completed"),
            ),
            primary_key=("meeting_id", "employee_id"),
        ),
        Table(
            "room_bookings",
            "Room reservations: for a meeting or standalone.",
            (
                pk(),
                C("room_id", INTEGER, not_null=True, references="rooms"),
                C("booker_id", INTEGER, not_null=True, references="employees"),
                C("meeting_id", INTEGER, references="meetings", doc="NULL for a standalone booking"),
                ts("start_at"),
                ts("end_at"),
                C("status", TEXT, not_null=True, check=_in("status", BOOKING_STATUSES)),
                C("purpose", TEXT, not_null=True, default=""),
                ts("created_at"),
                ts("cancelled_at", nullable=True),
            ),
            checks=("end_at > start_at",),
            indexes=(("room_id", "start_at"), ("booker_id", "start_at"), ("start_at",)),
        ),
        Table(
            "schedule_entries",
            "Calendar entries: accepted meetings and personal entries (focus, travel, leave...).",
            (
                pk(),
                C("employee_id", INTEGER, not_null=True, references="employees"),
                C("meeting_id", INTEGER, references="meetings", doc="set for kind 'meeting'"),
                C("kind", TEXT, not_null=True, check=_in("kind", ENTRY_KINDS)),
                C("title", TEXT, not_null=True),
                ts("start_at"),
                ts("end_at"),
                flag("is_private", "colleagues see a private entry as 'busy' only"),
                C("note", TEXT, not_null=True, default=""),
                ts("created_at"),
            ),
            checks=("end_at > start_at", "(kind = 'meeting') = (meeting_id IS NOT NULL)"),
            unique=(("employee_id", "meeting_id"),),
            indexes=(("employee_id", "start_at"),),
        ),
        Table(
            "chats",
            "Group chats.",
            (
                pk(),
                C("name", TEXT, not_null=True, check="length(name) BETWEEN 1 AND 60"),
                C("description", TEXT, not_null=True, default=""),
                C("chat_type", TEXT, not_null=True, check=_in("chat_type", CHAT_TYPES)),
                C("owner_id", INTEGER, not_null=True, references="employees"),
                C("department_id", INTEGER, references="departments", doc="the department of a department chat"),
                ts("created_at"),
                C("member_count", INTEGER, not_null=True, default=0),
                C("message_count", INTEGER, not_null=True, default=0),
                ts("last_message_at", nullable=True),
            ),
        ),
        Table(
            "chat_members",
            "Members of group chats and their role.",
            (
                C("chat_id", INTEGER, not_null=True, references="chats"),
                C("employee_id", INTEGER, not_null=True, references="employees"),
                C("role", TEXT, not_null=True, check=_in("role", CHAT_ROLES)),
                ts("joined_at"),
                flag("muted"),
            ),
            primary_key=("chat_id", "employee_id"),
        ),
        Table(
            "chat_messages",
            "Messages posted in group chats.",
            (
                pk(),
                C("chat_id", INTEGER, not_null=True, references="chats"),
                C("sender_id", INTEGER, not_null=True, references="employees"),
                C("reply_to_id", INTEGER, references="chat_messages", doc="the message this one answers"),
                C("meeting_id", INTEGER, references="meetings", doc="the meeting a meeting_link message shares"),
                C("message_type", TEXT, not_null=True, check=_in("message_type", MESSAGE_TYPES)),
                C("content", TEXT, not_null=True, check="length(content) BETWEEN 1 AND 2000"),
                C("attachment_name", TEXT),
                ts("sent_at"),
                ts("edited_at", nullable=True),
                flag("is_recalled"),
                C("reaction_count", INTEGER, not_null=True, default=0),
            ),
            indexes=(("chat_id", "sent_at"),),
        ),
    )
)
