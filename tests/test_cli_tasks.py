"""`ebench tasks ...` through typer's runner, on a small generated set in a temporary folder."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ebench.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def generated(tmp_path_factory, music_world):
    out = tmp_path_factory.mktemp("tasks")
    result = runner.invoke(app, ["tasks", "generate", "-d", "music", "-n", "6", "-s", "11", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["written"] == 6 and summary["domain"] == "music"
    return out


def _json(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_generate_writes_one_file_per_task(generated):
    files = sorted((generated / "music").glob("*.json"))
    # ids that no shipped task has: the seed is in them
    assert [f.stem for f in files] == [f"music-s11-{i:04d}" for i in range(1, 7)]


def test_generate_refuses_to_overwrite_without_force(generated):
    result = runner.invoke(app, ["tasks", "generate", "-d", "music", "-n", "1", "-o", str(generated)])
    assert result.exit_code == 2 and "--force" in result.output


def test_list_show_and_stats(generated):
    listed = _json(["tasks", "list", "--dir", str(generated), "--json"])
    assert len(listed) == 6 and all(t["changed_rows"] >= 3 for t in listed)
    shown = _json(["tasks", "show", listed[0]["id"], "--dir", str(generated), "--json"])
    assert shown["query"] == listed[0]["query"] and shown["reference_solution"]
    stats = _json(["tasks", "stats", "--dir", str(generated), "--json"])
    assert stats["tasks"] == 6 and stats["domains"]["music"]["changed_rows"]["min"] >= 3
    text = runner.invoke(app, ["tasks", "show", listed[0]["id"], "--dir", str(generated)])
    assert text.exit_code == 0 and "Reference solution" in text.output and "Expected changes" in text.output


def test_filter_by_capability(generated):
    listed = _json(["tasks", "list", "--dir", str(generated), "--capability", "cross_entity_cascade", "--json"])
    assert all("cross_entity_cascade" in t["capabilities"] for t in listed)
    bad = runner.invoke(app, ["tasks", "list", "--dir", str(generated), "--capability", "magic"])
    assert bad.exit_code == 2 and "unknown capability" in bad.output


def test_validate_passes_and_flags_broken_files(generated, tmp_path):
    report = _json(["tasks", "validate", "--dir", str(generated), "--json"])
    assert report == {"checked": 6, "passed": 6, "public_solutions": 6, "problems": {}}
    broken = tmp_path / "music"
    broken.mkdir()
    good = json.loads((generated / "music" / "music-s11-0001.json").read_text())
    (broken / "music-0001.json").write_text(json.dumps(good))
    wrong = dict(good, id="music-0002", reference_solution=good["reference_solution"][:1])
    (broken / "music-0002.json").write_text(json.dumps(wrong))
    (broken / "music-0003.json").write_text("{")
    result = runner.invoke(app, ["tasks", "validate", "--dir", str(tmp_path), "--json"])
    assert result.exit_code == 1
    problems = json.loads(result.output)["problems"]
    assert set(problems) == {"music-0002", str(broken / "music-0003.json")}
    assert "does not reproduce" in problems["music-0002"][0]


def test_unknown_task_and_folder_are_usage_errors(generated, tmp_path):
    assert runner.invoke(app, ["tasks", "show", "music-9999", "--dir", str(generated)]).exit_code == 2
    assert runner.invoke(app, ["tasks", "list", "--dir", str(tmp_path / "nowhere")]).exit_code == 2


def test_schema_prints_the_versioned_json_schema():
    schema = _json(["tasks", "schema"])
    assert schema["properties"]["format"]["const"] == "ebench-task/1"
    assert "expected_diff" in schema["required"]


def test_audit_of_generated_tasks_is_clean(generated):
    result = runner.invoke(app, ["tasks", "audit", "--dir", str(generated), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["clean"] and summary["tasks"] == 6 and summary["uncertified"] == []
    assert summary["shortcuts"]["no_op"] == {"title": "doing nothing", "tasks": 6, "passed": 0, "passed_ids": []}
    assert summary["shortcuts"]["wrong_actor"]["tasks"] == 6


def test_audit_names_the_tasks_a_shortcut_passes(generated, tmp_path):
    # a task whose expected end state is its reference without the last write: that shortcut passes it
    from ebench.tasks.reference import run_steps
    from ebench.tasks.shortcuts import without_last_write
    from ebench.tasks.spec import load_task

    task = load_task(generated / "music" / "music-s11-0001.json")
    short = run_steps("music", task.actor, without_last_write("music", task.reference_solution))
    lazy = task.to_dict() | {"id": "music-lazy", "expected_diff": short.diff.to_list()}
    lazy.pop("stats")
    folder = tmp_path / "music"
    folder.mkdir()
    (folder / "music-lazy.json").write_text(json.dumps(lazy))
    result = runner.invoke(app, ["tasks", "audit", "--dir", str(tmp_path), "--json"])
    assert result.exit_code == 1
    summary = json.loads(result.output)
    assert not summary["clean"] and summary["shortcuts"]["no_last_write"]["passed_ids"] == ["music-lazy"]
    text = runner.invoke(app, ["tasks", "audit", "--dir", str(tmp_path)])
    assert text.exit_code == 1 and "not clean" in text.output and "music-lazy" in text.output


def test_generate_refuses_a_prefix_that_gives_shipped_ids(tmp_path):
    result = runner.invoke(app, ["tasks", "generate", "-d", "music", "-n", "1", "-o", str(tmp_path), "--prefix", "music"])
    assert result.exit_code == 2 and "shipped suite" in result.stderr


# -- shipped files are never a default output ---------------------------------------------------


def _shipped_bytes() -> dict[str, bytes]:
    from ebench.tasks.asking import SPLIT_DIR
    from ebench.tasks.scenarios import SCENARIOS_DIR
    from ebench.tasks.suite import SUITE_DIR

    return {str(p): p.read_bytes() for root in (SUITE_DIR, SPLIT_DIR, SCENARIOS_DIR) for p in sorted(root.rglob("*.json"))}


def test_commands_that_write_task_data_never_rewrite_the_shipped_files_by_default(ebench_home, monkeypatch, tmp_path):
    from ebench.tasks.suite import SUITE_DIR

    before = _shipped_bytes()
    runner = CliRunner()
    # the ask split and the scenarios go to the data directory unless told otherwise
    split = runner.invoke(app, ["tasks", "ask-split", "--dir", str(SUITE_DIR), "--json"])
    assert split.exit_code == 0, split.output
    assert json.loads(split.stdout)["out"] == str(ebench_home / "ask-split") and (ebench_home / "ask-split" / "suite.json").is_file()
    made = runner.invoke(app, ["tasks", "scenarios", "-d", "music", "-n", "1", "--json"])
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["out"] == str(ebench_home / "scenarios") and list((ebench_home / "scenarios" / "music").glob("*.json"))
    # paraphrases rewrite task files in place: the shipped suite only when asked by name
    monkeypatch.setenv("EBENCH_TASKS", str(SUITE_DIR))
    refused = runner.invoke(app, ["tasks", "paraphrases", "-d", "music"])
    assert refused.exit_code == 2 and "--as-suite" in refused.stderr and "Traceback" not in refused.output
    both = runner.invoke(app, ["tasks", "scenarios", "--out", str(tmp_path), "--as-suite"])
    assert both.exit_code == 2 and "--out and --as-suite" in both.stderr
    assert _shipped_bytes() == before
