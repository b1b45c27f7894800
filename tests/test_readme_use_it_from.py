"""The README's "Use it from" examples, run as written: the datasets round trip (export, load with
`datasets`, write back, run and grade) and the MCP client entry. The Inspect AI example runs in
tests/test_integration_inspect.py, the verifiers one in tests/rl/ (its own environment)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ebench.api import get_domain, load_run, load_suite
from ebench.tasks.suite import SPLITS

README = Path(__file__).resolve().parent.parent / "README.md"


def _subsection(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    body = text.split("\n## Use it from\n", 1)[1].split("\n## ", 1)[0]
    return body.split(f"\n### {title}", 1)[1].split("\n### ", 1)[0]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def _run_shell_line(line: str, cwd: Path) -> None:
    """One `ebench ...` line of a bash block, its comment dropped, through this interpreter."""
    words = shlex.split(line.split("#", 1)[0])
    assert words[0] == "ebench", line
    out = subprocess.run([sys.executable, "-m", "ebench", *words[1:]], cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


def test_the_datasets_example_round_trips_and_grades_as_the_shipped_files(tmp_path, monkeypatch, music_world):
    section = _subsection("datasets")
    export, run = (block.strip() for block in _blocks(section, "bash"))
    (code,) = _blocks(section, "python")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    _run_shell_line(export, tmp_path)
    exec(compile(code, "README.md (datasets)", "exec"), {})
    assert (tmp_path / "music.jsonl").is_file()
    _run_shell_line(run, tmp_path)
    results = load_run(tmp_path / "runs" / "music-oracle").results
    shipped = load_suite(SPLITS["suite"], domain="music").tasks
    assert sorted(r.task for r in results) == sorted(t.id for t in shipped)
    assert all(r.passed for r in results)  # the reference solutions, read back from the dataset, pass every task


def test_the_mcp_entry_starts_a_server_any_client_can_solve_with(ebench_home):
    (entry,) = _blocks(_subsection("MCP"), "json")
    server = json.loads(entry)
    command = Path(sys.executable).parent / server["command"]  # the venv's `ebench` script, as a client starts it
    assert command.is_file()
    params = StdioServerParameters(
        command=str(command), args=server["args"], env={**os.environ, "EBENCH_HOME": str(ebench_home), "LITELLM_OFFLINE_MODE": "true"}
    )
    task_id = server["args"][server["args"].index("--task") + 1]

    async def main() -> tuple[list[str], str]:
        with open(os.devnull, "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as streams, ClientSession(*streams) as session:
                await session.initialize()
                tools = await session.list_tools()
                prompt = await session.get_prompt("task")
                return [t.name for t in tools.tools], str(prompt.messages[0].content.text)

    names, request = anyio.run(main)
    domain = task_id.split("-", 1)[0]
    assert sorted(names) == sorted(get_domain(domain).tools.names)
    task = next(t for t in load_suite(Path(os.environ["EBENCH_TASKS"]), domain=domain).tasks if t.id == task_id)
    assert task.query in request


def test_the_base_install_has_none_of_the_integrations_packages():
    """Inspect AI, verifiers and datasets are optional extras: `pip install ebench` brings none."""
    import tomllib

    project = tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {re.split(r"[<>=!~\[; ]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]}
    assert base.isdisjoint({"inspect-ai", "verifiers", "datasets", "pyarrow"})
    extras = project["optional-dependencies"]
    assert any(dep.startswith("inspect-ai") for dep in extras["inspect"])
    assert any(dep.startswith("verifiers") for dep in extras["verifiers"])
    assert any(dep.startswith("datasets") for dep in extras["datasets"])
    assert project["entry-points"]["inspect_ai"] == {"ebench": "ebench.integrations.inspect"}
