"""The ebench application: one Textual app whose screens are the task browser, the solve screen,
the replay debugger and the run results.

The app only consumes the core (domains, tasks, sessions); slow work runs in workers that post
messages. Screens are imported when first opened, so `ebench play` paints the browser without
loading the solve screen's editor, and litellm is loaded only when a model is watched.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.filter import LineFilter
from textual.screen import Screen
from textual.signal import Signal

from ..settings import AppSettings, load_settings, save_settings, settings_path
from ..terminal import printable
from ..themes import DEFAULT_THEME, DIFF_VARIABLES, all_themes
from .render import UnprintableFilter

ScreenFactory = Callable[[], Screen[Any]]
# What a person does at the keyboard or with the mouse (a mouse merely moving over the screen is not input).
PERSON_INPUT = (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp, events.Paste)


class EBenchApp(App[None]):
    """Opens `start()` (the task browser when none is given) over an empty base screen."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "ebench"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("f1", "help", "Help", id="app.help"),
        Binding("f10", "change_theme", "Theme", id="app.theme", show=False),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, show=False),  # in F1 and the palette
    ]

    def __init__(self, start: ScreenFactory | None = None, *, theme: str | None = None, home: Path | None = None) -> None:
        super().__init__()
        self._start = start
        self._home = home  # the data directory (user themes, keymap, settings); None: none of these
        self._unprintable_filter = UnprintableFilter()
        self.theme_errors: list[str] = []
        # `<data dir>/settings.toml`: the theme last chosen in the app. An explicit `theme` wins
        # for this run and is not saved; a theme chosen in the app is.
        self.settings = AppSettings()
        if home is not None:
            self.settings, error = load_settings(settings_path(home))
            if error:
                self.theme_errors.append(error)
        self._wanted_theme = theme or self.settings.theme or DEFAULT_THEME
        found = all_themes(home / "themes" if home else None)
        self.theme_errors.extend(found.errors)
        for item in found.themes:
            self.register_theme(item)
        if self._wanted_theme not in self.available_themes:
            self.theme_errors.append(f"unknown theme {self._wanted_theme!r}; using {DEFAULT_THEME}")
            self._wanted_theme = DEFAULT_THEME
        self.theme = self._wanted_theme
        self._applied_theme = self.theme  # changes from this one are the user's, and are saved
        self._load_keymap()
        # Published at every key, click, scroll or paste the person makes (the solve screen counts
        # idle time by it); subscribers are called at once, before the input is handled.
        self.input_signal: Signal[events.Event] = Signal(self, "person-input")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, PERSON_INPUT) and not event.is_forwarded:
            self.input_signal.publish(event)
        await super().on_event(event)

    def get_line_filters(self) -> Sequence[LineFilter]:
        # Terminals are not a channel: nothing shown reaches the terminal as a control sequence.
        return [*super().get_line_filters(), self._unprintable_filter]

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Textual's own themes know nothing of the diff colours; ours override these.
        return dict(DIFF_VARIABLES)

    def _load_keymap(self) -> None:
        """`<data dir>/keymap.toml` maps binding ids to keys, e.g. `"solve.submit" = "ctrl+s"`."""
        if self._home is None:
            return
        path = self._home / "keymap.toml"
        if not path.is_file():
            return
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            self.theme_errors.append(f"{path}: ignored: {exc}")
            return
        keymap = {str(k): v for k, v in data.items() if isinstance(v, str)}
        if len(keymap) != len(data):
            self.theme_errors.append(f"{path}: values must be key strings; others ignored")
        self.set_keymap(keymap)

    def on_mount(self) -> None:
        for error in self.theme_errors:
            self.notify(printable(error), title="Settings", severity="warning", timeout=8, markup=False)  # quotes a file
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.push_screen(self._start() if self._start else _browser())

    def _remember_theme(self, theme: Any) -> None:
        """Save a theme chosen in the app (F10, the palette, Textual's theme switcher)."""
        if self._home is None or theme.name == self._applied_theme:
            return
        self._applied_theme = theme.name
        if self.settings.theme == theme.name:
            return
        self.settings.theme = theme.name
        try:
            save_settings(settings_path(self._home), self.settings)
        except OSError as exc:
            self.notify(printable(f"settings not saved: {exc}"), title="Settings", severity="warning", timeout=8, markup=False)

    # -- actions ---------------------------------------------------------------------------
    def screenshots_folder(self) -> Path:
        """Where screenshots go: `<data dir>/screenshots` (Textual's default, ~/Downloads, may not exist)."""
        from ..paths import data_dir

        return (self._home if self._home is not None else data_dir()) / "screenshots"

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None, time_format: str | None = None) -> str | None:
        """Save an SVG of the screen (the palette's "Screenshot", `action_screenshot`) and say where,
        or why not, naming the full path either way."""
        if self.is_web:  # the browser downloads it: Textual's own delivery
            return super().deliver_screenshot(filename, path, time_format)
        folder = Path(path).expanduser() if path else self.screenshots_folder()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            saved = Path(self.save_screenshot(filename, str(folder), time_format)).resolve()
        except OSError as exc:
            self.notify(f"Screenshot not saved to {folder}: {exc.strerror or exc}", title="Screenshot", severity="error", markup=False)
            return None
        self.notify(f"Saved screenshot to {saved}", title="Screenshot", markup=False)
        return None

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands, then one per key binding active on the screen: every action is
        reachable from the palette as well as from its key."""
        yield from super().get_system_commands(screen)
        seen = {"command_palette", "quit", "change_theme"}
        for active in screen.active_bindings.values():
            binding = active.binding
            if not binding.description or binding.action in seen or not active.enabled:
                continue
            seen.add(binding.action)
            key = self.get_key_display(binding)
            node: Any = active.node  # a widget, screen or the app: each runs its own actions
            yield SystemCommand(
                binding.description,
                f"{binding.tooltip or binding.description} ({key})",
                partial(self.call_later, node.run_action, binding.action),
            )


def _browser() -> Screen[Any]:
    from .screens.browser import BrowserScreen

    return BrowserScreen()
