"""The solve screen: one trial of one task, against a private copy of its world.

A person picks tools from the catalog, fills the composer (or writes exec_code in code mode) and
watches the trace and the live diff; or the screen watches a solver (a model, the oracle) with
pause and step. A task whose user holds facts (a user profile) has a user to talk to: a person
solving asks the scripted user in the "Ask the user" field; watching a model with `play_user`, the
person is the user and answers the model's questions there. Every attempt is recorded as a session
(solver "human" for a person). Tool calls,
grading and the watched solver run in thread workers; the trial reports each recorded event
through a listener that posts a message, so the screen never waits on the database.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.events import DescendantFocus, Resize
from textual.message import Message
from textual.widgets import Footer, Header, Input, RichLog, Select, Tab, TabbedContent, TabPane, Tabs, TextArea

from ...engine.domain_registry import get_domain
from ...engine.tools import Tool
from ...sessions.attempts import (
    Draft,
    DraftKeeper,
    IdleClock,
    UnfinishedAttempt,
    discard,
    discard_session,
    human_outcome,
    human_trial,
    leave_out,
    load_draft,
    recorded_trial,
    resume_trial,
    unfinished_attempt,
)
from ...sessions.describe import preview, shown_args
from ...sessions.events import ApiErrorEvent, MessageEvent, SessionEvent, ToolCallEvent, TurnEndEvent, as_tool_call
from ...sessions.results import TrialSummary
from ...sessions.solvers.base import Solver
from ...sessions.trial import AGENT_STOPPED, Trial, TrialLimits
from ...sessions.users import PersonUser
from ...sessions.watch import DEFAULT_SPEED, SPEEDS, StepGate, watch
from ...tasks.diff import Diff
from ...tasks.grading import Grade, explain
from ...tasks.spec import Task
from ...terminal import printable, printable_text
from ..widgets import task_pane
from ..widgets.catalog import ToolCatalog
from ..widgets.code_editor import CodeEditor
from ..widgets.composer import PAGE, CallComposer
from ..widgets.diff_view import DiffView
from ..widgets.task_pane import COMPACT_LINES, SHORT_LINES, TaskPane, clock
from ..widgets.trace import CallTrace
from .base import EBenchScreen
from .dialogs import ConfirmDialog, ResumeChoice, ResumeDialog

EXEC_CODE_HELP = (
    "Run Python in which every tool is a function (keyword arguments; results are dicts); "
    "print() output and the last expression's value come back."
)


@dataclass
class DiffState:
    """What the live diff showed last (tests and the status line read it)."""

    result: Grade | None
    actual: Diff


# The panes a key focuses from anywhere, a field included: F-keys, and alt+digits for terminals
# that take the F-keys. One group in the footer, so they fit at 80 columns. (F5 runs a call and
# the editor keeps F6/F7 for selecting, so diff and editor are F8 and F9.)
PANES = Binding.Group("Panes", compact=True)
# Below this width the panes are shown one at a time (a tab strip and the pane keys switch);
# below this height the task pane is shortened so the work area keeps its rows.
NARROW_WIDTH = 120
SHORT_HEIGHT = 32
PANE_TABS = ("catalog", "work", "trace", "diff")
# A change to the editor or the composer is kept once typing pauses this long (seconds), and the
# time spent every HEARTBEAT seconds while nothing changes: a killed app loses at most that.
SAVE_DELAY = 1.0
HEARTBEAT = 30.0
MAX_PAGES = 50  # "All pages" stops here (1,000 records of 20): a runaway listing is a bug, not a task


class SolveScreen(EBenchScreen):
    TITLE = "Solve"
    BINDINGS = [
        Binding("escape", "back", "Leave field / back", id="screen.back", show=False),
        Binding("ctrl+s", "submit", "Submit", id="solve.submit"),
        Binding("ctrl+n", "reset", "New attempt", id="solve.reset", show=False),
        Binding("ctrl+f", "find_tool", "Find tool", id="solve.find_tool", priority=True),
        Binding("slash", "find_tool", "Find tool", id="solve.find_tool_key", show=False),
        Binding("f2,alt+1", "focus_pane('catalog')", "Tools", id="solve.pane.tools", priority=True, group=PANES),
        Binding("f3,alt+2", "focus_pane('work')", "Call", id="solve.pane.call", priority=True, group=PANES),
        Binding("f4,alt+3", "focus_pane('trace')", "Trace", id="solve.pane.trace", priority=True, group=PANES),
        Binding("f8,alt+4", "focus_pane('diff')", "Diff", id="solve.pane.diff", priority=True, group=PANES),
        Binding("f9,alt+5", "focus_pane('code')", "Code editor", id="solve.pane.code", priority=True, group=PANES),
        # The task pane's title names this key when the request is cut (the editor's F6, select line, gives way).
        Binding("f6,alt+6", "toggle_task", "Whole request", id="solve.task", priority=True, show=False),
        Binding("ctrl+t", "end_turn", "Next turn", id="solve.end_turn"),
        Binding("p", "pause", "Run/pause", id="solve.pause"),
        Binding("n", "step", "Step", id="solve.step"),
        Binding("plus,equals_sign", "speed(1)", "Faster", id="solve.faster"),
        Binding("minus", "speed(-1)", "Slower", id="solve.slower"),
    ]
    DEFAULT_CSS = """
    SolveScreen #pane-tabs { display: none; }
    SolveScreen #solve-body { height: 1fr; }
    SolveScreen #catalog { width: 34; }
    SolveScreen #catalog Input { width: 100%; }
    SolveScreen #middle { width: 1fr; }
    SolveScreen #work { height: 1fr; min-height: 12; }
    SolveScreen #trace { height: 1fr; }
    SolveScreen #diff { width: 1fr; max-width: 90; }
    SolveScreen #conversation { height: 1fr; }
    SolveScreen #user-log { height: 6; }
    SolveScreen.-talks.-short #work { min-height: 5; }
    SolveScreen.-talks.-short #user-log { height: 4; }
    SolveScreen.-code #catalog { width: 28; }
    SolveScreen.-code #work { height: 3fr; }
    SolveScreen.-code #diff { max-width: 60; }
    SolveScreen.-narrow #pane-tabs { display: block; }
    SolveScreen.-narrow #catalog, SolveScreen.-narrow #middle, SolveScreen.-narrow #work,
    SolveScreen.-narrow #conversation, SolveScreen.-narrow #trace, SolveScreen.-narrow #diff { display: none; }
    SolveScreen.-narrow.-show-catalog #catalog { display: block; width: 1fr; }
    SolveScreen.-narrow.-show-work #middle, SolveScreen.-narrow.-show-trace #middle { display: block; }
    SolveScreen.-narrow.-show-work #work, SolveScreen.-narrow.-show-work #conversation { display: block; height: 1fr; }
    SolveScreen.-narrow.-show-trace #trace { display: block; }
    SolveScreen.-narrow.-show-diff #diff { display: block; width: 1fr; max-width: 100%; }
    """

    # -- messages posted from worker threads -----------------------------------------------
    class TrialReady(Message):
        def __init__(
            self, generation: int, trial: Trial | None, error: str | None = None, resumed: Path | None = None, draft: Draft | None = None
        ) -> None:
            super().__init__()
            self.generation, self.trial, self.error, self.resumed = generation, trial, error, resumed
            self.draft = draft  # a resumed attempt's unsent work

    class ResumeOffered(Message):
        """The task has an attempt left unsubmitted: the person chooses before anything starts."""

        def __init__(self, generation: int, attempt: UnfinishedAttempt) -> None:
            super().__init__()
            self.generation, self.attempt = generation, attempt

    class TrialEvent(Message):
        def __init__(self, generation: int, event: SessionEvent) -> None:
            super().__init__()
            self.generation, self.event = generation, event

    class DiffReady(Message):
        def __init__(self, generation: int, result: Grade | None, actual: Diff) -> None:
            super().__init__()
            self.generation, self.result, self.actual = generation, result, actual

    class Graded(Message):
        """The trial is finished (submitted, or the watched solver stopped); summary None: abandoned."""

        def __init__(self, generation: int, summary: TrialSummary | None, result: Grade | None, actual: Diff | None) -> None:
            super().__init__()
            self.generation, self.summary, self.result, self.actual = generation, summary, result, actual

    def __init__(
        self,
        task: Task,
        *,
        code: bool = False,
        blind: bool = False,
        watcher: Solver | None = None,
        paused: bool = True,
        speed: float | None = DEFAULT_SPEED,
        resume: Path | None = None,
        play_user: bool = False,
    ) -> None:
        """`watcher`: a solver to watch, starting `paused` (a person presses p to run it at `speed`
        steps per second, None: as fast as it goes). `resume`: continue this unfinished attempt.
        `play_user`: watching, the person answers the model's questions (a task with a user profile)."""
        super().__init__()
        # What has the focus from the first frame, so keys typed while the world copy is prepared
        # land where the person will type (not in the tab strip hidden on a wide screen).
        self.AUTO_FOCUS = ("#code-input" if code else "#catalog-search") if watcher is None else "#conversation"  # type: ignore[misc]  # per screen: its mode
        self.task_spec = task
        self.code = code
        self.blind = blind
        self.watcher = watcher
        self.domain = get_domain(task.domain)
        self.trial: Trial | None = None
        self.generation = 0  # bumped by every new attempt: events of an older one are dropped
        self.submitted = False
        self.busy = False  # a call or exec_code block is running (one at a time)
        self.gate = StepGate(paused=paused, rate=speed) if watcher is not None else None
        self.summary: TrialSummary | None = None
        self.last_diff: DiffState | None = None
        self.resumed_from: Path | None = None  # the session this attempt continues, if any
        self._resume = resume
        self._diff_running = False
        self._diff_again = False
        self.pane = "work"  # in a narrow terminal: the one pane shown
        self.tools: dict[str, Tool] = {tool.name: tool for tool in self.domain.tools}
        self.talks = bool(task.user_profile) or task.scenario is not None  # the task has a user to talk to
        self.play_user = play_user and watcher is not None and self.talks
        self.question: tuple[asyncio.AbstractEventLoop, asyncio.Future[str | None]] | None = None  # awaiting the person
        # A person's attempt: its unsent work kept beside its session, its idle gaps capped.
        self.drafts: DraftKeeper | None = None
        self._preparing: tuple[str, float] | None = None  # the trial is being opened: what is done, since when
        self._queued: Message | None = None  # a call or block asked for while the trial was opening: sent once it is open
        self.idle = IdleClock()
        self._draft_timer: Any = None
        self._typed: tuple[str, dict[str, Any] | None] = ("", None)  # the editor's text and the composer's draft, as last changed

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        mode = ("code" if self.code else "tools") + (" · blind" if self.blind else "")
        if self.watcher is not None:
            mode += f" · watching {self._watcher_label()}"
        yield TaskPane(self.task_spec, now=self.domain.now, mode=mode, id="task")
        yield Tabs(*self._pane_tabs(), id="pane-tabs")
        with Horizontal(id="solve-body"):
            if self.watcher is None:
                extra = [("exec_code", "code", EXEC_CODE_HELP)] if self.code else []
                catalog = ToolCatalog(list(self.domain.tools), extra=extra)
                catalog.id = "catalog"
                catalog.add_class("pane")
                catalog.border_title = "Tools"
                yield catalog
            with Vertical(id="middle"):
                if self.watcher is None:
                    with TabbedContent(id="work", initial="tab-code" if self.code else "tab-call"):
                        with TabPane("Call", id="tab-call"):
                            yield CallComposer()
                        if self.code:
                            with TabPane("exec_code", id="tab-code"):
                                yield CodeEditor()
                else:
                    log = RichLog(id="conversation", wrap=True, markup=False, highlight=False)
                    log.add_class("pane")
                    log.border_title = "Conversation"
                    yield log
                    if self.play_user:
                        yield Input(
                            placeholder="You are the user: answer the model here (enter sends; enter on nothing ends the talk)",
                            id="answer-user",
                            disabled=True,
                        )
                if self.watcher is None and self.talks:
                    talk = RichLog(id="user-log", wrap=True, markup=False, highlight=False)
                    talk.add_class("pane")
                    talk.border_title = "The user"
                    yield talk
                    yield Input(placeholder="Ask the user (enter sends): the request leaves something out", id="ask-user")
                trace = CallTrace(id="trace")
                trace.add_class("pane")
                trace.border_title = "Trace"
                yield trace
            diff = DiffView(id="diff")
            diff.add_class("pane")
            diff.border_title = "Diff: expected vs actual" if not self.blind else "Diff: your changes"
            yield diff
        yield Footer()

    def _pane_tabs(self) -> list[Tab]:
        work = "F3 Conversation" if self.watcher is not None else "F3 Call · F9 Code" if self.code else "F3 Call"
        labels = {"catalog": "F2 Tools", "work": work, "trace": "F4 Trace", "diff": "F8 Diff"}
        return [Tab(labels[p], id=f"pane-{p}") for p in PANE_TABS if p != "catalog" or self.watcher is None]

    def _watcher_label(self) -> str:
        assert self.watcher is not None
        return str(self.watcher.config().get("model") or self.watcher.name)

    def on_mount(self) -> None:
        self.sub_title = self.task_spec.id
        self.set_class(self.code, "-code")
        self.set_class(self.talks and self.watcher is None, "-talks")  # the user's pane and field take room
        self._fit(self.size.width, self.size.height)
        if self.code and self.watcher is None:
            self.call_after_refresh(self.action_focus_pane, "code")  # code mode invites code (once laid out: it can take focus)
        # After the first paint, footer included (it composes its keys a refresh after the screen's
        # first): copying the world competes with the render for the GIL.
        self.call_after_refresh(self.call_after_refresh, partial(self.start_attempt, ask=True))
        self.set_interval(1.0, self._every_second)
        if self.watcher is None:
            signal = getattr(self.app, "input_signal", None)
            if signal is not None:
                signal.subscribe(self, self._person_input, immediate=True)
            self.set_interval(HEARTBEAT, self._keep_draft)

    def _every_second(self) -> None:
        self._show_preparing()
        if self.watcher is None:
            self._take_out_idle()

    def on_resize(self, event: Resize) -> None:
        self._fit(event.size.width, event.size.height)

    def _fit(self, width: int, height: int) -> None:
        self.set_class(width < NARROW_WIDTH, "-narrow")
        self.set_class(height < SHORT_HEIGHT, "-short")
        self.query_one(TaskPane).max_lines = SHORT_LINES if height < SHORT_HEIGHT else COMPACT_LINES
        self._show_pane(self.pane)

    def action_toggle_task(self) -> None:
        """The task pane whole (however many lines it takes), or back to its few lines."""
        pane = self.query_one(TaskPane)
        pane.expanded = not pane.expanded

    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    def _show_pane(self, pane: str) -> None:
        """In a narrow terminal only `pane` is shown; the tab strip says which."""
        if pane == "catalog" and self.watcher is not None:
            pane = "work"
        self.pane = pane
        for name in PANE_TABS:
            self.set_class(name == pane, f"-show-{name}")
        tabs = self.query_one("#pane-tabs", Tabs)
        if tabs.active != f"pane-{pane}":
            tabs.active = f"pane-{pane}"

    @on(Tabs.TabActivated, "#pane-tabs")
    def _pane_tab_activated(self, event: Tabs.TabActivated) -> None:
        # Only the person's choice (keys or a click on the focused strip) moves focus; the strip
        # following focus posts this too, and a late one must not take focus back.
        pane = str(event.tab.id).removeprefix("pane-")
        if pane != self.pane and event.tabs.has_focus:
            self.action_focus_pane(pane)

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """Focus moved by tab or click: in a narrow terminal the tab strip follows."""
        panes = {
            **{name: "work" for name in ("work", "conversation", "user-log", "ask-user", "answer-user")},
            **{name: name for name in ("catalog", "trace", "diff")},
        }
        for node in event.widget.ancestors_with_self:
            pane = panes.get(str(node.id))
            if pane is not None:
                if pane != self.pane:
                    self._show_pane(pane)
                return

    # -- every pane one key away -----------------------------------------------------------
    def action_focus_pane(self, pane: str) -> None:
        """Focus a pane from anywhere (a field too); in a narrow terminal, show it first."""
        if pane == "code":  # only in code mode (check_action)
            self.query_one(TabbedContent).active = "tab-code"
            pane = "work"
        elif pane == "work" and self.watcher is None:
            self.query_one(TabbedContent).active = "tab-call"
        self._show_pane(pane)
        self._focus_pane(pane)  # now: focus left in a pane just hidden would pull its tab back
        self.call_after_refresh(self._focus_pane, pane)  # again once a pane just shown can take it

    def _focus_pane(self, pane: str) -> None:
        if pane == "catalog":
            self.query_one(ToolCatalog).focus()
        elif pane == "work" and self.watcher is not None:
            self.query_one("#conversation", RichLog).focus()
        elif pane == "work":
            work = self.query_one(TabbedContent)
            if work.active == "tab-code":
                self.query_one(CodeEditor).query_one(TextArea).focus()
                return
            composer = self.query_one(CallComposer)
            if composer.tool is None:
                work.query_one(Tabs).focus()  # no tool chosen yet: nothing to type in, the tab takes focus
            else:
                composer.focus()
        elif pane == "trace":
            self.query_one(CallTrace).focus_newest()  # where v and enter act at once
        elif pane == "diff":
            self.query_one(DiffView).focus()

    def action_find_tool(self) -> None:
        if self.watcher is None:
            self._show_pane("catalog")
            self.call_after_refresh(lambda: self.query_one("#catalog-search", Input).focus())

    def action_back(self) -> None:
        """`esc` leaves a field (focus goes to its pane's list or the trace); otherwise it leaves
        the screen, keeping an unsubmitted attempt to resume. It never discards one."""
        focused = self.focused
        if focused is not None and focused.id == "code-output-scroll":  # the block's output: back to the code
            self.query_one(CodeEditor).query_one(TextArea).focus()
            return
        if isinstance(focused, Input | Select | TextArea):
            if focused.id == "catalog-search":
                self.query_one(ToolCatalog).focus()
            elif self.narrow:
                self.query_one("#pane-tabs", Tabs).focus()
            else:
                self.query_one(CallTrace).focus()
            return
        if len(self.app.screen_stack) > 2:
            self._say_kept()
            self.app.pop_screen()

    def _say_kept(self) -> None:
        trial = self.trial
        draft = self._current_draft()
        typed = draft is not None and not draft.empty
        if self.watcher is None and trial is not None and not trial.finished and (trial.tool_calls or typed or self.resumed_from):
            what = f"{trial.tool_calls} call{'s' if trial.tool_calls != 1 else ''}" + (" and your unsent work" if typed else "")
            self.app.notify(
                f"attempt at {self.task_spec.id} kept ({what}): open the task again to resume it",
                title="Not submitted",
                timeout=8,
            )

    def on_unmount(self) -> None:
        self._abandon()

    # -- attempts --------------------------------------------------------------------------
    def start_attempt(self, *, ask: bool = False, resume: Path | None = None) -> None:
        """Open a trial in a worker; with `ask`, first offer to resume an unfinished attempt."""
        self.generation += 1
        self.submitted = False
        self.summary = None
        resume = resume or self._resume
        self._resume = None
        self._preparing = (
            ("rebuilding the attempt from its calls", monotonic()) if resume else ("preparing a private copy of the world", monotonic())
        )
        self._show_preparing()
        self._open_trial(self.generation, ask=ask and self.watcher is None, resume=resume)

    def _show_preparing(self) -> None:
        """While the trial opens: what is being done, for how long so far, and that typing is not lost."""
        if self._preparing is None:
            return
        what, since = self._preparing
        seconds = int(monotonic() - since)
        kept = " · what you type is kept" if self.watcher is None else ""
        self.query_one(TaskPane).status = f"{what}… {seconds} s{kept}" if seconds else f"{what}…{kept}"

    @work(thread=True, group="trial", exit_on_error=False)
    def _open_trial(self, generation: int, *, ask: bool, resume: Path | None) -> None:
        draft = None
        try:
            if self.watcher is not None:
                solver = dict(self.watcher.config())
                trial = recorded_trial(self.task_spec, str(solver.get("name", "watch")), solver, code=self.code)
            elif resume is not None:
                trial = resume_trial(self.task_spec, resume)
                draft = load_draft(resume)
            else:
                left = unfinished_attempt(self.task_spec) if ask else None
                if left is not None:
                    self.post_message(self.ResumeOffered(generation, left))
                    return
                trial = human_trial(self.task_spec, code=self.code, blind=self.blind)
        except Exception as exc:  # the world cannot be built or copied, the attempt not resumed: said, not a crash
            self.post_message(self.TrialReady(generation, None, f"{type(exc).__name__}: {exc}", resumed=resume))
            return

        def listener(kind: str, event: SessionEvent) -> None:
            self.post_message(self.TrialEvent(generation, event))

        trial.listeners.append(listener)
        self.post_message(self.TrialReady(generation, trial, resumed=resume, draft=draft))

    def on_solve_screen_resume_offered(self, message: ResumeOffered) -> None:
        if message.generation != self.generation:
            return
        left = message.attempt
        mode = ("code" if left.code else "tools") + (", blind" if left.blind else "")
        unsent = []
        if left.draft is not None and left.draft.code.strip():
            lines = len(left.draft.code.strip().splitlines())
            unsent.append(f"an unsent code block ({lines} line{'s' if lines != 1 else ''})")
        if left.draft is not None and left.draft.composer_text:
            unsent.append(f"a {left.draft.composer.get('tool') if left.draft.composer else ''} call being composed")
        text = (
            f"You left an attempt at {self.task_spec.id} without submitting it: "
            f"{left.calls} call{'s' if left.calls != 1 else ''}, {clock(left.seconds)} spent, {mode} mode"
            + "".join(f", {what}" for what in unsent)
            + ".\n\nResume it (the world is rebuilt from its calls, your unsent work put back), or start over (the attempt is deleted)?"
        )
        self.query_one(TaskPane).status = "an unsubmitted attempt: resume or start over"
        self.app.push_screen(ResumeDialog(text, can_go_back=len(self.app.screen_stack) > 2), partial(self._resume_chosen, left))

    def _resume_chosen(self, left: UnfinishedAttempt, choice: ResumeChoice | None) -> None:
        if choice == "back":
            if len(self.app.screen_stack) > 2:
                self.app.pop_screen()
            return
        if choice == "restart":
            discard_session(left.session)
            self.start_attempt()
        elif (left.code, left.blind) == (self.code, self.blind):
            self.start_attempt(resume=left.session)
        else:  # the attempt was made in another mode: reopen in its mode
            self.app.switch_screen(SolveScreen(self.task_spec, code=left.code, blind=left.blind, resume=left.session))

    def on_solve_screen_trial_ready(self, message: TrialReady) -> None:
        pane = self.query_one(TaskPane)
        if message.generation == self.generation:
            self._preparing = None
        if message.trial is None:
            if message.resumed is not None:
                self._cannot_resume(message.resumed, str(message.error))
            pane.status = f"cannot start the trial: {message.error}"
            return
        if message.generation != self.generation or not self.is_mounted:
            if message.resumed is not None:
                message.trial.close()  # an attempt resumed for nothing stays as it was
            else:
                discard(message.trial)
            return
        self.trial = message.trial
        self.resumed_from = message.resumed
        if self.watcher is None and message.trial.writer is not None:
            self.drafts = DraftKeeper(message.trial.writer.path)
            self.idle = IdleClock()  # the time before the attempt was open is not the person's
        pane.actor = self.domain.actor_label(self.trial.conn, self.trial.actor)
        scenario = self.task_spec.scenario
        if scenario is not None and self.trial.turn_index < len(scenario.turns):
            turn = scenario.turns[self.trial.turn_index]
            pane.turn = f"turn {self.trial.turn_index + 1}/{len(scenario.turns)} · {turn.kind.replace('_', '-')}"
            pane.request = turn.message
        if self.blind:
            pane.start_timer(already=self.trial.seconds)
        if message.resumed is not None:
            self.query_one(CallTrace).set_calls(self.trial.history)
            restored = self._restore_draft(message.draft) if message.draft is not None else []
            calls = f"{self.trial.tool_calls} call{'s' if self.trial.tool_calls != 1 else ''}"
            self.notify(
                f"resumed with {calls}" + "".join(f" and {what}" for what in restored) + "; the world is as you left it",
                title="Resumed",
            )
        self._draft_changed()  # the attempt's first draft: what the screen holds now
        self._set_status()
        self.refresh_diff()
        if self.play_user:
            self.trial.user = PersonUser(self._await_person, self.task_spec.user_profile)
        if self.watcher is not None and self.gate is not None:
            self._run_watch(self.trial, self.generation)
        self.refresh_bindings()
        queued, self._queued = self._queued, None
        if queued is not None:  # F5 or ctrl+r pressed while the copy was prepared: done now
            self.post_message(queued)

    def _cannot_resume(self, path: Path, error: str) -> None:
        def answered(discard_it: bool | None) -> None:
            if discard_it:
                discard_session(path)
                self.start_attempt()
            elif len(self.app.screen_stack) > 2:
                self.app.pop_screen()

        self.app.push_screen(
            ConfirmDialog(f"The unsubmitted attempt cannot be resumed:\n{error}\n\nDelete it and start over?", yes="Delete and start over"),
            answered,
        )

    def _set_status(self, extra: str = "") -> None:
        trial = self.trial
        if trial is None:
            return
        parts = [f"{trial.tool_calls} call{'s' if trial.tool_calls != 1 else ''}"]
        if self.watcher is not None and self.gate is not None and not self.submitted:
            parts.insert(0, "paused (p runs, n steps)" if self.gate.paused else f"running at {speed_label(self.gate.rate)}")
            parts.append(f"turn {trial.turns}")
        if self.summary is not None:
            parts.insert(0, self._verdict())
        elif self.watcher is None:
            parts.append("ctrl+s submits")
        if extra:
            parts.append(extra)
        self.query_one(TaskPane).status = " · ".join(parts)

    def _verdict(self) -> str:
        summary = self.summary
        assert summary is not None
        grade = self.trial.final_grade if self.trial is not None else None
        if grade is None:  # an infrastructure error: recorded, not graded
            return f"ended: {summary.termination}" + (f" ({summary.error})" if summary.error else "")
        if self.watcher is None:  # a person: the outcome in words, not the termination code
            return f"{grade.summary()} ({human_outcome(summary.termination)})"
        return f"{grade.summary()} ({summary.termination})"

    def _abandon(self) -> None:
        """The screen goes away: a watched solver stops; a person's unsubmitted attempt stays to be
        resumed (one with no call is dropped: there is nothing to lose)."""
        if self.gate is not None:
            self.gate.close()
        self._answer(None)  # a model waiting on the person's answer is let go
        trial = self.trial
        if trial is not None and not trial.finished and self.watcher is None:
            draft = self._current_draft()
            if trial.tool_calls == 0 and self.resumed_from is None and (draft is None or draft.empty):
                if self.drafts is not None:
                    self.drafts.drop()
                discard(trial)
                return
            self._take_out_idle()
            if self.drafts is not None and draft is not None:
                self.drafts.offer(self._current_draft() or draft)  # with the time it took, now
                self.drafts.write()  # here, not in a worker: the app may be closing
            trial.close()

    # -- drafts and time -------------------------------------------------------------------
    def _person_input(self, _event: object) -> None:
        idle = self.idle.touch()
        if not self.busy:  # waiting on a call is work
            self._take_out(idle)

    def _take_out_idle(self) -> None:
        if not self.busy:
            self._take_out(self.idle.excess())

    def _take_out(self, seconds: float) -> None:
        """Idle time beyond the cap leaves the attempt's time (and the blind timer)."""
        trial = self.trial
        if seconds <= 0 or trial is None or trial.finished or self.watcher is not None:
            return
        taken = leave_out(trial, seconds)
        for pane in self.query(TaskPane):  # none when the screen is going away
            pane.leave_out(taken)

    def _current_draft(self) -> Draft | None:
        """The attempt's unsent work (as last typed) and its time now; None when there is no open
        attempt of a person's. Read from what the widgets last reported, not the widgets: when the
        screen goes away they are gone first."""
        trial = self.trial
        if trial is None or trial.finished or self.watcher is not None or self.submitted:
            return None
        code, composer = self._typed
        return Draft(trial.seconds, code, composer)

    def _keep_draft(self) -> None:
        """Offer the current draft and write it in a worker."""
        self._draft_timer = None
        draft = self._current_draft()
        if draft is None or self.drafts is None or self.drafts.dropped:
            return
        self._take_out_idle()
        self.drafts.offer(self._current_draft() or draft)
        self._write_draft(self.drafts)

    @work(thread=True, group="draft", exit_on_error=False)
    def _write_draft(self, keeper: DraftKeeper) -> None:
        error = keeper.error
        keeper.write()
        if keeper.error and keeper.error != error:  # said once, not at every keystroke
            self.app.call_from_thread(self.notify, printable(keeper.error), title="Draft", severity="warning", markup=False)

    def _draft_changed(self) -> None:
        """The editor or the composer changed: written once typing pauses."""
        if self.watcher is not None:
            return
        self._typed = (self.query_one(CodeEditor).code if self.code else "", self.query_one(CallComposer).draft())
        if self.drafts is None:
            return
        if self._draft_timer is not None:
            self._draft_timer.stop()
        self._draft_timer = self.set_timer(SAVE_DELAY, self._keep_draft)

    @on(CallComposer.Edited)
    def _composer_edited(self) -> None:
        self._draft_changed()

    @on(TextArea.Changed, "#code-input")
    def _code_edited(self) -> None:
        self._draft_changed()

    def _restore_draft(self, draft: Draft) -> list[str]:
        """A resumed attempt's unsent work, back where it was typed."""
        restored = []
        if draft.code.strip() and self.code:
            editor = self.query_one(CodeEditor)
            typed = editor.code
            editor.code = draft.code if not typed.strip() else draft.code.rstrip("\n") + "\n" + typed  # typed meanwhile: kept below
            restored.append("your unsent code block")
        composer = draft.composer or {}
        tool = self.tools.get(str(composer.get("tool")))
        if tool is not None and self.watcher is None:
            self.query_one(CallComposer).restore_draft(tool, composer)
            self.query_one(ToolCatalog).select(tool.name)
            if draft.composer_text:
                restored.append(f"the {tool.name} call you were composing")
        return restored

    # -- the person's calls ----------------------------------------------------------------
    def _can_act(self) -> bool:
        if self.trial is None:
            self.notify("the world copy is still being prepared", severity="warning")
            return False
        if self.submitted:
            self.notify("this attempt is submitted: ctrl+n starts a new one", severity="warning")
            return False
        if self.busy:
            self.notify("a call is still running", severity="warning")
            return False
        return True

    @on(ToolCatalog.Selected)
    async def _tool_chosen(self, message: ToolCatalog.Selected) -> None:
        if message.name == "exec_code":
            self.action_focus_pane("code")
            return
        tool = self.tools.get(message.name)
        if tool is not None:
            origin = self.focused
            self.query_one(TabbedContent).active = "tab-call"
            self._show_pane("work")
            composer = self.query_one(CallComposer)
            composer.set_tool(tool)
            await composer.form_ready()  # the form is rebuilt for the tool first: then its first field takes the focus
            focused, catalog = self.focused, self.query_one(ToolCatalog)
            # ... unless the person has gone to another pane meanwhile (the trace, the diff)
            if focused is None or focused is origin or any(node in (composer, catalog) for node in focused.ancestors_with_self):
                composer.focus_first()

    def _queue_while_preparing(self, message: Message, what: str) -> bool:
        """While the trial opens, a call or a block asked for is kept and sent once it is open."""
        if self.trial is not None or self._preparing is None:
            return False
        self._queued = message
        self.notify(f"{what} as soon as the world copy is ready", title="Kept")
        return True

    @on(CallComposer.Submitted)
    def _call_submitted(self, message: CallComposer.Submitted) -> None:
        again = CallComposer.Submitted(message.tool, message.args, raw=message.raw, all_pages=message.all_pages)
        if self._queue_while_preparing(again, f"{message.tool} runs"):
            return
        if self._can_act():
            self.busy = True
            if message.all_pages:
                self._run_pages(message.tool, message.args)
            else:
                self._run_call(message.tool, message.args)

    @on(CodeEditor.Run)
    def _code_submitted(self, message: CodeEditor.Run) -> None:
        if self._queue_while_preparing(CodeEditor.Run(message.code), "the block runs"):
            return
        if self._can_act():
            self.busy = True
            self.query_one(CodeEditor).running = True
            self._run_code(message.code)

    @on(CallTrace.Selected)
    def _call_selected(self, message: CallTrace.Selected) -> None:
        """A call picked in the trace comes back into the composer, to edit and send again."""
        call = as_tool_call(message.entry)
        tool = self.tools.get(str(call.tool))
        if tool is None or self.watcher is not None or call.parent:
            return
        self.query_one(TabbedContent).active = "tab-call"
        self.query_one(ToolCatalog).select(tool.name)
        self.query_one(CallComposer).set_tool(tool, call.args if isinstance(call.args, dict) else None)

    @on(CodeEditor.ViewRecords)
    def _view_block_records(self) -> None:
        """`v` on the code output: the last block's result in the viewer (its records a table)."""
        blocks = [call for call in (self.trial.history if self.trial is not None else []) if call.tool == "exec_code" and not call.parent]
        if blocks:
            self.post_message(CallTrace.ViewResult(blocks[-1]))

    @on(CallTrace.ViewResult)
    def _view_result(self, message: CallTrace.ViewResult) -> None:
        """A call's result in the full-screen viewer; a value taken there goes into the composer."""
        from .result_view import ResultScreen

        can_take = self.watcher is None and not self.submitted and self.query_one(CallComposer).tool is not None
        history = self.trial.history if self.trial is not None else []
        self.app.push_screen(ResultScreen(message.call, can_take=can_take, pages=page_series(history, message.call)), self._take_value)

    def _take_value(self, value: Any) -> None:
        if value is None:
            return
        field = self.query_one(CallComposer).take_value(value)
        if field is None:
            self.notify("no field can take that value: choose a tool first", severity="warning")
            return
        self.query_one(TabbedContent).active = "tab-call"
        self._show_pane("work")
        self.notify(printable(f"{preview(value, 40)} → {field}"), title="Value taken", markup=False)  # a value is anyone's text

    @work(thread=True, group="calls", exit_on_error=False)
    def _run_call(self, tool: str, args: dict[str, Any]) -> None:
        trial = self.trial
        try:
            if trial is not None:
                trial.call(tool, args)
        finally:
            self.app.call_from_thread(self._call_done)

    @work(thread=True, group="calls", exit_on_error=False)
    def _run_pages(self, tool: str, args: dict[str, Any]) -> None:
        """A list tool's page in `args` (default the first) and every page after it, each page a
        call of its own (recorded and counted as the person would have made them one by one),
        until its last page, an error, or MAX_PAGES."""
        trial = self.trial
        given = args.get(PAGE)
        page: int = given if isinstance(given, int) and not isinstance(given, bool) else 1
        first, pages, records, stopped = page, 0, 0, ""
        try:
            while trial is not None and pages < MAX_PAGES:
                result = trial.call(tool, {**args, PAGE: page}).payload()
                pages += 1
                items = result.get("items") if isinstance(result, dict) else None
                last = result.get("total_pages") if isinstance(result, dict) else None
                records += len(items) if isinstance(items, list) else 0
                if not isinstance(last, int) or not isinstance(items, list):
                    stopped = "" if isinstance(result, dict) and "error" not in result else " (stopped at an error)"
                    break
                if page >= last:
                    break
                page += 1
            else:
                stopped = f" (stopped after {MAX_PAGES} pages)" if trial is not None else ""
        finally:
            span = f"page {first}" if pages <= 1 else f"pages {first}-{first + pages - 1}"
            said = f"{tool}: {span}, {records} record{'s' if records != 1 else ''}, one call each{stopped}; v on any of them shows them all"
            self.app.call_from_thread(self._call_done)
            self.app.call_from_thread(self.notify, said, title="All pages")

    @work(thread=True, group="calls", exit_on_error=False)
    def _run_code(self, code: str) -> None:
        trial = self.trial
        result = None
        try:
            if trial is not None:
                result = trial.exec_code(code)
        finally:
            payload = None if result is None else result.for_solver()
            ok = bool(result and result.ok)
            self.app.call_from_thread(self._code_done, ok, payload)

    def _call_done(self) -> None:
        self.busy = False
        self.idle.touch()  # a call's running time is work, not idleness: the gap starts at its result

    def _code_done(self, ok: bool, payload: Any) -> None:
        self.busy = False
        self.idle.touch()
        editor = self.query_one(CodeEditor)
        editor.running = False
        editor.show_output(ok, payload)

    # -- what the trial records ------------------------------------------------------------
    def on_solve_screen_trial_event(self, message: TrialEvent) -> None:
        if message.generation != self.generation:
            return
        event = message.event
        if isinstance(event, TurnEndEvent) or (isinstance(event, MessageEvent) and event.scenario_turn is not None):
            self._show_turn(event)
        if isinstance(event, ToolCallEvent):
            self.query_one(CallTrace).add_call(event)
            if self.watcher is not None and not event.parent:
                self._log_call(event)
            self._set_status()
            self.refresh_diff()
        elif event.event in ("message", "api_error", "bad_response") and self.watcher is not None:
            self._log_event(event)
        elif isinstance(event, MessageEvent) and event.role in ("assistant", "user") and self.talks:
            who = "you" if event.role == "assistant" else f"user ({event.user})" if event.user else "user"
            self.query_one("#user-log", RichLog).write(
                Text(printable(f"{who}: "), style="bold") + Text(printable(str(event.content or "")))
            )

    # -- a scenario's turns ----------------------------------------------------------------
    def _show_turn(self, event: SessionEvent) -> None:
        """The task pane follows the scenario: the turn begun shows its message; the last turn's end says so."""
        scenario = self.task_spec.scenario
        if scenario is None:
            return
        pane = self.query_one(TaskPane)
        count = len(scenario.turns)
        if isinstance(event, MessageEvent) and event.scenario_turn is not None and event.scenario_turn < count:
            turn = scenario.turns[event.scenario_turn]
            pane.turn = f"turn {event.scenario_turn + 1}/{count} · {turn.kind.replace('_', '-')}"
            pane.request = turn.message
            self.refresh_diff()
        elif isinstance(event, TurnEndEvent) and event.index == count - 1:
            pane.turn = f"all {count} turns done"

    def action_end_turn(self) -> None:
        """A person ends the scenario's current turn (it is graded as it stands) and gets the next."""
        if not self._can_act():
            return
        assert self.trial is not None
        if self.trial.turns_left <= 1:
            self.notify("this is the scenario's last turn: ctrl+s submits", severity="warning")
            return
        self.busy = True
        self._run_end_turn(self.trial)

    @work(thread=True, group="calls", exit_on_error=False)
    def _run_end_turn(self, trial: Trial) -> None:
        try:
            trial.end_turn()
        finally:
            self.app.call_from_thread(self._call_done)

    # -- talking with the user -------------------------------------------------------------
    @on(Input.Submitted, "#ask-user")
    def _ask_submitted(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question or not self._can_act():
            return
        event.input.value = ""
        self.busy = True
        self._run_question(question)

    @work(thread=True, group="calls", exit_on_error=False)
    def _run_question(self, question: str) -> None:
        trial = self.trial
        try:
            if trial is not None:
                trial.message("assistant", question)
                if asyncio.run(trial.ask_user(question)) is None:
                    self.app.call_from_thread(self.notify, "the user has nothing to say to that (a question has a '?')", title="The user")
        finally:
            self.app.call_from_thread(self._call_done)

    async def _await_person(self, message: str) -> str | None:
        """PersonUser's question to the person, from the watched model's thread: the answer field
        opens, and the model waits until the person presses enter (an empty answer ends the talk)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        self.question = (loop, future)
        self.app.call_from_thread(self._open_answer)
        return await future

    def _open_answer(self) -> None:
        field = self.query_one("#answer-user", Input)
        field.disabled = False
        field.focus()
        self.notify("the model is talking to you: answer below, or press enter on nothing to end", title="You are the user")

    @on(Input.Submitted, "#answer-user")
    def _answer_submitted(self, event: Input.Submitted) -> None:
        if self.question is None:
            return
        self._answer(event.value.strip())
        event.input.value = ""
        event.input.disabled = True

    def _answer(self, text: str | None) -> None:
        pending, self.question = self.question, None
        if pending is not None:
            loop, future = pending

            def give() -> None:
                if not future.done():
                    future.set_result(text)

            with contextlib.suppress(RuntimeError):  # the watch is over and its loop closed: nobody is waiting
                loop.call_soon_threadsafe(give)

    def _log_call(self, event: ToolCallEvent) -> None:
        """A watched solver's call in the conversation (the oracle has no messages: its steps are its calls)."""
        text = Text(f"{'✓' if event.ok else '✗'} {event.tool}", style="bold" if event.ok else "bold red")
        args = shown_args(event.args)
        if args:
            text.append(" " + preview(args, 80), style="dim")
        if self.watcher is not None and self.watcher.name == "oracle":
            total = len(self.task_spec.reference_solution)
            text = Text(f"step {self.trial.tool_calls if self.trial else '?'}/{total} ", style="dim") + text
        self.query_one("#conversation", RichLog).write(printable_text(text))

    def _log_event(self, event: SessionEvent) -> None:
        log = self.query_one("#conversation", RichLog)
        if isinstance(event, MessageEvent):
            if event.role == "system":
                return
            text = Text(f"{event.role}", style="bold")
            if event.turn:
                text.append(f" · turn {event.turn}", style="dim")
            # The model's words: made printable before Rich sees them (a Text drops a bare \r silently).
            if event.reasoning:
                text.append("\n" + printable(str(event.reasoning)), style="italic dim")
            if event.content:
                text.append("\n" + printable(str(event.content)))
            if event.tool_calls:
                text.append(f"\n→ {', '.join(event.called_tools())}", style="dim")
            log.write(printable_text(text))  # and the names of the tools it called
        elif isinstance(event, ApiErrorEvent):
            log.write(Text(printable(f"{event.event}: {event.kind or ''} {event.error or ''}".strip()), style="bold red"))
        else:
            log.write(Text(event.event, style="bold red"))

    # -- the live diff ---------------------------------------------------------------------
    def refresh_diff(self) -> None:
        """Recompute the diff in a worker; calls arriving meanwhile ask for one more pass, not one each."""
        if self._diff_running:
            self._diff_again = True
            return
        if self.trial is None or self.trial.finished:
            return
        self._diff_running = True
        self._compute_diff(self.trial, self.generation)

    @work(thread=True, group="diff", exit_on_error=False)
    def _compute_diff(self, trial: Trial, generation: int) -> None:
        try:
            actual = trial.diff()
            result = explain(trial.expected_now, actual, self.domain.schema)
        except Exception:  # the trial was closed under us (a new attempt), or a call raced it
            self.app.call_from_thread(self._diff_failed)
            return
        self.post_message(self.DiffReady(generation, result, actual))

    def _diff_failed(self) -> None:
        # A pass asked for meanwhile still runs: dropping it would leave the diff of an earlier
        # call on screen (and a test waiting on the new one). A closed trial is not diffed again.
        self._diff_running = False
        if self._diff_again:
            self._diff_again = False
            self.refresh_diff()

    def on_solve_screen_diff_ready(self, message: DiffReady) -> None:
        self._diff_running = False
        if message.generation == self.generation and not self.submitted:
            self._show_diff(message.result, message.actual)
        if self._diff_again:
            self._diff_again = False
            self.refresh_diff()

    def _show_diff(self, result: Grade | None, actual: Diff) -> None:
        self.last_diff = DiffState(result, actual)
        hidden = self.blind and not self.submitted
        self.query_one(DiffView).show(result, actual, blind=hidden)

    # -- submit, reset ---------------------------------------------------------------------
    def action_submit(self) -> None:
        if self.watcher is not None:
            self.notify("the watched solver submits when it stops", severity="warning")
            return
        if not self._can_act():
            return
        assert self.trial is not None
        if self.trial.tool_calls == 0:  # most likely a slip of the keys: a scored failure otherwise
            generation = self.generation

            def answered(submit: bool | None) -> None:
                if submit and generation == self.generation and self._can_act():
                    self._submit()

            self.app.push_screen(ConfirmDialog("Submit with no calls? The attempt is graded as it is.", yes="Submit"), answered)
            return
        self._submit()

    def _submit(self) -> None:
        self._take_out_idle()
        self.submitted = True
        self.busy = True
        self.query_one(TaskPane).stop_timer()
        self._finish(self.trial, self.generation)

    @work(thread=True, group="calls", exit_on_error=False)
    def _finish(self, trial: Trial | None, generation: int) -> None:
        if trial is None:
            return
        summary = trial.finish(AGENT_STOPPED)
        if self.drafts is not None and trial.writer is not None and self.drafts.session == trial.writer.path:
            self.drafts.drop()  # submitted: nothing is left to resume
        self.post_message(self.Graded(generation, summary, *self._final(trial)))

    def _final(self, trial: Trial) -> tuple[Grade | None, Diff | None]:
        """The finished trial's diff, explained against the expected one (now shown, blind or not)."""
        if trial.final_diff is None:
            return None, None
        return explain(self.task_spec.expected_diff, trial.final_diff, self.domain.schema), trial.final_diff

    def on_solve_screen_graded(self, message: Graded) -> None:
        if message.generation != self.generation:
            return
        self.busy = False
        self.submitted = True
        self.summary = message.summary
        self.query_one(TaskPane).stop_timer()
        if message.actual is not None:
            self._show_diff(message.result, message.actual)
            self.query_one(DiffView).border_title = "Diff: expected vs actual"
        if message.summary is not None:
            self._set_status()
            # The verdict may quote an error (an API's message): text, never markup.
            self.notify(
                printable(self._verdict()),
                title="Graded",
                timeout=8,
                severity="information" if message.summary.passed else "warning",
                markup=False,
            )
        self.refresh_bindings()

    def action_reset(self) -> None:
        """A new attempt. An unsubmitted one with calls is discarded only when the person confirms."""
        if self.watcher is None and self.busy:
            self.notify("a call is still running", severity="warning")
            return
        trial = self.trial
        if self.watcher is None and trial is not None and not trial.finished and trial.tool_calls:
            count = f"{trial.tool_calls} call{'s' if trial.tool_calls != 1 else ''}"

            def answered(discard_it: bool | None) -> None:
                if discard_it and trial is self.trial:
                    self._reset()

            self.app.push_screen(
                ConfirmDialog(f"Discard this attempt ({count})? It is deleted and cannot be resumed.", yes="Discard"), answered
            )
            return
        self._reset()

    def _reset(self) -> None:
        if self.watcher is not None and self.gate is not None:
            self.gate.close()
            self.gate = StepGate(paused=self.gate.paused, rate=self.gate.rate)
        if self.trial is not None and not self.trial.finished and self.watcher is None:
            if self.drafts is not None:
                self.drafts.drop()
            discard(self.trial)
        self.drafts = None
        self.trial = None
        self.resumed_from = None
        self.last_diff = None
        self.query_one(CallTrace).clear_calls()
        if self.watcher is not None:
            self.query_one("#conversation", RichLog).clear()
        if self.blind:
            self.query_one(DiffView).border_title = "Diff: your changes"
        self.start_attempt()

    # -- watching a solver -----------------------------------------------------------------
    @work(thread=True, group="watch", exit_on_error=False)
    def _run_watch(self, trial: Trial, generation: int) -> None:
        assert self.gate is not None and self.watcher is not None
        summary = watch(trial, self.watcher, TrialLimits(), self.gate)  # a solver's failure is recorded, not raised
        self.post_message(self.Graded(generation, summary, *self._final(trial)))

    def action_pause(self) -> None:
        if self.gate is None:
            return
        if self.gate.paused:
            self.gate.resume()
        else:
            self.gate.pause()
        self._set_status()

    def action_step(self) -> None:
        if self.gate is not None:
            self.gate.step()
            self._set_status("one step")

    def action_speed(self, change: int) -> None:
        """One speed faster or slower (steps per second while running)."""
        if self.gate is None:
            return
        index = SPEEDS.index(self.gate.rate) if self.gate.rate in SPEEDS else 1
        self.gate.set_rate(SPEEDS[min(max(index + change, 0), len(SPEEDS) - 1)])
        self._set_status(f"speed {speed_label(self.gate.rate)}")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pause", "step", "speed"):
            return self.watcher is not None and not self.submitted
        if action == "end_turn":
            return self.watcher is None and not self.submitted and self.task_spec.scenario is not None
        if action in ("submit", "find_tool"):
            return self.watcher is None and not self.submitted
        if action == "focus_pane":
            pane = parameters[0] if parameters else None
            if pane == "code":
                return self.code and self.watcher is None
            return not (pane == "catalog" and self.watcher is not None)
        if action == "back":
            return True  # esc always leaves a field; it leaves the screen only when there is one below
        return super().check_action(action, parameters)


def page_series(history: list[ToolCallEvent], call: ToolCallEvent) -> list[ToolCallEvent]:
    """The pages `call` was fetched with: the calls around it in `history`, one after another at
    the top level, of the same tool and arguments but the page, each holding its page of items,
    in page order (what "All pages" makes). Just [call] when it stands alone."""

    def key(event: ToolCallEvent) -> Any:
        args = event.args if isinstance(event.args, dict) else None
        if event.parent or not event.ok or args is None or not isinstance(event.result, dict) or "items" not in event.result:
            return None
        return event.tool, sorted((k, repr(v)) for k, v in args.items() if k != PAGE)

    calls = [event for event in history if not event.parent]
    ids = [event.id for event in calls]
    if call.id not in ids or key(call) is None:
        return [call]
    at = ids.index(call.id)
    start, end = at, at
    while start > 0 and key(calls[start - 1]) == key(call) and page_of(calls[start - 1]) == page_of(calls[start]) - 1:
        start -= 1
    while end + 1 < len(calls) and key(calls[end + 1]) == key(call) and page_of(calls[end + 1]) == page_of(calls[end]) + 1:
        end += 1
    return calls[start : end + 1]


def page_of(call: ToolCallEvent) -> int:
    page = call.result.get(PAGE) if isinstance(call.result, dict) else None
    return page if isinstance(page, int) else -1


def monotonic() -> float:
    """The clock of the preparing time shown (the task pane's: tests freeze it)."""
    return task_pane.monotonic()


def speed_label(rate: float | None) -> str:
    if rate is None:
        return "full speed"
    return f"{rate:g} step{'s' if rate != 1 else ''}/s"
