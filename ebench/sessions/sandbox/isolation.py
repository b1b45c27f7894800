"""Which OS layers a worker gets, and the paths Landlock lets it read.

Always: the audit hook and the block's resource limits (rlimits: memory, CPU, files, processes),
so every limit holds whatever the kernel allows. Optional layers: no_new_privs, netns (a new network namespace),
landlock (filesystem read-only to the standard library; no TCP; no signals outside), seccomp
(x86_64: no sockets, kill, mount, namespaces, ptrace...; fork stays allowed for the zygote, a
worker's forks are stopped by its RLIMIT_NPROC of 0 (not for root) and the audit hook). Each optional layer is
probed when a worker starts and skipped where the kernel or platform refuses it; the worker
reports what was applied (`ExecCode.isolation`).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

LAYERS = ("no_new_privs", "netns", "landlock", "seccomp")
HERE = Path(__file__).resolve().parent
CONFINE = HERE / "confine.py"
WORKER = HERE / "worker.py"
SYSTEM_LIB_DIRS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64")
SYSTEM_FILES = ("/etc/ld.so.cache",)


@lru_cache(maxsize=1)
def python_executable() -> str:
    return os.path.realpath(sys.executable)


def _install_paths(*keys: str) -> list[str]:
    """The sysconfig install paths named by `keys`, each as given and as its real path, without repeats."""
    paths: list[str] = []
    for key in keys:
        path = sysconfig.get_paths()[key]
        for candidate in (os.path.abspath(path), os.path.realpath(path)):
            if candidate not in paths:
                paths.append(candidate)
    return paths


@lru_cache(maxsize=1)
def stdlib_roots() -> tuple[str, ...]:
    """Directories the worker may read: the standard library (its real path and its path)."""
    return tuple(_install_paths("stdlib", "platstdlib"))


@lru_cache(maxsize=1)
def denied_roots() -> tuple[str, ...]:
    """Inside the standard library but not readable: installed packages (ebench among them)."""
    denied = _install_paths("purelib", "platlib")
    for root in stdlib_roots():
        for name in ("site-packages", "dist-packages"):
            candidate = os.path.join(root, name)
            if candidate not in denied:
                denied.append(candidate)
    return tuple(denied)


@lru_cache(maxsize=1)
def landlock_paths() -> tuple[list[str], list[str]]:
    """(read paths, exec paths). Landlock rules only add access, so the standard library is
    granted entry by entry, leaving out site-packages."""
    denied = set(denied_roots())
    read: list[str] = []
    for root in stdlib_roots():
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(root, name)
            if path not in denied and os.path.realpath(path) not in denied and path not in read:
                read.append(path)
    read.extend(p for p in SYSTEM_FILES if os.path.exists(p))
    execs = [python_executable(), *(d for d in SYSTEM_LIB_DIRS if os.path.isdir(d))]
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and os.path.isdir(libdir):
        execs.extend(os.path.join(libdir, n) for n in os.listdir(libdir) if n.startswith("libpython"))
    return read, execs
