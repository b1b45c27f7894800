"""A run directory: its manifest, its session files and its results file.

```
RUN/
  manifest.json         the configuration, its hash, the ebench version, the task set, start and end
  results.jsonl         one line per finished trial (see `TrialSummary` in results.py), appended as trials end
  sessions/<task>/<trial>.jsonl   one session record per trial
```

`results.jsonl` is the source of truth for which trials are finished: a session file without its
final line belongs to a trial that was interrupted, and a resumed run starts that trial again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from ..errors import InputError
from .events import SolverInfo
from .objects import JsonObject
from .results import PerturbationRecord, ResultsLineError, TrialSummary

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
SESSIONS = "sessions"
RUN_FORMAT: Final = "ebench-run/1"
LOCK = ".lock"


class RunError(InputError, ValueError):
    """A run directory that cannot be used; the message says why."""


class RunLimits(JsonObject):
    """The limits a run's trials ran under (a task's budget may raise them)."""

    max_turns: int | None = None
    max_tool_calls: int | None = None
    timeout: float | None = None


class TaskSelection(JsonObject):
    """How a run's tasks were chosen (`ebench run --batch` options; an import names its own)."""

    scenarios: bool | None = None  # written only for a run of scenarios
    dir: str | None = None
    domain: str | None = None
    capability: str | None = None
    ids: list[str] | None = None


class UserRecord(JsonObject):
    """Who played the user (users.py), written only when not the default scripted user."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    kind: str = "scripted"
    model: str | None = None
    api_base: str | None = None
    model_args: dict[str, Any] | None = None


class RunConfig(JsonObject):
    """What shapes a run's results, hashed into `config_hash`: the solver (as it describes itself,
    or a bare name), the mode, the limits, the task selection, the user and the perturbation."""

    solver: SolverInfo | str | None = None
    code: bool | None = None
    limits: RunLimits | None = None
    tasks: TaskSelection | None = None
    user: UserRecord | None = None
    perturb: PerturbationRecord | None = None

    @property
    def solver_name(self) -> str | None:
        return self.solver.name if isinstance(self.solver, SolverInfo) else self.solver

    @property
    def solver_model(self) -> str | None:
        return self.solver.model if isinstance(self.solver, SolverInfo) else None


class TaskSet(JsonObject):
    """The tasks a run plans: how many, and their ids."""

    count: int = 0
    ids: list[str] = Field(default_factory=list)


class SuiteRecord(JsonObject):
    """The suite a run's tasks came from: its version, and each world's fingerprint by domain:seed."""

    version: str | None = None
    worlds: dict[str, str] = Field(default_factory=dict)


class RegradeNote(JsonObject):
    """When a run was last regraded (regrade.py), and by which ebench."""

    at: str = ""
    ebench_version: str = ""


class RunManifest(BaseModel):
    """A run's manifest.json: its configuration and hash, the ebench version, the task set, the
    suite's version and worlds, start and end. Keys it does not know are kept as read, at every level."""

    model_config = ConfigDict(extra="allow")

    format: Literal["ebench-run/1"]
    label: Annotated[str, Strict()] | None = None
    ebench_version: str | None = None
    config: RunConfig | None = None
    config_hash: str | None = None
    trials: Annotated[int, Strict()] | None = None
    tasks: TaskSet | None = None
    started: str | None = None
    ended: str | None = None
    status: str | None = None
    resumed: str | None = None
    suite: SuiteRecord | None = None
    regraded: RegradeNote | None = None

    def to_dict(self) -> dict[str, Any]:
        """The manifest as written: the keys it was read or made with."""
        return self.model_dump(exclude_unset=True)

    def setting(self, key: str) -> Any:
        """A key of the configuration as JSON (None when absent); the attributes of `config` are typed."""
        return self.config.get(key) if self.config else None


@dataclass
class RunData:
    path: Path
    manifest: RunManifest
    results: list[TrialSummary] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # damaged lines skipped, "file:line: why"

    @property
    def label(self) -> str:
        return str(self.manifest.label or self.path.name)


def read_results(path: Path, warnings: list[str] | None = None) -> list[TrialSummary]:
    """The finished trials, read line by line: a line that is torn (a crash while writing it), not
    UTF-8, not JSON or not a results line is skipped, with a warning naming file and line; the
    rest is used. A trial that appears twice (re-run after an infrastructure error) counts with
    its latest result. A results line with a field of the wrong type is a RunError naming file,
    line, trial and field: it cannot be scored."""
    latest: dict[tuple[str, int], TrialSummary] = {}
    if not path.exists():
        return []
    notes = warnings if warnings is not None else []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.endswith(b"\n"):
                notes.append(f"{path}:{number}: a torn last line (written when the run was stopped) was skipped")
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                notes.append(f"{path}:{number}: not UTF-8 text, skipped")
                continue
            except ValueError:
                notes.append(f"{path}:{number}: not a JSON line, skipped")
                continue
            if not _is_result(record):
                notes.append(f"{path}:{number}: not a results line (task, trial, passed), skipped")
                continue
            try:
                latest[(record["task"], record["trial"])] = TrialSummary.read(record)
            except ResultsLineError as exc:
                raise RunError(f"{path}:{number}: {exc}") from None
    return list(latest.values())


def _is_result(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("task"), str)
        and isinstance(record.get("trial"), int)
        and not isinstance(record.get("trial"), bool)
        and isinstance(record.get("passed"), bool)
    )


def repair_results(path: Path) -> str | None:
    """Cut a torn last line (a kill while it was written) so the next result starts on a line of its
    own; that trial runs again. Returns a warning when something was cut."""
    if not path.exists():
        return None
    with path.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return None
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return None
        handle.seek(max(0, size - (1 << 20)))
        tail = handle.read()
        cut = tail.rfind(b"\n")
        keep = size - len(tail) + cut + 1 if cut >= 0 else 0
        handle.truncate(keep)
    return f"{path}: a torn last line ({size - keep} bytes, from a run that was killed) was removed; its trial runs again"


def load_runs(path: str | Path) -> list[RunData]:
    """A run directory, or a folder of sessions recorded outside a batch (the app's, the MCP
    server's, `ebench run` of one task): those are grouped by solver, one pseudo-run each."""
    root = Path(path)
    if (root / MANIFEST).is_file() or not root.is_dir():
        return [load_run(root)]
    return load_sessions(root)


def load_sessions(root: Path) -> list[RunData]:
    """Pseudo-runs from finished session files (their last event holds the results line). The
    sessions of one solver and task are numbered as trials 1, 2, ... in the order they were made."""
    from .record import SessionFileError, read_session

    groups: dict[str, list[TrialSummary]] = {}
    for file in sorted(root.rglob("*.jsonl")):
        try:
            end = read_session(file).end
        except SessionFileError:
            continue
        summary = end.summary if end else None
        if not isinstance(summary, TrialSummary) or not summary.task:
            continue  # no results line, or one that cannot be read (skipped like a session that cannot)
        result = summary.model_copy(update={"session": str(file)})
        groups.setdefault(result.solver or "unknown", []).append(result)
    if not groups:
        raise RunError(f"{root}: neither a run directory (no {MANIFEST}) nor a folder of finished sessions")
    runs = []
    for solver, results in sorted(groups.items()):
        counts: dict[str, int] = {}
        for result in results:
            counts[result.task] = result.trial = counts.get(result.task, 0) + 1
        manifest = RunManifest(
            format=RUN_FORMAT,
            label=solver,
            config=RunConfig(solver=SolverInfo(name=solver)),
            trials=max(counts.values()),
            tasks=TaskSet(count=len(counts), ids=sorted(counts)),
        )
        runs.append(RunData(root, manifest, results))
    return runs


def load_run(path: str | Path) -> RunData:
    root = Path(path)
    manifest_path = root / MANIFEST
    if not root.exists():
        raise RunError(f"{root}: no such file or folder")
    if not manifest_path.is_file():
        raise RunError(f"{root}: not a run directory (no {MANIFEST})")
    manifest = read_manifest(manifest_path)
    warnings: list[str] = []
    results = read_results(root / RESULTS, warnings)
    return RunData(root, manifest, results, warnings)


def read_manifest(path: Path) -> RunManifest:
    """A run's manifest, or RunError saying in one line what is wrong with it."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise RunError(f"{path}: unreadable manifest: not UTF-8 text") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != RUN_FORMAT:
        raise RunError(f"{path}: not an {RUN_FORMAT} manifest")
    try:
        return RunManifest.model_validate(manifest)
    except ValidationError as exc:
        raise RunError(f"{path}: {_wrong_key(exc)}") from None


def _wrong_key(exc: ValidationError) -> str:
    """What is wrong with a manifest, in one line: the first key of the wrong type, as a path."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"] if not str(part).startswith(("function-", "union[")))
    key = str(error["loc"][0])
    if len(error["loc"]) == 1:
        kind = {"label": "str", "trials": "int"}.get(key, "object" if key in ("config", "tasks", "suite", "regraded") else "str")
        return f"the manifest's {key!r} must be a JSON {kind}"
    return f"the manifest's {where!r}: {error['msg'].lower()}"


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of a run's manifest, titled with its format version."""
    schema = RunManifest.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:{RUN_FORMAT.replace('/', ':')}",
        **schema,
        "title": f"ebench run manifest ({RUN_FORMAT})",
    }


class RunLock:
    """One writer per run directory. A lock file (`RUN/.lock`, flock) is held while a batch writes
    the run; the kernel releases it when the holder exits, however it exits, so the lock of a
    killed batch is recovered by the next one without any clean-up. The file names its holder."""

    def __init__(self, root: Path) -> None:
        self.path = root / LOCK
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl
        import socket
        import time

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 400).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise RunError(f"{self.path.parent} is being written by {holder}; wait for it to finish, or use another --out") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"ebench batch pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
        self._fd = fd

    @property
    def fds(self) -> tuple[int, ...]:
        """The descriptor holding the lock, for a forked child to close."""
        return () if self._fd is None else (self._fd,)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def write_text_atomic(path: Path, text: str) -> None:
    """Write a file so that a crash leaves the old one or the new one, never half of one; a write
    that fails (a full disk) leaves the old one and no temporary file beside it."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
