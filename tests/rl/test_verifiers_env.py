"""The verifiers environment (ebench.integrations.verifiers): rollouts through verifiers' own
machinery (its interception server in front of the project's fake OpenAI-compatible server) at
concurrency 64, each on its own world copy, and rewards equal to ebench's grade of the same
trajectory, re-graded from the session the rollout recorded.

These run in .venv-rl, the environment with the `verifiers` extra (verifiers 0.4 pins openai below 3,
which Inspect's providers in .venv refuse): tests/test_integration_verifiers.py runs them there."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import verifiers.v1 as vf

from ebench.api import get_domain, grade, load_suite, read_session
from ebench.integrations.verifiers import RLEnvError, load_environment, partial_credit, pass_reward
from ebench.tasks.diff import diff_from_list
from ebench.tasks.suite import SPLITS
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

API_KEY_VAR = "EBENCH_TEST_FAKE_KEY"


def _rollouts(env: Any, player: Any, tasks: list[Any], per_task: int, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every task `per_task` times, all at once (64 at most in flight), against a fake server
    answering with `player`: the episodes."""
    from verifiers.v1.clients import ModelContext
    from verifiers.v1.env import RunSlot

    monkeypatch.setenv(API_KEY_VAR, "fake")

    async def run() -> list[Any]:
        with FakeOpenAI(player) as server:
            ctx = ModelContext(client=vf.EvalClientConfig(base_url=server.base_url, api_key_var=API_KEY_VAR), model="fake-model")
            gate = asyncio.Semaphore(64)
            async with env.serving():
                slots = [slot for task in tasks for slot in env.slots(task, per_task)]
                assert all(isinstance(s, RunSlot) for s in slots)
                return list(await asyncio.gather(*(env.run_slot(slot, ctx, gate) for slot in slots)))

    return asyncio.run(run())


def _ebench_grade(trace: Any) -> Any:
    """ebench's own grade of the rollout's trajectory: the session it recorded, its final diff
    graded again against the task."""
    session = read_session(Path(trace.info["ebench_session"]))
    assert session.end is not None and session.task_id == trace.task.data.id
    task = {t.id: t for t in load_suite(SPLITS["suite"], domain="music").tasks}[session.task_id]
    return grade(task.expected_diff, diff_from_list(session.end.diff), get_domain("music").schema)


def _check_rewards(episodes: list[Any]) -> list[Any]:
    grades = []
    for episode in episodes:
        assert episode.ok and not episode.errors, episode.errors
        (trace,) = episode.traces
        assert trace.ok, trace.errors
        ours = _ebench_grade(trace)
        assert trace.rewards["passed"].score == pass_reward(ours) and trace.rewards["passed"].weight == 1.0
        assert trace.rewards["partial_credit"].score == pytest.approx(partial_credit(ours))
        assert trace.rewards["partial_credit"].weight == 0.5
        grades.append(ours)
    sessions = [e.traces[0].info["ebench_session"] for e in episodes]
    assert len(set(sessions)) == len(sessions)  # each rollout its own trial and session
    return grades


@pytest.fixture(scope="module")
def music_suite(music_world: Path) -> list[Any]:
    return load_suite(SPLITS["suite"], domain="music").tasks


def test_64_concurrent_rollouts_each_own_their_world_and_earn_ebench_grade(music_suite, tmp_path, monkeypatch):
    env = load_environment(domain="music", split="suite", sessions=tmp_path)
    tasks = list(env.taskset)[:32]
    episodes = _rollouts(env, ReferencePlayer(music_suite), tasks, 2, monkeypatch)  # two rollouts a task, as a GRPO group
    assert len(episodes) == 64
    grades = _check_rewards(episodes)
    failed = [
        (e.traces[0].task.data.id, e.traces[0].info["ebench_termination"], g.summary()) for e, g in zip(episodes, grades) if not g.passed
    ]
    assert not failed, failed
    assert all(e.traces[0].rewards["partial_credit"].score == 1.0 for e in episodes)


def test_a_wrong_player_gets_partial_credit_equal_to_ebench_grade(music_suite, tmp_path, monkeypatch):
    env = load_environment(domain="music", split="suite", sessions=tmp_path)
    tasks = list(env.taskset)[:12]
    episodes = _rollouts(env, ReferencePlayer(music_suite, skip_last=1), tasks, 1, monkeypatch)  # stops one call short
    grades = _check_rewards(episodes)
    assert sum(g.passed for g in grades) < len(grades) / 2  # a last call that changes nothing new can still pass
    credits = [e.traces[0].rewards["partial_credit"].score for e in episodes]
    assert any(0.0 < c < 1.0 for c in credits)


def test_partial_credit_is_recall_less_unexpected_writes(music_suite):
    task = music_suite[0]
    schema = get_domain("music").schema
    exact = grade(task.expected_diff, task.expected_diff, schema)
    assert pass_reward(exact) == 1.0 and partial_credit(exact) == 1.0
    empty = grade(task.expected_diff, diff_from_list([]), schema)
    assert pass_reward(empty) == 0.0 and partial_credit(empty) == 0.0
    half = diff_from_list(task.expected_diff.to_list()[: len(task.expected_diff) // 2])
    halved = grade(task.expected_diff, half, schema)
    assert partial_credit(halved) == pytest.approx(halved.matched_rows / halved.expected_rows)
    other = next(t for t in music_suite if not set(map(repr, t.expected_diff)) & set(map(repr, task.expected_diff)))
    stray = grade(task.expected_diff, diff_from_list(task.expected_diff.to_list() + other.expected_diff.to_list()[:1]), schema)
    assert len(stray.unexpected) == 1 and not stray.passed
    assert partial_credit(stray) == pytest.approx((stray.expected_rows - 1) / stray.expected_rows)
    assert partial_credit(stray, unexpected_penalty=0.0) == 1.0


def test_bad_settings_are_one_line_errors():
    with pytest.raises(RLEnvError, match="mode 'shell'"):
        load_environment(domain="music", mode="shell")
    with pytest.raises(RLEnvError, match="split 'train'"):
        load_environment(domain="music", split="train")


def test_the_readme_example_builds_the_environment():
    """The README's "Use it from: verifiers" block, run as written."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n### verifiers (RL training)", 1)[1].split("\n### ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    scope: dict[str, Any] = {}
    exec(compile(code, "README.md (verifiers)", "exec"), scope)
    env = scope["env"]
    assert isinstance(env, vf.SingleAgentEnv)
