"""What the app's screen tests share: a stand-in for a screen another test file covers, so a
screen's own tests assert on how it opens the next one without running it."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from textual.app import ComposeResult
from textual.widgets import Static

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


async def until_loaded(pilot: Any, screen_type: type) -> Any:
    """The current screen, once it is a `screen_type` whose worker has loaded its data."""
    screen = pilot.app.screen
    assert isinstance(screen, screen_type)
    for _ in range(400):
        if screen.loaded:
            break
        await pilot.pause(0.025)
    assert screen.loaded
    await pilot.pause()
    return screen
