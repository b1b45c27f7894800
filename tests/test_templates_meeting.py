"""The meeting domain's task templates: every template yields certified tasks whose stated conditions
all bite, every public solution replays to its expected diff, the same seed gives the same tasks,
and the semantics a few templates promise (boundaries included, a calendar that really decides,
people on leave really left out) hold against SQL written here."""

from __future__ import annotations

import json
import re
from random import Random

import pytest

from ebench.domains.meeting import templates as M
from ebench.engine.domain_registry import get_domain
from ebench.tasks.certify import clause_problems, optional_bite
from ebench.tasks.generation import generate
from ebench.tasks.grading import grade
from ebench.tasks.public import Lazy
from ebench.tasks.reference import run_steps
from ebench.tasks.spec import CAPABILITIES, parse_task
from ebench.tasks.task_check import check_task
from ebench.tasks.template_api import GenContext, NoTarget, templates_for
from ebench.tasks.vocabulary import open_terms

SEED = 20261129
PER_TEMPLATE = 2


@pytest.fixture(scope="module")
def batch(meeting_world):
    count = PER_TEMPLATE * len(M.TEMPLATES)
    report = generate("meeting", count, SEED, max_per_template=PER_TEMPLATE)
    assert len(report.tasks) == count, report.rejected
    return report


@pytest.fixture
def ctx(meeting_conn):
    def make(i: int) -> GenContext:
        return GenContext("meeting", meeting_conn, Random(f"test-meeting:{i}"))

    return make


def drafts(make, template, wanted: int = 4, tries: int = 60):
    out = []
    for i in range(tries):
        context = make(i)
        try:
            out.append((context, template.draft(context)))
        except NoTarget:
            continue
        if len(out) == wanted:
            break
    assert out, f"{template.name} never found a target"
    return out


def calls(draft, tool: str) -> list[dict]:
    return [s.args for s in draft.steps if s.tool == tool]


# -- the template set ----------------------------------------------------------------------


def test_the_template_set_is_complete():
    templates = templates_for("meeting")
    assert len(templates) >= 27
    assert len({t.name for t in templates}) == len(templates)
    for t in templates:
        assert len(t.phrasings) >= 3, t.name
        skeletons = [re.sub(r"\{\w+\}", "{}", p) for p in t.phrasings]
        assert len(set(skeletons)) == len(skeletons), t.name
        for p in t.phrasings:  # wording rules 3 and 5
            assert "ordered by name" not in p and "by their name" not in p, (t.name, p)  # people: first name or surname?
            assert not re.search(r"at least 1 \w+s\b", p), (t.name, p)


def test_every_template_yields_certified_tasks(batch):
    per = {}
    for task in batch.tasks:
        per[task.generator["template"]] = per.get(task.generator["template"], 0) + 1
    assert per == {t.name: PER_TEMPLATE for t in templates_for("meeting")}
    assert {c for t in batch.tasks for c in t.capabilities} == set(CAPABILITIES)
    domain = get_domain("meeting")
    writes = {n for n in domain.tools.names if domain.tools.get(n).kind == "write"}
    assert writes <= {s.tool for t in batch.tasks for s in t.reference_solution}


def test_every_stated_condition_bites(batch):
    templates = {t.name: t for t in templates_for("meeting")}
    for task in batch.tasks:
        template = templates[task.generator["template"]]
        for condition in template.conditions:
            for mode in condition.modes:
                if optional_bite(template, Lazy(condition.name, mode)):
                    continue  # a natural threshold: a candidate need not sit exactly on it
                assert f"{condition.name}:{mode}" in task.generator["bites"], (task.id, condition.name, mode)


def test_every_clause_is_declared_and_no_term_is_left_open(batch, meeting_world):
    templates = {t.name: t for t in templates_for("meeting")}
    for task in batch.tasks:
        template = templates[task.generator["template"]]
        assert template.clauses is not None, template.name
        assert clause_problems(template, task.generator["stated"], task.generator["bites"], task.expected_diff) == [], task.id
        assert open_terms("meeting", task.query, meeting_world) == [], task.id
        assert not re.search(r"\((?:level \d+|exactly|that day)[^)]*(?:counts|included)\)", task.query), task.query


def test_every_public_solution_replays_to_its_diff(batch, meeting_world):
    schema = get_domain("meeting").schema
    for task in batch.tasks:
        assert len(task.expected_diff) >= 3, task.id
        run = run_steps("meeting", task.actor, task.reference_solution, world=meeting_world)
        assert grade(task.expected_diff, run.diff, schema).passed, task.id
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()


def test_every_task_checks_out(batch):
    for task in batch.tasks[::3]:  # the full check re-runs the public solver: a sample keeps the file fast
        check = check_task(task)
        assert check.ok, (task.id, check.problems)


def test_the_same_seed_gives_the_same_tasks(meeting_world):
    some = [M.FocusBlocks(), M.OneOnOnes(), M.OutOfOffice(), M.SeniorPanel()]
    first = generate("meeting", 6, 7, templates=some)
    again = generate("meeting", 6, 7, templates=some)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in first.tasks]


def test_quoted_values_hold_no_quote(batch):
    """Wording rule 8: what the query puts in single quotes (titles, chat names, messages) has no quote itself."""
    for task in batch.tasks:
        for value in task.generator["stated"].values():
            if isinstance(value, str) and f"'{value}'" in task.query:
                assert "'" not in value, task.query


# -- semantics pinned against SQL written here ------------------------------------------------


def _busy(conn, employee: int, start: str, end: str) -> bool:
    return bool(
        conn.execute(
            "SELECT 1 FROM schedule_entries WHERE employee_id = ? AND start_at < ? AND end_at > ?", (employee, end, start)
        ).fetchone()
    )


def test_focus_blocks_follow_the_calendar_and_touching_entries_do_not_block(ctx):
    for context, draft in drafts(ctx, M.FocusBlocks()):
        s = draft.stated
        expected = [
            d
            for d in M._days_between(s["first"], s["last"])
            if M._day(d).weekday() < 5 and not _busy(context.conn, draft.actor, f"{d} {s['start']}:00", f"{d} {s['end']}:00")
        ]
        got = [a["start"][:10] for a in calls(draft, "create_schedule_entry")]
        assert got == expected
        weekdays = [d for d in M._days_between(s["first"], s["last"]) if M._day(d).weekday() < 5]
        assert len(got) < len(weekdays)  # the calendar decides: some weekday is busy
        assert len(weekdays) < len(M._days_between(s["first"], s["last"]))  # and the range has a weekend
        touching = context.conn.execute(
            "SELECT substr(start_at, 1, 10) FROM schedule_entries WHERE employee_id = ? AND end_at = substr(start_at, 1, 10) || ' ' || ? "
            "AND substr(start_at, 1, 10) BETWEEN ? AND ?",
            (draft.actor, f"{s['start']}:00", s["first"], s["last"]),
        ).fetchall()
        assert any(day in got for (day,) in touching)  # an entry ending exactly at the start leaves its day free
        assert all(a["kind"] == "focus" and a["is_private"] is True for a in calls(draft, "create_schedule_entry"))


def test_out_of_office_includes_both_end_days_and_nothing_outside(ctx):
    for context, draft in drafts(ctx, M.OutOfOffice()):
        first, last = draft.stated["first"], draft.stated["last"]
        conn = context.conn
        starts = []
        for m in [a["meeting_id"] for a in calls(draft, "cancel_meeting") + calls(draft, "respond_to_meeting")]:
            starts.append(conn.execute("SELECT start_at FROM meetings WHERE id = ?", (m,)).fetchone()[0])
        for b in calls(draft, "release_room"):
            starts.append(conn.execute("SELECT start_at FROM room_bookings WHERE id = ?", (b["booking_id"],)).fetchone()[0])
        for e in calls(draft, "delete_schedule_entry"):
            starts.append(conn.execute("SELECT start_at FROM schedule_entries WHERE id = ?", (e["entry_id"],)).fetchone()[0])
        days = {s[:10] for s in starts}
        assert first in days and last in days  # something starts exactly on each boundary day
        assert all(first <= d <= last for d in days)
        organised = conn.execute(
            "SELECT id FROM meetings WHERE organizer_id = ? AND status = 'scheduled' AND substr(start_at, 1, 10) "
            "BETWEEN ? AND ? ORDER BY id",
            (draft.actor, first, last),
        ).fetchall()
        assert sorted(a["meeting_id"] for a in calls(draft, "cancel_meeting")) == [m for (m,) in organised]
        entry = calls(draft, "create_schedule_entry")
        assert entry == [{"title": draft.stated["title"], "start": f"{first} 09:00", "end": f"{last} 18:00", "kind": "leave"}]


def test_one_on_ones_include_the_stated_level_and_follow_surnames(ctx):
    for context, draft in drafts(ctx, M.OneOnOnes()):
        level = draft.stated["level"]
        reports = context.conn.execute("SELECT id, name, level, status FROM employees WHERE manager_id = ?", (draft.actor,)).fetchall()
        expected = sorted((r for r in reports if r[3] == "active" and r[2] >= level), key=lambda r: M._surname_key(r[1]))
        meetings = calls(draft, "create_meeting")
        assert [m["participant_ids"] for m in meetings] == [[r[0]] for r in expected]
        assert any(r[3] == "active" and r[2] < level for r in reports)  # the level leaves someone out
        assert any(r[3] == "on_leave" and r[2] >= level for r in reports)  # the leave filter leaves someone out
        assert [m["title"] for m in meetings] == [f"1:1 {r[1]}" for r in expected]
        assert [m["start"][11:] for m in meetings] == sorted(m["start"][11:] for m in meetings)


def test_two_team_meeting_leaves_out_someone_on_leave_and_someone_busy(ctx):
    for context, draft in drafts(ctx, M.TeamMeetingFreeMembers(), wanted=3):
        s = draft.stated
        start, end = f"{s['day']} {s['start']}:00", f"{s['day']} {s['end']}:00"
        ids = [
            r[0]
            for r in context.conn.execute(
                "SELECT e.id FROM employees e JOIN departments d ON d.id = e.department_id WHERE d.name IN (?, ?)", tuple(s["teams"])
            )
        ]
        status = dict(context.conn.execute(f"SELECT id, status FROM employees WHERE id IN {M._in(ids)}").fetchall())
        expected = sorted(i for i in ids if status[i] == "active" and not _busy(context.conn, i, start, end) and i != draft.actor)
        (meeting,) = calls(draft, "create_meeting")
        assert sorted(meeting["participant_ids"]) == expected
        assert any(status[i] == "on_leave" and not _busy(context.conn, i, start, end) for i in ids)
        assert any(status[i] == "active" and _busy(context.conn, i, start, end) for i in ids)
