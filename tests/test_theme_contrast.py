"""Every built-in theme is readable: WCAG contrast ratios of placeholder and secondary text (4.5:1 in
the contrast theme, 3:1 in the others), visible borders (3:1, WCAG's minimum for the parts of a
control), and a focused field that stands out. Measured on the theme's resolved variables, and on
real fields in the real app with its stylesheet."""

from __future__ import annotations

import pytest
from appcheck import until_settled
from rich.color import Color as RichColor
from textual.app import ComposeResult
from textual.color import Color
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import Widget
from textual.widgets import Input, TextArea

from ebench.app.app import EBenchApp
from ebench.themes import builtin_themes

THEMES = builtin_themes()
TEXT_MINIMUM = {"ebench-contrast": 4.5}  # every other built-in theme: 3
NON_TEXT_MINIMUM = 3.0
BACKGROUNDS = ("background", "surface", "panel")


def luminance(colour: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.r) + 0.7152 * channel(colour.g) + 0.0722 * channel(colour.b)


def contrast(a: Color, b: Color) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def resolved(value: str, background: Color) -> Color:
    """A theme variable as painted over `background`: "auto N%" is Textual's contrasting text
    colour at N% opacity; any colour with alpha is blended over the background."""
    if value.startswith("auto"):
        alpha = float(value.split()[1].rstrip("%")) / 100 if " " in value else 1.0
        return background + background.get_contrast_text(alpha)
    return background + Color.parse(value)


def text_minimum(theme: Theme) -> float:
    return TEXT_MINIMUM.get(theme.name, 3.0)


@pytest.mark.parametrize("theme", THEMES, ids=lambda t: t.name)
def test_secondary_text_placeholders_and_borders_contrast_with_every_background(theme: Theme):
    variables = theme.to_color_system().generate()
    low = []
    for background_name in BACKGROUNDS:
        background = Color.parse(variables[background_name])
        for name, minimum in (
            ("text-muted", text_minimum(theme)),  # secondary text
            ("text-disabled", text_minimum(theme)),  # placeholders
            ("panel-lighten-2", NON_TEXT_MINIMUM),  # the frames of panes
            ("border-blurred", NON_TEXT_MINIMUM),  # the frames of fields
        ):
            ratio = contrast(resolved(variables[name], background), background)
            if ratio < minimum:
                low.append(f"${name} on ${background_name}: {ratio:.2f} < {minimum}")
    assert not low, low


class Fields(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Input(placeholder="search", id="field")
        yield Input(placeholder="compact", id="compact", compact=True)
        yield TextArea("code", id="area")
        yield Input(id="elsewhere")


def painted(widget: Widget) -> tuple[Color, Color, Color | None]:
    """The widget's background, its top border's colour, and its placeholder's colour (inputs)."""
    placeholder: RichColor | None = widget.get_component_rich_style("input--placeholder").color if isinstance(widget, Input) else None
    return widget.background_colors[1], widget.styles.border_top[1], Color.from_rich_color(placeholder) if placeholder else None


@pytest.mark.parametrize("theme", THEMES, ids=lambda t: t.name)
async def test_the_focused_field_is_unmistakable_and_its_placeholder_readable(theme: Theme):
    app = EBenchApp(Fields, theme=theme.name)
    async with app.run_test(size=(60, 24)) as pilot:
        screen = app.screen
        page = screen.background_colors[1]
        elsewhere = screen.query_one("#elsewhere")
        for name in ("field", "compact", "area"):
            widget = screen.query_one(f"#{name}")
            elsewhere.focus()
            await until_settled(pilot, lambda: app.focused is elsewhere, what="the other field focused")
            blurred_background, blurred_border, blurred_placeholder = painted(widget)
            widget.focus()
            await until_settled(pilot, lambda: app.focused is widget, what=f"{name} focused")  # noqa: B023 (awaited here)
            assert app.focused is widget
            background, border, placeholder = painted(widget)
            assert background != blurred_background, name  # compact fields too: their background changes
            for shade, on in ((blurred_placeholder, blurred_background), (placeholder, background)):
                if shade is not None:
                    assert contrast(shade, on) >= text_minimum(theme), (name, shade.hex, on.hex)
            if name == "compact":
                continue
            assert widget.styles.border_top[0] == "thick" and border != blurred_border
            assert contrast(border, page) >= NON_TEXT_MINIMUM and contrast(blurred_border, page) >= NON_TEXT_MINIMUM
