"""The meeting domain's task grammar (ebench/domains/meeting/parts.py).

tests/test_composition.py covers composing itself on the music grammar (the command, stats,
overlap, validate, processes). Here, what is the meeting grammar's own: every part is drawn and the
private parts only privately; groupings that say nothing on a source are never drawn; the wording
decides the domain's open terms ("my meetings", a chat's members) in every phrasing; a small
composed set certifies (careful solver passes, every shortcut fails, every careful variant
passes), is the same for the same seed and has a structure per task; and the writes to people
never include the employee, whom the product refuses to invite or add.
"""

from __future__ import annotations

import re

import pytest

from ebench.tasks.audit import audit_task
from ebench.tasks.composition import compose, grammar_for, is_private, parse_structure, sample_structures, structure_problem, template_class
from ebench.tasks.structures import task_structure
from ebench.tasks.vocabulary import open_terms

COUNT = 6
PEOPLE_ARGS = ("member_ids", "employee_ids", "participant_ids", "optional_participant_ids")


@pytest.fixture(scope="module")
def grammar():
    found = grammar_for("meeting")
    assert found is not None
    return found


def test_every_part_is_drawn_and_private_parts_only_privately(grammar):
    public = sample_structures(grammar, 1, 1500)
    private = sample_structures(grammar, 1, 600, split="private")
    assert len(public) == 1500 and len(private) == 600  # room for many more structures than a set of 300 needs
    drawn = {k for s in public + private for k in s.part_keys()}
    assert drawn == {p.key for p in grammar.parts()}
    private_parts = {p.key for p in grammar.parts() if p.private}
    assert private_parts and not private_parts & {k for s in public for k in s.part_keys()}
    assert not any(is_private(s, grammar) for s in public) and all(is_private(s, grammar) for s in private)
    assert {s.source for s in public} == {s.key for s in grammar.sources}
    assert sample_structures(grammar, 1, 50) == public[:50]  # seeded


def test_groupings_that_say_nothing_on_a_source_are_not_drawn(grammar):
    # my direct reports all have me as manager; the meetings I organise all have me as organiser
    for text in ("reports{family}>managers_n>new_chat", "reports{city}>top_manager>new_meeting", "organised{online}>organisers_n>new_chat"):
        assert structure_problem(grammar, parse_structure("meeting", text)) is not None, text
    assert structure_problem(grammar, parse_structure("meeting", "dept{family}>managers_n>new_chat")) is None


def test_every_phrasing_decides_the_open_terms(grammar, meeting_world):
    structures = sample_structures(grammar, 3, 150) + sample_structures(grammar, 3, 50, split="private")
    for structure in structures:
        for phrasing in template_class(grammar, structure).phrasings:
            query = re.sub(r"\{[a-z0-9_]+\}", "'Sample'", phrasing)
            assert open_terms("meeting", query, meeting_world) == [], (structure.canonical(), query)


def test_a_composed_meeting_set_certifies_reproduces_and_leaves_the_employee_out(meeting_world):
    composed = compose("meeting", COUNT, 11, workers=1)
    assert len(composed.tasks) == COUNT
    assert len({task_structure(t) for t in composed.tasks}) == COUNT
    again = compose("meeting", COUNT, 11, workers=1)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in composed.tasks]
    for task in composed.tasks:
        audit = audit_task(task, meeting_world)
        assert audit.certified and not any(audit.passed.values()), (task.id, audit.passed)
        assert not audit.careful_failed and sum(audit.careful_tried.values()) >= 2, (task.id, audit.careful_failed)
        assert audit.clauses == [] and audit.open_terms == [], task.id
        # the product refuses to invite, add or chat with oneself: the writes to people never name the employee
        for step in task.reference_solution:
            for arg in PEOPLE_ARGS:
                assert task.actor not in step.args.get(arg, []), (task.id, step.tool)
            if step.tool in ("transfer_employee", "remove_chat_member", "remove_participant"):
                assert step.args["employee_id"] != task.actor, task.id
