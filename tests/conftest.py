"""Shared fixtures: a private data directory and the built worlds, once per test session."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

# Tests never reach the network; litellm must not fetch its price map.
os.environ["LITELLM_OFFLINE_MODE"] = "true"


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


@pytest.fixture(scope="session")
def music():
    from ebench.domains import get_domain

    return get_domain("music")


@pytest.fixture(scope="session")
def music_world(music, ebench_home: Path) -> Path:
    from ebench.domains.engine.world import ensure_world

    return ensure_world(music)


@pytest.fixture()
def music_conn(music_world: Path) -> Iterator[sqlite3.Connection]:
    """A fresh in-memory copy of the music world for one test."""
    from ebench.domains.engine.world import scratch_copy

    conn = scratch_copy(music_world)
    yield conn
    conn.close()
