"""A domain from outside ebench: tests/plugins/ebench_loans, installed for real with pip and found
through its "ebench.domains" entry point, goes through everything a built-in domain does: the
CLI (build, generate, validate, audit, an oracle batch), an MCP server driven by a real client,
and the app's task browser and solve screen.

The package is installed into a private folder, never into the environment: subprocesses get it
on PYTHONPATH; the in-process app tests put it on sys.path and take it off again, so no other test
sees a fourth domain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ebench.engine.domain_registry import DOMAINS, builtin_domain_names, domain_names

PLUGIN = Path(__file__).resolve().parent / "plugins" / "ebench_loans"
SIZE = (180, 50)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in, installed by pip (no network, no build dependency) into a folder of its own."""
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(PLUGIN),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert (target / "ebench_loans" / "__init__.py").exists()
    return target


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CLI subprocesses' own data directory."""
    return tmp_path_factory.mktemp("plugin-home")


def cli(site: Path, home: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "EBENCH_HOME": str(home), "LITELLM_OFFLINE_MODE": "true"}
    env.pop("EBENCH_TASKS", None)
    out = subprocess.run([sys.executable, "-m", "ebench", *args], capture_output=True, text=True, env=env)
    if ok:
        assert out.returncode == 0, out.stderr + out.stdout
    return out


@pytest.fixture(scope="module")
def tasks_dir(site: Path, home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tasks generated from the plug-in's templates by `ebench tasks generate`."""
    out = tmp_path_factory.mktemp("plugin-tasks")
    built = json.loads(cli(site, home, "domains", "build", "--domain", "loans", "--json").stdout)
    assert [b["domain"] for b in built["built"]] == ["loans"]
    made = json.loads(
        cli(site, home, "tasks", "generate", "--domain", "loans", "--count", "4", "--seed", "1", "--out", str(out), "--json").stdout
    )
    assert made["domain"] == "loans" and len(list((out / "loans").glob("*.json"))) == 4
    return out


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The plug-in visible in this process, for one test; the registry forgets it afterwards."""
    before = domain_names()
    monkeypatch.syspath_prepend(str(site))
    DOMAINS.refresh()
    yield
    monkeypatch.undo()
    for name in [m for m in sys.modules if m == "ebench_loans" or m.startswith("ebench_loans.")]:
        del sys.modules[name]
    DOMAINS.refresh()
    assert domain_names() == before


def test_the_plugin_is_listed_after_the_built_in_domains(site: Path, home: Path) -> None:
    rows = json.loads(cli(site, home, "domains", "list", "--json").stdout)
    assert [r["name"] for r in rows if r["default"]] == [*builtin_domain_names(), "loans"]
    [loans] = [r for r in rows if r["name"] == "loans"]
    assert loans["title"] == "Library loans" and loans["tables"] == 5 and loans["tools"] == 9


def test_without_the_plugin_installed_its_domain_is_unknown(home: Path, tmp_path: Path) -> None:
    assert "loans" not in domain_names()
    out = cli(tmp_path, home, "domains", "build", "--domain", "loans", ok=False)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [out.stderr.strip()] and "unknown domain 'loans'" in out.stderr


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "ebench_missing:DOMAIN",
            "the domain 'broken' (ebench_missing:DOMAIN) cannot be loaded: ModuleNotFoundError: No module named 'ebench_missing'",
        ),
        (
            "ebench_loans.schema:SCHEMA",
            "the domain 'broken' (ebench_loans.schema:SCHEMA): a domain entry point must name a Domain object, got Schema",
        ),
        ("ebench_loans:DOMAIN", "the domain 'broken' names a Domain called 'loans'"),
    ],
)
def test_a_broken_domain_plugin_is_one_line(site: Path, home: Path, tmp_path: Path, entry: str, message: str) -> None:
    """An entry point (declared by a distribution's metadata) that gives no usable Domain."""
    dist = tmp_path / "ebench_broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ebench-broken\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(f"[ebench.domains]\nbroken = {entry}\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{site}", "EBENCH_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-m", "ebench", "domains", "build", "--domain", "broken"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 2  # a PluginError is bad input, like an unknown domain
    assert out.stderr.strip() == f"error: {message}"


def test_generated_tasks_validate_pass_the_audit_and_the_oracle(site: Path, home: Path, tasks_dir: Path, tmp_path: Path) -> None:
    tasks = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((tasks_dir / "loans").glob("*.json"))]
    assert {t["generator"]["template"] for t in tasks} == {"renew_due_before", "cancel_genre_holds_before"}
    assert all(t["stats"]["changed_rows"] >= 3 and t["generator"]["bites"] for t in tasks)
    validated = json.loads(cli(site, home, "tasks", "validate", "--dir", str(tasks_dir), "--json").stdout)
    assert validated["checked"] == validated["passed"] == validated["public_solutions"] == 4
    audited = cli(site, home, "tasks", "audit", "--dir", str(tasks_dir))
    assert "no shortcut passes any task" in audited.stdout
    run = json.loads(
        cli(
            site, home, "run", "--batch", "--solver", "oracle", "--tasks-dir", str(tasks_dir), "--out", str(tmp_path / "run"), "--json"
        ).stdout
    )
    assert run["status"] == "finished" and run["passed"] == run["scored"] == 4


def test_the_tool_benchmark_measures_the_plugins_tools(site: Path, home: Path, tasks_dir: Path) -> None:
    bench = Path(__file__).resolve().parent.parent / "benchmarks" / "tool_calls.py"
    env = {**os.environ, "PYTHONPATH": str(site), "EBENCH_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, str(bench), "--domain", "loans", "--repeat", "2", "--rounds", "1", "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    [report] = json.loads(out.stdout)["domains"]
    assert report["domain"] == "loans" and len(report["tools"]) == 9
    assert all(r["median_us"] > 0 and r["trial_median_us"] > 0 for r in report["tools"])  # also through a plug-in's trial


def test_an_mcp_client_solves_a_plugin_task(site: Path, home: Path, tasks_dir: Path, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from ebench.tasks.spec import resolve_args

    task = json.loads(sorted((tasks_dir / "loans").glob("*.json"))[0].read_text(encoding="utf-8"))
    env = {"EBENCH_HOME": str(home), "LITELLM_OFFLINE_MODE": "true", "EBENCH_TASKS": str(tasks_dir), "PYTHONPATH": str(site)}

    async def serve(args: list[str], script: Callable[[ClientSession], Any], log: Path) -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "ebench", "mcp", "serve", *args], env=env)
        with open(log, "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as streams, ClientSession(*streams) as session:
                await session.initialize()
                return await script(session)

    async def listing(session: ClientSession) -> list[str]:
        return [t.name for t in (await session.list_tools()).tools]

    async def solve(session: ClientSession) -> None:
        results: list[Any] = []
        for step in task["reference_solution"]:
            result = await session.call_tool(step["tool"], resolve_args(step["args"], results))
            assert not result.is_error, result
            results.append(json.loads(result.content[0].text))

    names = anyio.run(serve, ["--domain", "loans", "--actor", str(task["actor"])], listing, tmp_path / "list.log")
    assert "renew_loan" in names and "cancel_hold" in names and len(names) == 9
    anyio.run(serve, ["--task", task["id"]], solve, tmp_path / "solve.log")
    assert f"task {task['id']}: PASS" in (tmp_path / "solve.log").read_text(encoding="utf-8")


async def test_the_app_browses_and_solves_a_plugin_task(
    installed: None, tasks_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from appcheck import until_loaded, until_settled

    from ebench.app.app import EBenchApp
    from ebench.app.screens.browser import BrowserScreen, TaskTable
    from ebench.app.screens.solve import SolveScreen
    from ebench.app.widgets.catalog import ToolCatalog
    from ebench.app.widgets.composer import CallComposer
    from ebench.app.widgets.diff_view import DiffView
    from ebench.tasks.spec import resolve_args
    from ebench.tasks.suite import load_suite

    sessions = tmp_path / "sessions"  # the plug-in's attempts stay out of the shared sessions folder
    sessions.mkdir()
    monkeypatch.setattr("ebench.sessions.attempts.sessions_dir", lambda: sessions)
    monkeypatch.setattr("ebench.paths.sessions_dir", lambda: sessions)
    assert domain_names()[-1] == "loans"

    app = EBenchApp(lambda: BrowserScreen(tasks_dir), theme="ebench-dark")
    async with app.run_test(size=SIZE) as pilot:
        browser = await until_loaded(pilot, BrowserScreen)
        rows = [str(row.key.value) for row in browser.query_one(TaskTable).ordered_rows]
        assert sorted(rows) == sorted(p.stem for p in (tasks_dir / "loans").glob("*.json"))

    task = load_suite(tasks_dir).tasks[0]
    app = EBenchApp(lambda: SolveScreen(task))
    async with app.run_test(size=SIZE) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, SolveScreen)
        await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
        results: list[Any] = []
        composer = screen.query_one(CallComposer)
        for step in task.reference_solution:
            calls = screen.trial.tool_calls
            screen.query_one(ToolCatalog).select(step.tool, notify=True)

            def chosen(tool: str = step.tool) -> bool:
                """The tool's form built and focused (the screen's handling of the choice done)."""
                focused = screen.focused
                return composer.tool is not None and composer.tool.name == tool and focused is not None and composer in focused.ancestors

            await until_settled(pilot, chosen, what=f"{step.tool} chosen")
            composer.set_args(resolve_args(step.args, results))
            await composer.form_ready()
            await pilot.press("f5")
            await until_settled(pilot)  # the call's worker, then the diff's
            assert screen.trial.tool_calls == calls + 1 and not screen.busy
            results.append(screen.trial.history[-1].result)
        assert screen.query_one(DiffView).counts["matched"] == len(task.expected_diff)
        await pilot.press("ctrl+s")
        await until_settled(pilot, lambda: screen.summary is not None)
        assert screen.summary.passed
