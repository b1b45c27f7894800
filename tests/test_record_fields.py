"""The nested objects of the session, results and manifest records are typed models (the solver, the
perturbation, a scenario's turns, the end event's results line, the manifest's configuration, task
set, suite and regrade note), and they still write the bytes they were read from: the keys given,
in the order given, a third-party solver's own keys kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ebench.sessions.events import ClientInfo, EndEvent, SolverInfo, StartEvent, event_from
from ebench.sessions.objects import JsonObject
from ebench.sessions.record import read_session
from ebench.sessions.results import PerturbationRecord, ScenarioTurnResult, TrialSummary
from ebench.sessions.runs import (
    MANIFEST,
    RegradeNote,
    RunConfig,
    RunError,
    RunLimits,
    RunManifest,
    SuiteRecord,
    TaskSelection,
    TaskSet,
    load_runs,
    read_manifest,
)

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
RUNS = sorted(p for p in FORMATS.glob("run-*") if p.is_dir())
SESSIONS = sorted(p for p in FORMATS.rglob("*.jsonl") if p.name != "results.jsonl")


class Voice(JsonObject):
    name: str = ""
    loud: bool | None = None


def test_a_json_object_dumps_the_keys_it_was_given_in_their_order():
    given = {"voice": "soft", "loud": True, "name": "echo", "extra": {"a": [1]}}
    read = Voice.model_validate(given)
    assert read.loud is True and read.name == "echo" and read.model_extra == {"voice": "soft", "extra": {"a": [1]}}
    assert read.to_dict() == given and list(read.to_dict()) == list(given)
    made = Voice(loud=False, name="x")  # made by a writer: its keyword order, no default written
    assert list(made.to_dict()) == ["loud", "name"] and Voice(name="x").to_dict() == {"name": "x"}
    assert read.get("voice") == "soft" and read.get("missing", 3) == 3  # reads written against the dict still work


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: str(p.relative_to(FORMATS)))
def test_a_recorded_sessions_solver_and_summary_are_typed_and_write_back_as_read(path):
    session = read_session(path)
    first, last = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:: len(session.events) - 1])
    start, end = session.start, session.end
    assert isinstance(start.solver, SolverInfo) and start.solver.name == first["solver"]["name"]
    assert start.solver.to_dict() == first["solver"] and list(start.solver.to_dict()) == list(first["solver"])
    assert start.solver_label == (first["solver"].get("label") or first["solver"]["name"])
    assert isinstance(end, EndEvent) and isinstance(end.summary, TrialSummary)
    assert end.summary.task == session.task_id and end.summary.to_dict() == last["summary"]
    assert json.dumps(end.to_dict()) == json.dumps(last) and json.dumps(start.to_dict()) == json.dumps(first)


def test_a_third_party_solvers_own_keys_are_kept_beside_the_known_ones():
    line = {
        "event": "start",
        "t": 0.0,
        "format": "ebench-session/2",
        "solver": {"voice": "loud", "name": "echo", "client": {"version": "1.2", "name": "cli", "os": "linux"}, "model": "m"},
    }
    event, valid = event_from(line)
    assert valid and isinstance(event, StartEvent)
    assert event.solver.name == "echo" and event.solver.model == "m" and event.solver.model_extra == {"voice": "loud"}
    assert isinstance(event.solver.client, ClientInfo) and event.solver.client.name == "cli"
    assert json.dumps(event.record(), default=lambda v: v.to_dict()) == json.dumps(line)  # as the writer writes it


def test_a_damaged_start_keeps_its_solver_a_model_and_the_other_fields_checked():
    line = {"event": "start", "t": 0.0, "format": "ebench-session/2", "trial": "two", "solver": {"name": "llm", "model": 7}, "mode": "code"}
    event, valid = event_from(line)
    assert not valid and isinstance(event, StartEvent)
    assert isinstance(event.solver, SolverInfo) and event.solver.name == "llm" and event.solver.model == 7  # kept as recorded
    assert event.trial == "two" and event.mode == "code" and event.to_dict() == line
    good_solver = dict(line, solver={"name": "llm", "label": "mine"})
    event, valid = event_from(good_solver)
    assert not valid and isinstance(event, StartEvent) and event.solver_label == "mine"  # validated, although the trial is not


def test_a_perturbed_start_and_its_results_line_type_the_perturbation():
    header = {"subtypes": ["intent:typos"], "seed": 3, "request": "fnid teh song", "notes": ["no paraphrase"]}
    event, valid = event_from({"event": "start", "t": 0.0, "perturbation": header})
    assert valid and isinstance(event, StartEvent) and isinstance(event.perturbation, PerturbationRecord)
    assert event.perturbation.seed == 3 and event.perturbation.notes == ["no paraphrase"] and event.to_dict()["perturbation"] == header
    line = {"task": "t", "trial": 1, "passed": True, "perturbation": {"subtypes": ["intent:typos"], "seed": 3}}
    result = TrialSummary.read(line)
    assert isinstance(result.perturbation, PerturbationRecord) and result.perturbation.subtypes == ["intent:typos"]
    assert result.to_dict()["perturbation"] == line["perturbation"]


def test_a_scenarios_turns_are_typed_in_its_results_line():
    turns = [{"kind": "clarify", "passed": True}, {"kind": "switch", "passed": False}]
    result = TrialSummary.read({"task": "s", "trial": 1, "passed": False, "scenario_turns": turns})
    assert result.scenario_turns is not None and all(isinstance(t, ScenarioTurnResult) for t in result.scenario_turns)
    assert [(t.kind, t.passed) for t in result.scenario_turns] == [("clarify", True), ("switch", False)]
    assert result.to_dict()["scenario_turns"] == turns


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_a_manifests_nested_objects_are_typed_and_written_byte_for_byte(run):
    text = (run / MANIFEST).read_text(encoding="utf-8")
    manifest = read_manifest(run / MANIFEST)
    config = manifest.config
    assert isinstance(config, RunConfig) and isinstance(config.solver, SolverInfo) and isinstance(config.limits, RunLimits)
    assert isinstance(config.tasks, TaskSelection) and isinstance(manifest.tasks, TaskSet) and isinstance(manifest.suite, SuiteRecord)
    assert config.solver_name == config.solver.name and manifest.tasks.count == len(manifest.tasks.ids)
    assert config.limits.max_turns == json.loads(text)["config"]["limits"]["max_turns"]
    assert json.dumps(manifest.to_dict(), indent=2, ensure_ascii=False) + "\n" == text


def test_a_manifest_with_a_nested_value_of_the_wrong_type_names_where(tmp_path):
    raw = json.loads((RUNS[0] / MANIFEST).read_text(encoding="utf-8"))
    raw["config"]["limits"]["max_turns"] = "thirty"
    (tmp_path / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(RunError, match=r"the manifest's 'config\.limits\.max_turns': input should be a valid integer"):
        read_manifest(tmp_path / MANIFEST)
    raw["config"] = ["not", "an", "object"]
    (tmp_path / MANIFEST).write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(RunError, match=r"the manifest's 'config' must be a JSON object"):
        read_manifest(tmp_path / MANIFEST)


def test_a_manifest_whose_solver_is_a_bare_name_still_reads():
    manifest = RunManifest.model_validate({"format": "ebench-run/1", "config": {"solver": "oracle", "trials": 2}})
    assert manifest.config is not None and manifest.config.solver_name == "oracle" and manifest.config.solver_model is None
    assert manifest.setting("trials") == 2 and manifest.to_dict() == {"format": "ebench-run/1", "config": {"solver": "oracle", "trials": 2}}


def test_a_regrade_note_is_written_after_the_keys_that_were_read(tmp_path):
    manifest = read_manifest(RUNS[0] / MANIFEST)
    manifest.regraded = RegradeNote(at="2026-12-05T00:00:00Z", ebench_version="9")
    dumped = manifest.to_dict()
    assert list(dumped)[-1] == "regraded" and dumped["regraded"] == {"at": "2026-12-05T00:00:00Z", "ebench_version": "9"}


def test_a_folder_of_sessions_groups_into_pseudo_runs_from_the_typed_summaries(tmp_path):
    for path in SESSIONS:
        target = tmp_path / path.relative_to(FORMATS)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    runs = load_runs(tmp_path)
    found = sorted((run.label, result.task, result.session) for run in runs for result in run.results)
    expected = sorted(
        (read_session(p).end.summary.solver, read_session(p).task_id, str(tmp_path / p.relative_to(FORMATS)))  # type: ignore[union-attr]
        for p in SESSIONS
    )
    assert found == expected
    for run in runs:
        assert run.manifest.config is not None and run.manifest.config.solver_name == run.label
        assert run.manifest.tasks is not None and run.manifest.tasks.ids == sorted({r.task for r in run.results})


def test_the_typed_schemas_describe_the_recorded_files():
    """The generated schemas (docs/schemas) take every line, results line and manifest of the fixtures."""
    import jsonschema

    from ebench.sessions.schemas import RECORDS

    session, results, manifest = (RECORDS[name]() for name in ("session-event", "results-line", "run-manifest"))
    for path in SESSIONS:
        for line in path.read_text(encoding="utf-8").splitlines():
            jsonschema.validate(json.loads(line), session)
    for run in RUNS:
        jsonschema.validate(json.loads((run / MANIFEST).read_text(encoding="utf-8")), manifest)
        for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
            jsonschema.validate(json.loads(line), results)
