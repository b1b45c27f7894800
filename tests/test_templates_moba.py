"""The moba task templates: deterministic, every template and capability covered, every task checks
out, and the semantics the queries promise (boundaries included or excluded, refused targets left
out) hold against SQL computed here."""

from __future__ import annotations

import json

import pytest

from ebench.domains import get_domain
from ebench.domains.moba.schema import tier_index
from ebench.domains.moba.vocabulary import TIERS
from ebench.tasks.generation import generate, templates_for
from ebench.tasks.reference import check_task
from ebench.tasks.spec import CAPABILITIES, parse_task
from ebench.tasks.templates import moba

SEED = 20261129


@pytest.fixture(scope="module")
def batch(moba_world):
    return generate("moba", 45, SEED)


def _only(template, count: int, seed: int = 3):
    return generate("moba", count, seed, templates=[template()]).tasks


def test_the_same_seed_gives_the_same_tasks(batch):
    again = generate("moba", 45, SEED)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in batch.tasks]


def test_every_template_contributes_and_every_capability_appears(batch):
    assert len(batch.tasks) == 45
    assert len(moba.TEMPLATES) >= 12
    assert {t.generator["template"] for t in batch.tasks} == {t.name for t in templates_for("moba")}
    assert {c for t in batch.tasks for c in t.capabilities} == set(CAPABILITIES)
    assert {c.op for t in batch.tasks for c in t.expected_diff} == {"insert", "update", "delete"}


def test_every_task_checks_out(batch):
    for task in batch.tasks:
        assert len(task.expected_diff) >= 3, task.id
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()
        check = check_task(task)
        assert check.ok, (task.id, check.problems)


def test_queries_state_no_ids_of_changed_rows(batch):
    for task in batch.tasks:
        ids = {str(v) for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and v >= 100}
        words = set(task.query.replace(",", " ").replace(".", " ").replace("'", " ").split())
        assert not ids & words, (task.id, ids & words)


def _steps(task, tool):
    return [s.args for s in task.reference_solution if s.tool == tool]


def test_friend_requests_sender_on_the_cut_is_accepted(moba_conn):
    """'{tier} or higher' accepts a sender exactly at that tier; everyone below is rejected (and blocked
    in the blocking variant); every pending request is answered once."""
    tier = tier_index("p.tier")
    for task in _only(moba.AnswerFriendRequestsByRank, 6):
        params = task.generator["params"]
        key = "level" if "level" in params else "tier"
        cut = params[key]
        rows = moba_conn.execute(
            f"SELECT f.id, f.sender_id, {'p.level' if key == 'level' else tier} FROM friend_requests f JOIN players p "
            "ON p.id = f.sender_id WHERE f.receiver_id = ? AND f.status = 'pending'", (task.actor,)).fetchall()
        expected = {r[0]: r[2] >= cut for r in rows}
        answers = {a["request_id"]: a["accept"] for a in _steps(task, "answer_friend_request")}
        assert answers == expected
        assert any(r[2] == cut for r in rows) and any(r[2] < cut for r in rows)  # the boundary matters
        blocked = {a["player_id"] for a in _steps(task, "block_player")}
        assert blocked == ({r[1] for r in rows if r[2] < cut} if params["block"] else set())
        if key == "tier":
            assert TIERS[cut] in task.query


def test_pruning_keeps_the_friend_at_the_threshold_and_clanmates(moba_conn):
    for task in _only(moba.PruneDistantFriends, 6):
        n, spare = task.generator["params"]["below"], task.generator["params"]["spare_clan"]
        friends = dict(moba_conn.execute("SELECT other_id, intimacy FROM relations WHERE player_id = ? AND kind = 'friend'",
                                         (task.actor,)).fetchall())
        team = moba_conn.execute("SELECT team_id FROM team_members WHERE player_id = ?", (task.actor,)).fetchone()
        mates = {r[0] for r in moba_conn.execute("SELECT player_id FROM team_members WHERE team_id = ?", (team[0] if team else -1,))}
        removed = {a["player_id"] for a in _steps(task, "remove_friend")}
        assert any(v == n for v in friends.values())  # someone sits exactly on the threshold ...
        assert all(friends[p] < n for p in removed)  # ... and stays
        assert removed == {p for p, v in friends.items() if v < n and not (spare and p in mates)}
        assert f"{n}" in task.query


def test_budget_purchases_stop_at_the_first_hero_that_breaks_the_reserve(moba_conn):
    today = get_domain("moba").now[:10]
    for task in _only(moba.BuyHeroesOnBudget, 5):
        params = task.generator["params"]
        currency, role, reserve = params["currency"], params["role"], params["reserve"]
        price = "price_coins" if currency == "coins" else "price_diamonds"
        balance = moba_conn.execute(f"SELECT {currency} FROM players WHERE id = ?", (task.actor,)).fetchone()[0]
        order = moba_conn.execute(
            f"SELECT id, {price} FROM heroes WHERE availability = 'shop' AND release_date <= ? AND (role = ? OR secondary_role = ?) "
            "AND id NOT IN (SELECT hero_id FROM player_heroes WHERE player_id = ?) ORDER BY 2, name COLLATE NOCASE",
            (today, role, role, task.actor)).fetchall()
        bought = [a["hero_id"] for a in _steps(task, "buy_hero")]
        assert {a["currency"] for a in _steps(task, "buy_hero")} == {currency}
        assert bought == [h for h, _ in order[:len(bought)]]  # cheapest first, by name among equal prices
        spent = sum(p for _, p in order[:len(bought)])
        assert balance - spent >= reserve
        if len(bought) < len(order):
            assert balance - spent - order[len(bought)][1] < reserve  # the next one would break the reserve


def test_clan_review_never_approves_a_member_of_another_clan_nor_past_capacity(moba_conn):
    tier = tier_index("p.tier")
    for task in _only(moba.ReviewClanApplications, 6):
        params = task.generator["params"]
        key = "level" if "level" in params else "tier"
        members, capacity = moba_conn.execute("SELECT member_count, capacity FROM teams WHERE id = ?", (params["team_id"],)).fetchone()
        apps = moba_conn.execute(
            f"SELECT a.id, {'p.level' if key == 'level' else tier}, EXISTS (SELECT 1 FROM team_members m WHERE m.player_id = a.player_id) "
            "FROM team_applications a JOIN players p ON p.id = a.player_id WHERE a.team_id = ? AND a.status = 'pending' "
            "ORDER BY a.applied_at, a.id", (params["team_id"],)).fetchall()
        approved = [a["application_id"] for a in _steps(task, "approve_team_application")]
        rejected = [a["application_id"] for a in _steps(task, "reject_team_application")]
        assert sorted(approved + rejected) == sorted(a[0] for a in apps)  # each pending application answered once
        eligible = [a[0] for a in apps if not a[2] and a[1] >= params[key]]
        assert approved == eligible[:capacity - members]  # oldest first, while places remain
        assert not {a[0] for a in apps if a[2]} & set(approved)


def test_clan_practice_room_is_exactly_big_enough(moba_conn):
    for task in _only(moba.ClanPracticeRoom, 4):
        create = _steps(task, "create_room")[0]
        invited = [a["player_id"] for a in _steps(task, "invite_to_room")]
        team = moba_conn.execute("SELECT team_id FROM team_members WHERE player_id = ?", (task.actor,)).fetchone()[0]
        free = {r[0] for r in moba_conn.execute("SELECT p.id FROM team_members m JOIN players p ON p.id = m.player_id "
                                                "WHERE m.team_id = ? AND p.id != ? AND p.status != 'in_match'", (team, task.actor))}
        assert set(invited) == free
        assert create["capacity"] == len(invited) + 1 and create["mode"] == "custom"
        assert create["password"] in task.query
