"""Task generation: determinism, every template works on the real world, and the rejection rules."""

from __future__ import annotations

import json

import pytest

from ebench.tasks import generation
from ebench.tasks.diff import Diff, RowChange, diff_from_list
from ebench.tasks.generation import generate
from ebench.tasks.reference import ReferenceRun
from ebench.tasks.spec import Step, parse_task
from ebench.tasks.task_check import check_task
from ebench.tasks.template_api import Draft, GenContext, NoTarget, Template, leaked, templates_for


@pytest.fixture(scope="module")
def music_batch(music_world):
    return generate("music", 30, 7)


def test_the_same_seed_gives_the_same_tasks_byte_for_byte(music_batch):
    again = generate("music", 30, 7)
    assert [t.to_json() for t in again.tasks] == [t.to_json() for t in music_batch.tasks]


def test_another_seed_gives_other_tasks(music_batch):
    other = generate("music", 10, 8)
    assert {t.query for t in other.tasks} != {t.query for t in music_batch.tasks[:10]}


def test_templates_take_turns(music_batch):
    names = [t.generator["template"] for t in music_batch.tasks]
    assert len(set(names)) >= min(len(templates_for("music")), 20)
    assert max(names.count(n) for n in names) <= 6


def test_every_generated_task_checks_out_and_round_trips(music_batch):
    for task in music_batch.tasks:
        assert len(task.expected_diff) >= 3
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()
        check = check_task(task)
        assert check.ok and check.certified, (task.id, check.problems)


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
    """A template whose drafts are given by the test: make a playlist of the stated songs."""

    name = "scripted"
    phrasings = tuple(f"skeleton {i}" for i in range(12))

    def __init__(self, drafts):
        self.drafts = list(drafts)

    def draft(self, ctx: GenContext) -> Draft:
        if not self.drafts:
            raise NoTarget("done")
        self.phrase(ctx)  # a skeleton per draft, as real templates do
        return self.drafts.pop(0)(ctx)

    def solve(self, api, stated):
        playlist = api.call("create_playlist", creates="playlist_id", name=stated["name"])
        for song in stated["songs"]:
            api.call("add_song_to_playlist", playlist_id=playlist["playlist_id"], song_id=song)


def _playlist(
    ctx: GenContext, n: int, offset: int = 0, query: str = "Make a playlist.", name: str = "Test Mix", sql_songs: int | None = None
) -> Draft:
    songs = ctx.column("SELECT id FROM songs WHERE copyright_status = 'licensed' ORDER BY id LIMIT ? OFFSET ?", n, offset)
    written = songs if sql_songs is None else songs[:sql_songs]
    steps = [Step("create_playlist", {"name": name})] + [
        Step("add_song_to_playlist", {"playlist_id": {"$from": 0, "path": "playlist_id"}, "song_id": s}) for s in written
    ]
    return Draft(1, query, steps, stated={"name": name, "songs": songs}, hidden=[n])


def test_rejections_are_counted_by_reason(music_world):
    drafts = [
        lambda ctx: Draft(1, "Look around.", [], stated={"name": "x", "songs": []}),  # no change
        lambda ctx: _playlist(ctx, 1, query="Make a tiny playlist."),  # 2 rows < 3
        lambda ctx: _playlist(ctx, 3, query="Make a playlist of these 3 songs."),  # leaks its count
        lambda ctx: Draft(1, "Add a ghost.", [Step("favourite_song", {"song_id": 10**9})]),  # refused write
        lambda ctx: _playlist(ctx, 4),  # accepted
        lambda ctx: _playlist(ctx, 4),  # duplicate query
        lambda ctx: _playlist(ctx, 4, query="Please make a playlist."),  # duplicate diff
        lambda ctx: _playlist(ctx, 5, 10, query="Another one.", name="Other", sql_songs=4),  # public solver disagrees
        lambda ctx: _playlist(ctx, 5, offset=10, query="Make five more.", name="Five More"),  # accepted
    ]
    report = generate("music", 5, 1, templates=[_Scripted(drafts)], max_attempts_per_task=2)
    assert [t.query for t in report.tasks] == ["Make a playlist.", "Make five more."]
    assert report.rejected == {
        "no change": 1,
        "fewer than 3 changed rows": 1,
        "query leaks a hidden value": 1,
        "SQL generator's writes refused": 1,
        "duplicate query": 1,
        "duplicate diff": 1,
        "public solver disagrees with the SQL generator": 1,
        "no target": 1,  # the drafts ran out before the fifth task
    }
    assert [t.id for t in report.tasks] == ["music-0001", "music-0002"]
    first = report.tasks[0]
    # the stored reference is the public solver's, with the created playlist as a reference
    assert first.reference_solution[1].args["playlist_id"] == {"$from": 0, "path": "playlist_id"}
    assert first.capabilities == ["cross_step_dependency", "cross_entity_cascade"]
    assert first.generator["stated"] == {"name": "Test Mix", "songs": first.generator["stated"]["songs"]}


def test_a_template_is_capped_and_a_skeleton_is_used_twice_at_most(music_world):
    drafts = [lambda ctx, i=i: _playlist(ctx, 4, offset=10 * i, query=f"Playlist {i}.", name=f"Mix {i}") for i in range(9)]
    template = _Scripted(drafts)
    template.phrasings = ("a", "b", "c", "d")
    report = generate("music", 9, 1, templates=[template], max_attempts_per_task=2, max_per_template=3)
    assert len(report.tasks) == 3
    skeletons = [t.generator["phrasing"] for t in report.tasks]
    assert max(skeletons.count(k) for k in skeletons) <= 2


def test_a_reference_that_does_not_reproduce_is_rejected(music_world, monkeypatch):
    real = generation.run_steps
    calls = {"n": 0}

    def flaky(domain, actor, steps, conn=None, **kwargs):
        calls["n"] += 1
        run = real(domain, actor, steps, conn, **kwargs)
        if calls["n"] == 2:  # the replay of the stored public solution differs
            return ReferenceRun(Diff(run.diff.changes[1:]), run.results)
        return run

    monkeypatch.setattr(generation, "run_steps", flaky)
    report = generate("music", 1, 1, templates=[_Scripted([lambda ctx: _playlist(ctx, 4)])], max_attempts_per_task=2)
    assert report.tasks == [] and report.rejected["public solution does not reproduce its diff"] == 1


def test_no_templates_is_a_clear_error():
    with pytest.raises(ValueError, match="no task templates"):
        generate("music", 1, 1, templates=[])


def test_a_diff_change_round_trip_keeps_the_grade(music):
    change = RowChange(
        "favourite_songs", "insert", {"user_id": 1, "song_id": 2}, new={"user_id": 1, "song_id": 2, "favourited_at": music.now}
    )
    assert diff_from_list(Diff([change]).to_list()).changes == [change]
