"""The tool catalog and the call composer, alone in a small host app with the meeting domain's
real tools; and the composer's pure text-to-arguments check."""

from __future__ import annotations

import json
from typing import Any

import pytest
from appcheck import until_settled
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button, Input, OptionList, Select, TextArea

from ebench.app.widgets.catalog import ToolCatalog
from ebench.app.widgets.composer import CallComposer, check_arguments
from ebench.engine.domain_registry import get_domain

TOOLS = get_domain("meeting").tools
EXEC_CODE = ("exec_code", "code", "Run Python code that calls the tools as functions.")


class Host(App[None]):
    """Catalog beside composer, wired the way the solve screen wires them; records the messages."""

    def __init__(self, *, with_catalog: bool = True) -> None:
        super().__init__()
        self.with_catalog = with_catalog
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        with Horizontal():
            if self.with_catalog:
                yield ToolCatalog(list(TOOLS), extra=[EXEC_CODE])
            yield CallComposer()

    def on_tool_catalog_selected(self, message: ToolCatalog.Selected) -> None:
        self.messages.append(message)
        if message.name in TOOLS:
            self.query_one(CallComposer).set_tool(TOOLS.get(message.name))

    def on_call_composer_submitted(self, message: CallComposer.Submitted) -> None:
        self.messages.append(message)

    def on_call_composer_edited(self, message: CallComposer.Edited) -> None:
        # Posted after the composer handled an edit (its field checked): what a test waits for.
        self.messages.append(message)

    def edits(self) -> int:
        return sum(isinstance(m, CallComposer.Edited) for m in self.messages)

    def selected(self) -> list[str]:
        return [m.name for m in self.messages if isinstance(m, ToolCatalog.Selected)]

    def submitted(self) -> list[CallComposer.Submitted]:
        return [m for m in self.messages if isinstance(m, CallComposer.Submitted)]


# -- check_arguments -----------------------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "room_id": {"type": "integer"},
        "title": {"type": "string"},
        "ratio": {"type": "number"},
        "mine": {"type": "boolean", "default": False},
        "status": {"type": "string", "enum": ["active", "cancelled"]},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "extra": {"type": "object"},
        "floor": {"type": ["integer", "null"]},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["room_id", "title"],
}


def test_check_arguments_types_the_texts_and_omits_empty_optionals():
    args, errors = check_arguments(
        SCHEMA,
        {
            "room_id": " 12 ",
            "title": "Sync",
            "ratio": "0.5",
            "mine": "true",
            "status": "cancelled",
            "ids": "[1, 2]",
            "extra": '{"a": 1}',
            "floor": "",
            "note": "",
        },
    )
    assert errors == {}
    assert args == {"room_id": 12, "title": "Sync", "ratio": 0.5, "mine": True, "status": "cancelled", "ids": [1, 2], "extra": {"a": 1}}
    assert type(args["room_id"]) is int
    assert list(args) == [k for k in SCHEMA["properties"] if k in args]  # the schema's order


@pytest.mark.parametrize(
    ("field", "text", "error"),
    [
        ("room_id", "abc", "expected an integer"),
        ("room_id", "1.5", "expected an integer"),
        ("room_id", str(2**63), "integer out of range"),
        ("ratio", "x", "expected a number"),
        ("mine", "yes", "expected true or false"),
        ("status", "open", "expected one of: active, cancelled"),
        ("ids", "[1, ", "not valid JSON"),
        ("ids", '["a"]', "item 0: expected an integer"),
        ("ids", '{"a": 1}', "expected a JSON array"),
        ("extra", "[1]", "expected a JSON object"),
        ("extra", "{nope}", "not valid JSON"),
    ],
)
def test_check_arguments_reports_each_bad_field(field: str, text: str, error: str):
    args, errors = check_arguments(SCHEMA, {"room_id": "1", "title": "t", field: text})
    assert errors == {field: error}
    assert field not in args


def test_check_arguments_required_nullable_and_conveniences():
    args, errors = check_arguments(
        SCHEMA, {"title": "  ", "floor": "null", "note": "null", "ids": "3, 4", "ratio": "2", "unknown": "ignored"}
    )
    assert errors == {"room_id": "required", "title": "required"}
    assert args == {"ratio": 2, "ids": [3, 4], "floor": None, "note": None}


def test_check_arguments_on_a_real_schema_with_defaults():
    schema = TOOLS.get("search_rooms").parameters
    args, errors = check_arguments(schema, {"min_capacity": "8", "equipment": '["projector"]', "page": ""})
    assert (args, errors) == ({"min_capacity": 8, "equipment": ["projector"]}, {})
    _, errors = check_arguments(schema, {"equipment": '["teleporter"]'})
    assert errors["equipment"].startswith("item 0: expected one of: projector")


def test_the_form_refuses_what_the_registry_refuses_in_its_own_words():
    """The form checks values with the registry's check (value_mismatch); only the phrasing differs."""
    from ebench.engine.tools import ToolEnv

    tool = TOOLS.get("create_chat")
    cases = {
        f"[2, {2**63}]": "item 1: integer out of range",
        "[true]": "item 0: expected an integer",
        "[null]": "item 0: null is not allowed",
    }
    for text, error in cases.items():
        args, errors = check_arguments(tool.parameters, {"name": "Chat", "member_ids": text})
        assert errors == {"member_ids": error}
        refused = TOOLS.call(ToolEnv(None, 1, ""), tool.name, {"name": "Chat", "member_ids": json.loads(text)})  # type: ignore[arg-type]
        assert refused.error_code == "invalid_arguments" and "member_ids' item" in refused.error_message
    args, errors = check_arguments(tool.parameters, {"name": "Chat", "member_ids": "2, 3.0"})
    assert (args, errors) == ({"name": "Chat", "member_ids": [2, 3.0]}, {})


# -- the catalog ---------------------------------------------------------------------------


async def test_catalog_groups_read_write_and_code_with_the_domains_counts():
    app = Host()
    async with app.run_test(size=(160, 48)) as pilot:
        catalog = app.query_one(ToolCatalog)
        await until_settled(pilot, lambda: catalog.highlighted_name is not None, what="the catalog filled")
        reads = sum(t.kind == "read" for t in TOOLS)
        writes = sum(t.kind == "write" for t in TOOLS)
        assert catalog.group_counts() == {"read": reads, "write": writes, "code": 1}
        options = app.query_one("#catalog-list", OptionList)
        headers = [
            str(options.get_option_at_index(i).prompt) for i in range(options.option_count) if options.get_option_at_index(i).disabled
        ]
        assert headers == [f"Read ({reads})", f"Write ({writes})", "Code (1)"]
        # the first tool is highlighted and described, with its parameters
        first = next(iter(TOOLS)).name
        assert catalog.highlighted_name == first
        await pilot.press("tab", "down")  # into the list, down one
        second = list(TOOLS)[1]
        await until_settled(
            pilot, lambda: second.summary[:30] in str(app.query_one("#catalog-detail").render()), what="the second tool described"
        )
        assert catalog.highlighted_name == second.name
        detail = str(app.query_one("#catalog-detail").render())
        assert second.summary[:30] in detail
        for param in second.params:
            assert param.name in detail


async def test_catalog_search_is_fuzzy_and_enter_selects_the_best_match():
    app = Host()
    async with app.run_test(size=(160, 48)) as pilot:
        catalog = app.query_one(ToolCatalog)
        await until_settled(pilot, lambda: catalog.highlighted_name is not None, what="the catalog filled")
        await pilot.click("#catalog-search")
        await pilot.press(*"bkroom")  # letters scattered through book_room
        await until_settled(pilot, lambda: catalog.search_text == "bkroom", what="the search")
        assert catalog.shown[0] == "book_room"
        assert len(catalog.shown) < len(TOOLS)
        await pilot.press("enter")
        await until_settled(pilot, lambda: app.selected() != [], what="a tool selected")
        assert app.selected() == ["book_room"]
        assert app.query_one(CallComposer).tool is TOOLS.get("book_room")
        # a word of a summary finds tools whose names lack it; nothing found says so
        catalog.query_one("#catalog-search", Input).value = "zzzzqq"
        await until_settled(pilot, lambda: catalog.search_text == "zzzzqq", what="the search")
        assert catalog.shown == [] and catalog.highlighted_name is None
        assert "No tool matches" in str(app.query_one("#catalog-detail").render())


async def test_catalog_list_enter_selects_and_select_highlights_without_echo():
    app = Host()
    async with app.run_test(size=(160, 48)) as pilot:
        catalog = app.query_one(ToolCatalog)
        await until_settled(pilot, lambda: catalog.highlighted_name is not None, what="the catalog filled")
        catalog.query_one("#catalog-search", Input).value = "meeting"
        await until_settled(pilot, lambda: catalog.search_text == "meeting", what="the search")
        catalog.select("exec_code")  # hidden by the search: the search is cleared to show it
        # the cleared search box's own change handled too (it refills the list again)
        await until_settled(pilot, lambda: catalog.search_text == "" and catalog.highlighted_name == "exec_code", what="exec_code shown")
        assert catalog.search_text == "" and catalog.highlighted_name == "exec_code"
        assert app.selected() == []
        catalog.focus()  # focusing the catalog means searching
        await until_settled(pilot, lambda: app.focused is catalog.query_one("#catalog-search"), what="the search box focused")
        assert app.focused is catalog.query_one("#catalog-search")
        await pilot.press("down")  # from the search box into the list
        assert app.focused is catalog.query_one("#catalog-list")
        await pilot.press("enter")
        await until_settled(pilot, lambda: app.selected() != [], what="a tool selected")
        assert app.selected() == ["exec_code"]
        catalog.select("get_employee", notify=True)
        await until_settled(pilot, lambda: len(app.selected()) == 2, what="the second selection")
        assert app.selected() == ["exec_code", "get_employee"]
        with pytest.raises(KeyError):
            catalog.select("no_such_tool")


# -- the composer --------------------------------------------------------------------------


async def _composer(pilot: Any, tool: str, args: dict[str, Any] | None = None) -> CallComposer:
    composer = pilot.app.query_one(CallComposer)
    composer.set_tool(TOOLS.get(tool), args)
    await composer.form_ready()
    return composer


async def _type(pilot: Any, widget: Input, text: str) -> None:
    """Type `text` into an empty field, then wait until the composer has checked each keystroke's
    change (one Edited per change)."""
    assert widget.value == ""
    edits = pilot.app.edits()
    widget.focus()
    await pilot.press(*text)
    await until_settled(pilot, lambda: widget.value == text and pilot.app.edits() >= edits + len(text), what=f"{text!r} typed and checked")


async def test_composer_builds_one_field_per_parameter_by_type():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "search_rooms")
        params = TOOLS.get("search_rooms").params
        assert list(composer.values) == [p.name for p in params]
        assert isinstance(composer.field("min_capacity"), Input)  # integer
        assert isinstance(composer.field("query"), Input)  # string
        assert isinstance(composer.field("equipment"), Input)  # array: JSON text
        room_type = composer.field("room_type")  # enum
        assert isinstance(room_type, Select)
        assert [str(label) for label, _ in room_type._options[1:]] == list(
            TOOLS.get("search_rooms").parameters["properties"]["room_type"]["enum"]
        )
        assert isinstance(composer.field("bookable_only"), Select)  # boolean
        # defaults are placeholders, not values: left empty they are omitted
        page = composer.field("page")
        assert isinstance(page, Input) and page.value == "" and page.placeholder == "default: 1"
        assert "JSON array" in composer.field("equipment").placeholder  # type: ignore[union-attr]
        required = await _composer(pilot, "create_meeting")
        labels = [str(f.label.render()) for f in required.query(".composer-field").results()]  # type: ignore[attr-defined]
        assert labels[0].startswith("title *") and not labels[-1].startswith("agenda *")


async def test_a_bad_integer_shows_inline_and_blocks_run():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "get_employee")
        field = composer.field("employee_id")
        assert isinstance(field, Input)
        await _type(pilot, field, "12x")
        assert composer.errors == {"employee_id": "expected an integer"}
        assert field.has_class("-invalid")
        assert composer.query_one("#composer-run", Button).disabled
        await pilot.press("f5")
        await pilot.click("#composer-run")
        status = composer.query_one("#composer-status")
        await until_settled(pilot, lambda: "fix 1 field first" in str(status.render()), what="F5 refused")
        assert app.submitted() == []
        await pilot.press("backspace")
        assert composer.errors == {} and not composer.query_one("#composer-run", Button).disabled


async def test_run_with_an_empty_required_field_says_required():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "cancel_meeting")
        await pilot.press("f5")
        await until_settled(pilot, lambda: composer.errors != {}, what="F5 refused")
        assert composer.errors == {"meeting_id": "required"}
        assert app.submitted() == []
        assert app.focused is composer.field("meeting_id")


async def test_a_good_form_posts_typed_arguments_without_empty_optionals():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "search_rooms")
        await _type(pilot, composer.field("min_capacity"), "8")  # type: ignore[arg-type]
        await _type(pilot, composer.field("equipment"), '["projector", "whiteboard"]')  # type: ignore[arg-type]
        composer.field("room_type").value = "boardroom"
        edits = app.edits()
        composer.field("bookable_only").value = "true"
        await until_settled(pilot, lambda: app.edits() >= edits + 2, what="both choices checked")
        await pilot.click("#composer-run")
        await until_settled(pilot, lambda: app.submitted() != [], what="the call sent")
        (sent,) = app.submitted()
        assert sent.tool == "search_rooms" and sent.raw is False
        assert sent.args == {"min_capacity": 8, "equipment": ["projector", "whiteboard"], "room_type": "boardroom", "bookable_only": True}
        # enter in a field runs too
        await _type(pilot, composer.field("floor"), "3")  # type: ignore[arg-type]
        await pilot.press("enter")
        await until_settled(pilot, lambda: len(app.submitted()) == 2, what="the second call sent")
        assert app.submitted()[-1].args["floor"] == 3


async def test_raw_mode_round_trip():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "invite_participants", {"meeting_id": 7, "employee_ids": [1, 2]})
        assert composer.values["meeting_id"] == "7" and composer.values["employee_ids"] == "[1, 2]"
        composer.field("meeting_id").focus()
        raw = composer.query_one("#composer-raw-text", TextArea)
        await pilot.press("ctrl+j")
        await until_settled(pilot, lambda: app.focused is raw, what="the raw editor focused")
        assert composer.raw_mode and app.focused is raw
        assert json.loads(raw.text) == {"meeting_id": 7, "employee_ids": [1, 2]}
        raw.load_text('{"meeting_id": 9, "employee_ids": [3], "role": "optional"}')
        await pilot.press("ctrl+j")
        # back in the form, the first field takes the focus once mounted
        await until_settled(pilot, lambda: not composer.raw_mode and app.focused is composer.field("meeting_id"), what="the form back")
        assert not composer.raw_mode
        assert composer.values == {"meeting_id": "9", "employee_ids": "[3]", "role": "optional"}
        await pilot.press("f5")
        await until_settled(pilot, lambda: app.submitted() != [], what="the call sent")
        assert app.submitted()[-1].args == {"meeting_id": 9, "employee_ids": [3], "role": "optional"}


async def test_invalid_json_is_refused_and_raw_mode_sends_unchecked_objects():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "get_employee")
        raw = composer.query_one("#composer-raw-text", TextArea)
        error = composer.query_one("#composer-raw-error")
        await pilot.click("#composer-raw-toggle")
        await until_settled(pilot, lambda: app.focused is raw, what="the raw editor focused")
        raw.load_text('{"employee_id": ')
        await pilot.press("ctrl+j")  # back to the form: refused
        await until_settled(pilot, lambda: error.display, what="the JSON refused")
        assert composer.raw_mode and error.display and "not valid JSON" in str(error.render())
        await pilot.press("f5")  # nor is it sent
        await until_settled(pilot, what="F5 handled")
        assert app.submitted() == []
        raw.load_text("[1]")
        await pilot.press("f5")
        await until_settled(pilot, lambda: "JSON object" in str(error.render()), what="a non-object refused")
        assert app.submitted() == [] and "JSON object" in str(error.render())
        # a deliberately bad call goes out as typed, for the tool itself to refuse
        raw.load_text('{"employee_id": "abc", "bogus": true}')
        await until_settled(pilot, lambda: not error.display, what="the error cleared by the edit")
        assert not error.display
        await pilot.press("f5")
        await until_settled(pilot, lambda: app.submitted() != [], what="the call sent")
        (sent,) = app.submitted()
        assert sent.raw and sent.args == {"employee_id": "abc", "bogus": True}
        await pilot.press("ctrl+j")  # the form has no field for `bogus`: refused, said why
        await until_settled(pilot, lambda: "bogus" in str(error.render()), what="the form refused")
        assert composer.raw_mode and "bogus" in str(error.render())


async def test_set_args_fills_the_form_and_opens_raw_mode_for_what_it_cannot_hold():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "list_department_members")
        composer.set_args({"department_id": 4, "include_sub_departments": True, "status": "on_leave"})
        await composer.form_ready()
        assert composer.values == {"department_id": "4", "include_sub_departments": "true", "status": "on_leave", "page": ""}
        composer.set_args({"department_id": "four"})  # a bad value from a trace: shown with its error
        await composer.form_ready()
        assert composer.errors == {"department_id": "expected an integer"}
        composer.set_args({"status": "retired"})  # not a choice of the Select: raw mode keeps it
        await composer.form_ready()
        assert composer.raw_mode
        assert json.loads(composer.query_one("#composer-raw-text", TextArea).text) == {"status": "retired"}
        composer.set_tool(TOOLS.get("get_my_profile"))  # no parameters
        await composer.form_ready()
        assert not composer.raw_mode and composer.values == {}
        composer.focus()  # Run, when there is nothing to type
        await until_settled(pilot, lambda: app.focused is composer.query_one("#composer-run"), what="Run focused")
        assert app.focused is composer.query_one("#composer-run")
        await pilot.press("f5")
        await until_settled(pilot, lambda: app.submitted() != [], what="the call sent")
        assert app.submitted()[-1].args == {}


async def test_take_value_goes_into_the_field_that_last_had_focus():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = pilot.app.query_one(CallComposer)
        assert composer.take_value(5) is None  # no tool chosen: nowhere to put it
        composer = await _composer(pilot, "list_room_bookings")
        assert composer.take_value(12) == "room_id"  # nothing focused yet: the first field
        await until_settled(pilot, lambda: app.focused is composer.field("room_id"), what="room_id focused")
        assert composer.values["room_id"] == "12" and app.focused is composer.field("room_id")
        composer.field("start").focus()
        # the composer notes the field that has the focus when told of it
        await until_settled(pilot, lambda: composer._last_field == "start", what="start focused")
        app.set_focus(None)  # focus left the composer (the result viewer): the last field is remembered
        edits = app.edits()
        assert composer.take_value("2025-03-04 10:00") == "start"
        await until_settled(pilot, lambda: app.edits() > edits, what="the value taken checked")
        assert composer.values["start"] == "2025-03-04 10:00" and composer.errors == {}
        composer.field("status").focus()  # a choice list takes only one of its choices
        await until_settled(pilot, lambda: composer._last_field == "status", what="status focused")
        assert composer.take_value("no such status") is None and composer.values["status"] == ""
        edits = app.edits()
        assert composer.take_value("cancelled") == "status"
        await until_settled(pilot, lambda: app.edits() > edits, what="the choice taken checked")
        assert composer.values["status"] == "cancelled"
        await pilot.press("f5")
        await until_settled(pilot, lambda: app.submitted() != [], what="the call sent")
        assert app.submitted()[-1].args == {"room_id": 12, "start": "2025-03-04 10:00", "status": "cancelled"}


async def test_take_value_appends_to_an_array_and_inserts_at_the_raw_cursor():
    app = Host(with_catalog=False)
    async with app.run_test(size=(100, 48)) as pilot:
        composer = await _composer(pilot, "add_chat_members", {"chat_id": 3})
        composer.field("employee_ids").focus()
        await until_settled(pilot, lambda: composer._last_field == "employee_ids", what="employee_ids focused")
        edits = app.edits()
        assert composer.take_value(31) == "employee_ids" and composer.take_value(40) == "employee_ids"
        await until_settled(pilot, lambda: app.edits() > edits, what="the values taken checked")
        assert composer.values["employee_ids"] == "[31, 40]"
        raw = composer.query_one("#composer-raw-text", TextArea)
        await pilot.press("ctrl+j")
        await until_settled(pilot, lambda: app.focused is raw, what="the raw editor focused")
        raw.load_text('{"chat_id": , "employee_ids": [31, 40]}')
        raw.move_cursor((0, len('{"chat_id": ')))
        assert composer.take_value(7) == "raw JSON"
        assert json.loads(raw.text) == {"chat_id": 7, "employee_ids": [31, 40]}  # inserted at the cursor
        assert composer.take_value("a b") == "raw JSON" and '7"a b",' in raw.text  # as JSON text


def test_snapshot_of_the_composer(snap_compare: Any):
    async def fill(pilot: Any) -> None:
        composer = pilot.app.query_one(CallComposer)
        composer.set_tool(
            TOOLS.get("create_meeting"),
            {"title": "Roadmap review", "start": "2025-03-04 10:00", "participant_ids": [12, 31], "room_id": "B-12"},
        )
        await composer.form_ready()
        await until_settled(pilot, what="the filled form")

    assert snap_compare(Host(with_catalog=False), terminal_size=(90, 34), run_before=fill)
