"""Certification: drafts built to fail a check are rejected with the right reason, the audit's
shortcut solvers pass a task built to be lazy-solvable and none of a certified one."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from ebench.engine.world import ensure_world
from ebench.tasks.audit import audit_task
from ebench.tasks.certify import run_public
from ebench.tasks.generation import generate
from ebench.tasks.public import FIRST_PAGE, Condition, Lazy, PublicAPI
from ebench.tasks.spec import Step, Task, diff_stats
from ebench.tasks.template_api import Draft, GenContext, NoTarget, Template

# An artist with many songs over several release dates (more than one page of 20 songs).
ARTIST_SQL = (
    "SELECT a.id FROM artists a WHERE (SELECT COUNT(*) FROM songs s WHERE s.artist_id = a.id "
    "AND s.copyright_status != 'expired') BETWEEN 30 AND 60 ORDER BY a.id LIMIT 1"
)
USER = 3


def _candidates(ctx: GenContext, artist: int) -> list[dict[str, Any]]:
    return ctx.rows(
        "SELECT id, release_date FROM songs WHERE artist_id = ? AND copyright_status != 'expired' "
        "AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY release_date, id",
        artist,
        USER,
    )


class Since(Template):
    """Favourite an artist's songs released on or after a date and before the artist's latest
    release day. `cut` picks the date from the candidates' sorted release dates; `drop` leaves
    songs out of the SQL side's writes. (Two conditions: a task needs two that bite.)"""

    name = "test_since"
    phrasings = (
        "Favourite the songs of artist {artist} from {date} on, released before {end}.",
        "Songs of {artist} since {date} and before {end}: favourite them.",
        "From {date}, favourite artist {artist}'s songs, up to but not including {end}.",
    )
    conditions = (Condition("since", "boundary"), Condition("until", "boundary"))

    def __init__(self, cut: Callable[[list[str]], str], drop: int = 0) -> None:
        self.cut = cut
        self.drop = drop
        self.used = False

    def draft(self, ctx: GenContext) -> Draft:
        if self.used:
            raise NoTarget("one draft only")
        self.used = True
        artist = ctx.value(ARTIST_SQL)
        candidates = _candidates(ctx, artist)
        dates = sorted({c["release_date"] for c in candidates})
        cut, end = self.cut(dates), dates[-1]
        songs = [c["id"] for c in candidates if cut <= c["release_date"] < end][self.drop :]
        return Draft(
            USER,
            self.phrase(ctx, artist=artist, date=cut, end=end),
            [Step("favourite_song", {"song_id": s}) for s in songs],
            stated={"artist_id": artist, "since": cut, "until": end},
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        favourites = {f["song_id"] for f in api.all_pages("list_favourite_songs")}
        for song in api.all_pages("search_songs", artist_id=stated["artist_id"], sort_by="oldest"):
            if song["copyright_status"] == "expired" or song["song_id"] in favourites:
                continue
            if api.compare("since", song["release_date"], ">=", stated["since"]) and api.compare(
                "until", song["release_date"], "<", stated["until"]
            ):
                api.call("favourite_song", song_id=song["song_id"])


class Newest(Template):
    """Favourite an artist's k newest songs: release dates are shared by an album's songs, so a
    cut can fall inside a tie."""

    name = "test_newest"
    phrasings = (
        "Favourite the {k} newest songs of artist {artist} released before {end}.",
        "The {k} most recent of {artist} from before {end}: favourite them.",
        "Of artist {artist}, favourite the latest {k} that came out before {end}.",
    )

    def __init__(self, tie: bool, tie_break_stated: bool = False, reading_changes: bool | None = None) -> None:
        self.tie = tie
        self.reading_changes = reading_changes
        self.conditions = (Condition("newest", "ranking", tie_break_stated=tie_break_stated), Condition("until", "boundary"))
        self.readings = ("reading",) if reading_changes is not None else ()
        self.used = False

    def draft(self, ctx: GenContext) -> Draft:
        if self.used:
            raise NoTarget("one draft only")
        self.used = True
        artist = ctx.value(ARTIST_SQL)
        candidates = _candidates(ctx, artist)
        end = max(c["release_date"] for c in candidates)
        ranked = sorted([c for c in candidates if c["release_date"] < end], key=lambda c: (c["release_date"], c["id"]), reverse=True)
        # k where the k-th and (k+1)-th share a date (a tie), or where they do not
        k = next(k for k in range(3, len(ranked) - 1) if (ranked[k - 1]["release_date"] == ranked[k]["release_date"]) == self.tie)
        songs = [c["id"] for c in ranked[:k]]
        return Draft(
            USER,
            self.phrase(ctx, k=k, artist=artist, end=end),
            [Step("favourite_song", {"song_id": s}) for s in songs],
            stated={"artist_id": artist, "k": k, "until": end},
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        favourites = {f["song_id"] for f in api.all_pages("list_favourite_songs")}
        songs = [
            s
            for s in api.all_pages("search_songs", artist_id=stated["artist_id"])
            if s["copyright_status"] != "expired"
            and s["song_id"] not in favourites
            and api.compare("until", s["release_date"], "<", stated["until"])
        ]
        ranked = sorted(songs, key=lambda s: (s["release_date"], s["song_id"]), reverse=True)
        chosen = api.top("newest", ranked, stated["k"], lambda s: s["release_date"])
        if self.readings:
            chosen = api.reading("reading", chosen, chosen[:-1] if self.reading_changes else chosen)
        for song in chosen:
            api.call("favourite_song", song_id=song["song_id"])


def _one(template: Template):
    report = generate("music", 1, 1, templates=[template], max_attempts_per_task=1)
    return report.tasks, report.rejected


@pytest.fixture(scope="module")
def world(music_world):
    return music_world


def test_a_boundary_with_a_candidate_on_it_is_certified(world):
    tasks, rejected = _one(Since(lambda dates: dates[len(dates) // 2]))
    assert len(tasks) == 1, rejected
    task = tasks[0]
    assert task.generator["bites"][:2] == ["since:ignore", "since:off_by_one"]
    assert "precise_boundary_judgement" in task.capabilities
    # the stored reference is the public solver's calls: reads included, nothing hidden
    tools = [s.tool for s in task.reference_solution]
    first_write = tools.index("favourite_song")
    assert set(tools[:first_write]) == {"list_favourite_songs", "search_songs"}
    assert set(tools[first_write:]) == {"favourite_song"} and len(tools) - first_write == len(task.expected_diff) // 2
    assert task.budget == {
        "max_tool_calls": max(100, 3 * len(task.reference_solution)),
        "max_turns": max(30, 3 * len(task.reference_solution)),
    }
    assert task.world["seed"] and task.world["fingerprint"]


def test_a_boundary_with_nobody_on_it_is_certified_without_claiming_its_inclusivity(world):
    # a day on which no candidate was released, with candidates before and after it: "on or
    # after" and "after" end in the same state, so both are right and neither is a shortcut
    def between(dates: list[str]) -> str:
        for day in dates[1:-1]:
            after = str(date.fromisoformat(day) + timedelta(days=1))
            if after not in dates:
                return after
        raise AssertionError("no gap between release dates")

    tasks, rejected = _one(Since(between))
    assert len(tasks) == 1, rejected
    assert "since:ignore" in tasks[0].generator["bites"] and "since:off_by_one" not in tasks[0].generator["bites"]
    clean = audit_task(tasks[0], world, Since(between))
    assert not any(clean.passed.values()) and "since:off_by_one" not in str(clean.tried), clean.tried


def test_a_single_condition_task_is_rejected_as_trivial(world):
    class OnlySince(Since):
        name = "test_only_since"
        conditions = (Condition("since", "boundary"),)

        def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
            favourites = {f["song_id"] for f in api.all_pages("list_favourite_songs")}
            for song in api.all_pages("search_songs", artist_id=stated["artist_id"], sort_by="oldest"):
                if song["copyright_status"] == "expired" or song["song_id"] in favourites:
                    continue
                if api.compare("since", song["release_date"], ">=", stated["since"]) and song["release_date"] < stated["until"]:
                    api.call("favourite_song", song_id=song["song_id"])

    tasks, rejected = _one(OnlySince(lambda dates: dates[len(dates) // 2]))
    assert not tasks and rejected == {"trivial: fewer than two conditions bite and no cross-step dependency": 1}


def test_a_filter_that_excludes_nothing_is_rejected(world):
    # the earliest date: every candidate is on or after it, so ignoring the boundary changes nothing
    tasks, rejected = _one(Since(lambda dates: dates[0]))
    assert not tasks and rejected == {"condition excludes nothing: since:ignore": 1}


def test_a_public_solver_that_disagrees_with_the_sql_side_is_rejected(world):
    tasks, rejected = _one(Since(lambda dates: dates[len(dates) // 2], drop=1))
    assert not tasks and rejected == {"public solver disagrees with the SQL generator": 1}


def test_a_top_k_with_a_tie_at_the_cut_is_rejected_unless_the_tie_break_is_stated(world):
    tasks, rejected = _one(Newest(tie=True))
    assert not tasks and rejected == {
        "not certifiable: a tie across the top-{} cut".format(next(iter(rejected)).split("top-")[1].split()[0]): 1
    }
    tasks, rejected = _one(Newest(tie=True, tie_break_stated=True))
    assert len(tasks) == 1, rejected
    tasks, rejected = _one(Newest(tie=False))
    assert len(tasks) == 1, rejected
    assert "aggregation_computation" in tasks[0].capabilities


def test_a_reading_that_changes_the_answer_is_rejected(world):
    tasks, rejected = _one(Newest(tie=False, reading_changes=True))
    assert not tasks and rejected == {"two readings: reading": 1}
    tasks, rejected = _one(Newest(tie=False, reading_changes=False))
    assert len(tasks) == 1, rejected


def test_complete_acquisition_is_claimed_only_when_the_first_page_is_not_enough(world):
    # the newest release date: every song to favourite sits past the first page of oldest-first results
    late, _ = _one(Since(lambda dates: dates[-2]))
    assert FIRST_PAGE in late[0].generator["bites"]
    assert "complete_data_acquisition" in late[0].capabilities
    # the lazy solver that reads one page of each listing favourites fewer songs
    task = late[0]
    lazy = run_public(Since(lambda d: d[-2]), "music", world, task.actor, task.generator["stated"], Lazy(FIRST_PAGE))
    assert len(lazy.diff) < len(task.expected_diff)


class NewestFirstSince(Since):
    """The same task, read newest first: the songs to favourite are all on the first page."""

    name = "test_since_newest_first"

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        favourites = {f["song_id"] for f in api.all_pages("list_favourite_songs")}
        for song in api.all_pages("search_songs", artist_id=stated["artist_id"], sort_by="newest"):
            if song["copyright_status"] == "expired" or song["song_id"] in favourites:
                continue
            if api.compare("since", song["release_date"], ">=", stated["since"]) and api.compare(
                "until", song["release_date"], "<", stated["until"]
            ):
                api.call("favourite_song", song_id=song["song_id"])


def test_a_task_the_first_page_answers_does_not_claim_complete_acquisition(world):
    # the artist's listing spans pages, but the newest songs (the ones wanted) all come first
    tasks, rejected = _one(NewestFirstSince(lambda dates: dates[-2]))
    assert len(tasks) == 1, rejected
    assert FIRST_PAGE not in tasks[0].generator["bites"]
    assert "complete_data_acquisition" not in tasks[0].capabilities


def test_the_audit_passes_a_lazy_solvable_task_and_no_shortcut_passes_a_certified_one(world):
    template = Since(lambda dates: dates[len(dates) // 2])
    certified, _ = _one(template)
    clean = audit_task(certified[0], world, template)
    assert clean.certified and not any(clean.passed.values()), clean.passed
    assert set(clean.tried) == {"boundary:ignore", "boundary:off_by_one", FIRST_PAGE, "no_last_write", "wrong_actor", "no_op"}

    # A task built by hand, bypassing the generator: its boundary excludes nothing.
    stated = dict(certified[0].generator["stated"], since="1900-01-01")
    run = run_public(template, "music", world, USER, stated)
    lazy = Task(
        "music-test-lazy",
        "music",
        USER,
        "Favourite every song of the artist.",
        ["precise_boundary_judgement"],
        run.diff,
        run.steps,
        {"template": template.name, "stated": stated},
        diff_stats(run.diff),
    )
    found = audit_task(lazy, world, template)
    # every song is on or after 1900: ignoring the boundary, or taking it one step off, passes
    assert found.passed == {"boundary:ignore": ["since:ignore"], "boundary:off_by_one": ["since:off_by_one"]}


def test_generation_avoids_the_tasks_it_is_told_to(world):
    first, _ = _one(Since(lambda dates: dates[len(dates) // 2]))
    report = generate("music", 1, 1, templates=[Since(lambda dates: dates[len(dates) // 2])], max_attempts_per_task=1, avoid=first)
    assert not report.tasks and report.rejected == {"duplicate query": 1}


def test_the_default_world_is_used_and_recorded(world, music):
    tasks, _ = _one(Since(lambda dates: dates[len(dates) // 2]))
    assert tasks[0].world["seed"] == music.default_seed
    assert ensure_world(music) == world
