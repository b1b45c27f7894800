"""One bad task file never stops a command: each is reported with its file and field and skipped
by every command (run, tasks list/validate/show, the app's loader); the good tasks go on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ebench.engine.domain_registry import get_domain
from ebench.tasks.diff import Diff, diff_from_list
from ebench.tasks.grading import explain, grade
from ebench.tasks.suite import load_suite

GOOD = "music-0005"


def _bad_files(folder: Path) -> dict[str, str]:
    """name -> the field its error must name."""
    good = json.loads(Path(os.environ["EBENCH_TASKS"], "music", f"{GOOD}.json").read_text())
    column = next(iter(good["expected_diff"][0]["new"]))
    cases: dict[str, tuple[dict | str, str]] = {}
    deep = good | {"id": "music-deep"}
    cases["music-deep"] = ('{"a": ' * 5000 + "1" + "}" * 5000, "(json)")
    nested_args = good | {"id": "music-nested"}
    nested_args["reference_solution"] = [{"tool": "get_my_profile", "args": {}}]
    cases["music-wrong-type"] = (
        good
        | {
            "id": "music-wrong-type",
            "expected_diff": [dict(good["expected_diff"][0], new=dict(good["expected_diff"][0]["new"], **{column: {"a": [1]}}))],
        },
        f"expected_diff[0].new.{column}",
    )
    cases["music-big-actor"] = (good | {"id": "music-big-actor", "actor": 10**30}, "actor")
    nowhere = good | {"id": "music-nowhere"}
    nowhere["reference_solution"] = [
        *good["reference_solution"][:1],
        {"tool": "add_song_to_playlist", "args": {"playlist_id": {"$from": 7, "path": "playlist_id"}, "song_id": 1}},
    ]
    cases["music-nowhere"] = (nowhere, "reference_solution[1].args.playlist_id")
    fields = {}
    for name, (content, field_name) in cases.items():
        text = content if isinstance(content, str) else json.dumps(content)
        (folder / f"{name}.json").write_text(text)
        fields[name] = field_name
    del deep, nested_args
    return fields


@pytest.fixture(scope="module")
def tasks_dir(tmp_path_factory, music_world):
    root = tmp_path_factory.mktemp("tasks")
    folder = root / "music"
    folder.mkdir()
    (folder / f"{GOOD}.json").write_text(Path(os.environ["EBENCH_TASKS"], "music", f"{GOOD}.json").read_text())
    return root, _bad_files(folder)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ebench", *args], capture_output=True, text=True, timeout=300)


def _reported(stderr: str, fields: dict[str, str]) -> None:
    for name, field_name in fields.items():
        line = next((line for line in stderr.splitlines() if f"{name}.json" in line), None)
        assert line is not None, (name, stderr)
        assert f": {field_name}:" in line, line
    assert "Traceback" not in stderr


def test_the_loader_reports_each_bad_file_with_its_field_and_keeps_the_good_one(tasks_dir):
    root, fields = tasks_dir
    report = load_suite(root)
    assert [t.id for t in report.tasks] == [GOOD]
    assert {Path(e.source).stem: e.field for e in report.errors} == fields


def test_list_show_and_validate_go_on(tasks_dir):
    root, fields = tasks_dir
    listed = cli("tasks", "list", "--dir", str(root), "--json")
    assert listed.returncode == 0 and [t["id"] for t in json.loads(listed.stdout)] == [GOOD]
    _reported(listed.stderr, fields)
    shown = cli("tasks", "show", GOOD, "--dir", str(root), "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["id"] == GOOD
    validated = cli("tasks", "validate", "--dir", str(root), "--json")
    assert validated.returncode == 1  # the bad files are problems, reported
    report = json.loads(validated.stdout)
    assert report["checked"] == 5 and report["passed"] == 1
    assert {Path(k).stem for k in report["problems"]} == set(fields)


def test_a_batch_skips_them_and_runs_the_good_task(tasks_dir, tmp_path):
    root, fields = tasks_dir
    result = cli("run", "--batch", "--solver", "oracle", "--tasks-dir", str(root), "--out", str(tmp_path / "run"), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)  # stdout holds only the JSON
    assert (summary["passed"], summary["scored"]) == (1, 1)
    _reported(result.stderr, fields)


def test_the_grader_never_raises_on_a_task_that_loaded(tasks_dir):
    root, _ = tasks_dir
    [task] = load_suite(root).tasks
    schema = get_domain("music").schema
    odd = diff_from_list([dict(c.to_dict(), new={**(c.new or {}), "note": "x" * 10}) if c.new else c.to_dict() for c in task.expected_diff])
    for actual in (Diff(), task.expected_diff, odd):
        grade(task.expected_diff, actual, schema)
        explain(task.expected_diff, actual, schema)
