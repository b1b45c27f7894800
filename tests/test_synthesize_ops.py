"""`ebench tasks synthesize` operations through the real CLI against the scripted generator and
verifier on FakeOpenAI: an interrupted synthesis resumes where it stopped (and ends as an
uninterrupted one would), a folder made with other settings is refused, `--dry-run` plans and
prices without a model call, and the same seed gives the same tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.tasks.spec import CAPABILITIES
from ebench.tasks.synthesis import Rejection
from ebench.testing.fake_openai import FakeOpenAI
from ebench.testing.synthesis_script import ACTOR, by_model, fresh_room_generator, room_solver


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def scripted() -> FakeOpenAI:
    """A new server: its generator names rooms A, B, ... from its first conversation on."""
    solver = room_solver()
    players = {"gen": fresh_room_generator(), "agree": solver, "agree-2": solver}  # two verifier models, two votes
    return FakeOpenAI(by_model(players))


def synthesize(server: FakeOpenAI, out: Path, count: int, *extra: str) -> tuple:
    args = ["tasks", "synthesize", "--domain", "moba", "--generator-model", "openai/gen"]
    args += ["--verifier-model", "openai/agree", "--verifier-model", "openai/agree-2", "--count", str(count), "--out", str(out)]
    args += ["--actor", str(ACTOR), "--api-base", server.base_url, "--retries", "0", "--backoff", "0", "--json", *extra]
    result = CliRunner().invoke(app, args)
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def log_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "synthesis.jsonl").read_text().splitlines()]


def task_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "moba").glob("*.json"))}


def test_a_stopped_synthesis_resumes_and_ends_as_an_uninterrupted_one(tmp_path):
    resumed, straight, again = tmp_path / "resumed", tmp_path / "straight", tmp_path / "again"
    with scripted() as server:
        result, summary = synthesize(server, resumed, 1)
        assert result.exit_code == 0 and summary["tasks"] == ["moba-s0001"] and summary["resumed"] == 0
        first = task_files(resumed)
        result, summary = synthesize(server, resumed, 2)
        assert result.exit_code == 0, result.output
        assert summary["resumed"] == 1 and summary["drafts"] == 2 and summary["tasks"] == ["moba-s0001", "moba-s0002"]
        assert task_files(resumed)["moba-s0001.json"] == first["moba-s0001.json"]
        asked = len(server.requests)
        result, summary = synthesize(server, resumed, 2)  # nothing left to do
        assert result.exit_code == 0 and summary["accepted"] == 2 and len(server.requests) == asked
    for out in (straight, again):
        with scripted() as server:
            result, summary = synthesize(server, out, 2)
            assert result.exit_code == 0 and summary["accepted"] == 2
    # the same seed against the same script: the same tasks, byte for byte, and the same log
    assert task_files(straight) == task_files(again) == task_files(resumed)
    assert log_lines(straight) == log_lines(again) == log_lines(resumed)
    assert [line["capability"] for line in log_lines(straight)] == list(CAPABILITIES[:2])  # the mix goes on where it stopped


def test_a_draft_cut_short_is_redone_and_the_accepted_tasks_stay_seen(tmp_path):
    out = tmp_path / "synth"
    with scripted() as server:
        result, _ = synthesize(server, out, 2)
        assert result.exit_code == 0
    first = task_files(out)["moba-s0001.json"]
    log = out / "synthesis.jsonl"
    text = log.read_text()
    log.write_text(text[: text.index("\n") + 20])  # killed while writing draft 2's line: its task was written
    with scripted() as server:  # names its rooms from A again: draft 2 repeats the accepted moba-s0001
        result, summary = synthesize(server, out, 2)
    assert result.exit_code == 0, result.output
    assert summary["resumed"] == 1 and summary["tasks"] == ["moba-s0001", "moba-s0002"]
    lines = log_lines(out)
    assert [(line["draft"], line["outcome"]) for line in lines] == [(1, "accepted"), (2, "rejected"), (3, "accepted")]
    assert lines[1]["reason"] == str(Rejection.DUPLICATE) and lines[1]["sessions"] == ["sessions/generator-0002.jsonl"]
    assert not list((out / "sessions").glob("verifier-0002-*.jsonl"))  # the cut draft's votes went with it
    assert task_files(out)["moba-s0001.json"] == first and len(task_files(out)) == 2
    assert "Synth Night B" in (out / "moba" / "moba-s0002.json").read_text()


def test_a_folder_made_with_other_settings_is_refused(tmp_path):
    out = tmp_path / "synth"
    with scripted() as server:
        synthesize(server, out, 1)
        result, summary = synthesize(server, out, 2, "--seed", "1")
        assert result.exit_code == 2 and summary is None
        assert result.stderr.count("\n") == 1 and "other settings (seed 0, now 1)" in result.stderr
        result, _ = synthesize(server, out, 2, "--min-votes", "1")
        assert result.exit_code == 2 and "min_votes 2, now 1" in result.stderr
        # a folder from before the votes counted configurations and verifiers had exec_code: it resumes
        # only as it was made (every listing its own vote, no exec_code for the verifiers)
        settings = json.loads((out / "synthesis.json").read_text())
        older = {k: v for k, v in settings.items() if k not in ("verifier_configurations", "verifier_code")}
        (out / "synthesis.json").write_text(json.dumps(older))
        result, _ = synthesize(server, out, 2)
        assert result.exit_code == 2 and "(verifier_code False, now True); use another folder" in result.stderr
        public = tmp_path / "public"  # one whose verifiers had the public tools: the rules it was made with still hold
        synthesize(server, public, 1, "--verifier-tools", "public")
        settings = json.loads((public / "synthesis.json").read_text())
        (public / "synthesis.json").write_text(
            json.dumps({k: v for k, v in settings.items() if k not in ("verifier_configurations", "verifier_code")})
        )
        result, summary = synthesize(server, public, 2, "--verifier-tools", "public")
        assert result.exit_code == 0 and summary["resumed"] == 1 and summary["accepted"] == 2, result.output
        (out / "synthesis.json").unlink()  # a folder from before settings were kept
        result, _ = synthesize(server, out, 2)
        assert result.exit_code == 2 and "no synthesis.json to resume from" in result.stderr


def test_the_budget_counts_the_earlier_runs(tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({m: {"input": 1000.0, "output": 1000.0} for m in ("openai/gen", "openai/agree", "openai/agree-2")}))
    out = tmp_path / "synth"
    with scripted() as server:
        result, spent = synthesize(server, out, 1, "--prices", str(prices))
        assert result.exit_code == 0 and spent["cost"] > 0.5
        asked = len(server.requests)
        result, summary = synthesize(server, out, 2, "--prices", str(prices), "--budget", "0.5")
        assert result.exit_code == 1 and "the budget was spent" in result.stderr
        assert summary["status"] == "budget" and summary["cost"] == spent["cost"] and len(server.requests) == asked


def test_a_dry_run_prices_the_plan_without_asking_a_model(tmp_path):
    out = tmp_path / "synth"
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/gen": {"input": 2.0, "output": 8.0}}))
    with scripted() as server:
        result, plan = synthesize(server, out, 3, "--dry-run", "--prices", str(prices), "--estimate-turns", "10")
        assert result.exit_code == 0, result.output
        assert server.requests == [] and not out.exists()
        assert plan["dry_run"] and plan["drafts"] == 12 and plan["max_drafts"] == 12 and plan["done"] is None
        assert sum(plan["capabilities"].values()) == 3 and len(plan["capabilities"]) == 3  # one each of the first three
        generator, verifier, _ = plan["models"]
        assert generator["cost"] == pytest.approx(12 * 10 * (3000 * 2.0 + 300 * 8.0) / 1e6)
        assert verifier["cost"] == "unknown" and plan["cost"] == "unknown"
        assert plan["assumptions"] == {"turns_per_trial": 10, "prompt_tokens_per_turn": 3000, "completion_tokens_per_turn": 300}

        # litellm's local price map prices a model it knows, offline
        args = ["tasks", "synthesize", "--domain", "moba", "--generator-model", "gpt-4o-mini", "--verifier-model", "gpt-4o-mini"]
        result = CliRunner().invoke(app, [*args, "--count", "1", "--out", str(out), "--dry-run", "--json"])
        assert result.exit_code == 0, result.output
        assert isinstance(json.loads(result.stdout)["cost"], float) and server.requests == []

        # on a folder with drafts done: what is left, in words
        synthesize(server, out, 1)
        asked = len(server.requests)
        result = CliRunner().invoke(app, [*_text_args(server, out), "--dry-run"])
        assert result.exit_code == 0 and len(server.requests) == asked
        said = " ".join(result.stdout.split())  # rich wraps at the terminal's width
        assert "1 drafts done, 1 accepted" in said and "up to 7 more drafts (--max-drafts 8) for 2 tasks" in said


def _text_args(server: FakeOpenAI, out: Path) -> list[str]:
    args = ["tasks", "synthesize", "--domain", "moba", "--generator-model", "openai/gen", "--verifier-model", "openai/agree"]
    return [*args, "--verifier-model", "openai/agree-2", "--count", "2", "--out", str(out), "--actor", str(ACTOR)]
