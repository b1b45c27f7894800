"""The moba task templates: every template yields certified tasks whose public solutions replay to
their expected diffs, every stated condition bites, the suite is deterministic, and the semantics
the queries promise (a candidate sits exactly on each boundary, a filter excludes someone, one
task per player per template) hold against SQL computed here."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from ebench.domains.moba import templates as moba
from ebench.domains.moba.vocabulary import TIERS
from ebench.engine.domain_registry import get_domain
from ebench.tasks.certify import optional_bite
from ebench.tasks.generation import generate
from ebench.tasks.grading import grade
from ebench.tasks.public import Lazy
from ebench.tasks.reference import run_steps
from ebench.tasks.spec import parse_task
from ebench.tasks.task_check import check_task
from ebench.tasks.template_api import templates_for

SEED = 20261129


@pytest.fixture(scope="module")
def batch(moba_world):
    """Two tasks of every template (the generator's own rules, fewer per template)."""
    return generate("moba", 2 * len(moba.TEMPLATES), SEED, max_per_template=2)


def _of(batch, name: str) -> list:
    return [t for t in batch.tasks if t.generator["template"] == name]


def _steps(task, tool: str) -> list[dict]:
    return [s.args for s in task.reference_solution if s.tool == tool]


def test_the_template_set_is_complete():
    names = [t.name for t in templates_for("moba")]
    assert len(names) >= 27 and len(set(names)) == len(names)
    for template in templates_for("moba"):
        assert len(template.phrasings) >= 3, template.name
        assert len(set(template.phrasings)) == len(template.phrasings), template.name
    writes = {n for n in get_domain("moba").tools.names if get_domain("moba").tools.get(n).kind == "write"}
    assert writes, "the domain has write tools"


def test_every_template_yields_certified_tasks(batch):
    per_template = Counter(t.generator["template"] for t in batch.tasks)
    assert set(per_template) == {t.name for t in moba.TEMPLATES}
    assert all(n == 2 for n in per_template.values()), per_template
    writes = {n for n in get_domain("moba").tools.names if get_domain("moba").tools.get(n).kind == "write"}
    assert writes <= {s.tool for t in batch.tasks for s in t.reference_solution}


def test_every_public_solution_replays_to_its_expected_diff(batch, moba_world):
    schema = get_domain("moba").schema
    for task in batch.tasks:
        run = run_steps("moba", task.actor, task.reference_solution, world=moba_world)
        assert grade(task.expected_diff, run.diff, schema).passed, task.id
        assert len(task.expected_diff) >= 3, task.id
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()


def test_every_task_checks_out(batch):
    for task in batch.tasks:
        check = check_task(task)
        assert check.ok, (task.id, check.problems)


def test_every_declared_condition_bit(batch):
    templates = {t.name: t for t in templates_for("moba")}
    for task in batch.tasks:
        template = templates[task.generator["template"]]
        expected = {f"{c.name}:{mode}" for c in template.conditions for mode in c.modes if not optional_bite(template, Lazy(c.name, mode))}
        assert expected <= set(task.generator["bites"]), (task.id, expected - set(task.generator["bites"]))
        assert task.capabilities, task.id


def test_one_task_per_player_and_template(batch):
    seen = Counter((t.generator["template"], t.actor) for t in batch.tasks)
    assert max(seen.values()) == 1


def test_queries_quote_no_quotes_and_state_no_ids(batch):
    for task in batch.tasks:
        for value in task.generator["stated"].values():
            if isinstance(value, str) and f"'{value}'" in task.query:
                assert "'" not in value, (task.id, value)
        ids = {str(v) for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and v >= 100}
        words = set(re.split(r"[\s,.;:()']+", task.query))
        assert not ids & words, (task.id, ids & words)


def test_the_same_seed_gives_the_same_tasks():
    chosen = [
        t for t in templates_for("moba") if t.name in ("prune_inactive_friends", "favourite_mode_wins_since", "room_for_frequent_teammates")
    ]
    first = generate("moba", 4, 7, templates=chosen, max_per_template=2)
    again = generate("moba", 4, 7, templates=[type(t)() for t in chosen], max_per_template=2)
    assert [t.to_json() for t in first.tasks] == [t.to_json() for t in again.tasks]
    reused = generate("moba", 4, 7, templates=chosen, max_per_template=2)  # the same instances, a new run
    assert [t.to_json() for t in reused.tasks] == [t.to_json() for t in first.tasks]


# -- the semantics of a few tricky templates, against SQL ------------------------------------


def test_pruning_keeps_friends_each_condition_spares(batch, moba_conn):
    """The intimacy is a round number; 'intimacy below n' spares a friend who logged in before the
    date, and 'last login before the date' spares a friend with intimacy below n."""
    for task in _of(batch, "prune_inactive_friends"):
        n, date = task.generator["stated"]["intimacy"], task.generator["stated"]["before"]
        friends = moba_conn.execute(
            "SELECT r.other_id, r.intimacy, substr(p.last_login, 1, 10) FROM relations r JOIN players p ON p.id = r.other_id "
            "WHERE r.player_id = ? AND r.kind = 'friend'",
            (task.actor,),
        ).fetchall()
        removed = {a["player_id"] for a in _steps(task, "remove_friend")}
        assert removed == {f for f, i, day in friends if i < n and day < date}
        assert n % 50 == 0
        assert any(i >= n and day < date for _, i, day in friends)
        assert any(i < n and day >= date for _, i, day in friends)


def test_budget_keeps_the_round_reserve(batch, moba_conn):
    """The reserve is a round number the player chose, never the balance the purchases leave; the
    purchases keep at least that much."""
    for task in _of(batch, "buy_heroes_on_budget"):
        stated = task.generator["stated"]
        column = "price_coins" if stated["currency"] == "coins" else "price_diamonds"
        bought = [a["hero_id"] for a in _steps(task, "buy_hero")]
        spent = sum(moba_conn.execute(f"SELECT {column} FROM heroes WHERE id = ?", (h,)).fetchone()[0] for h in bought)
        balance = moba_conn.execute(f"SELECT {stated['currency']} FROM players WHERE id = ?", (task.actor,)).fetchone()[0]
        assert balance - spent >= stated["reserve"] != balance - spent
        assert stated["reserve"] % (1000 if stated["currency"] == "coins" else 100) == 0
        roles = [moba_conn.execute("SELECT role, secondary_role FROM heroes WHERE id = ?", (h,)).fetchone() for h in bought]
        assert all(stated["role"] in r for r in roles)


def test_clan_practice_room_leaves_out_a_clanmate_in_a_match(batch, moba_conn):
    """The 'not in a match' filter excludes someone, and the room holds the invitees plus the host."""
    for task in _of(batch, "clan_practice_room"):
        team = moba_conn.execute("SELECT team_id FROM team_members WHERE player_id = ?", (task.actor,)).fetchone()[0]
        mates = dict(
            moba_conn.execute(
                "SELECT p.id, p.status FROM team_members m JOIN players p ON p.id = m.player_id WHERE m.team_id = ? AND p.id != ?",
                (team, task.actor),
            ).fetchall()
        )
        invited = {a["player_id"] for a in _steps(task, "invite_to_room")}
        assert invited == {p for p, status in mates.items() if status != "in_match"}
        assert any(status == "in_match" for status in mates.values())
        room = _steps(task, "create_room")[0]
        assert room["capacity"] == len(invited) + 1 and room["mode"] == "custom"


def test_accepted_requests_include_the_sender_on_the_cut(batch, moba_conn):
    """'{tier} or higher' accepts a sender exactly at that tier and rejects one below; the room invites
    exactly the accepted senders."""
    for task in _of(batch, "accept_requests_by_rank"):
        cut = TIERS.index(task.generator["stated"]["tier"])
        tiers = {
            r: TIERS.index(t)
            for r, t in moba_conn.execute(
                "SELECT f.id, p.tier FROM friend_requests f JOIN players p ON p.id = f.sender_id "
                "WHERE f.receiver_id = ? AND f.status = 'pending'",
                (task.actor,),
            ).fetchall()
        }
        answers = {a["request_id"]: a["accept"] for a in _steps(task, "answer_friend_request")}
        assert answers == {r: t >= cut for r, t in tiers.items()}
        assert cut in tiers.values() and min(tiers.values()) < cut
        yes = [r for r, ok in answers.items() if ok]
        accepted = {
            s
            for (s,) in moba_conn.execute(f"SELECT sender_id FROM friend_requests WHERE id IN ({','.join('?' * len(yes))})", yes).fetchall()
        }
        assert {a["player_id"] for a in _steps(task, "invite_to_room")} == accepted


def test_mode_wins_archive_reaches_the_heaviest_history(moba_world):
    """The archive template drafts the player with the most wins first (almost surely): the suite's
    one task of 150+ changed rows."""
    template = next(t for t in templates_for("moba") if t.name == "favourite_mode_wins_since")
    tasks = generate("moba", 1, SEED, templates=[template]).tasks
    assert len(tasks) == 1 and len(tasks[0].expected_diff) >= 150
