"""One error hierarchy, mapped in one place, and plug-ins that fail soft.

Every error a user may see is an `EBenchError` carrying its exit code, and the root command
(`ebench/cli/common.py`, `OneLineErrors`) prints it as one line and exits with that code; an
OSError is the environment (74) only for the disk or a folder's permissions. A plug-in that
cannot be loaded, or that takes a built-in's name, is a warning when ebench lists what is
installed, and the listing goes on.

The plug-ins here are real: a distribution's metadata (an `.dist-info` folder with its
`entry_points.txt`) on PYTHONPATH, beside the modules it names, read by `importlib.metadata` in a
fresh `ebench` process; tests/plugins/ebench_loans is importable from its source folder.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ebench.cli.common import OneLineErrors
from ebench.errors import EXIT_ENVIRONMENT, EXIT_USAGE, EBenchError, InputError, os_error_exit_code, os_error_message
from ebench.registry import PluginError, UnknownName

LOANS_SOURCE = Path(__file__).resolve().parent / "plugins" / "ebench_loans"


def plugin_site(folder: Path, entry_points: str, modules: dict[str, str] | None = None) -> Path:
    """A folder holding a distribution that declares `entry_points` (INI text) and the `modules`
    (name -> source) it may name."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = folder / "ebench_test_plugins-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ebench-test-plugins\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    for name, source in (modules or {}).items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return folder


def ebench(site: Path, home: Path, *args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """The real `ebench` in a fresh process that sees the plug-ins of `site` (and the loans package)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(LOANS_SOURCE)]), "EBENCH_HOME": str(home)}
    env.pop("EBENCH_TASKS", None)
    return subprocess.run([sys.executable, "-m", "ebench", *args], stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, timeout=300)


# -- the hierarchy ---------------------------------------------------------------------------


def test_user_facing_errors_share_one_base_and_keep_their_old_bases():
    from ebench.engine.domain_registry import UnknownDomain
    from ebench.engine.tools import ToolError
    from ebench.sessions.runs import RunError
    from ebench.sessions.solvers.base import FatalSolverError, SolverOptionsError
    from ebench.tasks.spec import TaskFileError
    from ebench.tasks.worlds import WorldMismatch

    for error, old_base in [
        (UnknownDomain, LookupError),
        (PluginError, RuntimeError),
        (TaskFileError, ValueError),
        (WorldMismatch, ValueError),
        (RunError, ValueError),
        (SolverOptionsError, ValueError),
        (FatalSolverError, RuntimeError),
        (ToolError, Exception),
    ]:
        assert issubclass(error, EBenchError) and issubclass(error, old_base), error
    assert (UnknownName.exit_code, PluginError.exit_code, TaskFileError.exit_code, ToolError.exit_code) == (2, 2, 2, 2)
    assert FatalSolverError.exit_code == 1


@pytest.mark.parametrize(
    ("number", "code", "said"),
    [
        (errno.ENOSPC, EXIT_ENVIRONMENT, "the disk is full (/data/run): nothing already recorded was lost; free the space"),
        (errno.EDQUOT, EXIT_ENVIRONMENT, "the disk quota is exceeded (/data/run): nothing already recorded was lost; free the space"),
        (errno.EROFS, EXIT_ENVIRONMENT, "the file system is read-only (/data/run): nothing already recorded was lost; fix the folder"),
        (errno.EACCES, EXIT_ENVIRONMENT, "permission denied (/data/run): nothing already recorded was lost; fix the folder"),
        (errno.ENOENT, EXIT_USAGE, "No such file or directory (/data/run)"),
        (errno.EISDIR, EXIT_USAGE, "Is a directory (/data/run)"),
    ],
)
def test_only_the_disk_and_a_folders_permissions_are_the_environment(number: int, code: int, said: str):
    exc = OSError(number, os.strerror(number), "/data/run")
    assert os_error_exit_code(exc) == code
    assert os_error_message(exc).startswith(said)
    assert ("free the space" in os_error_message(exc)) == (number in (errno.ENOSPC, errno.EDQUOT))


# -- the one place they are mapped -----------------------------------------------------------


class Overdrawn(EBenchError):
    """An error of a kind ebench does not know, with a code of its own."""

    exit_code = 3


def test_the_root_command_prints_any_ebench_error_as_one_line_with_its_code():
    root = typer.Typer(cls=OneLineErrors)

    @root.command("spend")
    def spend(kind: str) -> None:
        if kind == "overdrawn":
            raise Overdrawn("the account is overdrawn by 12 credits;\n  top it up and try again")
        if kind == "input":
            raise InputError("no such account 'acme'")
        raise OSError(errno.ENOENT, "No such file or directory", "/ledger.csv")

    @root.command("other")
    def other() -> None:  # two commands: the group keeps its subcommand names
        pass

    runner = CliRunner()
    for kind, code, line in [
        ("overdrawn", 3, "error: the account is overdrawn by 12 credits; top it up and try again"),
        ("input", 2, "error: no such account 'acme'"),
        ("missing", 2, "error: No such file or directory (/ledger.csv)"),
    ]:
        result = runner.invoke(root, ["spend", kind])
        assert (result.exit_code, result.stderr.strip()) == (code, line), kind
        assert "Traceback" not in result.output


def test_a_damaged_task_named_by_id_is_bad_input(tmp_path: Path):
    from ebench.cli import app

    (tmp_path / "music").mkdir()
    (tmp_path / "music" / "music-bad.json").write_text('{"id": "music-bad"}', encoding="utf-8")
    result = CliRunner().invoke(app, ["tasks", "show", "music-bad", "--dir", str(tmp_path)])
    assert (result.exit_code, result.stderr.strip()) == (2, f"error: {tmp_path / 'music' / 'music-bad.json'}: format: missing")


def test_a_missing_plugin_file_is_bad_input_not_a_full_disk(tmp_path: Path):
    """A plug-in whose fingerprint names a file it does not ship: exit 2, the file named."""
    gone = (
        "import dataclasses, pathlib\n"
        "from ebench_loans import DOMAIN as LOANS\n"
        "DOMAIN = dataclasses.replace(LOANS, name='gone', source_files=[pathlib.Path(__file__).with_name('vocabulary.py')])\n"
    )
    site = plugin_site(tmp_path / "site", "[ebench.domains]\ngone = ebench_gone:DOMAIN\n", {"ebench_gone": gone})
    out = ebench(site, tmp_path / "home", "domains", "build", "--domain", "gone")
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: No such file or directory ({site / 'vocabulary.py'})"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full (a device whose every write fails with ENOSPC)")
def test_a_full_disk_is_the_environment(tmp_path: Path):
    with open("/dev/full", "w") as full:
        out = ebench(tmp_path, tmp_path / "home", "sessions", "schema", "results", stdout=full.fileno())
    assert out.returncode == 74
    assert out.stderr.startswith("error: the disk is full") and len(out.stderr.strip().splitlines()) == 1


def test_an_ebench_error_from_a_plugin_is_its_own_line_and_code(tmp_path: Path):
    """A solver's factory that raises an EBenchError has said what is wrong: shown as it is."""
    refusing = (
        "from ebench.api import EBenchError\n"
        "class NotConfigured(EBenchError):\n"
        "    exit_code = 1\n"
        "def factory(options):\n"
        "    raise NotConfigured('the refusing solver needs REFUSING_TOKEN set')\n"
    )
    site = plugin_site(tmp_path / "site", "[ebench.solvers]\nrefusing = ebench_refusing:factory\n", {"ebench_refusing": refusing})
    out = ebench(site, tmp_path / "home", "run", "--batch", "--solver", "refusing", "--task", "music-0001")
    assert (out.returncode, out.stderr.strip()) == (1, "error: the refusing solver needs REFUSING_TOKEN set")


# -- plug-ins fail soft ----------------------------------------------------------------------


def test_listing_the_domains_warns_about_broken_and_shadowing_plugins_and_goes_on(tmp_path: Path):
    site = plugin_site(
        tmp_path / "site",
        "[ebench.domains]\nbroken = ebench_missing:DOMAIN\nmusic = ebench_loans:DOMAIN\nloans = ebench_loans:DOMAIN\n",
    )
    out = ebench(site, tmp_path / "home", "domains", "list", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["name"] for r in rows] == ["music", "meeting", "moba", "loans"]
    assert [r["title"] for r in rows if r["name"] == "music"] == ["Music streaming platform"]  # the built-in, not the plug-in
    assert out.stderr.strip().splitlines() == [
        "warning: the domain plug-in 'music' (ebench_loans:DOMAIN) is ignored: 'music' is a built-in domain",
        "warning: the domain 'broken' (ebench_missing:DOMAIN) cannot be loaded: ModuleNotFoundError: "
        "No module named 'ebench_missing'; left out",
    ]
    named = ebench(site, tmp_path / "home", "domains", "build", "--domain", "broken")  # asked for by name: an error
    assert named.returncode == 2 and named.stderr.strip().splitlines()[-1].startswith("error: the domain 'broken'")


def test_a_plugin_without_a_vocabulary_module_has_a_fingerprint(tmp_path: Path):
    """`package_source_files` hashes the conventional files a package has: a plug-in needs no vocabulary.py."""
    from ebench.api import package_source_files

    package = tmp_path / "ebench_lean"
    package.mkdir()
    for name in ("__init__.py", "schema.py", "data.py", "checks.py"):
        (package / name).write_text(f"# {name}\n", encoding="utf-8")
    files = package_source_files(str(package / "__init__.py"))
    assert all(path.exists() for path in files)
    assert {p.name for p in files if p.parent == package} == {"schema.py", "data.py", "checks.py"}
