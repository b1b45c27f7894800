"""The meeting domain's task templates: determinism, coverage, every task checks out, and the
semantics a few templates promise in their queries (boundaries included or excluded, refusals)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from random import Random

import pytest

from ebench.tasks.generation import Draft, GenContext, NoTarget, Template, generate, templates_for
from ebench.tasks.reference import check_task
from ebench.tasks.spec import CAPABILITIES, parse_task
from ebench.tasks.templates import meeting as M

SEED = 20261129
COUNT = 45


@pytest.fixture(scope="module")
def batch(meeting_world):
    return generate("meeting", COUNT, SEED)


@pytest.fixture
def ctx_factory(meeting_conn) -> Iterator:
    def make(i: int) -> GenContext:
        return GenContext("meeting", meeting_conn, Random(f"test-meeting:{i}"))

    yield make


def drafts(make, template: Template, wanted: int = 6, tries: int = 200) -> list[tuple[GenContext, Draft]]:
    out = []
    for i in range(tries):
        ctx = make(i)
        try:
            out.append((ctx, template.draft(ctx)))
        except NoTarget:
            continue
        if len(out) == wanted:
            break
    assert out, f"{template.name} never found a target"
    return out


def calls(draft: Draft, tool: str) -> list[dict]:
    return [s.args for s in draft.steps if s.tool == tool]


# -- the generated set ---------------------------------------------------------------------


def test_the_same_seed_gives_the_same_tasks_byte_for_byte(batch):
    again = generate("meeting", COUNT, SEED)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in batch.tasks]


def test_every_template_contributes_and_every_capability_appears(batch):
    assert len(batch.tasks) == COUNT
    assert {t.generator["template"] for t in batch.tasks} == {t.name for t in templates_for("meeting")}
    assert {c for t in batch.tasks for c in t.capabilities} == set(CAPABILITIES)
    assert 12 <= len(M.TEMPLATES) <= 16


def test_every_task_checks_out(batch):
    for task in batch.tasks:
        assert len(task.expected_diff) >= 3, task.id
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()
        check = check_task(task)  # the reference reproduces, an empty trial fails, no id leaks
        assert check.ok, (task.id, check.problems)


def test_queries_state_no_ids_of_changed_rows(batch):
    for task in batch.tasks:
        ids = {str(v) for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and v >= 10}
        words = set(task.query.replace(",", " ").replace(".", " ").replace("(", " ").replace(")", " ").split())
        assert not ids & words, (task.id, ids & words)


def test_inserts_updates_and_deletes_all_occur(batch):
    ops = {c.op for t in batch.tasks for c in t.expected_diff}
    assert ops == {"insert", "update", "delete"}


# -- semantics pinned against SQL written here ------------------------------------------------


def test_focus_blocks_touching_entries_do_not_block_a_day(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.FocusBlocks()):
        first, last = draft.params["first"], draft.params["last"]
        start, end = draft.params["slot"]
        expected = []
        for day in M._weekdays_between(first, last):
            clash = ctx.value("SELECT COUNT(*) FROM schedule_entries WHERE employee_id = ? AND start_at < ? AND end_at > ?",
                              draft.actor, f"{day} {end}:00", f"{day} {start}:00")
            if not clash:
                expected.append(day)
        got = [a["start"][:10] for a in calls(draft, "create_schedule_entry")]
        assert got == expected
        # The slot starts where one of the actor's entries ends: that entry alone never removes its day.
        touching = ctx.column("SELECT substr(start_at, 1, 10) FROM schedule_entries WHERE employee_id = ? AND end_at = "
                              "substr(start_at, 1, 10) || ' ' || ? AND substr(start_at, 1, 10) BETWEEN ? AND ?",
                              draft.actor, f"{start}:00", first, last)
        assert touching
        for day in touching:
            others = ctx.value("SELECT COUNT(*) FROM schedule_entries WHERE employee_id = ? AND start_at < ? AND end_at > ?",
                               draft.actor, f"{day} {end}:00", f"{day} {start}:00")
            if M._day(day).weekday() < 5 and not others:
                assert day in got
        assert all(a["kind"] == "focus" and a["is_private"] is True for a in calls(draft, "create_schedule_entry"))


def test_transfer_includes_the_stated_level_and_keeps_the_team_head(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.TransferSeniorStaff()):
        p = draft.params
        moved = sorted(a["employee_id"] for a in calls(draft, "transfer_employee"))
        expected = ctx.column("SELECT id FROM employees WHERE department_id = ? AND job_family = ? AND level >= ? "
                              "AND id NOT IN (SELECT employee_id FROM department_heads) ORDER BY id", p["from"], p["family"], p["min_level"])
        assert moved == expected
        levels = ctx.column(f"SELECT level FROM employees WHERE id IN {M._in(moved)}")
        assert p["min_level"] in levels  # the boundary is a real level, and it is included
        below = ctx.value("SELECT COUNT(*) FROM employees WHERE department_id = ? AND job_family = ? AND level < ?",
                          p["from"], p["family"], p["min_level"])
        assert below  # someone just under the boundary stays
        head = ctx.value("SELECT employee_id FROM department_heads WHERE department_id = ?", p["from"])
        assert head not in moved
        assert all(a["department_id"] == p["to"] for a in calls(draft, "transfer_employee"))


def test_prune_keeps_members_who_posted_on_the_cut_day(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.PruneQuietChatMembers()):
        chat, since = draft.params["chat_id"], draft.params["since"]
        removed = sorted(a["employee_id"] for a in calls(draft, "remove_chat_member"))
        expected = ctx.column(
            "SELECT cm.employee_id FROM chat_members cm WHERE cm.chat_id = ? AND cm.role != 'owner' AND NOT EXISTS "
            "(SELECT 1 FROM chat_messages x WHERE x.chat_id = cm.chat_id AND x.sender_id = cm.employee_id AND x.sent_at >= ?) "
            "ORDER BY cm.employee_id", chat, f"{since} 00:00:00")
        assert removed == expected
        on_the_day = ctx.column("SELECT sender_id FROM chat_messages WHERE chat_id = ? AND substr(sent_at, 1, 10) = ?", chat, since)
        assert on_the_day and not set(on_the_day) & set(removed)
        assert draft.actor not in removed


def test_leave_covers_both_days_and_skips_declined_and_cancelled(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.LeaveCleanup()):
        first, last = draft.params["first"], draft.params["last"]
        rows = ctx.rows("SELECT m.id, m.status, p.role, p.response FROM meeting_participants p JOIN meetings m ON m.id = p.meeting_id "
                        "WHERE p.employee_id = ? AND substr(m.start_at, 1, 10) BETWEEN ? AND ? ORDER BY m.id", draft.actor, first, last)
        cancel = sorted(a["meeting_id"] for a in calls(draft, "cancel_meeting"))
        decline = sorted(a["meeting_id"] for a in calls(draft, "respond_to_meeting"))
        assert cancel == [r["id"] for r in rows if r["status"] == "scheduled" and r["role"] == "organiser"]
        assert decline == [r["id"] for r in rows if r["status"] == "scheduled" and r["role"] != "organiser" and r["response"] != "declined"]
        entry = calls(draft, "create_schedule_entry")
        assert entry == [{"title": entry[0]["title"], "start": f"{first} 09:00", "end": f"{last} 18:00", "kind": "leave"}]


def test_room_week_falls_back_to_the_smallest_free_room_only_when_taken(ctx_factory):
    fallbacks = 0
    for ctx, draft in drafts(ctx_factory, M.WeekOfRoomBookings()):
        bookings = calls(draft, "book_room")
        asked = draft.params["room_id"]
        info = ctx.one("SELECT building_id, capacity FROM rooms WHERE id = ?", asked)
        for b in bookings:
            start, end = b["start"] + ":00", b["end"] + ":00"
            asked_free = M._room_free(ctx, asked, start, end)
            if b["room_id"] == asked:
                assert asked_free
                continue
            fallbacks += 1
            assert not asked_free
            free = ctx.rows("SELECT id, name, capacity FROM rooms WHERE building_id = ? AND is_bookable = 1 AND capacity >= ? AND id != ? "
                            "ORDER BY capacity, name COLLATE NOCASE, id", info["building_id"], info["capacity"], asked)
            free = [r for r in free if M._room_free(ctx, r["id"], start, end)]
            assert b["room_id"] == free[0]["id"]
    assert fallbacks
