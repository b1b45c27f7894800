"""The replay debugger (`ebench replay RUN_DIR|SESSION_FILE [--failed]`).

`ReplayScreen` lists the trials of runs (filters: failed only, domain, capability, solver, search)
and opens one in a `ReplayTrialScreen`; given one session file it shows that trial directly. The
trial view (`TrialView`) steps through the session's events; the database state at each step is
rebuilt by `ebench.sessions.timeline.Timeline` in a worker thread, and a rebuild whose step is no
longer the current one is dropped, so holding a key down never queues stale work.
"""

from __future__ import annotations

import threading
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Checkbox, DataTable, Footer, Header, Input, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from ...sessions.attempts import human_outcome, is_human
from ...sessions.describe import CODE, DATA, FIELD, GAP, PROSE, STATUS, describe
from ...sessions.perturb import Perturbation
from ...sessions.results import TrialSummary
from ...sessions.runs import RunData
from ...sessions.timeline import (
    Mismatch,
    ReferenceStep,
    Step,
    StepState,
    Timeline,
    TrialRow,
    filter_rows,
    trial_rows,
)
from ...tasks.spec import CAPABILITY_SHORT
from ...terminal import printable, printable_text
from ..render import duration, json_text
from ..widgets.diff_view import DiffView, diff_lines
from ..widgets.record_table import Column, RecordTable
from ..widgets.trace import CallTrace
from .base import CHOOSE_SORT_HELP, FILTER_KEYS, SORT_HELP, SORT_KEYS, EBenchScreen, choose_sort
from .browser import RESULT_LABELS

RESULT_LINES = 40  # a call's result is folded to this many lines in the detail pane
BAR_WIDTH = 40


# -- pure helpers (tested without a screen) -----------------------------------------------------
def position_text(step: int, last: int, calls: int, total_calls: int, point: int | None, width: int = BAR_WIDTH) -> str:
    """ "step 12/40 ███░░░ calls 5/20": a slider-like bar `width` cells long; ✗ marks the point of no return."""
    filled = round(step / last * width) if last else width
    cells = ["█"] * filled + ["░"] * (width - filled)
    if point is not None and last:
        cells[min(width - 1, round(point / last * width))] = "✗"
    text = f"step {step}/{last}  {''.join(cells)}  calls {calls}/{total_calls}"
    if point is not None:
        text += f"  ✗ no return at step {point}"
    return text


def step_detail(step: Step, *, dark: bool = True) -> Text:
    """The event of one step for people, drawn from its description (`sessions.describe`): a
    message's content and reasoning, a call's arguments and result, an API error, the end's grade."""
    text = Text()
    text.append(f"Step {step.index} · {step.kind}", style="bold underline")
    text.append(f"  (t = {step.event.t} s)\n\n", style="dim")
    # The session's text (a model's, a tool's, the task file's) is made printable before Rich sees
    # it: a Text drops a carriage return or a bell silently, and a reader should see them.
    for part in describe(step.event).parts:
        if part.kind == FIELD:
            text.append(f"{part.name}: ", style="bold")
            text.append(printable(f"{part.value}") + "\n")
        elif part.kind == PROSE:
            text.append(f"\n{part.name}\n", style="bold italic" if part.italic else "bold")
            text.append(printable(f"{part.value}") + "\n", style="italic" if part.italic else "")
        elif part.kind == DATA:
            text.append(f"{part.name}\n", style="bold")
            text.append_text(json_text(part.value, max_lines=RESULT_LINES if part.folded else None, dark=dark))
            text.append("\n")
        elif part.kind == STATUS:
            text.append("✓ ok" if part.ok else printable(f"✗ error {part.value}"), style="bold" if part.ok else "bold red")
            text.append(f"  {duration(part.seconds)}\n\n", style="dim")
        elif part.kind == CODE:
            text.append(f"{part.name}\n", style="bold")
            text.append(printable(f"{part.value}") + "\n\n")
        elif part.kind == GAP:
            text.append("\n")
    text.rstrip()
    return printable_text(text)  # and anything else that reached it


def path_line(summary: TrialSummary | None) -> str | None:
    """A model trial's path against the fewest turns (ebench.tasks.paths), in words; None when
    not measured."""
    if not isinstance(summary, TrialSummary):  # none, or one recorded unreadable
        return None
    turns, fewest = summary.call_turns, summary.optimal_turns
    if turns is None or fewest <= 0:
        return None
    made = f"the model called tools in {turns} turn{'s' if turns != 1 else ''}"
    if turns <= fewest:
        return f"{made}, the fewest this task allows"
    return f"{made}; {fewest} would do (calls that need no earlier result can share a turn)"


def explanation(
    timeline: Timeline, final: StepState | None, point: int | None, mismatch: Mismatch | None, variables: dict[str, str]
) -> Text:
    """The trial's final grade explained: verdict, termination, the point of no return, whether
    the replay is faithful, and what is missing, unexpected or wrong at the end."""
    text = Text()
    end = timeline.session.end
    if final is None:
        text.append("analysing the trial…", style="italic")
        return text
    grade = final.grade
    if grade is None:
        text.append("no grade: the session's task is not in the suite\n", style="bold")
    else:
        colour = variables.get("diff-matched" if grade.passed else "diff-missing")
        text.append(("✓ " if grade.passed else "✗ ") + grade.summary() + "\n", style=Style(bold=True, color=colour))
    if end and is_human(timeline.session.start.solver):  # a person's attempt: no termination jargon
        text.append("outcome: ", style="bold")
        text.append(f"{human_outcome(end.termination)}\n")
    else:
        text.append("termination: ", style="bold")
        text.append(f"{end.termination if end else 'none (the session has no end)'}\n")
    if end and end.error:
        text.append("error: ", style="bold")
        text.append(printable(end.error) + "\n")  # a solver's error: its words
    path = path_line(end.summary if end else None)
    if path:
        text.append("turns: ", style="bold")
        text.append(path + "\n")
    if grade is not None and not grade.passed:
        text.append("point of no return: ", style="bold")
        if point is None:
            text.append("-\n")
        else:
            kind = "the end (work left undone)" if point == timeline.end_step else timeline.steps[point].label
            text.append(f"step {point}: {kind}  (x jumps there)\n")
    if mismatch is None:
        text.append("replay: every call re-executed with its recorded result\n", style="dim")
    else:
        text.append(
            f"⚠ replay differs from the recording at {mismatch.describe()}\n", style=Style(bold=True, color=variables.get("diff-wrong"))
        )
    if grade is not None and not grade.passed:
        lines = [(kind, line) for kind, line in diff_lines(grade, final.diff, False) if kind in ("wrong", "missing", "unexpected")]
        if lines:
            text.append("\nat the end\n", style="bold")
        for kind, line in lines:
            text.append(line + "\n", style=Style(color=variables.get(f"diff-{kind}")))
    text.rstrip()
    return printable_text(text)


# -- the trial view -----------------------------------------------------------------------------
NARROW_VIEW = 120  # below this many columns the step list and the reference take less room


class TrialView(Vertical):
    """One recorded trial, step by step: steps, the event, the call trace, the diff, the grade."""

    DEFAULT_CSS = """
    TrialView { height: 1fr; }
    TrialView #replay-title { height: 1; padding: 0 1; text-style: bold; }
    TrialView #replay-position { height: 1; padding: 0 1; color: $text-muted; }
    TrialView #replay-main { height: 1fr; }
    /* the steps take the rows they need and the grade the rest below them; the diff has its
       column to itself, its lines wrapped whole */
    TrialView #replay-left { width: 44; height: 1fr; }
    TrialView #replay-steps { height: auto; max-height: 60%; }
    TrialView #replay-middle { width: 1fr; height: 1fr; }
    TrialView #replay-right { width: 1fr; height: 1fr; }
    TrialView #replay-detail { height: 1fr; padding: 0 1; }
    TrialView #replay-trace { height: 1fr; }
    TrialView #replay-diff { height: 1fr; }
    TrialView #replay-grade { height: 1fr; min-height: 5; padding: 0 1; }
    TrialView #replay-reference { width: 44; height: 1fr; display: none; }
    TrialView #replay-reference.-shown { display: block; }
    TrialView #replay-reference-steps { height: 1fr; border: none; }
    TrialView #replay-reference-detail { height: auto; max-height: 50%; padding: 0 1; }
    /* a step is one line, cut with an ellipsis: the event pane shows it whole */
    TrialView #replay-steps, TrialView #replay-reference-steps { text-wrap: nowrap; text-overflow: ellipsis; }
    TrialView.-narrow #replay-left { width: 26; }
    TrialView.-narrow #replay-reference { width: 30; }
    /* narrow, the reference takes the event's and the trace's place (r gives them back) */
    TrialView.-narrow.-reference #replay-middle { display: none; }
    """

    BINDINGS = [
        Binding("right,l,n", "next", "Next step", id="replay.next", priority=True),
        Binding("left,h,p", "previous", "Previous step", id="replay.previous", priority=True),
        Binding("home", "first", "First step", id="replay.first", priority=True),
        Binding("end", "last", "Last step", id="replay.last", priority=True),
        Binding("x", "no_return", "No return", id="replay.no_return", tooltip="Jump to the point of no return"),
        Binding(
            "right_square_bracket", "next_turn", "Next turn", id="replay.next_turn", show=False, tooltip="A scenario's next turn (chapter)"
        ),
        Binding(
            "left_square_bracket",
            "previous_turn",
            "Previous turn",
            id="replay.previous_turn",
            show=False,
            tooltip="A scenario's previous turn",
        ),
        Binding(
            "r", "toggle_reference", "Reference", id="replay.reference", tooltip="Show the reference solution's steps beside the trial"
        ),
    ]

    class Loaded(Message):
        def __init__(self, timeline: Timeline | None, error: str | None = None) -> None:
            super().__init__()
            self.timeline = timeline
            self.error = error

    class StateReady(Message):
        """The rebuilt state of one step (dropped if the view moved on meanwhile)."""

        def __init__(self, step: int, state: StepState) -> None:
            super().__init__()
            self.step = step
            self.state = state

    class Analysed(Message):
        def __init__(self, final: StepState, point: int | None, mismatch: Mismatch | None) -> None:
            super().__init__()
            self.final = final
            self.point = point
            self.mismatch = mismatch

    class ReferenceReady(Message):
        def __init__(self, steps: list[ReferenceStep]) -> None:
            super().__init__()
            self.steps = steps

    def __init__(self, path: Path, *, trial: int | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.path = Path(path)
        self.trial = trial  # the trial's number as listed (a folder of sessions numbers them itself)
        self.timeline: Timeline | None = None
        self.current = 0
        self.state: StepState | None = None  # the state shown (the current step's once rebuilt)
        self.final: StepState | None = None
        self.point: int | None = None
        self.mismatch: Mismatch | None = None
        self.analysed = False
        self.reference: list[ReferenceStep] | None = None
        self.error: str | None = None
        self._trace_loaded = False
        self._jump_when_analysed = False

    def compose(self) -> ComposeResult:
        yield Static("opening the session…", id="replay-title", markup=False)
        yield Static("", id="replay-position", markup=False)
        with Horizontal(id="replay-main"):
            with Vertical(id="replay-left"):
                steps = OptionList(id="replay-steps", classes="pane")
                steps.border_title = "Steps"
                yield steps
                with VerticalScroll(id="replay-grade", classes="pane") as grade:
                    grade.border_title = "Final grade"
                    yield Static("", id="replay-grade-body", markup=False)
            with Vertical(id="replay-middle"):
                with VerticalScroll(id="replay-detail", classes="pane") as detail:
                    detail.border_title = "Event"
                    yield Static("", id="replay-detail-body", markup=False)
                trace = CallTrace(id="replay-trace", classes="pane")
                trace.border_title = "Calls so far"
                yield trace
            with Vertical(id="replay-right"):
                diff = DiffView(id="replay-diff", classes="pane", wrap=True)
                diff.border_title = "Diff at this step"
                yield diff
            with Vertical(id="replay-reference", classes="pane") as reference:
                reference.border_title = "Reference solution"
                yield OptionList(id="replay-reference-steps")
                yield Static("", id="replay-reference-detail", markup=False)

    def on_mount(self) -> None:
        self.query_one("#replay-steps", OptionList).focus()
        self._open()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_VIEW, "-narrow")
        self._show_position()

    def on_unmount(self) -> None:
        # Closing waits for a rebuild in progress: do it off the event loop.
        if self.timeline is not None:
            threading.Thread(target=self.timeline.close, daemon=True).start()

    # -- workers ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="replay-open", exit_on_error=False)
    def _open(self) -> None:
        try:
            timeline = Timeline.open(self.path)
        except Exception as exc:  # unreadable file, unknown domain: shown, not raised
            self.post_message(self.Loaded(None, f"{self.path}: {exc}"))
            return
        self.post_message(self.Loaded(timeline))

    @work(thread=True, exclusive=True, group="replay-state", exit_on_error=False)
    def _rebuild(self, step: int) -> None:
        timeline = self.timeline
        if timeline is None or step != self.current or get_current_worker().is_cancelled:
            return  # the view moved on before this rebuild started
        state = timeline.state_at(step)
        if step == self.current:
            self.post_message(self.StateReady(step, state))

    @work(thread=True, exclusive=True, group="replay-analysis", exit_on_error=False)
    def _analyse(self) -> None:
        timeline = self.timeline
        assert timeline is not None
        mismatch = timeline.check()
        final = timeline.final_state()
        point = timeline.point_of_no_return()
        self.post_message(self.Analysed(final, point, mismatch))

    @work(thread=True, exclusive=True, group="replay-reference", exit_on_error=False)
    def _load_reference(self) -> None:
        timeline = self.timeline
        assert timeline is not None
        self.post_message(self.ReferenceReady(timeline.reference_steps()))

    # -- messages --------------------------------------------------------------------------
    def on_trial_view_loaded(self, message: Loaded) -> None:
        if message.timeline is None:
            self.error = message.error
            self.query_one("#replay-title", Static).update(Text(printable(f"✗ {message.error}"), style="bold"))
            return
        timeline = self.timeline = message.timeline
        start = timeline.session.start
        task = timeline.task.id if timeline.task else timeline.session.task_id or "(no task)"
        title = f"{task} · trial {self.trial or start.trial} · {start.solver_label or '?'}"
        title += f" · {timeline.mode} mode · {len(timeline.leaves)} domain calls"
        if start.perturbation:  # a perturbed run (perturb.py)
            title += f" · perturbed: {Perturbation.from_dict(start.perturbation.to_dict()).label} (seed {start.perturbation.seed})"
        self.query_one("#replay-title", Static).update(printable(title))
        steps = self.query_one("#replay-steps", OptionList)
        steps.clear_options()
        steps.add_options([Option(Text(printable(step.label)), id=str(step.index)) for step in timeline.steps])
        self.goto(0)
        self._analyse()

    def on_trial_view_state_ready(self, message: StateReady) -> None:
        if message.step != self.current:
            return
        self.state = message.state
        self.query_one(DiffView).show(message.state.grade, message.state.diff)
        self.query_one("#replay-diff").border_subtitle = (
            ("PASS" if message.state.passed else f"{message.state.counts['changes']} changes")
            if message.state.grade
            else f"{message.state.counts['changes']} changes"
        )

    def on_trial_view_analysed(self, message: Analysed) -> None:
        self.final, self.point, self.mismatch = message.final, message.point, message.mismatch
        self.analysed = True
        self._show_grade()
        self._show_position()
        if self._jump_when_analysed:
            self._jump_when_analysed = False
            self.action_no_return()

    def on_trial_view_reference_ready(self, message: ReferenceReady) -> None:
        self.reference = message.steps
        options = self.query_one("#replay-reference-steps", OptionList)
        options.clear_options()
        if not message.steps:
            options.add_option(Option("no reference solution (the task is unknown)", disabled=True))
            return
        total = len(message.steps)
        options.add_options([Option(Text(printable(self._reference_label(s, total))), id=str(s.index)) for s in message.steps])
        self._align_reference()

    @on(OptionList.OptionHighlighted, "#replay-steps")
    def _step_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != self.current:
            self.goto(event.option_index)

    @on(OptionList.OptionHighlighted, "#replay-reference-steps")
    def _reference_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if self.reference and 0 <= event.option_index < len(self.reference):
            self._show_reference_detail(self.reference[event.option_index])

    # -- stepping --------------------------------------------------------------------------
    def goto(self, step: int) -> None:
        """Make `step` current: the list, bar, event and trace now; the diff once rebuilt."""
        timeline = self.timeline
        if timeline is None:
            return
        step = min(max(step, 0), timeline.last)
        self.current = step
        steps = self.query_one("#replay-steps", OptionList)
        if steps.highlighted != step:
            steps.highlighted = step
        self._show_position()
        dark = self.app.current_theme.dark if self.app.current_theme else True
        self.query_one("#replay-detail-body", Static).update(step_detail(timeline.steps[step], dark=dark))
        self.query_one("#replay-detail", VerticalScroll).scroll_home(animate=False)
        self._show_trace(step)
        self._align_reference()
        self._rebuild(step)

    def _show_trace(self, step: int) -> None:
        """All the trial's calls, mounted once; the ones after `step` dimmed, the step's own marked."""
        assert self.timeline is not None
        trace = self.query_one(CallTrace)
        if not self._trace_loaded:
            trace.set_calls(self.timeline.calls_until(self.timeline.last))
            self._trace_loaded = True
        trace.dim_after({entry.id for entry in self.timeline.calls_until(step)})
        trace.mark(self.timeline.steps[step].call_id)

    def _show_position(self) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        step = timeline.steps[self.current]
        numbers = (self.current, timeline.last, step.calls, len(timeline.leaves), self.point)
        around_bar = len(position_text(*numbers, width=1)) - 1
        room = self.size.width - 2 - around_bar - (0 if self.analysed else len("  (analysing…)"))
        text = position_text(*numbers, width=min(BAR_WIDTH, max(10, room)))
        if timeline.chapters:
            text += f"  turn {timeline.chapter_of(self.current)}/{len(timeline.chapters)}"
        if not self.analysed:
            text += "  (analysing…)"
        self.query_one("#replay-position", Static).update(text)

    def _show_grade(self) -> None:
        if self.timeline is None:
            return
        body = explanation(self.timeline, self.final, self.point, self.mismatch, self.app.theme_variables)
        self.query_one("#replay-grade-body", Static).update(body)

    # -- the reference solution ------------------------------------------------------------
    @staticmethod
    def _reference_label(step: ReferenceStep, total: int) -> str:
        """The step's number ("2/12"), the step, and how many expected changes are made once it
        ran ("· 3/14 expected")."""
        done = f" · {len(step.grade.matched)}/{step.grade.expected_rows} expected" if step.grade is not None else ""
        return f"{step.index + 1}/{total} {step.label}{done}"

    def _align_reference(self) -> None:
        """Highlight the reference step as far along as the trial's calls (a rough alignment)."""
        if not self.reference or self.timeline is None:
            return
        calls = self.timeline.steps[self.current].calls
        index = min(max(calls - 1, 0), len(self.reference) - 1)
        options = self.query_one("#replay-reference-steps", OptionList)
        if options.highlighted != index:
            options.highlighted = index
        else:
            self._show_reference_detail(self.reference[index])

    def _show_reference_detail(self, step: ReferenceStep) -> None:
        text = Text()
        text.append(f"reference step {step.index + 1}/{len(self.reference or [])}: {step.tool}\n", style="bold")
        if step.error:
            text.append(f"✗ {step.error}\n", style="bold")
        dark = self.app.current_theme.dark if self.app.current_theme else True
        text.append_text(json_text(step.args, indent=2, max_lines=8, dark=dark))
        if step.grade is not None:
            g = step.grade
            text.append(
                f"\nafter it: ✓ {len(g.matched)} matched  − {len(g.missing)} missing  "
                f"+ {len(g.unexpected)} unexpected  ≠ {len(g.wrong)} wrong"
            )
        self.query_one("#replay-reference-detail", Static).update(printable_text(text))

    # -- actions ---------------------------------------------------------------------------
    def action_next(self) -> None:
        self.goto(self.current + 1)

    def action_previous(self) -> None:
        self.goto(self.current - 1)

    def action_first(self) -> None:
        self.goto(0)

    def action_last(self) -> None:
        if self.timeline is not None:
            self.goto(self.timeline.last)

    def action_next_turn(self) -> None:
        """Jump to the next turn of a scenario (its chapters: where each turn begins)."""
        if self.timeline is None or not self.timeline.chapters:
            self.notify("Not a scenario: this trial has one turn.", timeout=3)
            return
        later = [c for c in self.timeline.chapters if c > self.current]
        self.goto(later[0] if later else self.timeline.last)

    def action_previous_turn(self) -> None:
        if self.timeline is None or not self.timeline.chapters:
            self.notify("Not a scenario: this trial has one turn.", timeout=3)
            return
        earlier = [c for c in self.timeline.chapters if c < self.current]
        self.goto(earlier[-1] if earlier else 0)

    def action_no_return(self) -> None:
        if self.timeline is None:
            return
        if not self.analysed:
            self._jump_when_analysed = True
            self.notify("Still analysing the trial: jumping when done.", timeout=3)
            return
        if self.point is None:
            self.notify(
                "No point of no return: the trial passed"
                if self.final and self.final.passed
                else "No point of no return: the task is unknown",
                timeout=4,
            )
            return
        self.goto(self.point)

    def action_toggle_reference(self) -> None:
        pane = self.query_one("#replay-reference")
        pane.toggle_class("-shown")
        self.set_class(pane.has_class("-shown"), "-reference")
        if pane.has_class("-shown") and self.reference is None and self.timeline is not None:
            self._load_reference()

    @property
    def reference_shown(self) -> bool:
        return self.query_one("#replay-reference").has_class("-shown")


class ReplayTrialScreen(EBenchScreen):
    """One trial opened from the trials table; escape goes back to the table."""

    TITLE = "Replay"

    def __init__(self, path: Path, title: str = "", trial: int | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.sub_title = printable(title)
        self.trial = trial

    def compose(self) -> ComposeResult:
        yield Header()
        yield TrialView(self.path, trial=self.trial, id="replay-trial")
        yield Footer()


# -- the trials table ---------------------------------------------------------------------------
NARROW = 110  # below this many columns the filters stack in two rows


def capability_names(row: TrialRow) -> str:
    return ", ".join(CAPABILITY_SHORT.get(c, c) for c in row.capabilities)


def row_detail(row: TrialRow) -> str:
    """Every field of a trial row, whole: what the table's cut cells hold."""
    text = (
        f"{row.task} · trial {row.trial} · {row.solver} · {RESULT_LABELS['passed' if row.passed else 'failed']}"
        f" · ended: {row.termination or '-'} · {row.calls} calls · {row.domain} · {capability_names(row) or '-'} · run {row.run}"
    )
    return printable(text + (f"\nerror: {row.error}" if row.error else ""))


class TrialTable(RecordTable[TrialRow]):
    """The trials; enter opens the highlighted one (the screen handles RowSelected)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open trial", id="replay.open")]


class ReplayScreen(EBenchScreen):
    """The trials of runs (or one session file, opened directly)."""

    TITLE = "Replay"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]
    DEFAULT_CSS = """
    ReplayScreen #replay-filters { height: 1; padding: 0 1; }
    ReplayScreen #replay-filters > * { margin-right: 1; }
    ReplayScreen #replay-filters Select { width: 24; }
    ReplayScreen #replay-failed { width: auto; }
    ReplayScreen #replay-search { width: 1fr; }
    ReplayScreen.-narrow #replay-filters {
        layout: grid;
        grid-size: 3;
        grid-rows: 1;
        grid-gutter: 0 1;
        height: 2;
    }
    ReplayScreen.-narrow #replay-filters > * { margin-right: 0; }
    ReplayScreen.-narrow #replay-filters Select, ReplayScreen.-narrow #replay-failed,
    ReplayScreen.-narrow #replay-search { width: 1fr; }
    ReplayScreen #replay-table { height: 1fr; }
    ReplayScreen #replay-row { height: auto; max-height: 3; padding: 0 1; }
    ReplayScreen #replay-count { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("enter", "open_trial", "Open trial", id="replay.open"),
        Binding("f", "toggle_failed", "Failed only", id="replay.failed"),
        Binding("slash", "search", "Search", id="replay.search"),
        Binding("d", "filter('domain')", "Domain", id="replay.domain", tooltip="Choose the domain filter", group=FILTER_KEYS),
        Binding(
            "k", "filter('capability')", "Capability", id="replay.capability", tooltip="Choose the capability filter", group=FILTER_KEYS
        ),
        Binding("m", "filter('solver')", "Solver", id="replay.solver", tooltip="Choose the solver (model) filter", group=FILTER_KEYS),
        Binding("x", "clear_filters", "Clear filters", id="replay.clear"),
        Binding("s", "sort", "Sort", id="replay.sort", tooltip=SORT_HELP, group=SORT_KEYS),
        Binding("S", "choose_sort", "Sort by…", id="replay.sort_by", tooltip=CHOOSE_SORT_HELP, group=SORT_KEYS),
    ]

    class RunsLoaded(Message):
        def __init__(self, runs: list[RunData] | None, error: str | None = None) -> None:
            super().__init__()
            self.runs = runs
            self.error = error

    def __init__(self, source: Path, *, runs: list[RunData] | None = None, failed: bool = False) -> None:
        super().__init__()
        self.source = Path(source)
        self.runs = runs
        self.failed = failed
        self.single = runs is None and self.source.is_file()
        self.rows: list[TrialRow] = []
        self.shown: list[TrialRow] = []

    def compose(self) -> ComposeResult:
        yield Header()
        if self.single:
            yield TrialView(self.source, id="replay-trial")
        else:
            with Horizontal(id="replay-filters"):
                yield Checkbox("failed only", value=self.failed, id="replay-failed", compact=True)
                yield Select[str]([], prompt="any domain", id="replay-domain", compact=True)
                yield Select[str]([], prompt="any capability", id="replay-capability", compact=True)
                yield Select[str]([], prompt="any solver", id="replay-solver", compact=True)
                yield Input(placeholder="/ search any field", id="replay-search", compact=True)
            table = TrialTable(self.columns(), key=lambda row: str(row.session), id="replay-table", classes="pane")
            table.border_title = "Trials"
            yield table
            yield Static("", id="replay-row", markup=False)
            yield Static("", id="replay-count", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = printable(self.source.name)
        if self.single:
            return
        table = self.query_one(TrialTable)
        table.focus()
        if self.runs is None:
            table.loading = True
            self._load_runs()
        else:
            self._set_runs(self.runs)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.single and action in ("open_trial", "toggle_failed", "search", "filter", "clear_filters", "sort", "choose_sort"):
            return False
        return super().check_action(action, parameters)

    @work(thread=True, exclusive=True, group="replay-runs", exit_on_error=False)
    def _load_runs(self) -> None:
        from ...sessions.runs import load_runs

        try:
            self.post_message(self.RunsLoaded(load_runs(self.source)))
        except Exception as exc:  # not a run directory nor a sessions folder
            self.post_message(self.RunsLoaded(None, f"{self.source}: {exc}"))

    def on_replay_screen_runs_loaded(self, message: RunsLoaded) -> None:
        table = self.query_one(TrialTable)
        table.loading = False
        if message.runs is None:
            self.query_one("#replay-count", Static).update(printable(f"✗ {message.error}"))
            return
        self.runs = message.runs
        self._set_runs(message.runs)

    def _set_runs(self, runs: list[RunData]) -> None:
        self.rows = trial_rows(runs)
        for select_id, values in (
            ("#replay-domain", {r.domain for r in self.rows}),
            ("#replay-capability", {c for r in self.rows for c in r.capabilities}),
            ("#replay-solver", {r.solver for r in self.rows}),
        ):
            # A solver's name comes from the runs' files: shown as text, never read as markup.
            self.query_one(select_id, Select).set_options([(Text(printable(v)), v) for v in sorted(values)])
        self.apply_filters()

    # -- filtering -------------------------------------------------------------------------
    def _select_value(self, select_id: str) -> str | None:
        value = self.query_one(select_id, Select).value
        return value if isinstance(value, str) else None

    def columns(self) -> list[Column[TrialRow]]:
        """The trial table's columns: the result is never cut; the capabilities, the solver, the
        domain and the termination are, and the line under the table shows them whole."""
        return [
            Column("task", "Task", lambda r: r.task, lambda r: r.task),
            Column("trial", "Trial", lambda r: str(r.trial), lambda r: r.trial, justify="right"),
            Column("result", "Result", self._result_cell, lambda r: not r.passed),
            Column("calls", "Calls", lambda r: str(r.calls), lambda r: r.calls, justify="right"),
            Column("termination", "Ended", lambda r: r.termination, lambda r: r.termination, min_width=8),
            Column("solver", "Solver", lambda r: r.solver, lambda r: r.solver.lower(), min_width=8),
            Column("domain", "Domain", lambda r: r.domain, lambda r: r.domain, min_width=4),
            Column("capabilities", "Capabilities", capability_names, capability_names, min_width=6),
        ]

    def _result_cell(self, row: TrialRow) -> Text:
        variables = self.app.theme_variables
        colour = variables.get("diff-matched" if row.passed else "diff-missing")
        return Text(RESULT_LABELS["passed" if row.passed else "failed"], style=Style(color=colour))

    def apply_filters(self) -> None:
        self.shown = filter_rows(
            self.rows,
            failed=self.query_one("#replay-failed", Checkbox).value,
            domain=self._select_value("#replay-domain"),
            capability=self._select_value("#replay-capability"),
            solver=self._select_value("#replay-solver"),
            search=self.query_one("#replay-search", Input).value,
        )
        self.query_one(TrialTable).set_records(self.shown)
        self._show_row()
        self.query_one("#replay-count", Static).update(
            f"{len(self.shown)} of {len(self.rows)} trials · enter opens a trial · f: failed only · x: clear filters"
        )

    def _show_row(self) -> None:
        row = self.query_one(TrialTable).highlighted()
        self.query_one("#replay-row", Static).update(row_detail(row) if row is not None else "No trial matches the filters.")

    @on(DataTable.RowHighlighted, "#replay-table")
    def _row_highlighted(self) -> None:
        self._show_row()

    @on(Checkbox.Changed, "#replay-failed")
    @on(Select.Changed)
    @on(Input.Changed, "#replay-search")
    def _filters_changed(self) -> None:
        if self.rows:
            self.apply_filters()

    @on(Select.Changed)
    def _choice_made(self, event: Select.Changed) -> None:
        """A choice made in a filter's list: the table takes the focus back (once the list has
        given it back to its field)."""
        select = event.select

        def focus_table() -> None:
            if select.has_focus_within and not select.expanded:
                self.query_one(TrialTable).focus()

        self.call_after_refresh(focus_table)

    @on(Input.Submitted, "#replay-search")
    def _search_submitted(self) -> None:
        self.query_one("#replay-table", DataTable).focus()

    # -- opening ---------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#replay-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_trial()

    def open_row(self, index: int) -> None:
        """Open the trial on the table's row `index` (in the table's order)."""
        table = self.query_one(TrialTable)
        if not 0 <= index < len(table.shown):
            return
        self.open_trial(table.shown[index])

    def open_trial(self, row: TrialRow) -> None:
        if not row.session.is_file():
            self.notify(printable(f"{row.session}: the session file is missing"), severity="error", timeout=6, markup=False)
            return
        self.app.push_screen(ReplayTrialScreen(row.session, f"{row.task} · trial {row.trial} · {row.solver}", row.trial))

    def action_open_trial(self) -> None:
        row = self.query_one(TrialTable).highlighted()
        if row is not None:
            self.open_trial(row)

    def action_toggle_failed(self) -> None:
        self.query_one("#replay-failed", Checkbox).toggle()

    def action_filter(self, name: str) -> None:
        """Open the named filter's choices."""
        select = self.query_one(f"#replay-{name}", Select)
        select.focus()
        select.expanded = True

    def action_clear_filters(self) -> None:
        with self.prevent(Checkbox.Changed, Select.Changed, Input.Changed):  # one refill, not five
            self.query_one("#replay-failed", Checkbox).value = False
            for name in ("domain", "capability", "solver"):
                self.query_one(f"#replay-{name}", Select).clear()
            self.query_one("#replay-search", Input).value = ""
        if self.rows:
            self.apply_filters()
        self.query_one(TrialTable).focus()

    def action_sort(self) -> None:
        self.query_one(TrialTable).sort_here()
        self._show_row()

    def action_choose_sort(self) -> None:
        choose_sort(self, self.query_one(TrialTable), self._show_row)

    def action_search(self) -> None:
        self.query_one("#replay-search", Input).focus()
