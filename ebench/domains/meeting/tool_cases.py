"""Benchmark arguments for the meeting tools (used by benchmarks/tool_calls.py)."""

from __future__ import annotations

import sqlite3
from typing import Any

NOW = "2026-10-15 09:30:00"

# The actor measured: a department head (people to transfer) with personal calendar entries, a chat
# they do not own and an upcoming room booking, who organises the most upcoming meetings.
ACTOR_SQL = f"""
SELECT h.employee_id FROM department_heads h
WHERE EXISTS (SELECT 1 FROM schedule_entries s WHERE s.employee_id = h.employee_id AND s.meeting_id IS NULL)
  AND EXISTS (SELECT 1 FROM chat_members c WHERE c.employee_id = h.employee_id AND c.role != 'owner')
  AND EXISTS (SELECT 1 FROM chat_members c WHERE c.employee_id = h.employee_id AND c.role != 'member')
  AND EXISTS (SELECT 1 FROM room_bookings b WHERE b.booker_id = h.employee_id AND b.meeting_id IS NULL AND b.status = 'active'
              AND b.start_at > '{NOW}')
  AND EXISTS (SELECT 1 FROM meetings m LEFT JOIN rooms r ON r.id = m.room_id WHERE m.organizer_id = h.employee_id
              AND m.status = 'scheduled' AND m.start_at > '{NOW}' AND m.participant_count > 1
              AND (r.capacity IS NULL OR r.capacity > m.participant_count))
ORDER BY (SELECT COUNT(*) FROM meetings m WHERE m.organizer_id = h.employee_id AND m.status = 'scheduled' AND m.start_at > '{NOW}') DESC,
         h.employee_id
LIMIT 1
"""

# get_meeting and get_chat return a meeting with a page of its participants, a chat with its admins:
# they are held to the list goal.
LOOKUPS = {"get_my_profile", "get_employee", "get_department"}


def cases(conn: sqlite3.Connection, actor: int) -> dict[str, dict[str, Any]]:
    def one(sql: str, *params: Any) -> Any:
        row = conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    dept = one("SELECT department_id FROM department_heads WHERE employee_id = ?", actor)
    big_dept = one("SELECT parent_id FROM departments WHERE parent_id IS NOT NULL GROUP BY parent_id ORDER BY COUNT(*) DESC LIMIT 1")
    colleague = one("SELECT id FROM employees WHERE department_id = ? AND id != ? ORDER BY id LIMIT 1", dept, actor)
    # Someone the actor may transfer (in the actor's department or below, not a head) and a target.
    movable = one(
        "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT d.id FROM departments d JOIN sub ON d.parent_id = sub.id) "
        "SELECT e.id FROM employees e WHERE e.department_id IN (SELECT id FROM sub) AND e.id NOT IN (SELECT employee_id FROM department_heads) "
        "ORDER BY e.id LIMIT 1",
        dept,
    )
    target = one(
        "SELECT id FROM departments WHERE id != (SELECT department_id FROM employees WHERE id = ?) AND kind = 'team' ORDER BY id LIMIT 1",
        movable,
    )
    future = one(
        "SELECT m.id FROM meetings m LEFT JOIN rooms r ON r.id = m.room_id WHERE m.organizer_id = ? AND m.status = 'scheduled' "
        "AND m.start_at > ? AND m.participant_count > 1 AND (r.capacity IS NULL OR r.capacity > m.participant_count) "
        "ORDER BY m.start_at LIMIT 1",
        actor,
        NOW,
    )
    invitee = one("SELECT employee_id FROM meeting_participants WHERE meeting_id = ? AND role != 'organiser' LIMIT 1", future)
    outsider = one(
        "SELECT id FROM employees WHERE id NOT IN (SELECT employee_id FROM meeting_participants WHERE meeting_id = ?) ORDER BY id LIMIT 1",
        future,
    )
    invited, answer = conn.execute(
        "SELECT p.meeting_id, p.response FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
        "WHERE p.employee_id = ? AND p.role != 'organiser' AND m.status = 'scheduled' AND m.start_at > ? ORDER BY m.start_at LIMIT 1",
        (actor, NOW),
    ).fetchone()
    mine = one(
        "SELECT meeting_id FROM meeting_participants WHERE employee_id = ? GROUP BY meeting_id "
        "ORDER BY (SELECT participant_count FROM meetings WHERE id = meeting_id) DESC LIMIT 1",
        actor,
    )
    room = one("SELECT room_id FROM room_bookings WHERE status = 'active' GROUP BY room_id ORDER BY COUNT(*) DESC LIMIT 1")
    free_room = one(
        "SELECT id FROM rooms WHERE is_bookable = 1 AND id NOT IN (SELECT room_id FROM room_bookings "
        "WHERE status = 'active' AND start_at < '2026-10-30 12:00:00' AND end_at > '2026-10-30 10:00:00') ORDER BY capacity DESC LIMIT 1"
    )
    booking = one(
        "SELECT id FROM room_bookings WHERE booker_id = ? AND meeting_id IS NULL AND status = 'active' AND start_at > ? LIMIT 1", actor, NOW
    )
    entry = one("SELECT id FROM schedule_entries WHERE employee_id = ? AND meeting_id IS NULL LIMIT 1", actor)
    chat = one("SELECT chat_id FROM chat_members WHERE employee_id = ? AND role IN ('owner', 'admin') ORDER BY chat_id LIMIT 1", actor)
    busiest_chat = one(
        "SELECT chat_id FROM chat_members WHERE employee_id = ? ORDER BY (SELECT member_count FROM chats WHERE id = chat_id) DESC LIMIT 1",
        actor,
    )
    member = one("SELECT employee_id FROM chat_members WHERE chat_id = ? AND role = 'member' LIMIT 1", chat)
    not_member = one(
        "SELECT id FROM employees WHERE id NOT IN (SELECT employee_id FROM chat_members WHERE chat_id = ?) ORDER BY id LIMIT 1", chat
    )
    joined = one("SELECT chat_id FROM chat_members WHERE employee_id = ? AND role != 'owner' ORDER BY chat_id LIMIT 1", actor)
    return {
        "get_my_profile": {},
        "search_employees": {},
        "search_employees(query)": {"query": "wang"},
        "search_employees(filters)": {
            "department_id": big_dept,
            "include_sub_departments": True,
            "title": "engineer",
            "location": "Shenzhen",
        },
        "get_employee": {"employee_id": colleague},
        "get_department": {"department_id": big_dept},
        "list_sub_departments": {"recursive": True},
        "list_department_members": {"department_id": big_dept, "include_sub_departments": True},
        "search_rooms": {"min_capacity": 6, "equipment": ["projector", "whiteboard"]},
        "check_room_availability": {"room_id": room, "start": "2026-10-20 09:00", "end": "2026-10-20 18:00"},
        "find_available_rooms": {"start": "2026-10-20 10:00", "end": "2026-10-20 11:00"},
        "list_room_bookings": {"room_id": room},
        "list_room_bookings(all)": {},
        "list_my_meetings": {},
        "list_my_meetings(filters)": {"start_from": "2026-09-01", "start_to": "2026-10-31", "status": "completed"},
        "get_meeting": {"meeting_id": mine},
        "list_meeting_participants": {"meeting_id": mine},
        "get_schedule": {"start": "2026-10-01", "end": "2026-10-31"},
        "get_schedule(colleague)": {"employee_id": colleague, "start": "2026-09-01", "end": "2026-10-31"},
        "list_my_chats": {},
        "get_chat": {"chat_id": busiest_chat},
        "list_chat_members": {"chat_id": busiest_chat},
        "list_chat_messages": {"chat_id": busiest_chat},
        "create_meeting": {
            "title": "Benchmark sync",
            "start": "2026-10-30 10:00",
            "end": "2026-10-30 11:00",
            "participant_ids": [colleague],
            "room_id": free_room,
        },
        "cancel_meeting": {"meeting_id": future},
        "invite_participants": {"meeting_id": future, "employee_ids": [outsider]},
        "remove_participant": {"meeting_id": future, "employee_id": invitee},
        "respond_to_meeting": {"meeting_id": invited, "response": "declined" if answer == "accepted" else "accepted"},
        "book_room": {"room_id": free_room, "start": "2026-10-30 10:00", "end": "2026-10-30 12:00", "purpose": "Benchmark"},
        "create_schedule_entry": {"title": "Benchmark focus", "start": "2026-10-30 14:00", "end": "2026-10-30 16:00", "kind": "focus"},
        "delete_schedule_entry": {"entry_id": entry},
        "create_chat": {"name": "Benchmark chat", "member_ids": [colleague]},
        "add_chat_members": {"chat_id": chat, "employee_ids": [not_member]},
        "remove_chat_member": {"chat_id": chat, "employee_id": member},
        "leave_chat": {"chat_id": joined},
        "send_chat_message": {"chat_id": busiest_chat, "content": "Benchmark message"},
        "transfer_employee": {"employee_id": movable, "department_id": target},
        "release_room": {"booking_id": booking},
    }
