"""The task format: a real task round-trips and checks out; malformed files name the file and field."""

from __future__ import annotations

import copy
import json

import pytest

from ebench.engine.domain_registry import get_domain
from ebench.engine.world import scratch_copy
from ebench.tasks.reference import run_steps
from ebench.tasks.spec import TASK_FORMAT, Step, Task, TaskFileError, diff_stats, load_task, load_tasks, parse_task, task_json_schema
from ebench.tasks.task_check import check_task
from ebench.tasks.worlds import world_fingerprint

ACTOR = 1


@pytest.fixture(scope="module")
def task_dict(music, music_world):
    conn = scratch_copy(music_world)
    songs = [r[0] for r in conn.execute("SELECT id FROM songs WHERE copyright_status = 'licensed' ORDER BY play_count DESC LIMIT 4")]
    conn.close()
    steps = [Step("create_playlist", {"name": "Top four"})]
    steps += [Step("add_song_to_playlist", {"playlist_id": {"$from": 0, "path": "playlist_id"}, "song_id": s}) for s in songs]
    run = run_steps("music", ACTOR, steps)
    task = Task(
        "music-test-0001",
        "music",
        ACTOR,
        "Make a playlist called 'Top four' with the four most played licensed songs.",
        ["aggregation_computation", "cross_step_dependency"],
        run.diff,
        steps,
        {"template": "hand-written", "seed": 0},
        world={"seed": get_domain("music").default_seed, "fingerprint": world_fingerprint("music", get_domain("music").default_seed)},
        budget={"max_tool_calls": 100, "max_turns": 30},
    )
    return task.to_dict()


def test_a_valid_task_round_trips_and_its_reference_passes(task_dict, tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(task_dict), encoding="utf-8")
    task = load_task(path)
    assert task.to_dict() == task_dict
    assert task.stats == diff_stats(task.expected_diff) and task.stats["changed_rows"] == 5  # the playlist and its 4 songs
    result = check_task(task)
    assert result.ok, result.problems
    assert result.reference.passed and not result.empty.passed


def test_a_task_whose_reference_does_not_reproduce_its_diff_is_caught(task_dict):
    data = copy.deepcopy(task_dict)
    data["reference_solution"] = data["reference_solution"][:-1]  # one song short
    data.pop("stats")
    check = check_task(parse_task(data, "short.json"))
    assert not check.ok and "does not reproduce" in check.problems[0]


def test_a_refused_reference_step_is_reported_not_raised(task_dict):
    data = copy.deepcopy(task_dict)
    data["reference_solution"][1]["args"]["song_id"] = 10**9
    check = check_task(parse_task(data, "bad.json"))
    assert not check.ok and "step 1 (add_song_to_playlist) was refused: not_found" in check.problems[0]


def test_a_task_whose_actor_does_not_exist_is_reported_not_raised(task_dict):
    data = dict(copy.deepcopy(task_dict), actor=999_999)
    check = check_task(parse_task(data, "ghost.json"))
    assert not check.ok and "actor cannot act" in check.problems[0] and "999999" in check.problems[0]


def _broken(task_dict, edit):
    data = copy.deepcopy(task_dict)
    edit(data)
    return data


CASES = [
    ("missing id", lambda d: d.pop("id"), "id", "missing"),
    ("wrong type", lambda d: d.update(actor="1"), "actor", "integer"),
    ("bool actor", lambda d: d.update(actor=True), "actor", "integer"),
    ("unknown field", lambda d: d.update(answer=42), "answer", "unknown field"),
    ("format", lambda d: d.update(format="ebench-task/9"), "format", "unsupported"),
    ("bad id", lambda d: d.update(id="Has Spaces"), "id", "not a valid id"),
    ("domain", lambda d: d.update(domain="cooking"), "domain", "unknown domain"),
    ("capability", lambda d: d["capabilities"].append("telepathy"), "capabilities[2]", "unknown capability"),
    ("no capability", lambda d: d.update(capabilities=[]), "capabilities", "at least one"),
    ("tool", lambda d: d["reference_solution"][0].update(tool="drop_table"), "reference_solution[0].tool", "no tool"),
    ("step shape", lambda d: d["reference_solution"].append({"tool": "create_playlist"}), "reference_solution[5]", "each step"),
    (
        "forward reference",
        lambda d: d["reference_solution"][1]["args"].update(playlist_id={"$from": 3, "path": "x"}),
        "reference_solution[1].args.playlist_id",
        "cannot use",
    ),
    ("table", lambda d: d["expected_diff"][0].update(table="secrets"), "expected_diff[0].table", "no table"),
    ("op", lambda d: d["expected_diff"][0].update(op="upsert"), "expected_diff[0].op", "insert, update or delete"),
    ("key", lambda d: d["expected_diff"][0].update(key={"nope": 1}), "expected_diff[0].key", "key columns"),
    ("column", lambda d: d["expected_diff"][-1]["new"].update(colour="red"), "expected_diff[4].new.colour", "no such column"),
    ("stats", lambda d: d["stats"].update(changed_rows=3), "stats.changed_rows", "expected_diff has 5"),
    ("empty diff", lambda d: (d.update(expected_diff=[]), d.pop("stats")), "expected_diff", "must change something"),
]


@pytest.mark.parametrize(("label", "edit", "field", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_task_names_the_file_and_the_field(task_dict, tmp_path, label, edit, field, message):
    path = tmp_path / f"{label.replace(' ', '_')}.json"
    path.write_text(json.dumps(_broken(task_dict, edit)), encoding="utf-8")
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert info.value.source == str(path) and info.value.field == field
    assert message in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize(("content", "field"), [(b"{not json", "(json)"), (b"\xff\xfe", "(file)"), (b"[1, 2]", "(document)")])
def test_unreadable_files(tmp_path, content, field):
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert info.value.field == field


def test_a_suite_load_keeps_good_tasks_and_reports_bad_ones(task_dict, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(task_dict), encoding="utf-8")
    twin = tmp_path / "twin.json"
    twin.write_text(json.dumps(task_dict), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    report = load_tasks([good, bad, twin, tmp_path / "missing.json"])
    assert [t.id for t in report.tasks] == [task_dict["id"]]
    assert [(e.source, e.field) for e in report.errors] == [
        (str(bad), "format"),
        (str(twin), "id"),
        (str(tmp_path / "missing.json"), "(file)"),
    ]


def test_the_json_schema_describes_every_field(task_dict):
    schema = task_json_schema()
    optional = {"paraphrases", "user_profile"}  # written only when a task has them
    assert set(schema["properties"]) == set(task_dict) | optional
    assert schema["properties"]["format"]["const"] == TASK_FORMAT
    assert set(schema["required"]) <= set(task_dict)
