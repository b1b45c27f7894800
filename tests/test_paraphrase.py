"""`ebench tasks paraphrase` end to end: the real CLI and litellm client against a local
OpenAI-compatible server that plays the paraphraser (a good, a leaky, a counting and an unchanged
rewording) and the verifiers (agreeing from the new wording, disagreeing, failing)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.paraphrase import cleaned
from ebench.sessions.timeline import Timeline
from ebench.tasks.spec import Task, parse_task
from ebench.tasks.suite import load_suite
from ebench.tasks.task_check import check_task
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, completion
from ebench.testing.synthesis_script import by_model, verifier_players

TASK = "moba-0001"  # answer friend requests by rank (tests/fixtures/tasks): 4 requests answered, 6 rows changed
NEW = (
    "I have friend requests waiting for an answer. Accept those from players ranked Platinum or above right now and reject every other one."
)
LEAKY = NEW.replace("every other one", "every other one, such as request 468")
COUNTING = NEW.replace("I have friend requests", "I have 4 friend requests")


@pytest.fixture(scope="module")
def original() -> Task:
    [task] = load_suite(ids=[TASK]).tasks
    return task


@pytest.fixture
def server(original):
    reworded = original.model_copy(update={"query": NEW})
    players = {
        "para": lambda body: completion(f'"{NEW}"'),
        "para-leaky": lambda body: completion(LEAKY),
        "para-counting": lambda body: completion(COUNTING),
        "para-same": lambda body: completion("  " + original.query.upper() + "  "),
        **verifier_players(ReferencePlayer([reworded])),
    }
    with FakeOpenAI(by_model(players)) as fake:
        yield fake


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")


def paraphrase(server, out: Path, verifiers: list[str], *extra: str, model: str = "para"):
    args = ["tasks", "paraphrase", "--model", f"openai/{model}", "--task", TASK, "--out", str(out)]
    for verifier in verifiers:
        args += ["--verifier-model", f"openai/{verifier}"]
    args += ["--api-base", server.base_url, "--retries", "0", "--backoff", "0", "--json", *extra]
    result = CliRunner().invoke(app, args)
    summary = json.loads(result.stdout) if result.stdout.strip() else None
    return result, summary


def log_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "paraphrase.jsonl").read_text().splitlines()]


def test_a_paraphrase_the_verifiers_solve_is_kept_with_the_same_end_state(server, original, tmp_path):
    out = tmp_path / "para"
    result, summary = paraphrase(server, out, ["agree", "agree-2"])
    assert result.exit_code == 0, result.output
    assert summary["kept"] == 1 and summary["tasks"] == [f"{TASK}-p1"] and summary["rejected"] == {}
    [line] = log_lines(out)
    assert line["outcome"] == "kept" and line["query"] == NEW and line["votes"] == "2/2"  # the quotes were stripped

    task = parse_task(json.loads((out / "moba" / f"{TASK}-p1.json").read_text()))
    assert task.query == NEW and task.actor == original.actor and task.world == original.world
    assert task.expected_diff.to_list() == original.expected_diff.to_list()
    assert task.reference_solution == original.reference_solution
    note = task.generator
    assert note["paraphrase_of"] == TASK and note["model"] == "openai/para" and note["votes"] == "2/2"
    assert [(v["model"], v["passed"]) for v in note["verifiers"]] == [("openai/agree", True), ("openai/agree-2", True)]
    assert note["template"] == original.generator["template"]  # the template's stated values still certify it
    check = check_task(task)
    assert check.ok, check.problems
    validated = CliRunner().invoke(app, ["tasks", "validate", "--dir", str(out), "--json"])
    assert validated.exit_code == 0, validated.output

    # the rewording and each vote are sessions the replay debugger steps through
    sessions = sorted(p.name for p in (out / "sessions").glob("*.jsonl"))
    assert sessions == [f"paraphrase-{TASK}-p1.jsonl", f"verifier-{TASK}-p1-1.jsonl", f"verifier-{TASK}-p1-2.jsonl"]
    for name in sessions:
        timeline = Timeline.open(out / "sessions" / name)
        try:
            assert timeline.check() is None, name
        finally:
            timeline.close()
    assert "sk-test-do-not-record" not in "".join(p.read_text() for p in (out / "sessions").glob("*.jsonl"))


@pytest.mark.parametrize(
    ("model", "reason", "detail"),
    [
        ("para-leaky", "leaks an id", "468"),
        ("para-counting", "states a count", "states 4"),
        ("para-same", "unchanged wording", "the original"),
    ],
)
def test_a_bad_paraphrase_is_rejected_before_any_verifier_runs(server, tmp_path, model, reason, detail):
    out = tmp_path / "para"
    result, summary = paraphrase(server, out, ["agree", "agree-2"], model=model)
    assert result.exit_code == 1 and "no paraphrase was kept" in result.stderr
    assert summary["kept"] == 0 and summary["rejected"] == {reason: 1}
    [line] = log_lines(out)
    assert line["outcome"] == "rejected" and line["reason"] == reason and detail in line["detail"]
    assert line["sessions"] == [f"sessions/paraphrase-{TASK}-p1.jsonl"]  # no verifier was asked
    assert not (out / "moba").exists()


def test_verifiers_that_disagree_reject_it_and_api_failures_leave_it_unverified(server, tmp_path):
    result, summary = paraphrase(server, tmp_path / "a", ["agree", "disagree"])
    assert result.exit_code == 1 and summary["rejected"] == {"verifiers disagree (1/2)": 1}
    result, summary = paraphrase(server, tmp_path / "b", ["agree", "broken"])
    assert result.exit_code == 1 and summary["unverified"] == 1 and summary["rejected"] == {}
    assert log_lines(tmp_path / "b")[0]["outcome"] == "unverified"
    result, summary = paraphrase(server, tmp_path / "c", ["agree", "disagree"], "--min-votes", "1")
    assert result.exit_code == 0 and summary["kept"] == 1


def test_one_verifier_model_listed_twice_is_one_vote_and_cannot_reach_two(server, tmp_path):
    result, _ = paraphrase(server, tmp_path / "same", ["agree", "agree"])
    assert result.exit_code == 2 and "2 --verifier-model listings are 1 distinct configuration" in result.stderr
    assert not (tmp_path / "same" / "paraphrase.jsonl").exists()  # refused before any model was asked
    result, summary = paraphrase(server, tmp_path / "seeded", ["agree seed=1", "agree seed=2"])
    assert result.exit_code == 0 and summary["kept"] == 1  # a stated seed per listing: two configurations, two votes


def test_a_later_variant_must_differ_from_the_earlier_ones(server, tmp_path):
    out = tmp_path / "para"
    result, summary = paraphrase(server, out, ["agree"], "--variants", "2")
    assert result.exit_code == 0 and summary["kept"] == 1 and summary["attempts"] == 2
    first, second = log_lines(out)
    assert first["outcome"] == "kept" and second["reason"] == "unchanged wording" and second["detail"] == "an earlier variant"


def test_tasks_are_reworded_at_once_with_concurrency(original, tmp_path):
    both = threading.Barrier(2, timeout=30)  # the second rewording request must arrive while the first waits

    def waits_for_the_other(body):
        both.wait()
        return completion(NEW)

    players = {"para": waits_for_the_other, **verifier_players(ReferencePlayer([original.model_copy(update={"query": NEW})]))}
    out = tmp_path / "para"
    with FakeOpenAI(by_model(players)) as server:
        args = ["tasks", "paraphrase", "--model", "openai/para", "--task", TASK, "--task", "moba-0010", "--out", str(out)]
        args += ["--verifier-model", "openai/agree", "--api-base", server.base_url, "--retries", "0", "--concurrency", "2", "--json"]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["attempts"] == 2 and summary["tasks"] == [f"{TASK}-p1"]  # moba-0010 reworded as moba-0001 is not solved
    assert sorted(line["task"] for line in log_lines(out)) == [TASK, "moba-0010"]


def test_a_used_output_folder_and_an_unknown_task_are_refused(server, tmp_path):
    out = tmp_path / "para"
    paraphrase(server, out, ["agree"])
    result, summary = paraphrase(server, out, ["agree"])
    assert result.exit_code == 2 and summary is None and "already holds a paraphrase run" in result.stderr
    result = CliRunner().invoke(
        app,
        [
            "tasks",
            "paraphrase",
            "--model",
            "openai/para",
            "--verifier-model",
            "openai/agree",
            "--task",
            "nope",
            "--out",
            str(tmp_path / "x"),
        ],
    )
    assert result.exit_code == 2 and "no task 'nope'" in result.stderr


def test_the_reply_loses_its_quotes():
    assert cleaned(" “Open a room.” ") == "Open a room."
    assert cleaned("'\"Hi\"'") == "Hi" and cleaned(None) == "" and cleaned("  ") == ""
