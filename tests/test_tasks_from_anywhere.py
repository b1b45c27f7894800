"""Tasks from anywhere: `--tasks-dir` and `tasks list/validate --dir` read a folder of domain folders,
a flat folder of task files and a JSONL file (one task per line) through one loader
(ebench.tasks.suite.load_suite), and a source with no task at all is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.tasks.spec import TaskFileError, load_task_lines
from ebench.tasks.suite import NoTasks, load_suite

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tasks"
MUSIC = ["music-0001", "music-0005"]
MOBA = ["moba-0001"]
runner = CliRunner()


def _document(task_id: str) -> dict:
    domain = task_id.split("-")[0]
    return json.loads((FIXTURES / domain / f"{task_id}.json").read_text(encoding="utf-8"))


@pytest.fixture
def flat(tmp_path: Path) -> Path:
    """Task files side by side, named otherwise than by their id, beside a suite.json record."""
    folder = tmp_path / "flat"
    folder.mkdir()
    for n, task_id in enumerate(MUSIC + MOBA):
        (folder / f"task{n}.json").write_text(json.dumps(_document(task_id)), encoding="utf-8")
    (folder / "suite.json").write_text(json.dumps({"version": "7"}), encoding="utf-8")
    return folder


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(_document(t)) + "\n" for t in MUSIC + MOBA), encoding="utf-8")
    return path


def _invoke(*args: str):
    return runner.invoke(app, list(args))


def _listed(*args: str) -> list[str]:
    result = _invoke("tasks", "list", *args, "--json")
    assert result.exit_code == 0, result.output
    return [t["id"] for t in json.loads(result.output)]


def test_the_three_shapes_load_the_same_tasks(flat, jsonl, tmp_path):
    nested = tmp_path / "nested"
    for task_id in MUSIC + MOBA:
        domain = task_id.split("-")[0]
        (nested / domain).mkdir(parents=True, exist_ok=True)
        (nested / domain / f"{task_id}.json").write_text(json.dumps(_document(task_id)), encoding="utf-8")
    loaded = {name: load_suite(root) for name, root in (("nested", nested), ("flat", flat), ("jsonl", jsonl))}
    for report in loaded.values():
        assert report.errors == []
        assert sorted(t.id for t in report.tasks) == sorted(MUSIC + MOBA)
    as_dicts = {name: sorted((t.to_dict() for t in r.tasks), key=lambda d: d["id"]) for name, r in loaded.items()}
    assert as_dicts["nested"] == as_dicts["flat"] == as_dicts["jsonl"]
    assert [t.id for t in load_suite(jsonl, domain="moba").tasks] == MOBA  # a file's tasks of other domains are left out
    assert sorted(t.id for t in load_suite(flat, domain="music").tasks) == MUSIC
    assert {t.source for t in loaded["jsonl"].tasks} == {f"{jsonl}:{n}" for n in (1, 2, 3)}


def test_tasks_list_and_show_read_a_flat_folder_and_a_jsonl_file(flat, jsonl):
    assert sorted(_listed("--dir", str(flat))) == sorted(MUSIC + MOBA)
    assert sorted(_listed("--dir", str(jsonl))) == sorted(MUSIC + MOBA)
    assert _listed("--dir", str(jsonl), "--domain", "moba") == MOBA
    shown = _invoke("tasks", "show", "music-0005", "--dir", str(jsonl), "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == _document("music-0005")
    assert _invoke("tasks", "show", "music-9999", "--dir", str(jsonl)).exit_code == 2


def test_tasks_validate_checks_every_task_of_a_flat_folder_and_a_jsonl_file(flat, jsonl, music_world, moba_world):
    for source in (flat, jsonl):
        result = _invoke("tasks", "validate", "--dir", str(source), "--json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        assert report["checked"] == report["passed"] == 3 and report["problems"] == {}


def test_run_takes_a_jsonl_file_and_a_flat_folder(flat, jsonl, tmp_path, music_world, moba_world):
    for name, source in (("flat", flat), ("jsonl", jsonl)):
        out = tmp_path / f"run-{name}"
        result = _invoke("run", "--batch", "--solver", "oracle", "--tasks-dir", str(source), "--out", str(out), "--workers", "1", "--json")
        assert result.exit_code == 0, result.output
        summary = json.loads(result.output)
        assert summary["passed"] == summary["scored"] == 3
        assert json.loads((out / "manifest.json").read_text())["config"]["tasks"]["dir"] == str(source.resolve())
        regraded = _invoke("regrade", str(out), "--json")  # the run names its source; regrading reads it again
        assert regraded.exit_code == 0, regraded.output


@pytest.mark.parametrize(
    "command", [["tasks", "list", "--dir"], ["tasks", "validate", "--dir"], ["run", "--batch", "--solver", "oracle", "--tasks-dir"]]
)
def test_a_source_without_tasks_is_a_one_line_error(tmp_path, command):
    empty = tmp_path / "empty"
    (empty / "music").mkdir(parents=True)  # a domain folder with nothing in it is no task either
    (empty / "notes.txt").write_text("not a task", encoding="utf-8")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n", encoding="utf-8")
    for source in (empty, blank, tmp_path / "nowhere"):
        result = _invoke(*command, str(source))
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and str(source) in lines[0], result.output
        assert "0/0" not in result.output


def test_a_jsonl_file_reports_each_bad_line_and_keeps_the_good_ones(tmp_path):
    good, other = _document("music-0001"), _document("moba-0001")
    path = tmp_path / "mixed.jsonl"
    lines = [json.dumps(good), "{not json", "", json.dumps(dict(good, query="")), json.dumps(good), "[1]", json.dumps(other)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = load_suite(path)
    assert [t.id for t in report.tasks] == ["music-0001", "moba-0001"]
    assert [(e.source, e.field) for e in report.errors] == [
        (f"{path}:2", "(json)"),
        (f"{path}:4", "query"),
        (f"{path}:5", "id"),  # the id is already used by line 1
        (f"{path}:6", "(document)"),
    ]
    assert f"{path}:1" in str(report.errors[2])


def test_a_dataset_row_is_read_as_the_task_it_stands_for(tmp_path):
    """A row of the exported dataset as `datasets` writes it back: structured fields as JSON text,
    an optional field null."""
    document = _document("music-0001")
    row = {
        name: json.dumps(value) if isinstance(value, (dict, list)) and name != "capabilities" else value for name, value in document.items()
    }
    row["paraphrases"] = None
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps(dict(row, id="music-7777", expected_diff="[{")) + "\n", encoding="utf-8")
    first, second = load_task_lines(path)
    assert not isinstance(first, TaskFileError) and first.to_dict() == {k: v for k, v in document.items() if k != "paraphrases"}
    assert isinstance(second, TaskFileError) and second.field == "expected_diff" and second.source == f"{path}:2"


def test_a_missing_source_is_no_tasks(tmp_path):
    with pytest.raises(NoTasks, match="no such folder or file"):
        load_suite(tmp_path / "nowhere")
