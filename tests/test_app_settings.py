"""Settings that persist: the theme chosen in the app is saved in `<data dir>/settings.toml` and
restored at the next start; `--theme` wins for one run; a damaged file is a warning, never a crash."""

from __future__ import annotations

import tomllib
from pathlib import Path

import jsonschema
import pytest
from textual.app import ComposeResult
from textual.widgets import Static

from ebench.app.app import EBenchApp
from ebench.app.screens.base import EBenchScreen
from ebench.settings import AppSettings, dumps, load_settings, save_settings, settings_json_schema
from tests.appcheck import until_settled


class Probe(EBenchScreen):
    def compose(self) -> ComposeResult:
        yield Static("probe")


def saved(home: Path) -> dict[str, object]:
    return tomllib.loads((home / "settings.toml").read_text(encoding="utf-8"))


async def test_a_theme_chosen_in_the_app_is_restored_at_the_next_start(tmp_path: Path):
    app = EBenchApp(Probe, home=tmp_path)
    async with app.run_test() as pilot:
        await until_settled(pilot)
        assert app.theme == "ebench-dark"
        assert not (tmp_path / "settings.toml").exists()  # nothing chosen, nothing written
        app.theme = "ebench-light"  # what F10's picker and the palette do
        await until_settled(pilot, lambda: (tmp_path / "settings.toml").exists())
        await pilot.press("ctrl+q")
    assert saved(tmp_path) == {"theme": "ebench-light"}

    again = EBenchApp(Probe, home=tmp_path)
    async with again.run_test() as pilot:
        await until_settled(pilot)
        assert again.theme == "ebench-light"
        assert not again.theme_errors


async def test_an_explicit_theme_wins_for_the_run_and_is_not_saved(tmp_path: Path):
    save_settings(tmp_path / "settings.toml", AppSettings.model_validate({"theme": "ebench-light", "other": 3}))
    app = EBenchApp(Probe, theme="ebench-contrast", home=tmp_path)
    async with app.run_test() as pilot:
        await until_settled(pilot)
        assert app.theme == "ebench-contrast"
    assert saved(tmp_path) == {"theme": "ebench-light", "other": 3}

    app = EBenchApp(Probe, theme="ebench-contrast", home=tmp_path)
    async with app.run_test() as pilot:
        await until_settled(pilot)
        app.theme = "textual-dark"  # changed in the app: saved, other keys kept
        await until_settled(pilot, lambda: saved(tmp_path)["theme"] == "textual-dark")
    assert saved(tmp_path) == {"theme": "textual-dark", "other": 3}


async def test_a_damaged_settings_file_is_a_warning_and_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "settings.toml").write_text('theme = "ebench-light\n')  # unterminated string
    app = EBenchApp(Probe, home=tmp_path)
    notified: list[str] = []
    notify = app.notify
    monkeypatch.setattr(app, "notify", lambda message, **kw: (notified.append(message), notify(message, **kw)))
    async with app.run_test() as pilot:
        await until_settled(pilot)
        assert app.theme == "ebench-dark"
        assert len(app.theme_errors) == 1 and "settings.toml" in app.theme_errors[0]
        assert len(notified) == 1 and "settings.toml" in notified[0]


async def test_a_saved_theme_that_no_longer_exists_falls_back(tmp_path: Path):
    (tmp_path / "settings.toml").write_text('theme = "gone"\n')
    app = EBenchApp(Probe, home=tmp_path)
    async with app.run_test() as pilot:
        await until_settled(pilot)
        assert app.theme == "ebench-dark"
        assert any("gone" in error for error in app.theme_errors)


def test_the_writer_round_trips_and_is_atomic(tmp_path: Path):
    values: dict[str, str | int | bool] = {"theme": 'a "quoted"\\ thé\n', "size": 12, "on": True, "off": False}
    assert tomllib.loads(dumps(values)) == values
    path = tmp_path / "sub" / "settings.toml"
    save_settings(path, AppSettings.model_validate(values))
    settings, error = load_settings(path)
    assert error is None and settings.values() == values and settings.theme == values["theme"]
    assert [p.name for p in path.parent.iterdir()] == ["settings.toml"]  # no temporary left behind
    path.write_text("theme = [1, 2]\nx = 1\n")
    settings, error = load_settings(path)
    assert settings.values() == {"x": 1} and settings.theme is None
    assert error == f"{path}: ignored theme (a string)"


def test_values_of_the_wrong_type_are_dropped_one_line_and_the_rest_kept(tmp_path: Path):
    """The typed field and the kept keys are validated apart: one bad value costs only itself."""
    path = tmp_path / "settings.toml"
    path.write_text('theme = "ebench-light"\nwhen = 2026-12-05\nratio = 0.5\nnewer = "kept"\ncount = 2\n')
    settings, error = load_settings(path)
    assert settings.theme == "ebench-light" and settings.values() == {"theme": "ebench-light", "newer": "kept", "count": 2}
    assert error == f"{path}: ignored ratio (a string, integer or boolean), when (a string, integer or boolean)"
    settings.theme = "ebench-contrast"
    save_settings(path, settings)  # the keys a newer ebench wrote survive an older one's save
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {"theme": "ebench-contrast", "newer": "kept", "count": 2}
    for damaged in (b"\xff\xfe", b"[table\n"):
        path.write_bytes(damaged)
        settings, error = load_settings(path)
        assert settings == AppSettings() and error and error.startswith(f"{path}: ignored: ") and "\n" not in error
    assert load_settings(tmp_path / "absent.toml") == (AppSettings(), None)


async def test_choosing_with_f10_is_saved(tmp_path: Path):
    app = EBenchApp(Probe, home=tmp_path)
    async with app.run_test() as pilot:
        await until_settled(pilot)
        await pilot.press("f10")
        await until_settled(pilot)
        await pilot.press(*"ebench-contrast")
        await until_settled(pilot)
        await pilot.press("enter")
        await until_settled(pilot, lambda: (tmp_path / "settings.toml").exists())
        assert app.theme == "ebench-contrast"
    assert saved(tmp_path) == {"theme": "ebench-contrast"}


def test_the_settings_schema_describes_the_file(tmp_path: Path):
    """The model's JSON Schema holds a saved file (TOML's table read as JSON's object) and refuses a wrong type."""
    path = tmp_path / "settings.toml"
    save_settings(path, AppSettings.model_validate({"theme": "ebench-light", "newer": 2, "on": True}))
    jsonschema.validate(saved(tmp_path), settings_json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"theme": 3}, settings_json_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"ratio": 0.5}, settings_json_schema())
