"""Validation and repair rules of the meeting world (run after the fill, in this order, until settled).

The generators already respect the calendar rules (no double booking, rooms large enough, a
booking behind every in-person meeting); these rules state them so that a broken generator is
caught at build time, and repair what the generators leave on purpose (stored aggregates).
"""

from __future__ import annotations

from ...engine.repair import Aggregate, Check, NotAfterNow, NotBefore, Rule

# The manager an employee must have: the head of their department, or, for the head
# themselves, the head of the department above (the chief executive has none).
EXPECTED_MANAGER = (
    "(CASE WHEN (SELECT h.employee_id FROM department_heads h WHERE h.department_id = employees.department_id) != employees.id "
    "THEN (SELECT h.employee_id FROM department_heads h WHERE h.department_id = employees.department_id) "
    "ELSE (SELECT h.employee_id FROM department_heads h WHERE h.department_id = "
    "(SELECT d.parent_id FROM departments d WHERE d.id = employees.department_id)) END)"
)

# Another active booking of the same room overlapping this one, booked earlier (lower id).
OVERLAP = (
    "status = 'active' AND EXISTS (SELECT 1 FROM room_bookings o WHERE o.room_id = room_bookings.room_id "
    "AND o.status = 'active' AND o.id < room_bookings.id AND o.start_at < room_bookings.end_at "
    "AND o.end_at > room_bookings.start_at)"
)

# An in-person meeting that still takes place and has no active booking of its room for its time.
UNBOOKED = (
    "room_id IS NOT NULL AND status != 'cancelled' AND NOT EXISTS (SELECT 1 FROM room_bookings b "
    "WHERE b.meeting_id = meetings.id AND b.room_id = meetings.room_id AND b.status = 'active' "
    "AND b.start_at = meetings.start_at AND b.end_at = meetings.end_at)"
)

# Participants who have not declined do not fit in the meeting's room.
OVER_CAPACITY = (
    "room_id IS NOT NULL AND (SELECT COUNT(*) FROM meeting_participants p WHERE p.meeting_id = meetings.id "
    "AND p.response != 'declined') > (SELECT r.capacity FROM rooms r WHERE r.id = meetings.room_id)"
)

# A meeting entry on a calendar belongs to an accepted participant of a meeting that takes place,
# and has the meeting's title and times.
STALE_ENTRY = (
    "meeting_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
    "WHERE p.meeting_id = schedule_entries.meeting_id AND p.employee_id = schedule_entries.employee_id "
    "AND p.response = 'accepted' AND m.status != 'cancelled' AND m.start_at = schedule_entries.start_at "
    "AND m.end_at = schedule_entries.end_at AND m.title = schedule_entries.title)"
)
MISSING_ENTRY = (
    "response = 'accepted' AND (SELECT m.status FROM meetings m WHERE m.id = meeting_participants.meeting_id) != 'cancelled' "
    "AND NOT EXISTS (SELECT 1 FROM schedule_entries s WHERE s.meeting_id = meeting_participants.meeting_id "
    "AND s.employee_id = meeting_participants.employee_id)"
)

_TIMESTAMPS = [
    ("meetings", "created_at"),
    ("meetings", "cancelled_at"),
    ("meeting_participants", "invited_at"),
    ("meeting_participants", "responded_at"),
    ("room_bookings", "created_at"),
    ("room_bookings", "cancelled_at"),
    ("schedule_entries", "created_at"),
    ("chats", "created_at"),
    ("chats", "last_message_at"),
    ("chat_members", "joined_at"),
    ("chat_messages", "sent_at"),
    ("chat_messages", "edited_at"),
]

CHECKS: list[Check] = [
    # The organisation.
    Rule(
        "manager heads the department",
        "an employee's manager is the head of their department; a head's manager heads the department above",
        "employees",
        f"manager_id IS NOT {EXPECTED_MANAGER}",
        f"UPDATE employees SET manager_id = {EXPECTED_MANAGER} WHERE manager_id IS NOT {EXPECTED_MANAGER}",
    ),
    Rule(
        "head belongs to the department",
        "a department's head is an employee of that department",
        "department_heads",
        "employee_id NOT IN (SELECT id FROM employees e WHERE e.department_id = department_heads.department_id)",
        "UPDATE employees SET department_id = (SELECT h.department_id FROM department_heads h WHERE h.employee_id = employees.id) "
        "WHERE id IN (SELECT employee_id FROM department_heads h WHERE h.department_id != employees.department_id)",
    ),
    # Meetings and their status.
    Rule(
        "meeting status follows the clock",
        "a meeting that has ended is completed or cancelled; one that has not ended is scheduled or cancelled",
        "meetings",
        "status != 'cancelled' AND (status = 'completed') != (end_at <= ?)",
        (
            "UPDATE meetings SET status = 'completed' WHERE status = 'scheduled' AND end_at <= ?",
            "UPDATE meetings SET status = 'scheduled' WHERE status = 'completed' AND end_at > ?",
        ),
    ),
    Rule(
        "cancelled exactly when marked",
        "a meeting has a cancellation time exactly when it is cancelled",
        "meetings",
        "(status = 'cancelled') != (cancelled_at IS NOT NULL)",
        (
            "UPDATE meetings SET cancelled_at = created_at WHERE status = 'cancelled' AND cancelled_at IS NULL",
            "UPDATE meetings SET cancelled_at = NULL, cancel_reason = NULL WHERE status != 'cancelled' AND cancelled_at IS NOT NULL",
        ),
    ),
    Rule(
        "organiser takes part",
        "the organiser is a participant of their meeting, with the organiser role, and has accepted",
        "meetings",
        "NOT EXISTS (SELECT 1 FROM meeting_participants p WHERE p.meeting_id = meetings.id AND p.employee_id = meetings.organizer_id "
        "AND p.role = 'organiser' AND p.response = 'accepted')",
        (
            "INSERT OR IGNORE INTO meeting_participants (meeting_id, employee_id, role, response, invited_at, responded_at) "
            "SELECT id, organizer_id, 'organiser', 'accepted', created_at, created_at FROM meetings",
            "UPDATE meeting_participants SET role = 'organiser', response = 'accepted', "
            "responded_at = COALESCE(responded_at, invited_at) "
            "WHERE employee_id = (SELECT organizer_id FROM meetings m WHERE m.id = meeting_participants.meeting_id)",
        ),
    ),
    Rule(
        "one organiser",
        "only the meeting's organiser has the organiser role",
        "meeting_participants",
        "role = 'organiser' AND employee_id != (SELECT organizer_id FROM meetings m WHERE m.id = meeting_participants.meeting_id)",
        "UPDATE meeting_participants SET role = 'required' WHERE role = 'organiser' "
        "AND employee_id != (SELECT organizer_id FROM meetings m WHERE m.id = meeting_participants.meeting_id)",
    ),
    Rule(
        "responded when answered",
        "a participant has a response time exactly when they have answered (accepted, declined or tentative)",
        "meeting_participants",
        "(response = 'invited') != (responded_at IS NULL)",
        (
            "UPDATE meeting_participants SET responded_at = invited_at WHERE response != 'invited' AND responded_at IS NULL",
            "UPDATE meeting_participants SET responded_at = NULL WHERE response = 'invited'",
        ),
    ),
    Rule(
        "attendance only after the meeting",
        "attendance is recorded for completed meetings only, and a participant who declined did not attend",
        "meeting_participants",
        "(attended IS NOT NULL) != ((SELECT m.status FROM meetings m WHERE m.id = meeting_participants.meeting_id) = 'completed') "
        "OR (response = 'declined' AND attended = 1)",
        (
            "UPDATE meeting_participants SET attended = NULL WHERE attended IS NOT NULL "
            "AND (SELECT m.status FROM meetings m WHERE m.id = meeting_participants.meeting_id) != 'completed'",
            "UPDATE meeting_participants SET attended = (response = 'accepted') WHERE attended IS NULL "
            "AND (SELECT m.status FROM meetings m WHERE m.id = meeting_participants.meeting_id) = 'completed'",
            "UPDATE meeting_participants SET attended = 0 WHERE response = 'declined' AND attended = 1",
        ),
    ),
    # Rooms: no double booking, a booking behind every in-person meeting, rooms large enough.
    Rule(
        "no double booking",
        "active bookings of one room never overlap in time (a later overlapping booking is cancelled)",
        "room_bookings",
        OVERLAP,
        f"UPDATE room_bookings SET status = 'cancelled', cancelled_at = created_at WHERE {OVERLAP}",
    ),
    Rule(
        "booking follows its meeting",
        "a meeting's booking is for the meeting's room and times, and is cancelled when the meeting is",
        "room_bookings",
        "meeting_id IS NOT NULL AND EXISTS (SELECT 1 FROM meetings m WHERE m.id = room_bookings.meeting_id AND "
        "(m.room_id IS NOT room_bookings.room_id OR m.start_at != room_bookings.start_at OR m.end_at != room_bookings.end_at "
        "OR (m.status = 'cancelled' AND room_bookings.status = 'active')))",
        "UPDATE room_bookings SET status = 'cancelled', cancelled_at = COALESCE(cancelled_at, created_at) "
        "WHERE meeting_id IS NOT NULL AND status = 'active' AND EXISTS (SELECT 1 FROM meetings m WHERE m.id = room_bookings.meeting_id AND "
        "(m.room_id IS NOT room_bookings.room_id OR m.start_at != room_bookings.start_at OR m.end_at != room_bookings.end_at "
        "OR m.status = 'cancelled'))",
    ),
    Rule(
        "booking status and cancellation agree",
        "a booking has a cancellation time exactly when it is cancelled",
        "room_bookings",
        "(status = 'cancelled') != (cancelled_at IS NOT NULL)",
        (
            "UPDATE room_bookings SET cancelled_at = created_at WHERE status = 'cancelled' AND cancelled_at IS NULL",
            "UPDATE room_bookings SET cancelled_at = NULL WHERE status = 'active'",
        ),
    ),
    Rule(
        "room fits the meeting",
        "a meeting's room holds everyone invited who has not declined (else the meeting goes online-only)",
        "meetings",
        OVER_CAPACITY,
        (
            "UPDATE room_bookings SET status = 'cancelled', cancelled_at = COALESCE(cancelled_at, created_at) WHERE status = 'active' "
            f"AND meeting_id IN (SELECT id FROM meetings WHERE {OVER_CAPACITY})",
            f"UPDATE meetings SET room_id = NULL WHERE {OVER_CAPACITY}",
        ),
    ),
    Rule(
        "in-person meeting has its booking",
        "a meeting with a room that takes place has an active booking of that room for its exact time (else it goes online-only)",
        "meetings",
        UNBOOKED,
        f"UPDATE meetings SET room_id = NULL WHERE {UNBOOKED}",
    ),
    # Calendars.
    Rule(
        "meeting entries match accepted meetings",
        "a calendar's meeting entry belongs to an accepted participant of a meeting that takes place, with its title and times",
        "schedule_entries",
        STALE_ENTRY,
        f"DELETE FROM schedule_entries WHERE {STALE_ENTRY}",
    ),
    Rule(
        "accepted meetings are on the calendar",
        "an accepted meeting that takes place is on the participant's calendar",
        "meeting_participants",
        MISSING_ENTRY,
        "INSERT INTO schedule_entries (employee_id, meeting_id, kind, title, start_at, end_at, is_private, note, created_at) "
        "SELECT p.employee_id, m.id, 'meeting', m.title, m.start_at, m.end_at, 0, '', COALESCE(p.responded_at, p.invited_at) "
        "FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.response = 'accepted' AND m.status != 'cancelled' "
        "AND NOT EXISTS (SELECT 1 FROM schedule_entries s WHERE s.meeting_id = p.meeting_id AND s.employee_id = p.employee_id)",
    ),
    # Chats.
    Rule(
        "one owner per chat",
        "the chat's owner is its member with the owner role, and nobody else has that role",
        "chat_members",
        "(role = 'owner') != (employee_id = (SELECT c.owner_id FROM chats c WHERE c.id = chat_members.chat_id))",
        (
            "UPDATE chat_members SET role = 'member' WHERE role = 'owner' "
            "AND employee_id != (SELECT c.owner_id FROM chats c WHERE c.id = chat_members.chat_id)",
            "UPDATE chat_members SET role = 'owner' WHERE employee_id = (SELECT c.owner_id FROM chats c WHERE c.id = chat_members.chat_id)",
        ),
    ),
    # Chronology: nothing before what it depends on.
    NotBefore("meeting_participants", "invited_at", "meeting_id", "meetings", "created_at"),
    NotBefore("meeting_participants", "responded_at", "meeting_id", "meetings", "created_at"),
    NotBefore("chat_members", "joined_at", "chat_id", "chats", "created_at"),
    NotBefore("chat_members", "joined_at", "employee_id", "employees", "hire_date"),
    NotBefore("chat_messages", "sent_at", "chat_id", "chats", "created_at", key="id"),
    NotBefore("chat_messages", "sent_at", "reply_to_id", "chat_messages", "sent_at", key="id"),
    NotBefore("chats", "created_at", "owner_id", "employees", "hire_date", key="id"),
    Rule(
        "booked before it starts",
        "a meeting is created, and a room booked, no later than the start",
        "meetings",
        "created_at > start_at",
        "UPDATE meetings SET created_at = start_at WHERE created_at > start_at",
        kind="chronology",
    ),
    # The frozen clock: nothing recorded after now.
    NotAfterNow("employees", "hire_date", fmt="date"),
    NotAfterNow("departments", "founded_on", fmt="date"),
    NotAfterNow("department_heads", "appointed_on", fmt="date"),
    *(NotAfterNow(table, column) for table, column in _TIMESTAMPS),
    # Stored aggregates equal their child rows.
    Aggregate("departments", "headcount", "employees", "department_id"),
    Aggregate("meetings", "participant_count", "meeting_participants", "meeting_id"),
    Aggregate("chats", "member_count", "chat_members", "chat_id"),
    Aggregate("chats", "message_count", "chat_messages", "chat_id"),
    Rule(
        "last message time",
        "a chat's last_message_at is the time of its latest message (NULL without messages)",
        "chats",
        "last_message_at IS NOT (SELECT MAX(sent_at) FROM chat_messages m WHERE m.chat_id = chats.id)",
        "UPDATE chats SET last_message_at = (SELECT MAX(sent_at) FROM chat_messages m WHERE m.chat_id = chats.id) "
        "WHERE last_message_at IS NOT (SELECT MAX(sent_at) FROM chat_messages m WHERE m.chat_id = chats.id)",
        kind="aggregate",
    ),
]
