"""The shipped task sets as a dataset on the hub's terms (`ebench export dataset`).

One row per task, one file per split and domain (`data/<split>/<domain>.jsonl` or `.parquet`), and
a dataset card (README.md) whose YAML header declares a config per domain and per domain and
split, so `datasets.load_dataset(DIR)` and `load_dataset(DIR, "music-suite")` load the folder as
it is. A row is the task document (`ebench-task/1`) itself: its columns are the document's fields,
the structured ones whose shape differs from task to task (expected changes, reference solution,
generator record, stats, budget, user profile) as their JSON text, as a table needs one type per
column. A row written back as a JSON line is a task line `ebench run --tasks-dir FILE.jsonl` reads
(ebench.tasks.spec.load_task_lines decodes the JSON text), so a dataset that went through
`datasets` grades the same. Worlds are not in the dataset: a task names its world by seed and
fingerprint, and `ebench domains build --seed SEED` builds it (the fingerprint proves it is the
same).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import SPLITS, TASK_FIELDS, TASK_FORMAT, InputError, Task, load_suite, shipped_splits, suite_version

FORMATS = ("jsonl", "parquet")
SPLIT_CHOICES = (*SPLITS, "all")
# The columns, in order: the task document's fields. The structured ones are JSON text.
COLUMNS = TASK_FIELDS  # a row is the task document itself
JSON_TEXT_COLUMNS = ("expected_diff", "reference_solution", "generator", "stats", "budget", "user_profile")
COLUMN_DOCS = {
    "format": f"always `{TASK_FORMAT}`, the task format's version",
    "id": "the task's id, unique within its split (e.g. `music-0042`)",
    "domain": "the product world the task runs in: `music`, `meeting` or `moba`",
    "actor": "id of the user the agent acts for (the tools act as this user)",
    "query": "the request, in the user's words: what the agent is given",
    "capabilities": "the capability types the task exercises (E-Bench's six)",
    "expected_diff": "JSON text: the net row changes a correct solution makes, `[{table, op, key, old?, new?}]`; the answer key",
    "reference_solution": 'JSON text: tool calls `[{tool, args}]` that produce `expected_diff` on a fresh world copy (`{"$from": i}` is step i\'s result)',
    "generator": "JSON text: how the task was made (template, seed, stated conditions, which conditions bite)",
    "stats": "JSON text: changed rows by kind `{changed_rows, inserts, updates, deletes, tables}`",
    "world": "the world the task was made on, `{seed, fingerprint}`: `ebench domains build --seed SEED` rebuilds it",
    "budget": "JSON text: limits a correct solver finishes within, `{max_tool_calls, max_turns}`",
    "user_profile": "JSON text: facts the request leaves out that the user gives when asked (the `ask` split), else `[]`",
    "paraphrases": "the request in other words, with the same values (may be empty)",
}
SPLIT_DOCS = {
    "suite": "the paper-shaped suite: every task certified (sloppy work fails, every careful way passes)",
    "ask": "tasks whose user holds facts the request leaves out: the agent must ask",
    "composed": "composed tasks: new structure, not only new values (a held-out check of generalisation)",
}
CARD_FILE = "README.md"


class DatasetExportError(InputError, ValueError):
    """A dataset export that cannot be made as asked; the message is one line."""


@dataclass
class DatasetFile:
    split: str
    domain: str
    path: str  # relative to the dataset's folder, with '/'
    rows: int


@dataclass
class DatasetExport:
    out: Path
    format: str
    files: list[DatasetFile] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "format": self.format,
            "rows": self.rows,
            "files": [{"split": f.split, "domain": f.domain, "path": f.path, "rows": f.rows} for f in self.files],
        }


def task_row(task: Task) -> dict[str, Any]:
    """The dataset row of a task: its document, the structured fields whose shape varies as JSON
    text (sorted keys are not used: the text keeps the document's own order)."""
    document = task.to_dict()
    row: dict[str, Any] = {}
    for name in COLUMNS:
        value = document.get(name)
        if name in JSON_TEXT_COLUMNS:
            row[name] = json.dumps(value if value is not None else _empty(name), ensure_ascii=False, separators=(",", ":"))
        elif name in ("capabilities", "paraphrases"):
            row[name] = list(value or [])
        elif name == "world":
            row[name] = {"seed": int(value["seed"]), "fingerprint": str(value["fingerprint"])} if value else None
        else:
            row[name] = value
    return row


def _empty(name: str) -> Any:
    return [] if name == "user_profile" else {}


def splits_named(choice: str) -> list[str]:
    """The shipped splits `--split` names (`all`: every one this install has), or a one-line error."""
    if choice not in SPLIT_CHOICES:
        raise DatasetExportError(f"--split {choice!r}: one of {', '.join(SPLIT_CHOICES)}")
    present = shipped_splits()
    names = list(present) if choice == "all" else [choice]
    missing = [name for name in names if name not in present]
    if missing:
        raise DatasetExportError(f"--split {missing[0]}: this install has no such split")
    return names


def export_dataset(out: Path, split: str = "all", fmt: str = "jsonl", *, force: bool = False) -> DatasetExport:
    """Write the chosen shipped splits into `out` as a dataset (files and card). A folder that
    holds anything else is refused unless `force` (the files this writes are then replaced; other
    files are left alone and are not part of the dataset: the card lists its files by name)."""
    if fmt not in FORMATS:
        raise DatasetExportError(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
    names = splits_named(split)
    if out.exists() and not out.is_dir():
        raise DatasetExportError(f"--out {out}: a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise DatasetExportError(f"--out {out}: the folder is not empty (--force writes into it)")
    writer = _parquet_writer() if fmt == "parquet" else None
    export = DatasetExport(out, fmt)
    for name in names:
        report = load_suite(SPLITS[name])
        if report.errors:  # a shipped file that does not load: the install is damaged
            raise DatasetExportError(f"the {name} split does not load: {report.errors[0]}")
        by_domain: dict[str, list[Task]] = {}
        for task in report.tasks:
            by_domain.setdefault(task.domain, []).append(task)
        for domain in sorted(by_domain):
            relative = f"data/{name}/{domain}.{fmt}"
            path = out / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = [task_row(t) for t in sorted(by_domain[domain], key=lambda t: t.id)]
            if writer is None:
                _write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
            else:
                writer(path, rows)
            export.files.append(DatasetFile(name, domain, relative, len(rows)))
    versions = {name: suite_version(SPLITS[name]) for name in names}
    _write_text(out / CARD_FILE, dataset_card(export.files, versions))
    return export


def _write_text(path: Path, text: str) -> None:
    """`text` to `path` whole or not at all (beside it, then moved over it), readable by everyone
    as a published file is."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _parquet_writer() -> Any:
    """A function writing rows as Parquet with the dataset's schema, or a one-line error without pyarrow."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetExportError("--format parquet needs pyarrow: pip install 'ebench[datasets]' (or use --format jsonl)") from None
    text, texts = pa.string(), pa.list_(pa.string())
    types = {
        "actor": pa.int64(),
        "capabilities": texts,
        "paraphrases": texts,
        "world": pa.struct([("seed", pa.int64()), ("fingerprint", text)]),
    }
    schema = pa.schema([(name, types.get(name, text)) for name in COLUMNS])

    def write(path: Path, rows: list[dict[str, Any]]) -> None:
        partial = path.with_name(f".{path.name}.partial")
        try:
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), partial)
            partial.replace(path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    return write


def dataset_card(files: Iterable[DatasetFile], versions: dict[str, str | None]) -> str:
    """The dataset card: a YAML header the hub and `datasets` read (license, categories, one
    config per domain and per domain and split, the default holding every domain), then prose."""
    from ..api import __version__

    files = list(files)
    splits = list(dict.fromkeys(f.split for f in files))
    domains = sorted({f.domain for f in files})
    header = _card_header(files, splits, domains)
    counts = "\n".join(
        f"| {s} | {' | '.join(str(sum(f.rows for f in files if f.split == s and f.domain == d)) for d in domains)} | "
        f"{SPLIT_DOCS.get(s, '')} |"
        for s in splits
    )
    columns = "\n".join(f"| `{name}` | {COLUMN_DOCS[name]} |" for name in COLUMNS)
    version_note = ", ".join(f"{s} version {v}" for s, v in versions.items() if v is not None) or "unversioned"
    first = f"{domains[0]}-{splits[0]}" if domains and splits else "music-suite"
    return (
        "---\n"
        + _yaml(header)
        + "---\n\n"
        + f"""# E-Bench tasks (ebench)

State-changing tool-use tasks over three synthetic product worlds (a music platform, an
enterprise meeting platform, a MOBA game), in the design of the E-Bench paper, as made and
certified by ebench {__version__} ({version_note}). Each task is a request
in a user's words; an agent solves it by calling the world's tools, and is graded by the diff of
the world's database: the rows it changed against the rows the task expects.

## Splits and configs

| split | {" | ".join(domains)} | what it is |
|---|{"---|" * len(domains)}---|
{counts}

```python
from datasets import load_dataset

tasks = load_dataset("DIR")                # every domain; one split per task set
music = load_dataset("DIR", "{first}")   # one domain, one task set
```

Configs: `default` (every domain), one per domain ({", ".join(f"`{d}`" for d in domains)}), and one
per domain and split (`<domain>-<split>`).

## Columns

A row is the task file itself (format `{TASK_FORMAT}`); the fields whose shape differs from task to
task are JSON text (`json.loads` gives the value).

| column | meaning |
|---|---|
{columns}

## Worlds

The worlds are not in the dataset: they are made, not downloaded. A task names its world by
`world.seed` and `world.fingerprint` (a hash of the world's rows). `ebench domains build --domain
DOMAIN --seed SEED` builds that world, the same bytes on every machine for the same ebench
version, and ebench refuses a task whose fingerprint is not the world it builds.

## How grading works

A trial runs on a fresh copy of the task's world. When the agent is done, the trial's net
database diff is compared with `expected_diff`: rows that existed are matched by primary key,
new rows by content (ids the database generated never decide), order never matters, volatile
columns (timestamps of the trial itself) are left out, and values must be exact. A trial passes
when the two diffs are equal: nothing missing, nothing unexpected, no wrong value. There is no
LLM judge. The grade also gives precision and recall of row changes to explain a failure.

To run the rows with ebench, write them back as JSON lines and give the file to `--tasks-dir`:

```python
load_dataset("DIR", "{first}", split="{splits[0] if splits else "suite"}").to_json("tasks.jsonl")
```

```
ebench run --batch --tasks-dir tasks.jsonl --model openai/gpt-4o
```

## Citation

The tasks follow the design of the E-Bench paper (its authors' benchmark: 323 tasks over Honor of
Kings, QQ Music and Tencent Meeting). These tasks are ebench's own, made by its generators.

```bibtex
@misc{{ebench_paper,
  title = {{E-Bench: Benchmarking Multi-Step Tool-Use Agents in Real-World Product Scenarios}},
  note  = {{The E-Bench paper; see its listing for the authors}}
}}
```
"""
    )


def _card_header(files: list[DatasetFile], splits: list[str], domains: list[str]) -> dict[str, Any]:
    """The card's YAML header: what the hub shows and `datasets` reads (one config per domain and per
    domain and split; the default holds every domain)."""
    total = sum(f.rows for f in files)
    configs: list[dict[str, Any]] = [
        {"config_name": "default", "default": True, "data_files": [_data_files(s, [f for f in files if f.split == s]) for s in splits]}
    ]
    for domain in domains:
        own = [f for f in files if f.domain == domain]
        configs.append({"config_name": domain, "data_files": [_data_files(s, [f for f in own if f.split == s]) for s in splits]})
        configs.extend({"config_name": f"{domain}-{f.split}", "data_files": [_data_files(f.split, [f])]} for f in own)
    return {
        "license": "mit",
        "pretty_name": "E-Bench tasks (ebench)",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["agents", "tool-use", "function-calling", "benchmark", "synthetic", "reinforcement-learning"],
        "size_categories": ["n<1K" if total < 1000 else "1K<n<10K"],
        "configs": configs,
    }


def _data_files(split: str, files: list[DatasetFile]) -> dict[str, Any]:
    paths = [f.path for f in files]
    return {"split": split, "path": paths[0] if len(paths) == 1 else paths}


def _yaml(value: Any, indent: int = 0) -> str:
    """Block YAML of plain data (dicts, lists, strings, numbers, booleans): what the card's header
    needs, without a YAML library in the base install. Strings are JSON-quoted (valid YAML)."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:\n{_yaml(item, indent + 2)}")
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}\n")
    else:
        for item in value:
            if isinstance(item, dict) and item:
                inner = _yaml(item, indent + 2)
                lines.append(f"{pad}- {inner[indent + 2 :]}")
            else:
                lines.append(f"{pad}- {_scalar(item)}\n")
    return "".join(lines)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)
