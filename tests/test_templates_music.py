"""The music domain's certified task templates: every template yields certified tasks, every task
replays to its expected diff, every declared condition bites, generation is deterministic, and a
few boundary semantics are pinned against SQL written here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from random import Random

import pytest

from ebench.domains.music import templates as M
from ebench.engine.domain_registry import get_domain
from ebench.tasks.generation import generate
from ebench.tasks.grading import grade
from ebench.tasks.reference import run_steps
from ebench.tasks.spec import CAPABILITIES, parse_task
from ebench.tasks.task_check import check_task
from ebench.tasks.template_api import Draft, GenContext, NoTarget, Template, leaked, templates_for

SEED = 20261129
PER_TEMPLATE = 2


@pytest.fixture(scope="module")
def batch(music_world):
    count = PER_TEMPLATE * len(M.TEMPLATES)
    return generate("music", count, SEED, max_per_template=PER_TEMPLATE)


@pytest.fixture
def ctx_factory(music_conn) -> Iterator:
    def make(i: int) -> GenContext:
        return GenContext("music", music_conn, Random(f"test-music:{i}"))

    yield make


def drafts(make, template: Template, wanted: int = 5, tries: int = 60) -> list[tuple[GenContext, Draft]]:
    out = []
    for i in range(tries):
        ctx = make(i)
        try:
            out.append((ctx, template.draft(ctx)))
        except NoTarget:
            continue
        if len(out) == wanted:
            break
    assert out, f"{template.name} never found a target"
    return out


def calls(draft: Draft, tool: str) -> list[dict]:
    return [s.args for s in draft.steps if s.tool == tool]


# -- the template set ----------------------------------------------------------------------


def test_the_template_set_is_well_formed():
    templates = templates_for("music")
    names = [t.name for t in templates]
    assert len(names) == len(set(names)) >= 27
    for t in templates:
        assert len(t.phrasings) >= 3, t.name
        assert len(set(t.phrasings)) == len(t.phrasings), t.name
        assert len({c.name for c in t.conditions}) == len(t.conditions), t.name
        # No ordering conditions: playlist positions are volatile, an order never shows in a diff.
        assert all(c.kind != "ordering" for c in t.conditions), t.name


# -- the generated batch -------------------------------------------------------------------


def test_every_template_yields_certified_tasks(batch):
    made = {t.generator["template"] for t in batch.tasks}
    assert made == {t.name for t in templates_for("music")}
    assert {c for t in batch.tasks for c in t.capabilities} == set(CAPABILITIES)
    assert all(t.capabilities for t in batch.tasks)


def test_every_task_replays_to_its_expected_diff(batch, music_world):
    schema = get_domain("music").schema
    for task in batch.tasks:
        assert len(task.expected_diff) >= 3, task.id
        assert parse_task(json.loads(task.to_json()), task.id).to_dict() == task.to_dict()
        run = run_steps("music", task.actor, task.reference_solution, world=music_world)
        assert grade(task.expected_diff, run.diff, schema).passed, task.id
        check = check_task(task)  # reference and public solver reproduce, an empty trial fails, no id leaks
        assert check.ok, (task.id, check.problems)


def test_every_declared_condition_has_bitten(batch):
    by_name = {t.name: t for t in templates_for("music")}
    for task in batch.tasks:
        template = by_name[task.generator["template"]]
        bites = set(task.generator["bites"])
        for condition in template.conditions:
            for mode in condition.modes:
                if condition.kind == "boundary" and mode == "off_by_one":
                    continue  # natural values: the inclusivity bites only where a candidate lands on the boundary
                assert f"{condition.name}:{mode}" in bites, (task.id, condition.name, mode)


def test_every_clause_is_declared_and_bites(batch):
    by_name = {t.name: t for t in templates_for("music")}
    for template in by_name.values():
        assert template.clauses is not None, template.name
    for task in batch.tasks:
        clauses = by_name[task.generator["template"]].clauses
        assert set(task.generator["stated"]) <= set(clauses), task.id
        assert not re.search(r"exactly \d", task.query), task.id  # inclusivity is said by the natural words


def test_queries_state_no_hidden_value_and_no_ids(batch):
    for task in batch.tasks:
        ids = {
            str(v) for c in task.expected_diff for v in c.key.values() if isinstance(v, int) and v >= 100
        }  # small numbers are thresholds
        words = set(task.query.replace(",", " ").replace(".", " ").replace("(", " ").replace(")", " ").split())
        assert not ids & words, (task.id, ids & words)
        assert '"' not in task.query, task.id  # names are in single quotes, never nested


def test_every_write_tool_is_used(batch):
    tools = get_domain("music").tools
    writes = {n for n in tools.names if tools.get(n).kind == "write"}
    used = {s.tool for t in batch.tasks for s in t.reference_solution}
    assert writes <= used, sorted(writes - used)


def test_the_same_seed_gives_the_same_tasks(music_world):
    chosen = [
        t
        for t in templates_for("music")
        if t.name in ("history_not_favourited", "vip_swap", "thank_repliers", "consolidate_small_playlists", "follow_top_played_artists")
    ]
    first = generate("music", 5, 7, templates=chosen)
    again = generate("music", 5, 7, templates=[type(t)() for t in chosen])
    assert [t.to_json() for t in first.tasks] == [t.to_json() for t in again.tasks]
    assert len(first.tasks) == 5


# -- semantics pinned against SQL written here ---------------------------------------------


def test_archive_moves_favourites_before_the_cut_and_keeps_the_cut_day(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.ArchiveOldFavourites(), wanted=3):
        cut = draft.stated["before"]
        unfavourited = sorted(a["song_id"] for a in calls(draft, "unfavourite_song"))
        expected = ctx.column(
            "SELECT song_id FROM favourite_songs WHERE user_id = ? AND favourited_at < ? ORDER BY song_id", draft.actor, cut
        )
        assert unfavourited == expected
        # Someone favourited on the cut day itself: it stays, so "before" excludes that day.
        on_the_day = ctx.column(
            "SELECT song_id FROM favourite_songs WHERE user_id = ? AND substr(favourited_at, 1, 10) = ?", draft.actor, cut
        )
        assert on_the_day and not set(on_the_day) & set(unfavourited)
        added = {a["song_id"] for a in calls(draft, "add_song_to_playlist")}
        expired = set(ctx.column("SELECT id FROM songs WHERE copyright_status = 'expired'"))
        assert added == set(unfavourited) - expired
        assert calls(draft, "create_playlist")[0]["is_public"] is False


def test_delete_old_comments_keeps_the_boundary_comments(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.DeleteOldComments(), wanted=4):
        date, n = draft.stated["before"], draft.stated["max_likes"]
        deleted = sorted(a["comment_id"] for a in calls(draft, "delete_comment"))
        expected = ctx.column(
            "SELECT id FROM comments WHERE user_id = ? AND created_at < ? AND like_count < ? ORDER BY id", draft.actor, date, n
        )
        assert deleted == expected
        # A comment from the day itself with fewer than n likes stays: "before" excludes that day.
        assert ctx.value(
            "SELECT COUNT(*) FROM comments WHERE user_id = ? AND substr(created_at, 1, 10) = ? AND like_count < ?", draft.actor, date, n
        )


def test_favourite_artist_since_keeps_both_boundaries(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.FavouriteArtistSince(), wanted=3):
        since, longest = draft.stated["since"], draft.stated["max_duration_sec"]
        assert longest % 30 == 0  # a round duration
        ids = [a["song_id"] for a in calls(draft, "favourite_song")]
        rows = ctx.rows(f"SELECT release_date, duration_sec FROM songs WHERE id IN ({','.join('?' * len(ids))})", *ids)
        assert min(r["release_date"] for r in rows) >= since and max(r["duration_sec"] for r in rows) <= longest
        artist = ctx.value("SELECT id FROM artists WHERE name = ?", draft.stated["artist"])
        older = ctx.value(
            "SELECT COUNT(*) FROM songs WHERE artist_id = ? AND release_date < ? AND copyright_status != 'expired'", artist, since
        )
        assert older  # the boundary excludes something


def test_vip_swap_replaces_with_the_most_played_licensed_song(ctx_factory):
    for ctx, draft in drafts(ctx_factory, M.VipSwap(), wanted=3):
        playlist = ctx.value("SELECT id FROM playlists WHERE owner_id = ? AND name = ?", draft.actor, draft.stated["playlist"])
        removed = [a["song_id"] for a in calls(draft, "remove_song_from_playlist")]
        vip = ctx.column(
            "SELECT ps.song_id FROM playlist_songs ps JOIN songs s ON s.id = ps.song_id WHERE ps.playlist_id = ? "
            "AND s.copyright_status = 'vip_only' ORDER BY ps.position",
            playlist,
        )
        assert removed == vip
        present = set(ctx.column("SELECT song_id FROM playlist_songs WHERE playlist_id = ?", playlist))
        vip_would_win = False
        for old, new in zip(removed, (a["song_id"] for a in calls(draft, "add_song_to_playlist"))):
            artist = ctx.value("SELECT artist_id FROM songs WHERE id = ?", old)
            best = ctx.rows(
                "SELECT id, copyright_status FROM songs WHERE artist_id = ? AND copyright_status != 'expired' "
                "ORDER BY play_count DESC, id DESC",
                artist,
            )
            best = [b for b in best if b["id"] not in present]
            assert new == next(b["id"] for b in best if b["copyright_status"] == "licensed")
            vip_would_win |= best[0]["copyright_status"] == "vip_only"
        assert vip_would_win  # the "licensed" condition changes at least one replacement


def test_retries_never_return_a_leaking_draft(ctx_factory):
    for template in (M.FollowArtistsOfPlaylist(), M.LikeArtistComments(), M.PromotePlayedFromPlaylist()):
        for _, draft in drafts(ctx_factory, template, wanted=4):
            assert not leaked(draft.query, draft.hidden), (template.name, draft.query)
