"""Perturbed runs (ebench/sessions/perturb.py): each subtype, determinism, the oracle through the
layer on the shipped suite, noop and a lazy solver failing, the recording, batches, resume and the
report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ebench.cli import app
from ebench.engine.domain_registry import get_domain
from ebench.engine.tools import PAGE_SIZE
from ebench.sessions.events import StartEvent, ToolCallEvent
from ebench.sessions.perturb import (
    DEPRECATED,
    EXTRA_SENTENCES,
    FAMILIES,
    RATE_LIMITED,
    SUBTYPES,
    UNAVAILABLE,
    Layer,
    PerturbError,
    parse_perturb,
)
from ebench.sessions.record import read_session
from ebench.sessions.solvers import NoopSolver, OracleSolver
from ebench.sessions.trial import Trial, TrialLimits, open_trial
from ebench.tasks.skeletons import fill_paraphrases
from ebench.tasks.suite import SUITE_DIR, load_suite
from ebench.tasks.template_catalog import task_template

runner = CliRunner()
MUSIC = "music-0005"  # tests/fixtures/tasks


@pytest.fixture(scope="module")
def fixtures(music_world, meeting_world, moba_world):
    return {t.id: t for t in load_suite().tasks}


def trial_of(task, *subtypes: str, seed: int = 0, number: int = 1, **options) -> Trial:
    return Trial(task, perturb=parse_perturb(subtypes, seed), solver={"name": "test"}, trial_number=number, **options)


def run(coroutine):
    return asyncio.run(coroutine)


# -- the flags ---------------------------------------------------------------------------------


def test_a_family_is_all_its_subtypes_and_names_are_checked():
    assert parse_perturb(["interface"]).subtypes == tuple(f"interface:{s}" for s in FAMILIES["interface"])
    both = parse_perturb(["output:noise", "intent", "output:noise,runtime:latency"], seed=7)
    assert both.subtypes == ("intent:paraphrase", "intent:typos", "intent:extra", "output:noise", "runtime:latency")
    assert both.seed == 7 and both.label == "intent+output:noise+runtime:latency"
    assert parse_perturb([]).label == "clean" and not parse_perturb([])
    with pytest.raises(PerturbError, match="unknown perturbation family 'outptu'"):
        parse_perturb(["outptu"])
    with pytest.raises(PerturbError, match="unknown output perturbation 'nosie'; known: noise, reorder, pages, transient"):
        parse_perturb(["output:nosie"])
    with pytest.raises(PerturbError, match="code mode takes --perturb intent only"):
        parse_perturb(["interface:rename"]).check_mode(code=True)
    parse_perturb(["intent"]).check_mode(code=True)


def test_the_cli_refuses_an_unknown_perturbation_in_one_line(tmp_path, fixtures):
    result = runner.invoke(
        app, ["run", "--batch", "--solver", "oracle", "--task", MUSIC, "--perturb", "interface:renmae", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert "error: --perturb: unknown interface perturbation 'renmae'" in result.output and "Traceback" not in result.output
    result = runner.invoke(
        app, ["run", "--batch", "--solver", "oracle", "--task", MUSIC, "--code", "--perturb", "output", "--out", str(tmp_path / "c")]
    )
    assert result.exit_code == 2 and "code mode takes --perturb intent only" in result.output


def test_the_same_seed_gives_the_same_perturbation_byte_for_byte(fixtures):
    task = fixtures[MUSIC]
    registry = get_domain(task.domain).tools
    every = parse_perturb(list(FAMILIES), seed=3)
    one, two = Layer(every, task, registry, 2), Layer(every, task, registry, 2)
    assert json.dumps(one.schemas) == json.dumps(two.schemas) and one.request == two.request
    assert (one.page_size, one.noise_fields, one.ratelimit_at) == (two.page_size, two.noise_fields, two.ratelimit_at)
    others = [Layer(parse_perturb(list(FAMILIES), seed=4), task, registry, 2), Layer(every, task, registry, 3)]
    assert all(json.dumps(o.schemas) != json.dumps(one.schemas) for o in others)


# -- interface ---------------------------------------------------------------------------------


def test_rename_offers_synonyms_and_maps_them_back(fixtures):
    task = fixtures[MUSIC]
    trial = trial_of(task, "interface:rename")
    registry = get_domain(task.domain).tools
    offered = {s["function"]["name"]: s for s in trial.tool_schemas()}
    assert len(offered) == len(registry) and sum(name in registry for name in offered) < len(registry) // 3
    renamed = trial.layer.tool_names["search_songs"]
    assert renamed != "search_songs" and renamed in offered
    params = offered[renamed]["function"]["parameters"]["properties"]
    query_name = trial.layer.param_names["search_songs"]["query"]
    assert query_name != "query" and query_name in params and "query" not in params
    # the canonical name is not offered: a wrong tool
    refused = trial.call("search_songs", {"query": "love"})
    hint = refused.error_message.partition("Did you mean")[2]
    assert refused.error_code == "unknown_tool" and not any(name in hint.split(", ") for name in registry.names)
    # a canonical parameter name is a schema error, worded with the offered names
    wrong_param = trial.call(renamed, {"query": "love"})
    assert wrong_param.error_code == "invalid_arguments" and query_name in wrong_param.error_message
    ok = trial.call(renamed, json.dumps({query_name: "love"}))  # a model sends JSON text
    assert ok.ok and ok.value == registry.call(trial.env, "search_songs", {"query": "love"}).value
    event = trial.history[-1]
    assert event.tool == "search_songs" and event.args == {"query": "love"}
    assert event.sent == {"tool": renamed, "args": json.dumps({query_name: "love"})}
    summary = trial.finish("agent_stopped")
    assert summary.failure_stages == {"wrong_tool": 1, "schema_error": 1}


def test_shuffle_distractors_and_terse(fixtures):
    task = fixtures[MUSIC]
    canonical = [s["function"]["name"] for s in get_domain(task.domain).tools.openai_schemas()]
    shuffled = [s["function"]["name"] for s in trial_of(task, "interface:shuffle").tool_schemas()]
    assert sorted(shuffled) == sorted(canonical) and shuffled != canonical
    trial = trial_of(task, "interface:distractors")
    names = [s["function"]["name"] for s in trial.tool_schemas()]
    extra = [n for n in names if n not in canonical]
    assert len(extra) >= 2 and all(any(c in n for c in canonical) for n in extra)
    before = trial.diff().to_list()
    answer = trial.call(extra[0], {})
    assert answer.error_code == DEPRECATED and trial.diff().to_list() == before
    assert trial.history[-1].injected == "distractor"
    assert trial.finish("agent_stopped").failure_stages == {"wrong_tool": 1}
    terse = {s["function"]["name"]: s["function"] for s in trial_of(task, "interface:terse").tool_schemas()}
    full = {s["function"]["name"]: s["function"] for s in get_domain(task.domain).tools.openai_schemas()}
    for name, function in terse.items():
        assert "\n" not in function["description"] and len(function["description"]) <= len(full[name]["description"])

    def described(functions):  # every description, the tools' and their parameters'
        return sum(
            len(f["description"]) + sum(len(p.get("description", "")) for p in f["parameters"]["properties"].values()) for f in functions
        )

    assert described(terse.values()) < 0.75 * described(full.values())


# -- intent ------------------------------------------------------------------------------------


def test_paraphrase_draws_from_the_stored_list_and_leaves_a_task_without_one(fixtures):
    task = fixtures[MUSIC]
    assert not task.paraphrases
    plain = trial_of(task, "intent:paraphrase")
    assert plain.request == task.query and plain.layer.header()["notes"] == ["no paraphrase"]
    worded = task.model_copy(update={"paraphrases": ["First wording.", "Second wording."]})
    requests = {trial_of(worded, "intent:paraphrase", number=n).request for n in range(1, 9)}
    assert requests == {"First wording.", "Second wording."}


def test_the_shipped_paraphrases_are_the_templates_other_skeletons(ebench_home):
    tasks = [t for t in load_suite(SUITE_DIR, domain="meeting").tasks][:6]
    found = fill_paraphrases(tasks, task_template)
    for task in tasks:
        assert found[task.id] == task.paraphrases  # the files hold what the command computes
        assert len(task.paraphrases) == 2 and task.query not in task.paraphrases
        for stated in task.generator["stated"].values():  # the same values, in other words
            if isinstance(stated, str) and len(stated) > 3 and stated in task.query:
                assert all(stated in text for text in task.paraphrases), (task.id, stated)


def test_typos_spare_the_stated_values_and_extra_adds_irrelevant_sentences(fixtures):
    task = fixtures[MUSIC]
    typed = trial_of(task, "intent:typos").request
    assert typed != task.query and abs(len(typed) - len(task.query)) <= 5
    for value in task.generator.get("stated", {}).values():
        if isinstance(value, str):
            assert value in typed
    extra = trial_of(task, "intent:extra").request
    assert task.query in extra and any(sentence in extra for sentence in EXTRA_SENTENCES)


# -- output ------------------------------------------------------------------------------------


def test_noise_adds_fields_and_acting_on_one_is_a_mishandled_output(fixtures):
    task = fixtures[MUSIC]
    trial = trial_of(task, "output:noise")
    clean = get_domain(task.domain).tools.call(trial.env, "search_songs", {"query": ""}).value
    noisy = trial.call("search_songs", {"query": ""}).payload()
    names = trial.layer.noise_fields
    assert len(names) == 2 and all(name in noisy["items"][0] for name in names)
    assert {k: v for k, v in noisy["items"][0].items() if k not in names} == clean["items"][0]
    noise_id = next(noisy["items"][0][n] for n in names if n.endswith("_id")) if any(n.endswith("_id") for n in names) else None
    fake = noise_id if noise_id is not None else noisy["items"][0][names[0]]
    trial.call("get_song", {"song_id": fake})
    assert trial.history[-1].altered is None and trial.history[-2].altered == ["noise"]
    assert trial.finish("agent_stopped").failure_stages == {"mishandled_output": 1}


def test_reorder_keeps_the_values_in_another_key_order(fixtures):
    task = fixtures[MUSIC]
    trial = trial_of(task, "output:reorder")
    clean = get_domain(task.domain).tools.call(trial.env, "search_songs", {"query": ""}).value
    shown = trial.call("search_songs", {"query": ""}).payload()
    assert shown == clean  # dicts compare without order
    assert json.dumps(shown) != json.dumps(clean) and trial.history[-1].altered == ["reorder"]


def test_pages_are_smaller_and_together_make_the_canonical_page(fixtures):
    task = fixtures[MUSIC]
    trial = trial_of(task, "output:pages")
    size = trial.layer.page_size
    assert size in (5, 10)
    canonical = get_domain(task.domain).tools.call(trial.env, "search_songs", {"query": "", "page": 2}).value
    first = (PAGE_SIZE // size) + 1  # the first smaller page inside canonical page 2
    pages = [trial.call("search_songs", {"query": "", "page": p}).payload() for p in range(first, first + PAGE_SIZE // size)]
    assert all(p["page_size"] == size and len(p["items"]) == size for p in pages)
    assert [item for p in pages for item in p["items"]] == canonical["items"]
    assert pages[0]["total_pages"] == -(-canonical["total"] // size) and pages[0]["page"] == first
    assert trial.history[-1].args["page"] == 2 and trial.history[-1].sent["args"]["page"] == first + PAGE_SIZE // size - 1


def test_a_transient_error_runs_nothing_and_the_retry_runs(fixtures):
    task = fixtures[MUSIC]
    trial = trial_of(task, "output:transient")
    first = trial.call("create_playlist", {"name": "Perturbed"})
    assert first.error_code == UNAVAILABLE and trial.diff().to_list() == [] and trial.history[-1].injected == "transient"
    again = trial.call("create_playlist", {"name": "Perturbed"})
    assert again.ok and trial.diff().to_list() != [] and trial.history[-1].injected is None
    trial.call("search_songs", {"query": "a"})  # never retried: the solver moved on
    assert trial.finish("agent_stopped").failure_stages == {"mishandled_output": 1}


# -- runtime -----------------------------------------------------------------------------------


def test_latency_is_recorded_and_awaited_and_ratelimit_asks_to_wait(fixtures):
    task = fixtures[MUSIC]
    trial = trial_of(task, "runtime:latency", "runtime:ratelimit")
    at = trial.layer.ratelimit_at["search_songs"]
    answers = [trial.call("search_songs", {"query": "a"}) for _ in range(at + 1)]
    limited = answers[at - 1]
    assert limited.error_code == RATE_LIMITED and 0 < limited.payload()["error"]["retry_after"] < 0.1
    assert all(a.ok for i, a in enumerate(answers) if i != at - 1)
    latencies = [event.latency for event in trial.history]
    assert all(isinstance(x, float) and 0.002 <= x <= 0.02 for x in latencies)
    assert trial._owed_latency == pytest.approx(sum(latencies))
    run(trial.wait_latency())
    assert trial._owed_latency == 0
    trial.finish("agent_stopped")


# -- solvers -----------------------------------------------------------------------------------


async def solve(solver, task, perturbation, number: int = 1):
    trial = Trial(task, perturb=perturbation, solver=solver.config(), trial_number=number)
    outcome = await solver.solve(trial, TrialLimits().for_task(task))
    return trial.finish(outcome.termination, outcome.error)


def test_the_oracle_passes_the_shipped_suite_under_every_subtype(ebench_home):
    """Every shipped task, every subtype but latency at once (one trial each); each subtype alone
    on a sample; latency alone on a few tasks (it sleeps)."""
    tasks = load_suite(SUITE_DIR).tasks
    everything = parse_perturb([s for s in SUBTYPES if s != "runtime:latency"], seed=1)
    failed = [t.id for t in tasks if not run(solve(OracleSolver(), t, everything)).passed]
    assert failed == []
    for subtype in SUBTYPES:
        sample = tasks[:: 40 if subtype != "runtime:latency" else 160]
        results = [run(solve(OracleSolver(), t, parse_perturb([subtype]), number=2)) for t in sample]
        assert all(r.passed for r in results), subtype
        assert all(r.perturbation.subtypes == [subtype] for r in results)


def test_noop_and_a_lazy_solver_fail_perturbed_runs(ebench_home):
    tasks = load_suite(SUITE_DIR).tasks[::60]
    every = parse_perturb([s for s in SUBTYPES if s != "runtime:latency"])

    class NoLastWrite(OracleSolver):  # the audit's "no_last_write" shortcut, through the layer
        async def solve(self, trial, limits, *, step=None):
            trial.task = trial.task.model_copy(update={"reference_solution": trial.task.reference_solution[:-1]})
            return await super().solve(trial, limits, step=step)

    for task in tasks:
        assert not run(solve(NoopSolver(), task, every)).passed
        assert not run(solve(NoLastWrite(), task, every)).passed


# -- recording, batches, resume, replay, report --------------------------------------------------


def test_a_clean_session_reads_as_before_and_a_perturbed_one_records_the_layer(tmp_path, fixtures):
    task = fixtures[MUSIC]
    clean = open_trial(task, tmp_path / "clean.jsonl", solver={"name": "oracle"})
    clean.call("search_songs", {"query": "a"})
    clean.finish("agent_stopped")
    lines = [json.loads(line) for line in (tmp_path / "clean.jsonl").read_text().splitlines()]
    assert "perturbation" not in lines[0] and not {"sent", "injected", "altered", "latency"} & set(lines[1])
    perturbed = open_trial(
        task, tmp_path / "p.jsonl", solver={"name": "oracle"}, perturb=parse_perturb(["interface:rename", "intent:extra"], 5)
    )
    perturbed.call(perturbed.layer.tool_names["search_songs"], {perturbed.layer.param_names["search_songs"]["query"]: "a"})
    perturbed.finish("agent_stopped")
    session = read_session(tmp_path / "p.jsonl")
    assert isinstance(session.start, StartEvent)
    assert session.start.perturbation.subtypes == ["interface:rename", "intent:extra"] and session.start.perturbation.seed == 5
    assert session.start.perturbation.request != task.query
    (call,) = session.tool_calls()
    assert isinstance(call, ToolCallEvent) and call.tool == "search_songs" and call.sent["tool"] != "search_songs"


def batch(out: Path, *extra: str):
    command = ["run", "--batch", "--solver", "oracle", "--task", MUSIC, "--task", "moba-0024", "--out", str(out), "--label", out.name]
    return runner.invoke(app, [*command, "--json", *extra])


def test_batches_record_refuse_other_perturbations_on_resume_replay_and_report(tmp_path, fixtures):
    clean, perturbed = tmp_path / "clean", tmp_path / "perturbed"
    assert batch(clean).exit_code == 0
    flags = ["--perturb", "interface", "--perturb", "output", "--perturb-seed", "9"]
    result = batch(perturbed, *flags)
    assert result.exit_code == 0, result.output
    manifest = json.loads((perturbed / "manifest.json").read_text())
    assert manifest["config"]["perturb"] == {
        "subtypes": [*(f"interface:{s}" for s in FAMILIES["interface"]), *(f"output:{s}" for s in FAMILIES["output"])],
        "seed": 9,
    }
    lines = [json.loads(line) for line in (perturbed / "results.jsonl").read_text().splitlines()]
    assert all(line["passed"] and line["perturbation"]["seed"] == 9 for line in lines)
    assert "perturbation" not in json.loads((clean / "results.jsonl").read_text().splitlines()[0])
    refused = batch(perturbed, "--perturb", "interface", "--perturb-seed", "9")
    assert refused.exit_code == 2 and "another configuration" in refused.output and "perturb" in refused.output
    assert batch(perturbed, *flags).exit_code == 0  # the same flags resume (nothing left to run)
    # replayed with the same perturbation (as sent) and without (the canonical calls)
    for out, extra in ((tmp_path / "again", flags), (tmp_path / "plain", [])):
        replayed = runner.invoke(
            app, ["run", "--batch", "--solver", "replay", "--replay-from", str(perturbed), "--out", str(out), "--json", *extra]
        )
        assert replayed.exit_code == 0, replayed.output
        assert all(json.loads(line)["passed"] for line in (out / "results.jsonl").read_text().splitlines())
    report = runner.invoke(app, ["report", str(clean), str(perturbed), "--json"])
    document = json.loads(report.output)
    found = {entry["run"]: entry for entry in document["perturbations"]}
    assert found["perturbed"]["families"] == ["interface", "output"] and found["perturbed"]["clean_run"] == "clean"
    assert found["perturbed"]["pass_rate"] == found["perturbed"]["clean_pass_rate"] == 1.0 and found["perturbed"]["drop"] == 0
    assert set(found["perturbed"]["failure_stages"]) == {"wrong_tool", "schema_error", "wrong_value", "mishandled_output"}
    text = runner.invoke(app, ["report", str(clean), str(perturbed)])
    assert "Robustness" in text.output and "Failed calls by stage" in text.output and "interface+output" in text.output


def test_the_model_solver_runs_perturbed_trials_against_the_fake_server(tmp_path, fixtures, monkeypatch):
    """The real litellm client against FakeOpenAI: the player is offered the perturbed tools and
    request, and passes by the end state; the conversation carries what the layer made."""
    from ebench.sessions.batch import Batch
    from ebench.sessions.model_client import LLMConfig
    from ebench.sessions.runs import load_run
    from ebench.sessions.solvers.llm import LLMSolver
    from ebench.testing.fake_openai import FakeOpenAI, PerturbedPlayer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")
    tasks = [fixtures[MUSIC], fixtures["moba-0024"]]
    perturbation = parse_perturb(list(FAMILIES), seed=2)
    with FakeOpenAI(PerturbedPlayer(tasks, perturbation, trials=2)) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=1, backoff=0.01))
        out = tmp_path / "model"
        batch = Batch(out, tasks, solver, 2, perturb=perturbation)
        batch.prepare()
        try:
            asyncio.run(batch.run(concurrency=4))
        finally:
            batch.finish("finished")
    results = load_run(out).results
    assert len(results) == 4 and all(r.passed for r in results), [(r.task, r.termination, r.error) for r in results]
    assert all(r.perturbation.subtypes == list(perturbation.subtypes) for r in results)
    session = read_session(out / results[0].session)
    user = next(e for e in session.events if getattr(e, "role", None) == "user")
    assert user.content == session.start.perturbation.request != fixtures[results[0].task].query
    calls = session.tool_calls()
    assert any(c.injected == "transient" for c in calls) and all(c.latency for c in calls)
    assert all(c.sent is not None for c in calls)  # renamed: every call was sent under another name


def test_a_perturbation_reads_back_from_its_dict_and_from_its_record_model():
    from ebench.sessions.perturb import Perturbation, parse_perturb
    from ebench.sessions.results import PerturbationRecord

    chosen = parse_perturb(["interface:rename", "runtime"], seed=7)
    assert chosen.subtypes and Perturbation.from_dict(chosen.to_dict()) == chosen
    assert Perturbation.from_dict(PerturbationRecord(**chosen.to_dict())) == chosen  # was an unperturbed run
    assert Perturbation.from_dict(None) == Perturbation() and Perturbation.from_dict("interface") == Perturbation()
