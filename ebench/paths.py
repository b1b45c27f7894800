"""Where ebench keeps what it generates: worlds, sessions and runs.

`EBENCH_HOME` overrides the user's data directory; nothing generated lives in the repository.
"""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    home = os.environ.get("EBENCH_HOME")
    if home:
        path = Path(home).expanduser()
    else:
        from platformdirs import user_data_dir

        path = Path(user_data_dir("ebench", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _subdir(name: str) -> Path:
    path = data_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def worlds_dir() -> Path:
    return _subdir("worlds")


def sessions_dir() -> Path:
    """Trials recorded outside a batch (the app, the MCP server, `ebench run` of one task)."""
    return _subdir("sessions")


def runs_dir() -> Path:
    """Where `ebench run --batch` writes a run when no --out is given."""
    return _subdir("runs")


def cache_dir() -> Path:
    """What ebench can rebuild at any time (the parsed task suites): under `EBENCH_HOME` when it is
    set (everything of one home together), else the user's cache directory."""
    home = os.environ.get("EBENCH_HOME")
    if home:
        path = Path(home).expanduser() / "cache"
    else:
        from platformdirs import user_cache_dir

        path = Path(user_cache_dir("ebench", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_text_atomically(path: Path, text: str, prefix: str = ".") -> None:
    """Write `text` to `path` through a temporary file in the same folder and `os.replace`, so a
    crash or a kill mid-write leaves the previous file whole; OSError when it cannot."""
    import tempfile  # here: most users of this module never write

    fd, temp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
