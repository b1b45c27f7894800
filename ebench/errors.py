"""The one error hierarchy: every error a user may see is an `EBenchError` carrying its exit code.

The message of an `EBenchError` is the one line the command line prints (`error: <message>`),
and `exit_code` the code it exits with, one of the README's ("Commands"): 0 done; 1 done, and
something failed; 2 bad input; 74 the environment failed; 130 interrupted. The command line maps
an error to its line and code in one place (`ebench/cli/common.py`, `OneLineErrors`); an
existing error class keeps its name and its built-in base (`TaskFileError` is still a
`ValueError`), so code that caught it before still does.

An `OSError` is no `EBenchError`, but the same place maps it: only a failure of the disk or of a
folder's permissions (`ENVIRONMENT_ERRNOS`) is the environment (74), anything else (a missing
file, a path that is a folder) is bad input (2), each with its own line.

This module imports nothing from ebench: every layer, the engine included, can raise from it.
"""

from __future__ import annotations

import errno
from typing import ClassVar

EXIT_OK = 0
EXIT_FAILED = 1  # done, and something failed (a task, a check, a tool call)
EXIT_USAGE = 2  # bad input: usage, unknown names, malformed or damaged files, a broken plug-in
EXIT_ENVIRONMENT = 74  # the disk or a folder failed: fixed, the same command resumes (sysexits' EX_IOERR)
EXIT_INTERRUPTED = 130

# The errno values that mean the machine, not the input, failed: the disk (full, over quota, a file
# too large, read-only, an I/O error) or a folder the user cannot write. What each says to do.
_DISK_FULL = "free the space"
_FIX_FOLDER = "fix the folder"
ENVIRONMENT_ERRNOS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("the disk is full", _DISK_FULL),
    errno.EDQUOT: ("the disk quota is exceeded", _DISK_FULL),
    errno.EFBIG: ("the file is too large for the file system", _DISK_FULL),
    errno.EROFS: ("the file system is read-only", _FIX_FOLDER),
    errno.EIO: ("the disk reported an I/O error", "check the disk"),
    errno.EACCES: ("permission denied", _FIX_FOLDER),
    errno.EPERM: ("operation not permitted", _FIX_FOLDER),
}


class EBenchError(Exception):
    """An error a user may see: `str(error)` is one line naming the thing at fault and what to do,
    `exit_code` the code the command line exits with (a subclass sets its own)."""

    exit_code: ClassVar[int] = EXIT_FAILED


class InputError(EBenchError):
    """Bad input: a usage mistake, an unknown name, a malformed or damaged file, a broken plug-in."""

    exit_code: ClassVar[int] = EXIT_USAGE


class EnvironmentFailure(EBenchError):
    """The machine failed (a full disk, an unwritable folder): nothing recorded is lost, and the
    same command resumes once it is fixed."""

    exit_code: ClassVar[int] = EXIT_ENVIRONMENT


def os_error_exit_code(exc: OSError) -> int:
    """74 for a failure of the disk or of a folder's permissions, 2 for any other OSError."""
    return EXIT_ENVIRONMENT if exc.errno in ENVIRONMENT_ERRNOS else EXIT_USAGE


def os_error_message(exc: OSError) -> str:
    """One line for an OSError: what failed and where; for the environment, that nothing recorded
    is lost and what to fix before running the same command again."""
    where = f" ({exc.filename})" if exc.filename else ""
    known = ENVIRONMENT_ERRNOS.get(exc.errno or 0)
    if known is None:  # a missing file, a folder where a file was expected: said as it is
        return f"{exc.strerror or exc}{where}"
    what, fix = known
    return f"{what}{where}: nothing already recorded was lost; {fix} and run the same command again"


__all__ = [
    "ENVIRONMENT_ERRNOS",
    "EXIT_ENVIRONMENT",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EBenchError",
    "EnvironmentFailure",
    "InputError",
    "os_error_exit_code",
    "os_error_message",
]
