"""The task browser: the app's first screen. It paints at once and loads the suite and the person's
past attempts in a thread worker; filtering and fuzzy search then run on the tasks held in memory."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.fuzzy import Matcher
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Input, Select, Static

from ...tasks.spec import CAPABILITIES, CAPABILITY_SHORT, CAPABILITY_TITLES  # a light module: no task is loaded
from ...terminal import printable
from ..widgets.record_table import Column, RecordTable
from .base import CHOOSE_SORT_HELP, FILTER_KEYS, SORT_HELP, SORT_KEYS, EBenchScreen, choose_sort

if TYPE_CHECKING:
    from ...sessions.attempts import Attempt
    from ...tasks.spec import Task

STATUSES = ("all", "untried", "passed", "failed", "open")
NARROW = 110  # below this many columns the preview goes under the table and the filters stack
BLIND_COLUMNS = ("rows", "calls")  # they tell the size of the expected answer


def attempt_status(attempt: Attempt | None) -> str:
    """untried, open (no end event: abandoned or in progress), passed or failed."""
    if attempt is None:
        return "untried"
    if attempt.passed is None:
        return "open"
    return "passed" if attempt.passed else "failed"


OWN_FOLDER = "folder"  # the split picker's value for the folder the app was started on

RESULT_LABELS = {"untried": "", "open": "… open", "passed": "✓ passed", "failed": "✗ failed"}
RESULT_STYLES = {"open": "$text-muted", "passed": "$success", "failed": "$error"}
RESULT_ORDER = {"passed": 0, "failed": 1, "open": 2}  # untried sorts last


def changed_rows(task: Task) -> int:
    return len(task.expected_diff)


def capability_names(task: Task) -> str:
    return ", ".join(CAPABILITY_SHORT.get(c, c) for c in task.capabilities)


def _words(text: str) -> list[str]:
    return re.findall(r"\w[\w:'-]*", text.lower())


class TaskSearch:
    """Fuzzy search over each task's id and request, word by word. Textual's Matcher over a whole
    request costs milliseconds, so the suite would take seconds; matching each search word against the
    suite's vocabulary (about 1,400 words) takes a few milliseconds. A task must match every word."""

    def __init__(self, tasks: list[Task]) -> None:
        self.vocabulary: dict[str, set[str]] = {}
        for task in tasks:
            for word in _words(f"{task.id} {task.query}"):
                self.vocabulary.setdefault(word, set()).add(task.id)

    def scores(self, text: str) -> dict[str, float]:
        """task id -> score (higher is better) of the tasks matching every word of `text`."""
        found: dict[str, float] | None = None
        for token in _words(text):
            matcher = Matcher(token)
            best: dict[str, float] = {}
            for word, ids in self.vocabulary.items():
                score = matcher.match(word)
                if score > 0:
                    for task_id in ids:
                        best[task_id] = max(best.get(task_id, 0.0), score)
            found = best if found is None else {t: found[t] + s for t, s in best.items() if t in found}
        return found or {}


class TaskTable(RecordTable["Task"]):
    """The task list; enter opens the highlighted task (the screen handles RowSelected)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open task", id="browser.open")]


@dataclass
class Filters:
    search: str = ""
    domain: str | None = None
    capability: str | None = None
    status: str = "all"


class BrowserScreen(EBenchScreen):
    """Every task with its domain, capabilities, size and the person's latest result; enter solves one."""

    TITLE = "Tasks"
    BINDINGS = [
        Binding("enter", "open", "Open task", id="browser.open"),
        Binding("slash", "search", "Search", id="browser.search"),
        Binding("d", "filter('domain')", "Domain", id="browser.domain", tooltip="Choose the domain filter", group=FILTER_KEYS),
        Binding(
            "k", "filter('capability')", "Capability", id="browser.capability", tooltip="Choose the capability filter", group=FILTER_KEYS
        ),
        Binding("t", "filter('status')", "Status", id="browser.status", tooltip="Choose the result filter", group=FILTER_KEYS),
        Binding("x", "clear_filters", "Clear filters", id="browser.clear"),
        Binding("s", "sort", "Sort", id="browser.sort", tooltip=SORT_HELP, group=SORT_KEYS),
        Binding("S", "choose_sort", "Sort by…", id="browser.sort_by", tooltip=CHOOSE_SORT_HELP, group=SORT_KEYS),
        Binding("c", "toggle_code", "Code mode", id="browser.code"),
        Binding("b", "toggle_blind", "Blind mode", id="browser.blind"),
        Binding("R", "results", "Run results", id="browser.results"),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]
    DEFAULT_CSS = """
    BrowserScreen #browser-filters {
        height: 1;
        padding: 0 1;
    }
    BrowserScreen #browser-filters > * { margin-right: 1; }
    BrowserScreen #browser-search { width: 1fr; }
    BrowserScreen #browser-domain { width: 20; }
    BrowserScreen #browser-capability { width: 30; }
    BrowserScreen #browser-status { width: 20; }
    BrowserScreen #browser-split { width: 16; }
    BrowserScreen #browser-main { height: 1fr; }
    BrowserScreen #browser-table { width: 2fr; height: 1fr; }
    BrowserScreen #browser-preview { width: 1fr; height: 1fr; padding: 0 1; }
    BrowserScreen.-narrow #browser-filters {
        layout: grid;
        grid-size: 2;
        grid-rows: 1;
        grid-gutter: 0 1;
        height: 3;
    }
    BrowserScreen.-narrow #browser-filters > * { margin-right: 0; }
    BrowserScreen.-narrow #browser-search, BrowserScreen.-narrow #browser-domain,
    BrowserScreen.-narrow #browser-capability, BrowserScreen.-narrow #browser-status,
    BrowserScreen.-narrow #browser-split { width: 1fr; }
    BrowserScreen.-narrow #browser-main { layout: vertical; }
    BrowserScreen.-narrow #browser-table { width: 1fr; height: 3fr; }
    BrowserScreen.-narrow #browser-preview { width: 1fr; height: 2fr; }
    BrowserScreen #browser-status-line {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    class Loaded(Message):
        def __init__(self, tasks: list[Task], errors: list[str], attempts: dict[str, Attempt]) -> None:
            super().__init__()
            self.tasks = tasks
            self.errors = errors
            self.attempts = attempts

    class AttemptsLoaded(Message):
        def __init__(self, attempts: dict[str, Attempt]) -> None:
            super().__init__()
            self.attempts = attempts

    def __init__(self, tasks_dir: Path | None = None) -> None:
        super().__init__()
        self.tasks_dir = tasks_dir
        self.own_folder = tasks_dir  # the folder the app was started on, if any: a choice of the split picker
        self.tasks: list[Task] = []
        self.by_id: dict[str, Task] = {}
        self.attempts: dict[str, Attempt] = {}
        self.shown: list[Task] = []
        self.filters = Filters()
        self.loaded = False
        self.load_errors: list[str] = []
        self.code_mode = False
        self.blind_mode = False
        self._search: TaskSearch | None = None

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        # Compact (one line each): the filters leave the rows to the table, and stack in two rows when narrow.
        with Horizontal(id="browser-filters"):
            yield Input(placeholder="/ search id and request (fuzzy)", id="browser-search", compact=True)
            yield Select[str]([], prompt="any domain", id="browser-domain", compact=True)
            yield Select[str](
                [(CAPABILITY_SHORT[c], c) for c in CAPABILITIES], prompt="any capability", id="browser-capability", compact=True
            )
            yield Select[str]([(s, s) for s in STATUSES], value="all", allow_blank=False, id="browser-status", compact=True)
            yield Select[str]([], prompt="split", id="browser-split", compact=True)  # filled once the tasks are loaded
        with Horizontal(id="browser-main"):
            table = TaskTable(self.columns(), key=lambda task: task.id, id="browser-table")
            table.border_title = "Tasks"
            table.add_class("pane")
            table.loading = True
            yield table
            with VerticalScroll(id="browser-preview", classes="pane") as preview:
                preview.border_title = "Request"
                yield Static("", id="browser-preview-body")
        yield Static("", id="browser-status-line")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(TaskTable)
        self._update_status_line()
        table.focus()
        self.watch(self.app, "theme", self._theme_changed, init=False)
        self._load()

    def _theme_changed(self) -> None:
        """Result colours and the preview come from the theme."""
        if self.loaded:
            self._apply_filters()

    # -- loading -----------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="browser-load")
    def _load(self) -> None:
        from ...sessions.attempts import latest_attempts
        from ...tasks.suite import load_suite

        report = load_suite(self.tasks_dir)
        errors = [str(error) for error in report.errors]
        self.post_message(self.Loaded(report.tasks, errors, latest_attempts(queries={t.id: t.query for t in report.tasks})))

    @work(thread=True, exclusive=True, group="browser-attempts")
    def _reload_attempts(self) -> None:
        from ...sessions.attempts import latest_attempts

        self.post_message(self.AttemptsLoaded(latest_attempts(queries={t.id: t.query for t in self.tasks})))

    def on_browser_screen_loaded(self, message: Loaded) -> None:
        self.tasks = message.tasks
        self.by_id = {task.id: task for task in self.tasks}
        self.attempts = message.attempts
        self.load_errors = message.errors
        self._search = TaskSearch(self.tasks)
        self.loaded = True
        domains = sorted({task.domain for task in self.tasks})
        self.query_one("#browser-domain", Select).set_options([(Text(printable(d)), d) for d in domains])  # a Text: never markup
        self._show_splits()
        table = self.query_one(TaskTable)
        table.loading = False
        self._apply_filters()
        search = self.query_one("#browser-search", Input)
        if self.focused is None or (self.focused is search and not search.value):
            table.focus()  # the table could not take focus while it was loading
        if message.errors:
            self.notify(  # the error quotes the file: shown as text, never read as markup
                printable(f"{len(message.errors)} task file(s) could not be read; first: {message.errors[0]}"),
                title="Tasks",
                severity="warning",
                timeout=10,
                markup=False,
            )

    def on_browser_screen_attempts_loaded(self, message: AttemptsLoaded) -> None:
        self.attempts = message.attempts
        self._apply_filters()

    def on_screen_resume(self) -> None:
        """Back from the solve screen: the person may have a new result."""
        if self.loaded:
            self._reload_attempts()

    # -- filtering ---------------------------------------------------------------------------
    def matching(self, filters: Filters) -> list[Task]:
        """The tasks passing `filters`, in suite order or, when searching, best match first."""
        tasks = self.tasks
        if filters.domain:
            tasks = [t for t in tasks if t.domain == filters.domain]
        if filters.capability:
            tasks = [t for t in tasks if filters.capability in t.capabilities]
        if filters.status != "all":
            tasks = [t for t in tasks if attempt_status(self.attempts.get(t.id)) == filters.status]
        if filters.search.strip() and self._search is not None:
            scores = self._search.scores(filters.search)
            ranked = [t for t in tasks if t.id in scores]
            ranked.sort(key=lambda t: -scores[t.id])  # stable: equal scores keep suite order
            tasks = ranked
        return tasks

    def _apply_filters(self, keep_cursor: bool = True) -> None:
        """Refill the table; the highlighted task stays highlighted when it still shows, except
        after a new search, which starts at the best match."""
        self.shown = self.matching(self.filters)
        self.query_one(TaskTable).set_records(self.shown, keep_cursor=keep_cursor)
        self._show_preview()
        self._update_status_line()

    def columns(self) -> list[Column[Task]]:
        """The table's columns; blind mode leaves out those that tell the expected answer's size."""
        columns: list[Column[Task]] = [
            Column("task", "Task", lambda t: t.id, lambda t: t.id),
            Column("domain", "Domain", lambda t: t.domain, lambda t: t.domain, min_width=4),
            Column("capabilities", "Capabilities", capability_names, capability_names, min_width=6),
            Column("rows", "Rows", lambda t: str(changed_rows(t)), changed_rows, justify="right"),
            Column("calls", "Calls", lambda t: str(len(t.reference_solution)), lambda t: len(t.reference_solution), justify="right"),
            Column("result", "Result", self._result_cell, lambda t: RESULT_ORDER.get(attempt_status(self.attempts.get(t.id)))),
        ]
        return [c for c in columns if not (self.blind_mode and c.key in BLIND_COLUMNS)]

    def _result_cell(self, task: Task) -> Text:
        status = attempt_status(self.attempts.get(task.id))
        style = RESULT_STYLES.get(status)
        colour = self.app.theme_variables.get(style[1:], "") if style else ""
        return Text(RESULT_LABELS[status], style=colour)

    @on(Input.Changed, "#browser-search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.filters.search = event.value
        if self.loaded:
            self._apply_filters(keep_cursor=not event.value.strip())

    @on(Input.Submitted, "#browser-search")
    def _search_submitted(self) -> None:
        self.query_one(TaskTable).focus()

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        value = None if event.value is Select.NULL else str(event.value)
        if event.select.id == "browser-domain":
            self.filters.domain = value
        elif event.select.id == "browser-capability":
            self.filters.capability = value
        elif event.select.id == "browser-status":
            self.filters.status = value or "all"
        elif event.select.id == "browser-split":
            self._switch_split(value)
            self._back_to_table(event.select)
            return
        else:
            return
        if self.loaded:
            self._apply_filters()
        self._back_to_table(event.select)

    def _back_to_table(self, select: Select[Any]) -> None:
        """A choice made in a filter's list: the table takes the focus back (down-arrow moves in
        it, not into the list again). After the list has given the focus back to its field."""

        def focus_table() -> None:
            if select.has_focus_within and not select.expanded:
                self.query_one(TaskTable).focus()

        self.call_after_refresh(focus_table)

    # -- splits ------------------------------------------------------------------------------
    def split_choices(self) -> list[tuple[str, str]]:
        """The shipped splits (the suite, ask, composed) and, when the app was started on a folder
        of the person's (--tasks-dir or $EBENCH_TASKS), that folder."""
        from ...tasks.suite import shipped_splits, split_name, tasks_root

        if self.own_folder is None and split_name(None) is None:
            self.own_folder = tasks_root(None)
        choices = [(f"{name} tasks", name) for name in shipped_splits()]
        if self.own_folder is not None and split_name(self.own_folder) is None:
            choices.append(("this folder", OWN_FOLDER))
        return choices

    def _show_splits(self) -> None:
        """The split picker's choices and the split shown (after each load: the first fills it)."""
        from ...tasks.suite import split_name

        picker = self.query_one("#browser-split", Select)
        with self.prevent(Select.Changed):
            picker.set_options(self.split_choices())
            picker.value = split_name(self.tasks_dir) or OWN_FOLDER

    def _switch_split(self, value: str | None) -> None:
        """Load another split's tasks (in the worker, as at start); the filters stay."""
        from ...tasks.suite import SPLITS

        folder = self.own_folder if value == OWN_FOLDER or value is None else SPLITS[value]
        if self.loaded and folder == self.tasks_dir:
            return
        self.tasks_dir = folder
        self.loaded = False
        self.query_one(TaskTable).loading = True
        self._load()

    # -- preview -----------------------------------------------------------------------------
    def highlighted_task(self) -> Task | None:
        return self.query_one(TaskTable).highlighted()

    @on(DataTable.RowHighlighted, "#browser-table")
    def _row_highlighted(self) -> None:
        self._show_preview()

    def _show_preview(self) -> None:
        body = self.query_one("#browser-preview-body", Static)
        task = self.highlighted_task()
        if task is None:
            body.update("" if not self.loaded else "No task matches the filters.")
            return
        body.update(self.preview_text(task))

    def preview_text(self, task: Task) -> Content:
        """The request first, then what the task is about; `$text-muted` follows the theme."""
        muted = "$text-muted"
        parts: list[str | tuple[str, str]] = [(task.id, "bold"), (f"  {printable(task.domain)}\n\n", muted), printable(task.query) + "\n\n"]
        indent = "\n" + " " * 14

        def field(name: str, value: str) -> None:
            parts.extend([(f"{name:<14}", muted), value + "\n"])

        field("actor", f"user {task.actor}")
        field("domain", printable(task.domain))
        field("capabilities", indent.join(CAPABILITY_TITLES.get(c, c) for c in task.capabilities) or "-")
        if self.blind_mode:  # the reference's length, the changed rows and their tables tell the answer
            field("expected", "hidden in blind mode (b)")
        else:
            field("reference", f"{len(task.reference_solution)} calls")
            stats = task.stats or {}
            kinds = ", ".join(f"{stats[k]} {k}" for k in ("inserts", "updates", "deletes") if stats.get(k))
            field("changed rows", f"{changed_rows(task)}" + (f" ({kinds})" if kinds else ""))
            field("tables", printable(indent.join(sorted({change.table for change in task.expected_diff}))) or "-")
        attempt = self.attempts.get(task.id)
        field("your result", RESULT_LABELS[attempt_status(attempt)] or "untried")
        if attempt is not None:
            field("session", printable(attempt.session.name))
        return Content.assemble(*parts)

    # -- status line -------------------------------------------------------------------------
    def _update_status_line(self) -> None:
        blind = "blind on: the expected answer is hidden" if self.blind_mode else "blind off"
        modes = f"next task opens in: code mode {'on' if self.code_mode else 'off'} (c) · {blind} (b)"
        count = f"{len(self.shown)} of {len(self.tasks)} tasks" if self.loaded else "loading tasks…"
        self.query_one("#browser-status-line", Static).update(f"{count}  ·  {modes}")

    # -- actions -----------------------------------------------------------------------------
    @on(DataTable.RowSelected, "#browser-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        task = self.highlighted_task()
        if task is None:
            return
        from .solve import SolveScreen

        self.app.push_screen(SolveScreen(task, code=self.code_mode, blind=self.blind_mode))

    def action_search(self) -> None:
        self.query_one("#browser-search", Input).focus()

    def action_toggle_code(self) -> None:
        self.code_mode = not self.code_mode
        self._update_status_line()
        self.notify(f"code mode {'on' if self.code_mode else 'off'} for the next task", timeout=2)

    def action_filter(self, name: str) -> None:
        """Open the named filter's choices."""
        select = self.query_one(f"#browser-{name}", Select)
        select.focus()
        select.expanded = True

    def action_clear_filters(self) -> None:
        with self.prevent(Input.Changed, Select.Changed):  # one refill, not four
            self.query_one("#browser-search", Input).value = ""
            self.query_one("#browser-domain", Select).clear()
            self.query_one("#browser-capability", Select).clear()
            self.query_one("#browser-status", Select).value = "all"
        self.filters = Filters()
        if self.loaded:
            self._apply_filters()
        self.query_one(TaskTable).focus()

    def action_sort(self) -> None:
        self.query_one(TaskTable).sort_here()
        self._show_preview()

    def action_choose_sort(self) -> None:
        choose_sort(self, self.query_one(TaskTable), self._show_preview)

    def action_toggle_blind(self) -> None:
        self.blind_mode = not self.blind_mode
        self.query_one(TaskTable).set_columns(self.columns())
        self._show_preview()
        self._update_status_line()
        self.notify(f"blind mode {'on' if self.blind_mode else 'off'} for the next task", timeout=2)

    def result_paths(self) -> list[Path]:
        """The runs in `<data dir>/runs/` and the sessions folder when it holds any session."""
        from ...paths import runs_dir, sessions_dir
        from ...sessions.runs import MANIFEST

        paths = sorted(p for p in runs_dir().iterdir() if (p / MANIFEST).is_file())
        sessions = sessions_dir()
        if any(sessions.rglob("*.jsonl")):
            paths.append(sessions)
        return paths

    def action_results(self) -> None:
        paths = self.result_paths()
        if not paths:
            self.notify("no runs yet: `ebench run --batch ...`", title="Run results", severity="warning")
            return
        from .results import ResultsScreen

        self.app.push_screen(ResultsScreen(paths))
