"""The help screen: every key binding active where it was opened, grouped by where it applies."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def binding_rows(screen: Screen[Any]) -> list[tuple[str, str, str]]:
    """(where, key, what) for every described binding active on `screen`, app bindings last."""
    app = screen.app
    rows: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if not binding.description:
            continue
        where = "app" if active.node is app else ("screen" if active.node is screen else type(active.node).__name__)
        item = (where, binding.action)
        if item in seen:
            continue
        seen.add(item)
        rows.append((where, app.get_key_display(binding), binding.description))
    order = {"screen": 0, "app": 2}
    rows.sort(key=lambda row: (order.get(row[0], 1), row[0]))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="help.close")]

    def __init__(self, under: Screen[Any]) -> None:
        super().__init__()
        self.under = under
        self.rows = binding_rows(under)

    def compose(self) -> ComposeResult:
        table = Table(
            title=f"Keys: {getattr(self.under, 'TITLE', None) or type(self.under).__name__}", expand=True, box=None, header_style="bold"
        )
        table.add_column("Where", style="dim", no_wrap=True)
        table.add_column("Key", style="bold", no_wrap=True)
        table.add_column("Action")
        for where, key, what in self.rows:
            table.add_row(where, key, what)
        with VerticalScroll(id="help-body"):
            yield Static(table, id="help-table")
            yield Static(
                "Every action is also in the command palette (ctrl+p). Remap keys by binding id in <data dir>/keymap.toml.",
                id="help-footnote",
            )
