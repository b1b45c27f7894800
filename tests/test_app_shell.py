"""The app shell: themes (built-in and the user's), the help screen, the command palette's entries,
the keymap, and the CLI's checks before the app starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from appcheck import notified, until_settled
from textual.binding import Binding
from textual.color import Color
from textual.widgets import Footer, Header, Static
from typer.testing import CliRunner

from ebench.app.app import EBenchApp
from ebench.app.screens.base import EBenchScreen
from ebench.app.screens.help import HelpScreen, binding_rows
from ebench.cli import app as cli
from ebench.themes import DIFF_VARIABLES, ThemeFileError, builtin_themes, parse_theme, user_themes


class Probe(EBenchScreen):
    TITLE = "Probe"
    BINDINGS = [Binding("k", "poke", "Poke the probe", id="probe.poke")]

    def __init__(self) -> None:
        super().__init__()
        self.pokes = 0

    def compose(self):
        yield Header()
        yield Static("matched", classes="diff-matched", id="matched")
        yield Footer()

    def action_poke(self) -> None:
        self.pokes += 1


def test_three_builtin_themes_with_diff_variables():
    themes = {t.name: t for t in builtin_themes()}
    assert {"ebench-dark", "ebench-light", "ebench-contrast"} <= set(themes)
    assert not themes["ebench-light"].dark and themes["ebench-dark"].dark
    for theme in themes.values():
        assert set(DIFF_VARIABLES) <= set(theme.variables)


def test_contrast_theme_diff_colours_stay_apart_in_lightness_too():
    """Colour-blind safe means the four diff colours differ in more than hue: no two have close
    lightness and hue together (and the diff view marks lines with symbols as well)."""
    theme = next(t for t in builtin_themes() if t.name == "ebench-contrast")
    colours = [Color.parse(theme.variables[name]) for name in DIFF_VARIABLES]
    background = Color.parse(theme.background or "#000000")
    for i, a in enumerate(colours):
        assert a.brightness - background.brightness > 0.3  # readable on the background
        for b in colours[i + 1 :]:
            assert abs(a.brightness - b.brightness) > 0.05 or abs(a.hsl.h - b.hsl.h) > 0.2


def test_a_theme_file_is_checked_with_a_clear_message(tmp_path: Path):
    with pytest.raises(ThemeFileError, match="'primary'"):
        parse_theme({"name": "x"}, "x.toml")
    with pytest.raises(ThemeFileError, match="not a colour"):
        parse_theme({"name": "x", "primary": "#12345G"}, "x.toml")
    with pytest.raises(ThemeFileError, match="unknown keys colour"):
        parse_theme({"name": "x", "primary": "red", "colour": "blue"}, "x.toml")
    (tmp_path / "good.toml").write_text('name = "mine"\nprimary = "#336699"\n[variables]\ndiff-missing = "#ffffff"\n')
    (tmp_path / "bad.toml").write_text("name = [\n")
    found = user_themes(tmp_path)
    assert [t.name for t in found.themes] == ["mine"] and found.themes[0].variables["diff-missing"] == "#ffffff"
    assert found.themes[0].variables["diff-matched"] == DIFF_VARIABLES["diff-matched"]  # defaults fill the rest
    assert len(found.errors) == 1 and "bad.toml" in found.errors[0] and "not valid TOML" in found.errors[0]


async def test_user_themes_and_keymap_from_the_data_directory(tmp_path: Path):
    (tmp_path / "themes").mkdir()
    (tmp_path / "themes" / "mine.toml").write_text('name = "mine"\nprimary = "#336699"\n[variables]\ndiff-matched = "#010203"\n')
    (tmp_path / "themes" / "broken.toml").write_text('name = "broken"\n')
    (tmp_path / "keymap.toml").write_text('"probe.poke" = "j"\n')
    app = EBenchApp(Probe, theme="mine", home=tmp_path)
    async with app.run_test() as pilot:
        await until_settled(
            pilot, lambda: isinstance(app.screen, Probe) and app.screen.query_one("#matched").region.width > 0, what="the probe shown"
        )
        assert app.theme == "mine"
        assert app.theme_variables["diff-matched"] == "#010203"
        assert app.screen.query_one("#matched").styles.color == Color.parse("#010203")
        assert any("broken.toml" in error for error in app.theme_errors)
        await pilot.press("j")
        await pilot.press("k")  # remapped away
        assert app.screen.pokes == 1


async def test_a_screenshot_goes_to_the_data_directory_and_the_message_names_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("EBENCH_HOME", str(tmp_path / "home"))  # Textual's default, ~/Downloads, may not exist
    app = EBenchApp(Probe)
    async with app.run_test() as pilot:
        messages = notified(app)
        app.action_screenshot()
        await until_settled(pilot, lambda: messages != [], what="the screenshot's message")
        [saved] = (tmp_path / "home" / "screenshots").glob("*.svg")
        assert saved.read_text(encoding="utf-8").startswith("<svg")
        assert messages == [f"Saved screenshot to {saved.resolve()}"]
        blocked = tmp_path / "blocked"
        blocked.write_text("a file where the folder should be")
        app.action_screenshot(path=str(blocked / "inner"))
        await until_settled(pilot, lambda: len(messages) == 2, what="the second screenshot's message")
        assert messages[-1].startswith(f"Screenshot not saved to {blocked / 'inner'}: ")


async def test_switching_theme_recolours_the_diff_classes():
    app = EBenchApp(Probe, theme="ebench-dark")
    async with app.run_test() as pilot:
        matched = app.screen.query_one("#matched")
        dark = matched.styles.color
        app.theme = "ebench-contrast"
        await until_settled(pilot, lambda: matched.styles.color != dark, what="the diff class recoloured")
        assert matched.styles.color != dark
        assert matched.styles.color == Color.parse(app.theme_variables["diff-matched"])
        app.theme = "textual-dark"  # a Textual theme: the diff colours fall back to ours
        await until_settled(pilot, what="the theme applied")
        assert app.theme_variables["diff-matched"] == DIFF_VARIABLES["diff-matched"]


async def test_an_unknown_theme_falls_back_and_says_so():
    app = EBenchApp(Probe, theme="no-such-theme")
    async with app.run_test():
        assert app.theme == "ebench-dark"
        assert any("no-such-theme" in error for error in app.theme_errors)


async def test_help_lists_the_screen_and_app_keys_and_closes():
    app = EBenchApp(Probe)
    async with app.run_test() as pilot:
        rows = binding_rows(app.screen)
        assert ("screen", "k", "Poke the probe") in rows
        assert any(where == "app" and what == "Quit" for where, _, what in rows)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, Probe)


async def test_every_described_binding_is_a_palette_command():
    app = EBenchApp(Probe)
    async with app.run_test() as pilot:
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Poke the probe" in commands and "Help" in commands and "Theme" in commands
        commands["Poke the probe"].callback()
        await until_settled(pilot, lambda: app.screen.pokes != 0, what="the poke")
        assert app.screen.pokes == 1


async def test_back_is_hidden_on_the_first_screen_and_pops_above_it():
    app = EBenchApp(Probe)
    async with app.run_test() as pilot:
        first = app.screen
        assert "Back" not in {c.title for c in app.get_system_commands(first)}
        await app.push_screen(Probe())
        await pilot.press("escape")
        assert app.screen is first
        await pilot.press("escape")
        assert app.screen is first


runner = CliRunner()


@pytest.mark.parametrize(
    "args, message",
    [
        (["play", "--task", "no-such-task"], "no task 'no-such-task'"),
        (["play", "--blind"], "add --task ID"),
        (["play", "--task", "moba-0024", "--blind", "--oracle"], "--blind is for a person"),
        (["play", "--task", "moba-0024", "--model", "x", "--oracle"], "either --model or --oracle"),
        (["play", "--task", "moba-0024", "--speed", "3"], "--speed applies to watching"),
        (["play", "--task", "moba-0024", "--oracle", "--speed", "-1"], "--speed"),
        (["replay", "/no/such/run"], "no such file or folder"),
    ],
)
def test_the_cli_checks_arguments_before_the_app_starts(args, message):
    result = runner.invoke(cli, args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_replay_refuses_a_file_that_is_not_a_session(tmp_path: Path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"event": "tool_call"}\n')
    result = runner.invoke(cli, ["replay", str(bad)])
    assert result.exit_code == 2 and "not an ebench-session/2 session" in result.output


@pytest.mark.parametrize("given, rate", [([], 2.0), (["--speed", "5"], 5.0), (["--speed", "0"], None)])
def test_watching_from_the_cli_starts_paused_at_the_chosen_speed(monkeypatch, given, rate):
    from ebench.app.screens.solve import SolveScreen
    from ebench.cli import play

    started: list = []
    monkeypatch.setattr(play, "launch", lambda start, theme: started.append(start()))
    result = runner.invoke(cli, ["play", "--task", "moba-0024", "--oracle", *given])
    assert result.exit_code == 0, result.output
    [screen] = started
    assert isinstance(screen, SolveScreen) and screen.gate.paused and screen.gate.rate == rate
