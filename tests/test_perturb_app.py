"""The replay screen shows a perturbed session: its perturbations in the title, and for a call
what the solver sent beside the canonical call (ebench/sessions/perturb.py)."""

from __future__ import annotations

from appcheck import until_settled

from ebench.app.app import EBenchApp
from ebench.app.screens.replay import ReplayScreen, ReplayTrialScreen, TrialView, step_detail
from ebench.sessions.batch import Batch
from ebench.sessions.perturb import parse_perturb
from ebench.sessions.solvers import OracleSolver
from ebench.sessions.timeline import Timeline
from ebench.tasks.suite import load_suite


async def test_the_replay_shows_the_perturbations_and_what_was_sent(tmp_path, music_world):
    tasks = load_suite(ids=["music-0020"]).tasks
    batch = Batch(tmp_path / "run", tasks, OracleSolver(), 1, perturb=parse_perturb(["interface:rename", "output:transient"], seed=4))
    batch.prepare()
    await batch.run(1)
    batch.finish("finished")
    session = tmp_path / "run" / "sessions" / "music-0020" / "1.jsonl"
    timeline = Timeline.open(session)
    assert timeline.check() is None  # the canonical calls replay; the layer's own answers are not re-run
    sent = next(s for s in timeline.steps if s.kind == "tool_call" and s.event.sent)
    detail = step_detail(sent).plain
    assert f"(sent as {sent.event.sent['tool']})" in sent.label and "sent" in detail and sent.event.sent["tool"] in detail
    injected = next(s for s in timeline.steps if s.kind == "tool_call" and s.event.injected)
    assert "answered by the perturbation (not run): transient" in step_detail(injected).plain
    app = EBenchApp(lambda: ReplayScreen(tmp_path / "run"), theme="ebench-dark")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await until_settled(pilot, lambda: len(screen.shown) == 1, what="the trials")
        screen.open_row(0)
        await until_settled(pilot, lambda: isinstance(app.screen, ReplayTrialScreen), what="the trial screen")
        view = app.screen.query_one(TrialView)
        await until_settled(pilot, lambda: view.timeline is not None and view.analysed, what="the trial view")
        title = str(app.screen.query_one("#replay-title").render())
        assert "perturbed: interface:rename+output:transient (seed 4)" in title
