"""`ebench export trajectories`: real runs of the model solver (the litellm client against the local
fake OpenAI server playing the reference solutions), exported and checked against a JSON Schema of
OpenAI's chat fine-tuning format, rebuilt into the calls the sessions recorded, and in ShareGPT."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema  # installed with mcp
import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.sessions.events import ToolCallEvent
from ebench.sessions.record import read_session
from ebench.sessions.runs import load_run
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Reply, completion, turn_of

TASK = "moba-0024"  # create a room, then three invitations that need its id (parallel calls)
OTHER = "moba-0023"
KEY = "sk-test-do-not-record-0123456789"

runner = CliRunner()

_FUNCTION_TOOL = {
    "type": "object",
    "required": ["type", "function"],
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "parameters"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                "description": {"type": "string"},
                "parameters": {"type": "object"},
            },
        },
    },
}
_TOOL_CALL = {
    "type": "object",
    "required": ["id", "type", "function"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "arguments"],
            "additionalProperties": False,
            "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}},
        },
    },
}


def _message(role: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["role", *required],
        "additionalProperties": False,
        "properties": {"role": {"const": role}, "weight": {"enum": [0, 1]}, **properties},
    }


# OpenAI's chat fine-tuning format (https://platform.openai.com/docs/guides/fine-tuning), with tools.
OPENAI_CHAT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["messages"],
    "properties": {
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "oneOf": [
                    _message("system", {"content": {"type": "string"}}, ["content"]),
                    _message("user", {"content": {"type": "string"}}, ["content"]),
                    {
                        **_message(
                            "assistant",
                            {"content": {"type": ["string", "null"]}, "tool_calls": {"type": "array", "minItems": 1, "items": _TOOL_CALL}},
                            [],
                        ),
                        "anyOf": [{"required": ["tool_calls"]}, {"required": ["content"], "properties": {"content": {"type": "string"}}}],
                    },
                    _message("tool", {"tool_call_id": {"type": "string"}, "content": {"type": "string"}}, ["tool_call_id", "content"]),
                ]
            },
        },
        "tools": {"type": "array", "items": _FUNCTION_TOOL},
        "parallel_tool_calls": {"type": "boolean"},
        "metadata": {"type": "object"},
    },
    "additionalProperties": False,
}
VALIDATOR = jsonschema.Draft202012Validator(OPENAI_CHAT_SCHEMA)


def check_openai_chat(line: dict[str, Any]) -> None:
    """The schema, and what it cannot say: every tool message answers an earlier call, exactly once,
    and every call's arguments are JSON."""
    VALIDATOR.validate(line)
    open_calls: set[str] = set()
    for message in line["messages"]:
        if message["role"] == "assistant":
            assert not open_calls, "a new turn before every call was answered"
            for call in message.get("tool_calls", []):
                json.loads(call["function"]["arguments"])
                open_calls.add(call["id"])
        elif message["role"] == "tool":
            assert message["tool_call_id"] in open_calls
            open_calls.remove(message["tool_call_id"])
            json.loads(message["content"])
    assert [m["role"] for m in line["messages"][:2]] == ["system", "user"]
    assert any(m["role"] == "assistant" for m in line["messages"])


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_suite(ids=[TASK, OTHER]).tasks}


def llm_run(out: Path, responder: Any, *extra: str, trials: int = 2) -> None:
    with pytest.MonkeyPatch.context() as patch, FakeOpenAI(responder) as server:
        patch.setenv("OPENAI_API_KEY", KEY)
        args = ["run", "--batch", "--solver", "llm", "--model", "openai/fake", "--api-base", server.base_url]
        args += ["--task", TASK, "--task", OTHER, "--trials", str(trials), "--concurrency", "2", "--out", str(out), "--json", *extra]
        outcome = runner.invoke(app, args)
    assert outcome.exit_code == 0, outcome.output


@pytest.fixture(scope="module")
def runs(tasks, tmp_path_factory, moba_world) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("export")
    llm_run(root / "passed", ReferencePlayer(tasks.values(), parallel=True))
    llm_run(root / "short", ReferencePlayer(tasks.values(), skip_last=1), trials=1)  # stops one call short: fails
    oracle = runner.invoke(app, ["run", "--batch", "--solver", "oracle", "--task", TASK, "--out", str(root / "oracle")])
    assert oracle.exit_code == 0, oracle.output
    return {"passed": root / "passed", "short": root / "short", "oracle": root / "oracle", "root": root}


def export(*args: str, metadata: bool = True) -> tuple[list[dict[str, Any]], str]:
    """The exported lines (with `metadata`, which these tests read, unless told otherwise) and stderr."""
    outcome = runner.invoke(app, ["export", "trajectories", *args, *(["--metadata"] if metadata else [])])
    assert outcome.exit_code == 0, outcome.output
    return [json.loads(line) for line in outcome.stdout.splitlines()], outcome.stderr


def top_level_calls(run: Path, metadata: dict[str, Any]) -> list[tuple[str, Any]]:
    session = read_session(run / metadata["session"])
    return [(e.tool, json.loads(e.args) if isinstance(e.args, str) else e.args) for e in session.tool_calls(leaves=False)]


def test_every_trial_exports_as_valid_openai_chat_and_rebuilds_the_recorded_calls(runs):
    lines, err = export(str(runs["passed"]))
    assert len(lines) == 4 and "wrote 4 trajectories" in err
    assert sorted((line["metadata"]["task"], line["metadata"]["trial"]) for line in lines) == [(OTHER, 1), (OTHER, 2), (TASK, 1), (TASK, 2)]
    parallel = 0
    for line in lines:
        check_openai_chat(line)
        meta = line["metadata"]
        assert meta["passed"] is True and meta["termination"] == "agent_stopped" and meta["model"] == "openai/fake"
        assert meta["domain"] == "moba" and meta["capabilities"] and meta["run"] == str(runs["passed"]) and meta["grade"]["missing"] == 0
        assert {t["function"]["name"] for t in line["tools"]} >= {"create_room", "get_my_profile"}
        # round trip: the assistant's calls, in order, are the session's top-level tool calls
        calls = [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in line["messages"]
            if m["role"] == "assistant"
            for c in m.get("tool_calls", [])
        ]
        assert calls == top_level_calls(runs["passed"], meta) and calls
        # and each result is what the session recorded for that call
        session = read_session(runs["passed"] / meta["session"])
        recorded = {e.id: e.result for e in session.tool_calls(leaves=False)}
        assert all(json.loads(m["content"]) == recorded[m["tool_call_id"]] for m in line["messages"] if m["role"] == "tool")
        parallel += any(len(m.get("tool_calls", [])) > 1 for m in line["messages"])
        assert KEY not in json.dumps(line)
    assert parallel  # the parallel turns of moba-0024 were exported as one message with several calls


def test_passed_only_leaves_out_the_failed_trials_and_counts_them(runs):
    everything, _ = export(str(runs["passed"]), str(runs["short"]))
    assert len(everything) == 6 and [line["metadata"]["passed"] for line in everything].count(False) == 2
    passed, err = export(str(runs["passed"]), str(runs["short"]), "--passed-only", "--json")
    assert len(passed) == 4 and all(line["metadata"]["passed"] for line in passed)
    assert json.loads(err) == {"written": 4, "skipped": {"not passed (--passed-only)": 2}}


def test_by_default_a_line_holds_only_what_the_fine_tuning_formats_define(runs):
    lines, _ = export(str(runs["passed"]), metadata=False)
    assert len(lines) == 4
    for line in lines:
        assert set(line) == {"messages", "tools", "parallel_tool_calls"}  # OpenAI's keys: no metadata
        check_openai_chat(line)
        assert line["parallel_tool_calls"] == any(len(m.get("tool_calls", [])) > 1 for m in line["messages"])
    assert any(line["parallel_tool_calls"] for line in lines)
    shared, _ = export(str(runs["passed"]), "--format", "sharegpt", metadata=False)
    assert all(set(line) == {"conversations", "tools"} for line in shared)


def test_an_interface_perturbed_run_exports_the_tools_the_model_was_offered(tasks, tmp_path):
    from ebench.sessions.perturb import parse_perturb
    from ebench.testing.fake_openai import PerturbedPlayer

    (task,) = [tasks[TASK]]
    perturbation = parse_perturb(["interface"], seed=3)
    with pytest.MonkeyPatch.context() as patch, FakeOpenAI(PerturbedPlayer([task], perturbation, trials=2)) as server:
        patch.setenv("OPENAI_API_KEY", KEY)
        args = ["run", "--batch", "--model", "openai/fake", "--api-base", server.base_url, "--task", TASK, "--trials", "2"]
        outcome = runner.invoke(app, [*args, "--perturb", "interface", "--perturb-seed", "3", "--out", str(tmp_path / "run"), "--json"])
        assert outcome.exit_code == 0, outcome.output
        offered = {}  # every distinct list of tools the model was sent
        for body in server.requests:
            offered.setdefault(json.dumps(body["tools"], sort_keys=True), body["tools"])
    lines, _ = export(str(tmp_path / "run"))
    assert len(lines) == 2
    canonical = {"create_room", "get_my_profile"}
    for line in lines:
        names = {t["function"]["name"] for t in line["tools"]}
        assert json.dumps(line["tools"], sort_keys=True) in offered  # exactly a list the model was sent
        assert not canonical <= names  # renamed: not the domain's own schemas
        called = {c["function"]["name"] for m in line["messages"] for c in m.get("tool_calls", [])}
        assert called <= names  # every call the model made names a tool the line offers
    assert lines[0]["tools"] != lines[1]["tools"]  # each trial its own draw


def test_sharegpt_follows_the_llama_factory_tool_calling_convention(runs):
    lines, _ = export(str(runs["passed"]), "--format", "sharegpt")
    assert len(lines) == 4
    for line in lines:
        assert set(line) == {"conversations", "tools", "metadata"}
        turns = line["conversations"]
        assert [t["from"] for t in turns[:2]] == ["system", "human"]
        for i, turn in enumerate(turns[1:]):  # human/observation, then gpt/function_call, alternately
            assert turn["from"] in (("human", "observation") if i % 2 == 0 else ("gpt", "function_call"))
            assert isinstance(turn["value"], str)
        assert turns[-1]["from"] in ("gpt", "function_call")
        calls: list[tuple[str, Any]] = []
        for turn in turns:
            if turn["from"] == "function_call":
                value = json.loads(turn["value"])
                calls += [(c["name"], c["arguments"]) for c in (value if isinstance(value, list) else [value])]
        assert calls == top_level_calls(runs["passed"], line["metadata"])
        tools = json.loads(line["tools"])
        assert all(set(tool) >= {"name", "description", "parameters"} for tool in tools)


def test_the_oracle_is_skipped_with_a_reason_and_json_gives_the_summary(runs, tmp_path):
    out = tmp_path / "all.jsonl"
    args = ["export", "trajectories", str(runs["oracle"]), str(runs["passed"]), "--out", str(out), "--json"]
    outcome = runner.invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout) == {"written": 4, "skipped": {"no model conversation": 1}}
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4
    said = runner.invoke(app, ["export", "trajectories", str(runs["oracle"]), "--out", str(tmp_path / "none.jsonl")])
    assert said.exit_code == 0 and "wrote 0 trajectories; skipped 1 no model conversation" in said.stdout
    assert (tmp_path / "none.jsonl").read_text() == ""


def test_calls_recorded_under_other_ids_are_paired_in_order(runs, tmp_path):
    # a session whose tool_call events carry the trial's ids (call-N), not the model's
    run = tmp_path / "renumbered"
    source = runs["passed"]
    result = next(r for r in load_run(source).results if r.task == TASK)
    for path in [Path("manifest.json"), Path("results.jsonl"), Path(result.session)]:
        (run / path).parent.mkdir(parents=True, exist_ok=True)
        text = (source / path).read_text(encoding="utf-8")
        if path == Path(result.session):
            events = [json.loads(line) for line in text.splitlines()]
            numbered = [e for e in events if e["event"] == "tool_call"]
            recorded = {e.id: e.args for e in read_session(source / path).tool_calls(leaves=False)}
            for n, event in enumerate(numbered, 1):
                if event.pop("args_in", None):  # stored in the message under the id changed here: written whole, as such a solver's are
                    event["args"] = recorded[event["id"]]
                event["id"] = f"call-{n}"
            text = "".join(json.dumps(e) + "\n" for e in events)
        (run / path).write_text(text, encoding="utf-8")
    lines, err = export(str(run), "--json")
    mine = [line for line in lines if line["metadata"]["session"] == result.session]
    assert len(mine) == 1 and json.loads(err)["skipped"] == {"unreadable session": 3}  # the other sessions were not copied
    check_openai_chat(mine[0])
    assert [
        (c["function"]["name"], json.loads(c["function"]["arguments"])) for m in mine[0]["messages"] for c in m.get("tool_calls", [])
    ] == (top_level_calls(run, mine[0]["metadata"]))


def test_damaged_and_missing_sessions_are_skipped_with_their_reasons(runs, tmp_path):
    run = tmp_path / "damaged"
    shutil.copytree(runs["passed"], run)
    first, second = sorted(run.glob("sessions/*/*.jsonl"))[:2]
    lines = first.read_text(encoding="utf-8").splitlines(keepends=True)
    first.write_text("".join([*lines[:3], "{not json\n", *lines[3:]]), encoding="utf-8")  # a line lost in the middle
    second.unlink()
    exported, err = export(str(run), "--json")
    assert len(exported) == 2
    assert json.loads(err) == {"written": 2, "skipped": {"damaged session": 1, "unreadable session": 1}}


def test_code_mode_exports_blocks_with_their_calls_inside_the_result(tasks, tmp_path, moba_world):
    code = "me = get_my_profile()\nrooms = list_rooms()\nrooms['total']"

    def block_then_stop(body: dict[str, Any]) -> Reply:
        return completion(None, [("exec_code", {"code": code})]) if turn_of(body) == 1 else completion("Looked.")

    llm_run(tmp_path / "code", block_then_stop, "--code", trials=1)
    lines, _ = export(str(tmp_path / "code"))
    assert len(lines) == 2
    for line in lines:
        check_openai_chat(line)
        assert "exec_code" in [t["function"]["name"] for t in line["tools"]]
        [tool] = [m for m in line["messages"] if m["role"] == "tool"]  # the block only: its two calls are inside
        assert json.loads(tool["content"])["tool_calls"] == 2
        assert line["messages"][-1] == {"role": "assistant", "content": "Looked."}
        session = read_session(tmp_path / "code" / line["metadata"]["session"])
        assert [e.tool for e in session.events if isinstance(e, ToolCallEvent)] == ["get_my_profile", "list_rooms", "exec_code"]


def test_a_missing_run_is_one_line_and_exit_2(tmp_path):
    outcome = runner.invoke(app, ["export", "trajectories", str(tmp_path / "nope")])
    assert outcome.exit_code == 2
    assert outcome.stderr.strip() == f"error: {tmp_path / 'nope'}: no such file or folder"
    assert "Traceback" not in outcome.output
