"""The meeting domain's 33 tools, called through the registry on the real built world.

Every test works on `meeting_conn`, a fresh in-memory copy of the world, and finds its data with
SQL (never a hard-coded id). Results are checked against the database; write tools are checked
row by row; every refused call must leave the content hash of the world unchanged. Each product
rule the tools enforce has its own test.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from toolcheck import all_pages, col, err, nocase, non_decreasing, ok, tool_fixtures, val

from ebench.engine.domain_registry import get_domain
from ebench.engine.tools import PAGE_SIZE, READ, WRITE
from ebench.engine.world import content_hash

_MEETING = get_domain("meeting")
ALL_TOOLS = _MEETING.tools.names
READ_TOOLS = [t.name for t in _MEETING.tools if t.kind == READ]
WRITE_TOOLS = [t.name for t in _MEETING.tools if t.kind == WRITE]
NOW = _MEETING.now
SOON = "2026-10-27"  # a Tuesday a dozen days after now


# -- helpers -------------------------------------------------------------------------------


# The employee most tests act for: a team head with a full calendar, chats they run and chats
# they only belong to, personal calendar entries, and people under them.
ACTOR_SQL = f"""
SELECT h.employee_id FROM department_heads h JOIN departments d ON d.id = h.department_id
WHERE d.kind = 'team'
  AND (SELECT COUNT(*) FROM meeting_participants p WHERE p.employee_id = h.employee_id) >= 8
  AND EXISTS (SELECT 1 FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = h.employee_id
              AND p.role != 'organiser' AND m.status = 'scheduled' AND m.start_at > '{NOW}')
  AND EXISTS (SELECT 1 FROM chat_members c WHERE c.employee_id = h.employee_id AND c.role = 'owner')
  AND EXISTS (SELECT 1 FROM chat_members c WHERE c.employee_id = h.employee_id AND c.role = 'member')
  AND EXISTS (SELECT 1 FROM schedule_entries s WHERE s.employee_id = h.employee_id AND s.meeting_id IS NULL)
ORDER BY h.employee_id LIMIT 1
"""


class Pick:
    """SQL look-ups of test data on the scratch world."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.actor: int = val(conn, ACTOR_SQL)
        assert self.actor is not None, "the world has no employee fit to act in these tests"
        self.dept: int = val(conn, "SELECT department_id FROM employees WHERE id = ?", self.actor)

    def val(self, sql: str, *params: Any) -> Any:
        found = val(self.conn, sql, *params)
        assert found is not None, f"no test data for: {sql} {params}"
        return found

    def missing(self, table: str) -> int:
        return val(self.conn, f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")

    def teammate(self, n: int = 0) -> int:
        return self.val(
            "SELECT id FROM employees WHERE department_id = ? AND id != ? ORDER BY id LIMIT 1 OFFSET ?", self.dept, self.actor, n
        )

    def stranger(self, n: int = 0) -> int:
        """An employee outside the actor's department and away from their chain of command."""
        return self.val(
            "SELECT id FROM employees WHERE department_id != ? AND id NOT IN (SELECT employee_id FROM department_heads) "
            "ORDER BY id DESC LIMIT 1 OFFSET ?",
            self.dept,
            n,
        )

    def room(self, capacity: int = 2, bookable: int = 1) -> int:
        """A room of exactly this size that is free all of SOON."""
        return self.val(
            "SELECT id FROM rooms WHERE capacity = ? AND is_bookable = ? AND id NOT IN (SELECT room_id FROM room_bookings "
            "WHERE status = 'active' AND start_at < ? AND end_at > ?) ORDER BY id LIMIT 1",
            capacity,
            bookable,
            SOON + " 23:59:59",
            SOON + " 00:00:00",
        )

    def invitation(self) -> int:
        """An upcoming meeting the actor is invited to (not as organiser)."""
        return self.val(
            "SELECT p.meeting_id FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = ? "
            "AND p.role != 'organiser' AND m.status = 'scheduled' AND m.start_at > ? ORDER BY m.start_at LIMIT 1",
            self.actor,
            NOW,
        )

    def foreign_meeting(self) -> int:
        return self.val(
            "SELECT id FROM meetings WHERE id NOT IN (SELECT meeting_id FROM meeting_participants WHERE employee_id = ?) "
            "ORDER BY id LIMIT 1",
            self.actor,
        )

    def own_chat(self) -> int:
        return self.val("SELECT chat_id FROM chat_members WHERE employee_id = ? AND role = 'owner' ORDER BY chat_id LIMIT 1", self.actor)

    def member_chat(self) -> int:
        return self.val("SELECT chat_id FROM chat_members WHERE employee_id = ? AND role = 'member' ORDER BY chat_id LIMIT 1", self.actor)

    def foreign_chat(self) -> int:
        return self.val(
            "SELECT id FROM chats WHERE id NOT IN (SELECT chat_id FROM chat_members WHERE employee_id = ?) ORDER BY id LIMIT 1", self.actor
        )

    def plain_member(self, chat_id: int) -> int:
        return self.val(
            "SELECT employee_id FROM chat_members WHERE chat_id = ? AND role = 'member' AND employee_id != ? ORDER BY employee_id LIMIT 1",
            chat_id,
            self.actor,
        )

    def non_member(self, chat_id: int) -> int:
        return self.val(
            "SELECT id FROM employees WHERE id NOT IN (SELECT employee_id FROM chat_members WHERE chat_id = ?) ORDER BY id LIMIT 1", chat_id
        )

    def personal_entry(self) -> int:
        return self.val("SELECT id FROM schedule_entries WHERE employee_id = ? AND meeting_id IS NULL ORDER BY id LIMIT 1", self.actor)

    def meeting_entry(self) -> int:
        return self.val("SELECT id FROM schedule_entries WHERE employee_id = ? AND meeting_id IS NOT NULL ORDER BY id LIMIT 1", self.actor)

    def other_team(self) -> int:
        return self.val("SELECT id FROM departments WHERE kind = 'team' AND id != ? ORDER BY id LIMIT 1", self.dept)


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture()
def pick(meeting_conn) -> Pick:
    return Pick(meeting_conn)


globals().update(tool_fixtures("meeting"))  # pristine, world_hash, unchanged, call


def check_invariants(meeting, conn: sqlite3.Connection) -> None:
    """Every rule of checks.py holds, and no foreign key is broken."""
    for check in meeting.checks:
        assert check.violations(conn, meeting.now) == 0, check.name
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def new_meeting(call, pick: Pick, **extra: Any) -> dict[str, Any]:
    args = {
        "title": "Test planning",
        "start": f"{SOON} 10:00",
        "end": f"{SOON} 11:00",
        "participant_ids": [pick.teammate(0), pick.teammate(1)],
        **extra,
    }
    return ok(call(pick.actor, "create_meeting", args))


# =========================================================================================
# 1. Read tools
# =========================================================================================


def test_fresh_world_copy_has_the_world_hash(meeting_conn, pristine):
    assert content_hash(meeting_conn) == pristine[0]


def test_registry_has_the_33_tools(meeting):
    assert len(meeting.tools) == 33
    assert (len(READ_TOOLS), len(WRITE_TOOLS)) == (18, 15)


def test_get_my_profile(call, meeting_conn, pick):
    me = ok(call(pick.actor, "get_my_profile", {}))
    row = meeting_conn.execute(
        "SELECT e.name, e.title, e.department_id, d.name, e.manager_id, e.email FROM employees e "
        "JOIN departments d ON d.id = e.department_id WHERE e.id = ?",
        (pick.actor,),
    ).fetchone()
    assert (me["name"], me["title"], me["department_id"], me["department"], me["manager_id"], me["email"]) == row
    assert me["employee_id"] == pick.actor and me["now"] == NOW
    assert me["heads_department_id"] == pick.dept
    assert me["pending_invitations"] == val(
        meeting_conn,
        "SELECT COUNT(*) FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
        "WHERE p.employee_id = ? AND p.response = 'invited' AND m.status = 'scheduled' AND m.start_at > ?",
        pick.actor,
        NOW,
    )


EMPLOYEE_FILTERS = {
    "query": (lambda p: {"query": "  WANG "}, "(e.name LIKE '%wang%' OR e.email LIKE '%wang%' OR e.employee_no LIKE '%wang%')"),
    "department": (lambda p: {"department_id": p.dept}, "e.department_id = {dept}"),
    "sub_departments": (
        lambda p: {"department_id": 2, "include_sub_departments": True},
        "e.department_id IN (WITH RECURSIVE s(id) AS (SELECT 2 UNION ALL SELECT d.id FROM departments d JOIN s ON d.parent_id = s.id) SELECT id FROM s)",
    ),
    "title": (lambda p: {"title": "engineer"}, "e.title LIKE '%engineer%'"),
    "manager": (lambda p: {"manager_id": p.actor}, "e.manager_id = {actor}"),
    "location": (lambda p: {"location": "beijing"}, "e.location_id = (SELECT id FROM locations WHERE city = 'Beijing')"),
    "status": (lambda p: {"status": "on_leave"}, "e.status = 'on_leave'"),
    "combined": (
        lambda p: {"location": "Shenzhen", "title": "senior", "status": "active"},
        "e.location_id = 1 AND e.title LIKE '%senior%' AND e.status = 'active'",
    ),
}


@pytest.mark.parametrize("name", list(EMPLOYEE_FILTERS))
def test_search_employees_filters(name, call, meeting_conn, pick):
    make, where = EMPLOYEE_FILTERS[name]
    expected = set(col(meeting_conn, f"SELECT e.id FROM employees e WHERE {where.format(dept=pick.dept, actor=pick.actor)}"))
    assert expected, "filter selects nothing"
    items = all_pages(call, pick.actor, "search_employees", make(pick), "employee_id")
    assert {e["employee_id"] for e in items} == expected
    assert non_decreasing([(nocase(e["name"]), e["employee_id"]) for e in items])


def test_get_employee(call, meeting_conn, pick):
    res = ok(call(pick.actor, "get_employee", {"employee_id": pick.actor}))
    assert res["heads_department_id"] == pick.dept
    assert res["direct_reports"] == val(meeting_conn, "SELECT COUNT(*) FROM employees WHERE manager_id = ?", pick.actor) > 0
    mate = ok(call(pick.actor, "get_employee", {"employee_id": pick.teammate()}))
    assert mate["heads_department_id"] is None and mate["manager_id"] == pick.actor
    assert mate["manager"] == val(meeting_conn, "SELECT name FROM employees WHERE id = ?", pick.actor)
    assert mate["location"] == val(
        meeting_conn, "SELECT l.city FROM employees e JOIN locations l ON l.id = e.location_id WHERE e.id = ?", pick.teammate()
    )


def test_get_department(call, meeting_conn, pick):
    for dept_id in col(meeting_conn, "SELECT id FROM departments"):
        res = ok(call(pick.actor, "get_department", {"department_id": dept_id}))
        total = val(
            meeting_conn,
            "WITH RECURSIVE s(id) AS (SELECT ? UNION ALL SELECT d.id FROM departments d JOIN s ON d.parent_id = s.id) "
            "SELECT COUNT(*) FROM employees WHERE department_id IN (SELECT id FROM s)",
            dept_id,
        )
        assert res["total_headcount"] == total
        assert res["headcount"] == val(meeting_conn, "SELECT COUNT(*) FROM employees WHERE department_id = ?", dept_id)
        assert res["sub_departments"] == val(meeting_conn, "SELECT COUNT(*) FROM departments WHERE parent_id = ?", dept_id)
        assert res["head_id"] == val(meeting_conn, "SELECT employee_id FROM department_heads WHERE department_id = ?", dept_id)
    team = ok(call(pick.actor, "get_department", {"department_id": pick.dept}))
    assert team["path"].count(" > ") == 3 and team["path"].endswith(" > " + team["name"])
    assert team["path"].startswith(val(meeting_conn, "SELECT name FROM departments WHERE parent_id IS NULL"))


def test_list_sub_departments(call, meeting_conn, pick):
    divisions = ok(call(pick.actor, "list_sub_departments", {}))
    assert [d["department_id"] for d in divisions["items"]] == col(
        meeting_conn, "SELECT id FROM departments WHERE kind = 'division' ORDER BY id"
    )
    everything = all_pages(call, pick.actor, "list_sub_departments", {"recursive": True}, "department_id")
    assert len(everything) == val(meeting_conn, "SELECT COUNT(*) FROM departments") - 1
    division = divisions["items"][0]["department_id"]
    direct = ok(call(pick.actor, "list_sub_departments", {"department_id": division}))
    assert {d["department_id"] for d in direct["items"]} == set(
        col(meeting_conn, "SELECT id FROM departments WHERE parent_id = ?", division)
    )
    assert all(d["head"] and d["parent_id"] == division for d in direct["items"])


def test_list_department_members(call, meeting_conn, pick):
    items = all_pages(call, pick.actor, "list_department_members", {"department_id": pick.dept}, "employee_id")
    assert {e["employee_id"] for e in items} == set(col(meeting_conn, "SELECT id FROM employees WHERE department_id = ?", pick.dept))
    assert [e["employee_id"] for e in items if e["is_department_head"]] == [pick.actor]
    parent = val(meeting_conn, "SELECT parent_id FROM departments WHERE id = ?", pick.dept)
    deep = all_pages(call, pick.actor, "list_department_members", {"department_id": parent, "include_sub_departments": True}, "employee_id")
    assert {e["employee_id"] for e in deep} == set(
        col(
            meeting_conn,
            "SELECT id FROM employees WHERE department_id = ? OR department_id IN (SELECT id FROM departments WHERE parent_id = ?)",
            parent,
            parent,
        )
    )
    assert len(deep) > len(items)


ROOM_FILTERS = {
    "capacity_and_equipment": (
        {"min_capacity": 10, "equipment": ["projector", "video_conferencing"]},
        "r.capacity >= 10 AND r.has_projector AND r.has_video_conferencing",
    ),
    "location": ({"location": "Shanghai"}, "b.location_id = 3"),
    "bookable_whiteboard": ({"equipment": ["whiteboard"], "bookable_only": True}, "r.has_whiteboard AND r.is_bookable"),
    "type": ({"room_type": "huddle"}, "r.room_type = 'huddle'"),
    "query": ({"query": "tower"}, "b.name LIKE '%tower%' OR r.name LIKE '%tower%'"),
}


@pytest.mark.parametrize("name", list(ROOM_FILTERS))
def test_search_rooms(name, call, meeting_conn, pick):
    args, where = ROOM_FILTERS[name]
    expected = set(col(meeting_conn, f"SELECT r.id FROM rooms r JOIN buildings b ON b.id = r.building_id WHERE {where}"))
    assert expected
    items = all_pages(call, pick.actor, "search_rooms", args, "room_id")
    assert {r["room_id"] for r in items} == expected
    assert non_decreasing([r["capacity"] for r in items])
    for item in items:
        assert set(args.get("equipment", [])) <= set(item["equipment"])


def test_check_room_availability_and_boundaries(call, meeting_conn, pick):
    room_id, start, end, booking = meeting_conn.execute(
        "SELECT room_id, start_at, end_at, id FROM room_bookings WHERE status = 'active' AND start_at > ? ORDER BY id LIMIT 1", (NOW,)
    ).fetchone()
    res = ok(call(pick.actor, "check_room_availability", {"room_id": room_id, "start": start, "end": end}))
    assert res["available"] is False and booking in [c["booking_id"] for c in res["conflicts"]]
    # Back to back is no conflict: a slot ending exactly when the booking starts.
    before = val(meeting_conn, "SELECT datetime(?, '-30 minutes')", start)
    free = val(
        meeting_conn,
        "SELECT NOT EXISTS (SELECT 1 FROM room_bookings WHERE room_id = ? AND status = 'active' AND start_at < ? AND end_at > ?)",
        room_id,
        start,
        before,
    )
    res = ok(call(pick.actor, "check_room_availability", {"room_id": room_id, "start": before[:16], "end": start[:16]}))
    assert res["available"] == bool(free) and booking not in [c["booking_id"] for c in res["conflicts"]]


def test_find_available_rooms(call, meeting_conn, pick):
    start, end = f"{SOON} 10:00:00", f"{SOON} 11:00:00"
    items = all_pages(call, pick.actor, "find_available_rooms", {"start": start[:16], "end": end[:16], "min_capacity": 6}, "room_id")
    expected = set(
        col(
            meeting_conn,
            "SELECT id FROM rooms r WHERE is_bookable = 1 AND capacity >= 6 AND NOT EXISTS (SELECT 1 FROM room_bookings k "
            "WHERE k.room_id = r.id AND k.status = 'active' AND k.start_at < ? AND k.end_at > ?)",
            end,
            start,
        )
    )
    assert {r["room_id"] for r in items} == expected
    assert val(meeting_conn, "SELECT COUNT(*) FROM rooms WHERE is_bookable = 1 AND capacity >= 6") > len(expected)  # some are taken


def test_list_room_bookings(call, meeting_conn, pick):
    room_id = pick.val("SELECT room_id FROM room_bookings GROUP BY room_id HAVING COUNT(*) > 20 ORDER BY room_id LIMIT 1")
    items = all_pages(call, pick.actor, "list_room_bookings", {"room_id": room_id}, "booking_id")
    assert {b["booking_id"] for b in items} == set(col(meeting_conn, "SELECT id FROM room_bookings WHERE room_id = ?", room_id))
    assert non_decreasing([b["start_at"] for b in items])
    day = val(meeting_conn, "SELECT substr(start_at, 1, 10) FROM room_bookings GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1")
    res = all_pages(call, pick.actor, "list_room_bookings", {"start": day, "end": day, "status": "active"}, "booking_id")
    assert {b["booking_id"] for b in res} == set(
        col(
            meeting_conn,
            "SELECT id FROM room_bookings WHERE status = 'active' AND end_at > ? AND start_at < date(?, '+1 day')",
            day + " 00:00:00",
            day,
        )
    )
    booked = ok(call(pick.actor, "book_room", {"room_id": pick.room(), "start": f"{SOON} 08:00", "end": f"{SOON} 08:30"}))
    mine = ok(call(pick.actor, "list_room_bookings", {"mine": True}))
    assert booked["booking_id"] in [b["booking_id"] for b in mine["items"]] or mine["total"] > PAGE_SIZE
    assert mine["total"] == val(meeting_conn, "SELECT COUNT(*) FROM room_bookings WHERE booker_id = ?", pick.actor)


MEETING_FILTERS = {
    "all": ({}, "1"),
    "completed": ({"status": "completed"}, "m.status = 'completed'"),
    "organiser": ({"role": "organiser"}, "p.role = 'organiser'"),
    "invited": ({"response": "invited"}, "p.response = 'invited'"),
    "range_days": ({"start_from": "2026-09-01", "start_to": "2026-09-30"}, "m.start_at >= '2026-09-01' AND m.start_at < '2026-10-01'"),
    "range_times": (
        {"start_from": "2026-09-01 10:00", "start_to": "2026-09-30 10:00:00"},
        "m.start_at >= '2026-09-01 10:00:00' AND m.start_at <= '2026-09-30 10:00:00'",
    ),
}


@pytest.mark.parametrize("name", list(MEETING_FILTERS))
def test_list_my_meetings(name, call, meeting_conn, pick):
    args, where = MEETING_FILTERS[name]
    actor = val(
        meeting_conn, "SELECT employee_id FROM meeting_participants GROUP BY employee_id ORDER BY COUNT(*) DESC, employee_id LIMIT 1"
    )
    expected = set(
        col(
            meeting_conn,
            f"SELECT m.id FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id WHERE p.employee_id = ? AND {where}",
            actor,
        )
    )
    assert expected
    items = all_pages(call, actor, "list_my_meetings", args, "meeting_id")
    assert {m["meeting_id"] for m in items} == expected
    assert non_decreasing([m["start_at"] for m in items])
    for m in items[:5]:
        role, response = meeting_conn.execute(
            "SELECT role, response FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", (m["meeting_id"], actor)
        ).fetchone()
        assert (m["my_role"], m["my_response"]) == (role, response)


def test_get_meeting_and_participants(call, meeting_conn, pick):
    meeting_id = pick.val(
        "SELECT m.id FROM meetings m JOIN meeting_participants p ON p.meeting_id = m.id AND p.employee_id = ? "
        "WHERE m.room_id IS NOT NULL ORDER BY m.participant_count DESC, m.id LIMIT 1",
        pick.actor,
    )
    res = ok(call(pick.actor, "get_meeting", {"meeting_id": meeting_id}))
    row = meeting_conn.execute(
        "SELECT m.title, m.start_at, m.end_at, m.status, m.organizer_id, r.name, m.participant_count FROM meetings m "
        "JOIN rooms r ON r.id = m.room_id WHERE m.id = ?",
        (meeting_id,),
    ).fetchone()
    assert (res["title"], res["start_at"], res["end_at"], res["status"], res["organizer_id"], res["room"], res["participant_count"]) == row
    people = meeting_conn.execute(
        "SELECT employee_id, role, response FROM meeting_participants WHERE meeting_id = ?", (meeting_id,)
    ).fetchall()
    pages = all_pages(call, pick.actor, "get_meeting", {"meeting_id": meeting_id}, "employee_id", part=lambda v: v["participants"])
    assert {(p["employee_id"], p["role"], p["response"]) for p in pages} == set(people)
    assert res["participants"]["total"] == len(people) and res["participants"]["items"][0]["role"] == "organiser"
    assert sum(res["responses"].values()) == len(people)
    assert res["responses"]["accepted"] == sum(p[2] == "accepted" for p in people)
    assert res["booking_id"] == val(meeting_conn, "SELECT id FROM room_bookings WHERE meeting_id = ?", meeting_id)
    listed = ok(call(pick.actor, "list_meeting_participants", {"meeting_id": meeting_id, "response": "accepted"}))
    assert {p["employee_id"] for p in listed["items"]} == {p[0] for p in people if p[2] == "accepted"}


def test_get_schedule_hides_colleagues_private_entries(call, meeting_conn, pick):
    owner, start = meeting_conn.execute(
        "SELECT employee_id, start_at FROM schedule_entries WHERE is_private = 1 AND employee_id != ? ORDER BY id LIMIT 1", (pick.actor,)
    ).fetchone()
    day = start[:10]
    theirs = ok(call(pick.actor, "get_schedule", {"employee_id": owner, "start": day, "end": day}))
    mine = ok(call(owner, "get_schedule", {"start": day, "end": day}))
    expected = set(
        col(
            meeting_conn,
            "SELECT id FROM schedule_entries WHERE employee_id = ? AND start_at < date(?, '+1 day') AND end_at > ?",
            owner,
            day,
            day + " 00:00:00",
        )
    )
    assert {e["entry_id"] for e in theirs["items"]} == {e["entry_id"] for e in mine["items"]} == expected
    hidden = [e for e in theirs["items"] if e["is_private"]]
    assert hidden and all(e["title"] == "Busy" and e["kind"] == "busy" and e["note"] == "" for e in hidden)
    shown = {e["entry_id"]: e for e in mine["items"]}
    for e in hidden:
        assert (
            shown[e["entry_id"]]["title"] == val(meeting_conn, "SELECT title FROM schedule_entries WHERE id = ?", e["entry_id"]) != "Busy"
        )
    # Default range: the coming week of the actor's own calendar.
    week = ok(call(pick.actor, "get_schedule", {}))
    assert week["start"] == NOW[:10] + " 00:00:00" and week["end"] == "2026-10-22 00:00:00"


def test_chats_reads(call, meeting_conn, pick):
    chats = all_pages(call, pick.actor, "list_my_chats", {}, "chat_id")
    assert {c["chat_id"] for c in chats} == set(col(meeting_conn, "SELECT chat_id FROM chat_members WHERE employee_id = ?", pick.actor))
    chat_id = pick.own_chat()
    info = ok(call(pick.actor, "get_chat", {"chat_id": chat_id}))
    assert info["my_role"] == "owner" and info["member_count"] == val(
        meeting_conn, "SELECT COUNT(*) FROM chat_members WHERE chat_id = ?", chat_id
    )
    members = all_pages(call, pick.actor, "list_chat_members", {"chat_id": chat_id}, "employee_id")
    assert {m["employee_id"] for m in members} == set(col(meeting_conn, "SELECT employee_id FROM chat_members WHERE chat_id = ?", chat_id))
    assert members[0]["role"] == "owner"
    busy = pick.val(
        "SELECT chat_id FROM chat_members WHERE employee_id = ? ORDER BY (SELECT message_count FROM chats WHERE id = chat_id) DESC LIMIT 1",
        pick.actor,
    )
    messages = all_pages(call, pick.actor, "list_chat_messages", {"chat_id": busy}, "message_id")
    assert [m["message_id"] for m in messages] == col(
        meeting_conn, "SELECT id FROM chat_messages WHERE chat_id = ? ORDER BY sent_at DESC, id DESC", busy
    )


def test_recalled_messages_hide_their_content(call, meeting_conn):
    chat_id, member = meeting_conn.execute(
        "SELECT x.chat_id, (SELECT employee_id FROM chat_members WHERE chat_id = x.chat_id LIMIT 1) "
        "FROM chat_messages x WHERE x.is_recalled = 1 ORDER BY x.id LIMIT 1"
    ).fetchone()
    items = all_pages(call, member, "list_chat_messages", {"chat_id": chat_id}, "message_id")
    recalled = [m for m in items if m["is_recalled"]]
    assert recalled and all(m["content"] == "(message recalled)" and m["attachment_name"] is None for m in recalled)


# =========================================================================================
# 2. Write tools: rows checked one by one, and the product rules
# =========================================================================================


def test_create_meeting_with_room_books_it(call, meeting, meeting_conn, pick):
    room = pick.room(capacity=4)
    mates = [pick.teammate(0), pick.teammate(1)]
    res = ok(
        call(
            pick.actor,
            "create_meeting",
            {
                "title": "  Roadmap review ",
                "start": f"{SOON} 14:00",
                "end": f"{SOON} 15:30:00",
                "participant_ids": mates[:1],
                "optional_participant_ids": mates[1:],
                "room_id": room,
                "agenda": "1. Scope",
            },
        )
    )
    mid = res["meeting_id"]
    row = meeting_conn.execute(
        "SELECT title, organizer_id, room_id, start_at, end_at, status, participant_count, created_at, agenda FROM meetings WHERE id = ?",
        (mid,),
    ).fetchone()
    assert row == ("Roadmap review", pick.actor, room, f"{SOON} 14:00:00", f"{SOON} 15:30:00", "scheduled", 3, NOW, "1. Scope")
    assert meeting_conn.execute(
        "SELECT employee_id, role, response, invited_at, responded_at FROM meeting_participants WHERE meeting_id = ? ORDER BY employee_id",
        (mid,),
    ).fetchall() == sorted(
        [
            (pick.actor, "organiser", "accepted", NOW, NOW),
            (mates[0], "required", "invited", NOW, None),
            (mates[1], "optional", "invited", NOW, None),
        ]
    )
    assert meeting_conn.execute(
        "SELECT id, room_id, booker_id, start_at, end_at, status FROM room_bookings WHERE meeting_id = ?", (mid,)
    ).fetchall() == [(res["booking_id"], room, pick.actor, f"{SOON} 14:00:00", f"{SOON} 15:30:00", "active")]
    assert meeting_conn.execute(
        "SELECT employee_id, kind, title, start_at FROM schedule_entries WHERE meeting_id = ?", (mid,)
    ).fetchall() == [(pick.actor, "meeting", "Roadmap review", f"{SOON} 14:00:00")]
    assert len(res["meeting_code"]) == 9 and res["join_url"].endswith(res["meeting_code"])
    check_invariants(meeting, meeting_conn)


def test_create_online_meeting(call, meeting_conn, pick):
    res = new_meeting(call, pick)
    assert res["room_id"] is None and res["booking_id"] is None and res["participant_count"] == 3
    assert val(meeting_conn, "SELECT COUNT(*) FROM room_bookings WHERE meeting_id = ?", res["meeting_id"]) == 0


def test_no_double_booking_of_a_room(call, meeting_conn, pick, unchanged):
    room = pick.room(capacity=4)
    first = new_meeting(call, pick, room_id=room)
    snapshot = content_hash(meeting_conn)
    other = pick.stranger()
    for start, end in [("10:00", "11:00"), ("10:30", "10:45"), ("09:30", "10:01"), ("10:59", "12:00")]:
        err(
            call(pick.actor, "create_meeting", {"title": "Clash", "start": f"{SOON} {start}", "end": f"{SOON} {end}", "room_id": room}),
            "conflict",
        )
        err(call(other, "book_room", {"room_id": room, "start": f"{SOON} {start}", "end": f"{SOON} {end}"}), "conflict")
    assert content_hash(meeting_conn) == snapshot
    # Back to back is fine.
    ok(call(other, "book_room", {"room_id": room, "start": f"{SOON} 11:00", "end": f"{SOON} 12:00"}))
    ok(call(other, "book_room", {"room_id": room, "start": f"{SOON} 09:00", "end": f"{SOON} 10:00"}))
    # Once the meeting is cancelled its slot is free again.
    ok(call(pick.actor, "cancel_meeting", {"meeting_id": first["meeting_id"]}))
    ok(call(other, "book_room", {"room_id": room, "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"}))


def test_room_capacity_limits(call, meeting, meeting_conn, pick):
    room = pick.room(capacity=2)
    err(
        call(
            pick.actor,
            "create_meeting",
            {
                "title": "Too many",
                "start": f"{SOON} 10:00",
                "end": f"{SOON} 11:00",
                "participant_ids": [pick.teammate(0), pick.teammate(1)],
                "room_id": room,
            },
        ),
        "conflict",
    )
    res = ok(
        call(
            pick.actor,
            "create_meeting",
            {"title": "Pair", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00", "participant_ids": [pick.teammate(0)], "room_id": room},
        )
    )
    mid = res["meeting_id"]
    before = content_hash(meeting_conn)
    err(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [pick.teammate(1)]}), "conflict")
    assert content_hash(meeting_conn) == before
    # A declined place frees a seat; taking it back is refused while the seat is taken.
    ok(call(pick.teammate(0), "respond_to_meeting", {"meeting_id": mid, "response": "declined"}))
    ok(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [pick.teammate(1)], "role": "optional"}))
    assert (
        val(meeting_conn, "SELECT role FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", mid, pick.teammate(1))
        == "optional"
    )
    err(call(pick.teammate(0), "respond_to_meeting", {"meeting_id": mid, "response": "accepted"}), "conflict")
    check_invariants(meeting, meeting_conn)


def test_unbookable_rooms_are_refused(call, pick, unchanged):
    room = pick.room(capacity=val(pick.conn, "SELECT capacity FROM rooms WHERE is_bookable = 0 ORDER BY id LIMIT 1"), bookable=0)
    err(call(pick.actor, "book_room", {"room_id": room, "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"}), "forbidden")
    err(call(pick.actor, "create_meeting", {"title": "x", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00", "room_id": room}), "forbidden")
    unchanged()


@pytest.mark.parametrize("tool", ["create_meeting", "book_room", "create_schedule_entry"])
@pytest.mark.parametrize(
    "start, end, needle",
    [
        ("2026-10-15 09:00", "2026-10-15 10:00", "past"),
        ("2026-10-15 09:29", "2026-10-15 10:00", "past"),
        (f"{SOON} 11:00", f"{SOON} 10:00", "after the start"),
        (f"{SOON} 11:00", f"{SOON} 11:00", "after the start"),
        (f"{SOON} 25:00", f"{SOON} 26:00", "time like"),
        (f"{SOON}T10:00", f"{SOON}T11:00", "time like"),
        ("2026-02-30 10:00", "2026-02-30 11:00", "time like"),
        (SOON, SOON, "time like"),
    ],
)
def test_times_are_validated(tool, start, end, needle, call, pick, unchanged):
    args = {"start": start, "end": end}
    if tool == "book_room":
        args["room_id"] = pick.room()
    else:
        args["title"] = "Timing"
    message = err(call(pick.actor, tool, args), "invalid_value")
    assert needle in message, message
    unchanged()


def test_now_itself_is_not_the_past(call, meeting_conn, pick):
    res = ok(call(pick.actor, "create_meeting", {"title": "Right now", "start": NOW[:16], "end": "2026-10-15 10:00"}))
    assert res["start_at"] == NOW and res["status"] == "scheduled"


def test_durations_are_limited(call, pick, unchanged):
    err(call(pick.actor, "create_meeting", {"title": "Marathon", "start": f"{SOON} 10:00", "end": "2026-10-28 10:01"}), "invalid_value")
    err(
        call(pick.actor, "create_schedule_entry", {"title": "Long trip", "start": f"{SOON} 10:00", "end": "2026-11-28 10:01"}),
        "invalid_value",
    )
    unchanged()
    ok(
        call(
            pick.actor,
            "create_schedule_entry",
            {"title": "Long trip", "start": f"{SOON} 10:00", "end": "2026-11-27 10:00", "kind": "travel"},
        )
    )


def test_cancel_meeting(call, meeting, meeting_conn, pick):
    res = new_meeting(call, pick, room_id=pick.room(capacity=4))
    mid = res["meeting_id"]
    ok(call(pick.teammate(0), "respond_to_meeting", {"meeting_id": mid, "response": "accepted"}))
    assert val(meeting_conn, "SELECT COUNT(*) FROM schedule_entries WHERE meeting_id = ?", mid) == 2
    out = ok(call(pick.actor, "cancel_meeting", {"meeting_id": mid, "reason": "Moved"}))
    assert out == {"meeting_id": mid, "title": "Test planning", "status": "cancelled", "room_released": True, "calendar_entries_removed": 2}
    assert meeting_conn.execute("SELECT status, cancelled_at, cancel_reason FROM meetings WHERE id = ?", (mid,)).fetchone() == (
        "cancelled",
        NOW,
        "Moved",
    )
    assert meeting_conn.execute("SELECT status, cancelled_at FROM room_bookings WHERE meeting_id = ?", (mid,)).fetchone() == (
        "cancelled",
        NOW,
    )
    assert val(meeting_conn, "SELECT COUNT(*) FROM schedule_entries WHERE meeting_id = ?", mid) == 0
    assert val(meeting_conn, "SELECT COUNT(*) FROM meeting_participants WHERE meeting_id = ?", mid) == 3  # kept on record
    check_invariants(meeting, meeting_conn)
    # A cancelled meeting cannot be changed any more.
    before = content_hash(meeting_conn)
    err(call(pick.actor, "cancel_meeting", {"meeting_id": mid}), "conflict")
    err(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [pick.stranger()]}), "conflict")
    err(call(pick.actor, "remove_participant", {"meeting_id": mid, "employee_id": pick.teammate(1)}), "conflict")
    err(call(pick.teammate(1), "respond_to_meeting", {"meeting_id": mid, "response": "accepted"}), "conflict")
    assert content_hash(meeting_conn) == before


def test_only_the_organiser_changes_a_meeting(call, meeting_conn, pick, unchanged):
    mid = pick.invitation()
    organiser = val(meeting_conn, "SELECT organizer_id FROM meetings WHERE id = ?", mid)
    assert organiser != pick.actor
    err(call(pick.actor, "cancel_meeting", {"meeting_id": mid}), "forbidden")
    err(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [pick.stranger()]}), "forbidden")
    other = val(
        meeting_conn,
        "SELECT employee_id FROM meeting_participants WHERE meeting_id = ? AND employee_id NOT IN (?, ?)",
        mid,
        organiser,
        pick.actor,
    )
    err(call(pick.actor, "remove_participant", {"meeting_id": mid, "employee_id": other or organiser}), "forbidden")
    unchanged()


def test_started_meetings_cannot_be_changed(call, meeting_conn, pick, unchanged):
    # A meeting under way at the frozen clock, and one that is over.
    for where in ("start_at <= ? AND end_at > ? AND status = 'scheduled'", "end_at <= ? AND status = 'completed' AND ? != ''"):
        mid, organiser = meeting_conn.execute(
            f"SELECT id, organizer_id FROM meetings WHERE {where} ORDER BY id LIMIT 1", (NOW, NOW)
        ).fetchone()
        invitee = val(
            meeting_conn, "SELECT employee_id FROM meeting_participants WHERE meeting_id = ? AND role != 'organiser' LIMIT 1", mid
        )
        for actor, tool, args in [
            (organiser, "cancel_meeting", {"meeting_id": mid}),
            (organiser, "remove_participant", {"meeting_id": mid, "employee_id": invitee}),
            (invitee, "respond_to_meeting", {"meeting_id": mid, "response": "tentative"}),
        ]:
            if (
                tool == "respond_to_meeting"
                and val(meeting_conn, "SELECT response FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", mid, invitee)
                == "tentative"
            ):
                continue
            assert "start" in err(call(actor, tool, args), "conflict")
    unchanged()


def test_invite_and_remove_participants(call, meeting, meeting_conn, pick):
    mid = new_meeting(call, pick)["meeting_id"]
    strangers = [pick.stranger(0), pick.stranger(1)]
    res = ok(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": strangers}))
    assert res["participant_count"] == 5 == val(meeting_conn, "SELECT participant_count FROM meetings WHERE id = ?", mid)
    assert meeting_conn.execute(
        "SELECT employee_id, role, response, invited_at FROM meeting_participants WHERE meeting_id = ? AND employee_id IN (?, ?) "
        "ORDER BY employee_id",
        (mid, *strangers),
    ).fetchall() == sorted((s, "required", "invited", NOW) for s in strangers)
    before = content_hash(meeting_conn)
    assert "Already invited" in err(
        call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [strangers[0]]}), "conflict"
    )
    err(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [pick.stranger(2), pick.stranger(2)]}), "invalid_value")
    err(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": [pick.missing("employees")]}), "not_found")
    err(call(pick.actor, "invite_participants", {"meeting_id": mid, "employee_ids": []}), "invalid_value")
    err(call(pick.actor, "remove_participant", {"meeting_id": mid, "employee_id": pick.actor}), "invalid_value")
    err(call(pick.actor, "remove_participant", {"meeting_id": mid, "employee_id": pick.stranger(3)}), "not_found")
    assert content_hash(meeting_conn) == before
    ok(call(strangers[0], "respond_to_meeting", {"meeting_id": mid, "response": "accepted"}))
    res = ok(call(pick.actor, "remove_participant", {"meeting_id": mid, "employee_id": strangers[0]}))
    assert res["calendar_entry_removed"] is True and res["participant_count"] == 4
    assert val(meeting_conn, "SELECT COUNT(*) FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", mid, strangers[0]) == 0
    assert val(meeting_conn, "SELECT COUNT(*) FROM schedule_entries WHERE meeting_id = ? AND employee_id = ?", mid, strangers[0]) == 0
    check_invariants(meeting, meeting_conn)


def test_respond_to_meeting(call, meeting, meeting_conn, pick):
    mid = pick.invitation()
    current = val(meeting_conn, "SELECT response FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", mid, pick.actor)
    start, end, title = meeting_conn.execute("SELECT start_at, end_at, title FROM meetings WHERE id = ?", (mid,)).fetchone()
    sequence = [r for r in ("accepted", "tentative", "accepted", "declined") if r != current][:3]
    for response in sequence:
        res = ok(call(pick.actor, "respond_to_meeting", {"meeting_id": mid, "response": response}))
        assert res["response"] == response and res["on_calendar"] == (response == "accepted")
        assert meeting_conn.execute(
            "SELECT response, responded_at FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", (mid, pick.actor)
        ).fetchone() == (response, NOW)
        entries = meeting_conn.execute(
            "SELECT start_at, end_at, title, kind FROM schedule_entries WHERE meeting_id = ? AND employee_id = ?", (mid, pick.actor)
        ).fetchall()
        assert entries == ([(start, end, title, "meeting")] if response == "accepted" else [])
        check_invariants(meeting, meeting_conn)
    before = content_hash(meeting_conn)
    assert "already" in err(call(pick.actor, "respond_to_meeting", {"meeting_id": mid, "response": sequence[-1]}), "conflict")
    assert content_hash(meeting_conn) == before


def test_organiser_cannot_respond_and_outsiders_cannot_see(call, pick, unchanged):
    mid = new_meeting(call, pick)["meeting_id"]
    before = content_hash(pick.conn)
    err(call(pick.actor, "respond_to_meeting", {"meeting_id": mid, "response": "declined"}), "invalid_value")
    err(call(pick.stranger(), "respond_to_meeting", {"meeting_id": mid, "response": "accepted"}), "forbidden")
    err(call(pick.stranger(), "get_meeting", {"meeting_id": mid}), "forbidden")
    err(call(pick.stranger(), "list_meeting_participants", {"meeting_id": mid}), "forbidden")
    assert content_hash(pick.conn) == before


def test_book_and_release_room(call, meeting, meeting_conn, pick):
    room = pick.room()
    res = ok(
        call(pick.actor, "book_room", {"room_id": room, "start": f"{SOON} 16:00", "end": f"{SOON} 17:00:00", "purpose": " Interview "})
    )
    bid = res["booking_id"]
    assert meeting_conn.execute(
        "SELECT room_id, booker_id, meeting_id, start_at, end_at, status, purpose, created_at, cancelled_at "
        "FROM room_bookings WHERE id = ?",
        (bid,),
    ).fetchone() == (room, pick.actor, None, f"{SOON} 16:00:00", f"{SOON} 17:00:00", "active", "Interview", NOW, None)
    before = content_hash(meeting_conn)
    err(call(pick.stranger(), "release_room", {"booking_id": bid}), "forbidden")
    assert content_hash(meeting_conn) == before
    out = ok(call(pick.actor, "release_room", {"booking_id": bid}))
    assert out["status"] == "cancelled" and out["cancelled_at"] == NOW
    assert meeting_conn.execute("SELECT status, cancelled_at FROM room_bookings WHERE id = ?", (bid,)).fetchone() == ("cancelled", NOW)
    before = content_hash(meeting_conn)
    err(call(pick.actor, "release_room", {"booking_id": bid}), "conflict")
    assert content_hash(meeting_conn) == before
    check_invariants(meeting, meeting_conn)


def test_release_room_refusals(call, meeting_conn, pick, unchanged):
    booker, bid = meeting_conn.execute(
        "SELECT booker_id, id FROM room_bookings WHERE meeting_id IS NOT NULL AND status = 'active' AND start_at > ? ORDER BY id LIMIT 1",
        (NOW,),
    ).fetchone()
    assert "cancel the meeting" in err(call(booker, "release_room", {"booking_id": bid}), "conflict")
    booker, bid = meeting_conn.execute(
        "SELECT booker_id, id FROM room_bookings WHERE meeting_id IS NULL AND status = 'active' AND start_at <= ? ORDER BY id DESC LIMIT 1",
        (NOW,),
    ).fetchone()
    err(call(booker, "release_room", {"booking_id": bid}), "conflict")
    err(call(pick.actor, "release_room", {"booking_id": pick.missing("room_bookings")}), "not_found")
    unchanged()


def test_schedule_entries(call, meeting, meeting_conn, pick):
    res = ok(
        call(
            pick.actor,
            "create_schedule_entry",
            {
                "title": "Dentist",
                "start": f"{SOON} 08:00",
                "end": f"{SOON} 09:00",
                "kind": "personal",
                "is_private": True,
                "note": "Back by 9",
            },
        )
    )
    eid = res["entry_id"]
    assert meeting_conn.execute(
        "SELECT employee_id, meeting_id, kind, title, start_at, end_at, is_private, note, created_at FROM schedule_entries WHERE id = ?",
        (eid,),
    ).fetchone() == (pick.actor, None, "personal", "Dentist", f"{SOON} 08:00:00", f"{SOON} 09:00:00", 1, "Back by 9", NOW)
    before = content_hash(meeting_conn)
    err(call(pick.actor, "create_schedule_entry", {"title": "Dentist", "start": f"{SOON} 08:00:00", "end": f"{SOON} 09:00"}), "conflict")
    err(call(pick.stranger(), "delete_schedule_entry", {"entry_id": eid}), "forbidden")
    assert "decline" in err(call(pick.actor, "delete_schedule_entry", {"entry_id": pick.meeting_entry()}), "invalid_value")
    assert content_hash(meeting_conn) == before
    seen = ok(call(pick.teammate(), "get_schedule", {"employee_id": pick.actor, "start": SOON, "end": SOON}))["items"]
    assert {"entry_id": eid, "title": "Busy", "kind": "busy"}.items() <= next(e for e in seen if e["entry_id"] == eid).items()
    out = ok(call(pick.actor, "delete_schedule_entry", {"entry_id": eid}))
    assert out["deleted_entry_id"] == eid and val(meeting_conn, "SELECT COUNT(*) FROM schedule_entries WHERE id = ?", eid) == 0
    ok(call(pick.actor, "delete_schedule_entry", {"entry_id": pick.personal_entry()}))
    check_invariants(meeting, meeting_conn)


def test_create_chat_and_manage_members(call, meeting, meeting_conn, pick):
    mates = [pick.teammate(0), pick.teammate(1)]
    res = ok(call(pick.actor, "create_chat", {"name": " Launch crew ", "member_ids": mates, "description": "Go live"}))
    cid = res["chat_id"]
    assert meeting_conn.execute(
        "SELECT name, owner_id, chat_type, member_count, message_count, created_at FROM chats WHERE id = ?", (cid,)
    ).fetchone() == ("Launch crew", pick.actor, "project", 3, 0, NOW)
    assert meeting_conn.execute(
        "SELECT employee_id, role, joined_at, muted FROM chat_members WHERE chat_id = ? ORDER BY employee_id", (cid,)
    ).fetchall() == sorted([(pick.actor, "owner", NOW, 0)] + [(m, "member", NOW, 0) for m in mates])
    before = content_hash(meeting_conn)
    err(call(pick.actor, "create_chat", {"name": "launch CREW", "member_ids": [pick.stranger()]}), "conflict")
    err(call(pick.actor, "create_chat", {"name": "Solo", "member_ids": []}), "invalid_value")
    err(call(pick.actor, "create_chat", {"name": "Me", "member_ids": [pick.actor]}), "invalid_value")
    err(call(pick.actor, "add_chat_members", {"chat_id": cid, "employee_ids": [mates[0]]}), "conflict")
    err(call(mates[0], "add_chat_members", {"chat_id": cid, "employee_ids": [pick.stranger()]}), "forbidden")
    err(call(mates[0], "remove_chat_member", {"chat_id": cid, "employee_id": mates[1]}), "forbidden")
    err(call(pick.actor, "leave_chat", {"chat_id": cid}), "forbidden")
    err(call(pick.stranger(), "leave_chat", {"chat_id": cid}), "forbidden")
    assert content_hash(meeting_conn) == before
    res = ok(call(pick.actor, "add_chat_members", {"chat_id": cid, "employee_ids": [pick.stranger(0), pick.stranger(1)]}))
    assert res["member_count"] == 5 == val(meeting_conn, "SELECT member_count FROM chats WHERE id = ?", cid)
    ok(call(pick.actor, "remove_chat_member", {"chat_id": cid, "employee_id": pick.stranger(0)}))
    ok(call(mates[1], "leave_chat", {"chat_id": cid}))
    assert set(col(meeting_conn, "SELECT employee_id FROM chat_members WHERE chat_id = ?", cid)) == {pick.actor, mates[0], pick.stranger(1)}
    assert val(meeting_conn, "SELECT member_count FROM chats WHERE id = ?", cid) == 3
    check_invariants(meeting, meeting_conn)


def test_admins_cannot_remove_admins_or_the_owner(call, meeting_conn, pick, unchanged):
    chat_id, owner = meeting_conn.execute(
        "SELECT c.id, c.owner_id FROM chats c WHERE (SELECT COUNT(*) FROM chat_members m WHERE m.chat_id = c.id "
        "AND m.role = 'admin') >= 2 ORDER BY c.id LIMIT 1"
    ).fetchone()
    admin, other_admin = col(
        meeting_conn, "SELECT employee_id FROM chat_members WHERE chat_id = ? AND role = 'admin' ORDER BY employee_id", chat_id
    )[:2]
    assert "Only the owner" in err(call(admin, "remove_chat_member", {"chat_id": chat_id, "employee_id": other_admin}), "forbidden")
    assert "owner" in err(call(admin, "remove_chat_member", {"chat_id": chat_id, "employee_id": owner}), "forbidden")
    assert "leave_chat" in err(call(admin, "remove_chat_member", {"chat_id": chat_id, "employee_id": admin}), "invalid_value")
    unchanged()
    ok(call(owner, "remove_chat_member", {"chat_id": chat_id, "employee_id": other_admin}))
    ok(call(admin, "remove_chat_member", {"chat_id": chat_id, "employee_id": pick.plain_member(chat_id)}))


def test_send_chat_message(call, meeting, meeting_conn, pick):
    chat_id = pick.member_chat()
    count = val(meeting_conn, "SELECT message_count FROM chats WHERE id = ?", chat_id)
    parent = pick.val("SELECT id FROM chat_messages WHERE chat_id = ? ORDER BY id DESC LIMIT 1", chat_id)
    res = ok(call(pick.actor, "send_chat_message", {"chat_id": chat_id, "content": "  On my way  ", "reply_to_message_id": parent}))
    assert meeting_conn.execute(
        "SELECT chat_id, sender_id, reply_to_id, message_type, content, sent_at FROM chat_messages WHERE id = ?", (res["message_id"],)
    ).fetchone() == (chat_id, pick.actor, parent, "text", "On my way", NOW)
    assert meeting_conn.execute("SELECT message_count, last_message_at FROM chats WHERE id = ?", (chat_id,)).fetchone() == (count + 1, NOW)
    page = ok(call(pick.actor, "list_chat_messages", {"chat_id": chat_id}))
    assert page["items"][0]["message_id"] == res["message_id"] and page["total"] == count + 1
    before = content_hash(meeting_conn)
    elsewhere = pick.val("SELECT id FROM chat_messages WHERE chat_id != ? ORDER BY id LIMIT 1", chat_id)
    err(call(pick.actor, "send_chat_message", {"chat_id": chat_id, "content": "hi", "reply_to_message_id": elsewhere}), "invalid_value")
    err(call(pick.actor, "send_chat_message", {"chat_id": chat_id, "content": "x" * 2001}), "invalid_value")
    err(call(pick.actor, "send_chat_message", {"chat_id": chat_id, "content": "   "}), "invalid_value")
    err(call(pick.actor, "send_chat_message", {"chat_id": pick.foreign_chat(), "content": "hi"}), "forbidden")
    assert content_hash(meeting_conn) == before
    ok(call(pick.actor, "send_chat_message", {"chat_id": chat_id, "content": "x" * 2000}))
    check_invariants(meeting, meeting_conn)


def test_chats_are_visible_to_members_only(call, pick, unchanged):
    chat_id = pick.foreign_chat()
    for tool in ("get_chat", "list_chat_members", "list_chat_messages", "leave_chat"):
        err(call(pick.actor, tool, {"chat_id": chat_id}), "forbidden")
    unchanged()


def test_transfer_employee(call, meeting, meeting_conn, pick):
    mate, target = pick.teammate(), pick.other_team()
    head = val(meeting_conn, "SELECT employee_id FROM department_heads WHERE department_id = ?", target)
    counts = dict(meeting_conn.execute("SELECT id, headcount FROM departments WHERE id IN (?, ?)", (pick.dept, target)).fetchall())
    res = ok(call(pick.actor, "transfer_employee", {"employee_id": mate, "department_id": target}))
    assert (res["from_department_id"], res["to_department_id"], res["manager_id"]) == (pick.dept, target, head)
    assert meeting_conn.execute("SELECT department_id, manager_id FROM employees WHERE id = ?", (mate,)).fetchone() == (target, head)
    assert dict(meeting_conn.execute("SELECT id, headcount FROM departments WHERE id IN (?, ?)", (pick.dept, target)).fetchall()) == {
        pick.dept: counts[pick.dept] - 1,
        target: counts[target] + 1,
    }
    check_invariants(meeting, meeting_conn)
    # The actor no longer heads the employee's department: moving them back is refused.
    before = content_hash(meeting_conn)
    err(call(pick.actor, "transfer_employee", {"employee_id": mate, "department_id": pick.dept}), "forbidden")
    assert content_hash(meeting_conn) == before
    # The head of a department above may.
    above = val(
        meeting_conn,
        "SELECT h.employee_id FROM department_heads h WHERE h.department_id = (SELECT parent_id FROM departments WHERE id = ?)",
        target,
    )
    ok(call(above, "transfer_employee", {"employee_id": mate, "department_id": pick.dept}))
    assert val(meeting_conn, "SELECT manager_id FROM employees WHERE id = ?", mate) == pick.actor


def test_transfer_employee_refusals(call, meeting_conn, pick, unchanged):
    err(call(pick.actor, "transfer_employee", {"employee_id": pick.actor, "department_id": pick.other_team()}), "forbidden")
    err(call(pick.actor, "transfer_employee", {"employee_id": pick.stranger(), "department_id": pick.dept}), "forbidden")
    err(call(pick.actor, "transfer_employee", {"employee_id": pick.teammate(), "department_id": pick.dept}), "conflict")
    ceo = val(meeting_conn, "SELECT id FROM employees WHERE manager_id IS NULL")
    assert "head" in err(call(ceo, "transfer_employee", {"employee_id": pick.actor, "department_id": pick.other_team()}), "conflict")
    err(call(pick.actor, "transfer_employee", {"employee_id": pick.teammate(), "department_id": pick.missing("departments")}), "not_found")
    unchanged()


def test_a_sequence_of_writes_keeps_every_invariant(call, meeting, meeting_conn, pick):
    room = pick.room(capacity=4)
    a = new_meeting(call, pick, room_id=room)["meeting_id"]
    b = new_meeting(call, pick, start=f"{SOON} 13:00", end=f"{SOON} 13:45")["meeting_id"]
    ok(call(pick.teammate(0), "respond_to_meeting", {"meeting_id": a, "response": "accepted"}))
    ok(call(pick.teammate(1), "respond_to_meeting", {"meeting_id": b, "response": "tentative"}))
    ok(call(pick.actor, "invite_participants", {"meeting_id": a, "employee_ids": [pick.stranger()]}))
    ok(call(pick.actor, "remove_participant", {"meeting_id": b, "employee_id": pick.teammate(0)}))
    ok(call(pick.actor, "cancel_meeting", {"meeting_id": b}))
    ok(call(pick.actor, "transfer_employee", {"employee_id": pick.teammate(2), "department_id": pick.other_team()}))
    ok(call(pick.actor, "respond_to_meeting", {"meeting_id": pick.invitation(), "response": "declined"}))
    check_invariants(meeting, meeting_conn)


# =========================================================================================
# 3. Refusals change nothing; generic checks over every tool
# =========================================================================================

ERROR_CASES: dict[str, tuple[Callable[[Pick], tuple[str, dict[str, Any]]], str]] = {
    "unknown employee": (lambda p: ("get_employee", {"employee_id": p.missing("employees")}), "not_found"),
    "unknown department": (lambda p: ("get_department", {"department_id": p.missing("departments")}), "not_found"),
    "unknown sub-department parent": (lambda p: ("list_sub_departments", {"department_id": p.missing("departments")}), "not_found"),
    "unknown members department": (lambda p: ("list_department_members", {"department_id": p.missing("departments")}), "not_found"),
    "unknown department filter": (lambda p: ("search_employees", {"department_id": p.missing("departments")}), "not_found"),
    "unknown manager filter": (lambda p: ("search_employees", {"manager_id": p.missing("employees")}), "not_found"),
    "unknown city": (lambda p: ("search_employees", {"location": "Atlantis"}), "invalid_value"),
    "unknown room city": (lambda p: ("search_rooms", {"location": "Atlantis"}), "invalid_value"),
    "unknown building": (lambda p: ("search_rooms", {"building_id": p.missing("buildings")}), "not_found"),
    "unknown room": (
        lambda p: ("check_room_availability", {"room_id": p.missing("rooms"), "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"}),
        "not_found",
    ),
    "availability backwards": (
        lambda p: ("check_room_availability", {"room_id": p.room(), "start": f"{SOON} 11:00", "end": f"{SOON} 10:00"}),
        "invalid_value",
    ),
    "find rooms backwards": (lambda p: ("find_available_rooms", {"start": f"{SOON} 11:00", "end": f"{SOON} 10:00"}), "invalid_value"),
    "find rooms bad time": (lambda p: ("find_available_rooms", {"start": "tomorrow", "end": f"{SOON} 10:00"}), "invalid_value"),
    "bookings unknown room": (lambda p: ("list_room_bookings", {"room_id": p.missing("rooms")}), "not_found"),
    "bookings bad date": (lambda p: ("list_room_bookings", {"start": "2026-13-01"}), "invalid_value"),
    "meetings bad date": (lambda p: ("list_my_meetings", {"start_from": "2026-10-1"}), "invalid_value"),
    "meetings range backwards": (lambda p: ("list_my_meetings", {"start_from": "2026-10-02", "start_to": "2026-10-01"}), "invalid_value"),
    "unknown meeting": (lambda p: ("get_meeting", {"meeting_id": p.missing("meetings")}), "not_found"),
    "someone else's meeting": (lambda p: ("get_meeting", {"meeting_id": p.foreign_meeting()}), "forbidden"),
    "schedule unknown employee": (lambda p: ("get_schedule", {"employee_id": p.missing("employees")}), "not_found"),
    "schedule backwards": (lambda p: ("get_schedule", {"start": "2026-10-20", "end": "2026-10-19"}), "invalid_value"),
    "unknown chat": (lambda p: ("get_chat", {"chat_id": p.missing("chats")}), "not_found"),
    "meeting with unknown room": (
        lambda p: ("create_meeting", {"title": "x", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00", "room_id": p.missing("rooms")}),
        "not_found",
    ),
    "meeting with unknown invitee": (
        lambda p: (
            "create_meeting",
            {"title": "x", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00", "participant_ids": [p.missing("employees")]},
        ),
        "not_found",
    ),
    "meeting invitee twice": (
        lambda p: (
            "create_meeting",
            {
                "title": "x",
                "start": f"{SOON} 10:00",
                "end": f"{SOON} 11:00",
                "participant_ids": [p.teammate()],
                "optional_participant_ids": [p.teammate()],
            },
        ),
        "invalid_value",
    ),
    "meeting inviting oneself": (
        lambda p: ("create_meeting", {"title": "x", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00", "participant_ids": [p.actor]}),
        "invalid_value",
    ),
    "meeting without title": (
        lambda p: ("create_meeting", {"title": "  ", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"}),
        "invalid_value",
    ),
    "meeting title too long": (
        lambda p: ("create_meeting", {"title": "x" * 101, "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"}),
        "invalid_value",
    ),
    "cancel unknown meeting": (lambda p: ("cancel_meeting", {"meeting_id": p.missing("meetings")}), "not_found"),
    "respond to unknown meeting": (
        lambda p: ("respond_to_meeting", {"meeting_id": p.missing("meetings"), "response": "accepted"}),
        "not_found",
    ),
    "entry without title": (
        lambda p: ("create_schedule_entry", {"title": "", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"}),
        "invalid_value",
    ),
    "delete unknown entry": (lambda p: ("delete_schedule_entry", {"entry_id": p.missing("schedule_entries")}), "not_found"),
    "chat name too long": (lambda p: ("create_chat", {"name": "x" * 61, "member_ids": [p.teammate()]}), "invalid_value"),
    "chat member twice": (lambda p: ("create_chat", {"name": "Twice", "member_ids": [p.teammate(), p.teammate()]}), "invalid_value"),
    "add to unknown chat": (lambda p: ("add_chat_members", {"chat_id": p.missing("chats"), "employee_ids": [p.teammate()]}), "not_found"),
    "add nobody": (lambda p: ("add_chat_members", {"chat_id": p.own_chat(), "employee_ids": []}), "invalid_value"),
    "add as plain member": (
        lambda p: ("add_chat_members", {"chat_id": p.member_chat(), "employee_ids": [p.non_member(p.member_chat())]}),
        "forbidden",
    ),
    "remove non-member": (
        lambda p: ("remove_chat_member", {"chat_id": p.own_chat(), "employee_id": p.non_member(p.own_chat())}),
        "not_found",
    ),
    "owner leaves": (lambda p: ("leave_chat", {"chat_id": p.own_chat()}), "forbidden"),
    "reply to unknown message": (
        lambda p: ("send_chat_message", {"chat_id": p.member_chat(), "content": "hi", "reply_to_message_id": p.missing("chat_messages")}),
        "not_found",
    ),
    "page zero": (lambda p: ("search_employees", {"page": 0}), "invalid_value"),
    "wrong type": (lambda p: ("get_employee", {"employee_id": "five"}), "invalid_arguments"),
    "bad enum": (lambda p: ("respond_to_meeting", {"meeting_id": p.invitation(), "response": "maybe"}), "invalid_arguments"),
    "bad equipment": (lambda p: ("search_rooms", {"equipment": ["coffee machine"]}), "invalid_arguments"),
    "missing argument": (lambda p: ("book_room", {"room_id": p.room(), "start": f"{SOON} 10:00"}), "invalid_arguments"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_error_result_and_nothing_changed(case, call, pick, unchanged):
    build, code = ERROR_CASES[case]
    tool, args = build(pick)
    err(call(pick.actor, tool, args), code)
    unchanged()


def happy_args(p: Pick) -> dict[str, dict[str, Any]]:
    """Valid arguments for every tool, acting as p.actor on a fresh world."""
    invitation = p.invitation()
    response = val(p.conn, "SELECT response FROM meeting_participants WHERE meeting_id = ? AND employee_id = ?", invitation, p.actor)
    own_chat = p.own_chat()
    return {
        "get_my_profile": {},
        "search_employees": {"query": "li"},
        "get_employee": {"employee_id": p.teammate()},
        "get_department": {"department_id": p.dept},
        "list_sub_departments": {},
        "list_department_members": {"department_id": p.dept},
        "search_rooms": {"min_capacity": 8},
        "check_room_availability": {"room_id": p.room(), "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"},
        "find_available_rooms": {"start": f"{SOON} 10:00", "end": f"{SOON} 11:00"},
        "list_room_bookings": {"room_id": p.room()},
        "list_my_meetings": {},
        "get_meeting": {"meeting_id": invitation},
        "list_meeting_participants": {"meeting_id": invitation},
        "get_schedule": {"employee_id": p.teammate()},
        "list_my_chats": {},
        "get_chat": {"chat_id": own_chat},
        "list_chat_members": {"chat_id": own_chat},
        "list_chat_messages": {"chat_id": p.member_chat()},
        "create_meeting": {"title": "Happy path", "start": f"{SOON} 10:00", "end": f"{SOON} 10:30", "room_id": p.room()},
        # These need a meeting or booking of the actor's own: happy_call makes one first.
        "cancel_meeting": {},
        "invite_participants": {},
        "remove_participant": {},
        "respond_to_meeting": {"meeting_id": invitation, "response": "declined" if response != "declined" else "accepted"},
        "book_room": {"room_id": p.room(), "start": f"{SOON} 10:00", "end": f"{SOON} 11:00"},
        "release_room": {},
        "create_schedule_entry": {"title": "Focus", "start": f"{SOON} 10:00", "end": f"{SOON} 11:00", "kind": "focus"},
        "delete_schedule_entry": {"entry_id": p.personal_entry()},
        "create_chat": {"name": "Happy chat", "member_ids": [p.teammate()]},
        "add_chat_members": {"chat_id": own_chat, "employee_ids": [p.non_member(own_chat)]},
        "remove_chat_member": {"chat_id": own_chat, "employee_id": p.plain_member(own_chat)},
        "leave_chat": {"chat_id": p.member_chat()},
        "send_chat_message": {"chat_id": p.member_chat(), "content": "Hello"},
        "transfer_employee": {"employee_id": p.teammate(), "department_id": p.other_team()},
    }


def happy_call(tool: str, call, pick: Pick) -> tuple[int, dict[str, Any]]:
    """(actor, args) of a successful call; a few tools need a meeting or booking of the actor's own first,
    made by a setup call whose changes the caller sees too."""
    args = happy_args(pick)
    if tool in ("cancel_meeting", "invite_participants", "remove_participant"):
        mid = new_meeting(call, pick)["meeting_id"]
        args["cancel_meeting"] = {"meeting_id": mid, "reason": "Not needed"}
        args["invite_participants"] = {"meeting_id": mid, "employee_ids": [pick.stranger()]}
        args["remove_participant"] = {"meeting_id": mid, "employee_id": pick.teammate(0)}
    if tool == "release_room":
        bid = ok(call(pick.actor, "book_room", {"room_id": pick.room(), "start": f"{SOON} 15:00", "end": f"{SOON} 16:00"}))["booking_id"]
        args["release_room"] = {"booking_id": bid}
    return pick.actor, args[tool]


def test_happy_args_cover_every_tool(pick):
    assert set(happy_args(pick)) == set(ALL_TOOLS)


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_unknown_extra_argument_is_refused_and_happy_call_works(tool, call, meeting, pick, meeting_conn):
    actor, args = happy_call(tool, call, pick)
    before = content_hash(meeting_conn)
    message = err(call(actor, tool, {**args, "bogus_extra": 1}), "invalid_arguments")
    assert "bogus_extra" in message
    assert content_hash(meeting_conn) == before
    value = ok(call(actor, tool, args))
    assert value
    json.dumps(value)
    if meeting.tools.get(tool).kind == READ:
        assert content_hash(meeting_conn) == before
    else:
        assert content_hash(meeting_conn) != before
        check_invariants(meeting, meeting_conn)


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_docstring_documents_every_argument_and_the_tag_is_right(tool, meeting):
    t = meeting.tools.get(tool)
    signature = list(inspect.signature(t.func).parameters.values())[1:]
    schema = t.parameters
    assert list(schema["properties"]) == [p.name for p in signature]
    assert schema["required"] == [p.name for p in signature if p.default is inspect.Parameter.empty]
    for name, prop in schema["properties"].items():
        assert prop.get("description", "").strip(), f"{tool}.{name} has no description"
        assert "type" in prop or "enum" in prop
    assert t.summary and "Args:" not in t.description
    # Write tools are exactly the ones that change the world.
    changes = tool.split("_")[0] in {
        "create",
        "cancel",
        "invite",
        "remove",
        "respond",
        "book",
        "release",
        "delete",
        "add",
        "leave",
        "send",
        "transfer",
    }
    assert (t.kind == WRITE) == changes


@pytest.mark.parametrize("tool", [t.name for t in _MEETING.tools if any(p.name == "page" for p in t.params)])
def test_page_must_start_at_one(tool, call, pick, unchanged):
    actor, args = happy_call(tool, call, pick)
    err(call(actor, tool, {**args, "page": 0}), "invalid_value")
    unchanged()


def test_both_time_forms_are_accepted_and_stored_with_seconds(call, meeting_conn, pick):
    a = ok(call(pick.actor, "book_room", {"room_id": pick.room(), "start": f"{SOON} 10:00", "end": f"{SOON} 10:30:00"}))
    assert (a["start_at"], a["end_at"]) == (f"{SOON} 10:00:00", f"{SOON} 10:30:00")
    entry = ok(call(pick.actor, "create_schedule_entry", {"title": "t", "start": f" {SOON} 12:00:00 ", "end": f"{SOON} 12:30"}))
    assert val(meeting_conn, "SELECT start_at FROM schedule_entries WHERE id = ?", entry["entry_id"]) == f"{SOON} 12:00:00"
