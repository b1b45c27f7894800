"""`ebench export dataset`: the shipped task sets as a dataset that `datasets.load_dataset` reads as it
is, and a round trip (export, load with `datasets`, write the rows back as JSONL, `ebench run
--tasks-dir`) that grades exactly as the shipped files do."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # a local folder: nothing to fetch, and tests never reach the network
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import datasets  # noqa: E402  (after the offline switches above)
import yaml  # noqa: E402

from ebench.api import read_session  # noqa: E402
from ebench.cli import app  # noqa: E402
from ebench.integrations.dataset import COLUMNS, task_row  # noqa: E402
from ebench.tasks.suite import SPLITS, load_suite  # noqa: E402

runner = CliRunner()


def _invoke(*args: str) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output) if "--json" in args else result.output


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataset") / "ebench-tasks"
    summary = _invoke("export", "dataset", "--out", str(out), "--json")
    assert summary["rows"] == sum(len(load_suite(root).tasks) for root in SPLITS.values())
    return out


def _load(path: Path, cache: Path, *name: str) -> Any:
    return datasets.load_dataset(str(path), *name, cache_dir=str(cache))


def _card_header(folder: Path) -> dict[str, Any]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_load_dataset_reads_the_folder_as_it_is(exported, tmp_path):
    loaded = _load(exported, tmp_path / "hf")
    assert list(loaded) == list(SPLITS)  # suite, ask, composed
    for name, root in SPLITS.items():
        shipped = sorted(load_suite(root).tasks, key=lambda t: (t.domain, t.id))
        assert loaded[name].num_rows == len(shipped)
        assert loaded[name].column_names == list(COLUMNS)
        rows = sorted(loaded[name], key=lambda r: (r["domain"], r["id"]))
        assert rows == [task_row(t) for t in shipped]
    music = _load(exported, tmp_path / "hf", "music-suite")
    assert list(music) == ["suite"] and {r["domain"] for r in music["suite"]} == {"music"}
    assert music["suite"].num_rows == len(load_suite(SPLITS["suite"], domain="music").tasks)
    assert music["suite"].features["world"]["seed"].dtype == "int64"  # worlds are named by seed and fingerprint


def test_the_card_has_the_hub_header_and_says_how_grading_works(exported):
    header = _card_header(exported)
    assert header["license"] == "mit" and header["task_categories"] == ["text-generation"]
    names = [c["config_name"] for c in header["configs"]]
    domains = sorted({t.domain for t in load_suite(SPLITS["suite"]).tasks})
    assert names[0] == "default" and header["configs"][0]["default"] is True
    assert set(names) == {"default", *domains, *(f"{d}-{s}" for d in domains for s in SPLITS)}
    for config in header["configs"]:  # every file a config names is there
        for item in config["data_files"]:
            paths = item["path"] if isinstance(item["path"], list) else [item["path"]]
            assert all((exported / p).is_file() for p in paths)
    card = (exported / "README.md").read_text(encoding="utf-8")
    for column in COLUMNS:
        assert f"| `{column}` |" in card
    assert "## How grading works" in card and "ebench domains build" in card and "@misc{" in card


def test_export_is_byte_for_byte_repeatable_and_refuses_a_folder_in_use(exported, tmp_path):
    again = tmp_path / "again"
    _invoke("export", "dataset", "--out", str(again), "--json")
    files = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((exported / f).read_bytes() == (again / f).read_bytes() for f in files)
    refused = runner.invoke(app, ["export", "dataset", "--out", str(again)])
    assert refused.exit_code == 2 and "--force" in refused.output and len(refused.output.strip().splitlines()) == 1
    assert runner.invoke(app, ["export", "dataset", "--out", str(again), "--force", "--split", "ask"]).exit_code == 0
    assert [c["config_name"] for c in _card_header(again)["configs"]][:2] == ["default", "meeting"]
    assert _card_header(again)["configs"][0]["data_files"][0]["split"] == "ask"


def test_parquet_holds_the_same_rows(exported, tmp_path):
    out = tmp_path / "parquet"
    summary = _invoke("export", "dataset", "--out", str(out), "--split", "composed", "--format", "parquet", "--json")
    assert {f["path"].rsplit(".", 1)[1] for f in summary["files"]} == {"parquet"}
    from_parquet = _load(out, tmp_path / "hf", "moba-composed")["composed"]
    from_jsonl = _load(exported, tmp_path / "hf", "moba-composed")["composed"]
    assert from_parquet.features == from_jsonl.features
    assert list(from_parquet) == list(from_jsonl)


def _results(run: Path) -> dict[str, dict[str, Any]]:
    """Each trial's results line (its timing left out) and its session's full grade, by task."""
    found = {}
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("seconds")
        end = read_session(run / record["session"]).end
        assert end is not None
        found[record["task"]] = {**record, "session_grade": end.grade}
    return found


@pytest.mark.parametrize("solver", ["oracle", "noop"])
def test_round_trip_through_datasets_grades_identically(exported, tmp_path, solver, music_world, meeting_world, moba_world):
    loaded = _load(exported, tmp_path / "hf")
    for name in SPLITS:
        rows = tmp_path / f"{name}.jsonl"
        loaded[name].to_json(str(rows), force_ascii=False)  # the rows, written back as `datasets` writes them
        runs = {}
        for source, args in (("shipped", ["--split", name]), ("dataset", ["--tasks-dir", str(rows)])):
            runs[source] = tmp_path / f"{name}-{source}-{solver}"
            summary = _invoke(
                "run", "--batch", "--solver", solver, *args, "--out", str(runs[source]), "--workers", "1", "--json"
            )  # fmt: skip
            assert summary["scored"] == loaded[name].num_rows and summary["infra_errors"] == 0
        shipped, dataset = _results(runs["shipped"]), _results(runs["dataset"])
        assert dataset == shipped
        assert all(r["passed"] is (solver == "oracle") for r in shipped.values())
