"""The call composer: a form built from a tool's JSON schema, with inline type checks, and a raw
JSON mode for calls the form cannot express (or deliberately bad ones).

The composer never executes a call: Run posts `CallComposer.Submitted` and the screen calls the
tool. The text-to-arguments conversion is the pure `check_arguments`, so it is tested without an app.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Self

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, ContentSwitcher, Input, Select, Static, TextArea

from ...engine.tools import Mismatch, Tool, value_mismatch
from .catalog import schema_type
from .code_editor import EditorArea

# TextArea(language="json") segfaults with the installed tree-sitter / tree-sitter-json pair
# (tree-sitter 0.26.1, tree-sitter-json 0.24.8); set this to "json" once they agree again.
RAW_LANGUAGE: str | None = None

_OMIT = object()  # an optional field left empty: the argument is left out of the call


@dataclass(frozen=True)
class FieldSpec:
    """What the form needs to know about one parameter, whatever shape its JSON schema has."""

    name: str
    kind: str  # integer, number, boolean, string, enum, array, object, json (a union of types)
    required: bool
    nullable: bool
    enum: tuple[Any, ...]
    default: Any
    has_default: bool
    description: str
    schema: dict[str, Any]

    @property
    def uses_select(self) -> bool:
        return self.kind in ("enum", "boolean")


def field_spec(name: str, schema: dict[str, Any], required: bool) -> FieldSpec:
    """Normalise a property schema: type lists and anyOf with null become `nullable`."""
    nullable = bool(schema.get("nullable"))
    kinds: list[str] = []
    members = schema.get("anyOf") or schema.get("oneOf")
    if members:
        for member in members:
            member_type = member.get("type")
            if member_type == "null":
                nullable = True
            elif "enum" in member:
                kinds.append("enum")
            elif isinstance(member_type, str):
                kinds.append(member_type)
        if len(kinds) == 1 and len([m for m in members if m.get("type") != "null"]) == 1:
            inner = next(m for m in members if m.get("type") != "null")
            schema = {**schema, **inner}
    else:
        raw_type = schema.get("type")
        if isinstance(raw_type, list):
            nullable = nullable or "null" in raw_type
            kinds = [k for k in raw_type if k != "null"]
        elif isinstance(raw_type, str):
            kinds = [raw_type]
    if "enum" in schema:
        kind = "enum"
    elif len(kinds) == 1 and kinds[0] in ("integer", "number", "boolean", "string", "array", "object"):
        kind = kinds[0]
    else:
        kind = "json"
    return FieldSpec(
        name=name,
        kind=kind,
        required=required,
        nullable=nullable,
        enum=tuple(schema.get("enum", ())),
        default=schema.get("default"),
        has_default="default" in schema,
        description=str(schema.get("description", "")),
        schema=schema,
    )


def field_specs(schema: dict[str, Any]) -> list[FieldSpec]:
    required = set(schema.get("required", ()))
    return [field_spec(name, prop, name in required) for name, prop in (schema.get("properties") or {}).items()]


# -- text <-> value ------------------------------------------------------------------------


def _describe(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


_EXPECTED = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "array": "a JSON array",
    "object": "a JSON object",
}


def _checked_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A property schema in the shape the registry's value check reads (`type`, `enum`, `items`,
    `nullable`): type lists and anyOf folded as `field_spec` does; a union of types is left
    untyped, which takes any value."""
    spec = field_spec("", schema, required=True)
    checked: dict[str, Any] = {"nullable": spec.nullable}
    if spec.kind == "enum":
        checked["enum"] = list(spec.enum)
    elif spec.kind != "json":
        checked["type"] = spec.kind
    items = spec.schema.get("items")
    if spec.kind == "array" and items:
        checked["items"] = _checked_schema(items)
    return checked


def _form_problem(mismatch: Mismatch) -> str:
    """A mismatch found by the registry's check, phrased for a field of the form."""
    if mismatch.inner is not None:
        return f"item {mismatch.item}: {_form_problem(mismatch.inner)}"
    if mismatch.value is None:
        return "null is not allowed"
    if mismatch.out_of_range:
        return "integer out of range"
    if mismatch.expected == "enum":
        return "expected one of: " + ", ".join(_describe(v) for v in mismatch.choices)
    return f"expected {_EXPECTED[mismatch.expected]}"


def _value_problem(schema: dict[str, Any], value: Any) -> str | None:
    """None when a value fits the parameter's schema, by the registry's own check (so the form
    refuses exactly what a call would), else the problem in the form's words."""
    mismatch = value_mismatch(_checked_schema(schema), value)
    return None if mismatch is None else _form_problem(mismatch)


def convert_field(spec: FieldSpec, text: str) -> tuple[Any, str | None]:
    """(value, None), (_OMIT, None) for an optional field left empty, or (None, error)."""
    stripped = text.strip()
    if not stripped:
        return (None, "required") if spec.required else (_OMIT, None)
    if spec.nullable and stripped == "null":
        return None, None
    if spec.kind == "string":
        return text, None
    if spec.kind == "integer":
        return _convert_integer(spec, stripped)
    if spec.kind == "number":
        return _convert_number(stripped)
    if spec.kind == "boolean":
        lowered = stripped.lower()
        if lowered in ("true", "false"):
            return lowered == "true", None
        return None, "expected true or false"
    if spec.kind == "enum":
        return _convert_enum(spec, stripped)
    return _convert_json(spec, stripped)


def _convert_integer(spec: FieldSpec, stripped: str) -> tuple[Any, str | None]:
    try:
        value = int(stripped)
    except ValueError:
        return None, "expected an integer"
    problem = _value_problem(spec.schema, value)
    return (None, problem) if problem else (value, None)


def _convert_number(stripped: str) -> tuple[Any, str | None]:
    """A finite number; an integer's text stays an int."""
    try:
        number = float(stripped)
    except ValueError:
        return None, "expected a number"
    if number != number or number in (float("inf"), float("-inf")):
        return None, "expected a finite number"
    try:
        return int(stripped), None
    except ValueError:
        return number, None


def _convert_enum(spec: FieldSpec, stripped: str) -> tuple[Any, str | None]:
    for choice in spec.enum:
        if stripped == (choice if isinstance(choice, str) else json.dumps(choice)):
            return choice, None
    return None, "expected one of: " + ", ".join(_describe(v) for v in spec.enum)


def _convert_json(spec: FieldSpec, stripped: str) -> tuple[Any, str | None]:
    """Array, object, json: JSON text (an array may leave out its brackets: `1, 2, 3`)."""
    try:
        decoded = json.loads(stripped)
    except json.JSONDecodeError:
        if spec.kind != "array" or stripped.startswith("["):
            return None, "not valid JSON"
        try:
            decoded = json.loads(f"[{stripped}]")
        except json.JSONDecodeError:
            return None, "not valid JSON"
    problem = _value_problem(spec.schema, decoded)
    return (None, problem) if problem else (decoded, None)


def value_text(spec: FieldSpec, value: Any) -> str:
    """The form text that `convert_field` turns back into `value`."""
    if value is None:
        return "null"
    if isinstance(value, str) and spec.kind in ("string", "enum"):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _text_with(spec: FieldSpec, text: str, value: Any) -> str:
    """A field's new text once `value` is taken into it: an array field that holds an array (or
    nothing) gets the value appended, so ids can be collected one by one; any other field is replaced."""
    if spec.kind == "array" and not isinstance(value, list):
        current, error = convert_field(spec, text) if text.strip() else ([], None)
        if error is None and isinstance(current, list):
            return json.dumps([*current, value], ensure_ascii=False)
    return value_text(spec, value)


def check_arguments(schema: dict[str, Any], values: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Turn the form's texts into call arguments: (args, errors by field).

    Empty optional fields are omitted (the tool's default applies); texts for names the schema
    does not have are ignored. Arguments keep the schema's order.
    """
    args: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for spec in field_specs(schema):
        value, error = convert_field(spec, values.get(spec.name, ""))
        if error is not None:
            errors[spec.name] = error
        elif value is not _OMIT:
            args[spec.name] = value
    return args, errors


PAGE = "page"  # a list tool's argument: its pages are fetched one call each


def paged(tool: Tool) -> bool:
    """Whether the tool returns its results a page at a time (it takes a `page`)."""
    return PAGE in (tool.parameters.get("properties") or {})


def _placeholder(spec: FieldSpec) -> str:
    if spec.has_default:
        return f"default: {value_text(spec, spec.default) if spec.default != '' else '(empty)'}"
    items = spec.schema.get("items") or {}
    if items.get("enum"):
        example = json.dumps(items["enum"][:2], ensure_ascii=False)
    elif items.get("type") == "string":
        example = '["a", "b"]'
    else:
        example = "[1, 2]"
    hint = {
        "integer": "integer",
        "number": "number",
        "string": "text",
        "array": f"JSON array, e.g. {example}",
        "object": 'JSON object, e.g. {"key": "value"}',
        "json": "JSON value",
    }.get(spec.kind, spec.kind)
    return f"{hint} (required)" if spec.required else f"{hint} (optional)"


# -- the widget ----------------------------------------------------------------------------


class ComposerField(Vertical):
    """One parameter: label line, the input (Input or Select) and its inline error."""

    def __init__(self, spec: FieldSpec, text: str) -> None:
        super().__init__(classes="composer-field")
        self.spec = spec
        label = Content.assemble(
            (spec.name, "bold"),
            (" *", "$error bold") if spec.required else "",
            ("  " + schema_type(spec.schema), "$text-muted"),
            ("  " + spec.description if spec.description else "", "$text-muted italic"),
        )
        self.label = Static(label, classes="composer-label", markup=False)
        self.input: Input | Select[str]
        if spec.uses_select:
            choices = [value_text(spec, c) for c in spec.enum] if spec.kind == "enum" else ["true", "false"]
            if spec.nullable:
                choices.append("null")
            prompt = _placeholder(spec) if not spec.required else "choose…"
            value: str | Any = text if text in choices else Select.NULL
            self.input = Select(
                [(c, c) for c in choices],
                prompt=prompt,
                allow_blank=True,
                value=value,
                compact=True,
                name=spec.name,
                classes="composer-input",
            )
        else:
            self.input = Input(text, placeholder=_placeholder(spec), compact=True, name=spec.name, classes="composer-input")
        if spec.description:
            self.input.tooltip = spec.description
        self.error = Static("", classes="composer-error", markup=False)
        self.error.display = False
        self.error_text = ""

    def compose(self) -> ComposeResult:
        yield self.label
        yield self.input
        yield self.error

    @property
    def text(self) -> str:
        if isinstance(self.input, Select):
            value = self.input.value
            return value if isinstance(value, str) else ""
        return self.input.value

    def can_show(self, value: Any) -> bool:
        """A Select can only hold its choices; an Input holds any text."""
        if not self.spec.uses_select:
            return True
        return convert_field(self.spec, value_text(self.spec, value))[1] is None

    def show_error(self, error: str | None) -> None:
        self.error_text = error or ""
        self.error.update(error or "")
        self.error.display = bool(error)
        self.input.set_class(bool(error), "-invalid")
        self.set_class(bool(error), "-invalid")


class CallComposer(Vertical):
    """Compose one call of the chosen tool; F5 (or Run) posts it, ctrl+j toggles raw JSON."""

    DEFAULT_CSS = """
    CallComposer {
        height: 1fr;
        #composer-title {
            height: 1;
            padding: 0 1;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        #composer-body {
            height: 1fr;
        }
        #composer-form {
            height: 1fr;
            padding: 0 1;
        }
        #composer-raw-pane {
            height: 1fr;
        }
        #composer-raw-text {
            height: 1fr;
        }
        .composer-empty {
            color: $text-muted;
            padding: 1 0;
        }
        .composer-field {
            height: auto;
            margin-bottom: 1;
        }
        .composer-label {
            height: 1;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        #composer-help {
            height: auto;
            max-height: 4;
            padding: 0 1;
            color: $text-muted;
            border-top: solid $panel-lighten-2;
        }
        .composer-error, #composer-raw-error {
            color: $error;
            height: auto;
        }
        #composer-raw-error {
            padding: 0 1;
        }
        #composer-actions {
            height: auto;
            padding: 0 1;
        }
        #composer-actions Button {
            margin-right: 1;
        }
        #composer-status {
            width: 1fr;
            color: $text-muted;
            padding: 0 1;
            content-align: left middle;
            height: 1;
        }
    }
    """

    BINDINGS = [
        Binding("f5", "run", "Run", id="composer.run", tooltip="Run the call"),
        Binding("ctrl+j", "toggle_raw", "JSON", id="composer.raw", tooltip="Switch between the form and raw JSON"),
        Binding(
            "ctrl+g",
            "run_all_pages",
            "All pages",
            id="composer.all_pages",
            tooltip="Run the call for its page and every page after it, each page a call of its own",
        ),
    ]

    class Edited(Message):
        """What the composer holds changed (a tool chosen, a field typed in, raw JSON edited): the
        screen keeps it as the attempt's draft."""

    class Submitted(Message):
        """Run was pressed with arguments the form accepted (or, in raw mode, any JSON object)."""

        def __init__(self, tool: str, args: dict[str, Any], *, raw: bool = False, all_pages: bool = False) -> None:
            super().__init__()
            self.tool = tool
            self.args = args
            self.raw = raw  # True: sent from raw mode, not checked against the schema
            self.all_pages = all_pages  # a list tool: this page and every page after it, each its own call

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.tool: Tool | None = None
        self.raw_mode = False
        self._fields: dict[str, ComposerField] = {}
        self._last_field: str | None = None  # the field that last had focus: where take_value puts a value
        self._sent: dict[str, Any] | None = None  # the draft as it was when Run last sent it
        self._form_mounted: Awaitable[Any] | None = None  # the form's fields being mounted

    def compose(self) -> ComposeResult:
        yield Static("No tool chosen", id="composer-title")
        with ContentSwitcher(initial="composer-form", id="composer-body"):
            with VerticalScroll(id="composer-form"):
                yield Static("Choose a tool from the catalog to compose a call.", classes="composer-empty")
            with Vertical(id="composer-raw-pane"):
                yield EditorArea("{}", language=RAW_LANGUAGE, id="composer-raw-text", show_line_numbers=True, tab_behavior="indent")
                yield Static("", id="composer-raw-error", markup=False)
        # The label's line cuts a long description (a date's format, a unit): the focused field's
        # shows here whole. Below the form, not under the field, so no field moves when focus does.
        help_line = Static("", id="composer-help", markup=False)
        help_line.display = False
        yield help_line
        with Horizontal(id="composer-actions"):
            yield Button("Run (F5)", id="composer-run", variant="primary", compact=True, disabled=True)
            yield Button("Raw JSON (^j)", id="composer-raw-toggle", compact=True, disabled=True)
            all_pages = Button("All pages (^g)", id="composer-all-pages", compact=True)
            all_pages.display = False  # for a list tool (a `page` argument)
            yield all_pages
            yield Static("", id="composer-status", markup=False)

    # -- public API ------------------------------------------------------------------------
    def set_tool(self, tool: Tool, args: dict[str, Any] | None = None) -> None:
        """Build the form for `tool`, filled from `args` (raw mode when the form cannot hold them)."""
        self.tool = tool
        title = Content.assemble((tool.name, "bold"), "  ", (f"[{tool.kind}]", "$text-muted"), "  ", (tool.summary, "$text-muted"))
        self.query_one("#composer-title", Static).update(title)
        self.query_one("#composer-run", Button).disabled = False
        self.query_one("#composer-raw-toggle", Button).disabled = False
        self.query_one("#composer-all-pages", Button).display = paged(tool)
        self.refresh_bindings()
        self._set_status("")
        self.set_args(args or {})

    def set_args(self, args: dict[str, Any]) -> None:
        """Fill the form from `args`; arguments the form cannot hold (unknown names, values a
        choice list lacks) open raw mode instead, so nothing is lost."""
        if self.tool is None:
            raise RuntimeError("set_args needs a tool: call set_tool first")
        problem = self._form_cannot_hold(args)
        if problem is None:
            self._build_form(args)
            self._show_mode(raw=False)
        else:
            self._build_form({})
            self._load_raw(args)
            self._show_mode(raw=True)
        self.post_message(self.Edited())

    def draft(self) -> dict[str, Any] | None:
        """What is typed and not sent, to keep with the attempt: the tool and each filled field's
        text ({"tool", "fields"}), or in raw mode the raw text as typed ({"tool", "raw"}); None
        when no tool is chosen."""
        draft = self._typed()
        if draft is not None and draft == self._sent:
            draft["sent"] = True  # the call just run, still shown: nothing unsent
        return draft

    def _typed(self) -> dict[str, Any] | None:
        if self.tool is None:
            return None
        if self.raw_mode:
            return {"tool": self.tool.name, "raw": self.query_one("#composer-raw-text", TextArea).text}
        return {"tool": self.tool.name, "fields": {name: text for name, text in self.values.items() if text}}

    def restore_draft(self, tool: Tool, draft: dict[str, Any]) -> None:
        """Bring back a `draft()` for `tool`: the fields' texts as typed (a text a choice list
        lacks is left out), or the raw text."""
        self.set_tool(tool)
        raw, fields = draft.get("raw"), draft.get("fields")
        if isinstance(raw, str):
            self._build_form({})
            self.query_one("#composer-raw-text", TextArea).load_text(raw)
            self._show_raw_error(None)
            self._show_mode(raw=True)
        elif isinstance(fields, dict):
            self._build_form({}, texts={str(k): v for k, v in fields.items() if isinstance(v, str)})
            self._show_mode(raw=False)
        if draft.get("sent"):
            self._sent = self._typed()
        self.post_message(self.Edited())

    @property
    def values(self) -> dict[str, str]:
        """The form's texts by parameter name."""
        return {name: field.text for name, field in self._fields.items()}

    @property
    def errors(self) -> dict[str, str]:
        """The errors shown under fields right now."""
        return {name: field.error_text for name, field in self._fields.items() if field.error_text}

    def field(self, name: str) -> Input | Select[str]:
        """The input widget of one parameter (for focus, and for tests)."""
        return self._fields[name].input

    def take_value(self, value: Any) -> str | None:
        """Put `value` (taken from a result) where the person was typing, and focus it: the field
        that last had focus (else the first), or the raw editor at its cursor in raw mode. An array
        field gets the value appended; a choice list takes only one of its choices. Returns the
        field's name ("raw JSON" in raw mode), or None when nothing could take it."""
        if self.tool is None:
            return None
        if self.raw_mode:
            editor = self.query_one("#composer-raw-text", TextArea)
            editor.insert(json.dumps(value, ensure_ascii=False))
            editor.focus()
            return "raw JSON"
        name = self._last_field if self._last_field in self._fields else next(iter(self._fields), None)
        if name is None:
            return None
        field = self._fields[name]
        if field.spec.uses_select:
            if not field.can_show(value):
                return None
            field.input.value = value_text(field.spec, value)
        else:
            assert isinstance(field.input, Input)
            field.input.value = _text_with(field.spec, field.input.value, value)
        field.input.focus()
        return name

    # -- actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run_all_pages":
            return self.tool is not None and paged(self.tool)
        return True

    def action_run_all_pages(self) -> None:
        self.action_run(all_pages=True)

    def action_run(self, all_pages: bool = False) -> None:
        if self.tool is None:
            return
        all_pages = all_pages and paged(self.tool)
        if self.raw_mode:
            args = self._parse_raw()
            if args is not None:
                self._set_status("sent (raw, unchecked)")
                self._sent = self._typed()
                self.post_message(self.Submitted(self.tool.name, args, raw=True, all_pages=all_pages))
                self.post_message(self.Edited())
            return
        args, errors = check_arguments(self.tool.parameters, self.values)
        for name, field in self._fields.items():
            field.show_error(errors.get(name))
        self._sync_run_button()
        if errors:
            self._set_status(f"fix {len(errors)} field{'s' if len(errors) != 1 else ''} first")
            first = next(iter(errors))
            self._fields[first].input.focus()
            return
        self._set_status("sent, every page" if all_pages else "sent")
        self._sent = self._typed()
        self.post_message(self.Submitted(self.tool.name, args, all_pages=all_pages))
        self.post_message(self.Edited())

    def action_toggle_raw(self) -> None:
        if self.tool is None:
            return
        if not self.raw_mode:
            self._load_raw(self._form_args_keeping_text())
            self._show_mode(raw=True)
            self.query_one("#composer-raw-text", TextArea).focus()
            self.post_message(self.Edited())
            return
        args = self._parse_raw()
        if args is None:
            return
        problem = self._form_cannot_hold(args)
        if problem is not None:
            self._show_raw_error(problem)
            return
        self._build_form(args)
        self._show_mode(raw=False)
        self.call_after_refresh(self.focus_first_when_ready)
        self.post_message(self.Edited())

    # -- events ----------------------------------------------------------------------------
    @on(Button.Pressed, "#composer-run")
    def _run_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_run()

    @on(Button.Pressed, "#composer-all-pages")
    def _all_pages_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_run(all_pages=True)

    @on(Button.Pressed, "#composer-raw-toggle")
    def _raw_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_toggle_raw()

    @on(Input.Changed, ".composer-input")
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._validate_field(event.input.name)
        self.post_message(self.Edited())

    @on(Select.Changed, ".composer-input")
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._validate_field(event.select.name)
        self.post_message(self.Edited())

    @on(Input.Submitted, ".composer-input")
    def _input_submitted(self, event: Input.Submitted) -> None:
        """Enter in a field runs the call, as F5 does."""
        event.stop()
        self.action_run()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        name = getattr(event.widget, "name", None)
        if name in self._fields and self._fields[name].input is event.widget:
            self._last_field = name
            self._show_help(self._fields[name].spec)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.call_after_refresh(self._help_follows_focus)

    def _help_follows_focus(self) -> None:
        """Focus left the form's fields (a choice list open keeps its field's): no description."""
        focused = self.screen.focused if self.is_attached else None
        in_field = focused is not None and any(isinstance(node, Input | Select) for node in focused.ancestors_with_self)
        if focused is None or self not in focused.ancestors or not in_field:
            self._show_help(None)

    def _show_help(self, spec: FieldSpec | None) -> None:
        """The focused field's whole description under the form (none: hidden)."""
        help_line = self.query_one("#composer-help", Static)
        description = spec.description if spec is not None else ""
        if description:
            help_line.update(Content.assemble((spec.name if spec else "", "bold"), ": ", (description, "italic")))
        help_line.display = bool(description)

    @property
    def help_text(self) -> str:
        """The description shown under the form ("" when none is)."""
        help_line = self.query_one("#composer-help", Static)
        return str(help_line.render()) if help_line.display else ""

    @on(TextArea.Changed, "#composer-raw-text")
    def _raw_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self._show_raw_error(None)
        self.post_message(self.Edited())

    # -- internals -------------------------------------------------------------------------
    def _validate_field(self, name: str | None) -> None:
        field = self._fields.get(name or "")
        if field is None:
            return
        field.show_error(convert_field(field.spec, field.text)[1])
        self._sync_run_button()
        self._set_status("")

    def _sync_run_button(self) -> None:
        """Run is disabled while an error is shown under a field (raw mode checks on Run)."""
        blocked = not self.raw_mode and any(f.error_text for f in self._fields.values())
        self.query_one("#composer-run", Button).disabled = self.tool is None or blocked

    def _build_form(self, args: dict[str, Any], *, texts: dict[str, str] | None = None) -> None:
        """The form for the tool, filled from `args` (values) or `texts` (as typed)."""
        assert self.tool is not None
        form = self.query_one("#composer-form", VerticalScroll)
        form.remove_children()
        specs = field_specs(self.tool.parameters)
        self._fields = {}
        self._last_field = None  # a value taken goes to the first field until one of these has the focus
        for spec in specs:
            text = value_text(spec, args[spec.name]) if spec.name in args else (texts or {}).get(spec.name, "")
            field = ComposerField(spec, text)
            if text:
                field.show_error(convert_field(spec, text)[1])
            self._fields[spec.name] = field
        widgets: list[Widget] = list(self._fields.values())
        if not widgets:
            widgets = [Static("This tool takes no arguments: press Run (F5).", classes="composer-empty")]
        self._form_mounted = form.mount_all(widgets)
        self._sync_run_button()

    def focus(self, scroll_visible: bool = True) -> Self:
        """The composer itself takes no focus: focusing it means `focus_first`."""
        self.focus_first()
        return self

    async def form_ready(self) -> None:
        """Returns once the form just built is mounted (a field not mounted yet cannot take focus)."""
        if self._form_mounted is not None:
            await self._form_mounted

    async def focus_first_when_ready(self) -> None:
        """`focus_first`, once the form just built is mounted."""
        await self.form_ready()
        self.focus_first()

    def focus_first(self) -> None:
        """Focus where typing starts: the first field, the raw editor in raw mode, else Run."""
        if self.raw_mode:
            self.query_one("#composer-raw-text", TextArea).focus()
        elif self._fields:
            next(iter(self._fields.values())).input.focus()
        else:
            self.query_one("#composer-run", Button).focus()

    def _show_mode(self, *, raw: bool) -> None:
        self.raw_mode = raw
        self.query_one("#composer-body", ContentSwitcher).current = "composer-raw-pane" if raw else "composer-form"
        self.query_one("#composer-raw-toggle", Button).label = "Form (^j)" if raw else "Raw JSON (^j)"
        self.set_class(raw, "-raw")
        self._sync_run_button()

    def _load_raw(self, args: dict[str, Any]) -> None:
        self.query_one("#composer-raw-text", TextArea).load_text(json.dumps(args, indent=2, ensure_ascii=False))
        self._show_raw_error(None)

    def _parse_raw(self) -> dict[str, Any] | None:
        """The raw text as an arguments object, or None with the error shown."""
        text = self.query_one("#composer-raw-text", TextArea).text
        if not text.strip():
            return {}
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError as exc:
            self._show_raw_error(f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")
            return None
        if not isinstance(decoded, dict):
            self._show_raw_error("the arguments must be a JSON object {…}")
            return None
        return decoded

    def _show_raw_error(self, error: str | None) -> None:
        widget = self.query_one("#composer-raw-error", Static)
        widget.update(error or "")
        widget.display = bool(error)

    def _form_cannot_hold(self, args: dict[str, Any]) -> str | None:
        """Why these arguments cannot be shown in the form, or None."""
        assert self.tool is not None
        specs = {s.name: s for s in field_specs(self.tool.parameters)}
        unknown = [name for name in args if name not in specs]
        if unknown:
            return f"the form has no field for: {', '.join(unknown)} (edit them here, or remove them)"
        for name, value in args.items():
            spec = specs[name]
            if spec.uses_select and convert_field(spec, value_text(spec, value))[1] is not None:
                return f"{name}: {json.dumps(value, ensure_ascii=False)} is not one of its choices"
        return None

    def _form_args_keeping_text(self) -> dict[str, Any]:
        """The form as arguments; a field that does not convert keeps its text, so raw mode loses nothing."""
        args: dict[str, Any] = {}
        for name, field in self._fields.items():
            value, error = convert_field(field.spec, field.text)
            if error is not None:
                if field.text.strip():
                    args[name] = field.text
            elif value is not _OMIT:
                args[name] = value
        return args

    def _set_status(self, text: str) -> None:
        self.query_one("#composer-status", Static).update(text)
