"""The paper's analyses in `ebench report`, known numbers in, known numbers out: four hand-written runs
(a tools-mode and a code-mode run of one model, two other models) whose frontier, code vs tools gains,
code usage groups, per-domain effort and Pearson r are worked out by hand below; --json, --csv, the
text report, the SVG file and the results screen's two tabs carry them."""

from __future__ import annotations

import csv
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import typer
from appcheck import until_loaded, until_settled
from textual.widgets import DataTable, Static, TabbedContent
from typer.testing import CliRunner

from ebench.app.app import EBenchApp
from ebench.app.screens.results import ResultsScreen
from ebench.cli.report import report_command
from ebench.sessions.analyses import analyses, pearson
from ebench.sessions.report import build_reports
from ebench.sessions.runs import load_run

app = typer.Typer()
app.command()(report_command)
wide = CliRunner(env={"COLUMNS": "1000"})

MCF, CEC = "multi_condition_filtering", "cross_entity_cascade"
CAPS = {"music-1": [MCF], "music-2": [CEC], "meeting-1": [MCF, CEC]}


def trial(task: str, n: int, passed: bool, calls: int, turns: int, tokens: int, cost: float | None, blocks: int = 0, inner: int = 0):
    """A results line; `calls` are top-level calls (an exec_code block is one), `tokens` go in, a tenth of them out."""
    return {
        "task": task,
        "trial": n,
        "domain": task.split("-")[0],
        "capabilities": CAPS[task],
        "passed": passed,
        "termination": "agent_stopped",
        "tool_calls": calls,
        "inner_calls": inner,
        "exec_blocks": blocks,
        "turns": turns,
        "tokens_in": tokens,
        "tokens_out": tokens // 10,
        "cost": cost,
        "seconds": 1.0,
        "reference_calls": 5,
    }


def write_run(root: Path, label: str, model: str, code: bool | None, results: list[dict[str, Any]]) -> Path:
    run = root / label
    run.mkdir()
    config: dict[str, Any] = {"solver": {"name": "llm", "model": model}, "limits": {"max_turns": 30, "max_tool_calls": 100}}
    if code is not None:
        config["code"] = code
    manifest = {
        "format": "ebench-run/1",
        "label": label,
        "config": config,
        "trials": 2,
        "tasks": {"count": 3, "ids": sorted({r["task"] for r in results})},
    }
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    return run


# m1-tools (tools mode): music-1 2/2, music-2 1/2, meeting-1 0/2 -> Avg^k (1 + .5 + 0)/3 = .5;
# calls 10, 20, 30 -> 20 per task; turns 8, 12, 16 -> 12; tokens 1100, 2200, 3300 -> 2200; cost .04.
TOOLS = [
    *[trial("music-1", n, True, 10, 8, 1000, 0.02) for n in (1, 2)],
    trial("music-2", 1, True, 20, 12, 2000, 0.04),
    trial("music-2", 2, False, 20, 12, 2000, 0.04),
    *[trial("meeting-1", n, False, 30, 16, 3000, 0.06) for n in (1, 2)],
]
# m1-code (code mode): music-1 2/2, exec_code in both (2 calls, one a block of 4 -> 5 total);
# music-2 2/2, exec_code in one (2 - 1 + 6 = 7 calls, 3 turns) and not the other (9 calls, 8 turns);
# meeting-1 1/2, no exec_code (15 calls, 10 turns). Avg^k (1 + 1 + .5)/3 = 5/6; calls 56/6; turns 37/6;
# tokens (550 + 550 + 880 + 880 + 1650 + 1650)/6 = 6160/6; cost .12/6 = .02.
CODE = [
    *[trial("music-1", n, True, 2, 3, 500, 0.01, blocks=1, inner=4) for n in (1, 2)],
    trial("music-2", 1, True, 2, 3, 800, 0.02, blocks=1, inner=6),
    trial("music-2", 2, True, 9, 8, 800, 0.02),
    trial("meeting-1", 1, True, 15, 10, 1500, 0.03),
    trial("meeting-1", 2, False, 15, 10, 1500, 0.03),
]
# m2 (tools): everything passes, 40 calls, 20 turns, 4400 tokens, cost .10 -> Avg^k 1.
M2 = [trial(t, n, True, 40, 20, 4000, 0.10) for t in CAPS for n in (1, 2)]
# m3 (tools): music-1 2/2, music-2 0/2, meeting-1 1/2 -> Avg^k .5; 50 calls, 20 turns, 5500 tokens;
# one trial unpriced -> cost unknown.
M3 = [
    *[trial("music-1", n, True, 50, 20, 5000, 0.05) for n in (1, 2)],
    *[trial("music-2", n, False, 50, 20, 5000, 0.05) for n in (1, 2)],
    trial("meeting-1", 1, True, 50, 20, 5000, None),
    trial("meeting-1", 2, False, 50, 20, 5000, 0.05),
]


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    return [
        write_run(tmp_path, "m1-tools", "openai/m1", False, TOOLS),
        write_run(tmp_path, "m1-code", "openai/m1", True, CODE),
        write_run(tmp_path, "m2", "openai/m2", False, M2),
        write_run(tmp_path, "m3", "openai/m3", False, M3),
    ]


def found(paths: list[Path]):
    return analyses(build_reports([load_run(p) for p in paths]))


def report_json(paths: list[Path], *extra: str | Path) -> dict[str, Any]:
    result = wide.invoke(app, [*map(str, paths), "--json", *map(str, extra)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def hand_pearson(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return cov / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))


# (run, domain): Avg^k, calls, turns, tokens per task.
EFFORTS = {
    ("m1-tools", "meeting"): (0.0, 30, 16, 3300),
    ("m1-tools", "music"): (0.75, 15, 10, 1650),
    ("m1-code", "meeting"): (0.5, 15, 10, 1650),
    ("m1-code", "music"): (1.0, (5 + 5 + 7 + 9) / 4, (3 + 3 + 3 + 8) / 4, (550 + 550 + 880 + 880) / 4),
    ("m2", "meeting"): (1.0, 40, 20, 4400),
    ("m2", "music"): (1.0, 40, 20, 4400),
    ("m3", "meeting"): (0.5, 50, 20, 5500),
    ("m3", "music"): (0.5, 50, 20, 5500),
}


def test_the_frontier_on_each_axis(runs):
    frontiers = found(runs).frontiers
    cost = frontiers["cost"]
    assert [(p.label, p.x, p.avg) for p in cost.points] == [
        ("m1-tools", pytest.approx(0.04), 0.5),
        ("m1-code", pytest.approx(0.02), pytest.approx(5 / 6)),
        ("m2", pytest.approx(0.10), 1.0),
    ]
    assert cost.unknown == ["m3"]  # one unpriced trial: listed apart, not drawn
    # m1-code is cheaper and better than m1-tools; m2 is dearer but better than everyone.
    assert [p.label for p in cost.frontier()] == ["m1-code", "m2"]
    calls = frontiers["calls"]
    assert [p.x for p in calls.points] == [20, pytest.approx(56 / 6), 40, 50] and not calls.unknown
    assert [p.label for p in calls.frontier()] == ["m1-code", "m2"]  # m3: 50 calls for .5, beaten by m1-tools
    assert [p.x for p in frontiers["tokens"].points] == [2200, pytest.approx(6160 / 6), 4400, 5500]


def test_code_vs_tools_pairs_one_model_on_the_same_tasks(runs):
    (pair,) = found(runs).pairs
    assert (pair.tools, pair.code, pair.model) == ("m1-tools", "m1-code", "openai/m1")
    assert (pair.overall.tools, pair.overall.code) == (0.5, pytest.approx(5 / 6))
    assert pair.overall.absolute == pytest.approx(1 / 3) and pair.overall.relative == pytest.approx(2 / 3)
    music, meeting = pair.domains["music"], pair.domains["meeting"]
    assert music.absolute == pytest.approx(0.25) and music.relative == pytest.approx(1 / 3)
    assert meeting.absolute == pytest.approx(0.5) and meeting.relative is None  # from 0: no relative gain
    # multi-condition filtering: music-1, meeting-1 -> .5 to .75; cascade: music-2, meeting-1 -> .25 to .75
    assert set(pair.capabilities) == {MCF, CEC}
    assert pair.capabilities[MCF].absolute == pytest.approx(0.25) and pair.capabilities[MCF].relative == pytest.approx(0.5)
    assert pair.capabilities[CEC].absolute == pytest.approx(0.5) and pair.capabilities[CEC].relative == pytest.approx(2.0)
    assert pair.calls == (20, pytest.approx(56 / 6)) and pair.turns == (12, pytest.approx(37 / 6))


def test_no_pair_across_models_or_task_sets(tmp_path):
    tools = write_run(tmp_path, "t", "openai/m1", False, TOOLS)
    other_model = write_run(tmp_path, "c1", "openai/m9", True, CODE)
    fewer_tasks = write_run(tmp_path, "c2", "openai/m1", True, [t for t in CODE if t["task"] != "meeting-1"])
    no_mode = write_run(tmp_path, "c3", "openai/m1", None, CODE)
    result = found([tools, other_model, fewer_tasks, no_mode])
    assert result.pairs == []
    assert set(result.usage) == {"c1", "c2"}  # code runs still get their usage groups, without tools figures
    assert all(g.tools_avg is None for g in result.usage["c1"])


def test_code_usage_groups_beside_the_tools_run(runs):
    groups = {g.group: g for g in found(runs).usage["m1-code"]}
    assert list(groups) == ["all", "some", "none"]
    assert groups["all"].tasks == ["music-1"] and groups["some"].tasks == ["music-2"] and groups["none"].tasks == ["meeting-1"]
    assert (groups["all"].avg, groups["all"].calls, groups["all"].turns) == (1.0, 5, 3)
    assert (groups["some"].avg, groups["some"].calls, groups["some"].turns) == (1.0, 8, 5.5)
    assert (groups["none"].avg, groups["none"].calls, groups["none"].turns) == (0.5, 15, 10)
    assert (groups["all"].tools_avg, groups["all"].tools_calls, groups["all"].tools_turns) == (1.0, 10, 8)
    assert (groups["some"].tools_avg, groups["some"].tools_calls, groups["some"].tools_turns) == (0.5, 20, 12)
    assert (groups["none"].tools_avg, groups["none"].tools_calls, groups["none"].tools_turns) == (0.0, 30, 16)


def test_per_domain_effort_and_pearson_r(runs):
    result = found(runs)
    got = {(e.run, e.domain): (e.avg, e.calls, e.turns, e.tokens) for e in result.efforts}
    assert got == {key: tuple(pytest.approx(v) for v in values) for key, values in EFFORTS.items()}
    avgs = [v[0] for v in EFFORTS.values()]
    for i, name in enumerate(("calls", "turns", "tokens"), start=1):
        (c,) = [c for c in result.correlations if c.effort == name]
        assert c.points == 8 and c.r == pytest.approx(hand_pearson(avgs, [v[i] for v in EFFORTS.values()]))


# Top-level calls per task as the model issued them (an exec_code block one call): only m1-code differs.
ISSUED = {key: values[1] for key, values in EFFORTS.items()} | {("m1-code", "music"): (2 + 2 + 2 + 9) / 4}
MODES = {"m1-tools": "tools", "m1-code": "code", "m2": "tools", "m3": "tools"}


def test_pearson_r_per_mode_and_per_domain_and_calls_as_issued(runs):
    result = found(runs)
    assert {(e.run, e.domain): e.calls_issued for e in result.efforts} == pytest.approx(ISSUED)
    assert {e.run: e.mode for e in result.efforts} == MODES
    (pair,) = result.pairs
    assert pair.calls_issued == (20, pytest.approx((2 + 2 + 2 + 9 + 15 + 15) / 6))  # beside pair.calls (executed)

    def hand(keys, effort: int | None):
        ys = [ISSUED[k] if effort is None else EFFORTS[k][effort] for k in keys]
        return hand_pearson([EFFORTS[k][0] for k in keys], ys)

    def r(correlations, name):
        (c,) = [c for c in correlations if c.effort == name]
        return c

    tools = [k for k in EFFORTS if MODES[k[0]] == "tools"]
    code = [k for k in EFFORTS if MODES[k[0]] == "code"]
    assert set(result.by_mode) == {"tools", "code"}
    assert r(result.by_mode["tools"], "calls").points == 6
    assert r(result.by_mode["tools"], "calls").r == pytest.approx(hand(tools, 1))
    assert r(result.by_mode["tools"], "calls_issued").r == pytest.approx(hand(tools, None))
    # within the code run: more calls went with less success (meeting 15 calls .5, music 6.5 calls 1.0)
    assert r(result.by_mode["code"], "calls").r == pytest.approx(-1.0) == pytest.approx(hand(code, 1))
    for domain in ("music", "meeting"):
        keys = [k for k in EFFORTS if k[1] == domain]
        assert r(result.by_domain[domain], "turns").points == 4
        assert r(result.by_domain[domain], "turns").r == pytest.approx(hand(keys, 2))
        assert r(result.by_domain[domain], "calls_issued").r == pytest.approx(hand(keys, None))
    # the pooled figure is still there, now with calls as issued too
    assert r(result.correlations, "calls_issued").r == pytest.approx(hand(list(EFFORTS), None))


def test_the_report_shows_correlations_per_mode_and_domain(runs, tmp_path):
    doc = report_json(runs)["analyses"]
    assert doc["correlations_by_mode"]["code"]["calls"] == {"points": 2, "r": pytest.approx(-1.0)}
    assert set(doc["correlations_by_domain"]) == {"meeting", "music"}
    assert doc["code_vs_tools"][0]["calls_issued"]["tools"] == 20
    target = tmp_path / "out.csv"
    report_json(runs, "--csv", target)
    with target.open(encoding="utf-8") as handle:
        values = {(r["run"], r["scope"], r["metric"]): r["value"] for r in csv.DictReader(handle)}
    assert float(values["", "correlation:mode:code", "avg_vs_calls"]) == pytest.approx(-1.0)
    assert values["", "correlation:domain:music", "points_turns"] == "4"
    assert float(values["m1-code", "domain_efficiency:music", "calls_issued"]) == pytest.approx(3.75)
    text = wide.invoke(app, [*map(str, runs)]).output
    assert "Correlation of Avg^k with effort" in text
    code_row = next(line for line in text.splitlines() if line.strip("│ ").startswith("code mode"))
    assert "-1.00" in code_row
    assert "calls issued / task" in text


def test_pearson_needs_two_points_and_spread():
    assert pearson([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert pearson([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    assert pearson([1.0], [2.0]) is None and pearson([1.0, 1.0], [2.0, 3.0]) is None


def test_json_carries_the_analyses(runs):
    doc = report_json(runs)
    assert [r["label"] for r in doc["runs"]] == ["m1-tools", "m1-code", "m2", "m3"]  # the existing keys stay
    analyses_doc = doc["analyses"]
    cost = analyses_doc["frontier"]["cost"]
    assert [p["label"] for p in cost["points"] if p["on_frontier"]] == ["m1-code", "m2"] and cost["unknown"] == ["m3"]
    (pair,) = analyses_doc["code_vs_tools"]
    assert pair["overall"]["absolute"] == pytest.approx(1 / 3) and pair["domains"]["meeting"]["relative"] is None
    assert pair["calls"] == {"tools": 20, "code": pytest.approx(56 / 6)}
    assert [(g["group"], g["tasks"]) for g in analyses_doc["code_usage"]["m1-code"]] == [("all", 1), ("some", 1), ("none", 1)]
    assert analyses_doc["correlations"]["calls"]["points"] == 8
    assert len(analyses_doc["domain_efficiency"]) == 8


def test_csv_carries_the_analyses(runs, tmp_path):
    target = tmp_path / "out.csv"
    report_json(runs, "--csv", target)
    with target.open(encoding="utf-8") as handle:
        values = {(r["run"], r["scope"], r["metric"]): r["value"] for r in csv.DictReader(handle)}
    assert values["m1-code", "frontier:cost", "on_frontier"] == "True" and values["m1-tools", "frontier:cost", "on_frontier"] == "False"
    assert values["m3", "frontier:cost", "x"] == ""  # unknown cost: empty
    assert float(values["m1-code", "code_vs_tools", "absolute"]) == pytest.approx(1 / 3)
    assert float(values["m1-code", "code_vs_tools:capability:cross_entity_cascade", "relative"]) == pytest.approx(2.0)
    assert values["m1-code", "code_vs_tools", "tools_run"] == "m1-tools"
    assert float(values["m1-code", "code_usage:some", "calls"]) == 8 and values["m1-code", "code_usage:some", "tasks"] == "1"
    assert float(values["m1-tools", "domain_efficiency:meeting", "turns"]) == 16
    avgs = [v[0] for v in EFFORTS.values()]
    assert float(values["", "correlation", "avg_vs_turns"]) == pytest.approx(hand_pearson(avgs, [v[2] for v in EFFORTS.values()]))
    assert float(values["m1-tools", "overall", "avg"]) == 0.5  # the runs' own rows are still there


def test_the_text_report_shows_the_analyses(runs):
    result = wide.invoke(app, [*map(str, runs), "--frontier-axis", "calls"])
    assert result.exit_code == 0, result.output
    out = result.output
    for title in ("Cost-accuracy frontier", "Code vs tools: openai/m1", "Code usage: m1-code", "Per-domain efficiency", "Frontier chart"):
        assert title in out
    frontier_row = next(line for line in out.splitlines() if line.strip("│ ").startswith("m1-code") and "*" in line)
    assert "0.0200 *" in frontier_row and "9.3 *" in frontier_row and "83.3%" in frontier_row
    overall = next(line for line in out.splitlines() if line.strip("│ ").startswith("overall"))
    assert "50.0%" in overall and "83.3%" in overall and "+33.3 pts" in overall and "+66.7%" in overall
    assert "  2  m1-code: 9.3, Avg^k 83.3%  ◆ frontier" in out  # the chart's legend, on the calls axis
    assert "  4  m3: 50.0, Avg^k 50.0%" in out


def test_the_svg_has_a_marker_per_run_and_the_frontier_line(runs, tmp_path):
    target = tmp_path / "frontier.svg"
    result = wide.invoke(app, [*map(str, runs), "--frontier-svg", str(target)])
    assert result.exit_code == 0, result.output
    root = ET.parse(target).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    circles = root.findall(".//s:circle", ns)
    assert [c.find("s:title", ns).text for c in circles] == ["m1-tools", "m1-code", "m2"]  # m3's cost is unknown
    assert [c.get("class") for c in circles] == ["run", "run on-frontier", "run on-frontier"]
    (line,) = root.findall(".//s:polyline[@class='frontier']", ns)
    ends = [tuple(map(float, point.split(","))) for point in line.get("points").split()]
    assert ends == [(float(circles[1].get("cx")), float(circles[1].get("cy"))), (float(circles[2].get("cx")), float(circles[2].get("cy")))]
    assert any("m3" in (t.text or "") and "unknown" in (t.text or "") for t in root.findall(".//s:text", ns))


def test_without_a_priced_run_the_chart_says_so(tmp_path):
    unpriced = write_run(tmp_path, "u", "openai/u", False, [trial("music-1", 1, True, 3, 2, 100, None)])
    result = wide.invoke(app, [str(unpriced)])
    assert result.exit_code == 0, result.output
    assert "No run has a known cost / task ($) and Avg^k (u)." in result.output


def test_a_bad_frontier_axis_is_a_one_line_error(runs):
    result = wide.invoke(app, [str(runs[0]), "--frontier-axis", "seconds"])
    assert result.exit_code == 2 and "--frontier-axis seconds" in result.output


async def test_the_results_screen_shows_the_frontier_and_code_vs_tools(runs):
    app = EBenchApp(lambda: ResultsScreen(runs), theme="ebench-dark")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await until_loaded(pilot, ResultsScreen)
        tabs = screen.query_one(TabbedContent)
        tabs.active = "tab-frontier"
        await until_settled(pilot, lambda: tabs.get_pane("tab-frontier").region.width > 0, what="the frontier shown")
        chart = str(screen.query_one("#frontier-chart", Static).render())
        assert "cost / task" in chart and "m1-code: $0.0200, Avg^k 83.3%  ◆ frontier" in chart and "unknown): m3" in chart
        frontier = screen.query_one("#frontier", DataTable)
        assert [str(frontier.get_row_at(i)[0]) for i in range(frontier.row_count)] == ["m1-tools", "m1-code", "m2", "m3"]
        await pilot.press("x")  # the next axis: calls
        assert "total calls / task" in str(screen.query_one("#frontier-chart", Static).render())
        tabs.active = "tab-code"
        await until_settled(pilot, lambda: tabs.get_pane("tab-code").region.width > 0, what="code vs tools shown")
        pairs = screen.query_one("#code-vs-tools", DataTable)
        rows = [[str(cell) for cell in pairs.get_row_at(i)] for i in range(pairs.row_count)]
        assert rows[0][0] == "openai/m1: m1-tools → m1-code"
        assert rows[1] == ["overall", "50.0%", "83.3%", "+33.3 pts", "+66.7%"]
