"""What the app's screen tests share: the one way to wait for the app (`until_settled`), and a
stand-in for a screen another test file covers, so a screen's own tests assert on how it opens the
next one without running it."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from ebench.app.screens.base import EBenchScreen


class StandIn(EBenchScreen):
    """Records how a screen was constructed."""

    made: list[StandIn] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.args, self.kwargs = args, kwargs
        StandIn.made.append(self)

    def compose(self) -> ComposeResult:
        yield Static("stand-in")


def stand_in(monkeypatch: pytest.MonkeyPatch, module: str, name: str) -> list[StandIn]:
    """Replace `module.name` (imported by the screen when it opens it) by StandIn; returns the
    list of the stand-ins made."""
    replacement = types.ModuleType(module)
    setattr(replacement, name, StandIn)
    monkeypatch.setitem(sys.modules, module, replacement)
    StandIn.made = []
    return StandIn.made


# Only a hang reaches this, however loaded the machine: the waiting itself follows the app's workers.
SAFETY_SECONDS = 300.0
# How often a condition no worker reports on (a solver thread held at its step gate) is looked at again.
RECHECK_SECONDS = 0.02


async def until_settled(pilot: Pilot[Any], done: Callable[[], object] | None = None, *, what: str = "the app") -> None:
    """Let the app finish what it started: handle the pending messages, wait for the running workers
    to complete (Textual's own completion, not a clock), handle what they posted, and again, until
    `done()` holds; without `done`, until no worker runs. A worker that never ends on its own (a
    watched solver held at its gate) needs a `done`."""

    async def settle() -> None:
        endings: dict[Worker[Any], asyncio.Task[None]] = {}
        while True:
            await pilot.pause()  # the messages the workers posted, which may start other workers
            running = [worker for worker in pilot.app.workers if not worker.is_finished]
            finished = done() if done is not None else not running
            if finished:
                return
            for worker in running:
                if worker not in endings and worker.is_running:
                    endings[worker] = asyncio.create_task(_ended(worker))
            waiting = [endings[worker] for worker in running if worker in endings]
            recheck = None if done is None else RECHECK_SECONDS
            if waiting:
                await asyncio.wait(waiting, timeout=recheck, return_when=asyncio.FIRST_COMPLETED)
            else:  # nothing running yet (a worker about to start) or a condition outside the workers
                await asyncio.sleep(recheck or 0)

    try:
        await asyncio.wait_for(settle(), SAFETY_SECONDS)
    except TimeoutError:
        raise AssertionError(f"{what} did not settle in {SAFETY_SECONDS:.0f} s") from None


async def _ended(worker: Worker[Any]) -> None:
    """Returns when `worker` has ended, however: its failure is the screen's to show (or the test's
    to assert), and waiting on it must never cancel it (so this runs as its own task)."""
    with contextlib.suppress(WorkerCancelled, WorkerFailed):
        await worker.wait()


def notified(app: App[Any]) -> list[str]:
    """Every message the app is asked to show as a notification from now on (through the public
    `notify`, which screens and widgets call too); the app still shows them."""
    messages: list[str] = []
    show = app.notify

    def notify(message: str, *args: Any, **kwargs: Any) -> None:
        messages.append(str(message))
        show(message, *args, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return messages


async def until_loaded(pilot: Pilot[Any], screen_type: type) -> Any:
    """The current screen, once it is a `screen_type` whose worker has loaded its data."""
    screen = pilot.app.screen
    assert isinstance(screen, screen_type)
    await until_settled(pilot, lambda: screen.loaded, what=f"{screen_type.__name__} loading")
    # what loading posted (the table filled, a preview asked for) is handled, and its workers done
    await until_settled(pilot, what=f"{screen_type.__name__} after loading")
    return screen


def forget_unfinished(task: Any) -> None:
    """Delete the unsubmitted attempts an earlier test left at `task` (the data directory is shared
    by a worker's tests): the solve screen would offer to resume them."""
    from ebench.sessions.attempts import discard_session, unfinished_attempt

    while (left := unfinished_attempt(task)) is not None:
        discard_session(left.session)  # and the draft kept beside it


async def run_call(pilot: Pilot[Any], screen: Any, tool: str, args: dict[str, Any]) -> None:
    """A person's call on the solve screen: the tool chosen in the catalog, the arguments set in
    the composer, F5; then the call's worker and the diff's."""
    from ebench.app.widgets.catalog import ToolCatalog
    from ebench.app.widgets.composer import CallComposer

    calls, diff_before = screen.trial.tool_calls, screen.last_diff
    composer = screen.query_one(CallComposer)
    screen.query_one(ToolCatalog).select(tool, notify=True)
    await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == tool, what=f"{tool} chosen")
    composer.set_args(args)
    await composer.form_ready()
    composer.focus_first()  # F5 is the composer's key: the person is in the form
    await until_settled(pilot, lambda: screen.focused is not None and composer in screen.focused.ancestors, what="the form focused")
    await pilot.press("f5")

    def called_and_shown() -> bool:
        # The call's worker may not have started when the key is handled (a loaded machine):
        # "no worker running" alone is not the end. The call counted, then the diff shown anew.
        idle = not any(not worker.is_finished for worker in pilot.app.workers)
        return idle and screen.trial.tool_calls == calls + 1 and not screen.busy and screen.last_diff is not diff_before

    await until_settled(pilot, called_and_shown, what=f"the call of {tool}")


async def until_solve_ready(pilot: Pilot[Any]) -> Any:
    """The solve screen, once its trial is open and its first diff is shown."""
    from ebench.app.screens.solve import SolveScreen

    await until_settled(pilot, lambda: isinstance(pilot.app.screen, SolveScreen) and pilot.app.screen.trial is not None)
    screen = pilot.app.screen
    await until_settled(pilot, lambda: screen.last_diff is not None)
    return screen
