"""Every correct way passes: the careful variants (careful.py, certify.py), clauses that must
bite, terms the vocabulary leaves open, numbers computed from the answer."""

from __future__ import annotations

from typing import Any

import pytest

from ebench.tasks.audit import audit_task
from ebench.tasks.careful import arranged, reordered_writes, repeated_reads, with_reads_first
from ebench.tasks.certify import clause_problems
from ebench.tasks.diff import Diff, RowChange
from ebench.tasks.generation import computed_from_answer, generate
from ebench.tasks.public import FIRST_PAGE, WRITTEN, Condition, PublicAPI, Reading
from ebench.tasks.spec import Step
from ebench.tasks.template_api import Draft, GenContext, NoTarget, Template
from ebench.tasks.vocabulary import OpenTerm, term_found

USER = 3
ARTIST_SQL = (
    "SELECT a.id FROM artists a WHERE (SELECT COUNT(*) FROM songs s WHERE s.artist_id = a.id "
    "AND s.copyright_status != 'expired') BETWEEN 30 AND 60 ORDER BY a.id LIMIT 1"
)


@pytest.fixture(scope="module")
def world(music_world):
    return music_world


class Window(Template):
    """Favourite an artist's songs released in [since, until): two boundaries, so not trivial.
    `narrow_shift` hands the filtered plan a server filter one day off (a wrong `narrow`)."""

    name = "test_window"
    phrasings = (
        "Favourite the songs of artist {artist} released from {since} on and before {until}.",
        "Artist {artist}: favourite the songs out on or after {since}, before {until}.",
        "From {since} up to (not including) {until}, favourite what artist {artist} released.",
    )
    conditions = (Condition("since", "boundary"), Condition("until", "boundary"))
    clauses = {"artist_id": "since", "since": "since", "until": "until"}

    def __init__(self, narrow: bool = True, narrow_shift: bool = False, pick: int = 2) -> None:
        self.narrow = narrow
        self.narrow_shift = narrow_shift
        self.pick = pick
        self.used = False

    def draft(self, ctx: GenContext) -> Draft:
        if self.used:
            raise NoTarget("one draft only")
        self.used = True
        artist = ctx.value(ARTIST_SQL)
        rows = ctx.rows(
            "SELECT id, release_date FROM songs WHERE artist_id = ? AND copyright_status != 'expired' "
            "AND id NOT IN (SELECT song_id FROM favourite_songs WHERE user_id = ?) ORDER BY release_date, id",
            artist,
            USER,
        )
        dates = sorted({r["release_date"] for r in rows})
        since, until = dates[-self.pick - 1], dates[-1]
        songs = [r["id"] for r in rows if since <= r["release_date"] < until]
        return Draft(
            USER,
            self.phrase(ctx, artist=artist, since=since, until=until),
            [Step("favourite_song", {"song_id": s}) for s in songs],
            stated={"artist_id": artist, "since": since, "until": until},
        )

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        favourites = {f["song_id"] for f in api.all_pages("list_favourite_songs")}
        since = stated["since"]
        if self.narrow_shift:
            since = since[:-2] + f"{int(since[-2:]) % 28 + 1:02d}"
        narrow = {"released_after": since, "sort_by": "newest"} if self.narrow else None
        for song in api.all_pages("search_songs", narrow=narrow, artist_id=stated["artist_id"], sort_by="oldest"):
            if song["copyright_status"] == "expired" or song["song_id"] in favourites:
                continue
            if api.compare("since", song["release_date"], ">=", stated["since"]) and api.compare(
                "until", song["release_date"], "<", stated["until"]
            ):
                api.call("favourite_song", song_id=song["song_id"])


def _one(template: Template):
    report = generate("music", 1, 1, templates=[template], max_attempts_per_task=1)
    return report.tasks, report.rejected


def test_the_filtered_plan_must_reach_the_same_state(world):
    tasks, rejected = _one(Window(narrow_shift=True))
    assert not tasks and rejected == {"careful variant fails: server_filters": 1}


def test_complete_acquisition_is_judged_on_the_filtered_plan(world):
    # Unfiltered and oldest first, the wanted songs (the artist's latest) sit past page 1; with
    # the server's date filter and newest first they are all on page 1: no complete acquisition.
    plain, rejected = _one(Window(narrow=False, pick=1))
    assert plain, rejected
    assert FIRST_PAGE in plain[0].generator["bites"] and "complete_data_acquisition" in plain[0].capabilities
    filtered, rejected = _one(Window(narrow=True, pick=1))
    assert filtered, rejected
    assert FIRST_PAGE not in filtered[0].generator["bites"] and "complete_data_acquisition" not in filtered[0].capabilities
    # the stored reference is the plain plan; the audit ran the filtered one, and it passed
    found = audit_task(filtered[0], world, Window(pick=1))
    assert found.careful_tried.get("server_filters") == 1 and not found.careful_failed
    assert not any(found.passed.values())
    assert found.clauses == []


class ReadAs(Window):
    """A reading of the window's end: the other reading drops the last day kept."""

    name = "test_read_as"

    def __init__(self, decided_by: str, changes: bool) -> None:
        super().__init__()
        self.readings = (Reading("end", decided_by=decided_by),)
        self.changes = changes

    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        until = api.reading("end", stated["until"], stated["since"] if self.changes else stated["until"])
        super().solve(api, {**stated, "until": until})


def test_a_reading_the_wording_decides_is_not_a_second_answer(world):
    tasks, rejected = _one(ReadAs(decided_by="", changes=True))
    assert not tasks and rejected == {"two readings: end": 1}
    tasks, rejected = _one(ReadAs(decided_by=r"\bbefore\b|not including", changes=True))
    assert len(tasks) == 1, rejected
    tasks, rejected = _one(ReadAs(decided_by="", changes=False))
    assert len(tasks) == 1, rejected


def test_reordered_writes_keep_created_ids_ahead_of_their_users():
    steps = [
        Step("search_songs", {"query": "x"}),
        Step("create_playlist", {"name": "A"}),
        Step("add_song_to_playlist", {"playlist_id": {"$from": 1, "path": "playlist_id"}, "song_id": 1}),
        Step("add_song_to_playlist", {"playlist_id": {"$from": 1, "path": "playlist_id"}, "song_id": 2}),
        Step("get_my_profile", {}),
        Step("favourite_song", {"song_id": 7}),
    ]
    writes = {"create_playlist", "add_song_to_playlist", "favourite_song"}
    out = reordered_writes(steps, writes)
    assert out is not None
    assert [(s.tool, s.args.get("song_id")) for s in out] == [
        ("search_songs", None),
        ("create_playlist", None),
        ("add_song_to_playlist", 2),
        ("add_song_to_playlist", 1),
        ("get_my_profile", None),
        ("favourite_song", 7),
    ]
    assert out[2].args["playlist_id"] == {"$from": 1, "path": "playlist_id"}
    assert reordered_writes(steps[:2], writes) is None  # one write: nothing to reorder
    twice = repeated_reads(steps, writes)
    assert [s.tool for s in twice][:4] == ["search_songs", "search_songs", "create_playlist", "add_song_to_playlist"]
    assert twice[3].args["playlist_id"]["$from"] == 2  # follows create_playlist to its new place
    moved = arranged(steps, [1, 0, 2])
    assert moved[2].args["playlist_id"]["$from"] == 0


def test_extra_reads_shift_references_and_change_nothing(world):
    from ebench.tasks.reference import run_steps

    steps = [
        Step("create_playlist", {"name": "Careful"}),
        Step("add_song_to_playlist", {"playlist_id": {"$from": 0, "path": "playlist_id"}, "song_id": 1}),
    ]
    first = with_reads_first("music", steps)
    assert first[-1].args["playlist_id"]["$from"] == len(first) - 2
    assert run_steps("music", USER, first, world=world).diff.to_list() == run_steps("music", USER, steps, world=world).diff.to_list()


def test_clauses_must_bite_or_be_written():
    template = Window()
    change = RowChange("playlists", "insert", {"id": 1}, None, {"name": "Road Trip", "user_id": 3})
    diff = Diff([change])
    assert clause_problems(template, {"artist_id": 1, "since": "a", "until": "b"}, ["since:ignore", "until:ignore"], diff) == []
    problems = clause_problems(template, {"artist_id": 1, "since": "a", "until": "b", "extra": 1}, ["since:ignore"], diff)
    assert problems == ["extra: no declared clause", "until: its condition until does not bite"]

    class Named(Window):
        clauses = {"name": WRITTEN, "asked_first": "since"}

    assert clause_problems(Named(), {"name": "Road Trip"}, [], diff) == ["asked_first: its condition since does not bite"]
    assert clause_problems(Named(), {"name": "Other"}, ["since:ignore"], diff) == ["name: declared written, but the task does not write it"]


def test_a_number_the_answer_computes_is_a_leak():
    # 30585 coins, three heroes of 5888 bought: "keep at least 12921" states the balance left
    diff = Diff(
        [
            RowChange("players", "update", {"id": 7}, {"coins": 30585}, {"coins": 12921}),
            RowChange("owned_heroes", "insert", {"id": 1}, None, {"player_id": 7, "price_paid": 5888}),
        ]
    )
    buy = [Step("buy_hero", {"hero_id": 4, "currency": "coins"})]
    assert computed_from_answer("Keep buying while my balance stays at 12921 coins or more.", diff, buy) == [12921.0]
    assert computed_from_answer("Keep at least 10000 coins.", diff, buy) == []
    # the user's own value, written by the task, is not computed from the answer
    assert computed_from_answer("Set my coins to 12921.", diff, [Step("set_coins", {"coins": 12921})]) == []


def test_open_terms_are_found_as_whole_words_and_decided_in_words():
    genre = OpenTerm("genre family", "sub-genres", decided_by=r"sub-?genres?")
    assert term_found(genre, "the 5 most played Pop songs", ("Pop",))
    assert not term_found(genre, "the 5 most played K-Pop songs", ("Pop",))
    availability = OpenTerm("availability", "VIP", decided_by="expired", pattern=r"\bcan still be played\b")
    assert term_found(availability, "Only songs that can still be played.")
    assert not term_found(availability, "Only songs whose licence has not expired.")
