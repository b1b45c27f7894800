"""The solve screen: one trial of one task, against a private copy of its world.

A person picks tools from the catalog, fills the composer (or writes exec_code in code mode) and
watches the trace and the live diff; or the screen watches a solver (a model, the oracle) with
pause and step. Every attempt is recorded as a session (solver "human" for a person). Tool calls,
grading and the watched solver run in thread workers; the trial reports each recorded event
through a listener that posts a message, so the screen never waits on the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Footer, Header, RichLog, TabbedContent, TabPane

from ...domains import get_domain
from ...domains.engine.tools import Tool
from ...sessions.attempts import HUMAN, discard, human_trial, recorded_trial
from ...sessions.events import ApiErrorEvent, MessageEvent, SessionEvent, ToolCallEvent
from ...sessions.solvers.base import Solver
from ...sessions.trial import AGENT_STOPPED, Trial, TrialLimits, TrialSummary
from ...sessions.watch import StepGate, watch
from ...tasks.diff import Diff
from ...tasks.grading import Grade, explain
from ...tasks.spec import Task
from ..widgets.catalog import ToolCatalog
from ..widgets.code_editor import CodeEditor
from ..widgets.composer import CallComposer
from ..widgets.diff_view import DiffView
from ..widgets.task_pane import TaskPane
from ..widgets.trace import CallTrace
from .base import EBenchScreen

EXEC_CODE_HELP = (
    "Run Python in which every tool is a function (keyword arguments; results are dicts); "
    "print() output and the last expression's value come back."
)


# What ended a person's attempt, in words: the termination codes are about a model's loop.
HUMAN_OUTCOMES = {
    "agent_stopped": "submitted",
    "max_turns": "turn limit reached",
    "max_tool_calls": "call limit reached",
    "time_limit": "time ran out",
    "context_limit": "context limit reached",
    "agent_error": "ended by an error",
    "infra_error": "ended by a harness error",
}


def is_human(solver: dict[str, Any]) -> bool:
    """Whether a session's solver is a person (the app's human attempts)."""
    return solver.get("name") == HUMAN


def human_outcome(termination: object) -> str:
    """How a person's attempt ended, in words ("submitted" rather than "agent_stopped")."""
    return HUMAN_OUTCOMES.get(str(termination), str(termination))


@dataclass
class DiffState:
    """What the live diff showed last (tests and the status line read it)."""

    result: Grade | None
    actual: Diff


class SolveScreen(EBenchScreen):
    TITLE = "Solve"
    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit", id="solve.submit"),
        Binding("ctrl+n", "reset", "New attempt", id="solve.reset"),
        Binding("slash", "find_tool", "Find tool", id="solve.find_tool"),
        Binding("p", "pause", "Pause/resume", id="solve.pause"),
        Binding("n", "step", "Step", id="solve.step"),
    ]
    DEFAULT_CSS = """
    SolveScreen #solve-body { height: 1fr; }
    SolveScreen #catalog { width: 34; }
    SolveScreen #catalog Input { width: 100%; }
    SolveScreen #middle { width: 1fr; }
    SolveScreen #work { height: 1fr; min-height: 12; }
    SolveScreen #trace { height: 1fr; }
    SolveScreen #diff { width: 2fr; max-width: 90; }
    SolveScreen #conversation { height: 1fr; }
    """

    # -- messages posted from worker threads -----------------------------------------------
    class TrialReady(Message):
        def __init__(self, generation: int, trial: Trial | None, error: str | None = None) -> None:
            super().__init__()
            self.generation, self.trial, self.error = generation, trial, error

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

    def __init__(self, task: Task, *, code: bool = False, blind: bool = False, watcher: Solver | None = None, paused: bool = False) -> None:
        super().__init__()
        self.task_spec = task
        self.code = code
        self.blind = blind
        self.watcher = watcher
        self.domain = get_domain(task.domain)
        self.trial: Trial | None = None
        self.generation = 0  # bumped by every new attempt: events of an older one are dropped
        self.submitted = False
        self.busy = False  # a call or exec_code block is running (one at a time)
        self.gate = StepGate(paused=paused) if watcher is not None else None
        self.summary: TrialSummary | None = None
        self.last_diff: DiffState | None = None
        self._diff_running = False
        self._diff_again = False
        self.tools: dict[str, Tool] = {tool.name: tool for tool in self.domain.tools}

    # -- layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        mode = ("code" if self.code else "tools") + (" · blind" if self.blind else "")
        if self.watcher is not None:
            mode += f" · watching {self._watcher_label()}"
        yield TaskPane(self.task_spec, now=self.domain.now, mode=mode, id="task")
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
                    with TabbedContent(id="work"):
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
                trace = CallTrace(id="trace")
                trace.add_class("pane")
                trace.border_title = "Trace"
                yield trace
            diff = DiffView(id="diff")
            diff.add_class("pane")
            diff.border_title = "Diff: expected vs actual" if not self.blind else "Diff: your changes"
            yield diff
        yield Footer()

    def _watcher_label(self) -> str:
        assert self.watcher is not None
        return str(self.watcher.config().get("model") or self.watcher.name)

    def on_mount(self) -> None:
        self.sub_title = self.task_spec.id
        # After the first paint: copying the world competes with the render for the GIL.
        self.call_after_refresh(self.start_attempt)

    def on_unmount(self) -> None:
        self._abandon()

    # -- attempts --------------------------------------------------------------------------
    def start_attempt(self) -> None:
        self.generation += 1
        self.submitted = False
        self.summary = None
        self.query_one(TaskPane).status = "preparing a private copy of the world…"
        self._open_trial(self.generation)

    @work(thread=True, group="trial", exit_on_error=False)
    def _open_trial(self, generation: int) -> None:
        try:
            if self.watcher is not None:
                solver = dict(self.watcher.config())
                trial = recorded_trial(self.task_spec, str(solver.get("name", "watch")), solver, code=self.code)
            else:
                trial = human_trial(self.task_spec, code=self.code, blind=self.blind)
        except Exception as exc:  # the world cannot be built or copied: said on screen, not a crash
            self.post_message(self.TrialReady(generation, None, f"{type(exc).__name__}: {exc}"))
            return

        def listener(kind: str, event: SessionEvent) -> None:
            self.post_message(self.TrialEvent(generation, event))

        trial.listeners.append(listener)
        self.post_message(self.TrialReady(generation, trial))

    def on_solve_screen_trial_ready(self, message: TrialReady) -> None:
        pane = self.query_one(TaskPane)
        if message.trial is None:
            pane.status = f"cannot start the trial: {message.error}"
            return
        if message.generation != self.generation or not self.is_mounted:
            discard(message.trial)
            return
        self.trial = message.trial
        pane.actor = self.domain.actor_label(self.trial.conn, self.trial.actor)
        if self.blind:
            pane.start_timer()
        self._set_status()
        self.refresh_diff()
        if self.watcher is not None and self.gate is not None:
            self._run_watch(self.trial, self.generation)
        self.refresh_bindings()

    def _set_status(self, extra: str = "") -> None:
        trial = self.trial
        if trial is None:
            return
        parts = [f"{trial.tool_calls} call{'s' if trial.tool_calls != 1 else ''}"]
        if self.watcher is not None and self.gate is not None and not self.submitted:
            parts.insert(0, "paused" if self.gate.paused else "running")
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
        if self.gate is not None:
            self.gate.close()
        if self.trial is not None and not self.trial.finished and self.watcher is None:
            discard(self.trial)

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
    def _tool_chosen(self, message: ToolCatalog.Selected) -> None:
        if message.name == "exec_code":
            self.query_one(TabbedContent).active = "tab-code"
            self.query_one(CodeEditor).focus()
            return
        tool = self.tools.get(message.name)
        if tool is not None:
            self.query_one(TabbedContent).active = "tab-call"
            composer = self.query_one(CallComposer)
            composer.set_tool(tool)
            self.call_after_refresh(composer.focus_first)  # the form is rebuilt for the tool first

    @on(CallComposer.Submitted)
    def _call_submitted(self, message: CallComposer.Submitted) -> None:
        if self._can_act():
            self.busy = True
            self._run_call(message.tool, message.args)

    @on(CodeEditor.Run)
    def _code_submitted(self, message: CodeEditor.Run) -> None:
        if self._can_act():
            self.busy = True
            self.query_one(CodeEditor).running = True
            self._run_code(message.code)

    @on(CallTrace.Selected)
    def _call_selected(self, message: CallTrace.Selected) -> None:
        """A call picked in the trace comes back into the composer, to edit and send again."""
        call = message.call
        tool = self.tools.get(str(call.tool))
        if tool is None or self.watcher is not None or call.parent:
            return
        self.query_one(TabbedContent).active = "tab-call"
        self.query_one(ToolCatalog).select(tool.name)
        self.query_one(CallComposer).set_tool(tool, call.args if isinstance(call.args, dict) else None)

    @work(thread=True, group="calls", exit_on_error=False)
    def _run_call(self, tool: str, args: dict[str, Any]) -> None:
        trial = self.trial
        try:
            if trial is not None:
                trial.call(tool, args)
        finally:
            self.app.call_from_thread(self._call_done)

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

    def _code_done(self, ok: bool, payload: Any) -> None:
        self.busy = False
        editor = self.query_one(CodeEditor)
        editor.running = False
        editor.show_output(ok, payload)

    # -- what the trial records ------------------------------------------------------------
    def on_solve_screen_trial_event(self, message: TrialEvent) -> None:
        if message.generation != self.generation:
            return
        event = message.event
        if isinstance(event, ToolCallEvent):
            self.query_one(CallTrace).add_call(event)
            self._set_status()
            self.refresh_diff()
        elif event.event in ("message", "api_error", "bad_response") and self.watcher is not None:
            self._log_event(event)

    def _log_event(self, event: SessionEvent) -> None:
        log = self.query_one("#conversation", RichLog)
        if isinstance(event, MessageEvent):
            if event.role == "system":
                return
            text = Text(f"{event.role}", style="bold")
            if event.turn:
                text.append(f" · turn {event.turn}", style="dim")
            if event.reasoning:
                text.append("\n" + str(event.reasoning), style="italic dim")
            if event.content:
                text.append("\n" + str(event.content))
            if event.tool_calls:
                text.append(f"\n→ {', '.join(event.called_tools())}", style="dim")
            log.write(text)
        elif isinstance(event, ApiErrorEvent):
            log.write(Text(f"{event.event}: {event.kind or ''} {event.error or ''}".strip(), style="bold red"))
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
            result = explain(self.task_spec.expected_diff, actual, self.domain.schema)
        except Exception:  # the trial was closed under us (a new attempt): nothing to show
            self.app.call_from_thread(self._diff_failed)
            return
        self.post_message(self.DiffReady(generation, result, actual))

    def _diff_failed(self) -> None:
        self._diff_running = False

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
        self.submitted = True
        self.busy = True
        pane = self.query_one(TaskPane)
        pane.stop_timer()
        self._finish(self.trial, self.generation)

    @work(thread=True, group="calls", exit_on_error=False)
    def _finish(self, trial: Trial | None, generation: int) -> None:
        if trial is None:
            return
        summary = trial.finish(AGENT_STOPPED)
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
            self.notify(self._verdict(), title="Graded", timeout=8, severity="information" if message.summary.passed else "warning")
        self.refresh_bindings()

    def action_reset(self) -> None:
        if self.watcher is not None and self.gate is not None:
            self.gate.close()
            self.gate = StepGate(paused=self.gate.paused)
        elif self.busy:
            self.notify("a call is still running", severity="warning")
            return
        if self.trial is not None and not self.trial.finished and self.watcher is None:
            discard(self.trial)
        self.trial = None
        self.last_diff = None
        self.query_one(CallTrace).clear_calls()
        if self.watcher is not None:
            self.query_one("#conversation", RichLog).clear()
        if self.blind:
            self.query_one(DiffView).border_title = "Diff: your changes"
        self.start_attempt()

    def action_find_tool(self) -> None:
        if self.watcher is None:
            self.query_one(ToolCatalog).focus()

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("pause", "step"):
            return self.watcher is not None and not self.submitted
        if action in ("submit", "find_tool"):
            return self.watcher is None and not self.submitted
        return super().check_action(action, parameters)
