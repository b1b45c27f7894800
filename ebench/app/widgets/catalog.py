"""The tool catalog: a domain's tools grouped read / write, fuzzy-searchable, with the highlighted
tool's description and parameters beside the list.

The catalog only shows and chooses; what a chosen tool does next (filling the composer) is the
screen's business, told by `ToolCatalog.Selected`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Self

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.fuzzy import Matcher
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...engine.tools import Tool

GROUPS = (("read", "Read"), ("write", "Write"), ("code", "Code"))
_GROUP_PREFIX = "group:"


@dataclass(frozen=True)
class CatalogEntry:
    """One row of the catalog: a real tool, or a pseudo entry such as exec_code (no `tool`)."""

    name: str
    kind: str
    summary: str
    description: str
    tool: Tool | None = None


def schema_type(schema: dict[str, Any]) -> str:
    """A short human name for a JSON schema type: `integer`, `string?`, `array of integer`, `enum`."""
    if "anyOf" in schema or "oneOf" in schema:
        members = schema.get("anyOf") or schema.get("oneOf") or []
        names = [schema_type(m) for m in members if m.get("type") != "null"]
        nullable = len(names) < len(members)
        return " | ".join(names) + ("?" if nullable else "")
    kind = schema.get("type")
    nullable = False
    if isinstance(kind, list):
        nullable = "null" in kind
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else " | ".join(kinds)
    if "enum" in schema:
        name = "enum"
    elif kind == "array":
        items = schema.get("items") or {}
        name = f"array of {schema_type(items)}" if items else "array"
    else:
        name = str(kind or "any")
    return name + ("?" if nullable or schema.get("nullable") else "")


EXACT_BONUS = 1_000_000.0  # far above any fuzzy score: exact names, then prefixes, rank first


def _entry_score(matcher: Matcher, entry: CatalogEntry) -> float:
    """A fuzzy match on the name; failing that, the summary scores (ranked lower) when it holds
    every word of the query, so "room" finds the tools about rooms without the scattered-letter
    matches a fuzzy search of long sentences would let through. An exact name ranks first, then
    names that start with the query, then the fuzzy order."""
    query = matcher.query.strip().lower()
    name = entry.name.lower()
    if query and name == query:
        return EXACT_BONUS * 2
    by_name = matcher.match(entry.name)
    if query and name.startswith(query):
        return EXACT_BONUS + by_name
    if by_name > 0:
        return by_name + 1.0  # any name match ranks above every summary-only match
    summary = entry.summary.lower()
    words = matcher.query.lower().split()
    if words and all(word in summary for word in words):
        return matcher.match(entry.summary)
    return 0.0


class ToolCatalog(Vertical):
    """Search box, the grouped tool list, and the highlighted tool's description and schema."""

    DEFAULT_CSS = """
    ToolCatalog {
        height: 1fr;
        #catalog-search {
            margin-bottom: 0;
        }
        #catalog-list {
            height: 1fr;
            min-height: 5;
            border: none;
            padding: 0;
        }
        #catalog-detail-scroll {
            height: 45%;
            min-height: 4;
            border-top: solid $panel-lighten-2;
        }
        #catalog-detail {
            padding: 0 1;
        }
    }
    """

    class Selected(Message):
        """A tool was chosen (enter or click in the list, enter in the search box)."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    class Highlighted(Message):
        """The cursor moved onto a tool (its details are shown)."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(
        self,
        tools: Iterable[Tool],
        extra: Sequence[tuple[str, str, str]] = (),
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.entries: list[CatalogEntry] = [CatalogEntry(t.name, t.kind, t.summary, t.description, t) for t in tools]
        for entry_name, kind, description in extra:
            summary = description.split("\n\n", 1)[0]
            self.entries.append(CatalogEntry(entry_name, kind or "code", summary, description))
        self._by_name = {e.name: e for e in self.entries}
        self.search_text = ""
        self.shown: list[str] = []  # tool names in list order, after filtering

    # -- building --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search tools (fuzzy)", id="catalog-search")
        yield OptionList(id="catalog-list")
        with VerticalScroll(id="catalog-detail-scroll"):
            yield Static("", id="catalog-detail")

    def on_mount(self) -> None:
        self._refill()

    def _groups(self) -> list[tuple[str, str, list[CatalogEntry]]]:
        known = [g for g, _ in GROUPS]
        groups = [(kind, label, [e for e in self.entries if e.kind == kind]) for kind, label in GROUPS]
        other = [e for e in self.entries if e.kind not in known]
        if other:
            groups.append(("other", "Other", other))
        return groups

    def _refill(self) -> None:
        """Rebuild the list for the current query; keep the highlighted tool when it is still shown."""
        option_list = self.query_one("#catalog-list", OptionList)
        previous = self.highlighted_name
        matcher = Matcher(self.search_text) if self.search_text.strip() else None
        options: list[Option | None] = []
        self.shown = []
        groups: list[tuple[str, str, list[CatalogEntry], float]] = []
        for kind, label, entries in self._groups():
            best = 0.0
            if matcher is not None:
                scored = [(s, e) for e in entries if (s := _entry_score(matcher, e)) > 0]
                scored.sort(key=lambda pair: -pair[0])  # stable: equal scores keep the registry order
                entries = [e for _, e in scored]
                best = scored[0][0] if scored else 0.0
            groups.append((kind, label, entries, best))
        if matcher is not None:  # the group holding an exact or prefix match comes first
            groups.sort(key=lambda group: -(group[3] // EXACT_BONUS))
        for kind, label, entries, _ in groups:
            if not entries:
                continue
            if options:
                options.append(None)  # separator
            options.append(
                Option(Content.from_markup(f"[b]{label}[/b] [dim]({len(entries)})[/dim]"), id=_GROUP_PREFIX + kind, disabled=True)
            )
            for entry in entries:
                prompt = matcher.highlight(entry.name) if matcher is not None else Content(entry.name)
                options.append(Option(Content.assemble("  ", prompt), id=entry.name))
                self.shown.append(entry.name)
        option_list.clear_options()
        option_list.add_options(options)
        if previous in self.shown and matcher is None:
            option_list.highlighted = option_list.get_option_index(previous)
        elif self.shown:
            option_list.highlighted = option_list.get_option_index(self.shown[0])
        else:
            self._show_detail(None)

    def focus(self, scroll_visible: bool = True) -> Self:
        """The catalog itself takes no focus: focusing it means searching."""
        self.query_one("#catalog-search", Input).focus(scroll_visible)
        return self

    # -- state -----------------------------------------------------------------------------
    @property
    def highlighted_name(self) -> str | None:
        """The tool under the cursor, or None (empty list, or nothing yet)."""
        if not self.is_mounted:
            return None
        option = self.query_one("#catalog-list", OptionList).highlighted_option
        if option is None or option.id is None or option.id.startswith(_GROUP_PREFIX):
            return None
        return option.id

    def group_counts(self) -> dict[str, int]:
        """Entries per group as currently shown (after the search)."""
        counts: dict[str, int] = {}
        for name in self.shown:
            kind = self._by_name[name].kind
            counts[kind] = counts.get(kind, 0) + 1
        return counts

    def select(self, name: str, *, notify: bool = False) -> None:
        """Highlight `name` (clearing a search that hides it) and show its details.

        It posts `Selected` only with `notify=True`: the screen calls this when it has already
        loaded the tool itself (a call from the trace), and an echo would reset the composer.
        """
        if name not in self._by_name:
            raise KeyError(f"unknown tool {name!r}")
        if name not in self.shown:
            self.query_one("#catalog-search", Input).value = ""
            self.search_text = ""
            self._refill()
        option_list = self.query_one("#catalog-list", OptionList)
        option_list.highlighted = option_list.get_option_index(name)
        self._show_detail(name)
        if notify:
            self.post_message(self.Selected(name))

    # -- events ----------------------------------------------------------------------------
    @on(Input.Changed, "#catalog-search")
    def _search_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.search_text = event.value
        self._refill()

    @on(Input.Submitted, "#catalog-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        """Enter in the search box chooses the best match."""
        event.stop()
        name = self.highlighted_name
        if name is not None:
            self.post_message(self.Selected(name))

    def on_key(self, event: events.Key) -> None:
        # Down from the search box moves into the list, so searching then choosing needs no tab.
        search = self.query_one("#catalog-search", Input)
        if event.key == "down" and search.has_focus:
            event.stop()
            option_list = self.query_one("#catalog-list", OptionList)
            option_list.focus()

    @on(OptionList.OptionHighlighted, "#catalog-list")
    def _option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        name = event.option_id
        if name is None or name.startswith(_GROUP_PREFIX):
            return
        self._show_detail(name)
        self.post_message(self.Highlighted(name))

    @on(OptionList.OptionSelected, "#catalog-list")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        name = event.option_id
        if name is not None and not name.startswith(_GROUP_PREFIX):
            self.post_message(self.Selected(name))

    # -- detail ----------------------------------------------------------------------------
    def _show_detail(self, name: str | None) -> None:
        detail = self.query_one("#catalog-detail", Static)
        if name is None:
            detail.update(Content.styled("No tool matches the search.", "italic $text-muted"))
            return
        detail.update(describe_entry(self._by_name[name]))


def describe_entry(entry: CatalogEntry) -> Content:
    """The detail pane's content: name and kind, the description, then one block per parameter
    (name, type, required or default, description) that reads well in a narrow pane."""
    parts: list[str | tuple[str, str] | Content] = [
        (entry.name, "bold"),
        "  ",
        (f"[{entry.kind}]", "$text-muted"),
        "\n",
        entry.description or entry.summary,
    ]
    tool = entry.tool
    if tool is None:
        return Content.assemble(*parts)
    if not tool.params:
        parts.append(("\n\nTakes no arguments.", "$text-muted italic"))
        return Content.assemble(*parts)
    properties = tool.parameters.get("properties", {})
    parts.append(("\n\nParameters", "bold underline"))
    for param in tool.params:
        schema = properties.get(param.name, param.schema)
        type_name = schema_type(schema)
        choices = schema.get("enum") or (schema.get("items") or {}).get("enum")
        if choices:
            type_name += " (" + " | ".join(str(v) for v in choices) + ")"
        parts += ["\n", ("• ", "$text-muted"), (param.name, "bold"), ": ", (type_name, "$accent"), "  "]
        if param.required:
            parts.append(("required", "bold $error"))
        elif param.default is None:
            parts.append(("optional", "$text-muted"))
        else:
            parts.append((f"default {json.dumps(param.default, ensure_ascii=False)}", "$text-muted"))
        if param.description:
            parts += ["\n", ("    " + param.description, "italic")]
    return Content.assemble(*parts)
