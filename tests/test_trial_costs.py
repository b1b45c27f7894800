"""The fixed costs a trial no longer pays: tool schemas built once, labels computed once per grade,
exec_code's worker started when a code-mode trial opens (and stopped on every way out), the memory
of closed copies given back. Behaviour only: what is shared, what is called, which processes exist."""

from __future__ import annotations

import asyncio
import copy
import json
import threading

import pytest

from ebench.engine.domain_registry import domain_names, get_domain
from ebench.engine.tools import ToolRegistry
from ebench.sessions import trial as trial_module
from ebench.sessions.attempts import human_trial, resume_trial, unfinished_attempt
from ebench.sessions.batch import Batch
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.runs import load_run
from ebench.sessions.sandbox import runner, zygote
from ebench.sessions.sandbox.schema import code_mode_tools, exec_code_tool
from ebench.sessions.solvers.llm import LLMSolver
from ebench.sessions.trial import AGENT_STOPPED, ResumeError, Trial
from ebench.tasks import grading
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer, Script, completion
from tests import processes

TASK = "moba-0024"  # create a room, then three invitations that need its id
LARGEST = "meeting-0099"  # 194 new rows, 192 of them participants (a key of their own, no generated id)


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_suite(ids=[TASK, LARGEST]).tasks}


# -- tool schemas ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", domain_names())
def test_tool_schemas_are_built_once_per_domain_and_mode(name):
    registry = get_domain(name).tools
    schemas = registry.openai_schemas()
    assert isinstance(schemas, tuple) and registry.openai_schemas() is schemas  # shared, not rebuilt
    assert list(schemas) == [tool.openai_schema() for tool in registry]
    code = code_mode_tools(registry)
    assert code_mode_tools(registry) is code
    assert code == (*schemas, exec_code_tool()) and code[-1]["function"]["name"] == "exec_code"


def test_a_registry_that_gains_a_tool_offers_it():
    registry = ToolRegistry("scratch")

    def first(env) -> dict:
        """The first tool."""
        return {}

    def second(env) -> dict:
        """The second tool."""
        return {}

    registry.read(first)
    before, before_code = registry.openai_schemas(), code_mode_tools(registry)
    registry.read(second)
    assert [s["function"]["name"] for s in registry.openai_schemas()] == ["first", "second"]
    assert [s["function"]["name"] for s in code_mode_tools(registry)] == ["first", "second", "exec_code"]
    assert len(before) == 1 and len(before_code) == 2  # what was handed out is unchanged


@pytest.mark.parametrize("code", [False, True], ids=["tools", "code"])
def test_a_model_trial_leaves_the_shared_schemas_as_they_were(tmp_path, tasks, monkeypatch, code):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-do-not-record-0123456789")
    registry = get_domain("moba").tools
    shared = code_mode_tools(registry) if code else registry.openai_schemas()
    snapshot = copy.deepcopy(shared)
    if code:
        block = "me = get_my_profile()\nprint(me['nickname'])"
        model = Script([completion(None, [("exec_code", {"code": block})]), completion("Done.")])
    else:
        model = ReferencePlayer([tasks[TASK]])
    with FakeOpenAI(model) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        batch = Batch(tmp_path, [tasks[TASK]], solver, 2, code=code)
        batch.prepare()
        try:
            asyncio.run(batch.run(concurrency=2))
        finally:
            batch.finish("finished")
    assert all(r.termination == AGENT_STOPPED for r in load_run(tmp_path).results)
    assert (code_mode_tools(registry) if code else registry.openai_schemas()) is shared
    assert shared == snapshot  # nothing on the way to the API changed the cached dicts
    assert all(request["tools"] == json.loads(json.dumps(snapshot)) for request in server.requests)


# -- labels within a grade -------------------------------------------------------------------------


def test_a_grade_computes_each_new_rows_content_once(tasks, monkeypatch):
    task = tasks[LARGEST]
    schema = get_domain(task.domain).schema
    inserts = [c for c in task.expected_diff if c.op == "insert"]
    assert sum(not schema.table(c.table).has_generated_id for c in inserts) > 100  # rows asked for twice by a grade
    calls = []
    content = grading._Resolver.content

    def counted(self, change, depth=0):
        calls.append(change)
        return content(self, change, depth)

    monkeypatch.setattr(grading._Resolver, "content", counted)
    assert grading.grade(task.expected_diff, task.expected_diff, schema).passed
    assert len(calls) == 2 * len(inserts)  # once per row on each side: expected and actual


# -- exec_code's worker ----------------------------------------------------------------------------


@pytest.fixture
def spawned(monkeypatch):
    """The exec_code workers started during the test (real processes), and an event set at each.
    The zygote stops as soon as no trial uses it (no lingering), so that the counts of processes
    before and after a test compare."""
    monkeypatch.setattr(zygote, "LINGER_SECONDS", 0)
    zygote.shutdown()

    class Spawned(list):
        def __init__(self) -> None:
            super().__init__()
            self.event = threading.Event()

        def wait_first(self) -> int:
            assert self.event.wait(60), "no exec_code worker was started"
            return self[0]

    started = Spawned()

    class Recorded(runner.WorkerProcess):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            started.append(self.proc.pid)
            started.event.set()

    monkeypatch.setattr(runner, "WorkerProcess", Recorded)
    return started


@processes.needs_proc
def test_a_code_mode_trial_starts_its_worker_when_it_opens(tasks, spawned):
    before = processes.descendants()
    trial = Trial(tasks[TASK], code=True)
    pid = spawned.wait_first()  # started by the opening alone: no block has run
    assert pid in processes.descendants()
    block = trial.exec_code("print(get_my_profile()['nickname'])")
    assert block.ok and spawned[0] == pid  # the first block ran on that worker
    trial.finish(AGENT_STOPPED)
    assert processes.descendants() == before  # the block's worker and the next spare are gone


@processes.needs_proc
def test_a_tools_mode_trial_starts_no_worker(tasks, spawned):
    before = processes.descendants()
    trial = Trial(tasks[TASK])
    assert trial.call("get_my_profile", {}).ok
    trial.finish(AGENT_STOPPED)
    assert spawned == [] and processes.descendants() == before


@processes.needs_proc
def test_closing_a_code_mode_trial_right_after_it_opened_leaves_no_worker(tasks, spawned):
    before = processes.descendants()
    for _ in range(3):
        Trial(tasks[TASK], code=True).close()
    assert processes.descendants() == before


@processes.needs_proc
def test_a_trial_that_cannot_start_leaves_no_worker(tasks, spawned):
    before = processes.descendants()
    moba = get_domain("moba")
    with pytest.raises(Exception, match="10000000"):
        Trial(None, domain=moba, actor=10**7, code=True)  # an unknown actor
    assert spawned == [] and processes.descendants() == before


@processes.needs_proc
def test_a_resumed_code_mode_attempt_starts_its_worker_and_stops_it(tmp_path, tasks, spawned):
    task = tasks[TASK]
    trial = human_trial(task, code=True, folder=tmp_path)
    assert trial.call("get_my_profile", {}).ok
    trial.close()
    before = processes.descendants()
    left = unfinished_attempt(task, tmp_path)
    assert left is not None and left.code
    spawned.clear()
    spawned.event.clear()
    resumed = resume_trial(task, left.session)
    assert spawned.wait_first() in processes.descendants()
    resumed.close()
    assert processes.descendants() == before

    # an attempt that cannot go on (a recorded result no longer matches) starts nothing
    path = left.session
    lines = path.read_text(encoding="utf-8").splitlines()
    call = json.loads(lines[-1])
    call["result"] = {"forged": 1}
    path.write_text("\n".join([*lines[:-1], json.dumps(call)]) + "\n", encoding="utf-8")
    spawned.clear()
    with pytest.raises(ResumeError):
        resume_trial(task, path)
    assert spawned == [] and processes.descendants() == before


# -- memory of closed copies -----------------------------------------------------------------------


@pytest.fixture
def trims(monkeypatch):
    """Counts the calls to malloc_trim, on a fresh count of open copies."""
    made: list[int] = []
    monkeypatch.setattr(trial_module, "_OPEN_COPIES", trial_module._OpenCopies())
    monkeypatch.setattr(trial_module, "_malloc_trim", lambda: made.append)
    return made


def test_memory_is_given_back_when_the_open_copies_fall(tasks, trims):
    many = [Trial(tasks[TASK]) for _ in range(2 * trial_module._OpenCopies.TRIM_AFTER)]
    for trial in many:
        trial.close()
    assert trims and set(trims) == {0}  # malloc_trim(0): every arena


def test_memory_is_not_trimmed_between_one_trial_and_the_next(tasks, trims):
    for _ in range(2 * trial_module._OpenCopies.TRIM_AFTER):
        Trial(tasks[TASK]).close()  # the next copy reuses the memory of the last
    assert trims == []
