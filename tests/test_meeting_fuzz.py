"""Garbage in, clear error out, for every meeting tool (the shared harness in tests/fuzzing.py).

The actor is employee 1, the chief executive (the first employee the generator creates, the
head of the company): every transfer is within their authority, so the transfer rules that
bite are the others (heads cannot move, same department). The pools mix the actor's own
meetings, bookings, entries and chats with other people's, full rooms and unbookable ones.
"""

from __future__ import annotations

from fuzzing import fuzz_suite

ACTOR = 1
NOW = "2026-10-15 09:30:00"

ID_POOLS = {
    "employee_id": "SELECT id FROM employees WHERE id <= 12 OR id IN (SELECT employee_id FROM department_heads WHERE department_id <= 10) "
    "OR id IN (SELECT MAX(id) FROM employees)",
    "participant_id": "SELECT id FROM employees WHERE id BETWEEN 2 AND 30",
    "optional_participant_id": "SELECT id FROM employees WHERE id BETWEEN 1 AND 12",
    "member_id": "SELECT id FROM employees WHERE id BETWEEN 1 AND 40",
    "manager_id": "SELECT id FROM employees WHERE id <= 10 OR id IN (SELECT employee_id FROM department_heads)",
    "department_id": "SELECT id FROM departments",
    "building_id": "SELECT id FROM buildings",
    # Small rooms (capacity bites), unbookable rooms, and rooms with upcoming bookings (double booking bites).
    "room_id": "SELECT id FROM rooms WHERE capacity <= 3 OR is_bookable = 0 OR id IN (SELECT room_id FROM room_bookings "
    f"WHERE status = 'active' AND start_at > '{NOW}' AND start_at < '2026-10-23') ORDER BY id",
    "meeting_id": "SELECT meeting_id FROM meeting_participants WHERE employee_id = :a "
    f"UNION SELECT id FROM meetings WHERE status = 'cancelled' AND id % 10 = 0 "
    f"UNION SELECT id FROM meetings WHERE start_at > '{NOW}' AND id % 7 = 0 "
    f"UNION SELECT MIN(id) FROM meetings WHERE start_at <= '{NOW}' AND end_at > '{NOW}'",
    "booking_id": "SELECT id FROM room_bookings WHERE booker_id = :a OR (meeting_id IS NULL AND start_at > '2026-10-15' AND id % 3 = 0) "
    "OR (status = 'cancelled' AND id % 11 = 0)",
    "entry_id": "SELECT id FROM schedule_entries WHERE employee_id = :a OR id % 97 = 0",
    "chat_id": "SELECT chat_id FROM chat_members WHERE employee_id = :a UNION SELECT id FROM chats WHERE id % 9 = 0",
    "reply_to_message_id": "SELECT id FROM chat_messages WHERE chat_id IN (SELECT chat_id FROM chat_members WHERE employee_id = :a) "
    "OR id % 101 = 0",
}

ODD_TEXTS = [
    # Times: valid and future, the clock itself, past, reversed pairs come from drawing two of these.
    "2026-10-20 10:00",
    "2026-10-20 11:00",
    "2026-10-20 10:30:00",
    "2026-10-15 09:30",
    "2026-10-15 09:29:59",
    "2026-10-14 10:00",
    "2026-11-30 10:00",
    "2026-10-20",
    "2026-10-1",
    "2026-02-30 10:00",
    "2026-10-20 24:00",
    "2026-10-20T10:00",
    "tomorrow",
    "10:00",
    # Names and filters.
    "Shenzhen",
    "beijing",
    "Atlantis",
    "engineer",
    "wang",
    "Planning",
    "Team sync",
]
BOUNDARY_LENGTHS = [59, 60, 61, 99, 100, 101, 500, 501, 2000, 2001]  # chat names, titles, notes, messages

globals().update(fuzz_suite("meeting", actor=ACTOR, id_pools=ID_POOLS, odd_texts=ODD_TEXTS, boundary_lengths=BOUNDARY_LENGTHS))


def test_the_fuzz_actor_is_the_chief_executive(meeting_conn):
    # The pools and the docstring above rely on it.
    row = meeting_conn.execute(
        "SELECT manager_id, (SELECT kind FROM departments d JOIN department_heads h ON h.department_id = d.id "
        "WHERE h.employee_id = e.id) FROM employees e WHERE id = ?",
        (ACTOR,),
    ).fetchone()
    assert row == (None, "company")
