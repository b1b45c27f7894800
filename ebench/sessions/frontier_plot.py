"""The cost-accuracy frontier drawn: as an SVG document (`ebench report --frontier-svg`) and as lines of
plain text (the terminal report and the app's Frontier tab). One marker per run, the frontier as a
line from its cheapest run to its dearest; Avg^k from 0 to 100% upwards, spending from 0 rightwards.
Our own few lines of SVG rather than a plotting library: no dependency for one chart."""

from __future__ import annotations

from xml.sax.saxutils import escape

from .analyses import FRONTIER_AXES, Frontier

# SVG geometry (user units): the plot's box inside the document.
SVG_WIDTH, SVG_HEIGHT = 720, 460
LEFT, RIGHT, TOP, BOTTOM = 70, 30, 40, 70
FRONTIER_MARK = "◆"  # text: a frontier run's marker stands beside its number in the legend
LINE_DOT = "·"


def marker(index: int) -> str:
    """The text chart's marker of the run at `index`: 1-9, then a-z, then *."""
    symbols = "123456789abcdefghijklmnopqrstuvwxyz"
    return symbols[index] if index < len(symbols) else "*"


def x_text(axis: str, value: float) -> str:
    return f"${value:,.4f}" if axis == "cost" else f"{value:,.1f}" if axis == "calls" else f"{value:,.0f}"


def _x_max(f: Frontier) -> float:
    top = max((p.x for p in f.points), default=0.0)
    return top * 1.1 if top > 0 else 1.0


def frontier_svg(f: Frontier, title: str = "Cost-accuracy frontier") -> str:
    """An SVG document: axes with ticks, one circle per run (class "run", the frontier's class "run on-frontier")
    with its label, and the frontier as one polyline (class "frontier"); runs with unknown x in a note."""
    plot_w, plot_h = SVG_WIDTH - LEFT - RIGHT, SVG_HEIGHT - TOP - BOTTOM
    x_max = _x_max(f)

    def sx(x: float) -> float:
        return round(LEFT + x / x_max * plot_w, 2)

    def sy(avg: float) -> float:
        return round(TOP + (1 - avg) * plot_h, 2)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_WIDTH}" height="{SVG_HEIGHT}" viewBox="0 0 {SVG_WIDTH} {SVG_HEIGHT}"'
        ' font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{LEFT}" y="24" font-size="15">{escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="black"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="black"/>',
    ]
    for i in range(5):
        y, x = i / 4, x_max * i / 4
        parts.append(f'<text x="{LEFT - 8}" y="{sy(y) + 4}" text-anchor="end">{y:.0%}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{sy(y)}" x2="{LEFT + plot_w}" y2="{sy(y)}" stroke="#ddd"/>')
        parts.append(f'<text x="{sx(x)}" y="{TOP + plot_h + 18}" text-anchor="middle">{escape(x_text(f.axis, x))}</text>')
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{TOP + plot_h + 40}" text-anchor="middle">{escape(FRONTIER_AXES[f.axis])}</text>')
    parts.append(f'<text x="16" y="{TOP + plot_h / 2}" text-anchor="middle" transform="rotate(-90 16 {TOP + plot_h / 2})">Avg^k</text>')
    line = " ".join(f"{sx(p.x)},{sy(p.avg)}" for p in f.frontier())
    parts.append(f'<polyline class="frontier" points="{line}" fill="none" stroke="#d62728" stroke-width="2"/>')
    for p in f.points:
        kind = "run on-frontier" if p.on_frontier else "run"
        fill = "#d62728" if p.on_frontier else "#1f77b4"
        parts.append(
            f'<circle class="{kind}" cx="{sx(p.x)}" cy="{sy(p.avg)}" r="5" fill="{fill}"><title>{escape(p.label)}</title></circle>'
        )
        parts.append(f'<text x="{sx(p.x) + 8}" y="{sy(p.avg) - 8}">{escape(p.label)}</text>')
    if f.unknown:
        note = "not shown (unknown): " + ", ".join(f.unknown)
        parts.append(f'<text x="{LEFT}" y="{SVG_HEIGHT - 10}">{escape(note)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def frontier_text(f: Frontier, width: int = 60, height: int = 14) -> list[str]:
    """The frontier as plain lines: a grid of `width` x `height` cells with each run's marker (see
    `marker`), the frontier joined by dots, axes, then a legend line per run; without a point, one line saying so."""
    if not f.points:
        return [f"No run has a known {FRONTIER_AXES[f.axis]} and Avg^k" + (f" ({', '.join(f.unknown)})." if f.unknown else ".")]
    x_max = _x_max(f)
    grid = [[" "] * width for _ in range(height)]

    def cell(x: float, avg: float) -> tuple[int, int]:
        return round(x / x_max * (width - 1)), round((1 - min(max(avg, 0.0), 1.0)) * (height - 1))

    line = [cell(p.x, p.avg) for p in f.frontier()]
    for (c0, r0), (c1, r1) in zip(line, line[1:]):
        steps = max(abs(c1 - c0), abs(r1 - r0), 1)
        for s in range(steps + 1):
            grid[round(r0 + (r1 - r0) * s / steps)][round(c0 + (c1 - c0) * s / steps)] = LINE_DOT
    for i, p in enumerate(f.points):
        column, row = cell(p.x, p.avg)
        grid[row][column] = marker(i)
    ticks = {round(i * (height - 1) / 4): f"{100 - 25 * i}%" for i in range(5)}
    lines = [f"{ticks.get(row, ''):>5} {'┤' if row in ticks else '│'}{''.join(grid[row]).rstrip()}" for row in range(height)]
    lines.append(f"{'':>5} └{'─' * width}")
    left, right = x_text(f.axis, 0.0), x_text(f.axis, x_max)
    lines.append(f"{'':>7}{left}{right:>{max(width - len(left), len(right))}}  {FRONTIER_AXES[f.axis]}")
    for i, p in enumerate(f.points):
        mark = f"  {FRONTIER_MARK} frontier" if p.on_frontier else ""
        lines.append(f"  {marker(i)}  {p.label}: {x_text(f.axis, p.x)}, Avg^k {p.avg:.1%}{mark}")
    if f.unknown:
        lines.append("  not shown (unknown): " + ", ".join(f.unknown))
    return lines
