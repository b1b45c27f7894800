"""The generator's workspace and the draft checks of model-synthesized tasks: read-only SQL, write
calls recorded as the reference (created ids linked), and one test per rejection reason."""

from __future__ import annotations

import pytest

from ebench.engine.domain_registry import get_domain
from ebench.tasks.generation import SeenTasks
from ebench.tasks.suite import load_suite
from ebench.tasks.synthesis import (
    MAX_REFERENCE_CALLS,
    DraftRejected,
    GeneratorWorkspace,
    Rejection,
    counts_stated,
    link_created_ids,
    vet_draft,
)
from ebench.tasks.task_check import check_task

ACTOR = 16  # moba-0024's player: three clanmates not in a match (33, 124, 162)
QUERY = "Open a custom room called 'Synth Night' with password 9137 and invite each clanmate who is not in a match."


def room_and_invites(workspace: GeneratorWorkspace, invitees=(33, 124, 162)) -> None:
    room = workspace.call("create_room", {"name": "Synth Night", "mode": "custom", "password": "9137"})
    assert room.ok, room.error_message
    for player in invitees:
        assert workspace.call("invite_to_room", {"room_id": room.value["room_id"], "player_id": player}).ok


def test_query_sql_reads_everything_and_writes_nothing():
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        answer = workspace.query_sql("SELECT COUNT(*) AS n FROM players")
        assert answer["columns"] == ["n"] and answer["rows"][0][0] > 100
        some = workspace.query_sql("SELECT id FROM players ORDER BY id", limit=5)
        assert len(some["rows"]) == 5 and some["truncated"]
        refused = workspace.query_sql("DELETE FROM players")
        assert refused["error"]["code"] == "sql_error"
        assert workspace.query_sql("SELECT COUNT(*) FROM players")["rows"] == answer["rows"]
        assert len(workspace.tracker.diff()) == 0
        room_and_invites(workspace)  # the public tools still write afterwards
        assert len(workspace.tracker.diff()) > 0


def test_a_good_draft_becomes_a_task_that_validates():
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        workspace.call("list_friends", {})  # reads are not steps
        room_and_invites(workspace)
        draft = workspace.draft(QUERY, "cross_step_dependency", model="scripted")
    assert [s.tool for s in draft.steps] == ["create_room", *["invite_to_room"] * 3]
    task = vet_draft(draft, SeenTasks(), task_id="moba-s0001")
    # the created id, linked to the call that created it (not to an invitation that repeats it: they stay independent)
    assert [s.args["room_id"] for s in task.reference_solution[1:]] == [{"$from": 0, "path": "room_id"}] * 3
    # its labels are derived, as a template's: the invitations use the room's created id, and two tables gain rows
    assert task.generator == {
        "kind": "model",
        "model": "scripted",
        "derived_capabilities": ["cross_step_dependency", "cross_entity_cascade"],
    }
    assert task.capabilities == ["cross_step_dependency", "cross_entity_cascade"]
    check = check_task(task)
    assert check.ok, check.problems


def draft_of(invitees=(33, 124, 162), query=QUERY):
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        if invitees is not None:
            room_and_invites(workspace, invitees)
        return workspace.draft(query, "cross_step_dependency")


def rejected(draft, seen=None) -> DraftRejected:
    with pytest.raises(DraftRejected) as caught:
        vet_draft(draft, seen or SeenTasks(), task_id="moba-s0001")
    return caught.value


def test_a_draft_that_changes_nothing_is_rejected():
    assert rejected(draft_of(invitees=None)).reason == Rejection.NO_CHANGE


def test_a_draft_with_too_few_changes_is_rejected():
    with GeneratorWorkspace("moba", ACTOR) as workspace:
        assert any(workspace.call("send_friend_request", {"player_id": player}).ok for player in range(40, 120))
        draft = workspace.draft("Send a friend request to Someone.", "multi_condition_filtering")
    assert len(draft.diff) < 3 and rejected(draft).reason == Rejection.TOO_SMALL


def test_a_draft_that_needs_too_many_calls_is_rejected():
    draft = draft_of()
    draft.steps = draft.steps * (MAX_REFERENCE_CALLS // len(draft.steps) + 1)
    assert rejected(draft).reason == Rejection.TOO_MANY_CALLS


def test_a_request_stating_an_id_or_a_count_is_rejected():
    draft = draft_of()
    invitation = max(c.key["id"] for c in draft.diff if c.table == "room_invitations")
    assert invitation >= 100  # ids of 3+ digits count ("top 5" is not an id)
    leaky = draft_of(query=QUERY + f" The last invitation should be number {invitation}.")
    assert rejected(leaky).reason == Rejection.LEAKS_ID
    counted = draft_of(query=QUERY.replace("each clanmate", "the 3 clanmates"))
    assert rejected(counted).reason == Rejection.LEAKS_COUNT
    assert counts_stated("Invite the 3 clanmates at 21:07 on November 7, 2026.", draft.diff) == [3]  # 7 rows change: not a date's 7


def test_a_draft_that_repeats_a_shipped_task_is_rejected():
    [shipped] = load_suite(ids=["moba-0024"]).tasks
    seen = SeenTasks()
    seen.add(shipped, get_domain("moba").schema)
    same_query = draft_of(query=shipped.query)
    assert rejected(same_query, seen).reason == Rejection.DUPLICATE


def test_a_draft_whose_calls_do_not_reproduce_its_diff_is_rejected():
    draft = draft_of()
    draft.steps = draft.steps[:-1]  # the last invitation is in the diff but not in the calls
    draft.results = draft.results[:-1]
    assert rejected(draft).reason == Rejection.NOT_REPRODUCIBLE


def test_created_ids_are_linked_only_to_what_an_earlier_step_returned():
    from ebench.tasks.spec import Step

    steps = [Step("create_room", {"name": "x"}), Step("invite_to_room", {"room_id": 72, "player_id": 33, "ids": [72, 5]})]
    linked = link_created_ids(steps, [{"room_id": 72, "capacity": 33}, None])
    assert linked[1].args == {"room_id": {"$from": 0, "path": "room_id"}, "player_id": 33, "ids": [{"$from": 0, "path": "room_id"}, 5]}
    assert linked[0].args == {"name": "x"}  # capacity is not an id: 33 stays the player


def test_a_draft_a_lazy_shortcut_solves_is_rejected(monkeypatch):
    """The shortcuts themselves (the reference without its last write, another actor) are the
    audit's and tested there; here: one that reaches the draft's diff rejects the draft."""
    from ebench.tasks import synthesis

    draft = draft_of()
    monkeypatch.setattr(synthesis, "reference_shortcuts", lambda domain, world, actor, reference: [("no_last_write", "x", draft.diff)])
    found = rejected(draft)
    assert found.reason == Rejection.SHORTCUT and found.detail == "no_last_write"
