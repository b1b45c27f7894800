"""ebench as an Inspect AI eval (ebench/integrations/inspect.py), end to end: Inspect's own openai
provider talks to the project's fake OpenAI-compatible server on 127.0.0.1, each sample runs a real
trial on a copy of the world, and the score is ebench's diff grade. The log then becomes an ebench
run directory (`ebench import inspect`) that `ebench report` scores the same.

Needs the `inspect` extra (the `test` extra holds it, with the openai release Inspect's provider
takes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import inspect_ai
import pytest
from inspect_ai.log import EvalLog, read_eval_log
from typer.testing import CliRunner

from ebench.api import Task, read_session
from ebench.integrations.inspect import (
    SCORER_NAME,
    SESSION_KEY,
    InspectOptionsError,
    LogImportError,
    ebench,
    import_log,
    load_tasks,
)
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply, completion, error, turn_of

KEY = "sk-inspect-test-0123456789"
SPLIT, DOMAIN = "composed", "music"
IDS = ["music-c-0002", "music-c-0003"]  # 7 and 15 reference calls: reads, then writes built on them
runner = CliRunner()


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A key for the fake server, and nothing of Inspect's written outside the test's folder."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.id: t for t in load_tasks(SPLIT, DOMAIN, IDS)}


def run_eval(
    responder: Any,
    tmp_path: Path,
    *,
    ids: list[str] = IDS,
    mode: str = "tools",
    split: str = SPLIT,
    status: str = "success",
    **options: Any,
) -> EvalLog:
    """One `inspect_ai.eval` of ebench's task against the fake server (`options`: eval's), its log
    read back from disk."""
    with FakeOpenAI(responder) as server:
        [log] = inspect_ai.eval(
            ebench(split=split, domain=DOMAIN, tasks=",".join(ids), mode=mode, sessions=str(tmp_path / "sessions")),
            model="openai/fake",
            model_base_url=server.base_url,
            model_args={"responses_api": False},  # the fake server speaks chat completions
            log_dir=str(tmp_path / "logs"),
            display="none",
            **options,
        )
    assert log.status == status, log.error
    assert log.location
    return read_eval_log(log.location)


def scores(log: EvalLog) -> dict[str, Any]:
    assert log.samples is not None
    return {str(s.id): s.scores[SCORER_NAME] for s in log.samples if s.scores}


@pytest.fixture(scope="module")
def passing_log(tasks: dict[str, Task], tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    folder = tmp_path_factory.mktemp("passing")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", KEY)
        return run_eval(ReferencePlayer(tasks.values(), parallel=True), folder)


# -- the eval ----------------------------------------------------------------------------------


def test_the_reference_playing_model_scores_1_on_every_sample(passing_log, tasks):
    graded = scores(passing_log)
    assert sorted(graded) == IDS
    for task_id, score in graded.items():
        assert score.value == "C", score.explanation
        assert score.explanation.startswith(f"PASS: {len(tasks[task_id].expected_diff)}/{len(tasks[task_id].expected_diff)} expected")
        assert score.metadata["task"] == task_id
        assert score.metadata["capabilities"] == tasks[task_id].capabilities
        assert score.metadata["termination"] == "agent_stopped"
        changed = score.metadata["changed_rows"]
        assert len(changed) == len(tasks[task_id].expected_diff) and all({"table", "op", "key"} <= set(row) for row in changed)
    [result] = passing_log.results.scores
    assert result.metrics["accuracy"].value == 1.0


def test_every_call_the_model_made_is_an_inspect_tool_call_answered_with_ebench_s_payload(passing_log, tasks):
    for sample in passing_log.samples:
        task = tasks[str(sample.id)]
        asked = [call.function for m in sample.messages if m.role == "assistant" for call in (m.tool_calls or [])]
        assert asked == [step.tool for step in task.reference_solution]
        answers = [m for m in sample.messages if m.role == "tool"]
        assert len(answers) == len(asked) and not any(m.error for m in answers)
        assert all(isinstance(json.loads(m.text), dict) for m in answers)  # the JSON the tools return
        assert sample.messages[0].role == "system" and "The current time is" in sample.messages[0].text


def test_each_sample_is_recorded_as_an_ebench_session_kept_in_the_log(passing_log, tasks):
    for sample in passing_log.samples:
        recorded = sample.store[SESSION_KEY]
        summary = sample.scores[SCORER_NAME].metadata["summary"]
        on_disk = Path(summary["session"])
        assert on_disk.read_text(encoding="utf-8") == recorded
        session = read_session(on_disk)
        assert session.start.task.id == sample.id and session.start.solver.to_dict() == {"name": "inspect", "model": "openai/fake"}
        assert session.end.grade.passed is True
        calls = [e.tool for e in session.tool_calls()]
        assert calls == [step.tool for step in tasks[str(sample.id)].reference_solution]


def test_a_model_that_stops_short_scores_0_and_the_explanation_names_the_missing_rows(tasks, tmp_path):
    task = tasks["music-c-0002"]  # its last step follows artist 239
    log = run_eval(ReferencePlayer([task], skip_last=1), tmp_path, ids=[task.id])
    score = scores(log)[task.id]
    assert score.value == "I"
    lines = score.explanation.splitlines()
    assert lines[0] == "FAIL: 2/4 expected row changes matched, 2 missing, 0 unexpected, 0 wrong values"
    assert "missing: insert followed_artists {user_id=27, artist_id=239, followed_at='2026-10-15 20:30:00'}" in lines
    assert "missing: update artists {id=239}: follower_count 3 -> 4" in lines
    assert lines[-1] == "ended: agent_stopped"
    assert log.results.scores[0].metrics["accuracy"].value == 0.0


def test_a_model_that_follows_the_wrong_artist_scores_0_with_the_rows_it_got_wrong(tasks, tmp_path):
    task = tasks["music-c-0002"]
    player = ReferencePlayer([task])

    def wrong_artist(body: dict[str, Any]) -> Reply:
        reply = player(body)
        calls = reply.body["choices"][0]["message"].get("tool_calls") or []
        for call in calls:
            if call["function"]["name"] == "follow_artist" and json.loads(call["function"]["arguments"]) == {"artist_id": 239}:
                call["function"]["arguments"] = json.dumps({"artist_id": 238})
        return reply

    score = scores(run_eval(wrong_artist, tmp_path, ids=[task.id]))[task.id]
    assert score.value == "I"
    print(score.explanation)
    assert score.explanation.splitlines()[:4] == [
        "FAIL: 2/4 expected row changes matched, 1 missing, 1 unexpected, 1 wrong values",
        "missing: update artists {id=239}: follower_count 3 -> 4",
        "unexpected: update artists {id=238}: follower_count 2 -> 3",
        "wrong: insert followed_artists {user_id=27, artist_id=239}.artist_id: expected 239, got 238",
    ]


def test_a_task_whose_user_holds_facts_gets_its_answer_from_ebench_s_scripted_user(tmp_path):
    [task] = load_tasks("ask", DOMAIN, "music-0012-ask")  # the playlist's name is the user's to give
    log = run_eval(ReferencePlayer([task], parallel=True), tmp_path, ids=[task.id], split="ask")
    score = scores(log)[task.id]
    assert score.value == "C", score.explanation
    assert score.metadata["summary"]["asked_first"] is True
    [sample] = log.samples
    roles = [m.role for m in sample.messages]
    assert roles[:5] == ["system", "user", "assistant", "user", "assistant"]  # the question, then the answer
    assert not sample.messages[2].tool_calls and "Train Window" in sample.messages[3].text


def reference_block(task: Task) -> str:
    """The task's reference solution as one exec_code block: each step a call of the tool's function,
    its `$from` arguments read from the earlier results (as `resolve_args` does)."""
    steps = json.dumps([{"tool": s.tool, "args": s.args} for s in task.reference_solution])
    lines = [
        "import json",
        "results = []",
        "def resolve(v):",
        "    if isinstance(v, dict) and '$from' in v:",
        "        cur = results[v['$from']]",
        "        for part in str(v.get('path', '')).split('.'):",
        "            if part:",
        "                cur = cur[int(part)] if isinstance(cur, list) else cur[part]",
        "        return cur",
        "    return [resolve(x) for x in v] if isinstance(v, list) else v",
        f"steps = json.loads({steps!r})",
    ]
    for index, step in enumerate(task.reference_solution):
        lines.append(f"results.append({step.tool}(**{{k: resolve(v) for k, v in steps[{index}]['args'].items()}}))")
    lines.append("print(len(results), 'calls')")
    lines.append("print('.' * 30000)")  # an answer beyond Inspect's default 16 KB: sent whole, as ebench sends it
    return "\n".join(lines)


def test_code_mode_runs_exec_code_through_ebench_s_sandbox_and_passes(tasks, tmp_path):
    task = tasks["music-c-0003"]

    def one_block(body: dict[str, Any]) -> Reply:
        offered = [tool["function"]["name"] for tool in body.get("tools") or []]
        assert "exec_code" in offered and "favourite_song" in offered  # code mode: the tools and exec_code
        return completion(None, [("exec_code", {"code": reference_block(task)})]) if turn_of(body) == 1 else completion("Done.")

    log = run_eval(one_block, tmp_path, ids=[task.id], mode="code")
    score = scores(log)[task.id]
    assert score.value == "C", score.explanation
    [sample] = log.samples
    [answer] = [m for m in sample.messages if m.role == "tool"]
    printed = json.loads(answer.text)["stdout"]
    assert f"{len(task.reference_solution)} calls" in printed and "." * 30000 in printed
    summary = score.metadata["summary"]
    assert (summary["exec_blocks"], summary["inner_calls"]) == (1, len(task.reference_solution))
    session = read_session(Path(summary["session"]))
    assert session.start.mode == "code"
    assert [e.tool for e in session.tool_calls()] == [s.tool for s in task.reference_solution]  # the block's calls, as its children


def test_inspect_s_message_limit_ends_the_trial_as_ebench_s_turn_limit(tasks, tmp_path):
    task = tasks["music-c-0003"]  # 15 calls, one a turn: far more messages than 6
    score = scores(run_eval(ReferencePlayer([task]), tmp_path, ids=[task.id], message_limit=6))[task.id]
    assert score.value == "I"
    assert score.metadata["termination"] == "max_turns"
    assert score.explanation.splitlines()[-1].startswith("ended: max_turns (inspect message limit:")
    assert score.metadata["summary"]["tool_calls"] == 2  # system, user, then two turns of a call and its answer


def test_a_sample_that_fails_keeps_its_session_and_imports_as_an_infrastructure_error(tasks, tmp_path):
    def refuses_the_second_turn(body: dict[str, Any]) -> Reply:
        return completion(None, [("list_followed_artists", {"page": 1})]) if turn_of(body) == 1 else error(400, "bad request")

    log = run_eval(refuses_the_second_turn, tmp_path, ids=["music-c-0002"], status="error")
    [sample] = log.samples
    assert sample.error is not None and not sample.scores
    done = import_log(Path(log.location), tmp_path / "run")
    assert (done.trials, done.passed, done.infra_errors, done.without_session) == (1, 0, 1, 0)
    session = read_session(tmp_path / "run" / "sessions" / "music-c-0002" / "1.jsonl")
    assert [e.tool for e in session.tool_calls()] == ["list_followed_artists"]
    assert session.end.termination == "infra_error"


# -- the options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"split": "nope"}, "-T split='nope': one of suite, ask, composed"),
        ({"mode": "sql"}, "-T mode='sql': one of tools, code"),
        ({"split": SPLIT, "tasks": "music-c-0002,no-such-task"}, "-T tasks: no such task here: no-such-task"),
        ({"split": SPLIT, "tasks_dir": "x"}, "-T split and -T tasks_dir both name the tasks: give one"),
        ({"split": SPLIT, "max_turns": 0}, "-T max_turns=0: a whole number, 1 or more"),
    ],
)
def test_options_the_task_cannot_take_are_one_line_errors(options, message):
    with pytest.raises(InspectOptionsError) as raised:
        ebench(**options)
    assert str(raised.value) == message


def test_a_subset_of_tasks_is_the_dataset_in_the_folder_s_order():
    task = ebench(split=SPLIT, domain=DOMAIN, tasks=["music-c-0003", "music-c-0002"])
    assert [s.id for s in task.dataset] == IDS
    assert task.dataset[0].metadata["capabilities"] == ["aggregation_computation"]


# -- the log as a run directory ------------------------------------------------------------------


def cli() -> Any:
    """The `ebench` command line, with `import` (registered in ebench/cli/__init__.py)."""
    from ebench.cli import app

    if not any(group.name == "import" for group in app.registered_groups):  # until the lead registers it
        import typer

        from ebench.cli import common
        from ebench.cli.imports import import_app
        from ebench.cli.report import report_command

        app = typer.Typer(cls=common.OneLineErrors)
        app.add_typer(import_app, name="import")
        app.command("report")(report_command)
    return app


def test_ebench_import_inspect_makes_a_run_that_ebench_report_scores_the_same(passing_log, tmp_path):
    out = tmp_path / "run"
    done = runner.invoke(cli(), ["import", "inspect", passing_log.location, "--out", str(out), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"out": str(out), "trials": 2, "passed": 2, "infra_errors": 0, "without_session": 0}
    report = runner.invoke(cli(), ["report", "--json", str(out)])
    assert report.exit_code == 0, report.output
    [run] = json.loads(report.stdout)["runs"]
    overall = run["metrics"]["overall"]
    assert (overall["trials"], overall["passes"]) == (2, 2)
    assert (run["solver"], run["model"]) == ("inspect", "openai/fake")
    assert run["limits"] == {"max_turns": 30, "max_tool_calls": 100}
    for task_id in IDS:
        session = read_session(out / "sessions" / task_id / "1.jsonl")
        assert session.start.task.id == task_id and session.end.grade.passed is True


def test_a_failed_trial_imports_as_a_failure_with_its_grade(tasks, tmp_path):
    task = tasks["music-c-0002"]
    log = run_eval(ReferencePlayer([task], skip_last=1), tmp_path, ids=[task.id])
    done = import_log(Path(log.location), tmp_path / "run")
    assert (done.trials, done.passed) == (1, 0)
    [line] = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert line["passed"] is False and line["grade"]["missing"] == 2 and line["session"] == f"sessions/{task.id}/1.jsonl"


def test_importing_what_is_not_an_ebench_log_is_a_one_line_error(tmp_path, passing_log):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    cases = [
        ([str(tmp_path / "missing.eval"), "--out", str(tmp_path / "a")], f"{tmp_path / 'missing.eval'}: no such file"),
        ([passing_log.location, "--out", str(tmp_path / "full")], f"--out {tmp_path / 'full'}: not an empty folder; name a new one"),
    ]
    for args, message in cases:
        outcome = runner.invoke(cli(), ["import", "inspect", *args])
        assert outcome.exit_code == 2, outcome.output
        assert outcome.stderr.strip() == f"error: {message}"
    with pytest.raises(LogImportError, match="not a readable Inspect log"):
        (tmp_path / "junk.eval").write_text("junk")
        import_log(tmp_path / "junk.eval", tmp_path / "b")


# -- the registry name, through Inspect's own command line ---------------------------------------


def test_the_readme_example_inspect_eval_then_import_then_report(tmp_path):
    """The README's "Use it from: Inspect AI" example: `inspect eval ebench/ebench` against the fake
    server, `ebench import inspect`, `ebench report`. Needs the entry point of pyproject
    ([project.entry-points.inspect_ai] ebench = "ebench.integrations.inspect") installed."""
    assert "ebench" in {ep.name for ep in entry_points(group="inspect_ai")}, "install ebench with its inspect_ai entry point"
    from ebench.api import load_suite

    ids = ["music-0005", "music-0007"]
    with FakeOpenAI(ReferencePlayer(load_suite().tasks, parallel=True)) as server:
        command = [sys.executable, "-m", "inspect_ai", "eval", "ebench/ebench", "--model", "openai/fake"]
        command += ["--model-base-url", server.base_url, "-M", "responses_api=false"]
        command += ["-T", "domain=music", "-T", f"tasks={','.join(ids)}", "--log-dir", "logs", "--display", "none"]
        # Run outside the checkout: there its ebench.egg-info (an editable install's) hides the install
        # from Inspect, which then registers the task without its package's name.
        done = subprocess.run(command, env=dict(os.environ), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    [location] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(location))
    assert log.eval.task == "ebench/ebench"
    assert {task_id: score.value for task_id, score in scores(log).items()} == dict.fromkeys(ids, "C")
    out = tmp_path / "runs" / "inspect-fake"
    imported = runner.invoke(cli(), ["import", "inspect", str(location), "--out", str(out)])
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.strip() == f"imported 2 trial(s) (2/2 passed) into {out}"
    report = runner.invoke(cli(), ["report", "--json", str(out)])
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["runs"][0]["metrics"]["overall"]["passes"] == 2
