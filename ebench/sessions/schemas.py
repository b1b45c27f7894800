"""The JSON Schema of every record ebench writes, by name, from the pydantic models that read and
write them: the one list that docs/schemas/ (checked in, held to it by tests/test_record_schemas.py)
and `ebench sessions schema` / `ebench tasks schema` print from.

    python -m ebench.sessions.schemas docs/schemas     # rewrite the checked-in files
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..settings import settings_json_schema
from ..tasks.diff import diff_json_schema
from ..tasks.grading import Grade
from ..tasks.scenarios import scenario_json_schema
from ..tasks.spec import task_json_schema
from .events import session_json_schema
from .results import results_json_schema
from .runs import manifest_json_schema

# name -> the schema's maker; a file docs/schemas/<name>.schema.json each.
RECORDS: dict[str, Callable[[], dict[str, Any]]] = {
    "task": task_json_schema,
    "session-event": session_json_schema,
    "results-line": results_json_schema,
    "run-manifest": manifest_json_schema,
    "diff": diff_json_schema,
    "grade": lambda: Grade.model_json_schema(),
    "scenario": scenario_json_schema,
    "app-settings": settings_json_schema,
}


def schema_text(name: str) -> str:
    """The schema as the checked-in file holds it: sorted keys, two-space indents, a final newline."""
    return json.dumps(RECORDS[name](), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in RECORDS:
        path = folder / f"{name}.schema.json"
        path.write_text(schema_text(name), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m ebench.sessions.schemas FOLDER")
    for path in write_schemas(Path(sys.argv[1])):
        print(path)
