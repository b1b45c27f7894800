"""A Pass^k-over-k chart drawn with braille dots in Rich text: one solid line (● at the points) for each
run's Pass^k and a dashed one (○) for its Pass@k, from k = 1 to the largest trial count, 0..100%.

Series colours come from a small palette of theme variables, so the chart follows the theme; a
line's kind is told by its dashes and markers too, never by colour alone."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from ...terminal import printable

# Theme variables the series take their colours from, in order (then round again).
PALETTE = ("primary", "accent", "success", "error", "secondary", "warning", "diff-wrong")
AXIS_WIDTH = 6  # "100% ┤"
HAT_MARK = "●"
AT_MARK = "○"
# Braille dot bits by (column, row) inside a 2x4 cell.
_BITS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20, (0, 3): 0x40, (1, 3): 0x80}


@dataclass
class ChartSeries:
    """One run: Pass^k and Pass@k (0..1) for k = 1, 2, ...; None where the run has too few trials."""

    label: str
    pass_hat: list[float | None]
    pass_at: list[float | None]


class Canvas:
    """Braille dots and markers on a grid of cells; each cell keeps the style of what was drawn last."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.bits = [[0] * width for _ in range(height)]
        self.marks: list[list[str | None]] = [[None] * width for _ in range(height)]
        self.styles: list[list[str]] = [[""] * width for _ in range(height)]

    def dot(self, x: int, y: int, style: str) -> None:
        column, row = x // 2, y // 4
        if 0 <= column < self.width and 0 <= row < self.height:
            self.bits[row][column] |= _BITS[(x % 2, y % 4)]
            self.styles[row][column] = style

    def line(self, start: tuple[int, int], end: tuple[int, int], style: str, dashed: bool) -> None:
        """Bresenham between two dot positions; dashed lines draw two dots out of every four."""
        (x0, y0), (x1, y1) = start, end
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        error = dx + dy
        step = 0
        while True:
            if not dashed or step % 4 < 2:
                self.dot(x0, y0, style)
            if (x0, y0) == (x1, y1):
                break
            doubled = 2 * error
            if doubled >= dy:
                error += dy
                x0 += sx
            if doubled <= dx:
                error += dx
                y0 += sy
            step += 1

    def mark(self, x: int, y: int, char: str, style: str) -> None:
        column, row = x // 2, y // 4
        if 0 <= column < self.width and 0 <= row < self.height:
            self.marks[row][column] = char
            self.styles[row][column] = style

    def row_text(self, row: int) -> Text:
        text = Text()
        for column in range(self.width):
            mark = self.marks[row][column]
            bits = self.bits[row][column]
            char = mark or (chr(0x2800 + bits) if bits else " ")
            text.append(char, style=self.styles[row][column] if (mark or bits) else "")
        return text


class PassKChart(Widget):
    """Pass^k (solid, ●) and Pass@k (dashed, ○) over k for each run, with a legend."""

    DEFAULT_CSS = """
    PassKChart {
        height: 1fr;
        min-height: 12;
        padding: 0 1;
    }
    """

    def __init__(self, series: list[ChartSeries] | None = None, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: list[ChartSeries] = list(series or [])

    def on_mount(self) -> None:
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self.refresh()  # the palette is read from the theme at every render

    def set_series(self, series: list[ChartSeries]) -> None:
        self.series = list(series)
        self.refresh()

    def colours(self) -> list[str]:
        """One colour per series, from the theme's palette variables."""
        variables = self.app.theme_variables
        palette = [variables[name] for name in PALETTE if variables.get(name)] or [""]
        return [palette[i % len(palette)] for i in range(len(self.series))]

    @property
    def max_k(self) -> int:
        return max((max(len(s.pass_hat), len(s.pass_at)) for s in self.series), default=0)

    def render(self) -> Text:
        width, height = self.content_region.width or self.size.width, self.content_region.height or self.size.height
        return self.draw(width, height, self.colours())

    def draw(self, width: int, height: int, colours: list[str]) -> Text:
        """The chart as `height` lines of `width` cells (the widget renders this; tests call it)."""
        k_max = self.max_k
        if not self.series or k_max == 0:
            return Text("No scored trials to chart.", style="dim")
        legend = [self._legend(series, colour) for series, colour in zip(self.series, colours)]
        plot_width = max(width - AXIS_WIDTH - 3, 4)  # the axis, a space, the plot, " k"
        plot_height = max(height - 3 - len(legend), 3)  # x axis, k labels, a blank line, the legend
        canvas = Canvas(plot_width, plot_height)
        dots_x, dots_y = plot_width * 2 - 1, plot_height * 4 - 1

        def x_of(k: int) -> int:
            return dots_x // 2 if k_max == 1 else round((k - 1) * dots_x / (k_max - 1))

        def y_of(value: float) -> int:
            return round((1 - min(max(value, 0.0), 1.0)) * dots_y)

        for series, colour in zip(self.series, colours):
            # Pass@k first: where both lines meet, the solid Pass^k line stays on top.
            for values, dashed, marker in ((series.pass_at, True, AT_MARK), (series.pass_hat, False, HAT_MARK)):
                points = [(x_of(k), y_of(v)) if v is not None else None for k, v in enumerate(values, start=1)]
                for a, b in zip(points, points[1:]):
                    if a is not None and b is not None:
                        canvas.line(a, b, colour, dashed)
                for point in points:
                    if point is not None:
                        canvas.mark(*point, marker, colour)

        lines: list[Text] = []
        ticks = {round(i * (plot_height - 1) / 4): f"{100 - 25 * i}%" for i in range(5)}
        for row in range(plot_height):
            label = ticks.get(row)
            axis = Text(f"{label:>4} ┤" if label else "     │", style="dim")
            lines.append(axis + Text(" ") + canvas.row_text(row))
        columns = {x_of(k) // 2: k for k in range(1, k_max + 1)}
        axis_line = "".join("┬" if c in columns else "─" for c in range(plot_width))
        lines.append(Text(f"{'':>4} └─" + axis_line + " k", style="dim"))
        labels = [" "] * plot_width
        for column, k in columns.items():
            number = str(k)
            start = min(column, plot_width - len(number))
            labels[start : start + len(number)] = number
        lines.append(Text(" " * (AXIS_WIDTH + 1) + "".join(labels).rstrip(), style="dim"))
        lines.append(Text(""))
        lines.extend(legend)
        chart = Text("\n").join(lines)
        chart.no_wrap = True
        chart.overflow = "crop"
        return chart

    @staticmethod
    def _legend(series: ChartSeries, colour: str) -> Text:
        text = Text("  ")
        text.append(f"{HAT_MARK}━━ ", style=colour)
        text.append("Pass^k  ")
        text.append(f"{AT_MARK}┄┄ ", style=colour)
        text.append("Pass@k  ")
        text.append(printable(series.label), style="bold")  # a run's label comes from its files
        last = [(f"Pass^{len(series.pass_hat)}", series.pass_hat), (f"Pass@{len(series.pass_at)}", series.pass_at)]
        values = [f"{name} {values[-1] * 100:.1f}%" for name, values in last if values and values[-1] is not None]
        if values:
            text.append("  " + " · ".join(values), style="dim")
        return text
