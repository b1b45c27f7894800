"""Pairing a table's new rows stays linear (`grading._Similar`, the multiset of contents) and
pairs exactly as comparing every row with every other row did; and the anchors' error paths."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from ebench.tasks import grading
from ebench.tasks.diff import Diff, RowChange

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def scan_pairing(table: str, e_rows: list, a_rows: list, found: Any) -> list:
    """The pairing as it was, comparing each row with each: the reference `_pair_table` must match."""
    e_rows = sorted(e_rows, key=lambda item: repr(sorted(item[0].items())))
    rest_a = sorted(a_rows, key=lambda item: repr(sorted(item[0].items())))
    pairs, rest_e = [], []
    for content, change in e_rows:
        same = next((i for i, (a_content, _) in enumerate(rest_a) if a_content == content), None)
        if same is None:
            rest_e.append((content, change))
        else:
            pairs.append((change, rest_a.pop(same)[1]))
            found.exact.append(change)
    for content, change in rest_e:
        if not rest_a:
            found.missing.append(change)
            continue
        score, index = max((sum(content[c] == v for c, v in a_content.items()), -i) for i, (a_content, _) in enumerate(rest_a))
        if score * 2 < len(content):
            found.missing.append(change)
            continue
        a_content, other = rest_a.pop(-index)
        pairs.append((change, other))
        for column in sorted(content):
            if content[column] != a_content[column]:
                found.wrong.append(
                    grading.WrongValue(table, change.key, column, grading._shown(content[column]), a_content[column], op="insert")
                )
    found.unexpected.extend(change for _, change in rest_a)
    return pairs


def _rows(rng: random.Random, count: int, values: dict[str, list], prefix: str) -> list:
    out = []
    for i in range(count):
        content = {column: rng.choice(choices) for column, choices in values.items()}
        out.append((content, RowChange("t", "insert", {"id": f"{prefix}{i}"}, new=dict(content))))
    return out


def test_pairing_matches_comparing_every_row_with_every_other():
    rng = random.Random(34)
    for case in range(400):
        values = {}
        for column in range(rng.randint(1, 6)):
            choices: list = list(range(rng.choice([1, 2, 3, 5, 20, 200])))
            if rng.random() < 0.2:  # values equal across types, a reference to an unpaired row, text
                choices += [None, 1.0, True, ("unpaired new row", 3), "x"]
            if rng.random() < 0.05:  # a value that cannot be hashed
                choices.append([1, 2])
            values[f"c{column}"] = choices
        size = rng.choice([0, 3, 17, 40, 120, 250])
        e_rows, a_rows = _rows(rng, rng.randint(0, size), values, "e"), _rows(rng, rng.randint(0, size), values, "a")
        for i in range(min(len(e_rows), len(a_rows)) // 2):  # some rows equal
            a_rows[i] = (dict(e_rows[i][0]), RowChange("t", "insert", {"id": f"a{i}"}, new=dict(e_rows[i][0])))
        expected, actual = grading._Findings(), grading._Findings()
        want = scan_pairing("t", list(e_rows), list(a_rows), expected)
        got = grading._pair_table("t", list(e_rows), list(a_rows), actual)
        assert [(e.key, a.key) for e, a in got] == [(e.key, a.key) for e, a in want], case
        for name in ("missing", "unexpected", "exact"):
            assert [c.key for c in getattr(actual, name)] == [c.key for c in getattr(expected, name)], (case, name)
        assert [w.to_dict() for w in actual.wrong] == [w.to_dict() for w in expected.wrong], case


def test_a_large_table_of_wrong_rows_is_explained_row_by_row(music):
    # 600 new playlist songs, every one pointing at another song than expected: each is paired with
    # an actual row that differs in that column only, and reported as one wrong value.
    def change(song: int) -> RowChange:
        row = {"playlist_id": 1, "song_id": song, "position": song % 1000, "added_at": "2026-01-01"}
        return RowChange("playlist_songs", "insert", {"playlist_id": 1, "song_id": song}, new=row)

    songs = range(1, 601)
    expected, actual = Diff([change(s) for s in songs]), Diff([change(s + 1000) for s in songs])
    result = grading.explain(expected, actual, music.schema)
    assert not result.passed and not result.missing and not result.unexpected and result.matched_rows == 0
    assert len(result.wrong) == 600 and {w.column for w in result.wrong} == {"song_id"}
    assert sorted(w.expected for w in result.wrong) == list(songs)
    assert sorted(w.actual for w in result.wrong) == [s + 1000 for s in songs]


def test_anchors_without_a_checkout_or_with_a_missing_one_report_why():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import anchors
    finally:
        sys.path.remove(str(BENCHMARKS))

    assert anchors.measure({"tau-bench": None, "tau2": None}, "trial") == {}
    missing = Path("/nonexistent/tau-bench")
    found = anchors.measure({"tau-bench": missing, "tau2": None}, "trial")
    assert found["tau-bench"]["error"] == f"tau-bench: {missing} is not a folder" and "tau2" not in found
    assert anchors.figure(found, "tau-bench", "retail") is None
    reason = anchors.describe(found, {"tau-bench": missing, "tau2": None})
    assert reason == f"tau-bench: tau-bench: {missing} is not a folder; tau2: no checkout given (--tau2 DIR)"
