"""The trial runtime: copies from the prepared image, change tracking, recording, secrets."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ebench.engine.tools import ToolError
from ebench.engine.world import content_hash, open_world_readonly
from ebench.sessions.record import REDACTED, SessionWriter, read_session, redact_config, secret_values
from ebench.sessions.trial import Trial, drop_idle_copies, trial_copy
from ebench.tasks.diff import full_diff
from ebench.tasks.spec import resolve_args
from ebench.tasks.suite import load_suite


def play(trial: Trial) -> None:
    results = []
    for step in trial.task.reference_solution:
        results.append(trial.call(step.tool, resolve_args(step.args, results)).value)


@pytest.mark.parametrize("task_id", ["music-0020", "meeting-0003", "moba-0010"])
def test_the_tracked_diff_is_the_true_difference_and_the_world_is_untouched(task_id, request):
    [task] = load_suite(ids=[task_id]).tasks
    world_path = request.getfixturevalue(f"{task.domain}_world")
    world = open_world_readonly(world_path)
    before = content_hash(world)
    trial = Trial(task)
    play(trial)
    tracked = trial.diff()
    assert tracked.to_list() == full_diff(world, trial.conn, trial.domain.schema).to_list()
    assert trial.grade().passed
    trial.close()
    assert content_hash(world) == before
    world.close()


def test_trials_from_one_image_are_independent(music_world):
    [task] = load_suite(ids=["music-0020"]).tasks
    first, second = Trial(task), Trial(task)
    play(first)
    assert len(first.diff()) == len(task.expected_diff) and len(second.diff()) == 0
    assert not second.grade().passed
    first.close()
    second.close()


def test_a_finished_trials_copy_is_reused_exactly_as_a_fresh_one(moba_world):
    """The pool: the next trial gets the last one's copy back with every change rolled back, so it
    holds what a fresh copy holds (the change log included) and makes the same generated ids."""
    [task] = load_suite(ids=["moba-0024"]).tasks  # creates a room (a new id), then invites to it
    first = Trial(task)
    play(first)
    made, copy = first.diff().to_list(), first.conn
    first.close()
    with pytest.raises(RuntimeError, match="closed"):
        first.call("get_my_profile", {})  # a finished trial never reaches the copy it gave back
    second = Trial(task)
    assert second.conn is copy and len(second.diff()) == 0
    fresh = trial_copy(second.domain)
    assert content_hash(second.conn) == content_hash(fresh)
    fresh.close()
    play(second)
    assert second.diff().to_list() == made and second.grade().passed
    second.close()


def test_idle_copies_are_dropped_when_a_batch_ends(moba_world):
    [task] = load_suite(ids=["moba-0024"]).tasks
    first = Trial(task)
    copy = first.conn
    first.close()
    drop_idle_copies()  # what a batch's runner does once its trials are over
    with pytest.raises(sqlite3.ProgrammingError):
        copy.execute("SELECT 1")  # closed: its memory went back
    second = Trial(task)
    assert second.conn is not copy and len(second.diff()) == 0
    second.close()


def test_a_copy_whose_transaction_ended_early_is_not_reused(moba_world):
    [task] = load_suite(ids=["moba-0024"]).tasks
    trial = Trial(task)
    trial.conn.execute("COMMIT")  # whatever ended it, the copy may hold changes now
    play(trial)
    used = trial.conn
    trial.close()
    nxt = Trial(task)
    assert nxt.conn is not used and len(nxt.diff()) == 0
    nxt.close()


def test_an_unknown_actor_is_refused(music_world):
    from ebench.engine.domain_registry import get_domain

    with pytest.raises(ToolError):
        Trial(None, domain=get_domain("music"), actor=99999)


def test_calls_are_recorded_with_their_results_and_errors(tmp_path, music_world):
    [task] = load_suite(ids=["music-0020"]).tasks
    path = tmp_path / "s.jsonl"
    trial = Trial(task, writer=SessionWriter(path), solver={"name": "test"})
    ok = trial.call("get_my_profile", {})
    bad = trial.call("get_song", {"song_id": "x"})
    summary = trial.finish("agent_stopped")
    assert ok.ok and not bad.ok
    session = read_session(path)
    calls = list(session.tool_calls())
    assert [c.tool for c in calls] == ["get_my_profile", "get_song"]
    assert calls[1].error_code == "invalid_arguments" and calls[1].result["error"]["code"] == "invalid_arguments"
    assert session.end.summary is not None
    assert session.end.summary.to_dict() == json.loads(json.dumps(summary.to_dict()))  # read back as written
    assert summary.tool_errors == {"invalid_arguments": 1} and not summary.passed


def test_secrets_are_redacted_from_configs_and_lines(tmp_path):
    config = {"model": "m", "model_args": {"api_key": "sk-abcdef", "temperature": 0, "extra_headers": {"Authorization": "Bearer xyz123"}}}
    assert redact_config(config)["model_args"] == {"api_key": REDACTED, "temperature": 0, "extra_headers": {"Authorization": REDACTED}}
    secrets = secret_values(config, environ={"MY_SERVICE_TOKEN": "tok-123456", "HOME": "/root"})
    assert set(secrets) == {"sk-abcdef", "Bearer xyz123", "tok-123456"}
    writer = SessionWriter(tmp_path / "s.jsonl", secrets)
    writer.write("message", content="the key is sk-abcdef and the token tok-123456")
    writer.close()
    text = (tmp_path / "s.jsonl").read_text()
    assert "sk-abcdef" not in text and "tok-123456" not in text and text.count(REDACTED) == 2
