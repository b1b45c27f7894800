"""Where ebench keeps what it generates: worlds (and later sessions and runs).

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


def worlds_dir() -> Path:
    path = data_dir() / "worlds"
    path.mkdir(parents=True, exist_ok=True)
    return path
