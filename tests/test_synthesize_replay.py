"""`ebench tasks synthesize-replay`: a synthesis run again from its recorded sessions, with no API,
gives the same drafts, verdicts and task files; one that goes another way stops with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.record import read_session
from ebench.testing.fake_openai import FakeOpenAI, completion, error
from ebench.testing.synthesis_script import ACTOR, by_model, fresh_room_generator, room_generator, room_solver


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def generator() -> object:
    """Good drafts for the dependency capability, empty-handed ones (rejected) for cascade."""
    good, empty = fresh_room_generator(), room_generator(None)
    return lambda body: (empty if "cascade" in body["messages"][0]["content"].lower() else good)(body)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A synthesis with an accepted draft, rejected ones, a weak model and a verifier whose API is down,
    two drafts at a time."""
    out = tmp_path_factory.mktemp("recorded") / "synth"
    prices = out.parent / "prices.json"  # the replay has no price table: the recorded costs come back
    prices.write_text(json.dumps({f"openai/{m}": {"input": 1.0, "output": 2.0} for m in ("gen", "agree", "agree-2", "weak", "broken")}))
    players = {
        "gen": generator(),
        "agree": room_solver(),
        "agree-2": room_solver(),
        "weak": lambda body: completion("I would rather not."),
        "broken": lambda body: error(500, "the verifier's API is down"),
    }
    args = ["tasks", "synthesize", "--domain", "moba", "--generator-model", "openai/gen", "--count", "2", "--max-drafts", "4"]
    for model in ("agree", "agree-2", "broken"):
        args += ["--verifier-model", f"openai/{model}"]
    args += ["--out", str(out), "--actor", str(ACTOR), "--retries", "0", "--backoff", "0", "--concurrency", "2"]
    args += ["--capability", "dependency", "--capability", "cascade", "--weak-model", "openai/weak", "--json"]
    args += ["--prices", str(prices)]
    with pytest.MonkeyPatch.context() as patch, FakeOpenAI(by_model(players)) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")
        result = CliRunner().invoke(app, [*args, "--api-base", server.base_url])
    assert result.stdout.strip(), result.output
    summary = json.loads(result.stdout)
    assert summary["accepted"] >= 1 and summary["rejected"], summary  # both verdicts are on record
    return out


def replay(source: Path, out: Path) -> tuple:
    result = CliRunner().invoke(app, ["tasks", "synthesize-replay", str(source), "--out", str(out), "--json"])
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def folder(out: Path) -> tuple[dict[str, bytes], list[dict]]:
    tasks = {p.name: p.read_bytes() for p in sorted((out / "moba").glob("*.json"))}
    lines = sorted((json.loads(line) for line in (out / "synthesis.jsonl").read_text().splitlines()), key=lambda line: line["draft"])
    return tasks, lines


def test_a_replay_without_any_api_gives_the_same_tasks(recorded, tmp_path):
    out = tmp_path / "again"
    result, summary = replay(recorded, out)  # no server is running: every answer comes from the sessions
    assert result.exit_code == 0, result.output
    assert summary["differences"] == [] and summary["drafts"] == len(folder(recorded)[1])
    assert folder(out) == folder(recorded)  # task files byte for byte, and each draft's verdict, votes and cost
    tasks, lines = folder(out)
    assert tasks and {line["outcome"] for line in lines} >= {"accepted", "rejected"}
    assert all(line["cost"] > 0 for line in lines) and summary["cost"] == pytest.approx(sum(line["cost"] for line in lines))
    # the replay is recorded too, the verifier's failed request included (a vote that is no vote against)
    names = sorted(p.name for p in (out / "sessions").glob("*.jsonl"))
    assert names == sorted(p.name for p in (recorded / "sessions").glob("*.jsonl"))
    broken = next((out / "sessions").glob("verifier-*-3.jsonl"))
    assert [e.kind for e in read_session(broken).events if e.event == "api_error"] == ["transient"]
    assert json.loads((out / "synthesis.json").read_text()) == json.loads((recorded / "synthesis.json").read_text())


def test_a_replay_that_goes_another_way_stops_with_one_line(recorded, tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for path in recorded.rglob("*"):
        if path.is_file():
            (source / path.relative_to(recorded)).parent.mkdir(parents=True, exist_ok=True)
            (source / path.relative_to(recorded)).write_bytes(path.read_bytes())
    session = source / "sessions" / "generator-0001.jsonl"
    lines = session.read_text().splitlines(keepends=True)
    last_answer = max(i for i, line in enumerate(lines) if '"role": "assistant"' in line or '"role":"assistant"' in line)
    session.write_text("".join(lines[:last_answer]))  # the submit_task turn is gone from the recording
    result, _ = replay(source, tmp_path / "diverged")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "generator-0001.jsonl: the recording has no answer for model turn" in result.stderr


def test_a_replay_names_the_task_that_came_out_otherwise(recorded, tmp_path):
    source = tmp_path / "source"
    for path in recorded.rglob("*"):
        if path.is_file():
            (source / path.relative_to(recorded)).parent.mkdir(parents=True, exist_ok=True)
            (source / path.relative_to(recorded)).write_bytes(path.read_bytes())
    task = next((source / "moba").glob("*.json"))
    task.write_text(task.read_text().replace("Synth Night", "Synth Day"))  # the recorded task no longer what its sessions make
    result, summary = replay(source, tmp_path / "again")
    assert result.exit_code == 1 and summary["differences"] == [f"task {task.name}: differs"]
    assert result.stderr.count("\n") == 1 and "the replay differs" in result.stderr


def test_a_folder_that_is_no_synthesis_is_refused(tmp_path):
    result, _ = replay(tmp_path, tmp_path / "out")
    assert result.exit_code == 2 and "not a synthesis folder (no synthesis.json)" in result.stderr
