"""Task generation: determinism, every template works on the real world, and the rejection rules."""

from __future__ import annotations

import json

import pytest

from ebench.tasks import generation
from ebench.tasks.diff import Diff, RowChange
from ebench.tasks.generation import Draft, GenContext, NoTarget, Template, generate, leaked, templates_for
from ebench.tasks.reference import ReferenceRun, check_task
from ebench.tasks.spec import CAPABILITIES, Step, parse_task


@pytest.fixture(scope="module")
def music_batch(music_world):
    return generate("music", 30, 7)


def test_the_same_seed_gives_the_same_tasks_byte_for_byte(music_batch):
    again = generate("music", 30, 7)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in music_batch.tasks]


def test_another_seed_gives_other_tasks(music_batch):
    other = generate("music", 10, 8)
    assert {t.query for t in other.tasks} != {t.query for t in music_batch.tasks[:10]}


def test_templates_take_turns_and_cover_every_capability(music_batch):
    names = {t.generator["template"] for t in music_batch.tasks}
    assert names == {t.name for t in templates_for("music")}
    assert {c for t in music_batch.tasks for c in t.capabilities} == set(CAPABILITIES)


def test_every_generated_task_checks_out_and_round_trips(music_batch):
    for task in music_batch.tasks:
        assert len(task.expected_diff) >= 3
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()
        check = check_task(task)
        assert check.ok, (task.id, check.problems)


def test_queries_state_no_ids_of_changed_rows(music_batch):
    for task in music_batch.tasks:
        ids = {str(v) for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and v >= 100}
        words = set(task.query.replace(",", " ").replace(".", " ").split())
        assert not ids & words, (task.id, ids & words)


def test_leak_detection():
    assert leaked("Add the 12 songs", [12]) == [12]
    assert leaked("Add songs from 2012", [12]) == []  # a number inside another is not that number
    assert leaked("Follow Club Flower", ["club flower"]) == ["club flower"]
    assert leaked("Anything", [True, None]) == []


class _Scripted(Template):
    """A template whose drafts are given by the test."""

    name = "scripted"
    capabilities = ("complete_data_acquisition",)

    def __init__(self, drafts):
        self.drafts = list(drafts)

    def draft(self, ctx: GenContext) -> Draft:
        if not self.drafts:
            raise NoTarget("done")
        return self.drafts.pop(0)(ctx)


def _favourites(ctx: GenContext, n: int, offset: int = 0, query: str = "Favourite some songs.") -> Draft:
    songs = ctx.column("SELECT id FROM songs WHERE copyright_status = 'licensed' AND id NOT IN "
                       "(SELECT song_id FROM favourite_songs WHERE user_id = 1) ORDER BY id LIMIT ? OFFSET ?", n, offset)
    return Draft(1, query, [Step("favourite_song", {"song_id": s}) for s in songs], hidden=[n])


def test_rejections_are_counted_by_reason(music_world):
    drafts = [
        lambda ctx: Draft(1, "Look around.", [Step("list_my_playlists", {})]),                      # no change
        lambda ctx: _favourites(ctx, 1, query="Favourite one song."),                              # 2 rows < 3
        lambda ctx: _favourites(ctx, 3, query="Favourite these 3 songs."),                         # leaks its count
        lambda ctx: Draft(1, "Favourite a ghost.", [Step("favourite_song", {"song_id": 10**9})]),  # refused step
        lambda ctx: _favourites(ctx, 4),                                                           # accepted
        lambda ctx: _favourites(ctx, 4),                                                           # duplicate query
        lambda ctx: _favourites(ctx, 4, query="Please favourite a few songs."),                    # duplicate diff
        lambda ctx: _favourites(ctx, 5, offset=10, query="Favourite five more."),                  # accepted
    ]
    report = generate("music", 5, 1, templates=[_Scripted(drafts)], max_attempts_per_task=2)
    assert [t.query for t in report.tasks] == ["Favourite some songs.", "Favourite five more."]
    assert report.rejected == {
        "no change": 1, "fewer than 3 changed rows": 1, "query leaks a hidden value": 1, "reference solution refused": 1,
        "duplicate query": 1, "duplicate diff": 1, "no target": 2,
    }
    assert [t.id for t in report.tasks] == ["music-0001", "music-0002"]


def test_a_reference_that_does_not_reproduce_is_rejected(music_world, monkeypatch):
    real = generation.run_steps
    calls = {"n": 0}

    def flaky(domain, actor, steps, conn=None):
        calls["n"] += 1
        run = real(domain, actor, steps, conn)
        if calls["n"] % 2 == 0:  # the second run of each draft differs
            return ReferenceRun(Diff(run.diff.changes[1:]), run.results)
        return run

    monkeypatch.setattr(generation, "run_steps", flaky)
    report = generate("music", 1, 1, templates=[_Scripted([lambda ctx: _favourites(ctx, 4)])], max_attempts_per_task=2)
    assert report.tasks == [] and report.rejected["reference solution does not reproduce its diff"] == 1


def test_no_templates_is_a_clear_error():
    with pytest.raises(ValueError, match="no task templates"):
        generate("music", 1, 1, templates=[])


def test_a_diff_change_round_trip_keeps_the_grade(music):
    change = RowChange("favourite_songs", "insert", {"user_id": 1, "song_id": 2},
                       new={"user_id": 1, "song_id": 2, "favourited_at": music.now})
    assert Diff.from_list(Diff([change]).to_list()).changes == [change]
