"""Shared fixtures: a private data directory and the built worlds, once per test session."""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebench.engine.domain_registry import domain_names

# Tests never reach the network; litellm must not fetch its price map.
os.environ["LITELLM_OFFLINE_MODE"] = "true"

# The verifiers environment's tests need the `verifiers` extra, which cannot share .venv with Inspect
# AI (they pin incompatible openai releases): they are collected in .venv-rl only, where
# tests/test_integration_verifiers.py runs them.
collect_ignore = [] if importlib.util.find_spec("verifiers") is not None else ["rl"]


@pytest.fixture(scope="session", autouse=True)
def ebench_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test session builds into its own data directory, never the user's."""
    home = tmp_path_factory.mktemp("ebench-home")
    old = os.environ.get("EBENCH_HOME")
    os.environ["EBENCH_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("EBENCH_HOME", None)
    else:
        os.environ["EBENCH_HOME"] = old


# ctrl+c stops the test session after the test it lands in, even when the code under test catches
# it: an in-process batch (`CliRunner`) ends as "interrupted", exit 130, and the session would
# otherwise go on to the next test (and the next Ray batch) as if nothing had happened.
class _CtrlC:
    heard = False
    expected = 0  # signals a test sends itself on purpose (`send_ctrl_c`)


def _on_sigint(signum: int, frame: object) -> None:
    if _CtrlC.expected:
        _CtrlC.expected -= 1
    else:
        _CtrlC.heard = True
    signal.default_int_handler(signum, frame)


def pytest_sessionstart(session: pytest.Session) -> None:
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if _CtrlC.heard:
        item.session.shouldstop = "interrupted by ctrl+c"


@pytest.fixture
def send_ctrl_c():
    """Send this process a ctrl+c that the test expects (and the session does not stop for)."""

    def send() -> None:
        _CtrlC.expected += 1
        os.kill(os.getpid(), signal.SIGINT)

    return send


# The harness tests run on fixed tasks (tests/fixtures/tasks), so regenerating the shipped suite
# never changes what they exercise; the tests of the shipped suite name SUITE_DIR explicitly.
FIXTURE_TASKS = Path(__file__).resolve().parent / "fixtures" / "tasks"
os.environ["EBENCH_TASKS"] = str(FIXTURE_TASKS)


def _domain_fixtures(name: str) -> None:
    """Define `<name>`, `<name>_world` and `<name>_conn` fixtures for one domain."""

    @pytest.fixture(scope="session", name=name)
    def domain():
        from ebench.engine.domain_registry import get_domain

        return get_domain(name)

    @pytest.fixture(scope="session", name=f"{name}_world")
    def world(request: pytest.FixtureRequest, ebench_home: Path) -> Path:
        from ebench.engine.world import ensure_world

        return ensure_world(request.getfixturevalue(name))

    @pytest.fixture(name=f"{name}_conn")
    def conn(request: pytest.FixtureRequest) -> Iterator[sqlite3.Connection]:
        """A fresh in-memory copy of the world for one test."""
        from ebench.engine.world import scratch_copy

        connection = scratch_copy(request.getfixturevalue(f"{name}_world"))
        yield connection
        connection.close()

    globals().update({name: domain, f"{name}_world": world, f"{name}_conn": conn})


# Every registered domain gets its fixtures (a plug-in installed in the environment too).
for _name in domain_names():
    _domain_fixtures(_name)
