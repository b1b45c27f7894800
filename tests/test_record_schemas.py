"""Every record ebench writes has a JSON Schema generated from its pydantic model and checked in
under docs/schemas/: a model changed without its schema (or the other way round) fails here."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ebench.sessions.schemas import RECORDS, schema_text

DOCS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_the_checked_in_schema_is_the_models(name: str):
    path = DOCS / f"{name}.schema.json"
    assert path.is_file(), f"missing {path}: run `python -m ebench.sessions.schemas docs/schemas`"
    assert path.read_text(encoding="utf-8") == schema_text(name), f"{path} is stale: run `python -m ebench.sessions.schemas docs/schemas`"


def test_docs_schemas_holds_no_other_file():
    assert sorted(p.name for p in DOCS.iterdir()) == sorted(f"{name}.schema.json" for name in RECORDS)


def test_a_shipped_task_and_a_recorded_diff_validate_against_their_schemas():
    """The schemas describe the files as written (a real task file, its expected diff)."""
    task_file = next((Path(__file__).parent / "fixtures" / "tasks" / "music").glob("*.json"))
    task = json.loads(task_file.read_text(encoding="utf-8"))
    jsonschema.validate(task, json.loads(schema_text("task")))
    jsonschema.validate(task["expected_diff"], json.loads(schema_text("diff")))


def test_a_shipped_scenario_validates_against_its_schema_and_a_wrong_kind_does_not():
    from ebench.tasks.scenarios import SCENARIOS_DIR

    scenario = json.loads(next((SCENARIOS_DIR / "music").glob("*.json")).read_text(encoding="utf-8"))
    schema = json.loads(schema_text("scenario"))
    jsonschema.validate(scenario, schema)
    scenario["turns"][0]["kind"] = "gossip"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(scenario, schema)
