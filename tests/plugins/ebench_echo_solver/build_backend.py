"""A build backend for this test plug-in that needs nothing installed (PEP 517, in-tree).

The plug-in's own metadata and entry points are the ones in pyproject.toml; a real plug-in would
name setuptools, hatchling or flit instead. This one exists so the tests can `pip install
--no-build-isolation --no-index` the plug-in on a machine without `wheel` or network.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _project() -> dict[str, Any]:
    return tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _dist(project: dict[str, Any]) -> str:
    return f"{project['name'].replace('-', '_')}-{project['version']}"


def _files(project: dict[str, Any]) -> dict[str, bytes]:
    """The wheel's files: the module, then its dist-info (metadata, entry points, WHEEL)."""
    info = f"{_dist(project)}.dist-info"
    entry_points = "".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items()) + "\n"
        for group, entries in project.get("entry-points", {}).items()
    )
    return {
        "ebench_echo_solver.py": (HERE / "ebench_echo_solver.py").read_bytes(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n".encode(),
        f"{info}/entry_points.txt": entry_points.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: build_backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    project = _project()
    files = _files(project)
    record = f"{_dist(project)}.dist-info/RECORD"
    lines = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(data)}\n")
    files[record] = ("".join(lines) + f"{record},,\n").encode()
    wheel = f"{_dist(project)}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return wheel


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    root = _dist(_project())
    with tarfile.open(Path(sdist_directory) / f"{root}.tar.gz", "w:gz") as archive:
        for name in ("pyproject.toml", "build_backend.py", "ebench_echo_solver.py"):
            data = (HERE / name).read_bytes()
            member = tarfile.TarInfo(f"{root}/{name}")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return f"{root}.tar.gz"
