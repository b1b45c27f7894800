"""The app in conversation: with a user who holds information (a task of the ask split), a person
solving asks the scripted user in the "Ask the user" field, and a person watching a model plays
the user and answers the model's question, which the model (the real litellm client against a
local server) waits for; a person solves a scenario turn by turn (ctrl+t ends a turn)."""

from __future__ import annotations

import pytest
from appcheck import forget_unfinished, run_call, until_settled
from textual.widgets import Input, RichLog

from ebench.app.app import EBenchApp
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets.task_pane import TaskPane
from ebench.sessions.model_client import LLMConfig
from ebench.sessions.record import read_session
from ebench.sessions.solvers.llm import LLMSolver
from ebench.tasks.asking import SPLIT_DIR
from ebench.tasks.scenarios import find_scenario
from ebench.tasks.spec import resolve_args
from ebench.tasks.suite import load_suite
from ebench.testing.fake_openai import FakeOpenAI, ReferencePlayer

TASK = "meeting-0050-ask"  # a leave entry (title held by the user), a message (held too) posted in one chat, left
SIZE = (170, 50)


@pytest.fixture
def task():
    task = load_suite(SPLIT_DIR, ids=[TASK]).tasks[0]
    forget_unfinished(task)
    return task


def log_text(screen: SolveScreen, selector: str) -> str:
    return "\n".join(line.text for line in screen.query_one(selector, RichLog).lines)


async def test_a_person_asks_the_scripted_user_then_solves_and_passes(task):
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
        ask = screen.query_one("#ask-user", Input)
        await pilot.click(ask)
        ask.value = "What title and what message do you want?"
        await pilot.press("enter")
        await until_settled(pilot, lambda: "Long vacation" in log_text(screen, "#user-log"))
        said = log_text(screen, "#user-log")
        assert "you: What title and what message" in said and "user (scripted): The title is 'Long vacation'." in said
        assert ask.value == ""
        for step in task.reference_solution:
            await run_call(pilot, screen, step.tool, step.args)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        assert screen.summary.passed and screen.summary.asked_first
        session = read_session(screen.trial.writer.path)
    replies = [e for e in session.events if e.event == "message" and e.role == "user" and e.user]
    assert [r.revealed for r in replies] == [["title", "message"]]


async def test_a_person_who_acts_before_asking_fails_with_the_right_end_state(task):
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
        for step in task.reference_solution:  # the values were guessed right, without asking
            await run_call(pilot, screen, step.tool, step.args)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        assert not screen.summary.passed and screen.summary.asked_first is False
        assert screen.trial.final_grade.note == "acted before asking the user for: message, title"


async def test_a_person_plays_the_user_for_a_watched_model(task, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-app-users-0123456789")
    with FakeOpenAI(ReferencePlayer([task])) as server:
        solver = LLMSolver(LLMConfig(model="openai/fake", api_base=server.base_url, retries=0))
        app = EBenchApp(lambda: SolveScreen(task, watcher=solver, paused=False, speed=None, play_user=True))
        async with app.run_test(size=SIZE) as pilot:
            screen = pilot.app.screen
            answer = screen.query_one("#answer-user", Input)
            assert answer.disabled  # nothing asked yet
            await until_settled(pilot, lambda: screen.question is not None and not answer.disabled)
            assert "Before I start, could you tell me the title and message?" in log_text(screen, "#conversation")
            assert screen.focused is answer
            answer.value = (
                "Title it 'Long vacation'; the message: 'Leaving this chat before my leave. Thanks all, and good luck with the project!'"
            )
            await pilot.press("enter")
            # The model acts, then reports: the person is asked again, and ends the talk with nothing.
            await until_settled(pilot, lambda: screen.question is not None and not answer.disabled)
            assert screen.trial.tool_calls == len(task.reference_solution)
            assert log_text(screen, "#conversation").rstrip().endswith("Done.")
            await pilot.press("enter")
            await until_settled(pilot, lambda: screen.summary is not None)
            assert answer.disabled and screen.question is None
            assert screen.summary.passed and screen.summary.asked_first
            session = read_session(screen.trial.writer.path)
    reply = next(e for e in session.events if e.event == "message" and e.role == "user" and e.user)
    assert reply.user == "person" and reply.revealed == ["title", "message"]


async def test_a_person_solves_a_scenario_turn_by_turn():
    scenario = find_scenario("meeting-s011")  # clarify, switch, reference, chat
    task = scenario.as_task()
    forget_unfinished(task)
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
        pane = screen.query_one(TaskPane)
        for index, turn in enumerate(scenario.turns):
            assert pane.turn.startswith(f"turn {index + 1}/4 · {turn.kind.replace('_', '-')}") and pane.request == turn.message
            if turn.user_profile:
                ask = screen.query_one("#ask-user", Input)
                ask.value = "Which title and which message, please?"
                await pilot.click(ask)
                await pilot.press("enter")
                await until_settled(pilot, lambda: screen.trial.user_replies == 1)
            for job in turn.tasks:
                results = []
                for step in job.reference_solution:
                    await run_call(pilot, screen, step.tool, resolve_args(step.args, results))
                    results.append(screen.trial.history[-1].result)
            if index < 3:
                await pilot.press("ctrl+t")
                await until_settled(pilot, lambda i=index, t=turn: screen.trial.turn_index == i + 1 and pane.request != t.message)
        await pilot.press("ctrl+t")  # the last turn has no next: said, nothing ends
        await until_settled(pilot)
        assert screen.trial.turn_index == 3
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        assert screen.summary.passed
        assert [t.kind for t in screen.summary.scenario_turns] == scenario.kinds
        assert all(t.passed for t in screen.summary.scenario_turns)


SIZES = {"80x24": (80, 24), "160x50": (160, 50)}


@pytest.mark.parametrize("size", SIZES)
def test_snapshot_of_the_solve_screen_talking_with_the_user(snap_compare, task, size):
    async def run_before(pilot) -> None:
        screen = pilot.app.screen
        await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
        ask = screen.query_one("#ask-user", Input)
        ask.value = "What title should the leave entry get?"
        ask.focus()
        await pilot.press("enter")
        await until_settled(pilot, lambda: "Long vacation" in log_text(screen, "#user-log"))
        screen.set_focus(None)  # a blinking cursor would be caught on or off
        await until_settled(pilot, lambda: screen.focused is None, what="no focus")

    assert snap_compare(EBenchApp(lambda: SolveScreen(task)), terminal_size=SIZES[size], run_before=run_before)
