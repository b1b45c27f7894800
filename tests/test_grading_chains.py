"""Grading on the real chains of new rows in every shipped task (a new meeting, its participants and
their calendar entries; a new room and its invitations; a new playlist and its songs).

Each expected diff is renumbered as another trial would allocate ids (every generated id moved,
every reference to it moved too): it must still pass. Re-pointing one new row at another new
parent, or at an existing row, must fail.
"""

from __future__ import annotations

import copy

import pytest

from ebench.engine.domain_registry import get_domain
from ebench.tasks.diff import Diff, RowChange
from ebench.tasks.grading import grade
from ebench.tasks.suite import SUITE_DIR, load_suite

SHIFT = 100_000


def _renumber(diff: Diff, schema, shift: int = SHIFT) -> Diff:
    """The same changes with every generated id of a new row moved by `shift`, references included."""
    new_ids = {(c.table, c.key[schema.table(c.table).key[0]]) for c in diff if c.op == "insert" and schema.table(c.table).has_generated_id}

    def moved(table: str, values: dict | None) -> dict | None:
        if values is None:
            return None
        out = dict(values)
        t = schema.table(table)
        for column, value in values.items():
            col = t.column(column)
            if col.primary_key and t.has_generated_id and (table, value) in new_ids or col.ref_table and (col.ref_table, value) in new_ids:
                out[column] = value + shift
        return out

    return Diff(
        [
            RowChange(c.table, c.op, moved(c.table, c.key) if c.op == "insert" else dict(c.key), c.old, moved(c.table, c.new))
            for c in reversed(diff.changes)
        ]
    )


def _links(diff: Diff, schema) -> list[tuple[int, str]]:
    """(change index, column) of every reference from a new row to another new row."""
    new_ids = {(c.table, c.key[schema.table(c.table).key[0]]) for c in diff if c.op == "insert" and schema.table(c.table).has_generated_id}
    out = []
    for i, c in enumerate(diff.changes):
        if c.op != "insert":
            continue
        for fk in schema.table(c.table).foreign_keys:
            if (fk.ref_table, c.new[fk.column]) in new_ids and not schema.table(c.table).column(fk.column).volatile:
                out.append((i, fk.column))
    return out


TASKS = load_suite(SUITE_DIR).tasks  # every shipped task
CHAINED = [t for t in TASKS if _links(t.expected_diff, get_domain(t.domain).schema)]


def test_the_suite_has_chains_in_every_domain():
    assert {t.domain for t in CHAINED} == {"music", "meeting", "moba"}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_other_ids_still_pass(task):
    schema = get_domain(task.domain).schema
    result = grade(task.expected_diff, _renumber(task.expected_diff, schema), schema)
    assert result.passed, result.summary()


@pytest.mark.parametrize("task", CHAINED[::4], ids=lambda t: t.id)
def test_a_child_under_the_wrong_parent_fails(task):
    schema = get_domain(task.domain).schema
    diff = task.expected_diff
    index, column = _links(diff, schema)[0]
    broken = copy.deepcopy(diff)
    child = broken.changes[index]
    parents = sorted(
        {
            c.key[schema.table(c.table).key[0]]
            for c in diff
            if c.op == "insert" and c.table == schema.table(child.table).column(column).ref_table
        }
    )
    current = child.new[column]
    # Another new parent if there is one; otherwise an existing row of the parent table.
    other = next((p for p in parents if p != current), 1)
    new = dict(child.new, **{column: other})
    key = {k: (other if k == column else v) for k, v in child.key.items()}
    broken.changes[index] = RowChange(child.table, "insert", key, None, new)
    result = grade(diff, _renumber(broken, schema), schema)
    assert not result.passed
    assert result.wrong or result.missing or result.note
