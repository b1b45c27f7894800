"""The moba domain's task grammar (ebench/domains/moba/parts.py).

tests/test_composition.py covers the composition machinery on music; here, what is the moba
grammar's own: a small composed set certifies (audited: no shortcut passes, every careful variant
does, every clause bites, no term is left open) and is reproducible; every structure the sampler can
draw compiles to phrasings whose values the draft provides, with three distinct surface forms of
every part; the clan's "members" are always decided in words; and each kind of part has members
held out for the private split.
"""

from __future__ import annotations

import re
import string

import pytest

from ebench.domains.moba.parts import GRAMMAR
from ebench.domains.moba.templates import CLAN_READING
from ebench.tasks.audit import audit_task
from ebench.tasks.composition import (
    Action,
    Predicate,
    Reduction,
    Source,
    action_slots,
    compose,
    condition_names,
    is_private,
    sample_structures,
    template_class,
)

COUNT = 6
SEED = 11


@pytest.fixture(scope="module")
def composed(moba_world):
    return compose("moba", COUNT, SEED)


def test_a_small_composed_set_certifies_and_is_reproducible(composed, moba_world):
    assert len(composed.tasks) == COUNT
    assert len({t.generator["structure"]["id"] for t in composed.tasks}) == COUNT
    for task in composed.tasks:
        assert task.id.startswith(f"moba-c{SEED}-") and task.generator["kind"] == "composed"
        audit = audit_task(task, moba_world)
        assert audit.certified and not any(audit.passed.values()), (task.id, audit.passed)
        assert not audit.careful_failed and audit.clauses == [] and audit.open_terms == [], task.id
    again = compose("moba", COUNT, SEED)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in composed.tasks]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("split", ["public", "private"])
def test_every_structure_compiles_to_phrasings_the_draft_fills(split):
    structures = sample_structures(GRAMMAR, 3, 400, split=split)
    assert len(structures) == 400
    for structure in structures:
        assert is_private(structure, GRAMMAR) == (split == "private")
        template = template_class(GRAMMAR, structure)
        source = GRAMMAR.source(structure.source)
        reduction = GRAMMAR.reduction(structure.reduction)
        words = {name for names in condition_names(structure) for name in names}
        words |= set(source.stated_keys()) | set(reduction.stated_keys())
        for slot, key in zip(action_slots(structure), structure.actions):
            words |= set(GRAMMAR.action(key).stated_keys(slot)) | {f"{slot}_leave"}
        assert len(set(template.phrasings)) == 3, structure.canonical()
        for phrasing in template.phrasings:
            assert _fields(phrasing) <= words, (structure.canonical(), _fields(phrasing) - words)
            assert "<" not in phrasing and ",." not in phrasing and not re.search(r"\bmy heroes\b", phrasing), phrasing
            if structure.source == "clan":  # "the players of my clan": which clan roles, said every time
                assert CLAN_READING.decided(phrasing), phrasing


def test_every_part_has_three_distinct_surface_forms():
    for part in GRAMMAR.parts():
        if isinstance(part, Source):
            groups = [part.noun, part.origin]
        elif isinstance(part, Predicate):
            groups = [part.phrases, *([part.negated] if part.negated else [])]
        elif isinstance(part, Reduction):
            groups = [part.np, part.subject, part.take]
        else:
            assert isinstance(part, Action)
            groups = [part.imperative, part.predicate, part.pronoun]
        for forms in groups:
            # a source may repeat its noun ("matches") when its origins differ
            assert len(set(forms)) >= 3 or (isinstance(part, Source) and forms is part.noun), (part.key, forms)


def test_every_kind_of_part_has_members_held_out_for_the_private_split():
    private = [p for p in GRAMMAR.parts() if p.private]
    assert {p.kind_of_part for p in private} == {"predicate", "reduction", "action"}
    public = sample_structures(GRAMMAR, 5, 300)
    assert not {p.key for p in private} & {k for s in public for k in s.part_keys()}
