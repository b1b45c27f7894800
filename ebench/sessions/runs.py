"""A run directory: its manifest, its session files and its results file.

```
RUN/
  manifest.json         the configuration, its hash, the ebench version, the task set, start and end
  results.jsonl         one line per finished trial (see `TrialSummary` in trial.py), appended as trials end
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
from typing import Any

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
SESSIONS = "sessions"
RUN_FORMAT = "ebench-run/1"


class RunError(ValueError):
    """A run directory that cannot be used; the message says why."""


@dataclass
class RunData:
    path: Path
    manifest: dict[str, Any]
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.manifest.get("label") or self.path.name)


def read_results(path: Path) -> list[dict[str, Any]]:
    """The finished trials; a torn last line (a crash while writing it) is ignored. A trial that
    appears twice (re-run after an infrastructure error) counts with its latest result."""
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and "task" in record and "trial" in record:
                latest[(record["task"], record["trial"])] = record
    return list(latest.values())


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

    groups: dict[str, list[dict[str, Any]]] = {}
    for file in sorted(root.rglob("*.jsonl")):
        try:
            end = read_session(file).end
        except SessionFileError:
            continue
        summary = end.get("summary") if end else None
        if not isinstance(summary, dict) or not summary.get("task"):
            continue
        groups.setdefault(str(summary.get("solver") or "unknown"), []).append(dict(summary, session=str(file)))
    if not groups:
        raise RunError(f"{root}: neither a run directory (no {MANIFEST}) nor a folder of finished sessions")
    runs = []
    for solver, results in sorted(groups.items()):
        counts: dict[str, int] = {}
        for result in results:
            counts[result["task"]] = result["trial"] = counts.get(result["task"], 0) + 1
        manifest = {"format": RUN_FORMAT, "label": solver, "config": {"solver": {"name": solver}},
                    "trials": max(counts.values()), "tasks": {"count": len(counts), "ids": sorted(counts)}}
        runs.append(RunData(root, manifest, results))
    return runs


def load_run(path: str | Path) -> RunData:
    root = Path(path)
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise RunError(f"{root}: not a run directory (no {MANIFEST})")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunError(f"{manifest_path}: unreadable manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != RUN_FORMAT:
        raise RunError(f"{manifest_path}: not an {RUN_FORMAT} manifest")
    return RunData(root, manifest, read_results(root / RESULTS))


def write_json_atomic(path: Path, data: Any) -> None:
    """Write a JSON file so that a crash leaves the old one or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
